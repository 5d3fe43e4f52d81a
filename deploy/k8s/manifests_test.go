// Package k8s_test checks the Kubernetes manifests under deploy/k8s without a cluster: every
// YAML document decodes strictly into its Kubernetes API type (an unknown kind or field fails,
// as the API server would refuse it), every kustomization names files that exist, and, where
// kubectl is installed, every overlay renders into the objects a run needs: the replica count
// its name says, the study's 800m CPU / 1 GiB per server pod, probes, non-root read-only
// containers, and a load Job whose shards cover the scenario exactly once and whose results the
// merge Job reads exactly once. It imports k8s.io/api from tests only, so the authzbench
// binary does not carry it.
package k8s_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"sigs.k8s.io/yaml"
)

// kustomization is the part of kustomize's Kustomization these manifests use. Decoding is
// strict, so a field kustomize does not know, or one these tests do not check, fails.
type kustomization struct {
	APIVersion         string      `json:"apiVersion"`
	Kind               string      `json:"kind"`
	Resources          []string    `json:"resources,omitempty"`
	ConfigMapGenerator []generator `json:"configMapGenerator,omitempty"`
	Replicas           []struct {
		Name  string `json:"name"`
		Count int    `json:"count"`
	} `json:"replicas,omitempty"`
	Patches []struct {
		Path string `json:"path"`
	} `json:"patches,omitempty"`
	// Images is how docs/kubernetes.md points an overlay at an image in a registry.
	Images []struct {
		Name    string `json:"name"`
		NewName string `json:"newName,omitempty"`
		NewTag  string `json:"newTag,omitempty"`
	} `json:"images,omitempty"`
}

type generator struct {
	Name string `json:"name"`
	// Behavior "replace" is how an overlay swaps a base's ConfigMap (local-1-node's load).
	Behavior string   `json:"behavior,omitempty"`
	Files    []string `json:"files,omitempty"`
	Envs     []string `json:"envs,omitempty"`
}

// object is one decoded document: its kind and name, and the typed value.
type object struct {
	Kind, Name string
	Value      any
}

// scheme knows the API kinds these manifests use, and no others: a kind outside it fails.
var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{appsv1.AddToScheme, batchv1.AddToScheme, corev1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}()

// usedKinds are the kinds the manifests hold; the scheme's groups hold more (StatefulSet,
// CronJob ...), which would pass these tests unchecked.
var usedKinds = []string{"ConfigMap", "Deployment", "Job", "PersistentVolume", "PersistentVolumeClaim", "Service"}

// strict is the API machinery's own YAML decoder in strict mode: an unknown or duplicate field
// is an error naming its path, as `kubectl apply --validate=strict` would report it.
var strict = kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, scheme, scheme, kjson.SerializerOptions{Yaml: true, Strict: true})

// decode decodes one YAML document strictly into the type its apiVersion and kind name:
// Kubernetes objects through the API machinery, kustomize's Kustomization into the fields
// these manifests use.
func decode(doc []byte) (object, error) {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal(doc, &head); err != nil {
		return object{}, err
	}
	if head.APIVersion == "kustomize.config.k8s.io/v1beta1" && head.Kind == "Kustomization" {
		k := &kustomization{}
		if err := yaml.UnmarshalStrict(doc, k); err != nil {
			return object{}, fmt.Errorf("Kustomization: %w", err)
		}
		return object{Kind: head.Kind, Value: k}, nil
	}
	obj, gvk, err := strict.Decode(doc, nil, nil)
	if err != nil {
		return object{}, fmt.Errorf("%s %s: %w", head.APIVersion, head.Kind, err)
	}
	if !slices.Contains(usedKinds, gvk.Kind) {
		return object{}, fmt.Errorf("%s: not a kind these manifests use (%s); add it here with the checks it needs", gvk, strings.Join(usedKinds, ", "))
	}
	m, ok := obj.(metav1.Object)
	if !ok {
		return object{}, fmt.Errorf("%s: no object metadata", gvk)
	}
	return object{Kind: gvk.Kind, Name: m.GetName(), Value: obj}, nil
}

