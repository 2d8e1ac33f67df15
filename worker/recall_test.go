package worker

import (
	"net/http"
	"testing"

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
	g := &gateway{region: region}
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
			region.Remember(storedKey(id), holderHash("http://gone"))
		case tc.holder != nil:
			g.remember(id, tc.holder)
		}
		x := &exchange{candidates: []*backendRoute{bs[1], bs[2]}} // a is out of rotation
		g.holderFirst(id, x, m.lists)
		if x.candidates[0] != tc.first || x.holderDown != tc.holderDown {
			t.Errorf("holder %v: first %s, holderDown %d; want %s, %d", tc.holder, x.candidates[0].url, x.holderDown, tc.first.url, tc.holderDown)
		}
	}
}
