package k8s_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/authzbench/authzbench/internal/result"
)

// The end-to-end test brings up a real one-node Kubernetes with deploy/local-cluster/cluster.sh,
// runs the local-1-node overlay through the walk-through's steps and takes the cluster down. It
// needs root, the binaries `cluster.sh build` made, and minutes, so it runs only when asked:
//
//	sudo deploy/local-cluster/cluster.sh deps
//	sudo deploy/local-cluster/cluster.sh build
//	sudo AUTHZBENCH_E2E_K8S=1 go test ./deploy/k8s -run TestLocalCluster -v -timeout 20m
//
// AUTHZBENCH_E2E_K8S_OUT=FILE also keeps the merged result there (docs/results' smoke run).
const e2eScript = "../local-cluster/cluster.sh" // from this package's directory

// e2eLoad is the local-1-node overlay's load.env, which the merged result is checked against.
type e2eLoad struct {
	rate     float64
	duration time.Duration
}

func TestLocalClusterEndToEnd(t *testing.T) {
	if os.Getenv("AUTHZBENCH_E2E_K8S") != "1" {
		t.Skip("AUTHZBENCH_E2E_K8S=1 runs the manifests on a real local cluster (root, cluster.sh build first, minutes)")
	}
	if os.Geteuid() != 0 {
		t.Skip("the local cluster needs root: containerd, runc and the kubelet manage namespaces, mounts and cgroups")
	}
	paths := clusterPaths(t)
	var missing []string
	for _, f := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet", "kubectl"} {
		if _, err := os.Stat(filepath.Join(paths["bin"], f)); err != nil {
			missing = append(missing, filepath.Join(paths["bin"], f))
		}
	}
	for _, f := range []string{"authzbench.tar", "pause.tar"} {
		if _, err := os.Stat(filepath.Join(paths["images"], f)); err != nil {
			missing = append(missing, filepath.Join(paths["images"], f))
		}
	}
	if len(missing) > 0 {
		t.Skipf("not built (run: sudo deploy/local-cluster/cluster.sh build): %s", strings.Join(missing, ", "))
	}
	if b, err := os.ReadFile(filepath.Join(paths["images"], "authzbench.commit")); err == nil {
		if head, err := exec.Command("git", "rev-parse", "HEAD").Output(); err == nil && !bytes.Equal(bytes.TrimSpace(b), bytes.TrimSpace(head)) {
			t.Logf("the authzbench image was built at %s, the checkout is at %s: run cluster.sh build again to test this checkout's binary", bytes.TrimSpace(b), bytes.TrimSpace(head))
		}
	}
	load := readLoad(t)
	began := time.Now()
	phase := began
	step := func(what string) {
		t.Logf("%-44s %5.1f s (%5.1f s in all)", what, time.Since(phase).Seconds(), time.Since(began).Seconds())
		phase = time.Now()
	}

	if _, err := os.Stat(paths["state"]); err == nil {
		// Not ours to take down: the teardown below would.
		t.Fatalf("%s exists: a local cluster is up already (sudo deploy/local-cluster/cluster.sh down first)", paths["state"])
	}
	// Teardown runs however the test ends, and is checked: nothing the cluster started is left,
	// and the machine is as it was.
	var pids map[string]int
	before := machineState()
	t.Cleanup(func() {
		start := time.Now()
		out, err := script(t, 3*time.Minute, "down")
		if err != nil {
			t.Errorf("cluster.sh down: %v\n%s", err, out)
			return
		}
		checkDown(t, paths["state"], pids)
		if after := machineState(); after != before {
			t.Errorf("after down the machine differs:\n%s\nbefore up it was:\n%s", after, before)
		}
		t.Logf("%-44s %5.1f s (%5.1f s in all)", "down, nothing left", time.Since(start).Seconds(), time.Since(began).Seconds())
	})
	if out, err := script(t, 5*time.Minute, "up"); err != nil {
		t.Fatalf("cluster.sh up: %v\n%s", err, out)
	}
	pids = daemonPIDs(t, paths["state"])
	step("up: node Ready")

	k := kubectl{t: t, bin: filepath.Join(paths["bin"], "kubectl"), kubeconfig: paths["kubeconfig"], cache: paths["kubecache"]}
	k.run(time.Minute, "apply", "-k", "overlays/local-1-node")
	k.run(4*time.Minute, "rollout", "status", "deployment/authzbench-opa", "--timeout=4m")
	// Ready is the readiness probe's word; the server answers on the loopback it was told to.
	server := k.pod("app.kubernetes.io/name=authzbench-opa")
	if !podReady(server) {
		t.Fatalf("server pod %s is not Ready after its rollout: %+v", server.Name, server.Status.Conditions)
	}
	resp, err := http.Get("http://127.0.0.1:8181/health")
	if err != nil {
		t.Fatalf("the server pod is Ready, but 127.0.0.1:8181 does not answer: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /health on the server pod: %s", resp.Status)
	}
	// The study's Guaranteed 800m / 1 GiB, as the kernel enforces it.
	checkCgroup(t, server, "opa", 80000, 1<<30)
	step("server Deployment ready through its probes")

	// The walk-through's start: an instant far enough ahead for both pods to be running, then
	// the suspended Job let go.
	startAt := time.Now().Add(60 * time.Second).UTC().Truncate(time.Second)
	k.run(time.Minute, "create", "configmap", "authzbench-start", "--from-literal=START_AT="+startAt.Format(time.RFC3339))
	k.run(time.Minute, "patch", "job", "authzbench-loadgen", "--type=merge", "-p", `{"spec":{"suspend":false}}`)
	gens := k.runningPods("app.kubernetes.io/name=authzbench-loadgen", 2, time.Until(startAt))
	for _, p := range gens {
		// No CPU limit on a generator (a throttled one would measure itself), 1 GiB of memory.
		checkCgroup(t, p, "authzbench", -1, 1<<30)
	}
	step("2 generators running before the start")
	if !k.wait(4*time.Minute, "job/authzbench-loadgen") {
		t.Fatalf("the load Job did not complete:\n%s", k.output(time.Minute, "logs", "-l", "app.kubernetes.io/name=authzbench-loadgen", "--tail=40"))
	}
	step("load Job complete")

	var parts []*result.Document
	for i := range 2 {
		d, err := result.Read(filepath.Join(paths["results"], fmt.Sprintf("shard-%d.json", i)))
		if err != nil {
			t.Fatalf("shard %d's part: %v", i, err)
		}
		if d.Shard == nil || d.Shard.Index != i+1 || d.Shard.Count != 2 || !d.Shard.StartAt.Equal(startAt) {
			t.Fatalf("shard-%d.json is shard %+v, want %d of 2 started at %s", i, d.Shard, i+1, startAt)
		}
		parts = append(parts, d)
	}

	k.run(time.Minute, "patch", "job", "authzbench-merge", "--type=merge", "-p", `{"spec":{"suspend":false}}`)
	if !k.wait(3*time.Minute, "job/authzbench-merge") {
		t.Fatalf("the merge Job did not complete:\n%s", k.output(time.Minute, "logs", "job/authzbench-merge", "--all-containers"))
	}
	printed := k.output(time.Minute, "logs", "job/authzbench-merge", "-c", "print")
	step("merge Job complete")

	merged := &result.Document{}
	if err := json.Unmarshal([]byte(printed), merged); err != nil {
		t.Fatalf("the merge Job's log is no result document: %v\n%.2000s", err, printed)
	}
	checkMerged(t, merged, parts, load)
	if out := os.Getenv("AUTHZBENCH_E2E_K8S_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(printed), 0o644); err != nil {
			t.Errorf("AUTHZBENCH_E2E_K8S_OUT: %v", err)
		}
	}
}

