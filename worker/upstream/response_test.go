package upstream

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// countingReader counts the bytes read from it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// readWhole reads a response from in with read, then its body, and says
// where the connection was left: bytes taken from in minus those buffered.
func readWhole(in []byte, read func(*bufio.Reader) (*http.Response, error)) (res *http.Response, body []byte, bodyErr error, at int, err error) {
	src := &countingReader{r: bytes.NewReader(in)}
	br := bufio.NewReaderSize(src, readBufferSize)
	res, err = read(br)
	if err != nil {
		return nil, nil, nil, 0, err
	}
	body, bodyErr = io.ReadAll(res.Body)
	return res, body, bodyErr, src.n - br.Buffered(), nil
}

// checkAgainstNetHTTP fails t when plainResponse accepts in and net/http
// reads it otherwise: the head's fields, the body, its error, or where the
// next response would start.
func checkAgainstNetHTTP(t *testing.T, in []byte) (accepted bool) {
	t.Helper()
	var plain bool
	ours, ourBody, ourErr, ourAt, err := readWhole(in, func(br *bufio.Reader) (*http.Response, error) {
		res := plainResponse(br)
		if res == nil {
			return nil, io.EOF
		}
		plain = true
		return res, nil
	})
	if !plain {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	ref, refBody, refErr, refAt, err := readWhole(in, func(br *bufio.Reader) (*http.Response, error) { return http.ReadResponse(br, nil) })
	if err != nil {
		t.Fatalf("plainResponse reads %q; net/http refuses it: %v", in, err)
	}
	type head struct {
		Status                 string
		StatusCode             int
		Proto                  string
		ProtoMajor, ProtoMinor int
		Header                 http.Header
		ContentLength          int64
		TransferEncoding       []string
		Close                  bool
	}
	h := func(r *http.Response) head {
		return head{r.Status, r.StatusCode, r.Proto, r.ProtoMajor, r.ProtoMinor, r.Header, r.ContentLength, r.TransferEncoding, r.Close}
	}
	if !reflect.DeepEqual(h(ours), h(ref)) {
		t.Fatalf("%q:\nplainResponse %+v\nnet/http      %+v", in, h(ours), h(ref))
	}
	if !bytes.Equal(ourBody, refBody) || (ourErr == nil) != (refErr == nil) || ourAt != refAt {
		t.Fatalf("%q: body %q (%v), left at %d; net/http %q (%v), left at %d", in, ourBody, ourErr, ourAt, refBody, refErr, refAt)
	}
	return true
}

func TestPlainResponse(t *testing.T) {
	for _, c := range []struct {
		in    string
		plain bool
	}{
		{"HTTP/1.1 200 OK\r\ndate: Sat, 05 Dec 2026 03:04:05 GMT\r\nserver: uvicorn\r\ncontent-length: 5\r\ncontent-type: application/json\r\n\r\nhello", true},
		{"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\nHTTP/1.1", true},
		{"HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\n\r\n5\r\nhello\r\n0\r\nX-Trailer: 1\r\n\r\n", true}, // trailer fields
		{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel", true},                                // cut: an error for both
		{"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 3\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}", true},
		{"HTTP/1.1 500\r\nContent-Length: 0\r\n\r\n", true},
		{"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", true}, // cut: ErrUnexpectedEOF for both
		{"HTTP/1.1 200 OK\r\nX-A: 1\r\nx-a: 2\r\nContent-Length: 0\r\n\r\n", true},
		// For net/http:
		{"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx", false},
		{"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n", false},
		{"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", false},
		{"HTTP/1.1 200 OK\r\n\r\nuntil the close", false},
		{"HTTP/1.1 204 No Content\r\n\r\n", false},
		{"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", false},
		{"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", false},
		{"HTTP/1.1 200 OK\nContent-Length: 0\n\n", false},
		{"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n folded\r\n\r\n", false},
		{"HTTP/1.1 200 OK\r\nContent Length: 0\r\n\r\n", false},
		{"HTTP/1.1 200 OK\r\nContent-Length: +1\r\n\r\nx", false},
		{"HTTP/1.1 200 OK\r\nTrailer: X\r\nContent-Length: 0\r\n\r\n", false},
		{"HTTP/1.1 200 OK\r\nPragma: no-cache\r\nContent-Length: 0\r\n\r\n", false},
		{"HTTP/1.1 200 OK\r\nConnection: keep-alive, close\r\nContent-Length: 0\r\n\r\n", false},
		{"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n", false}, // incomplete head
	} {
		if got := checkAgainstNetHTTP(t, []byte(c.in)); got != c.plain {
			t.Errorf("%q: plain %v, want %v", c.in, got, c.plain)
		}
	}
}

// FuzzPlainResponse: whatever plainResponse accepts, net/http reads the
// same way — head, body, body error, and where the next response starts.
func FuzzPlainResponse(f *testing.F) {
	for _, s := range []string{
		"HTTP/1.1 200 OK\r\ndate: Sat, 05 Dec 2026 03:04:05 GMT\r\nserver: uvicorn\r\ncontent-length: 5\r\ncontent-type: application/json\r\n\r\nhello",
		"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nX-Trailer: 1\r\n\r\n",
		"HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 3\r\n\r\nabc",
		"HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nX_Y: \t a \t\r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\n0\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		checkAgainstNetHTTP(t, in)
	})
}

// BenchmarkReadResponse: net/http's reader against readResponse, on the
// head and body vLLM sends for a small non-streamed answer.
func BenchmarkReadResponse(b *testing.B) {
	in := []byte("HTTP/1.1 200 OK\r\ndate: Sat, 05 Dec 2026 03:04:05 GMT\r\nserver: uvicorn\r\ncontent-length: 300\r\ncontent-type: application/json\r\nx-request-id: 7f3c2a9e1b8d4c6f\r\n\r\n" + strings.Repeat("x", 300))
	for _, c := range []struct {
		name string
		read func(*bufio.Reader) (*http.Response, error)
	}{
		{"net-http", func(br *bufio.Reader) (*http.Response, error) { return http.ReadResponse(br, nil) }},
		{"readResponse", readResponse},
	} {
		b.Run(c.name, func(b *testing.B) {
			r := bytes.NewReader(in)
			br := bufio.NewReaderSize(r, readBufferSize)
			buf := make([]byte, 512)
			b.ReportAllocs()
			for b.Loop() {
				r.Reset(in)
				br.Reset(r)
				res, err := c.read(br)
				if err != nil {
					b.Fatal(err)
				}
				if n, _ := io.ReadFull(res.Body, buf[:300]); n != 300 {
					b.Fatal("short body")
				}
				res.Body.Close()
			}
		})
	}
}
