package upstream

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httputil"
	"net/textproto"
	"strings"
)

// readResponse reads a response head from br, as http.ReadResponse(br, nil)
// does, and returns the same *http.Response: the plain heads backends send
// are parsed here (plainResponse), anything else by http.ReadResponse.
//
// Why not always net/http: at saturation http.ReadResponse was ~9% of the
// worker's CPU per request (1.7 µs and 13 allocations for a five-header
// head in isolation; BenchmarkReadResponse has both side by side). What
// plainResponse accepts is a strict subset of what net/http accepts, and
// FuzzPlainResponse checks that for every head it accepts both give the
// same response and body, and leave the connection at the same byte.
func readResponse(br *bufio.Reader) (*http.Response, error) {
	if br.Buffered() == 0 {
		if _, err := br.Peek(1); err != nil { // as net/http reports it
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
	if res := plainResponse(br); res != nil {
		return res, nil
	}
	return http.ReadResponse(br, nil)
}

// plainResponse parses the response head waiting in br when it is plain:
// HTTP/1.1; a status 200–599 but 204 and 304 (no 1xx, no status without a
// body) with a printable reason; CRLF line ends; header names that are
// tokens, values of printable ASCII or tabs, no folded lines; and either
// one Content-Length of digits or one Transfer-Encoding: chunked, not both;
// no Trailer, no Pragma (net/http rewrites it), and a Connection header of
// "close" or "keep-alive" if any. The whole head must be in br's buffer
// already (readResponse fills it once). It returns nil, having consumed
// nothing, for anything else.
//
// The response differs from net/http's only where the worker does not
// look: trailer fields are read and dropped (res.Trailer stays nil), a
// body cut short repeats io.ErrUnexpectedEOF where net/http's says io.EOF
// on a second read, and a malformed trailer's error is repeated.
//
// Long (about 120 lines): the status line, the headers and the framing
// rules are read in order in one pass over the buffer, as RFC 9112 lists
// them; each rule is a few lines, commented where it is applied.
func plainResponse(br *bufio.Reader) *http.Response {
	buf, _ := br.Peek(br.Buffered())
	end := bytes.Index(buf, []byte("\r\n\r\n"))
	if end < 0 {
		return nil
	}
	raw := buf[:end+2] // the lines, each with its CRLF
	lines := 0
	for i, c := range raw {
		switch headBytes[c] {
		case plainByte:
		case crByte:
			if raw[i+1] != '\n' { // raw ends in CRLF: i+1 is in it
				return nil // a bare CR: net/http reads lines otherwise
			}
		case lfByte:
			if i == 0 || raw[i-1] != '\r' {
				return nil // a bare LF
			}
			lines++
		default:
			return nil // control bytes and non-ASCII: net/http's rules
		}
	}
	head := string(raw) // one copy: every string below is a piece of it
	line, rest, _ := strings.Cut(head, "\r\n")
	status, ok := strings.CutPrefix(line, "HTTP/1.1 ")
	if !ok || len(status) < 3 || status[0] < '2' || status[0] > '5' || !isDigit(status[1]) || !isDigit(status[2]) {
		return nil
	}
	code := int(status[0]-'0')*100 + int(status[1]-'0')*10 + int(status[2]-'0')
	if code == http.StatusNoContent || code == http.StatusNotModified {
		return nil
	}
	if len(status) > 3 {
		if status[3] != ' ' || len(status) > 4 && status[4] == ' ' {
			return nil
		}
	}
	res := &http.Response{
		Status:     statusText(status),
		StatusCode: code,
		Proto:      "HTTP/1.1",
		ProtoMajor: 1,
		ProtoMinor: 1,
		Header:     make(http.Header, 8),
	}
	var (
		length       int64 = -1
		lengths, tes int
		chunked      bool
	)
	// One backing array for the headers' one-value slices.
	values := make([]string, 0, lines-1)
	for rest != "" {
		var hl string
		hl, rest, _ = strings.Cut(rest, "\r\n")
		colon := strings.IndexByte(hl, ':')
		if colon < 1 || !isToken(hl[:colon]) {
			return nil
		}
		value := trimOWS(hl[colon+1:])
		name := canonicalName(hl[:colon])
		switch name {
		case "Content-Length":
			lengths++
			if len(value) == 0 || len(value) > 18 || !allDigits(value) {
				return nil
			}
			length = 0
			for i := 0; i < len(value); i++ {
				length = length*10 + int64(value[i]-'0')
			}
		case "Transfer-Encoding":
			tes++
			if !strings.EqualFold(value, "chunked") {
				return nil
			}
			chunked = true
			continue // net/http takes it out of the header
		case "Connection":
			switch {
			case strings.EqualFold(value, "close"):
				res.Close = true
				continue // net/http takes it out when it says close
			case strings.EqualFold(value, "keep-alive"):
			default:
				return nil
			}
		case "Trailer", "Pragma":
			return nil
		}
		if vs, ok := res.Header[name]; ok {
			res.Header[name] = append(vs, value)
		} else {
			values = append(values, value)
			res.Header[name] = values[len(values)-1 : len(values) : len(values)]
		}
	}
	switch {
	case lengths > 1 || tes > 1 || lengths == 1 && tes == 1:
		return nil
	case res.Close && len(res.Header["Connection"]) > 0:
		return nil // "close" and "keep-alive" both: net/http's rules, not these
	case chunked:
		res.ContentLength = -1
		res.TransferEncoding = []string{"chunked"}
		res.Body = &chunkedBody{r: httputil.NewChunkedReader(br), br: br}
	case lengths == 1 && length == 0:
		res.ContentLength = 0
		res.Body = http.NoBody
	case lengths == 1:
		res.ContentLength = length
		res.Body = &lengthBody{r: br, left: length}
	default:
		return nil // delimited by the close: net/http's
	}
	br.Discard(len(raw) + 2) //nolint:errcheck // buffered: it cannot fail
	return res
}

// The classes of a head's bytes for plainResponse: printable ASCII and tab,
// CR, LF, and anything else.
const (
	otherByte = iota // the zero value: a byte the table does not name is refused
	plainByte
	crByte
	lfByte
)

var headBytes = func() (t [256]uint8) {
	for c := range t {
		switch {
		case c == '\r':
			t[c] = crByte
		case c == '\n':
			t[c] = lfByte
		case c >= ' ' && c <= '~' || c == '\t':
			t[c] = plainByte
		default:
			t[c] = otherByte
		}
	}
	return t
}()

// statusText is status ("200 OK") as a string of its own: a piece of the
// head would keep the whole head alive as long as the response, for an
// open stream its whole life.
func statusText(status string) string {
	switch status {
	case "200 OK":
		return "200 OK"
	}
	return strings.Clone(status)
}

// lengthBody is a Content-Length body, read as net/http's body reads one:
// io.EOF with its last bytes, io.ErrUnexpectedEOF if the connection ends
// before them.
type lengthBody struct {
	r    io.Reader
	left int64
}

func (b *lengthBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	switch {
	case err == io.EOF && b.left > 0:
		err = io.ErrUnexpectedEOF
	case err == nil && b.left == 0:
		err = io.EOF
	}
	return n, err
}

func (b *lengthBody) Close() error { return nil }

// chunkedBody is a chunked body, decoded by net/http's own chunked reader
// (httputil.NewChunkedReader), its end read as net/http's body reads it:
// the final CRLF, or trailer fields, which are read and dropped.
type chunkedBody struct {
	r    io.Reader
	br   *bufio.Reader
	done bool
	err  error
}

func (b *chunkedBody) Read(p []byte) (int, error) {
	if b.done {
		return 0, b.err
	}
	n, err := b.r.Read(p)
	if err == io.EOF {
		b.done, b.err = true, io.EOF
		if e := readTrailer(b.br); e != nil {
			b.err = e
		}
		err = b.err
	}
	return n, err
}

func (b *chunkedBody) Close() error { return nil }

// errTrailerEOF is net/http's error for a chunked body cut in its trailer.
var errTrailerEOF = errors.New("http: unexpected EOF reading trailer")

// readTrailer reads what follows a chunked body's last chunk, as net/http
// does: a CRLF, or trailer fields up to a blank line (within the buffer).
func readTrailer(br *bufio.Reader) error {
	buf, err := br.Peek(2)
	if bytes.Equal(buf, []byte("\r\n")) {
		br.Discard(2) //nolint:errcheck // peeked
		return nil
	}
	if len(buf) < 2 {
		return errTrailerEOF
	}
	if err != nil {
		return err
	}
	if !upcomingDoubleCRLF(br) {
		return errors.New("http: suspiciously long trailer after chunked body")
	}
	if _, err := textproto.NewReader(br).ReadMIMEHeader(); err != nil {
		if err == io.EOF {
			return errTrailerEOF
		}
		return err
	}
	return nil
}

// upcomingDoubleCRLF reports whether br holds, or can buffer, a blank line
// ahead (net/http's seeUpcomingDoubleCRLF).
func upcomingDoubleCRLF(br *bufio.Reader) bool {
	for peekSize := 4; ; peekSize++ {
		buf, err := br.Peek(peekSize)
		if bytes.HasSuffix(buf, []byte("\r\n\r\n")) {
			return true
		}
		if err != nil {
			break
		}
	}
	return false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// trimOWS trims spaces and tabs from both ends of s.
func trimOWS(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}

// tokenChars marks the bytes of an RFC 9110 token (tchar).
var tokenChars = func() (t [256]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = true, true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for _, c := range []byte("!#$%&'*+-.^_`|~") {
		t[c] = true
	}
	return t
}()

// isToken reports whether s is an RFC 9110 token (a header name).
func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		if !tokenChars[s[i]] {
			return false
		}
	}
	return true
}

// canonicalName is textproto.CanonicalMIMEHeaderKey of a token, without an
// allocation (or a map lookup) for the names backends send, whether in
// lower case or canonical.
func canonicalName(s string) string {
	switch s {
	case "content-length", "Content-Length":
		return "Content-Length"
	case "content-type", "Content-Type":
		return "Content-Type"
	case "date", "Date":
		return "Date"
	case "server", "Server":
		return "Server"
	case "transfer-encoding", "Transfer-Encoding":
		return "Transfer-Encoding"
	case "connection", "Connection":
		return "Connection"
	case "x-request-id", "X-Request-Id":
		return "X-Request-Id"
	case "cache-control", "Cache-Control":
		return "Cache-Control"
	case "retry-after", "Retry-After":
		return "Retry-After"
	case "vary", "Vary":
		return "Vary"
	case "x-accel-buffering", "X-Accel-Buffering":
		return "X-Accel-Buffering"
	}
	return textproto.CanonicalMIMEHeaderKey(s)
}
