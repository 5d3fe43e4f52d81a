package opa

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/plugins"
	"github.com/open-policy-agent/opa/v1/plugins/logs"

	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/result"
)

// DecisionLogConfig is OPA's decision logging as a target runs it (opa/server, opa/extauthz,
// opa/sdk): off by default, as every figure before it was taken. Its settings are OPA's own
// decision_logs settings, passed through as given and checked by OPA's own parser before any
// load, and the behaviour of the log service inside authzbench that receives the uploads.
type DecisionLogConfig struct {
	// DecisionLogs is where OPA logs decisions: console (OPA's console logger) or service (the
	// log service inside authzbench); empty for none.
	DecisionLogs string `yaml:"decision_logs"`
	// Reporting are OPA's decision_logs.reporting settings as KEY=VALUE, by OPA's own keys
	// (buffer_type=event, buffer_size_limit_events=1000, max_decisions_per_second=100,
	// upload_size_limit_bytes, min_delay_seconds, max_delay_seconds, buffer_size_limit_bytes),
	// passed through to OPA.
	Reporting []string `yaml:"decision_log_reporting"`
	// Mask is OPA's mask_decision, the path of the masking policy.
	Mask string `yaml:"decision_log_mask"`
	// Service is how the log service answers: healthy (default), slow, failing or down.
	Service string `yaml:"decision_log_service"`
	// Latency is a slow service's latency per upload ("200ms").
	Latency string `yaml:"decision_log_latency"`
	// ServiceAddr is where the log service listens, a loopback address; a free port by default.
	ServiceAddr string `yaml:"decision_log_service_addr"`
	// FlushTimeout is the seconds OPA is given at its stop to upload what it holds (OPA's
	// --shutdown-grace-period); 2 by default, 3 at most, as authzbench stops a server it started
	// within 5 s.
	FlushTimeout int `yaml:"decision_log_flush_timeout"`
}

const (
	logsConsole = "console"
	logsService = "service"
	// logServiceName is the log service's name among OPA's services.
	logServiceName = "authzbench_decision_logs"
	// maxFlushTimeout leaves the drain after OPA's final flush time before authzbench's stop
	// kills the server (5 s).
	maxFlushTimeout = 3
)

func init() {
	type decl struct{ key, flag, help string }
	for _, d := range []decl{
		{"decision_logs", "decision-logs", "log every decision of {kinds}: console (OPA's console logger) or service (OPA uploads to a log service inside authzbench, which accounts for every decision); off by default"},
		{"decision_log_reporting", "decision-log-reporting", "OPA's decision_logs.reporting setting KEY=VALUE, by OPA's keys, repeatable: buffer_type=size|event, buffer_size_limit_bytes, buffer_size_limit_events, max_decisions_per_second, upload_size_limit_bytes, min_delay_seconds, max_delay_seconds"},
		{"decision_log_mask", "decision-log-mask", "OPA's decision log mask_decision: the path of the masking policy (/system/log/mask by default)"},
		{"decision_log_service", "decision-log-service", "how the log service inside authzbench answers OPA's uploads: healthy, slow (--decision-log-latency per upload), failing (HTTP 500) or down (nothing listening)"},
		{"decision_log_latency", "decision-log-latency", "a slow log service's latency per upload (200ms)"},
		{"decision_log_service_addr", "decision-log-service-addr", "where the log service inside authzbench listens, a loopback address (a free port by default)"},
		{"decision_log_flush_timeout", "decision-log-flush-timeout", "seconds OPA is given at its stop to upload what it holds (1 to 3; 2 by default)"},
	} {
		kinds.DeclareOption(kinds.Option{Key: d.key, Flag: d.flag, Help: d.help, Selective: true, HelpKinds: "decision_logs"})
	}
}

// on says whether decision logging is asked for.
func (c *DecisionLogConfig) on() bool { return c.DecisionLogs != "" }

// behaviour is the log service's behaviour, healthy by default.
func (c *DecisionLogConfig) behaviour() ServiceBehaviour {
	if c.Service == "" {
		return ServiceHealthy
	}
	return ServiceBehaviour(c.Service)
}

func (c *DecisionLogConfig) flushTimeout() int {
	if c.FlushTimeout == 0 {
		return 2
	}
	return c.FlushTimeout
}

// reportingKeys are the keys of OPA's decision_logs.reporting (plugins/logs ReportingConfig).
var reportingKeys = []string{"buffer_type", "buffer_size_limit_bytes", "buffer_size_limit_events", "upload_size_limit_bytes",
	"min_delay_seconds", "max_delay_seconds", "max_decisions_per_second", "trigger"}