// checkMerged asserts the merge is exact: one run, both shards, each repetition made of the
// parts' repetitions, the parts' sends adding up to the one schedule's (rate × duration), every
// due send sent and every response the expected decision.
func checkMerged(t *testing.T, merged *result.Document, parts []*result.Document, load e2eLoad) {
	t.Helper()
	if len(merged.Runs) != 1 || len(merged.Shards) != 2 {
		t.Fatalf("merged result: %d runs, %d shards; want 1 run of 2 shards", len(merged.Runs), len(merged.Shards))
	}
	run := merged.Runs[0]
	if run.Target != "opa/server" || !run.Load.Open() || run.Load.Rate != load.rate {
		t.Errorf("merged run: %s, load %+v; want opa/server in open loop at %v/s", run.Target, run.Load, load.rate)
	}
	var intended, sent int64
	var requests, ok uint64
	for i, p := range parts {
		if len(p.Runs) != 1 || len(p.Runs[0].Repetitions) != len(run.Repetitions) {
			t.Fatalf("shard %d: %d runs, want 1 with %d repetitions", i, len(p.Runs), len(run.Repetitions))
		}
		s := p.Runs[0].Summary
		if s.Open == nil {
			t.Fatalf("shard %d's summary has no open-loop counts", i)
		}
		intended += s.Open.Intended
		sent += s.Open.Sent
		requests += s.Requests
		ok += s.OK
		for j, rep := range p.Runs[0].Repetitions {
			if !containsString(run.Repetitions[j].Parts, rep.ID) {
				t.Errorf("merged repetition %d is made of %v, not of shard %d's %s", j+1, run.Repetitions[j].Parts, i, rep.ID)
			}
		}
	}
	s := run.Summary
	schedule := int64(load.rate * load.duration.Seconds() * float64(len(run.Repetitions)))
	switch {
	case s.Open == nil:
		t.Fatal("merged summary has no open-loop counts")
	case s.Open.Intended != schedule || intended != schedule:
		t.Errorf("sends due: merged %d, parts %d; want the schedule's %d (%v/s for %s, %d repetitions)",
			s.Open.Intended, intended, schedule, load.rate, load.duration, len(run.Repetitions))
	case s.Open.Sent != sent || s.Requests != requests || s.OK != ok:
		t.Errorf("merged sent %d, requests %d, ok %d; the parts add up to %d, %d, %d", s.Open.Sent, s.Requests, s.OK, sent, requests, ok)
	case s.Errors != 0 || s.WrongDecision != 0 || s.Open.Unsent != 0 || s.OK != uint64(schedule):
		t.Errorf("merged: %d ok of %d due, %d errors %v, %d wrong decisions, %d unsent; want every send an expected decision",
			s.OK, schedule, s.Errors, s.ErrorClasses, s.WrongDecision, s.Open.Unsent)
	}
	t.Logf("merged: %d sends due, %d ok, %d errors, %.0f req/s achieved (a smoke run on one node, not a figure)",
		s.Open.Intended, s.OK, s.Errors, s.Open.AchievedRPS.Mean)
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// readLoad reads the overlay's load.env: what the merged result must add up to.
func readLoad(t *testing.T) e2eLoad {
	t.Helper()
	f, err := os.Open("overlays/local-1-node/load.env")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	env := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			env[k] = v
		}
	}
	rate, err := strconv.ParseFloat(env["RATE"], 64)
	if err != nil {
		t.Fatalf("load.env RATE: %v", err)
	}
	d, err := time.ParseDuration(env["DURATION"])
	if err != nil {
		t.Fatalf("load.env DURATION: %v", err)
	}
	return e2eLoad{rate: rate, duration: d}
}

