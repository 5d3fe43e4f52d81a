package result

import (
	"fmt"
	"strconv"
	"strings"
)

// Cache is one cache of an engine, as a run had it, and what the engine counted of it. An
// engine that answers from a cache does less work per check than one that does not: two
// engines compared with different caches are compared partly on their caches.
type Cache struct {
	// Name is the cache in the engine's words: OpenFGA's check_query_cache,
	// check_iterator_cache and cache_controller, SpiceDB's dispatch_cache.
	Name string `json:"name"`
	On   bool   `json:"on"`
	// TTLS is how long an entry lives, seconds, where the engine bounds it so; 0 otherwise.
	TTLS float64 `json:"ttl_s,omitempty"`
	// Set: a flag chose it; false: the engine's own default.
	Set bool `json:"set,omitempty"`
	// Why says what fixes it where no setting can (spicedb/inproc's checker has no cache).
	Why string `json:"why,omitempty"`
	// Counted: Lookups and Hits were read from the engine's own metrics (Metrics names them),
	// as each repetition's measured phase began and after it, and summed over the run.
	Counted bool    `json:"counted,omitempty"`
	Metrics string  `json:"metrics,omitempty"`
	Lookups float64 `json:"lookups,omitempty"`
	Hits    float64 `json:"hits,omitempty"`
}

// HitRatio is hits over lookups, and whether there were any lookups to divide by.
func (c Cache) HitRatio() (float64, bool) {
	if !c.Counted || c.Lookups <= 0 {
		return 0, false
	}
	return c.Hits / c.Lookups, true
}

// CacheCount is a cache's lookups and hits as an engine's counters read at one moment.
type CacheCount struct {
	Lookups, Hits float64
	Metrics       string // the counters read
}

// AddCounts adds to each cache what its counters grew by between before and after.
func AddCounts(caches []Cache, before, after map[string]CacheCount) {
	for i := range caches {
		a, ok := after[caches[i].Name]
		if !ok {
			continue
		}
		b := before[caches[i].Name]
		caches[i].Counted, caches[i].Metrics = true, a.Metrics
		caches[i].Lookups += max(a.Lookups-b.Lookups, 0)
		caches[i].Hits += max(a.Hits-b.Hits, 0)
	}
}

// DescribeCaches says what was on, in a note's words: "check_query_cache on (ttl 10s): 93.1 %
// of 12,000 lookups hit; check_iterator_cache off (OpenFGA's default)".
func DescribeCaches(caches []Cache) string {
	parts := make([]string, len(caches))
	for i, c := range caches {
		p := c.Name + " off"
		if c.On {
			p = c.Name + " on"
			if c.TTLS > 0 {
				p += " (ttl " + strconv.FormatFloat(c.TTLS, 'g', -1, 64) + "s)"
			}
		}
		switch {
		case c.Why != "":
			p += " (" + c.Why + ")"
		case !c.Set:
			p += " (the engine's default)"
		}
		if r, ok := c.HitRatio(); ok {
			p += fmt.Sprintf(": %.1f %% of %.0f lookups hit", 100*r, c.Lookups)
		} else if c.Counted && c.On {
			p += ": no lookups counted"
		}
		parts[i] = p
	}
	return strings.Join(parts, "; ")
}

// CachesOn is the caches on, by name ("" for none): what two runs compared must share for the
// comparison to be of the engines alone.
func CachesOn(caches []Cache) string {
	var on []string
	for _, c := range caches {
		if c.On {
			on = append(on, c.Name)
		}
	}
	return strings.Join(on, ", ")
}
