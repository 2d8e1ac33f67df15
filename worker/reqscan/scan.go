// Package reqscan reads what the gateway needs from an OpenAI request body
// in one pass over its bytes, validating the JSON as it goes, without
// building a document: the routing field, the streaming flags, the
// affinity key's raw bytes, the message count and the prompt size. It also
// inserts stream_options.include_usage into the bytes.
//
// Purpose-built rather than gjson because one pass does both the
// validation and the extraction, and long strings (prompts) are skipped
// with bytes.IndexByte's vectorised search: see BenchmarkScan100KB, which
// runs it side by side with gjson (Valid + GetMany) on the same body.
package reqscan

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"
)

// Span is a half-open byte range [Start, End) of the body.
type Span struct{ Start, End int }

// Len is the span's length in bytes.
func (s Span) Len() int { return s.End - s.Start }

// Request is what one scan found. Spans point into the scanned body; a
// zero Span means the field is absent.
type Request struct {
	Model        Span // raw value of "model" (a JSON string, quotes included)
	ModelName    string
	Stream       bool
	StreamOpts   Span // raw value of "stream_options"
	IncludeUsage bool // stream_options.include_usage is true
	UsageValue   Span // raw value of stream_options.include_usage
	User         Span // raw value of "user" (a JSON string, quotes included)
	FirstContent Span // raw value of messages[0].content (or of "prompt" / "input")
	Messages     int  // number of messages
	PromptBytes  int  // bytes of every message content (or of prompt / input)
	MaxTokens    int64
	ObjectEnd    int // offset of the top-level object's closing '}'
}

// SyntaxError is malformed JSON at a byte offset.
type SyntaxError struct {
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("%s at byte offset %d", e.Msg, e.Offset) }

type scanner struct {
	b   []byte
	i   int
	err *SyntaxError
	r   *Request
}

// What an object being scanned is: its members are handled accordingly.
// (A kind, not callbacks: closures would escape and allocate per scan.)
type objectKind int

const (
	plainObject   objectKind = iota // only validated
	requestObject                   // the top-level request
	messageObject                   // an element of "messages"
	streamOptions                   // the "stream_options" object
)

func (s *scanner) fail(msg string) {
	if s.err == nil {
		s.err = &SyntaxError{Offset: s.i, Msg: msg}
	}
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// Scan reads body, which must be one JSON object.
func Scan(body []byte) (Request, error) {
	var r Request
	s := scanner{b: body, r: &r}
	s.ws()
	if s.i >= len(body) || body[s.i] != '{' {
		s.fail("request body must be a JSON object")
		return r, s.err
	}
	s.object(requestObject)
	r.ObjectEnd = s.i - 1
	s.ws()
	if s.err == nil && s.i != len(body) {
		s.fail("unexpected data after the JSON object")
	}
	if s.err != nil {
		return Request{}, s.err
	}
	if r.Model.Len() > 0 {
		r.ModelName = unquote(body[r.Model.Start:r.Model.End])
	}
	return r, nil
}

// object scans an object at s.i ('{') of the given kind.
func (s *scanner) object(kind objectKind) {
	if s.open('}') {
		return
	}
	for s.err == nil {
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			s.fail("expected a string key")
			return
		}
		ks := s.i
		s.str()
		if s.err != nil {
			return
		}
		key := s.b[ks+1 : s.i-1]
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			s.fail("expected ':' after an object key")
			return
		}
		s.i++
		s.ws()
		start := s.i
		switch {
		case kind == requestObject && string(key) == "messages" && s.i < len(s.b) && s.b[s.i] == '[':
			s.messages()
		case kind == requestObject && string(key) == "stream_options" && s.i < len(s.b) && s.b[s.i] == '{':
			s.object(streamOptions)
		default:
			s.value()
		}
		if s.err != nil {
			return
		}
		s.member(kind, key, Span{start, s.i})
		if !s.endOfElement('}') {
			return
		}
	}
}

// open consumes an object's or array's opening bracket and the whitespace
// after it, and reports whether the container is empty (closer consumed).
func (s *scanner) open(closer byte) (empty bool) {
	s.i++
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == closer {
		s.i++
		return true
	}
	return false
}

// member records what the request needs of one scanned member.
func (s *scanner) member(kind objectKind, key []byte, v Span) {
	r, b := s.r, s.b
	switch kind {
	case requestObject:
		switch string(key) {
		case "model":
			r.Model = Span{}
			if b[v.Start] == '"' {
				r.Model = v
			}
		case "stream":
			r.Stream = string(b[v.Start:v.End]) == "true"
		case "user":
			if b[v.Start] == '"' {
				r.User = v
			}
		case "max_tokens", "max_completion_tokens":
			if n, err := strconv.ParseInt(string(b[v.Start:v.End]), 10, 64); err == nil && n > r.MaxTokens {
				r.MaxTokens = n
			}
		case "prompt", "input":
			r.FirstContent, r.PromptBytes = v, v.Len()
		case "stream_options":
			r.StreamOpts = v
		}
	case messageObject:
		if string(key) == "content" {
			if r.Messages == 0 {
				r.FirstContent = v
			}
			r.PromptBytes += v.Len()
		}
	case streamOptions:
		if string(key) == "include_usage" {
			r.UsageValue = v
			r.IncludeUsage = string(b[v.Start:v.End]) == "true"
		}
	}
}

