package hotreload

import "github.com/sluice-gw/sluice/shm"

// Retired tracks the cells of names a reload removed. A removed name's cell
// is freed only when no worker may still run a request on a configuration
// generation that had it (each worker publishes the oldest generation it
// may still use as its mark in shm.GenerationCell) and nothing is held in
// it; until then it keeps counting, so nothing is lost if the name returns.
type Retired struct {
	last map[string]int64 // name → last generation that had it
}

// NewRetired returns an empty set.
func NewRetired() *Retired { return &Retired{last: map[string]int64{}} }

// Replace records a reload from the names of generation gen-1 to those of
// gen: names that went are retired, names that came back are not.
func (r *Retired) Replace(oldNames, newNames []string, gen int64) {
	keep := make(map[string]bool, len(newNames))
	for _, n := range newNames {
		keep[n] = true
		delete(r.last, n)
	}
	for _, n := range oldNames {
		if !keep[n] {
			r.last[n] = gen - 1
		}
	}
}

// Len is the number of retired names not freed yet.
func (r *Retired) Len() int { return len(r.last) }

// Names are the retired names not freed yet.
func (r *Retired) Names() []string {
	out := make([]string, 0, len(r.last))
	for n := range r.last {
		out = append(out, n)
	}
	return out
}

// Sweep frees the retired cells nothing can reach any more and returns how
// many it freed; freeing, when not nil, sees each cell just before it is
// freed (what a quota's cell held outlives it).
func (r *Retired) Sweep(region *shm.Region, freeing func(name string, c *shm.Cell)) int {
	oldestInUse, _ := region.Lookup(shm.GenerationCell).MinMark()
	freed := 0
	for name, last := range r.last {
		c := region.Lookup(name)
		if c == nil {
			delete(r.last, name)
			continue
		}
		if oldestInUse > last && c.Idle() {
			if freeing != nil {
				freeing(name, c)
			}
			region.Free(name)
			delete(r.last, name)
			freed++
		}
	}
	return freed
}