// documents splits a YAML stream on its "---" lines, dropping empty documents.
func documents(b []byte) [][]byte {
	var docs [][]byte
	for _, d := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(b), -1) {
		if strings.TrimSpace(stripComments(d)) != "" {
			docs = append(docs, []byte(d))
		}
	}
	return docs
}

func stripComments(s string) string {
	return regexp.MustCompile(`(?m)^\s*#.*$`).ReplaceAllString(s, "")
}

// decodeAll decodes every document of a stream, naming the source in errors.
func decodeAll(name string, b []byte) ([]object, error) {
	var objs []object
	var errs []error
	for i, d := range documents(b) {
		o, err := decode(d)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s, document %d: %w", name, i+1, err))
			continue
		}
		objs = append(objs, o)
	}
	return objs, errors.Join(errs...)
}

// yamlFiles lists every YAML file under deploy/k8s.
func yamlFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 10 {
		t.Fatalf("found %d YAML files under deploy/k8s, want the bases, overlays and workload (10 or more)", len(files))
	}
	return files
}

// The decoder itself must refuse what the API server would: without this, a lenient decoder
// would let every manifest pass.
func TestDecodeIsStrict(t *testing.T) {
	for _, tc := range []struct {
		name, doc, want string
	}{
		{"unknown field", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec:\n  replica: 3\n", `unknown field "spec.replica"`},
		{"misplaced field", "apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\nspec:\n  template:\n    spec:\n      containers:\n        - name: a\n          cpu: 1\n", `unknown field "spec.template.spec.containers[0].cpu"`},
		{"duplicate field", "apiVersion: v1\nkind: Service\nmetadata:\n  name: x\n  name: z\n", `key "name" already set`},
		{"unregistered kind", "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: x}\n", `no kind "Ingress" is registered`},
		{"kind not used here", "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: x}\n", `not a kind these manifests use`},
		{"wrong version", "apiVersion: batch/v1beta1\nkind: Job\nmetadata: {name: x}\n", `batch/v1beta1`},
		{"bad quantity", "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: x}\nspec:\n  resources:\n    requests:\n      storage: lots\n", `quantities must match`},
		{"unknown kustomize field", "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresource:\n  - a.yaml\n", `unknown field "resource"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decode([]byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("decode: err = %v, want one containing %q", err, tc.want)
			}
		})
	}
	o, err := decode([]byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec:\n  replicas: 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	if r := o.Value.(*appsv1.Deployment).Spec.Replicas; r == nil || *r != 3 {
		t.Fatalf("replicas decoded as %v, want 3", r)
	}
}

func TestManifestsDecodeStrictly(t *testing.T) {
	for _, path := range yamlFiles(t) {
		t.Run(path, func(t *testing.T) {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			objs, err := decodeAll(path, b)
			if err != nil {
				t.Fatal(err)
			}
			if len(objs) == 0 {
				t.Fatalf("%s holds no document", path)
			}
			isKustomization := filepath.Base(path) == "kustomization.yaml"
			for _, o := range objs {
				if (o.Kind == "Kustomization") != isKustomization {
					t.Errorf("%s holds a %s: only kustomization.yaml files hold Kustomizations", path, o.Kind)
				}
			}
		})
	}
}

// Every file a kustomization names exists, and every YAML file beside a kustomization is named
// by it (a resource or patch nobody includes is a manifest that silently does nothing).
func TestKustomizationsReferenceTheirFiles(t *testing.T) {
	var dirs []string
	for _, path := range yamlFiles(t) {
		if filepath.Base(path) == "kustomization.yaml" {
			dirs = append(dirs, filepath.Dir(path))
		}
	}
	for _, dir := range dirs {
		t.Run(dir, func(t *testing.T) {
			k := readKustomization(t, dir)
			named := map[string]bool{}
			exists := func(what, rel string) {
				t.Helper()
				p := filepath.Join(dir, rel)
				info, err := os.Stat(p)
				if err != nil {
					t.Errorf("%s/kustomization.yaml: %s %s: %v", dir, what, rel, err)
					return
				}
				if info.IsDir() {
					if _, err := os.Stat(filepath.Join(p, "kustomization.yaml")); err != nil {
						t.Errorf("%s/kustomization.yaml: %s %s is a directory without kustomization.yaml", dir, what, rel)
					}
				}
				named[filepath.Clean(p)] = true
			}
			for _, r := range k.Resources {
				exists("resource", r)
			}
			for _, p := range k.Patches {
				exists("patch", p.Path)
			}
			for _, g := range k.ConfigMapGenerator {
				for _, f := range g.Files {
					_, src, _ := strings.Cut(f, "=") // key=path, or path alone
					if src == "" {
						src = f
					}
					exists("configMapGenerator "+g.Name+" file", src)
				}
				for _, e := range g.Envs {
					exists("configMapGenerator "+g.Name+" envs", e)
				}
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				p := filepath.Join(dir, e.Name())
				if !e.IsDir() && strings.HasSuffix(e.Name(), ".yaml") && e.Name() != "kustomization.yaml" && !named[p] {
					t.Errorf("%s is beside %s/kustomization.yaml but not named in it", p, dir)
				}
			}
		})
	}
}

func readKustomization(t *testing.T, dir string) *kustomization {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	o, err := decode(b)
	if err != nil {
		t.Fatalf("%s/kustomization.yaml: %v", dir, err)
	}
	k, ok := o.Value.(*kustomization)
	if !ok {
		t.Fatalf("%s/kustomization.yaml holds a %s", dir, o.Kind)
	}
	return k
}

// overlays lists deploy/k8s/overlays/<engine>-<N>-replicas, with the engine and N its name says,
// and local-1-node, OPA once on a node without a pod network (cluster.sh's).
type overlay struct {
	Dir, Engine string
	Replicas    int
	// Local: every pod in the node's network, the server on its loopback.
	Local bool
}

func overlays(t *testing.T) []overlay {
	t.Helper()
	entries, err := os.ReadDir("overlays")
	if err != nil {
		t.Fatal(err)
	}
	name := regexp.MustCompile(`^(opa|cedar)-(\d+)-replicas$`)
	var out []overlay
	for _, e := range entries {
		if e.IsDir() && e.Name() == "local-1-node" {
			out = append(out, overlay{Dir: filepath.Join("overlays", e.Name()), Engine: "opa", Replicas: 1, Local: true})
			continue
		}
		m := name.FindStringSubmatch(e.Name())
		if !e.IsDir() || m == nil {
			t.Errorf("overlays/%s: want overlays named <opa|cedar>-<N>-replicas, or local-1-node", e.Name())
			continue
		}
		n, _ := strconv.Atoi(m[2])
		out = append(out, overlay{Dir: filepath.Join("overlays", e.Name()), Engine: m[1], Replicas: n})
	}
	for _, want := range []string{"opa-3-replicas", "opa-4-replicas", "cedar-3-replicas", "local-1-node"} {
		if !slices.ContainsFunc(out, func(o overlay) bool { return filepath.Base(o.Dir) == want }) {
			t.Errorf("overlays/%s is missing: docs/kubernetes.md walks through it", want)
		}
	}
	return out
}

// rendered is one overlay as `kubectl kustomize` renders it, by kind and name.
type rendered map[string]object

func (r rendered) get(t *testing.T, kind, name string) any {
	t.Helper()
	o, ok := r[kind+"/"+name]
	if !ok {
		t.Fatalf("rendered overlay has no %s %s", kind, name)
	}
	return o.Value
}

// configMap finds a generated ConfigMap by its name before kustomize added the content hash.
func (r rendered) configMap(name string) *corev1.ConfigMap {
	for _, o := range r {
		if cm, ok := o.Value.(*corev1.ConfigMap); ok && (cm.Name == name || strings.HasPrefix(cm.Name, name+"-") && len(cm.Name) == len(name)+11) {
			return cm
		}
	}
	return nil
}

func render(t *testing.T, kubectl, dir string) rendered {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command(kubectl, "kustomize", dir)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kubectl kustomize %s: %v\n%s", dir, err, stderr.String())
	}
	objs, err := decodeAll("kubectl kustomize "+dir, out)
	if err != nil {
		t.Fatal(err)
	}
	r := rendered{}
	for _, o := range objs {
		key := o.Kind + "/" + o.Name
		if _, dup := r[key]; dup {
			t.Fatalf("%s rendered twice", key)
		}
		r[key] = o
	}
	return r
}

func TestOverlaysRender(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not on PATH: the overlays are decoded file by file only (TestManifestsDecodeStrictly)")
	}
	ovs := overlays(t)
	if len(ovs) == 0 {
		t.Fatal("no overlays to render")
	}
	for _, ov := range ovs {
		t.Run(filepath.Base(ov.Dir), func(t *testing.T) {
			r := render(t, kubectl, ov.Dir)
			server := "authzbench-" + ov.Engine

			d := r.get(t, "Deployment", server).(*appsv1.Deployment)
			if d.Spec.Replicas == nil || int(*d.Spec.Replicas) != ov.Replicas {
				t.Errorf("Deployment %s: replicas %s, want %d as the overlay's name says", server, ptrString(d.Spec.Replicas), ov.Replicas)
			}
			for _, other := range []string{"opa", "cedar"} {
				if _, ok := r["Deployment/authzbench-"+other]; ok && other != ov.Engine {
					t.Errorf("overlay for %s also deploys %s", ov.Engine, other)
				}
			}
			checkServerPod(t, r, d)

			svc := r.get(t, "Service", server).(*corev1.Service)
			if !matches(svc.Spec.Selector, d.Spec.Template.Labels) {
				t.Errorf("Service %s selects %v; the pods are labelled %v", server, svc.Spec.Selector, d.Spec.Template.Labels)
			}

			job := r.get(t, "Job", "authzbench-loadgen").(*batchv1.Job)
			merge := r.get(t, "Job", "authzbench-merge").(*batchv1.Job)
			checkShards(t, r, job, merge)

			c := job.Spec.Template.Spec.Containers[0]
			env := envOf(c)
			if env["TARGET"] != ov.Engine+"/server" {
				t.Errorf("load generator TARGET %q, want %s/server", env["TARGET"], ov.Engine)
			}
			wantURL := fmt.Sprintf("http://%s:%d", svc.Name, svc.Spec.Ports[0].Port)
			if ov.Local {
				wantURL = "http://" + checkLocal(t, r, d, job, merge)
			}
			if env["URL"] != wantURL {
				t.Errorf("load generator URL %q, want %s", env["URL"], wantURL)
			}
			if r.configMap("authzbench-workload") == nil {
				t.Errorf("no authzbench-workload ConfigMap: the generators would not know the workload")
			}
		})
	}
}

// checkLocal asserts what a node without a pod network needs (docs/kubernetes.md, "A local
// cluster"): every pod in the node's network, the server listening on 127.0.0.1 and probed
// there, and the results claim bound to a hostPath volume in the directory cluster.sh up
// creates. It returns the server's address, where the generators must send.
func checkLocal(t *testing.T, r rendered, d *appsv1.Deployment, job, merge *batchv1.Job) string {
	t.Helper()
	for what, spec := range map[string]corev1.PodSpec{"Deployment " + d.Name: d.Spec.Template.Spec,
		"Job " + job.Name: job.Spec.Template.Spec, "Job " + merge.Name: merge.Spec.Template.Spec} {
		if !spec.HostNetwork {
			t.Errorf("%s: hostNetwork false: without a pod network its pods get no address", what)
		}
	}
	c := d.Spec.Template.Spec.Containers[0]
	var addr string
	for _, a := range c.Args {
		if v, ok := strings.CutPrefix(a, "--addr="); ok {
			addr = v
		}
	}
	if !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Errorf("Deployment %s listens on %q, want 127.0.0.1 (traffic stays on loopback)", d.Name, addr)
	}
	for name, p := range map[string]*corev1.Probe{"readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Host != "127.0.0.1" {
			t.Errorf("Deployment %s: %s probe not sent to 127.0.0.1, where the server listens: %+v", d.Name, name, p)
		}
	}
	pvc := r.get(t, "PersistentVolumeClaim", "authzbench-results").(*corev1.PersistentVolumeClaim)
	pv, ok := r["PersistentVolume/"+pvc.Spec.VolumeName].Value.(*corev1.PersistentVolume)
	if !ok {
		t.Fatalf("claim %s names volume %q, which the overlay does not render", pvc.Name, pvc.Spec.VolumeName)
	}
	if pvc.Spec.StorageClassName == nil || *pvc.Spec.StorageClassName != pv.Spec.StorageClassName {
		t.Errorf("claim %s: storage class %s, volume %s: %q; they would not bind", pvc.Name, ptrString(pvc.Spec.StorageClassName), pv.Name, pv.Spec.StorageClassName)
	}
	script, err := os.ReadFile("../local-cluster/cluster.sh")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^STATE=(/\S+)$`).FindSubmatch(script)
	if m == nil {
		t.Fatal("../local-cluster/cluster.sh sets no STATE=/path")
	}
	if want := string(m[1]) + "/results"; pv.Spec.HostPath == nil || pv.Spec.HostPath.Path != want {
		t.Errorf("volume %s: hostPath %+v, want %s, the directory cluster.sh up makes writable", pv.Name, pv.Spec.HostPath, want)
	}
	return addr
}

func ptrString[T any](p *T) string {
	if p == nil {
		return "unset"
	}
	return fmt.Sprint(*p)
}

func matches(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// checkServerPod asserts what makes a server pod comparable with the study and safe to run:
// 800m CPU / 1 GiB as requests and limits, readiness and liveness on /health, a non-root user
// by number, a read-only root filesystem, and its policy from a ConfigMap the overlay renders.
func checkServerPod(t *testing.T, r rendered, d *appsv1.Deployment) {
	t.Helper()
	spec := d.Spec.Template.Spec
	if len(spec.Containers) != 1 {
		t.Fatalf("Deployment %s: %d containers, want the server alone", d.Name, len(spec.Containers))
	}
	c := spec.Containers[0]
	want := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("800m"), corev1.ResourceMemory: resource.MustParse("1Gi")}
	for name, list := range map[string]corev1.ResourceList{"requests": c.Resources.Requests, "limits": c.Resources.Limits} {
		for res, q := range want {
			if got, ok := list[res]; !ok || got.Cmp(q) != 0 {
				t.Errorf("Deployment %s: %s.%s = %s, want %s", d.Name, name, res, got.String(), q.String())
			}
		}
	}
	for name, p := range map[string]*corev1.Probe{"readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/health" {
			t.Errorf("Deployment %s: %s probe %+v, want an HTTP GET of /health", d.Name, name, p)
			continue
		}
		if !slices.ContainsFunc(c.Ports, func(cp corev1.ContainerPort) bool {
			return cp.Name == p.HTTPGet.Port.String() || cp.ContainerPort == p.HTTPGet.Port.IntVal
		}) {
			t.Errorf("Deployment %s: %s probe port %s is not a container port", d.Name, name, p.HTTPGet.Port.String())
		}
	}
	checkLockedDown(t, "Deployment "+d.Name, spec)
	for _, v := range spec.Volumes {
		if v.ConfigMap != nil {
			if _, ok := r["ConfigMap/"+v.ConfigMap.Name]; !ok {
				t.Errorf("Deployment %s mounts ConfigMap %s, which the overlay does not render", d.Name, v.ConfigMap.Name)
			}
		}
	}
	if !slices.ContainsFunc(spec.Volumes, func(v corev1.Volume) bool { return v.ConfigMap != nil }) {
		t.Errorf("Deployment %s mounts no ConfigMap: where would its policy come from?", d.Name)
	}
}

// checkLockedDown asserts a pod runs as a non-root user given by number (runAsNonRoot cannot
// check a user name) and every container has a read-only root filesystem and no privilege
// escalation.
func checkLockedDown(t *testing.T, what string, spec corev1.PodSpec) {
	t.Helper()
	sc := spec.SecurityContext
	if sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser == 0 {
		t.Errorf("%s: pod securityContext %+v, want runAsNonRoot and a non-zero runAsUser", what, sc)
	}
	for _, c := range append(slices.Clone(spec.InitContainers), spec.Containers...) {
		csc := c.SecurityContext
		if csc == nil || csc.ReadOnlyRootFilesystem == nil || !*csc.ReadOnlyRootFilesystem ||
			csc.AllowPrivilegeEscalation == nil || *csc.AllowPrivilegeEscalation {
			t.Errorf("%s, container %s: securityContext %+v, want a read-only root filesystem and no privilege escalation", what, c.Name, csc)
		}
	}
}

// envOf is a container's literal env values.
func envOf(c corev1.Container) map[string]string {
	env := map[string]string{}
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			env[e.Name] = e.Value
		}
	}
	return env
}

