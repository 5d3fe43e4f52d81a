package openfga

import (
	"context"
	"fmt"
	"time"

	"github.com/openfga/openfga/pkg/server"
	serverconfig "github.com/openfga/openfga/pkg/server/config"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/promcount"
	"github.com/authzbench/authzbench/internal/result"
)

// OpenFGA's caches, as its run command's flags name them: the check query cache (sub-problems'
// answers), the iterator cache (datastore reads) and the cache controller (which drops both's
// entries older than the last write). All three are off by default in OpenFGA; a check served
// from them does less work, so a run says which were on and how often they hit.
const (
	CheckQueryCache    = "check_query_cache"
	CheckIteratorCache = "check_iterator_cache"
	CacheController    = "cache_controller"
)

func init() {
	for _, c := range []struct{ key, flag, what string }{
		{"openfga_check_query_cache", "openfga-check-query-cache", "OpenFGA's check query cache (answers of a check's sub-problems; --check-query-cache-enabled)"},
		{"openfga_check_iterator_cache", "openfga-check-iterator-cache", "OpenFGA's check iterator cache (its datastore reads; --check-iterator-cache-enabled)"},
		{"openfga_cache_controller", "openfga-cache-controller", "OpenFGA's cache controller (drops cached entries older than the store's last write; --cache-controller-enabled)"},
	} {
		kinds.DeclareOption(kinds.Option{Key: c.key, Flag: c.flag, Selective: true, Check: onOff,
			Help: "{kinds}: on or off: " + c.what + "; default: off, OpenFGA's own; recorded, with its hit ratio from OpenFGA's metrics"})
		kinds.DeclareOption(kinds.Option{Key: c.key + "_ttl", Flag: c.flag + "-ttl", Selective: true, Check: positiveDuration,
			Help: "{kinds}: with " + "--" + c.flag + " on, how long its entries live (a Go duration; default: OpenFGA's, 10s)"})
	}
}

// onOff checks an on/off option's value.
func onOff(name string, v any) error {
	if s, _ := v.(string); s != "on" && s != "off" {
		return fmt.Errorf("%s %q: want on or off", name, v)
	}
	return nil
}

// positiveDuration checks a TTL option's value.
func positiveDuration(name string, v any) error {
	s, _ := v.(string)
	if d, err := time.ParseDuration(s); err != nil || d <= 0 {
		return fmt.Errorf("%s %q: want a positive Go duration (10s, 1m)", name, s)
	}
	return nil
}

// CacheSettings are OpenFGA's caches as a target's options set them, embedded inline in its
// settings; "" leaves OpenFGA's default.
type CacheSettings struct {
	CheckQueryCache       string `yaml:"openfga_check_query_cache"`
	CheckQueryCacheTTL    string `yaml:"openfga_check_query_cache_ttl"`
	CheckIteratorCache    string `yaml:"openfga_check_iterator_cache"`
	CheckIteratorCacheTTL string `yaml:"openfga_check_iterator_cache_ttl"`
	CacheController       string `yaml:"openfga_cache_controller"`
	CacheControllerTTL    string `yaml:"openfga_cache_controller_ttl"`
}

// Chosen reports whether any cache setting was given.
func (c *CacheSettings) Chosen() bool { return *c != CacheSettings{} }

// cache is one of the caches, resolved: on or off and its TTL, OpenFGA's defaults filled in.
type cache struct {
	name      string
	key       string // the option's key
	on, set   bool
	ttl       time.Duration
	ttlSet    bool
	enabledAs string // OpenFGA's flag
	ttlAs     string
}

// resolved is the three caches with OpenFGA's defaults where the settings say nothing.
func (c *CacheSettings) resolved() []cache {
	def := serverconfig.DefaultConfig()
	one := func(name, key, enabled, ttl string, defOn bool, defTTL time.Duration, enabledAs, ttlAs string) cache {
		x := cache{name: name, key: key, on: defOn, ttl: defTTL, enabledAs: enabledAs, ttlAs: ttlAs}
		if enabled != "" {
			x.on, x.set = enabled == "on", true
		}
		if d, err := time.ParseDuration(ttl); err == nil && ttl != "" {
			x.ttl, x.ttlSet = d, true
		}
		return x
	}
	return []cache{
		one(CheckQueryCache, "openfga_check_query_cache", c.CheckQueryCache, c.CheckQueryCacheTTL, def.CheckQueryCache.Enabled, def.CheckQueryCache.TTL,
			"--check-query-cache-enabled", "--check-query-cache-ttl"),
		one(CheckIteratorCache, "openfga_check_iterator_cache", c.CheckIteratorCache, c.CheckIteratorCacheTTL, def.CheckIteratorCache.Enabled, def.CheckIteratorCache.TTL,
			"--check-iterator-cache-enabled", "--check-iterator-cache-ttl"),
		one(CacheController, "openfga_cache_controller", c.CacheController, c.CacheControllerTTL, def.CacheController.Enabled, def.CacheController.TTL,
			"--cache-controller-enabled", "--cache-controller-ttl"),
	}
}

// checkTTL is the longest TTL of the check caches that are on, which a MINIMIZE_LATENCY check
// may answer from; 0 when both are off.
func (c *CacheSettings) checkTTL() time.Duration {
	var longest time.Duration
	for _, x := range c.resolved() {
		if x.on && (x.name == CheckQueryCache || x.name == CheckIteratorCache) {
			longest = max(longest, x.ttl)
		}
	}
	return longest
}

