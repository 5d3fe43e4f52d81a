package k8s_test

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	Line      int
	Cmd, Args string
}

func parseDockerfile(t *testing.T, path string) []instruction {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []instruction
	var cur strings.Builder
	start := 0
	for i, line := range strings.Split(string(b), "\n") {
		trimmed := strings.TrimSpace(line)
		if cur.Len() == 0 && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if cur.Len() == 0 {
			start = i + 1
		}
		if s, ok := strings.CutSuffix(trimmed, "\\"); ok {
			cur.WriteString(s + " ")
			continue
		}
		cur.WriteString(trimmed)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, instruction{Line: start, Cmd: strings.ToUpper(cmd), Args: strings.TrimSpace(args)})
		cur.Reset()
	}
	if cur.Len() > 0 {
		t.Fatalf("%s: the last instruction ends in a line continuation", path)
	}
	return out
}

// The image cannot be built here (no registry to pull its bases from), so this checks what
// the manifests and the docs rely on: a multi-stage build of a static binary with the Go of
// go.mod, a final stage with no shell to run as root in, a numeric non-root user that matches
// the pods' runAsUser, and version stamping that names real variables.
func TestDockerfile(t *testing.T) {
	const path = "../image/Dockerfile"
	ins := parseDockerfile(t, path)

	type stage struct {
		base, name string
		body       []instruction
	}
	var stages []stage
	for _, in := range ins {
		if in.Cmd == "FROM" {
			f := strings.Fields(in.Args)
			s := stage{base: f[0]}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				s.name = f[2]
			}
			stages = append(stages, s)
			continue
		}
		if len(stages) == 0 {
			if in.Cmd != "ARG" {
				t.Fatalf("%s:%d: %s before the first FROM", path, in.Line, in.Cmd)
			}
			continue
		}
		stages[len(stages)-1].body = append(stages[len(stages)-1].body, in)
	}
	if len(stages) < 2 {
		t.Fatalf("%s: %d stage(s), want a build stage and a runtime stage", path, len(stages))
	}
	build, final := stages[0], stages[len(stages)-1]

	goMod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	goVersion := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(goMod)
	if goVersion == nil {
		t.Fatal("go.mod has no go directive")
	}
	if !strings.HasPrefix(build.base, "golang:"+string(goVersion[1])) {
		t.Errorf("build stage FROM %s, want golang:%s, the Go of go.mod", build.base, goVersion[1])
	}
	var goBuild string
	for _, in := range build.body {
		if in.Cmd == "RUN" && strings.Contains(in.Args, "go build") {
			goBuild = in.Args
		}
	}
	for _, want := range []string{"CGO_ENABLED=0", "./cmd/authzbench"} {
		if !strings.Contains(goBuild, want) {
			t.Errorf("build stage's go build %q lacks %s", goBuild, want)
		}
	}
	// The -X flags must name variables that exist, or the image records no version silently.
	for _, m := range regexp.MustCompile(`-X ([\w./-]+)\.(\w+)=`).FindAllStringSubmatch(goBuild, -1) {
		pkg := strings.TrimPrefix(m[1], "github.com/authzbench/authzbench/")
		src, err := os.ReadFile("../../" + pkg + "/" + pkg[strings.LastIndex(pkg, "/")+1:] + ".go")
		if err != nil || !regexp.MustCompile(`(?m)^\s+`+m[2]+`\s+= ""`).Match(src) {
			t.Errorf("go build -X %s.%s: no such string variable (%v)", m[1], m[2], err)
		}
	}

	if !strings.HasPrefix(final.base, "gcr.io/distroless/static") && final.base != "scratch" {
		t.Errorf("final stage FROM %s, want distroless static or scratch: a static binary needs nothing else", final.base)
	}
	var user, entrypoint string
	for _, in := range final.body {
		switch in.Cmd {
		case "USER":
			user = in.Args
		case "ENTRYPOINT":
			entrypoint = in.Args
		case "RUN":
			t.Errorf("%s:%d: RUN in the final stage, which has no shell", path, in.Line)
		case "COPY":
			if from, ok := strings.CutPrefix(strings.Fields(in.Args)[0], "--from="); ok &&
				!slices.ContainsFunc(stages[:len(stages)-1], func(s stage) bool { return s.name == from }) {
				t.Errorf("%s:%d: COPY --from=%s names no earlier stage", path, in.Line, from)
			}
		}
	}
	uid, gid, _ := strings.Cut(user, ":")
	uidN, err := strconv.Atoi(uid)
	if err != nil || uidN == 0 {
		t.Fatalf("final stage USER %q, want a numeric non-root UID (runAsNonRoot cannot check a name)", user)
	}
	if gid != "" {
		if _, err := strconv.Atoi(gid); err != nil {
			t.Errorf("final stage USER %q: group is not numeric", user)
		}
	}
	var ep []string
	if err := json.Unmarshal([]byte(entrypoint), &ep); err != nil || len(ep) == 0 {
		t.Errorf("ENTRYPOINT %q, want the exec form [\"/authzbench\"] (no shell to run the other form)", entrypoint)
	}

	ignore, err := os.ReadFile(path + ".dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(strings.Fields(string(ignore)), ".git") {
		t.Errorf("%s.dockerignore does not leave out .git", path)
	}

	// Every pod running the authzbench image runs as the image's user, so its files (the
	// results volume, fsGroup) belong to the user that writes them.
	for _, file := range []string{"base/cedar/deployment.yaml", "base/loadgen/job.yaml", "base/merge/job.yaml"} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		o, err := decode(b)
		if err != nil {
			t.Fatal(err)
		}
		var pod corev1.PodSpec
		switch v := o.Value.(type) {
		case *appsv1.Deployment:
			pod = v.Spec.Template.Spec
		case *batchv1.Job:
			pod = v.Spec.Template.Spec
		}
		for _, c := range append(slices.Clone(pod.InitContainers), pod.Containers...) {
			if !strings.HasPrefix(c.Image, "authzbench:") {
				t.Errorf("%s, container %s: image %s, want the authzbench image", file, c.Name, c.Image)
			}
		}
		if sc := pod.SecurityContext; sc == nil || sc.RunAsUser == nil || *sc.RunAsUser != int64(uidN) {
			t.Errorf("%s: runAsUser %v, want the image's USER %d", file, sc, uidN)
		}
	}
}
