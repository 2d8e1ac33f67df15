package tests

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/tests/fakevllm"
)

func chatBody(model string, stream bool, content string) []byte {
	b, _ := json.Marshal(map[string]any{
		"model": model, "stream": stream,
		"messages": []map[string]string{{"role": "user", "content": content}},
	})
	return b
}

// A stream is relayed event by event: the client has the first event while
// the backend is still holding back every other one.
func TestStreamArrivesEventByEvent(t *testing.T) {
	g, be := newGateway(t, fakevllm.Options{Tokens: 5}, "")
	r, first, _ := openHeldStream(t, g, "s1")
	if !strings.Contains(first, `"content":"tok"`) {
		t.Fatalf("first event %q", first)
	}
	// Only now may the backend go on: had the gateway buffered the stream,
	// the first event could not have arrived.
	be.Release("s1")
	rest := readEvents(t, r)
	// 4 more tokens, the finish event, [DONE]; no usage event was asked for.
	if len(rest) != 6 || rest[len(rest)-1] != "[DONE]" {
		t.Fatalf("rest of stream: %d events %q", len(rest), rest)
	}
}

// A client that asks to close gets its streamed answer with "Connection:
// close" (RFC 9112 §9.6), as it does a whole one, and then the close; one
// that keeps the connection is not told to close.
func TestStreamAnnouncesClose(t *testing.T) {
	g, _ := newGateway(t, fakevllm.Options{Tokens: 3}, "")
	addr := strings.TrimPrefix(g.URL, "http://")
	body := string(chatBody("m", true, "hi"))
	for _, close := range []bool{true, false} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(30 * time.Second)) //nolint:errcheck
		head := "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + keyAll +
			"\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n"
		if close {
			head += "Connection: close\r\n"
		}
		if _, err := io.WriteString(conn, head+"\r\n"+body); err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(conn)
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		rest, err := io.ReadAll(res.Body)
		if err != nil || res.StatusCode != 200 || !strings.HasSuffix(string(rest), "data: [DONE]\n\n") {
			t.Fatalf("close %v: %d %q %v", close, res.StatusCode, rest, err)
		}
		if res.Close != close {
			t.Errorf("asked to close: %v; the answer says it closes: %v (%v)", close, res.Close, res.Header)
		}
		if close {
			if n, err := br.Read(make([]byte, 1)); n != 0 || err != io.EOF {
				t.Errorf("after the answer: %d bytes, %v; want the close", n, err)
			}
		}
		conn.Close()
	}
}

