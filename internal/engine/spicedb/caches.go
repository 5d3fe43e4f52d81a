package spicedb

import (
	"context"
	"fmt"

	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/promcount"
	"github.com/authzbench/authzbench/internal/result"
)

// DispatchCache is SpiceDB's dispatch cache, by the name the result records: the answers of the
// sub-problems a check dispatches, on by default in SpiceDB's serve. A check it answers needs
// no datastore read, so a run says whether it was on and how often it hit.
const DispatchCache = "dispatch_cache"

func init() {
	kinds.DeclareOption(kinds.Option{Key: "spicedb_dispatch_cache", Flag: "spicedb-dispatch-cache", Selective: true,
		Check: func(name string, v any) error {
			if s, _ := v.(string); s != "on" && s != "off" {
				return fmt.Errorf("%s %q: want on or off", name, v)
			}
			return nil
		},
		Help: "{kinds}: on or off: SpiceDB's dispatch cache (--dispatch-cache-enabled); default: on, SpiceDB's own; recorded, with its hit ratio from SpiceDB's metrics (spicedb/inproc has none)"})
}

// dispatchCacheRecord is the dispatch cache as the result records it: setting is the option's
// value ("" for SpiceDB's default, on).
func dispatchCacheRecord(setting string) []result.Cache {
	return []result.Cache{{Name: DispatchCache, On: setting != "off", Set: setting != ""}}
}

// checkDispatchCache refuses a value that is not on or off (a scenario file's, which no flag
// check saw), and a setting for a running server, which has its own.
func (c *SpiceDBServerConfig) checkDispatchCache() []error {
	v := c.DispatchCache
	switch {
	case v == "":
		return nil
	case v != "on" && v != "off":
		return []error{kinds.NewOptionError("spicedb_dispatch_cache", func(n func(string) string) string {
			return fmt.Sprintf("%s %q: want on or off", n("spicedb_dispatch_cache"), v)
		})}
	case c.URL != "":
		return []error{kinds.NewOptionError("spicedb_dispatch_cache", func(n func(string) string) string {
			return fmt.Sprintf("%s sets the dispatch cache of the SpiceDB authzbench starts; the running one %s names has its own settings", n("spicedb_dispatch_cache"), n("url"))
		})}
	}
	return nil
}

// dispatchCounters are SpiceDB's counters of the check dispatches and those its dispatch cache
// answered: spicedb_dispatch_client_check_total and ..._check_from_cache_total for the local
// dispatcher (its cluster's are spicedb_dispatch_*, off here), so matched by prefix.
var dispatchCounters = [2]promcount.Match{"spicedb_dispatch*_check_total", "spicedb_dispatch*_check_from_cache_total"}

// servedCounts reads the dispatch cache's counters from a server's metrics. Its lookups are
// dispatches, the sub-problems of checks, not the checks themselves.
func servedCounts(ctx context.Context, metricsURL string) (map[string]result.CacheCount, error) {
	got, err := promcount.Scrape(ctx, metricsURL, dispatchCounters[0], dispatchCounters[1])
	if err != nil {
		return nil, err
	}
	if _, ok := got[dispatchCounters[0]]; !ok {
		return nil, nil // a binary without them: uncounted, not zero
	}
	return map[string]result.CacheCount{DispatchCache: {Lookups: got[dispatchCounters[0]], Hits: got[dispatchCounters[1]],
		Metrics: string(dispatchCounters[0]) + ", " + string(dispatchCounters[1])}}, nil
}
