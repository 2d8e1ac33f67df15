package proxy

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/proxy/sse"
	"github.com/sluice-gw/sluice/proxy/usage"
)

// TestClassify pins what every kind of attempt outcome means: the one
// table of retry, ejection and the client's error.
func TestClassify(t *testing.T) {
	x := &exchange{req: admitted{model: &modelRoute{name: "m"}}}
	answer := func(code int) *http.Response { return &http.Response{StatusCode: code} }
	up, down := true, false
	refused := errors.New("connection refused")
	cases := []struct {
		name string
		r    attemptResult
		want outcome
		code string // the client's error code, when fail is set
	}{
		{"ok", attemptResult{res: answer(200), triesLeft: true, othersUp: up}, outcome{answer: true}, ""},
		{"client error is the client's", attemptResult{res: answer(400), triesLeft: true, othersUp: up}, outcome{answer: true}, ""},
		{"404 relayed", attemptResult{res: answer(404), triesLeft: true, othersUp: up}, outcome{answer: true}, ""},
		{"503 retried", attemptResult{res: answer(503), triesLeft: true, othersUp: up}, outcome{retry: true}, ""},
		{"429 retried", attemptResult{res: answer(429), triesLeft: true, othersUp: up}, outcome{retry: true}, ""},
		{"503 relayed when no retry is left", attemptResult{res: answer(503), othersUp: up}, outcome{answer: true}, ""},
		{"429, no provider key left: next backend", attemptResult{res: answer(429), triesLeft: true, keysOut: true, othersUp: up}, outcome{retry: true}, ""},
		{"429, no provider key left, none other: relayed", attemptResult{res: answer(429), triesLeft: true, keysOut: true, othersUp: down}, outcome{answer: true}, ""},
		{"unreachable: eject and retry", attemptResult{err: refused, triesLeft: true, othersUp: up}, outcome{retry: true, eject: true}, ""},
		{"unreachable, none in rotation", attemptResult{err: refused, triesLeft: true, othersUp: down}, outcome{eject: true}, "upstream_unreachable"},
		{"unreachable, no retry left", attemptResult{err: refused, othersUp: up}, outcome{eject: true}, "upstream_unreachable"},
		{"client gone", attemptResult{err: refused, clientGone: true, triesLeft: true, othersUp: up}, outcome{}, "client_closed"},
		{"gateway timeout: not retried, no ejection", attemptResult{err: refused, timeout: errTotalTimeout, triesLeft: true, othersUp: up}, outcome{}, "upstream_timeout"},
		{"first token: retried beyond retries", attemptResult{err: errFirstToken, firstToken: true, othersUp: up}, outcome{retry: true, firstTokenRetry: true}, ""},
		{"stored response: 404, another may hold it", attemptResult{res: answer(404), holderLeft: true, othersUp: up}, outcome{retry: true}, ""},
		{"stored response: last 404 relayed", attemptResult{res: answer(404), triesLeft: true, othersUp: up}, outcome{answer: true}, ""},
		{"stored response: last 404 after a failed candidate", attemptResult{res: answer(404), holderDown: 503, othersUp: up}, outcome{}, "stored_response_unavailable"},
		{"stream ended before its first byte", attemptResult{err: errReadFirst, triesLeft: true, othersUp: up}, outcome{}, "upstream_failed"},
	}
	for _, tc := range cases {
		got := classify(x, tc.r)
		code := ""
		if got.fail != nil {
			code = got.fail.code
		}
		got.fail = nil
		if got != tc.want || code != tc.code {
			t.Errorf("%s: classify = %+v (error %q), want %+v (error %q)", tc.name, got, code, tc.want, tc.code)
		}
	}
}

// A pinned request (a stored response's) that moves on from a candidate
// failing otherwise than with a 404 notes that candidate may be the holder.
func TestClassifyNotesPossibleHolder(t *testing.T) {
	x := &exchange{req: admitted{model: &modelRoute{name: "m", attempts: attemptRules{retries: 2}}}, place: placement{pinned: true}}
	for _, tc := range []struct {
		r    attemptResult
		want int
	}{
		{attemptResult{res: &http.Response{StatusCode: 503}, triesLeft: true}, 503},
		{attemptResult{err: errors.New("refused"), triesLeft: true, othersUp: true}, http.StatusBadGateway},
		{attemptResult{res: &http.Response{StatusCode: 404}, holderLeft: true}, 0},
		{attemptResult{res: &http.Response{StatusCode: 200}}, 0},
	} {
		if got := classify(x, tc.r).holderDown; got != tc.want {
			t.Errorf("%+v: holderDown %d, want %d", tc.r, got, tc.want)
		}
	}
	x.place.pinned = false
	if got := classify(x, attemptResult{res: &http.Response{StatusCode: 503}, triesLeft: true}).holderDown; got != 0 {
		t.Errorf("an unpinned request noted a holder: %d", got)
	}
}

