package sse

import "bytes"

// LargeEvent reads a stream event that outgrew a Splitter's Max, from the
// pieces the Splitter passes on (emit's whole false), so that what it
// carries is not lost with it. It matters for Responses streams: vLLM's
// response.created and response.completed events repeat the response —
// its output, and the request's instructions, metadata, tools and text —
// so a client can push them past MaxEvent with a small prompt and large
// echoed fields, and a completed event past it would take the stream's
// usage (its billing) with it. Such an event's data is
// {"response":{…},"sequence_number":…,"type":…} (the openai SDK's models
// dump their fields in alphabetical order): the response object is read as
// a whole Responses answer is, by its top-level keys as the bytes pass,
// holding nothing but the values it wants. For other formats, or another
// shape, it reads nothing.
type LargeEvent struct {
	format Format
	reader *AnswerReader // nil: this event is not read
	head   bool          // the next piece is an event's first
}

// responseData is how the data of a Responses event that carries the
// response begins.
var responseData = []byte(`data: {"response":`)

// NewLargeEvent returns a reader of the oversized events of a stream of
// format f.
func NewLargeEvent(f Format) *LargeEvent { return &LargeEvent{format: f, head: true} }

// Feed reads the next piece of an oversized event. It reports, with the
// piece that ends the event (the Splitter's last piece of it ends with the
// event's blank line), what InspectAs would have read of the whole event.
func (l *LargeEvent) Feed(piece []byte) (ev Event, end bool) {
	if l.head {
		l.head, l.reader = false, nil
		// The head is in the first piece: a Splitter passes an event on
		// only once it outgrew Max, and "event: <type>\n" is short.
		if i := bytes.Index(piece[:min(len(piece), 256)], responseData); i >= 0 && l.format == Responses {
			l.reader = NewAnswerReaderAs(Responses)
			piece = piece[i+len(responseData):]
		}
	}
	if l.reader != nil {
		l.reader.Feed(piece)
	}
	if !bytes.HasSuffix(piece, []byte("\n\n")) && !bytes.HasSuffix(piece, []byte("\r\n\r\n")) {
		return Event{}, false
	}
	l.head = true
	if r := l.reader; r != nil {
		ev.ResponseID = r.ResponseID()
		ev.Usage = r.Usage()
		switch status := stringOf(r.top.vals[slotStatus]); status {
		case "completed", "incomplete", "failed", "cancelled":
			ev.Done, ev.FinishReason = true, r.FinishReason()
		}
	}
	return ev, true
}
