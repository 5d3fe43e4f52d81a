package k8s_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// binary is authzbench built once for the tests that run it.
var binary struct {
	once sync.Once
	path string
	err  error
}

func authzbench(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: builds and runs authzbench")
	}
	binary.once.Do(func() {
		dir, err := os.MkdirTemp("", "authzbench-k8s-test-")
		if err != nil {
			binary.err = err
			return
		}
		binary.path = filepath.Join(dir, "authzbench")
		out, err := exec.Command("go", "build", "-o", binary.path, "../../cmd/authzbench").CombinedOutput()
		if err != nil {
			binary.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binary.err != nil {
		t.Fatal(binary.err)
	}
	return binary.path
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binary.path != "" {
		os.RemoveAll(filepath.Dir(binary.path))
	}
	os.Exit(code)
}

// The committed workload files are what export.sh writes today for the workload they name:
// a workload whose policy changed in authzbench but not here would serve one policy and check
// the answers against another.
func TestWorkloadFilesAreCurrent(t *testing.T) {
	bin := authzbench(t)
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash to run export.sh")
	}
	env, err := os.ReadFile("workload/workload.env")
	if err != nil {
		t.Fatal(err)
	}
	name, ok := strings.CutPrefix(strings.TrimSpace(string(env)), "WORKLOAD=")
	if !ok || name == "" {
		t.Fatalf("workload/workload.env = %q, want WORKLOAD=<name>", env)
	}
	dir := t.TempDir()
	cmd := exec.Command("bash", "workload/export.sh", name, dir)
	cmd.Env = append(os.Environ(), "AUTHZBENCH="+bin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("export.sh %s: %v\n%s", name, err, out)
	}
	fresh, committed := files(t, dir), files(t, "workload")
	delete(committed, "export.sh")
	for f, b := range fresh {
		if c, ok := committed[f]; !ok {
			t.Errorf("export.sh %s writes %s, which is not committed", name, f)
		} else if !bytes.Equal(b, c) {
			t.Errorf("workload/%s differs from what export.sh %s writes now: run deploy/k8s/workload/export.sh %s", f, name, name)
		}
	}
	for f := range committed {
		if _, ok := fresh[f]; !ok {
			t.Errorf("workload/%s is committed but export.sh %s does not write it", f, name)
		}
	}

	// Bad input is refused, naming what is wrong, with exit status 2.
	cmd = exec.Command("bash", "workload/export.sh", "no-such-workload", t.TempDir())
	cmd.Env = append(os.Environ(), "AUTHZBENCH="+bin)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "no-such-workload") {
		t.Errorf("export.sh no-such-workload: %v, output %q; want exit status 2 naming the workload", err, out)
	}
}

// files reads every file under dir by its path relative to dir.
func files(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		out[rel] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// configMapVolume lays files out as the kubelet mounts a ConfigMap: the files in a hidden
// timestamped directory, ..data linking to it, and each file a link through ..data.
func configMapVolume(t *testing.T, from string) string {
	t.Helper()
	dir := t.TempDir()
	stamp := "..2026_11_23_18_00_00.000000001"
	if err := os.Mkdir(filepath.Join(dir, stamp), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(stamp, filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, stamp, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join("..data", e.Name()), filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// serverArgs is a server Deployment's container arguments as this machine runs them: the
// ConfigMap mount at a local directory laid out as the kubelet lays it out, and the listen
// address on loopback.
func serverArgs(t *testing.T, file, workloadDir, addr string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	o, err := decode(b)
	if err != nil {
		t.Fatal(err)
	}
	pod := o.Value.(*appsv1.Deployment).Spec.Template.Spec
	c := pod.Containers[0]
	var mount, source string
	for _, m := range c.VolumeMounts {
		i := slices.IndexFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Name == m.Name && v.ConfigMap != nil })
		if i >= 0 {
			mount = m.MountPath
			source = strings.TrimPrefix(pod.Volumes[i].ConfigMap.Name, "authzbench-")
			source = strings.TrimSuffix(source, "-policy")
		}
	}
	if mount == "" {
		t.Fatalf("%s mounts no ConfigMap", file)
	}
	local := configMapVolume(t, filepath.Join(workloadDir, source))
	var args []string
	for _, a := range c.Args {
		switch {
		case strings.HasPrefix(a, "--addr="):
			a = "--addr=" + addr
		case a == mount || strings.HasPrefix(a, mount+"/"):
			a = local + strings.TrimPrefix(a, mount)
		case strings.Contains(a, "="+mount+"/"):
			a = strings.Replace(a, "="+mount+"/", "="+local+"/", 1)
		}
		args = append(args, a)
	}
	if !slices.Contains(args, "--addr="+addr) {
		t.Fatalf("%s: no --addr= among %q", file, c.Args)
	}
	return args
}

// start runs bin with args until the test ends, and waits for /health to answer 200.
func start(t *testing.T, bin, addr string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cancel()
		<-exited
	})
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("%s %q exited before it was ready: %v\n%s", filepath.Base(bin), args, err, stderr.String())
		default:
		}
		resp, err := http.Get("http://" + addr + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s %q: /health not 200 within 30s\n%s", filepath.Base(bin), args, stderr.String())
}

