#!/usr/bin/env bash
# Drives one OPA ext_authz gRPC server (the plugin linked into authzbench) with ghz and with
# authzbench's opa/extauthz client, alternately, closed loop, the same number of concurrent
# calls over one HTTP/2 connection, and prints each round's Check/s and generator CPU per call.
#
#   experiments/ghz-vs-extauthz.sh [rounds] [concurrency] [seconds] [workload]
#
# The workload "trivial" serves the trivial ext_authz server instead of OPA (`authzbench
# calibrate --grpc` drives the same one): every check allowed without looking at it, so the
# figures are the clients' and gRPC's own, and authzbench sends nop's requests to it.
#
# The server runs pinned to CPU 1 and each client pinned to CPU 0, so each one's CPU per call is
# its own. ghz finds the Check method through the server's reflection service; its CPU is the
# kernel's account of its process (start-up included), authzbench's its own account of the
# measured window. Needs ghz (`go install github.com/bojand/ghz/cmd/ghz@latest`), taskset and
# python3. The server is stopped by PID at the end.
set -euo pipefail
rounds=${1:-3}; conc=${2:-8}; secs=${3:-10}; workload=${4:-nop}
ghz=$(command -v ghz || echo "$(go env GOPATH)/bin/ghz")
[ -x "$ghz" ] || { echo "ghz not found: go install github.com/bojand/ghz/cmd/ghz@latest" >&2; exit 2; }
cd "$(dirname "$0")/.."
work=$(mktemp -d)
server_pid=""
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

CGO_ENABLED=0 go build -o "$work/authzbench" ./cmd/authzbench
ab="$work/authzbench"
sent=$workload
[ "$workload" = trivial ] && sent=nop
"$ab" workloads export "$sent" "$work/w" >/dev/null
query=$(grep -ho 'package [a-z.]*' "$work"/w/*.rego | head -1 | cut -d' ' -f2)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
rest=$(free_port); grpc=$(free_port)
data=()
[ -f "$work/w/data.json" ] && data=("$work/w/data.json")
if [ "$workload" = trivial ]; then
  taskset -c 1 "$ab" __trivial-extauthz-server "127.0.0.1:$grpc" >"$work/opa.log" 2>&1 &
else
  taskset -c 1 "$ab" opa run --server --addr "127.0.0.1:$rest" --log-level error \
    --set "plugins.authzbench_ext_authz_grpc.addr=127.0.0.1:$grpc" \
    --set "plugins.authzbench_ext_authz_grpc.path=${query//./\/}/allow" \
    "$work"/w/*.rego "${data[@]}" >"$work/opa.log" 2>&1 &
fi
server_pid=$!
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$grpc") 2>/dev/null && break; sleep 0.1; done
sleep 0.5
# One CheckRequest as Envoy sends it; nop decides without reading it.
check='{"attributes":{"request":{"http":{"method":"GET","path":"/people","host":"app.example","headers":{"authorization":"Basic YW5uOnBhc3N3b3Jk"}}}}}'

echo "# command: experiments/ghz-vs-extauthz.sh $rounds $conc $secs $workload"
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD), $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); $("$ghz" --version 2>&1 | head -1)"
printf '%-6s %10s %12s %7s   %s\n' round ghz authzbench ratio "client CPU per call, µs (ghz / authzbench)"
for r in $(seq "$rounds"); do
  /usr/bin/time -f '%U %S' -o "$work/ghz.time" taskset -c 0 "$ghz" --insecure --call envoy.service.auth.v3.Authorization.Check \
    -c "$conc" --connections 1 -z "${secs}s" -d "$check" --format json "127.0.0.1:$grpc" >"$work/ghz.json"
  read -r g gcpu < <(python3 - "$work/ghz.json" "$work/ghz.time" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
n = j["count"]
u, s = map(float, open(sys.argv[2]).read().split()[-2:])
bad = {k: v for k, v in j.get("statusCodeDistribution", {}).items() if k != "OK"}
if bad:
    sys.stderr.write(f"ghz: answers other than OK: {bad}\n")
print(round(j["rps"]), round((u + s) * 1e6 / n, 1))
PY
)
  # Exit status 1 means the run saw errors: they are counted in its result and printed below.
  rc=0
  "$ab" run --target opa/extauthz --url "grpc://127.0.0.1:$grpc" --workload "$sent" --workers "$conc" \
    --duration "${secs}s" --warmup 1s --pin-load 0 --generator-procs 1 --no-progress --format json -o "$work/r$r.json" >"$work/run.log" 2>&1 || rc=$?
  [ "$rc" -le 1 ] || { echo "authzbench run failed (exit $rc):" >&2; cat "$work/run.log" >&2; exit 1; }
  read -r a acpu aerr < <(python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['runs'][0]; s=r['summary']; print(round(s['throughput_rps']['mean']), round(r['harness']['cpu_per_request_us'],1), s.get('errors',0))" "$work/r$r.json")
  printf '%-6s %10s %12s %7.2f   %s / %s%s\n' "$r" "$g" "$a" "$(python3 -c "print($a/$g)")" "$gcpu" "$acpu" "$([ "$aerr" != 0 ] && echo "  (authzbench errors: $aerr)")"
done