// reporting reads the KEY=VALUE settings: a number as a JSON number, anything else as a string,
// for OPA's parser to take or refuse. A key OPA does not have is refused here: OPA would ignore
// it without a word.
func (c *DecisionLogConfig) reporting() (map[string]any, error) {
	out := map[string]any{}
	for _, kv := range c.Reporting {
		key, value, ok := strings.Cut(kv, "=")
		key = strings.TrimSpace(key)
		if !ok || key == "" {
			return nil, fmt.Errorf("%q: want KEY=VALUE, such as buffer_type=event", kv)
		}
		if !slices.Contains(reportingKeys, key) {
			return nil, fmt.Errorf("%q: OPA's decision_logs.reporting has no %s; it has %s", kv, key, strings.Join(reportingKeys, ", "))
		}
		var n json.Number
		if err := json.Unmarshal([]byte(value), &n); err == nil {
			out[key] = n
		} else {
			out[key] = value
		}
	}
	return out, nil
}

// opaSettings are OPA's decision_logs settings the user gave, by OPA's keys, for the result.
func (c *DecisionLogConfig) opaSettings() map[string]any {
	s := map[string]any{}
	if reporting, err := c.reporting(); err == nil && len(reporting) > 0 { // checked before
		s["reporting"] = reporting
	}
	if c.Mask != "" {
		s["mask_decision"] = c.Mask
	}
	return s
}

// decisionLogsSection is OPA's decision_logs configuration: the user's settings, the console or
// the service, and the count plugin beside them.
func (c *DecisionLogConfig) decisionLogsSection() map[string]any {
	s := c.opaSettings()
	if c.DecisionLogs == logsConsole {
		s["console"] = true
	} else {
		s["service"] = logServiceName
	}
	s["plugin"] = countPluginName
	return s
}

// Check refuses what OPA would refuse, with OPA's own parser, and what the log service cannot
// be, before anything starts.
func (c *DecisionLogConfig) Check() error {
	if !c.on() {
		if given := c.givenWithout(); given != "" {
			return kinds.NewOptionError(given, func(n func(string) string) string {
				return fmt.Sprintf("%s needs %s console or service", n(given), n("decision_logs"))
			})
		}
		return nil
	}
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, kinds.NewOptionError(key, func(n func(string) string) string {
			return n(key) + " " + fmt.Sprintf(format, args...)
		}))
	}
	if c.DecisionLogs != logsConsole && c.DecisionLogs != logsService {
		bad("decision_logs", "%q: want console or service", c.DecisionLogs)
		return errors.Join(errs...)
	}
	if c.Service != "" && !slices.Contains(ServiceBehaviours, ServiceBehaviour(c.Service)) {
		bad("decision_log_service", "%q: want healthy, slow, failing or down", c.Service)
	}
	if c.DecisionLogs == logsConsole {
		for _, key := range []string{"decision_log_service", "decision_log_latency", "decision_log_service_addr"} {
			if c.given(key) {
				bad(key, "configures the log service, which console logging has none of")
			}
		}
	}
	switch {
	case c.behaviour() == ServiceSlow && c.Latency == "":
		bad("decision_log_latency", "is needed by a slow log service")
	case c.Latency != "":
		if d, err := time.ParseDuration(c.Latency); err != nil || d <= 0 {
			bad("decision_log_latency", "%q: want a positive duration such as 200ms", c.Latency)
		} else if c.behaviour() != ServiceSlow {
			bad("decision_log_latency", "is a slow log service's (--decision-log-service slow)")
		}
	}
	if c.FlushTimeout < 0 || c.FlushTimeout > maxFlushTimeout {
		bad("decision_log_flush_timeout", "%d: want 1 to %d seconds", c.FlushTimeout, maxFlushTimeout)
	}
	if _, err := c.reporting(); err != nil {
		bad("decision_log_reporting", "%v", err)
		return errors.Join(errs...)
	}
	// OPA's own parser, as `opa run` reads the configuration: what it refuses is refused here,
	// in its words.
	section, err := json.Marshal(c.decisionLogsSection())
	if err == nil {
		trigger := plugins.DefaultTriggerMode
		_, err = logs.NewConfigBuilder().WithBytes(section).WithServices([]string{logServiceName}).
			WithPlugins([]string{countPluginName}).WithTriggerMode(&trigger).Parse()
	}
	if err != nil {
		bad("decision_logs", "settings refused by OPA: %v", err)
	}
	if c.DecisionLogs == logsService && c.ServiceAddr != "" {
		// Listened on and let go: an address taken or not loopback is bad input now, not a
		// run that fails at its start.
		ln, err := listenLoopback(c.ServiceAddr)
		if err != nil {
			bad("decision_log_service_addr", "%v", err)
		} else {
			ln.Close()
		}
	}
	return errors.Join(errs...)
}

