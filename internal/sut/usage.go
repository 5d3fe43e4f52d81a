package sut

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// clockTicks is USER_HZ, the unit of CPU times in /proc: 100 on every mainstream Linux.
const clockTicks = 100

// Sample is one reading of a process tree.
type Sample struct {
	At       time.Time
	CPUTicks uint64 // user + system, of the process and its descendants alive now
	RSS      uint64 // bytes, summed over the tree
}

// Sampler reads the CPU time and resident memory of a process and its descendants at a fixed
// interval, from /proc, until stopped.
type Sampler struct {
	pid     int
	mu      sync.Mutex
	samples []Sample
	stop    chan struct{}
	done    chan struct{}
}

// StartSampler samples the tree under pid every interval.
func StartSampler(pid int, interval time.Duration) *Sampler {
	s := &Sampler{pid: pid, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		s.take()
		for {
			select {
			case <-t.C:
				s.take()
			case <-s.stop:
				s.take()
				return
			}
		}
	}()
	return s
}

func (s *Sampler) take() {
	sample, ok := readTree(s.pid)
	if !ok {
		return
	}
	s.mu.Lock()
	s.samples = append(s.samples, sample)
	s.mu.Unlock()
}

// Stop ends sampling and returns the samples taken.
func (s *Sampler) Stop() []Sample {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.samples
}

// Resources summarises what a process tree used between from and to.
type Resources struct {
	CPUCoresMean float64 `json:"cpu_cores_mean"`
	CPUCoresMax  float64 `json:"cpu_cores_max"` // over one sampling interval
	RSSMaxMB     float64 `json:"rss_max_mb"`
	Samples      int     `json:"samples"`
}

// Summarise reads the samples taken between from and to.
func Summarise(samples []Sample, from, to time.Time) (Resources, bool) {
	// The samples inside the window, bracketed by the last one before it and the first after,
	// so a window shorter than the sampling interval still gets a reading.
	var in []Sample
	for i, s := range samples {
		before := s.At.Before(from) && i+1 < len(samples) && !samples[i+1].At.Before(from)
		after := s.At.After(to) && i > 0 && !samples[i-1].At.After(to)
		if before || after || (!s.At.Before(from) && !s.At.After(to)) {
			in = append(in, s)
		}
	}
	if len(in) < 2 {
		return Resources{}, false
	}
	r := Resources{Samples: len(in)}
	cores := func(a, b Sample) float64 {
		wall := b.At.Sub(a.At).Seconds()
		if wall <= 0 || b.CPUTicks < a.CPUTicks {
			return 0
		}
		return float64(b.CPUTicks-a.CPUTicks) / clockTicks / wall
	}
	r.CPUCoresMean = cores(in[0], in[len(in)-1])
	for i, s := range in {
		r.RSSMaxMB = max(r.RSSMaxMB, float64(s.RSS)/(1<<20))
		if i > 0 {
			r.CPUCoresMax = max(r.CPUCoresMax, cores(in[i-1], s))
		}
	}
	return r, true
}

// readTree sums CPU ticks and RSS over pid and every process descended from it.
func readTree(pid int) (Sample, bool) {
	now := time.Now()
	children := map[int][]int{}
	stats := map[int][2]uint64{}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return Sample{}, false
	}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		ppid, ticks, rss, ok := readStat(p)
		if !ok {
			continue
		}
		children[ppid] = append(children[ppid], p)
		stats[p] = [2]uint64{ticks, rss}
	}
	if _, ok := stats[pid]; !ok {
		return Sample{}, false
	}
	s := Sample{At: now}
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		s.CPUTicks += stats[p][0]
		s.RSS += stats[p][1]
		queue = append(queue, children[p]...)
	}
	return s, true
}

// readStat reads the parent, CPU ticks (utime + stime) and resident bytes of a process.
func readStat(pid int) (ppid int, ticks, rss uint64, ok bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, 0, 0, false
	}
	// The command name may hold spaces and parentheses: fields start after the last ')'.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, 0, 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state): ppid is field 4, utime 14, stime 15, rss (pages) 24.
	if len(f) < 22 {
		return 0, 0, 0, false
	}
	ppid, _ = strconv.Atoi(f[1])
	utime, _ := strconv.ParseUint(f[11], 10, 64)
	stime, _ := strconv.ParseUint(f[12], 10, 64)
	pages, _ := strconv.ParseUint(f[21], 10, 64)
	return ppid, utime + stime, pages * uint64(os.Getpagesize()), true
}