// The gateway holds [DONE] only briefly for the end of the body to go out
// with it: a backend that sends [DONE] and keeps the body open still has
// its [DONE] reach the client, and the stream then ends when the backend's
// body does.
func TestDoneNotHeldForTheEnd(t *testing.T) {
	g, be := newGateway(t, fakevllm.Options{Tokens: 3}, "")
	res := postStream(t, g, "X-Fake-Hold-End", "end")
	r := bufio.NewReader(res.Body)
	var events []string
	read := make(chan error, 1)
	go func() {
		for len(events) == 0 || events[len(events)-1] != "[DONE]" {
			ev, err := nextEvent(r)
			if err != nil {
				read <- err
				return
			}
			events = append(events, ev)
		}
		read <- nil
	}()
	select {
	case err := <-read:
		if err != nil {
			t.Fatalf("after %q: %v", events, err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("[DONE] did not reach the client while the backend kept its body open")
	}
	if n := be.Running(); n != 1 {
		t.Fatalf("[DONE] arrived, backend requests still running: %d, want 1 (the body not ended yet)", n)
	}
	be.Release("end")
	if rest, err := io.ReadAll(r); err != nil || len(rest) != 0 {
		t.Fatalf("after [DONE]: %q, %v; want a clean end", rest, err)
	}
	if len(events) != 5 { // 3 tokens, the finish event, [DONE]
		t.Fatalf("events %q", events)
	}
}

// postStream sends a streamed chat completion with one X-Fake-… header for
// the fake backend; the response is closed at the end of the test.
func postStream(t *testing.T, g *gateway, header, value string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, g.URL+"/v1/chat/completions", bytes.NewReader(chatBody("m", true, "x")))
	req.Header.Set("Authorization", "Bearer "+keyAll)
	req.Header.Set(header, value)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return res
}

// A non-streamed answer comes back whole; upstream_model replaces "model"
// on the way out and nothing else in the body changes.
func TestNonStreamingAndUpstreamModel(t *testing.T) {
	g, be := newGateway(t, fakevllm.Options{Tokens: 3}, "")
	body := []byte(`{"messages":[{"role":"user","content":"model \"m-alias\""}],"model":"m-alias","max_tokens":3}`)
	res, out := post(t, http.DefaultClient, g.URL+"/v1/chat/completions", keyAll, body, nil)
	if res.StatusCode != 200 {
		t.Fatalf("status %d: %s", res.StatusCode, out)
	}
	var answer struct {
		Object  string `json:"object"`
		Choices []struct {
			Message struct{ Content string } `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(out, &answer); err != nil || answer.Object != "chat.completion" || answer.Choices[0].Message.Content != "tok tok tok" {
		t.Fatalf("answer %s (%v)", out, err)
	}
	if res.Header.Get("X-Request-Id") == "" {
		t.Error("no X-Request-Id")
	}
	got := be.Received()
	want := strings.Replace(string(body), `"model":"m-alias"`, `"model":"real-model"`, 1)
	if len(got) != 1 || got[0].Model != "real-model" || got[0].BodySHA256 != sha256.Sum256(asSent("all", []byte(want))) {
		t.Fatalf("backend received %+v", got)
	}
}

func TestEmbeddingsAndModels(t *testing.T) {
	g, _ := newGateway(t, fakevllm.Options{}, "")
	res, out := post(t, http.DefaultClient, g.URL+"/v1/embeddings", keyAll, []byte(`{"model":"m","input":"hello"}`), nil)
	if res.StatusCode != 200 || !bytes.Contains(out, []byte(`"embedding"`)) {
		t.Fatalf("embeddings: %d %s", res.StatusCode, out)
	}
	res, out = post(t, http.DefaultClient, g.URL+"/v1/completions", keyAll, []byte(`{"model":"m","prompt":"hello","max_tokens":2}`), nil)
	if res.StatusCode != 200 || !bytes.Contains(out, []byte(`"text_completion"`)) {
		t.Fatalf("completions: %d %s", res.StatusCode, out)
	}
	for key, want := range map[string][]string{keyAll: {"m", "m-alias"}, keyLimited: {"m"}} {
		req, _ := http.NewRequest(http.MethodGet, g.URL+"/v1/models", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var list struct {
			Object string
			Data   []struct{ ID, Object string }
		}
		json.NewDecoder(res.Body).Decode(&list)
		res.Body.Close()
		if res.Header.Get("X-Request-Id") == "" {
			t.Errorf("key %s: /v1/models answered without X-Request-Id", key)
		}
		var ids []string
		for _, m := range list.Data {
			ids = append(ids, m.ID)
		}
		if list.Object != "list" || strings.Join(ids, ",") != strings.Join(want, ",") {
			t.Errorf("key %s: models %+v, want %v", key, list, want)
		}
	}
}

// openAIError is OpenAI's error shape.
type openAIError struct {
	Error *struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Code    string  `json:"code"`
		Param   *string `json:"param"`
	} `json:"error"`
}

func checkError(t *testing.T, what string, status int, body []byte, wantStatus int, wantCode, wantInMsg string) {
	t.Helper()
	var e openAIError
	if err := json.Unmarshal(body, &e); err != nil || e.Error == nil {
		t.Errorf("%s: body is not an OpenAI error: %q", what, body)
		return
	}
	if status != wantStatus || e.Error.Code != wantCode || e.Error.Type == "" || !strings.Contains(e.Error.Message, wantInMsg) {
		t.Errorf("%s: got %d %+v, want %d code %q message containing %q", what, status, *e.Error, wantStatus, wantCode, wantInMsg)
	}
}

// Every refusal says what was wrong, in OpenAI's error shape.
func TestGatewayErrors(t *testing.T) {
	g, be := newGateway(t, fakevllm.Options{}, "max_body: 64KiB")
	cases := []struct {
		name, path, key string
		body            []byte
		status          int
		code, msg       string
	}{
		{"no key", "/v1/chat/completions", "", chatBody("m", false, "x"), 401, "missing_api_key", "API key"},
		{"wrong key", "/v1/chat/completions", "sk-nope", chatBody("m", false, "x"), 401, "invalid_api_key", "Incorrect API key"},
		{"model not allowed", "/v1/chat/completions", keyLimited, chatBody("m-alias", false, "x"), 403, "model_not_allowed", "m-alias"},
		{"unknown model", "/v1/chat/completions", keyAll, chatBody("gpt-9", false, "x"), 404, "model_not_found", "gpt-9"},
		{"long unknown model", "/v1/chat/completions", keyAll, chatBody(strings.Repeat("g", 4000), false, "x"), 404, "model_not_found", "ggg"},
		{"malformed json", "/v1/chat/completions", keyAll, []byte(`{"model":"m",]`), 400, "invalid_json", "offset 13"},
		{"missing model", "/v1/chat/completions", keyAll, []byte(`{"messages":[]}`), 400, "missing_model", "model"},
		{"model not a string", "/v1/chat/completions", keyAll, []byte(`{"model":7}`), 400, "invalid_field", "model must be a string"},
		{"too large", "/v1/chat/completions", keyAll, chatBody("m", false, strings.Repeat("a", 65<<10)), 413, "request_too_large", "65536"},
		{"unknown path", "/v1/nothing", keyAll, []byte(`{}`), 404, "unknown_url", "/v1/nothing"},
	}
	// Every answer carries a request id, and its usage line says how it ended.
	checkRecorded := func(name string, res *http.Response, status int, code string) {
		t.Helper()
		id := res.Header.Get("X-Request-Id")
		if id == "" {
			t.Errorf("%s: no X-Request-Id", name)
			return
		}
		line := g.usageLineFor(t, id)
		if line["status"] != float64(status) || line["error"] != code {
			t.Errorf("%s: usage line status %v error %v, want %d %s", name, line["status"], line["error"], status, code)
		}
		if n, _ := line["bytes_out"].(float64); n <= 0 {
			t.Errorf("%s: usage line bytes_out %v for an error body", name, line["bytes_out"])
		}
		for field, most := range map[string]int{"path": 768, "model": 256} { // docs/operations.md's budgets (Usage log)
			if v, _ := line[field].(string); len(v) > most {
				t.Errorf("%s: usage line %s of %d bytes, want at most %d", name, field, len(v), most)
			}
		}
	}
	for _, tc := range cases {
		res, body := post(t, http.DefaultClient, g.URL+tc.path, tc.key, tc.body, nil)
		checkError(t, tc.name, res.StatusCode, body, tc.status, tc.code, tc.msg)
		checkRecorded(tc.name, res, tc.status, tc.code)
	}
	// Answered by the gateway, not by hertz: a wrong method, a trailing
	// slash (no redirect), and a path longer than a usage line keeps.
	for _, tc := range []struct {
		name, path string
		status     int
		code, msg  string
	}{
		{"wrong method", "/v1/chat/completions", 405, "method_not_allowed", "GET"},
		{"trailing slash", "/v1/models/", 404, "unknown_url", "/v1/models/"},
		{"long path", "/v1/" + strings.Repeat("p", 4000), 404, "unknown_url", "/v1/ppp"},
	} {
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		res, err := client.Get(g.URL + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		checkError(t, tc.name, res.StatusCode, body, tc.status, tc.code, tc.msg)
		checkRecorded(tc.name, res, tc.status, tc.code)
	}
	if n := len(be.Received()); n != 0 {
		t.Errorf("refused requests reached the backend %d times", n)
	}
}

// A body over max_body is refused from its declared length, before the
// gateway reads it: the client here sends only the first 16 KiB of 1 TiB
// (hertz reads up to 8 KiB of a body before dispatching the request).
func TestTooLargeRefusedWithoutReadingBody(t *testing.T) {
	g, _ := newGateway(t, fakevllm.Options{}, "max_body: 1MiB")
	conn, err := net.Dial("tcp", strings.TrimPrefix(g.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{\"model\":\"m\",\"x\":\"%s", keyAll, 1<<40, strings.Repeat("a", 16<<10))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a 1 TiB declared body: %v", err)
	}
	body, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
	checkError(t, "declared 1TiB", res.StatusCode, body, 413, "request_too_large", "1048576")
	if !res.Close {
		t.Error("connection not closed after refusing an unread body")
	}

	// Chunked, no declared length: refused once it passes the cap.
	pr, pw := io.Pipe()
	go func() {
		pw.Write([]byte(`{"model":"m","x":"`))
		chunk := bytes.Repeat([]byte("a"), 64<<10)
		for i := 0; i < 40; i++ { // 2.5 MiB, over the 1 MiB cap
			if _, err := pw.Write(chunk); err != nil {
				return
			}
		}
		pw.Write([]byte(`"}`))
		pw.Close()
	}()
	req, _ := http.NewRequest(http.MethodPost, g.URL+"/v1/chat/completions", pr)
	req.Header.Set("Authorization", "Bearer "+keyAll)
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("chunked over the cap: %v", err)
	}
	body, _ = io.ReadAll(res.Body)
	res.Body.Close()
	pr.Close()
	checkError(t, "chunked 2.5MiB", res.StatusCode, body, 413, "request_too_large", "1048576")
}

// The client's credentials and hop-by-hop headers stay at the gateway; the
// backend gets its own key and the end-to-end headers.
func TestHeadersFiltered(t *testing.T) {
	g, be := newGateway(t, fakevllm.Options{}, "")
	res, out := post(t, http.DefaultClient, g.URL+"/v1/chat/completions", keyAll, chatBody("m", false, "x"), map[string]string{
		"Cookie":              "session=secret",
		"Connection":          "keep-alive, X-Drop-Me",
		"X-Drop-Me":           "hop",
		"Keep-Alive":          "timeout=5",
		"Proxy-Authorization": "Basic c2VjcmV0",
		"Te":                  "trailers",
		"Upgrade":             "h2c",
		"X-Pass":              "end-to-end",
	})
	if res.StatusCode != 200 {
		t.Fatalf("status %d: %s", res.StatusCode, out)
	}
	got := be.Received()[0].Header
	if a := got.Get("Authorization"); a != "Bearer "+backendKey {
		t.Errorf("backend Authorization = %q, want the backend's own key", a)
	}
	for _, h := range []string{"Cookie", "X-Drop-Me", "Keep-Alive", "Proxy-Authorization", "Te", "Upgrade"} {
		if v := got.Get(h); v != "" {
			t.Errorf("%s reached the backend: %q", h, v)
		}
	}
	if got.Get("X-Pass") != "end-to-end" {
		t.Errorf("X-Pass lost: %v", got)
	}
	// Model m-alias has no api_key_env: the client's key must not leak through.
	post(t, http.DefaultClient, g.URL+"/v1/chat/completions", keyAll, chatBody("m-alias", false, "x"), nil)
	if a := be.Received()[1].Header.Get("Authorization"); a != "" {
		t.Errorf("client Authorization reached a backend without its own key: %q", a)
	}
}

// Bodies around and far past 64 KiB arrive byte-identical.
func TestLargeBodiesByteIdentical(t *testing.T) {
	g, be := newGateway(t, fakevllm.Options{Tokens: 1}, "")
	for i, size := range []int{30 << 10, 1 << 20, 10 << 20} {
		body := chatBody("m", false, strings.Repeat("0123456789abcdef", size/16))
		res, out := post(t, http.DefaultClient, g.URL+"/v1/chat/completions", keyAll, body, nil)
		if res.StatusCode != 200 {
			t.Fatalf("%d bytes: status %d %s", len(body), res.StatusCode, out)
		}
		got, want := be.Received()[i], asSent("all", body) // with the key's cache_salt: nothing else changed
		if got.BodyLen != len(want) || got.BodySHA256 != sha256.Sum256(want) {
			t.Fatalf("%d bytes sent, backend got %d bytes with another hash", len(body), got.BodyLen)
		}
	}
}

// A model whose backends never passed a health check answers 503 at once;
// a backend that dies after passing one gives a 502 (every attempt failed
// to connect), and is then out of rotation: 503.
func TestUnreachableBackend(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there now
	g := startGateway(t, baseConfig(dead, "off", ""))
	res, body := post(t, http.DefaultClient, g.URL+"/v1/chat/completions", keyAll, chatBody("m", true, "x"), nil)
	checkError(t, "never healthy", res.StatusCode, body, 503, "no_healthy_backend", "healthy")

	be := startBackend(t, fakevllm.Options{})
	g2 := startGateway(t, baseConfig(be.URL(), "off", ""))
	be.Close()
	res, body = post(t, http.DefaultClient, g2.URL+"/v1/chat/completions", keyAll, chatBody("m", false, "x"), nil)
	checkError(t, "died after its check", res.StatusCode, body, 502, "upstream_unreachable", "could not be reached")
	// Ejected now in the worker that saw it fail; send on that connection.
	res, body = post(t, http.DefaultClient, g2.URL+"/v1/chat/completions", keyAll, chatBody("m", false, "x"), nil)
	checkError(t, "ejected", res.StatusCode, body, 503, "no_healthy_backend", "healthy")
}
