package proxy

import "testing"

// A group's salt is fixed by its name (the same on every replica and
// after restarts), 43 characters of base64url, and differs between groups;
// a client's own salt narrows its group's, never lands on another group's
// or on its group's own.
func TestCacheSalts(t *testing.T) {
	a, b := groupSalt("team-a"), groupSalt("team-b")
	if a != groupSalt("team-a") || a == b || len(a) != 43 {
		t.Fatalf("group salts %q, %q", a, b)
	}
	if requestSalt(a, "") != a {
		t.Error("without a client salt, the group's goes")
	}
	mine := requestSalt(a, "user-1")
	if mine == a || mine == b || mine == requestSalt(b, "user-1") || mine != requestSalt(a, "user-1") || len(mine) != 43 {
		t.Errorf("client salt mixed: %q", mine)
	}
	if requestSalt(a, b) == b {
		t.Error("a client sending another group's salt got it")
	}
	if saltSeed(a) == saltSeed(b) {
		t.Error("two groups seed placement alike")
	}
}
