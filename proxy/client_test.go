package proxy

import (
	"errors"
	"strings"
	"testing"

	"github.com/cloudwego/netpoll"
)

func TestLongestLine(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want int
	}{
		{"", 0},
		{"\r\n", 0},
		{"Host: x\r\n\r\n", 7},
		{"A: 1\r\nLonger: 12345\r\n\r\n", 13},
		{"A: 1\nB: 22\n", 5},                      // bare LF
		{"X: " + strings.Repeat("a", 9000), 9003}, // no end of line
	} {
		if got := longestLine([]byte(tc.raw)); got != tc.want {
			t.Errorf("longestLine(%.20q) = %d, want %d", tc.raw, got, tc.want)
		}
	}
}

func TestBodyReadFailed(t *testing.T) {
	if got := bodyReadFailed(netpoll.Exception(netpoll.ErrReadTimeout, "x")); got != errBodyTimeout {
		t.Errorf("a read timeout gives %v, want 408", got)
	}
	if got := bodyReadFailed(errors.New("reset")); got.status != 400 || got.code != "incomplete_body" {
		t.Errorf("another error gives %v, want 400 incomplete_body", got)
	}
}
