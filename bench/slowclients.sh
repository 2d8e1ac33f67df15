#!/bin/bash
# Normal traffic's latency with and without 1,000 slow clients connected
# (issue 18 item 5), side by side in one run: the same open-loop load
# (driver -rate) before the slow clients come and while they are connected
# (ROUNDS times, alternating), and once more after they left. The slow clients (bench/slowclients) are a third
# idle connections, a third slowloris heads and a third slow bodies, each
# reconnecting when the gateway closes it.
#
#   bench/slowclients.sh                  # 1,000 slow clients, 1,000 req/s, 20 s per phase
#   N=2000 RATE=2000 DUR=30s WORKERS=4 ROUNDS=3 bench/slowclients.sh
#   HEADER_TIMEOUT=10s bench/slowclients.sh   # slow heads cut (and back) during each phase
#   BIN=DIR bench/slowclients.sh          # binaries already built in DIR (sluice, driver, fakevllm, slowclients)
#
# Measured on a quiet 2-core machine (2026-12-04 17:55; 2 workers, 1,000
# slow clients, 500 req/s, ROUNDS=3 of 10 s, default 60 s timeouts so none
# was cut during a phase): p99 1.86 / 1.97 / 1.94 ms without them against
# 1.96 / 1.83 / 1.89 ms with them (p50 1.15-1.17 against 1.12-1.24 ms),
# every request answered, nothing refused over worker_connections, workers'
# RSS 18-20 MiB at the end. (A first run on the machine loaded by other work,
# load average ~10, with HEADER_TIMEOUT=5s: p99 97-215 ms with against
# 257-1000 ms without: noise, no cost that stands out.)
#
# Ports 29100/29180/29190 (below the ephemeral range).
set -eu
cd "$(dirname "$0")/.."
N=${N:-1000} RATE=${RATE:-1000} DUR=${DUR:-20s} WORKERS=${WORKERS:-2} EVERY=${EVERY:-5s}
HEADER_TIMEOUT=${HEADER_TIMEOUT:-60s} # shorter: the slow heads are cut and reconnect during a phase
work=$(mktemp -d)
trap 'kill $slow $sup $be 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
slow= sup= be=
bin=${BIN:-$work}
if [ -z "${BIN:-}" ]; then
	CGO_ENABLED=0 go build -tags stdjson,gjson -o "$bin/sluice" ./cmd/sluice
	go build -o "$bin/driver" ./bench/driver
	go build -o "$bin/fakevllm" ./bench/fakevllm
	go build -o "$bin/slowclients" ./bench/slowclients
fi
cat > "$work/sluice.yaml" <<CFG
listen: 127.0.0.1:29180
admin: 127.0.0.1:29190
workers: $WORKERS
usage_log: "off"
client_header_timeout: $HEADER_TIMEOUT
keys:
  - name: bench
    sha256: $(printf %s sk-bench | sha256sum | cut -d' ' -f1)
    models: ["*"]
models:
  - name: bench
    backends:
      - url: http://127.0.0.1:29100
        slots: 1000
CFG
ulimit -n 65536 2>/dev/null || true
"$bin/fakevllm" -listen 127.0.0.1:29100 >"$work/backend.log" 2>&1 &
be=$!
"$bin/sluice" serve -c "$work/sluice.yaml" >"$work/sluice.log" 2>&1 &
sup=$!
for _ in $(seq 100); do curl -sf 127.0.0.1:29190/readyz >/dev/null && break; sleep 0.1; done
metric() { curl -s 127.0.0.1:29190/metrics | awk -v m="$1" '$1==m{print $2}'; }
phase() {
	"$bin/driver" -url http://127.0.0.1:29180 -rate "$RATE" -duration "$DUR" -prompt 200 -tokens 8 >"$work/$1.json" 2>"$work/$1.err" || true
	printf '%-8s %s  (client connections at the end: %s)\n' "$1" "$(tail -1 "$work/$1.json")" "$(metric sluice_client_connections)"
}
"$bin/driver" -url http://127.0.0.1:29180 -rate "$RATE" -duration 5s >/dev/null 2>&1 || true # warm-up
# Alternate the two phases ROUNDS times: on a shared machine the noise of
# its other tenants then falls on both alike.
for r in $(seq "${ROUNDS:-1}"); do
	phase "without"
	"$bin/slowclients" -addr 127.0.0.1:29180 -n "$N" -every "$EVERY" 2>"$work/slow.log" &
	slow=$!
	for _ in $(seq 300); do
		c=$(metric sluice_client_connections)
		[ "${c%.*}" -ge "$N" ] 2>/dev/null && break
		sleep 0.1
	done
	echo "slow clients connected: $(metric sluice_client_connections)"
	phase "with"
	echo "slow clients: $(tail -1 "$work/slow.log")"
	kill $slow; wait $slow 2>/dev/null || true; slow=
done
phase after
echo "refused over worker_connections: $(metric sluice_client_connections_refused_total)"
for w in $(pgrep -P $sup); do echo "worker $w RSS $(awk '/VmRSS/{print $2}' /proc/$w/status) KiB"; done