// The servers' arguments, given a workload's files as export.sh writes them and the kubelet
// mounts them from a ConfigMap, serve every decision the workload expects: `authzbench run`
// against them sees no response that is not the expected decision. The committed workload is
// checked, and two that export.sh has to fill in for (nop has no data and no entities,
// docshare-5 carries its entities in each request). Without OPA's --ignore=.* the same layout
// fails to load, which shows the layout here is the kubelet's, links and hidden directories
// included.
func TestServersServeTheWorkload(t *testing.T) {
	bin := authzbench(t)
	env, err := os.ReadFile("workload/workload.env")
	if err != nil {
		t.Fatal(err)
	}
	committed := strings.TrimPrefix(strings.TrimSpace(string(env)), "WORKLOAD=")
	for _, workload := range []string{committed, "nop", "docshare-5"} {
		dir := "workload"
		if workload != committed {
			dir = t.TempDir()
			cmd := exec.Command("bash", "workload/export.sh", workload, dir)
			cmd.Env = append(os.Environ(), "AUTHZBENCH="+bin)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("export.sh %s: %v\n%s", workload, err, out)
			}
		}
		for _, tc := range []struct {
			engine, file string
			prefix       []string // what the image runs before the arguments
		}{
			{"opa", "base/opa/deployment.yaml", []string{"opa"}}, // the official image's entrypoint is opa
			{"cedar", "base/cedar/deployment.yaml", nil},         // the authzbench image's is authzbench
		} {
			t.Run(workload+"/"+tc.engine, func(t *testing.T) {
				addr := freeAddr(t)
				args := serverArgs(t, tc.file, dir, addr)
				start(t, bin, addr, append(tc.prefix, args...)...)
				out, err := exec.Command(bin, "run", "--target", tc.engine+"/server", "--url", "http://"+addr,
					"--workload", workload, "--workers", "2", "--requests", "1000", "--warmup", "0s",
					"--no-progress", "--out", filepath.Join(t.TempDir(), "result.json")).CombinedOutput()
				if err != nil {
					t.Fatalf("authzbench run against the %s server: %v\n%s", tc.engine, err, out)
				}
				if !bytes.Contains(out, []byte(workload)) || !bytes.Contains(out, []byte(tc.engine+"/server")) {
					t.Fatalf("authzbench run printed no row for %s on %s/server:\n%s", workload, tc.engine, out)
				}
				if tc.engine != "opa" || workload != committed {
					return
				}
				without := slices.DeleteFunc(slices.Clone(args), func(a string) bool { return a == "--ignore=.*" })
				if len(without) == len(args) {
					t.Fatalf("OPA's arguments %q have no --ignore=.*", args)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				without[slices.Index(without, "--addr="+addr)] = "--addr=" + freeAddr(t)
				out, err = exec.CommandContext(ctx, bin, append(tc.prefix, without...)...).CombinedOutput()
				if err == nil || ctx.Err() != nil || !bytes.Contains(out, []byte("/..data/")) {
					t.Errorf("OPA without --ignore=.* on a ConfigMap volume: %v, want it to refuse the files it loads twice, through ..data:\n%s", err, out)
				}
			})
		}
	}
}
