package reqscan

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// DecodeString decodes the contents of a JSON string literal (what lies
// between its quotes) as Python's json module decodes them, for the
// values the gateway routes on and the strings it logs. exact is false
// when Go cannot hold what Python reads: the contents hold an unpaired
// surrogate escape (Python keeps the code point; here it becomes U+FFFD),
// bytes that are not UTF-8 (vLLM refuses the body; they are kept as they
// are), or a malformed escape (which the scanner never lets through;
// U+FFFD). Safe on any bytes.
func DecodeString(s string) (v string, exact bool) {
	if strings.IndexByte(s, '\\') < 0 {
		return s, utf8.ValidString(s)
	}
	out := make([]byte, 0, len(s))
	exact = true
	for i := 0; i < len(s); {
		if s[i] != '\\' {
			out = append(out, s[i])
			i++
			continue
		}
		r, n, ok := unescape(s[i:])
		out = utf8.AppendRune(out, r)
		exact = exact && ok
		i += n
	}
	return string(out), exact && utf8.Valid(out)
}

// unescape decodes the escape at the start of s (a backslash): its
// character, its length in s, and whether it was well formed and not an
// unpaired surrogate (else the character is U+FFFD).
func unescape(s string) (r rune, n int, ok bool) {
	if len(s) < 2 {
		return utf8.RuneError, len(s), false
	}
	switch s[1] {
	case '"', '\\', '/':
		return rune(s[1]), 2, true
	case 'b':
		return '\b', 2, true
	case 'f':
		return '\f', 2, true
	case 'n':
		return '\n', 2, true
	case 'r':
		return '\r', 2, true
	case 't':
		return '\t', 2, true
	case 'u':
		r, ok := hex4(s, 2)
		switch {
		case !ok:
			return utf8.RuneError, 2, false
		case !utf16.IsSurrogate(r):
			return r, 6, true
		}
		// A high surrogate pairs with a following \uDC00-\uDFFF.
		if len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
			if r2, ok := hex4(s, 8); ok {
				if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
					return d, 12, true
				}
			}
		}
		return utf8.RuneError, 6, false
	}
	return utf8.RuneError, 2, false
}

// hex4 reads four hex digits at s[i:].
func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[i : i+4]) {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