func script(t *testing.T, timeout time.Duration, args ...string) ([]byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return exec.CommandContext(ctx, "bash", append([]string{e2eScript}, args...)...).CombinedOutput()
}

func clusterPaths(t *testing.T) map[string]string {
	t.Helper()
	out, err := script(t, 30*time.Second, "paths")
	if err != nil {
		t.Fatalf("cluster.sh paths: %v\n%s", err, out)
	}
	paths := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			paths[k] = v
		}
	}
	for _, k := range []string{"bin", "images", "state", "kubeconfig", "results", "kubecache"} {
		if paths[k] == "" {
			t.Fatalf("cluster.sh paths gives no %s:\n%s", k, out)
		}
	}
	return paths
}

// daemonPIDs are the processes cluster.sh up started, by the PID files it keeps.
func daemonPIDs(t *testing.T, state string) map[string]int {
	t.Helper()
	pids := map[string]int{}
	for _, name := range []string{"containerd", "etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet"} {
		b, err := os.ReadFile(filepath.Join(state, "run", name+".pid"))
		if err != nil {
			t.Fatalf("cluster.sh up recorded no PID for %s: %v", name, err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || !alive(pid) {
			t.Fatalf("%s: PID %q is not running after up", name, b)
		}
		pids[name] = pid
	}
	return pids
}

// alive: the process exists and is no zombie waiting for init to reap it.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] != 'Z' && b[i+2] != 'X'
}

// machineState is what the cluster changes outside its state directory while it runs: the
// directories the kubelet and containerd's shims make if missing, and the kernel settings the
// kubelet sets when it starts.
func machineState() string {
	var b strings.Builder
	for _, dir := range []string{"/var/log/containers", "/var/lib/kubelet", "/run/containerd", "/root/.kube"} {
		_, err := os.Stat(dir)
		fmt.Fprintf(&b, "%s exists: %v\n", dir, err == nil)
	}
	for _, k := range []string{"vm/overcommit_memory", "kernel/panic", "kernel/panic_on_oops", "kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes"} {
		v, _ := os.ReadFile("/proc/sys/" + k)
		fmt.Fprintf(&b, "%s = %s\n", k, bytes.TrimSpace(v))
	}
	return b.String()
}

// checkDown asserts what cluster.sh down promises, independently of the script's own check:
// the daemons gone, no mount under the state, no kubepods cgroup, no state directory.
func checkDown(t *testing.T, state string, pids map[string]int) {
	t.Helper()
	for name, pid := range pids {
		if alive(pid) {
			t.Errorf("after down, %s (PID %d) still runs", name, pid)
		}
	}
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(mounts), "\n") {
		if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], state+"/") {
			t.Errorf("after down, %s is still mounted", f[4])
		}
	}
	left, _ := filepath.Glob("/sys/fs/cgroup/*/kubepods")
	if _, err := os.Stat("/sys/fs/cgroup/kubepods"); err == nil {
		left = append(left, "/sys/fs/cgroup/kubepods")
	}
	for _, dir := range left {
		t.Errorf("after down, cgroup %s is left", dir)
	}
	if _, err := os.Stat(state); err == nil {
		t.Errorf("after down, %s is left", state)
	}
}