// Check refuses a value that is not on or off or not a positive duration (a scenario file's,
// which no flag check saw), and a TTL for a cache the run leaves off: it would be ignored.
func (c *CacheSettings) Check() []error {
	var errs []error
	for _, x := range c.resolved() {
		key := x.key
		if v := c.value(key); v != "" {
			if err := onOff("", v); err != nil {
				errs = append(errs, kinds.NewOptionError(key, func(n func(string) string) string { return fmt.Sprintf("%s %q: want on or off", n(key), v) }))
			}
		}
		ttlKey := key + "_ttl"
		if v := c.value(ttlKey); v != "" {
			if d, err := time.ParseDuration(v); err != nil || d <= 0 {
				errs = append(errs, kinds.NewOptionError(ttlKey, func(n func(string) string) string {
					return fmt.Sprintf("%s %q: want a positive Go duration (10s, 1m)", n(ttlKey), v)
				}))
			} else if !x.on {
				errs = append(errs, kinds.NewOptionError(ttlKey, func(n func(string) string) string {
					return fmt.Sprintf("%s sets how long the entries of a cache the run leaves off live: give %s on too", n(ttlKey), n(key))
				}))
			}
		}
	}
	return errs
}

func (c *CacheSettings) value(key string) string {
	return map[string]string{
		"openfga_check_query_cache": c.CheckQueryCache, "openfga_check_query_cache_ttl": c.CheckQueryCacheTTL,
		"openfga_check_iterator_cache": c.CheckIteratorCache, "openfga_check_iterator_cache_ttl": c.CheckIteratorCacheTTL,
		"openfga_cache_controller": c.CacheController, "openfga_cache_controller_ttl": c.CacheControllerTTL,
	}[key]
}

// ServerOptions are the caches as pkg/server takes them, for OpenFGA in process.
func (c *CacheSettings) ServerOptions() []server.OpenFGAServiceV1Option {
	x := c.resolved()
	return []server.OpenFGAServiceV1Option{
		server.WithCheckQueryCacheEnabled(x[0].on), server.WithCheckQueryCacheTTL(x[0].ttl),
		server.WithCheckIteratorCacheEnabled(x[1].on), server.WithCheckIteratorCacheTTL(x[1].ttl),
		server.WithCacheControllerEnabled(x[2].on), server.WithCacheControllerTTL(x[2].ttl),
	}
}

// Args are the caches as OpenFGA's run takes them (authzbench openfga run's and OpenFGA's own
// binary's flags alike): only what was set, so a server left alone keeps its defaults.
func (c *CacheSettings) Args() []string {
	var args []string
	for _, x := range c.resolved() {
		if x.set {
			args = append(args, fmt.Sprintf("%s=%t", x.enabledAs, x.on))
		}
		if x.ttlSet {
			args = append(args, x.ttlAs+"="+x.ttl.String())
		}
	}
	return args
}

// Record is the caches as the result records them.
func (c *CacheSettings) Record() []result.Cache {
	var out []result.Cache
	for _, x := range c.resolved() {
		rc := result.Cache{Name: x.name, On: x.on, Set: x.set || x.ttlSet}
		if x.on {
			rc.TTLS = x.ttl.Seconds()
		}
		out = append(out, rc)
	}
	return out
}

// cacheCounters are OpenFGA's counters of each cache's lookups and hits (its
// internal/check/metrics, storagewrappers and cachecontroller packages register them).
var cacheCounters = map[string][2]promcount.Match{
	CheckQueryCache:    {"openfga_check_cache_total_count", "openfga_check_cache_hit_count"},
	CheckIteratorCache: {"openfga_tuples_cache_total_count", "openfga_tuples_cache_hit_count"},
	CacheController:    {"openfga_cachecontroller_cache_total_count", "openfga_cachecontroller_cache_hit_count"},
}

// countsOf reads the caches' counters with read; a cache whose lookups counter is absent
// (OpenFGA registers some only once the cache is built) counts as none yet.
func countsOf(read func(...promcount.Match) (map[promcount.Match]float64, error)) (map[string]result.CacheCount, error) {
	var all []promcount.Match
	for _, m := range cacheCounters {
		all = append(all, m[0], m[1])
	}
	got, err := read(all...)
	if err != nil {
		return nil, err
	}
	out := map[string]result.CacheCount{}
	for name, m := range cacheCounters {
		out[name] = result.CacheCount{Lookups: got[m[0]], Hits: got[m[1]], Metrics: string(m[0]) + ", " + string(m[1])}
	}
	return out, nil
}

// inProcessCounts reads the counters OpenFGA in this process keeps in Prometheus's default
// registry. They are the process's: a repetition's growth is its own while targets take turns.
func inProcessCounts(context.Context) (map[string]result.CacheCount, error) {
	return countsOf(func(m ...promcount.Match) (map[promcount.Match]float64, error) {
		return promcount.Gather(prometheus.DefaultGatherer, m...)
	})
}

// servedCounts reads them from a server's metrics endpoint.
func servedCounts(ctx context.Context, metricsURL string) (map[string]result.CacheCount, error) {
	return countsOf(func(m ...promcount.Match) (map[promcount.Match]float64, error) {
		return promcount.Scrape(ctx, metricsURL, m...)
	})
}
