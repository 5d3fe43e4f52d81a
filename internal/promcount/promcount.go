// Package promcount reads counters from an engine's own Prometheus metrics: a server's
// /metrics text, or a registry in this process. authzbench reads an engine's cache lookups and
// hits there, as each repetition's measured phase begins and after it, for the hit ratio a run
// reports beside its latency. It sums a counter over its label sets (OpenFGA labels its
// iterator cache's counters by operation and method) and knows no engine: each names its own.
//
// It is not a Prometheus client: it reads plain counters in the text format, no histograms.
package promcount

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// A Match picks the counters to sum: a name, or, with a trailing *, every name with that prefix
// and the suffix after the star ("spicedb_dispatch*_check_total").
type Match string

func (m Match) matches(name string) bool {
	pattern := string(m)
	prefix, suffix, star := strings.Cut(pattern, "*")
	if !star {
		return name == pattern
	}
	return len(name) >= len(prefix)+len(suffix) && strings.HasPrefix(name, prefix) && strings.HasSuffix(name, suffix)
}

// Scrape reads the counters the matches pick from the metrics text at url (http://host:port/metrics),
// each match's samples summed; a match no sample met is absent from the map.
func Scrape(ctx context.Context, url string, matches ...Match) (map[Match]float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("read metrics at %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("read metrics at %s: %s", url, resp.Status)
	}
	return Parse(resp.Body, matches...)
}

// Parse reads Prometheus's text format, summing the samples of the counters the matches pick.
func Parse(r io.Reader, matches ...Match) (map[Match]float64, error) {
	out := map[Match]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		name, rest := line, ""
		if i := strings.IndexAny(line, "{ "); i >= 0 {
			name, rest = line[:i], line[i:]
		}
		if strings.HasPrefix(rest, "{") {
			end := strings.LastIndex(rest, "}")
			if end < 0 {
				continue
			}
			rest = rest[end+1:]
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			continue
		}
		for _, m := range matches {
			if !m.matches(name) {
				continue
			}
			v, err := strconv.ParseFloat(fields[0], 64)
			if err != nil {
				return nil, fmt.Errorf("metric %s: value %q: %w", name, fields[0], err)
			}
			out[m] += v
		}
	}
	return out, sc.Err()
}

// Gather reads the counters the matches pick from g, a registry in this process (OpenFGA in
// process registers its own in Prometheus's default one).
func Gather(g prometheus.Gatherer, matches ...Match) (map[Match]float64, error) {
	families, err := g.Gather()
	if err != nil {
		return nil, err
	}
	out := map[Match]float64{}
	for _, f := range families {
		for _, m := range matches {
			if !m.matches(f.GetName()) {
				continue
			}
			for _, metric := range f.GetMetric() {
				if c := metric.GetCounter(); c != nil {
					out[m] += c.GetValue()
				}
			}
		}
	}
	return out, nil
}