// checkCgroup finds a pod's container in the cgroup hierarchy and asserts the CPU quota (µs
// per 100 ms period; -1: none) and memory limit the kubelet gave it.
func checkCgroup(t *testing.T, pod *corev1.Pod, container string, quota, memory int64) {
	t.Helper()
	var id string
	for _, s := range pod.Status.ContainerStatuses {
		if s.Name == container {
			_, id, _ = strings.Cut(s.ContainerID, "://")
		}
	}
	if id == "" {
		t.Fatalf("pod %s: container %s has no ID", pod.Name, container)
	}
	read := func(controller, file string) int64 {
		t.Helper()
		dir := findDir(t, "/sys/fs/cgroup/"+controller+"/kubepods", id)
		if dir == "" {
			t.Fatalf("pod %s, container %s: no cgroup %s under /sys/fs/cgroup/%s/kubepods", pod.Name, container, id, controller)
		}
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			t.Fatalf("%s/%s: %v", dir, file, err)
		}
		return v
	}
	if _, err := os.Stat("/sys/fs/cgroup/cpu/kubepods"); err != nil {
		// cgroup v2: cpu.max is "quota period" or "max period", memory.max bytes or "max".
		dir := findDir(t, "/sys/fs/cgroup/kubepods", id)
		if dir == "" {
			t.Fatalf("pod %s, container %s: no cgroup %s in cgroup v1's cpu hierarchy or v2's", pod.Name, container, id)
		}
		cpu, _ := os.ReadFile(filepath.Join(dir, "cpu.max"))
		mem, _ := os.ReadFile(filepath.Join(dir, "memory.max"))
		want := "max 100000"
		if quota >= 0 {
			want = fmt.Sprintf("%d 100000", quota)
		}
		if got := strings.TrimSpace(string(cpu)); got != want {
			t.Errorf("pod %s, container %s: cpu.max %q, want %q", pod.Name, container, got, want)
		}
		if got := strings.TrimSpace(string(mem)); got != strconv.FormatInt(memory, 10) {
			t.Errorf("pod %s, container %s: memory.max %q, want %d", pod.Name, container, got, memory)
		}
		return
	}
	if got := read("cpu", "cpu.cfs_quota_us"); got != quota {
		t.Errorf("pod %s, container %s: cpu.cfs_quota_us %d, want %d", pod.Name, container, got, quota)
	}
	if quota >= 0 {
		if got := read("cpu", "cpu.cfs_period_us"); got != 100000 {
			t.Errorf("pod %s, container %s: cpu.cfs_period_us %d, want 100000", pod.Name, container, got)
		}
	}
	if got := read("memory", "memory.limit_in_bytes"); got != memory {
		t.Errorf("pod %s, container %s: memory.limit_in_bytes %d, want %d", pod.Name, container, got, memory)
	}
	t.Logf("pod %s, container %s: CPU quota %d µs per 100 ms, memory limit %d bytes, in its cgroups", pod.Name, container, quota, memory)
}