// given says whether the setting key was given a value.
func (c *DecisionLogConfig) given(key string) bool {
	switch key {
	case "decision_log_service":
		return c.Service != ""
	case "decision_log_latency":
		return c.Latency != ""
	case "decision_log_service_addr":
		return c.ServiceAddr != ""
	}
	return false
}

// givenWithout is a decision log setting given without decision logs; empty when none is.
func (c *DecisionLogConfig) givenWithout() string {
	for key, given := range map[string]bool{"decision_log_reporting": len(c.Reporting) > 0, "decision_log_mask": c.Mask != "",
		"decision_log_service": c.Service != "", "decision_log_latency": c.Latency != "", "decision_log_service_addr": c.ServiceAddr != "",
		"decision_log_flush_timeout": c.FlushTimeout != 0} {
		if given {
			return key
		}
	}
	return ""
}

// decisionLogging is a run's decision logging under way: the log service and what OPA is
// configured with.
type decisionLogging struct {
	cfg *DecisionLogConfig
	svc *logService
	// done is the record, with its account, once OPA has stopped.
	done *result.DecisionLogs
}

// startDecisionLogging starts the log service for cfg; nil when decision logging is off.
func startDecisionLogging(cfg *DecisionLogConfig) (*decisionLogging, error) {
	if !cfg.on() {
		return nil, nil
	}
	latency, _ := time.ParseDuration(cfg.Latency) // checked
	addr := cfg.ServiceAddr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	svc, err := startLogService(addr, cfg.behaviour(), latency, cfg.DecisionLogs == logsService)
	if err != nil {
		return nil, kinds.NewOptionError("decision_log_service_addr", func(n func(string) string) string {
			return n("decision_log_service_addr") + ": " + err.Error()
		})
	}
	return &decisionLogging{cfg: cfg, svc: svc}, nil
}

// opaConfig is OPA's configuration for the run's decision logging.
func (d *decisionLogging) opaConfig() ([]byte, error) {
	conf := map[string]any{
		"decision_logs": d.cfg.decisionLogsSection(),
		"plugins":       map[string]any{countPluginName: map[string]any{"control": d.svc.controlURL}},
	}
	if u := d.svc.URL(); u != "" {
		conf["services"] = map[string]any{logServiceName: map[string]any{"url": u}}
	}
	return json.Marshal(conf)
}

// writeConfig writes OPA's configuration into dir for `opa run --config-file`, and returns the
// arguments that use it: the file, and the shutdown grace that is the final flush's time.
func (d *decisionLogging) args(dir string) ([]string, error) {
	conf, err := d.opaConfig()
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "authzbench-decision-logs.json")
	if err := os.WriteFile(path, conf, 0o600); err != nil {
		return nil, fmt.Errorf("write OPA's decision log configuration: %w", err)
	}
	return []string{"--config-file", path, "--shutdown-grace-period", fmt.Sprint(d.cfg.flushTimeout())}, nil
}

// finish takes the account once OPA has stopped (its report comes before it exits, so a short
// wait is enough) and closes the service; safe to call more than once.
func (d *decisionLogging) finish() {
	if d == nil || d.done != nil {
		return
	}
	d.svc.wait(time.Second)
	d.svc.settle()
	d.done = d.record()
	d.done.Account = d.svc.account()
	d.svc.close()
}

// record is the run's decision logging as configured, without its account until finish.
func (d *decisionLogging) record() *result.DecisionLogs {
	r := &result.DecisionLogs{Mode: d.cfg.DecisionLogs, Settings: d.cfg.opaSettings(),
		FlushTimeout: fmt.Sprintf("%ds", d.cfg.flushTimeout())}
	if len(r.Settings) == 0 {
		r.Settings = nil
	}
	if d.cfg.DecisionLogs == logsService {
		r.Service, r.Latency = string(d.cfg.behaviour()), d.cfg.Latency
	}
	return r
}

// info is what a target's Info records: the account once taken.
func (d *decisionLogging) info() *result.DecisionLogs {
	if d == nil {
		return nil
	}
	if d.done != nil {
		return d.done
	}
	return d.record()
}

// checkLoggedServer refuses decision logging where authzbench cannot configure OPA's: a server
// it does not start (url), an opa binary of another build (opa_bin), which has no count plugin
// to account with, or replicas, each of which would log on its own.
func checkLoggedServer(c *DecisionLogConfig, url, opaBin string, replicas int) error {
	if !c.on() {
		return c.Check()
	}
	var errs []error
	for key, given := range map[string]bool{"url": url != "", "opa_bin": opaBin != "", "replicas": replicas > 1} {
		if given {
			errs = append(errs, kinds.NewOptionError("decision_logs", func(n func(string) string) string {
				return fmt.Sprintf("%s configures the OPA linked into authzbench, started alone: not with %s", n("decision_logs"), n(key))
			}))
		}
	}
	return errors.Join(append(errs, c.Check())...)
}
