#!/usr/bin/env bash
# Drives one OPA server with wrk and with authzbench, alternately, on the same POST body and the
# same number of keep-alive connections, and prints each round's req/s and the ratio. Alternating
# rounds keep a noisy shared machine from favouring either tool.
#
#   experiments/wrk-vs-authzbench.sh [rounds] [connections] [seconds] [workload]
#
# Needs wrk (Debian package wrk). Everything else is authzbench: the OPA server is the one linked
# into it ("authzbench opa run --server"), stopped by PID at the end.
set -euo pipefail
rounds=${1:-5}; conns=${2:-8}; secs=${3:-10}; workload=${4:-rbac}
command -v wrk >/dev/null || { echo "wrk not found: apt-get install wrk" >&2; exit 2; }
cd "$(dirname "$0")/.."
work=$(mktemp -d)
server_pid=""
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

go build -o "$work/authzbench" ./cmd/authzbench
ab="$work/authzbench"
"$ab" workloads export "$workload" "$work/w" >/dev/null
query=$(grep -ho 'package [a-z.]*' "$work"/w/*.rego | head -1 | cut -d' ' -f2)
path="/v1/data/${query//./\/}/allow"
head -1 "$work/w/inputs.jsonl" >"$work/one.jsonl"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$ab" opa run --server --addr "127.0.0.1:$port" --log-level error "$work"/w/*.rego "$work/w/data.json" >"$work/opa.log" 2>&1 &
server_pid=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.1; done
cat >"$work/post.lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local f = io.open("$work/w/body-1.json", "r"); wrk.body = f:read("*a"); f:close()
LUA

printf '%-6s %10s %10s %7s   %s\n' round wrk authzbench ratio "generator CPU per request, µs (wrk / authzbench)"
for r in $(seq "$rounds"); do
  /usr/bin/time -f '%U %S' -o "$work/wrk.time" wrk -t2 -c"$conns" -d"${secs}s" -s "$work/post.lua" "http://127.0.0.1:$port$path" >"$work/wrk.out"
  w=$(awk '/Requests\/sec/ {print $2}' "$work/wrk.out")
  wn=$(awk '/requests in/ {print $1}' "$work/wrk.out")
  wcpu=$(awk -v n="$wn" '{printf "%.1f", ($1+$2)*1e6/n}' "$work/wrk.time")
  env ${AB_ENV:-} "$ab" run --target opa/server --url "http://127.0.0.1:$port" --policy "$work"/w/*.rego --data "$work/w/data.json" \
    --inputs "$work/one.jsonl" --query "data.$query.allow" --workers "$conns" --duration "${secs}s" --warmup 1s \
    --no-progress --format json -o "$work/r$r.json" >/dev/null 2>&1
  read -r a acpu < <(python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['runs'][0]; print(round(r['summary']['throughput_rps']['mean']), round(r['harness']['cpu_per_request_us'],1))" "$work/r$r.json")
  printf '%-6s %10.0f %10.0f %7.2f   %s / %s\n' "$r" "$w" "$a" "$(python3 -c "print($a/$w)")" "$wcpu" "$acpu"
done
