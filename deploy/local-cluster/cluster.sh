#!/usr/bin/env bash
# cluster.sh: a real single-node Kubernetes on this machine, on 127.0.0.1 only, for running
# deploy/k8s/overlays/local-1-node end to end (docs/kubernetes.md, "A local cluster").
#
#   cluster.sh deps     apt-get install etcd-server containerd runc buildah containernetworking-plugins openssl curl
#   cluster.sh build    Kubernetes's binaries at K8S_VERSION, a pause image, the authzbench image
#   cluster.sh up       certificates, etcd, containerd, API server, controller-manager, scheduler, kubelet
#   cluster.sh status   what runs, and the node
#   cluster.sh env      the exports that point kubectl at the cluster
#   cluster.sh paths    where the binaries, images and state are, one NAME=path a line (for tests)
#   cluster.sh down     stop each process by its PID; remove containers, mounts, cgroups and state
#
# What it needs: root on Linux (containerd, runc and the kubelet manage namespaces, mounts and
# cgroups); Debian's packages (`deps`); Go on PATH; about 5.5 GB of disk for a first build (Go's
# build and module caches 4.5 GB, binaries and images 0.5 GB, a running cluster 0.35 GB); a first
# build takes 7 minutes on a quiet 2-core machine and took 56 on a busy one, under a minute with
# a warm Go cache; `up` takes 10-20 seconds and the running cluster about 0.65 GiB of memory.
#
# Where things go (all outside the checkout):
#   AUTHZBENCH_CLUSTER_CACHE  the build's outputs, kept between runs (default /var/cache/authzbench-cluster)
#   /var/lib/authzbench-cluster  the running cluster, removed by `down`; fixed, because the
#                             local-1-node overlay's results volume is its results/ directory
#   K8S_VERSION               Kubernetes's version (default 1.34.4; 1.35 and later refuse cgroup v1
#                             unless told, and may need a newer containerd than Debian 12's)
#
# Every listener is on 127.0.0.1 and there is no pod network: pods run with hostNetwork, there
# is no kube-proxy and no cluster DNS, so a Service gets a ClusterIP that nothing routes.
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-1.34.4}
CACHE=${AUTHZBENCH_CLUSTER_CACHE:-/var/cache/authzbench-cluster}
STATE=/var/lib/authzbench-cluster
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BIN=$CACHE/k8s-v$K8S_VERSION/bin
IMAGES=$CACHE/images
# The manifests' image name, as containerd spells it once the short name is expanded.
IMAGE_REF=docker.io/library/authzbench:dev
PAUSE_REF=localhost/authzbench-pause:1
NODE=localhost