// expand does what the kubelet does to a container's args: $(NAME) becomes NAME's value when
// NAME is defined, $$ becomes $, and anything else stays as written.
func expand(s string, env map[string]string) (string, []string) {
	var out strings.Builder
	var undefined []string
	for i := 0; i < len(s); i++ {
		switch {
		case strings.HasPrefix(s[i:], "$$"):
			out.WriteByte('$')
			i++
		case strings.HasPrefix(s[i:], "$("):
			end := strings.IndexByte(s[i:], ')')
			if end < 0 {
				out.WriteString(s[i:])
				return out.String(), undefined
			}
			name := s[i+2 : i+end]
			if v, ok := env[name]; ok {
				out.WriteString(v)
			} else {
				out.WriteString(s[i : i+end+1])
				undefined = append(undefined, name)
			}
			i += end
		default:
			out.WriteByte(s[i])
		}
	}
	return out.String(), undefined
}

// userConfigMaps are ConfigMaps the user creates for a run, not the overlay: the start instant
// is known only just before the run.
var userConfigMaps = map[string][]string{"authzbench-start": {"START_AT"}}

// checkShards asserts the load Job is N generators at once, each running shard i/N of one
// scenario for the index Kubernetes gives it, so the N cover the scenario exactly once; that
// every variable its arguments use is defined; and that the merge Job reads each shard's
// result file exactly once.
func checkShards(t *testing.T, r rendered, job, merge *batchv1.Job) {
	t.Helper()
	spec := job.Spec
	if spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion {
		t.Fatalf("Job %s: completionMode %s, want Indexed (each pod its own JOB_COMPLETION_INDEX)", job.Name, ptrString(spec.CompletionMode))
	}
	if spec.Completions == nil || spec.Parallelism == nil || *spec.Completions != *spec.Parallelism || *spec.Completions < 1 {
		t.Fatalf("Job %s: completions %s, parallelism %s: want them equal, so every shard runs at once", job.Name, ptrString(spec.Completions), ptrString(spec.Parallelism))
	}
	if spec.Suspend == nil || !*spec.Suspend {
		t.Errorf("Job %s is not created suspended: it would start before the servers are ready and the start instant is set", job.Name)
	}
	if spec.BackoffLimit == nil || *spec.BackoffLimit != 0 {
		t.Errorf("Job %s: backoffLimit %s, want 0: a shard run again starts after the others' window", job.Name, ptrString(spec.BackoffLimit))
	}
	n := int(*spec.Completions)
	pod := spec.Template.Spec
	checkLockedDown(t, "Job "+job.Name, pod)
	checkLockedDown(t, "Job "+merge.Name, merge.Spec.Template.Spec)
	if len(pod.Containers) != 1 {
		t.Fatalf("Job %s: %d containers, want one generator", job.Name, len(pod.Containers))
	}
	c := pod.Containers[0]
	if !slices.Contains(c.Args, "--shard=$(JOB_COMPLETION_INDEX)/$(SHARDS)") || !slices.Contains(c.Args, "--shard-base=0") {
		// The index runs from 0; without --shard-base=0 the first pod's shard is refused.
		t.Errorf("Job %s: args %q carry no --shard=$(JOB_COMPLETION_INDEX)/$(SHARDS) with --shard-base=0", job.Name, c.Args)
	}

	// The variables a generator pod sees: its literal env, the keys of the ConfigMaps it takes
	// whole, and the index Kubernetes adds to every pod of an Indexed Job.
	env := envOf(c)
	for _, from := range c.EnvFrom {
		if from.ConfigMapRef == nil {
			continue
		}
		name := from.ConfigMapRef.Name
		if keys, ok := userConfigMaps[name]; ok {
			for _, k := range keys {
				env[k] = "2026-11-23T18:00:00Z"
			}
			continue
		}
		cm, ok := r["ConfigMap/"+name].Value.(*corev1.ConfigMap)
		if !ok {
			t.Errorf("Job %s takes ConfigMap %s, which the overlay does not render", job.Name, name)
			continue
		}
		for k, v := range cm.Data {
			env[k] = v
		}
	}
	if env["SHARDS"] != strconv.Itoa(n) {
		t.Errorf("Job %s: SHARDS %q, want %d, its completions and parallelism", job.Name, env["SHARDS"], n)
	}

	shards := map[int]int{}
	results := map[string]int{}
	for index := range n { // Kubernetes gives the pods 0 to completions-1, each once
		env["JOB_COMPLETION_INDEX"] = strconv.Itoa(index)
		var shard, out string
		for _, a := range c.Args {
			got, undefined := expand(a, env)
			if len(undefined) > 0 {
				t.Fatalf("Job %s: argument %q uses %v, defined nowhere", job.Name, a, undefined)
			}
			if v, ok := strings.CutPrefix(got, "--shard="); ok {
				shard = v
			}
			if v, ok := strings.CutPrefix(got, "--out="); ok {
				out = v
			}
		}
		i, count, err := parseShard(shard)
		if err != nil {
			t.Fatalf("pod %d: --shard=%q: %v", index, shard, err)
		}
		if count != n {
			t.Errorf("pod %d runs shard %s: of %d shards, but the Job runs %d", index, shard, count, n)
		}
		shards[i]++
		if out == "" || !strings.HasPrefix(out, "/results/") {
			t.Errorf("pod %d writes its result to %q, not to the results volume", index, out)
		}
		results[out]++
	}
	for i := range n {
		if shards[i] != 1 {
			t.Errorf("shard %d/%d is run by %d pods, want exactly 1", i, n, shards[i])
		}
	}
	if len(shards) != n {
		t.Errorf("the pods run shards %v, want each of 0 to %d once", shards, n-1)
	}

	var merged []string
	for _, ic := range merge.Spec.Template.Spec.InitContainers {
		if len(ic.Args) > 0 && ic.Args[0] == "merge" {
			for i := 1; i < len(ic.Args); i++ {
				if ic.Args[i] == "-o" || ic.Args[i] == "--out" {
					i++
					continue
				}
				merged = append(merged, ic.Args[i])
			}
		}
	}
	for out, k := range results {
		if k != 1 {
			t.Errorf("%d pods write %s", k, out)
		}
		if c := countOf(merged, out); c != 1 {
			t.Errorf("merge reads %s %d times, want once", out, c)
		}
	}
	for _, m := range merged {
		if results[m] == 0 {
			t.Errorf("merge reads %s, which no generator writes", m)
		}
	}
	checkVolumeShared(t, job, merge)
}

