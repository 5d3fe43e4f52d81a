package casbin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/sut"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// decideEvery asks the target every input and wants each decided as it expects.
func decideEvery(t *testing.T, tg kinds.Target, w *workload.Workload) {
	t.Helper()
	d := tg.Worker()
	defer kinds.CloseDecider(d)
	for i, in := range w.Inputs {
		out := d.Decide(context.Background(), i)
		if out.Kind != verify.Decided {
			t.Fatalf("input %d (%s): %v", i+1, Registered.Request(in), out.Err)
		}
		if c := verify.Classify(in.Expect, out); c != verify.OK {
			t.Errorf("input %d (%s): %s", i+1, Registered.Request(in), verify.Name(c, out.Status))
		}
	}
}

// casbinWorkloads are what the kinds' tests run: built-ins (one with role links, one handed
// what it cannot compute) and the user's own files (CSV requests, JSONL requests with objects).
func casbinWorkloads(t *testing.T) []*workload.Workload {
	var ws []*workload.Workload
	for _, name := range []string{"rbac", "api", "rules-jwt-claim-20"} {
		w, err := workload.Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, w)
	}
	return append(ws, rbacFilesWorkload(t), abacFilesWorkload(t))
}

// Casbin in process and the Casbin server authzbench starts decide every input of every
// workload alike, as the workload expects; the started server is the one its info names, on
// loopback, and is gone, by its PID, once the target stops.
func TestCasbinModesDecideAlike(t *testing.T) {
	common := kinds.Common{TempDir: t.TempDir(), Prepared: engine.NewPrepared(), Workers: 2}
	for _, w := range casbinWorkloads(t) {
		t.Run(w.Name, func(t *testing.T) {
			t.Run("inproc", func(t *testing.T) {
				tg, err := kinds.New("casbin/inproc", common, nil)
				if err != nil {
					t.Fatal(err)
				}
				if err := tg.Start(context.Background(), w); err != nil {
					t.Fatal(err)
				}
				defer tg.Stop(context.Background())
				decideEvery(t, tg, w)
				if info := tg.Info(); info.Engine != Name || info.Mode != "inproc" || !strings.HasPrefix(info.Version, "casbin ") {
					t.Errorf("info %+v", info)
				}
			})
			t.Run("server", func(t *testing.T) {
				tg, err := kinds.New("casbin/server", common, nil)
				if err != nil {
					t.Fatal(err)
				}
				if err := tg.Start(context.Background(), w); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { tg.Stop(context.Background()) })
				decideEvery(t, tg, w)
				info := tg.Info()
				if info.PID == 0 || info.External || !strings.HasPrefix(info.URL, "http://127.0.0.1:") || !strings.HasPrefix(info.Version, "casbin ") {
					t.Errorf("info %+v: want the started server's PID, its loopback address and Casbin's version", info)
				}
				if err := tg.Stop(context.Background()); err != nil {
					t.Fatal(err)
				}
				if err := syscall.Kill(info.PID, 0); !errors.Is(err, syscall.ESRCH) {
					t.Errorf("server %d still there after Stop: %v", info.PID, err)
				}
			})
		})
	}
}

// A Casbin server someone else runs (here the test binary as authzbench casbin-server, started
// by the test) is measured at its URL, and a URL with a path asks there.
func TestCasbinRunningServer(t *testing.T) {
	addr, err := sut.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, ServerArg, "--model", "testdata/rbac_model.conf", "--policy", "testdata/rbac_policy.csv", "--addr", addr)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	probe := sut.HTTPProbe{URL: "http://" + addr + "/health"}
	for deadline := time.Now().Add(30 * time.Second); probe.Ready(context.Background()) != nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("casbin server at %s not ready", addr)
		}
	}
	w := rbacFilesWorkload(t)
	for _, url := range []string{"http://" + addr, "http://" + addr + ServerPath} {
		cfg := &CasbinServerConfig{ServerConfig: kinds.ServerConfig{URL: url}}
		tg, err := kinds.New("casbin/server", kinds.Common{TempDir: t.TempDir()}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := tg.Start(context.Background(), w); err != nil {
			t.Fatal(err)
		}
		decideEvery(t, tg, w)
		if info := tg.Info(); !info.External || info.PID != 0 {
			t.Errorf("info %+v: want a server authzbench did not start", info)
		}
		tg.Stop(context.Background())
	}
}

// Settings casbin/server cannot use are refused before anything starts, each naming its option.
func TestCasbinServerSettings(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  CasbinServerConfig
		want string
	}{
		{"TLS for the server it starts", CasbinServerConfig{kinds.ServerConfig{TLSServer: kinds.TLSServer{TLS: true}}}, "in clear"},
		{"mtls_authz", CasbinServerConfig{kinds.ServerConfig{TLSServer: kinds.TLSServer{MTLSAuthz: true}}}, "no authorization policy in front"},
		{"a port with a url", CasbinServerConfig{kinds.ServerConfig{URL: "http://127.0.0.1:8180", Port: 8181}}, "with url it starts none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Check()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
	for _, ok := range []CasbinServerConfig{{}, {kinds.ServerConfig{URL: "http://127.0.0.1:8180"}}} {
		if err := ok.Check(); err != nil {
			t.Errorf("%+v: %v", ok, err)
		}
	}
}

// The casbin/inproc targets of one run share one enforcer, loaded once, as the goroutines of a
// service share one; workers deciding on it at once each get every decision right.
func TestInprocWorkersShareOneEnforcer(t *testing.T) {
	w, err := workload.Builtin("rbac")
	if err != nil {
		t.Fatal(err)
	}
	common := kinds.Common{TempDir: t.TempDir(), Prepared: engine.NewPrepared(), Workers: 4}
	var targets []*casbinInproc
	for range 2 {
		tg, err := kinds.New("casbin/inproc", common, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := tg.Start(context.Background(), w); err != nil {
			t.Fatal(err)
		}
		targets = append(targets, tg.(*casbinInproc))
	}
	if targets[0].loaded.Enforcer != targets[1].loaded.Enforcer {
		t.Error("two targets of one run loaded an enforcer each")
	}
	wrong := make(chan string, 8)
	done := make(chan struct{})
	for g := range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			d := targets[g%2].Worker()
			for k := range len(w.Inputs) {
				i := (k + g*97) % len(w.Inputs) // each worker from its own place
				if c := verify.Classify(w.Inputs[i].Expect, d.Decide(context.Background(), i)); c != verify.OK {
					wrong <- fmt.Sprintf("worker %d, input %d: %s", g, i+1, verify.Name(c, 0))
					return
				}
			}
		}()
	}
	for range 8 {
		<-done
	}
	close(wrong)
	for msg := range wrong {
		t.Error(msg)
	}
}