// findDir is the directory named name somewhere under root, or "".
func findDir(t *testing.T, root, name string) string {
	t.Helper()
	var found string
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || found != "" {
			return filepath.SkipDir
		}
		if d.IsDir() && d.Name() == name {
			found = path
			return filepath.SkipAll
		}
		return nil
	})
	return found
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// kubectl runs the kubectl cluster.sh built against the local cluster.
type kubectl struct {
	t                      *testing.T
	bin, kubeconfig, cache string
}

func (k kubectl) cmd(timeout time.Duration, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, k.bin, append([]string{"--kubeconfig", k.kubeconfig, "--cache-dir", k.cache}, args...)...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("kubectl %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out, nil
}

func (k kubectl) run(timeout time.Duration, args ...string) {
	k.t.Helper()
	if _, err := k.cmd(timeout, args...); err != nil {
		k.t.Fatal(err)
	}
}

func (k kubectl) output(timeout time.Duration, args ...string) string {
	k.t.Helper()
	out, err := k.cmd(timeout, args...)
	if err != nil {
		k.t.Fatal(err)
	}
	return string(out)
}

// wait waits for a Job to complete; false if it failed or ran out of time.
func (k kubectl) wait(timeout time.Duration, job string) bool {
	k.t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		out := k.output(time.Minute, "get", job, "-o", `jsonpath={range .status.conditions[?(@.status=="True")]}{.type}{" "}{end}`)
		switch {
		case strings.Contains(out, "Complete"):
			return true
		case strings.Contains(out, "Failed"):
			return false
		}
		time.Sleep(time.Second)
	}
	return false
}

func (k kubectl) pods(selector string) []corev1.Pod {
	k.t.Helper()
	var list corev1.PodList
	if err := json.Unmarshal([]byte(k.output(time.Minute, "get", "pods", "-l", selector, "-o", "json")), &list); err != nil {
		k.t.Fatal(err)
	}
	return list.Items
}

func (k kubectl) pod(selector string) *corev1.Pod {
	k.t.Helper()
	pods := k.pods(selector)
	if len(pods) != 1 {
		k.t.Fatalf("%d pods labelled %s, want 1", len(pods), selector)
	}
	return &pods[0]
}

// runningPods waits until n pods of the selector run, each with its container started.
func (k kubectl) runningPods(selector string, n int, within time.Duration) []*corev1.Pod {
	k.t.Helper()
	deadline := time.Now().Add(within)
	for {
		var running []*corev1.Pod
		pods := k.pods(selector)
		for i := range pods {
			p := &pods[i]
			if p.Status.Phase == corev1.PodRunning && len(p.Status.ContainerStatuses) > 0 && p.Status.ContainerStatuses[0].State.Running != nil {
				running = append(running, p)
			}
		}
		if len(running) == n {
			return running
		}
		if time.Now().After(deadline) {
			k.t.Fatalf("%d of %d pods labelled %s running before the start instant; increase the lead", len(running), n, selector)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