// TestErrorSources checks whose fault each of the attempt's failures is.
func TestErrorSources(t *testing.T) {
	x := &exchange{req: admitted{model: &modelRoute{name: "m"}}}
	for _, tc := range []struct {
		r    attemptResult
		want usage.Source
	}{
		{attemptResult{err: errReadFirst, othersUp: false}, usage.SourceUpstream},
		{attemptResult{err: errors.New("x"), othersUp: false}, usage.SourceUpstream},
		{attemptResult{err: errors.New("x"), timeout: errStreamIdle}, usage.SourceUpstream},
		{attemptResult{err: errors.New("x"), clientGone: true}, usage.SourceClient},
	} {
		if got := classify(x, tc.r).fail.source; got != tc.want {
			t.Errorf("%+v: source %v, want %v", tc.r, got, tc.want)
		}
	}
}

// chunks is a body that returns one chunk per Read, then EOF.
type chunks []string

func (c *chunks) Read(p []byte) (int, error) {
	if len(*c) == 0 {
		return 0, io.EOF
	}
	n := copy(p, (*c)[0])
	if n == len((*c)[0]) {
		*c = (*c)[1:]
	} else {
		(*c)[0] = (*c)[0][n:]
	}
	return n, nil
}

// A Responses stream's first token is its first content event, not the
// response.created and .in_progress vLLM sends before generating: readFirst
// reads on to it. Other formats' first bytes are their first token.
func TestReadFirstWaitsForContent(t *testing.T) {
	created := "event: response.created\ndata: {\"response\":{\"id\":\"resp_1\"},\"type\":\"response.created\"}\n\n"
	progress := "event: response.in_progress\ndata: {\"response\":{\"id\":\"resp_1\"},\"type\":\"response.in_progress\"}\n\n"
	delta := "event: response.output_text.delta\ndata: {\"delta\":\"Hi\",\"type\":\"response.output_text.delta\"}\n\n"
	body := chunks{created, progress, delta[:20], delta[20:], "event: later\n\n"}
	got, err := readFirst(&body, sse.Responses)
	if err != nil || string(got) != created+progress+delta {
		t.Fatalf("Responses: read %q, %v; want up to the first delta", got, err)
	}
	chat := chunks{"data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\n", "data: [DONE]\n\n"}
	if got, err := readFirst(&chat, sse.Chat); err != nil || !strings.HasSuffix(string(got), "}]}\n\n") {
		t.Fatalf("Chat: read %q, %v; want the first chunk", got, err)
	}
	short := chunks{created}
	if got, err := readFirst(&short, sse.Responses); err != nil || string(got) != created {
		t.Fatalf("a Responses stream that ends before content: %q, %v", got, err)
	}
	if _, err := readFirst(&chunks{}, sse.Responses); err != errReadFirst {
		t.Fatalf("an empty stream: %v, want errReadFirst", err)
	}
	// A backend trickling its events a byte a read is read to the first
	// content all the same.
	var trickle chunks
	for _, b := range []byte(created + progress + delta) {
		trickle = append(trickle, string(b))
	}
	if got, err := readFirst(&trickle, sse.Responses); err != nil || string(got) != created+progress+delta {
		t.Fatalf("trickled: read %q, %v; want up to the first delta", got, err)
	}
	// No content event in sight: reading stops past firstMax, the rest
	// left to the relay.
	var endless chunks
	for range 2 * firstMax / len(progress) {
		endless = append(endless, progress)
	}
	got, err = readFirst(&endless, sse.Responses)
	if err != nil || len(got) < firstMax || len(got) >= firstMax+len(progress) || len(endless) == 0 {
		t.Fatalf("no content: read %d bytes (%v), %d chunks left; want just past %d", len(got), err, len(endless), firstMax)
	}
}
