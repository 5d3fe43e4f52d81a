package opa

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/open-policy-agent/opa/v1/metrics"
	"github.com/open-policy-agent/opa/v1/plugins"
	"github.com/open-policy-agent/opa/v1/plugins/logs"
	"github.com/open-policy-agent/opa/v1/runtime"
	"github.com/open-policy-agent/opa/v1/util"
)

// The count plugin runs inside the OPA whose decisions are logged (the server authzbench starts,
// or the SDK's), named as decision_logs.plugin beside the service, so that OPA hands it every
// event it logs, after its drop policy and before its buffer: Logged is then what OPA logged,
// the total every decision of the run is accounted against. It is a counter and nothing more
// on the measured path (one atomic add a decision, which the overhead figures include).
//
// At OPA's stop it runs after OPA's decision logger (OPA stops its plugins in the order they
// were registered, the decision logger before any plugin of its own configuration), so OPA's
// own final flush is over: it reports OPA's counters and buffer to authzbench's log service,
// which from then on accepts every upload, drains OPA's buffer by triggering uploads, and
// reports again.

// countPluginName is the count plugin's name in OPA's configuration.
const countPluginName = "authzbench_decision_log_count"

func init() { runtime.RegisterPlugin(countPluginName, countFactory{}) }

type countConfig struct {
	// Control is the log service's control URL, where the plugin reports.
	Control string `json:"control"`
	// DrainMS is how long the drain after OPA's final flush may take.
	DrainMS int `json:"drain_ms"`
}

type countFactory struct{}

func (countFactory) Validate(_ *plugins.Manager, config []byte) (any, error) {
	c := countConfig{DrainMS: 1500}
	if err := util.Unmarshal(config, &c); err != nil {
		return nil, fmt.Errorf("plugin %s: %w", countPluginName, err)
	}
	if c.Control == "" {
		return nil, fmt.Errorf("plugin %s: control: the log service's control URL is required", countPluginName)
	}
	return &c, nil
}

// New finds OPA's decision log counters: the runtime's metrics, which its decision logger was
// given; OPA's SDK gives its decision logger none, so that it counts no drop at all, and the
// plugin gives it a set of its own (the decision logger is made before any plugin of the
// configuration, and started after all of them are made).
func (countFactory) New(m *plugins.Manager, config any) plugins.Plugin {
	p := &countPlugin{manager: m, cfg: config.(*countConfig)}
	if mm, ok := m.PrometheusRegister().(metrics.Metrics); ok && mm != nil {
		p.metrics = mm
	} else if lp := logs.Lookup(m); lp != nil {
		p.metrics = metrics.New()
		lp.WithMetrics(p.metrics)
	}
	m.UpdatePluginStatus(countPluginName, &plugins.Status{State: plugins.StateNotReady})
	return p
}

type countPlugin struct {
	manager *plugins.Manager
	cfg     *countConfig
	metrics metrics.Metrics
	logged  atomic.Int64
}

// Log counts an event OPA logged (logs.Logger).
func (p *countPlugin) Log(context.Context, logs.EventV1) error {
	p.logged.Add(1)
	return nil
}

func (p *countPlugin) Start(context.Context) error {
	p.manager.UpdatePluginStatus(countPluginName, &plugins.Status{State: plugins.StateOK})
	return nil
}

func (p *countPlugin) Reconfigure(_ context.Context, config any) { p.cfg = config.(*countConfig) }

// Stop reports, drains and reports again. Its own deadline, not OPA's: OPA's shutdown context
// may be spent by a final flush that retried to its end.
func (p *countPlugin) Stop(context.Context) {
	lp := logs.Lookup(p.manager)
	p.post("/flushed", p.report(lp))
	if lp != nil && lp.Config().Service != "" {
		deadline := time.Now().Add(time.Duration(p.cfg.DrainMS) * time.Millisecond)
		// Triggered even when the buffer looks empty: an upload OPA abandoned at the end of its
		// flush may still be putting its chunk back, and a trigger waits for it (OPA uploads one
		// at a time).
		for time.Now().Before(deadline) {
			ctx, cancel := context.WithDeadline(context.Background(), deadline)
			err := lp.Trigger(ctx)
			cancel()
			if _, size := lp.BufferSize(); err == nil && size == 0 {
				break
			}
			if err != nil {
				time.Sleep(50 * time.Millisecond)
			}
		}
	}
	rep := p.report(lp)
	if rep.Buffer > 0 {
		rep.Error = fmt.Sprintf("the drain after OPA's final flush left %d (%s buffer) in OPA's buffer", rep.Buffer, rep.BufferType)
	}
	p.post("/drained", rep)
	p.manager.UpdatePluginStatus(countPluginName, &plugins.Status{State: plugins.StateNotReady})
}

func (p *countPlugin) report(lp *logs.Plugin) countReport {
	rep := countReport{Logged: p.logged.Load(), Counters: map[string]int64{}}
	if p.metrics != nil {
		for _, name := range opaCounters {
			if v, ok := p.metrics.Counter(name).Value().(uint64); ok && v > 0 {
				rep.Counters[name] = int64(v)
			}
		}
	}
	if lp != nil {
		rep.Console = lp.Config().ConsoleLogs
		rep.BufferType, rep.Buffer = lp.BufferSize()
	}
	return rep
}

// post sends a report to the log service; a report lost leaves the account incomplete, which
// the run says.
func (p *countPlugin) post(path string, rep countReport) {
	body, err := json.Marshal(rep)
	if err != nil {
		return
	}
	client := http.Client{Timeout: 2 * time.Second}
	resp, err := client.Post(p.cfg.Control+path, "application/json", bytes.NewReader(body))
	if err != nil {
		p.manager.Logger().Error("%s: report to %s: %v", countPluginName, p.cfg.Control, err)
		return
	}
	resp.Body.Close()
}