func countOf(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

// parseShard reads "i/N" as the Job hands it to the generator's --shard: i is the index
// Kubernetes gives an Indexed Job's pods, 0 to N-1 (issue 15: --shard $JOB_COMPLETION_INDEX/N),
// which Kubernetes cannot offset; --shard must read i the same way.
func parseShard(s string) (i, n int, err error) {
	a, b, ok := strings.Cut(s, "/")
	if !ok {
		return 0, 0, errors.New("want i/N")
	}
	if i, err = strconv.Atoi(a); err != nil {
		return 0, 0, err
	}
	if n, err = strconv.Atoi(b); err != nil {
		return 0, 0, err
	}
	if n < 1 || i < 0 || i >= n {
		return 0, 0, fmt.Errorf("shard %d of %d: want 0 <= i < N", i, n)
	}
	return i, n, nil
}

// checkVolumeShared asserts the merge Job mounts the same claim at the same path as the
// generators, so it reads what they wrote.
func checkVolumeShared(t *testing.T, job, merge *batchv1.Job) {
	t.Helper()
	claim := func(spec corev1.PodSpec, mount string) string {
		for _, v := range spec.Volumes {
			if v.Name == mount && v.PersistentVolumeClaim != nil {
				return v.PersistentVolumeClaim.ClaimName
			}
		}
		return ""
	}
	mountAt := func(spec corev1.PodSpec, c corev1.Container, path string) string {
		for _, m := range c.VolumeMounts {
			if m.MountPath == path {
				return claim(spec, m.Name)
			}
		}
		return ""
	}
	gen := mountAt(job.Spec.Template.Spec, job.Spec.Template.Spec.Containers[0], "/results")
	if gen == "" {
		t.Fatalf("Job %s mounts no claim at /results", job.Name)
	}
	for _, c := range append(slices.Clone(merge.Spec.Template.Spec.InitContainers), merge.Spec.Template.Spec.Containers...) {
		if got := mountAt(merge.Spec.Template.Spec, c, "/results"); got != gen {
			t.Errorf("Job %s, container %s: /results is claim %q, the generators write to %q", merge.Name, c.Name, got, gen)
		}
	}
}

// expand stands for the kubelet in the shard checks, so it must read arguments as the kubelet
// does: a defined $(NAME) replaced, an undefined one left as written and reported, $$ an
// escaped $.
func TestExpand(t *testing.T) {
	env := map[string]string{"JOB_COMPLETION_INDEX": "2", "SHARDS": "3"}
	for _, tc := range []struct {
		in, want  string
		undefined []string
	}{
		{"--shard=$(JOB_COMPLETION_INDEX)/$(SHARDS)", "--shard=2/3", nil},
		{"--out=/results/shard-$(JOB_COMPLETION_INDEX).json", "--out=/results/shard-2.json", nil},
		{"--start-at=$(START_AT)", "--start-at=$(START_AT)", []string{"START_AT"}},
		{"$$(SHARDS) costs $$5", "$(SHARDS) costs $5", nil},
		{"--x=$(SHARDS", "--x=$(SHARDS", nil},
	} {
		got, undefined := expand(tc.in, env)
		if got != tc.want || !slices.Equal(undefined, tc.undefined) {
			t.Errorf("expand(%q) = %q, undefined %v; want %q, %v", tc.in, got, undefined, tc.want, tc.undefined)
		}
	}
}
