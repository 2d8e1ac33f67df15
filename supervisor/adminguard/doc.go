// Package adminguard guards the supervisor's admin listener, which must
// keep answering probes and never starve the supervisor of what a worker's
// restart needs:
//
//   - Conns caps its connections: at the cap the one idle longest is
//     closed, else the newcomer is answered 503 (a plain probe as a probe);
//   - Hosts checks the Host header against the listener's own address and
//     admin_hosts, so that a browser page whose DNS name was rebound to the
//     admin address cannot read it (421 Misdirected Request);
//   - Throttle counts failed logins per remote address and refuses an
//     address over its share (429) before it can guess again.
//
// It imports only the standard library.
package adminguard