// messages scans the "messages" array: counts its elements, sums their
// content sizes, and keeps the first content's span.
func (s *scanner) messages() {
	if s.open(']') {
		return
	}
	for s.err == nil {
		s.ws()
		if s.i < len(s.b) && s.b[s.i] == '{' {
			s.object(messageObject)
		} else {
			s.value()
		}
		if s.err != nil {
			return
		}
		s.r.Messages++
		if !s.endOfElement(']') {
			return
		}
	}
}

// endOfElement consumes ',' (true: another element follows) or the closing
// bracket (false).
func (s *scanner) endOfElement(closer byte) bool {
	s.ws()
	if s.i >= len(s.b) {
		s.fail("unexpected end of JSON input")
		return false
	}
	switch s.b[s.i] {
	case ',':
		s.i++
		return true
	case closer:
		s.i++
		return false
	}
	s.fail("expected ',' or '" + string(closer) + "'")
	return false
}

// value scans any JSON value at s.i.
func (s *scanner) value() {
	if s.i >= len(s.b) {
		s.fail("unexpected end of JSON input")
		return
	}
	switch c := s.b[s.i]; {
	case c == '"':
		s.str()
	case c == '{':
		s.object(plainObject)
	case c == '[':
		if s.open(']') {
			return
		}
		for s.err == nil {
			s.ws()
			s.value()
			if s.err != nil || !s.endOfElement(']') {
				return
			}
		}
	case c == 't':
		s.literal("true")
	case c == 'f':
		s.literal("false")
	case c == 'n':
		s.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		s.number()
	default:
		s.fail("invalid character " + strconv.QuoteRune(rune(c)) + " looking for a value")
	}
}

func (s *scanner) literal(lit string) {
	if !bytes.HasPrefix(s.b[s.i:], []byte(lit)) {
		s.fail("invalid literal, expected " + lit)
		return
	}
	s.i += len(lit)
}

func (s *scanner) number() {
	b, i := s.b, s.i
	if b[i] == '-' {
		i++
	}
	digits := func() bool {
		st := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i > st
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case !digits():
		s.i = i
		s.fail("invalid number")
		return
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			s.i = i
			s.fail("invalid number")
			return
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			s.i = i
			s.fail("invalid number")
			return
		}
	}
	s.i = i
}

// str scans a string at s.i (the opening quote). Quotes and backslashes
// are found with bytes.IndexByte's vectorised search and raw control
// characters with an 8-bytes-at-a-time check, so a 100 KB prompt costs
// about a memory scan. The next quote's position is kept across escapes,
// so a string with many escapes is still scanned once.
func (s *scanner) str() {
	b := s.b
	i := s.i + 1
	q := -1 // position of the next '"' at or after i
	for {
		if q < i {
			j := bytes.IndexByte(b[i:], '"')
			if j < 0 {
				s.i = len(b)
				s.fail("unterminated string")
				return
			}
			q = i + j
		}
		bs := bytes.IndexByte(b[i:q], '\\')
		end := q
		if bs >= 0 {
			end = i + bs
		}
		if k := indexControl(b[i:end]); k >= 0 {
			s.i = i + k
			s.fail("invalid control character in string")
			return
		}
		if bs < 0 {
			s.i = q + 1
			return
		}
		i = end
		switch b[i+1] { // i+1 <= q: a backslash before the quote
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i += 2
		case 'u':
			if i+6 > len(b) || !isHex4(b[i+2:i+6]) {
				s.i = i
				s.fail("invalid \\u escape")
				return
			}
			i += 6
		default:
			s.i = i
			s.fail("invalid escape character")
			return
		}
	}
}

// indexControl finds a byte < 0x20, which JSON forbids raw inside strings,
// testing 8 bytes at a time (the has-less-than bit trick) before looking
// at single bytes.
func indexControl(b []byte) int {
	const lo, hi = 0x2020202020202020, 0x8080808080808080
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		if (x-lo)&^x&hi != 0 {
			break
		}
	}
	for ; i < len(b); i++ {
		if b[i] < 0x20 {
			return i
		}
	}
	return -1
}

func isHex4(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// unquote decodes a raw JSON string; model names rarely have escapes.
func unquote(raw []byte) string {
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner)
	}
	if s, err := strconv.Unquote(string(raw)); err == nil {
		return s
	}
	return string(inner)
}
