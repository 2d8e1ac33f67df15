package shm

import (
	"testing"
	"unsafe"
)

// The end-user table lies behind the extension header, on a cache line,
// sized as Size says; its seed is random; a region opened again (a worker,
// an upgrade) finds the same table, seed and epoch.
func TestEndUserTableLayout(t *testing.T) {
	r, err := CreateWith(16, 4, Tables{Recall: 64, Prefix: 64, EndUsers: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.EndUserCapacity() != 104 {
		t.Fatalf("capacity %d, want 100 rounded up to 104", r.EndUserCapacity())
	}
	if got, want := len(r.words)*8, Size(16, 4, Tables{Recall: 64, Prefix: 64, EndUsers: 100}); got != want {
		t.Fatalf("region of %d bytes, Size says %d", got, want)
	}
	b, ok := r.EndUserBucketOf(^uint64(0))
	if !ok || uintptr(unsafe.Pointer(b.Owner(0)))%64 != 0 || &b.w[len(b.w)-1] != &r.words[r.endUsers.base+endUserWords(104)-1] {
		t.Fatal("the highest owner hash is not in the last bucket, on a cache line")
	}
	if r.EndUserSeed() == ([16]byte{}) {
		t.Fatal("no seed")
	}
	r.BumpEndUserEpoch()
	o, err := Open(r.File())
	if err != nil {
		t.Fatal(err)
	}
	defer o.mem.Unmap() //nolint:errcheck
	if o.EndUserCapacity() != 104 || o.EndUserSeed() != r.EndUserSeed() || o.EndUserEpoch() != 1 {
		t.Fatalf("opened again: capacity %d, epoch %d", o.EndUserCapacity(), o.EndUserEpoch())
	}
	// A header that claims a larger table than the region holds is refused.
	r.words[r.ext+xEndUsers] = 1 << 20
	if _, err := Open(r.File()); err == nil {
		t.Fatal("Open of a region whose end-user table passes its end")
	}
}

// A version-5 region (inherited in an upgrade) has no extension header:
// no table, epoch 0, a bump ignored; Create refuses a table without one.
func TestEndUserTableAbsentInVersion5(t *testing.T) {
	_, o := oldRegion(t, layoutNoEndUsers, Tables{Recall: 64})
	if o.EndUserCapacity() != 0 || o.EndUserEpochWord() != nil {
		t.Fatal("a version-5 region has an end-user table")
	}
	o.BumpEndUserEpoch()
	if o.EndUserEpoch() != 0 {
		t.Fatal("an epoch in a region without one")
	}
	if _, ok := o.EndUserBucketOf(42); ok {
		t.Fatal("a bucket in a region without a table")
	}
	if _, err := createLayout(8, 2, Tables{EndUsers: 8}, 0, 0, 0, false); err == nil {
		t.Fatal("a table without an extension header")
	}
}