log() { printf '%s cluster: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { printf 'cluster: %s\n' "$*" >&2; exit 1; }

usage() {
	[ -z "${1:-}" ] || printf 'cluster: unknown command %q\n\n' "$1" >&2
	sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'
	exit 2
}

# --- checks: refuse early, saying what is missing ---------------------------------------------

need_root() {
	[ "$(id -u)" = 0 ] || die "$1 needs root: containerd, runc and the kubelet create namespaces, mounts and cgroups (run it with sudo)"
	[ "$(uname -s)" = Linux ] || die "$1 needs Linux"
}

need_commands() {
	local missing=()
	for c in "$@"; do command -v "$c" >/dev/null || missing+=("$c"); done
	[ ${#missing[@]} = 0 ] || die "missing: ${missing[*]} (run: $0 deps)"
}

need_disk() { # need_disk DIR GB
	local dir=$1 gb=$2 avail
	mkdir -p "$dir"
	avail=$(df -Pk "$dir" | awk 'NR==2 {print int($4/1024/1024)}')
	[ "$avail" -ge "$gb" ] || die "$dir has ${avail} GB free; $3 needs about $gb GB"
}

need_built() {
	local f
	for f in kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl; do
		[ -x "$BIN/$f" ] || die "$BIN/$f is missing (run: $0 build)"
	done
	for f in authzbench.tar pause.tar; do
		[ -s "$IMAGES/$f" ] || die "$IMAGES/$f is missing (run: $0 build)"
	done
}

# --- deps ------------------------------------------------------------------------------------

cmd_deps() {
	need_root deps
	command -v apt-get >/dev/null || die "deps installs Debian's packages with apt-get; on another system install etcd (3.4+), containerd (1.6+), runc, buildah, the CNI plugins and openssl yourself"
	apt-get update -q
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		etcd-server containerd runc buildah containernetworking-plugins openssl iproute2 curl
}

# --- build -----------------------------------------------------------------------------------

# The Kubernetes module cannot be built with `go install ...@version`: its go.mod sends its
# staging modules (k8s.io/api, k8s.io/client-go, ...) to ./staging/src, which a module download
# does not have. A wrapper module requires k8s.io/kubernetes and replaces each of those modules
# with its published v0.MINOR.PATCH, so Go builds exactly the release's code.
build_kubernetes() {
	local mod=$CACHE/k8s-v$K8S_VERSION/module gomod minor
	if [ -x "$BIN/kubelet" ] && [ -x "$BIN/kubectl" ] && [ -x "$BIN/kube-apiserver" ] &&
		[ -x "$BIN/kube-controller-manager" ] && [ -x "$BIN/kube-scheduler" ]; then
		log "Kubernetes v$K8S_VERSION: already built in $BIN"
		return
	fi
	mkdir -p "$mod" "$BIN"
	gomod=$(cd "$mod" && GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@v$K8S_VERSION" |
		sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')
	[ -s "$gomod" ] || die "could not download k8s.io/kubernetes@v$K8S_VERSION from the Go module proxy"
	minor=${K8S_VERSION#*.}
	{
		echo "// Generated by deploy/local-cluster/cluster.sh: builds Kubernetes v$K8S_VERSION's commands."
		echo "module authzbench.local/kubernetes"
		echo
		echo "go 1.24.0"
		echo
		echo "require k8s.io/kubernetes v$K8S_VERSION"
		echo
		echo "replace ("
		sed -n 's#^[[:space:]]*\(k8s\.io/[^ ]*\) => \./staging/src/.*#\1#p' "$gomod" | sort -u |
			while read -r m; do echo "	$m => $m v0.$minor"; done
		echo ")"
	} >"$mod/go.mod"
	grep -q '=> k8s.io/api v0' "$mod/go.mod" || die "found no staging modules in $gomod"
	cat >"$mod/tools.go" <<-'EOF'
		//go:build tools

		// Package tools names the commands the wrapper module builds, so `go mod tidy` keeps them.
		package tools

		import (
			_ "k8s.io/kubernetes/cmd/kube-apiserver"
			_ "k8s.io/kubernetes/cmd/kube-controller-manager"
			_ "k8s.io/kubernetes/cmd/kube-scheduler"
			_ "k8s.io/kubernetes/cmd/kubectl"
			_ "k8s.io/kubernetes/cmd/kubelet"
		)
	EOF
	log "resolving Kubernetes v$K8S_VERSION's modules"
	(cd "$mod" && go mod tidy)
	local ldflags="-s -w" pkg
	for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		ldflags+=" -X $pkg.gitVersion=v$K8S_VERSION -X $pkg.gitMajor=${K8S_VERSION%%.*}"
		ldflags+=" -X $pkg.gitMinor=${minor%%.*} -X $pkg.gitTreeState=clean"
		ldflags+=" -X $pkg.buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	done
	log "building Kubernetes v$K8S_VERSION (5 binaries, a cold Go cache: about 5 minutes on two quiet cores, much longer beside other builds)"
	(cd "$mod" && CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$BIN/" \
		k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
		k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kubectl)
	"$BIN/kubelet" --version >&2
}

# An image FROM scratch holding one static binary, written as an OCI archive. buildah keeps its
# storage in a directory of its own that is removed afterwards; the two directories it makes
# outside it whatever its flags (a blob cache in /var/lib/containers, /run/containers/networks)
# are removed too where the build made them.
build_image() { # build_image NAME REF BINARY USER ARCHIVE
	local name=$1 ref=$2 binary=$3 user=$4 archive=$5 store ctr made=() dir
	for dir in /var/lib/containers /run/containers; do
		[ -e "$dir" ] || made+=("$dir")
	done
	store=$(mktemp -d "$CACHE/buildah.XXXXXX")
	local b=(buildah --root "$store/root" --runroot "$store/run" --storage-driver vfs)
	ctr=$("${b[@]}" from --quiet scratch)
	"${b[@]}" copy --quiet "$ctr" "$binary" "/$name" >/dev/null
	"${b[@]}" config --entrypoint "[\"/$name\"]" --cmd '' --user "$user" \
		--label org.opencontainers.image.source=authzbench "$ctr"
	rm -f "$archive.tmp"
	"${b[@]}" commit --quiet --format oci "$ctr" "$ref" >/dev/null
	"${b[@]}" push --quiet "$ref" "oci-archive:$archive.tmp:$ref"
	"${b[@]}" rm "$ctr" >/dev/null
	rm -rf "$store" "${made[@]}"
	mv "$archive.tmp" "$archive"
}

cmd_build() {
	need_root build
	need_commands go buildah
	need_disk "$CACHE" 6 build
	mkdir -p "$IMAGES"
	build_kubernetes

	log "building the pause image"
	(cd "$REPO" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$IMAGES/pause" ./deploy/local-cluster/pause)
	build_image pause "$PAUSE_REF" "$IMAGES/pause" 65535:65535 "$IMAGES/pause.tar"

	# As deploy/image/Dockerfile builds it: static, trimmed, the version and commit linked in.
	local version commit
	version=$(git -C "$REPO" describe --tags --always --dirty 2>/dev/null || echo devel)
	commit=$(git -C "$REPO" rev-parse HEAD 2>/dev/null || echo unknown)
	log "building authzbench $version, static"
	(cd "$REPO" && CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags "-s -w \
		-X github.com/authzbench/authzbench/internal/buildinfo.Version=$version \
		-X github.com/authzbench/authzbench/internal/buildinfo.Commit=$commit" \
		-o "$IMAGES/authzbench" ./cmd/authzbench)
	build_image authzbench "$IMAGE_REF" "$IMAGES/authzbench" 65532:65532 "$IMAGES/authzbench.tar"
	echo "$commit" >"$IMAGES/authzbench.commit"
	log "built: $BIN, $IMAGES/authzbench.tar ($version), $IMAGES/pause.tar"
}

# --- processes: started detached, each recorded by PID and executable --------------------------

SOCK=$STATE/containerd/containerd.sock
PORTS=(2379 2380 2381 6443 8181 10248 10250 10257 10259)
DAEMONS=(containerd etcd kube-apiserver kube-controller-manager kube-scheduler kubelet)

# A process that exited but was not yet reaped by init is stopped too.
running() { # running PID
	local state
	[ -r "/proc/$1/stat" ] || return 1
	state=$(sed 's/.*) \(.\).*/\1/' "/proc/$1/stat" 2>/dev/null) || return 1
	[ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}

# The PID recorded for NAME, if that process still runs the executable it was started with (a
# PID can be reused once the process is gone).
pid_of() { # pid_of NAME
	local f=$STATE/run/$1.pid pid
	[ -s "$f" ] || return 1
	pid=$(cat "$f")
	running "$pid" || return 1
	[ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$(cat "$f.exe")" ] || return 1
	echo "$pid"
}

start() { # start NAME COMMAND ARGS...
	local name=$1 exe pid
	shift
	exe=$(readlink -f "$(command -v "$1")")
	# setsid: the daemons outlive this script and its terminal; stdio goes to a log, so a
	# caller that waits on this script's output is not held open by them.
	setsid "$@" </dev/null >"$STATE/logs/$name.log" 2>&1 &
	pid=$!
	echo "$pid" >"$STATE/run/$name.pid"
	echo "$exe" >"$STATE/run/$name.pid.exe"
	sleep 0.3
	pid_of "$name" >/dev/null || die "$name exited at once; its log: $STATE/logs/$name.log
$(tail -n 20 "$STATE/logs/$name.log")"
}

# Stop NAME by its PID: SIGTERM, then SIGKILL after 30 seconds.
stop() { # stop NAME
	local name=$1 pid
	pid=$(pid_of "$name") || return 0
	log "stopping $name (PID $pid)"
	kill -TERM "$pid"
	for _ in $(seq 60); do
		running "$pid" || return 0
		sleep 0.5
	done
	log "$name (PID $pid) ignored SIGTERM for 30 s: SIGKILL"
	kill -KILL "$pid"
	for _ in $(seq 20); do
		running "$pid" || return 0
		sleep 0.5
	done
	die "$name (PID $pid) is still running"
}

wait_for() { # wait_for SECONDS WHAT PROCESS COMMAND...: until COMMAND succeeds, while PROCESS runs
	local deadline=$((SECONDS + $1)) what=$2 name=$3
	shift 3
	until "$@" >/dev/null 2>&1; do
		pid_of "$name" >/dev/null || die "$name exited while waiting for $what; its log: $STATE/logs/$name.log
$(tail -n 20 "$STATE/logs/$name.log")
(run: $0 down)"
		[ $SECONDS -lt $deadline ] || die "$what: not within $1 s; see $STATE/logs/$name.log (run: $0 down)"
		sleep 0.5
	done
}

# kubectl caches what it discovers under ~/.kube unless told: the cluster's goes with its state.
kubectl_() { "$BIN/kubectl" --kubeconfig "$STATE/admin.kubeconfig" --cache-dir "$STATE/kube-cache" "$@"; }
ctr_() { ctr --address "$SOCK" --namespace k8s.io "$@"; }

# --- up: certificates ------------------------------------------------------------------------

cert() { # cert NAME SUBJECT server|client [SUBJECT_ALT_NAMES]
	local p=$STATE/pki name=$1 subject=$2 use=$3 sans=${4:-}
	openssl ecparam -name prime256v1 -genkey -noout -out "$p/$name.key"
	{
		echo "basicConstraints=critical,CA:FALSE"
		echo "keyUsage=critical,digitalSignature,keyEncipherment"
		echo "extendedKeyUsage=${use}Auth"
		[ -z "$sans" ] || echo "subjectAltName=$sans"
	} >"$p/$name.ext"
	openssl req -new -key "$p/$name.key" -subj "$subject" |
		openssl x509 -req -CA "$p/ca.crt" -CAkey "$p/ca.key" -set_serial "0x$(openssl rand -hex 16)" \
			-days 30 -extfile "$p/$name.ext" -out "$p/$name.crt" 2>/dev/null
}

kubeconfig() { # kubeconfig NAME CERT
	cat >"$STATE/$1.kubeconfig" <<-KUBECONFIG
		apiVersion: v1
		kind: Config
		clusters:
		  - name: authzbench-local
		    cluster:
		      server: https://127.0.0.1:6443
		      certificate-authority: $STATE/pki/ca.crt
		users:
		  - name: $1
		    user:
		      client-certificate: $STATE/pki/$2.crt
		      client-key: $STATE/pki/$2.key
		contexts:
		  - name: authzbench-local
		    context:
		      cluster: authzbench-local
		      user: $1
		current-context: authzbench-local
	KUBECONFIG
}

write_pki() {
	local p=$STATE/pki
	mkdir -p "$p"
	chmod 700 "$p"
	openssl ecparam -name prime256v1 -genkey -noout -out "$p/ca.key"
	openssl req -x509 -new -key "$p/ca.key" -subj /CN=authzbench-local-ca -days 30 \
		-addext basicConstraints=critical,CA:TRUE \
		-addext keyUsage=critical,keyCertSign,cRLSign,digitalSignature -out "$p/ca.crt"
	# 10.96.0.1 is the API server's ClusterIP in the Service range below: nothing routes to it
	# (there is no kube-proxy), but the API server names it in its own Service.
	cert apiserver /CN=kube-apiserver server \
		DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,IP:127.0.0.1,IP:10.96.0.1
	cert kubelet /CN=localhost server DNS:localhost,IP:127.0.0.1
	cert apiserver-kubelet-client /O=system:masters/CN=kube-apiserver-kubelet-client client
	cert admin /O=system:masters/CN=authzbench-admin client
	cert controller-manager /CN=system:kube-controller-manager client
	cert scheduler /CN=system:kube-scheduler client
	cert node /O=system:nodes/CN=system:node:$NODE client
	openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$p/sa.key" 2>/dev/null
	openssl pkey -in "$p/sa.key" -pubout -out "$p/sa.pub"
	kubeconfig admin admin
	kubeconfig controller-manager controller-manager
	kubeconfig scheduler scheduler
	kubeconfig kubelet node
}

# --- up: containerd --------------------------------------------------------------------------

# Every path under $STATE, so `down` finds everything containerd made. restrict_oom_score_adj:
# a VM without CAP_SYS_RESOURCE in its bounding set cannot lower an oom_score_adj, and runc
# fails every sandbox trying to (containerd asks -998 for it); clamped, the scores are
# containerd's own. The only CNI network is loopback: it makes the runtime's network ready, so
# the node is Ready, and gives a pod no address, so only hostNetwork pods start.
write_containerd_config() {
	mkdir -p "$STATE/containerd" "$STATE/cni/net.d"
	cat >"$STATE/cni/net.d/10-loopback.conflist" <<-CNI
		{"cniVersion": "1.0.0", "name": "authzbench-loopback", "plugins": [{"type": "loopback"}]}
	CNI
	cat >"$STATE/containerd/config.toml" <<-TOML
		version = 2
		root = "$STATE/containerd/root"
		state = "$STATE/containerd/state"
		disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
		  "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.devmapper"]

		[grpc]
		  address = "$SOCK"

		[plugins."io.containerd.internal.v1.opt"]
		  path = "$STATE/containerd/opt"

		[plugins."io.containerd.grpc.v1.cri"]
		  sandbox_image = "$PAUSE_REF"
		  restrict_oom_score_adj = true
		  stream_server_address = "127.0.0.1"
		  stream_server_port = "0"
		  [plugins."io.containerd.grpc.v1.cri".containerd]
		    snapshotter = "overlayfs"
		    default_runtime_name = "runc"
		    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
		      runtime_type = "io.containerd.runc.v2"
		      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
		        SystemdCgroup = false
		        Root = "$STATE/runc"
		  [plugins."io.containerd.grpc.v1.cri".cni]
		    bin_dir = "$CNI_BIN"
		    conf_dir = "$STATE/cni/net.d"
	TOML
}

# The archive names the image by its full reference, which --base-name keeps as it is; the
# kubelet then finds the manifests' image without pulling it.
import_image() { # import_image ARCHIVE REF
	ctr_ images import --base-name "${2%:*}" "$1" >/dev/null
	# grep without -q reads to the end: with pipefail, -q's early exit fails ctr with SIGPIPE.
	ctr_ images ls -q | grep -xF "$2" >/dev/null || die "importing $1 did not give $2; containerd has: $(ctr_ images ls -q | tr '\n' ' ')"
}

# --- up: the kubelet -------------------------------------------------------------------------

# The kubelet sets these when it starts (protectKernelDefaults: false), and nothing sets them
# back: `up` records them, `down` restores them.
SYSCTLS=(vm/overcommit_memory kernel/panic kernel/panic_on_oops kernel/keys/root_maxkeys kernel/keys/root_maxbytes)

write_kubelet_config() {
	cat >"$STATE/kubelet.yaml" <<-YAML
		apiVersion: kubelet.config.k8s.io/v1beta1
		kind: KubeletConfiguration
		address: 127.0.0.1
		port: 10250
		readOnlyPort: 0
		healthzBindAddress: 127.0.0.1
		healthzPort: 10248
		tlsCertFile: $STATE/pki/kubelet.crt
		tlsPrivateKeyFile: $STATE/pki/kubelet.key
		authentication:
		  anonymous:
		    enabled: false
		  webhook:
		    enabled: true
		  x509:
		    clientCAFile: $STATE/pki/ca.crt
		authorization:
		  mode: Webhook
		containerRuntimeEndpoint: unix://$SOCK
		cgroupDriver: cgroupfs
		# cgroup v1 is in maintenance mode; 1.34 still runs on it when allowed.
		failCgroupV1: false
		failSwapOn: false
		podLogsDir: $STATE/pod-logs
		volumePluginDir: $STATE/kubelet-plugins
		maxPods: 30
		# No image is pulled: the only images are the imported ones, and garbage collection must
		# not remove one while no pod uses it.
		imageGCHighThresholdPercent: 100
		imageGCLowThresholdPercent: 99
		evictionHard:
		  memory.available: 100Mi
		  nodefs.available: 2%
		  imagefs.available: 2%
		serializeImagePulls: false
	YAML
}

# --- up ---------------------------------------------------------------------------------------

cmd_up() {
	need_root up
	need_commands etcd containerd containerd-shim-runc-v2 runc ctr openssl setsid ss curl
	need_built
	[ -d /sys/fs/cgroup ] || die "no /sys/fs/cgroup: the kubelet needs cgroups"
	if [ -d "$STATE" ]; then
		die "$STATE exists: a cluster is up or was not taken down (run: $0 status, or $0 down)"
	fi
	local port busy=()
	for port in "${PORTS[@]}"; do
		[ -z "$(ss -Hltn "sport = :$port")" ] || busy+=("$port")
	done
	[ ${#busy[@]} = 0 ] || die "port(s) ${busy[*]} on this machine are in use; the cluster needs ${PORTS[*]} on 127.0.0.1"
	need_disk /var/lib 1 up
	CNI_BIN=$(dirname "$(find /usr/lib/cni /opt/cni/bin -maxdepth 1 -name loopback -type f 2>/dev/null | head -n 1)")
	[ -x "$CNI_BIN/loopback" ] || die "the CNI loopback plugin is missing (run: $0 deps)"

	mkdir -p "$STATE/run" "$STATE/logs" "$STATE/results"
	# The local-1-node overlay's results volume. A hostPath is not chowned to the pods' fsGroup:
	# every shard (UID 65532) must be able to write it.
	chmod 0777 "$STATE/results"
	# Paths outside $STATE that the kubelet (its log links, its device-plugin socket, whatever
	# --root-dir says) and containerd's shims (their sockets) create if missing: `down` removes
	# those this cluster created.
	local path
	for path in /var/log/containers /var/lib/kubelet /run/containerd; do
		[ -e "$path" ] || echo "$path" >>"$STATE/run/created"
	done
	for path in "${SYSCTLS[@]}"; do
		echo "$path=$(cat "/proc/sys/$path")" >>"$STATE/run/sysctl"
	done

	log "certificates"
	write_pki
	log "containerd"
	write_containerd_config
	start containerd containerd --config "$STATE/containerd/config.toml"
	wait_for 60 "containerd's socket" containerd ctr --address "$SOCK" version
	import_image "$IMAGES/pause.tar" "$PAUSE_REF"
	import_image "$IMAGES/authzbench.tar" "$IMAGE_REF"

	log "etcd"
	start etcd etcd --name local --data-dir "$STATE/etcd" \
		--listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
		--listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
		--initial-cluster local=http://127.0.0.1:2380 --listen-metrics-urls http://127.0.0.1:2381
	wait_for 60 "etcd's health" etcd curl -fsS http://127.0.0.1:2381/health

	log "API server"
	# --endpoint-reconciler-type=none: the API server's own Endpoints cannot hold a loopback
	# address. The kubelet is reached by its name, localhost, on 127.0.0.1:10250.
	start kube-apiserver "$BIN/kube-apiserver" \
		--etcd-servers=http://127.0.0.1:2379 \
		--bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port=6443 \
		--endpoint-reconciler-type=none \
		--service-cluster-ip-range=10.96.0.0/24 \
		--client-ca-file="$STATE/pki/ca.crt" \
		--tls-cert-file="$STATE/pki/apiserver.crt" --tls-private-key-file="$STATE/pki/apiserver.key" \
		--kubelet-client-certificate="$STATE/pki/apiserver-kubelet-client.crt" \
		--kubelet-client-key="$STATE/pki/apiserver-kubelet-client.key" \
		--kubelet-certificate-authority="$STATE/pki/ca.crt" \
		--kubelet-preferred-address-types=Hostname \
		--service-account-issuer=https://kubernetes.default.svc \
		--service-account-key-file="$STATE/pki/sa.pub" \
		--service-account-signing-key-file="$STATE/pki/sa.key" \
		--authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction \
		--profiling=false
	wait_for 120 "the API server's /readyz" kube-apiserver kubectl_ get --raw /readyz

	log "controller-manager and scheduler"
	start kube-controller-manager "$BIN/kube-controller-manager" \
		--kubeconfig="$STATE/controller-manager.kubeconfig" \
		--authentication-kubeconfig="$STATE/controller-manager.kubeconfig" \
		--authorization-kubeconfig="$STATE/controller-manager.kubeconfig" \
		--bind-address=127.0.0.1 --secure-port=10257 --leader-elect=false \
		--use-service-account-credentials=true \
		--service-account-private-key-file="$STATE/pki/sa.key" --root-ca-file="$STATE/pki/ca.crt" \
		--controllers='*,-nodeipam,-service-lb-controller,-cloud-node-lifecycle' \
		--profiling=false
	start kube-scheduler "$BIN/kube-scheduler" \
		--kubeconfig="$STATE/scheduler.kubeconfig" \
		--authentication-kubeconfig="$STATE/scheduler.kubeconfig" \
		--authorization-kubeconfig="$STATE/scheduler.kubeconfig" \
		--bind-address=127.0.0.1 --secure-port=10259 --leader-elect=false --profiling=false

	log "kubelet"
	write_kubelet_config
	start kubelet "$BIN/kubelet" --config="$STATE/kubelet.yaml" \
		--kubeconfig="$STATE/kubelet.kubeconfig" --hostname-override="$NODE" \
		--root-dir="$STATE/kubelet" --cert-dir="$STATE/pki"
	wait_for 120 "node $NODE Ready" kubelet node_ready
	wait_for 60 "the default ServiceAccount" kube-controller-manager kubectl_ get serviceaccount default
	log "up: $(kubectl_ get node "$NODE" --no-headers)"
	cmd_env
}

# shellcheck disable=SC2317 # called through wait_for
node_ready() {
	[ "$(kubectl_ get node "$NODE" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}')" = True ]
}

cmd_env() {
	echo "export KUBECONFIG=$STATE/admin.kubeconfig KUBECACHEDIR=$STATE/kube-cache PATH=$BIN:\$PATH"
}

cmd_paths() {
	printf 'bin=%s\nimages=%s\nstate=%s\nkubeconfig=%s\nresults=%s\nkubecache=%s\n' \
		"$BIN" "$IMAGES" "$STATE" "$STATE/admin.kubeconfig" "$STATE/results" "$STATE/kube-cache"
}

cmd_status() {
	need_root status
	local name pid up=0
	for name in "${DAEMONS[@]}"; do
		if pid=$(pid_of "$name"); then
			printf '%-24s running, PID %s\n' "$name" "$pid"
			up=$((up + 1))
		else
			printf '%-24s not running\n' "$name"
		fi
	done
	if pid_of kube-apiserver >/dev/null; then
		kubectl_ get nodes -o wide
		kubectl_ get pods --all-namespaces -o wide
	fi
	[ "$up" = ${#DAEMONS[@]} ]
}

# --- down ------------------------------------------------------------------------------------

mounts_under_state() {
	awk -v prefix="$STATE/" 'index($5, prefix) == 1 {print $5}' /proc/self/mountinfo | sort -r
}

cgroup_dirs() { # every kubepods cgroup, in every hierarchy, deepest first
	local root
	for root in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/kubepods; do
		[ -d "$root" ] && find "$root" -depth -type d
	done
	return 0
}

# Processes of a container whose shim is gone: read from the pods' cgroups, stopped by PID.
kill_cgroup_processes() {
	local dir pid procs
	for dir in $(cgroup_dirs); do
		[ -r "$dir/cgroup.procs" ] || continue
		mapfile -t procs <"$dir/cgroup.procs"
		for pid in "${procs[@]}"; do
			log "stopping PID $pid, left in $dir"
			kill -KILL "$pid"
		done
	done
}

cmd_down() {
	need_root down
	if [ ! -d "$STATE" ]; then
		log "no cluster: $STATE does not exist"
		check_clean
		return
	fi
	# The kubelet first, so it restarts nothing; then every container, through containerd.
	stop kubelet
	if pid_of containerd >/dev/null; then
		local id
		for id in $(ctr_ containers ls -q); do
			# A pod's containers share one shim: deleting one task can take another with it,
			# which is then gone, as wanted, though its own delete fails.
			if ! ctr_ tasks delete --force "$id" >/dev/null 2>&1 && ctr_ tasks ls -q | grep -xF "$id" >/dev/null; then
				die "cannot delete container $id's task (see $STATE/logs/containerd.log)"
			fi
			ctr_ containers delete "$id"
		done
	fi
	stop kube-scheduler
	stop kube-controller-manager
	stop kube-apiserver
	stop etcd
	stop containerd
	# A shim outlives containerd while it holds a task; each wrote its PID in its bundle.
	local f pid
	for f in "$STATE"/containerd/state/io.containerd.runtime.v2.task/*/*/shim.pid; do
		[ -s "$f" ] || continue
		pid=$(cat "$f")
		if running "$pid" && [ "$(basename "$(readlink "/proc/$pid/exe")")" = containerd-shim-runc-v2 ]; then
			log "stopping containerd-shim-runc-v2 (PID $pid)"
			kill -KILL "$pid"
		fi
	done
	kill_cgroup_processes

	local m
	for m in $(mounts_under_state); do
		umount "$m" 2>/dev/null || umount --lazy "$m"
	done
	local dir
	for dir in $(cgroup_dirs); do
		rmdir "$dir"
	done
	local line
	if [ -s "$STATE/run/sysctl" ]; then
		while IFS= read -r line; do
			echo "${line#*=}" >"/proc/sys/${line%%=*}"
		done <"$STATE/run/sysctl"
	fi
	# The kubelet links each container's log into /var/log/containers; the links point into $STATE.
	if [ -d /var/log/containers ]; then
		find /var/log/containers -maxdepth 1 -type l -lname "$STATE/*" -delete
	fi
	local created=()
	[ ! -s "$STATE/run/created" ] || mapfile -t created <"$STATE/run/created"
	for path in "${created[@]}"; do
		rm -rf "$path"
	done
	rm -rf "$STATE"
	check_clean "${created[@]}"
}

# What `down` promises: no mount under the state, no kubepods cgroup, no state, and none of the
# directories the cluster created elsewhere (check_clean PATH...).
check_clean() {
	local left=() path
	for path in "$STATE" "$@"; do
		[ ! -e "$path" ] || left+=("$path")
	done
	[ -z "$(mounts_under_state)" ] || left+=("mounts: $(mounts_under_state | tr '\n' ' ')")
	[ -z "$(cgroup_dirs)" ] || left+=("cgroups: $(cgroup_dirs | tr '\n' ' ')")
	[ ${#left[@]} = 0 ] || die "down left: ${left[*]}"
	log "down: no process, mount, cgroup or file of the cluster is left"
}

# One compound command, read whole before it runs, ending in exit: bash reads a script as it
# goes, and this one runs for minutes, so an edit made meanwhile must not be read into it.
{
	case "${1:-}" in
	deps) cmd_deps ;;
	build) cmd_build ;;
	up) cmd_up ;;
	status) cmd_status ;;
	env) cmd_env ;;
	paths) cmd_paths ;;
	down) cmd_down ;;
	*) usage "${1:-}" ;;
	esac
	exit
}
