package proxy

import (
	"net/http"
	"testing"

	"github.com/sluice-gw/sluice/proxy/reqscan"
	"github.com/sluice-gw/sluice/shm"
)

// holderFirst puts the remembered holder first; a holder that is
// configured but out of rotation (not a candidate) marks the request so
// that the others' 404 is not its answer.
func TestHolderFirst(t *testing.T) {
	region, err := shm.Create(8, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer region.Close()
	g := &Gateway{region: region}
	var bs [3]*backendRoute
	for i, u := range []string{"http://a", "http://b", "http://c"} {
		bs[i] = &backendRoute{url: u, urlHash: holderHash(u)}
	}
	m := &modelRoute{backends: bs[:]}
	for _, tc := range []struct {
		holder     *backendRoute // nil: an id the map does not know
		elsewhere  bool          // remembered on a server no longer configured
		first      *backendRoute
		holderDown int
	}{
		{holder: bs[2], first: bs[2]},
		{holder: bs[1], first: bs[1]},
		{holder: bs[0], first: bs[1], holderDown: http.StatusServiceUnavailable}, // out of rotation
		{holder: nil, first: bs[1]},
		{elsewhere: true, first: bs[1]},
	} {
		id := "resp_" + t.Name()
		region.Forget(storedKey(id))
		switch {
		case tc.elsewhere:
			region.Remember(storedKey(id), storedValue(holderHash("http://gone"), 0))
		case tc.holder != nil:
			g.remember(id, tc.holder, 0)
		}
		x := &exchange{place: placement{candidates: []*backendRoute{bs[1], bs[2]}}} // a is out of rotation
		g.holderFirst(id, x, m.lists)
		if x.place.candidates[0] != tc.first || x.place.holderDown != tc.holderDown {
			t.Errorf("holder %v: first %s, holderDown %d; want %s, %d", tc.holder, x.place.candidates[0].url, x.place.holderDown, tc.first.url, tc.holderDown)
		}
	}
}

// The shared map keeps a stored response's holder and its conversation's
// size, and only for answers the backend keeps (issue 30, items 4 and 8):
// a store:false response takes no entry, so that traffic nobody can follow
// up does not push other clients' ids out of the table.
func TestRememberStoredOnly(t *testing.T) {
	region, err := shm.Create(8, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer region.Close()
	g := &Gateway{region: region}
	b := &backendRoute{url: "http://a", urlHash: holderHash("http://a")}
	responses := apiSpec{stored: true}
	for _, tc := range []struct {
		api    apiSpec
		store  bool
		stores bool
	}{{responses, true, true}, {responses, false, false}, {apiSpec{}, true, false}} {
		x := &exchange{api: &tc.api, req: admitted{scan: reqscan.Request{Store: tc.store}}}
		if x.stores() != tc.stores {
			t.Errorf("stored API %v, store %v: stores() %v", tc.api.stored, tc.store, x.stores())
		}
	}
	for _, tokens := range []int64{0, 1, 123_456, maxStored, maxStored + 1, -5} {
		g.remember("resp_1", b, tokens)
		h, got, ok := g.recalled("resp_1")
		if want := min(max(tokens, 0), maxStored); !ok || h != b.urlHash || got != want {
			t.Errorf("remembered %d tokens: holder %x (want %x) tokens %d (want %d) ok %v", tokens, h, b.urlHash, got, want, ok)
		}
	}
}
