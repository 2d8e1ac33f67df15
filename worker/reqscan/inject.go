package reqscan

import "encoding/json"

// InjectIncludeUsage returns body with stream_options.include_usage set to
// true, for a streamed request whose client did not ask for usage (so the
// backend reports tokens in a final event), in one copy of the body:
//
//	no stream_options            → `,"stream_options":{"include_usage":true}` before the closing '}'
//	stream_options: null / not an object → replaced by {"include_usage":true}
//	stream_options: {…} without include_usage → `"include_usage":true` first inside it
//	include_usage: false (or another value)  → replaced by true
//
// It returns body itself when there is nothing to do (not streamed, or
// include_usage already true). r must come from Scan(body).
func InjectIncludeUsage(body []byte, r *Request) []byte {
	if !r.Stream || r.IncludeUsage {
		return body
	}
	const field = `"stream_options":{"include_usage":true}`
	switch {
	case r.StreamOpts.Len() == 0:
		// The object holds at least "model", so a comma always goes first.
		return splice(body, r.ObjectEnd, r.ObjectEnd, ","+field)
	case body[r.StreamOpts.Start] != '{':
		return splice(body, r.StreamOpts.Start, r.StreamOpts.End, `{"include_usage":true}`)
	case r.UsageValue.Len() == 0:
		at := r.StreamOpts.Start + 1
		if isEmptyObject(body[r.StreamOpts.Start:r.StreamOpts.End]) {
			return splice(body, at, at, `"include_usage":true`)
		}
		return splice(body, at, at, `"include_usage":true,`)
	default:
		return splice(body, r.UsageValue.Start, r.UsageValue.End, "true")
	}
}

// splice returns a new slice: body with [from, to) replaced by s.
func splice(body []byte, from, to int, s string) []byte {
	out := make([]byte, 0, len(body)-(to-from)+len(s))
	out = append(out, body[:from]...)
	out = append(out, s...)
	return append(out, body[to:]...)
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

// Rewrite applies the gateway's edits to a scanned body: upstreamModel (if
// not empty) replaces "model", and for a stream whose client did not ask for
// usage, include_usage is injected (injected reports it). The two edits
// touch different members, so the second one's offsets only need shifting
// when the first one lies before it.
func Rewrite(body []byte, r *Request, upstreamModel string) (out []byte, injected bool) {
	out = InjectIncludeUsage(body, r)
	injected = r.Stream && !r.IncludeUsage
	if upstreamModel == "" {
		return out, injected
	}
	model := r.Model
	if r.StreamOpts.Len() > 0 && r.StreamOpts.Start < model.Start {
		shift := len(out) - len(body)
		model.Start += shift
		model.End += shift
	}
	quoted, _ := json.Marshal(upstreamModel)
	return splice(out, model.Start, model.End, string(quoted)), injected
}
