package reqscan

import "encoding/json"

// edit replaces body[from:to] with repl.
type edit struct {
	from, to int
	repl     string
}

// includeUsageEdit is the edit that sets stream_options.include_usage to
// true, for a streamed request whose client did not ask for usage (so the
// backend reports tokens in a final event):
//
//	no stream_options            → `,"stream_options":{"include_usage":true}` before the closing '}'
//	stream_options: null / not an object → replaced by {"include_usage":true}
//	stream_options: {…} without include_usage → `"include_usage":true` first inside it
//	include_usage: false (or another value)  → replaced by true
//
// ok is false when there is nothing to do (not streamed, or include_usage
// already true), or when the API has no stream_options (the scan did not
// read it: Responses and Messages report usage without being asked, and
// the key would only be an ignored extra there).
func includeUsageEdit(body []byte, r *Request) (e edit, ok bool) {
	if !r.Stream || r.IncludeUsage || r.Read&FieldStreamOptions == 0 {
		return e, false
	}
	const field = `"stream_options":{"include_usage":true}`
	switch {
	case r.StreamOpts.Len() == 0:
		// The object holds at least "model", so a comma always goes first.
		return edit{r.ObjectEnd, r.ObjectEnd, "," + field}, true
	case body[r.StreamOpts.Start] != '{':
		return edit{r.StreamOpts.Start, r.StreamOpts.End, `{"include_usage":true}`}, true
	case r.UsageValue.Len() == 0:
		at := r.StreamOpts.Start + 1
		if isEmptyObject(body[r.StreamOpts.Start:r.StreamOpts.End]) {
			return edit{at, at, `"include_usage":true`}, true
		}
		return edit{at, at, `"include_usage":true,`}, true
	default:
		return edit{r.UsageValue.Start, r.UsageValue.End, "true"}, true
	}
}

// InjectIncludeUsage returns body with stream_options.include_usage set to
// true (see includeUsageEdit), in one copy of the body, or body itself when
// there is nothing to do. r must come from Scan(body).
func InjectIncludeUsage(body []byte, r *Request) []byte {
	e, ok := includeUsageEdit(body, r)
	if !ok {
		return body
	}
	return join(apply(body, e))
}

// isEmptyObject reports whether raw is '{' whitespace '}'.
func isEmptyObject(raw []byte) bool {
	for _, c := range raw[1 : len(raw)-1] {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}

// Rewrites are the gateway's edits of a request body beyond include_usage.
type Rewrites struct {
	// UpstreamModel, if not empty, replaces "model".
	UpstreamModel string
	// CacheSalt, if not empty, is the cache_salt sent, in the APIs that
	// read one (FieldCacheSalt): it replaces the client's or is added (a
	// JSON string's contents: no quoting needed — the caller gives
	// base64url or hex).
	CacheSalt string
}

// RewritePieces applies the gateway's edits to a scanned body without
// copying it: w's (model, cache_salt), "priority" set to 0 when the body
// has one (the key's tier is the gateway's to rank, not the client's to
// set in vLLM's scheduler), and for a stream whose client did not ask for
// usage, include_usage injected (injected reports it). The result is the
// body's pieces, in order, with the edits between them: sent back to back
// (one writev), they are the rewritten body. Copying a 100 KB prompt to
// change a few bytes was a tenth of the gateway's allocation per request
// (docs/benchmarks.md).
func RewritePieces(body []byte, r *Request, w Rewrites) (pieces [][]byte, injected bool) {
	var buf [4]edit
	edits := buf[:0]
	if e, ok := includeUsageEdit(body, r); ok {
		edits, injected = append(edits, e), true
	}
	if w.UpstreamModel != "" {
		quoted, _ := json.Marshal(w.UpstreamModel)
		edits = append(edits, edit{r.Model.Start, r.Model.End, string(quoted)})
	}
	if w.CacheSalt != "" && r.Read&FieldCacheSalt != 0 { // only to APIs whose requests take it
		if at := r.cacheSaltAt; at.Len() > 0 {
			edits = append(edits, edit{at.Start, at.End, `"` + w.CacheSalt + `"`})
		} else {
			// Before the closing '}' (the object holds at least "model").
			edits = append(edits, edit{r.ObjectEnd, r.ObjectEnd, `,"cache_salt":"` + w.CacheSalt + `"`})
		}
	}
	if r.Priority.Len() > 0 {
		edits = append(edits, edit{r.Priority.Start, r.Priority.End, "0"})
	}
	// In the body's order (each touches its own member; the insertions at
	// the closing '}' keep their order).
	for i := 1; i < len(edits); i++ {
		for j := i; j > 0 && edits[j].from < edits[j-1].from; j-- {
			edits[j], edits[j-1] = edits[j-1], edits[j]
		}
	}
	return apply(body, edits...), injected
}

// Rewrite is RewritePieces joined into one new slice (body itself when
// there is nothing to edit).
func Rewrite(body []byte, r *Request, w Rewrites) (out []byte, injected bool) {
	pieces, injected := RewritePieces(body, r, w)
	if len(pieces) == 1 {
		return pieces[0], injected
	}
	return join(pieces), injected
}

// apply returns body's pieces around the edits, which must be in order and
// not overlap.
func apply(body []byte, edits ...edit) [][]byte {
	pieces := make([][]byte, 0, 1+2*len(edits))
	at := 0
	for _, e := range edits {
		pieces = append(pieces, body[at:e.from], []byte(e.repl))
		at = e.to
	}
	return append(pieces, body[at:])
}

func join(pieces [][]byte) []byte {
	n := 0
	for _, p := range pieces {
		n += len(p)
	}
	out := make([]byte, 0, n)
	for _, p := range pieces {
		out = append(out, p...)
	}
	return out
}
