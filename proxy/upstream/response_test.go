package upstream

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// chunkedSource hands out its bytes at most step at a time (a backend's
// segments), counting them; with eofWithLast, io.EOF comes with the last.
type chunkedSource struct {
	b           []byte
	step        int
	eofWithLast bool
	n           int
}

func (c *chunkedSource) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), c.step)], c.b)
	c.b = c.b[k:]
	c.n += k
	if c.eofWithLast && len(c.b) == 0 {
		return k, io.EOF
	}
	return k, nil
}

// reading is what a reader made of a response: the head (or its error),
// each body Read's count and whether it said io.EOF, the body's bytes and
// final error, and where it left the connection (bytes taken from the
// source minus those still buffered).
type reading struct {
	res     *http.Response
	headErr error
	reads   []int // count, negated when the Read said io.EOF
	body    []byte
	bodyErr error
	at      int
}

// readWhole reads one response from in, split into segments of step, with
// read, then its body in reads of readSize.
func readWhole(in []byte, step, readSize int, eofWithLast bool, read func(*bufio.Reader) (*http.Response, error)) reading {
	src := &chunkedSource{b: in, step: step, eofWithLast: eofWithLast}
	br := bufio.NewReaderSize(src, readBufferSize)
	var r reading
	if r.res, r.headErr = read(br); r.headErr != nil {
		r.at = src.n - br.Buffered()
		return r
	}
	buf := make([]byte, readSize)
	for range 1 << 16 {
		n, err := r.res.Body.Read(buf)
		r.body = append(r.body, buf[:n]...)
		if err == io.EOF {
			r.reads = append(r.reads, -n)
			break
		}
		r.reads = append(r.reads, n)
		if err != nil {
			r.bodyErr = err
			break
		}
	}
	r.at = src.n - br.Buffered()
	return r
}

// checkAgainstNetHTTP fails t when readResponse and net/http read in
// differently, split as the arguments say: the head's fields or error, the
// body's bytes, each Read's count and end, the body's error, and where the
// next response would start. Whichever of plainResponse and net/http took
// the head, the reading must be net/http's.
func checkAgainstNetHTTP(t *testing.T, in []byte, step, readSize int, eofWithLast bool) {
	t.Helper()
	ours := readWhole(in, step, readSize, eofWithLast, readResponse)
	ref := readWhole(in, step, readSize, eofWithLast, func(br *bufio.Reader) (*http.Response, error) { return http.ReadResponse(br, nil) })
	if (ours.headErr == nil) != (ref.headErr == nil) || ours.at != ref.at && ours.headErr != nil {
		t.Fatalf("%q (step %d): head error %v at %d; net/http %v at %d", in, step, ours.headErr, ours.at, ref.headErr, ref.at)
	}
	if ours.headErr != nil {
		return
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
	if !reflect.DeepEqual(h(ours.res), h(ref.res)) {
		t.Fatalf("%q:\nreadResponse %+v\nnet/http     %+v", in, h(ours.res), h(ref.res))
	}
	if !bytes.Equal(ours.body, ref.body) || (ours.bodyErr == nil) != (ref.bodyErr == nil) || ours.at != ref.at || !slices.Equal(ours.reads, ref.reads) {
		t.Fatalf("%q (step %d, reads of %d): body %q (%v) in reads %v, left at %d; net/http %q (%v) in reads %v, left at %d",
			in, step, readSize, ours.body, ours.bodyErr, ours.reads, ours.at, ref.body, ref.bodyErr, ref.reads, ref.at)
	}
}

// takenByPlain reports whether plainResponse reads in's head, all of it
// buffered.
func takenByPlain(in []byte) bool {
	br := bufio.NewReaderSize(bytes.NewReader(in), readBufferSize)
	br.Peek(1) //nolint:errcheck // an empty in: not taken
	return plainResponse(br) != nil
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
		{"HTTP/1.1 200 OK\r\nContent-Length: 999999999999999999\r\n\r\nabc", true},     // 18 digits: the most taken
		{"HTTP/1.1 200 OK\r\nContent-Length: 0000000000000000005\r\n\r\nabcde", false}, // 19: net/http's
		{"HTTP/1.1 200 OK\r\nContent-Length: 9223372036854775808\r\n\r\nabc", false},   // past int64: refused by both
		{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0005\r\nhello\r\nA\r\n0123456789\r\n0;x=1\r\n\r\n", true},
		{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: " + strings.Repeat("t", 1100) + "\r\n\r\n", true}, // a trailer past the buffer
		{"HTTP/1.1 200 OK\r\nX-Long: " + strings.Repeat("v", 900) + "\r\nContent-Length: 0\r\n\r\n", true},               // a head near the buffer's size
		{"HTTP/1.1 200 OK\r\nX-Long: " + strings.Repeat("v", 1100) + "\r\nContent-Length: 0\r\n\r\n", false},             // past it: net/http's
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
		if got := takenByPlain([]byte(c.in)); got != c.plain {
			t.Errorf("%q: taken by plainResponse %v, want %v", c.in, got, c.plain)
		}
		for _, step := range []int{1, 7, 64, 4096} {
			for _, size := range []int{1, 3, 512} {
				for _, eof := range []bool{false, true} {
					checkAgainstNetHTTP(t, []byte(c.in), step, size, eof)
				}
			}
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
		f.Add([]byte(s), uint16(4095), uint16(511), false)
		f.Add([]byte(s), uint16(6), uint16(2), true)
	}
	f.Fuzz(func(t *testing.T, in []byte, step, readSize uint16, eofWithLast bool) {
		checkAgainstNetHTTP(t, in, int(step%2048)+1, int(readSize%2048)+1, eofWithLast)
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
