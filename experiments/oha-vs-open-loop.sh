#!/usr/bin/env bash
# What authzbench's open loop costs per request, against oha (a Rust load generator with an open
# loop of its own) at the same rates, and against authzbench's own closed loop at the same rate.
#
#   experiments/oha-vs-open-loop.sh [rounds] [seconds] [rates...]
#
# The trivial server (a fixed allow, nothing else: `authzbench calibrate --serve`) runs pinned to
# CPU 1 and every generator pinned to CPU 0, so each one's CPU per request is its own. Each round
# runs, in this order:
#   closed  authzbench closed loop with one worker: the rate one connection reaches, R1;
#   open@R1 authzbench open loop at R1 (rounded down to 500): the same rate as the closed loop;
#   oha@R1  oha at R1 over the same 64 connections;
#   then, for each rate asked, authzbench open loop and oha at it.
# Generator CPU per request: authzbench's own account of its measured window (result
# harness.cpu_per_request_us); oha's is the kernel's account of its process (user + system, from
# /usr/bin/time) over the requests it reports, start-up included.
#
# Needs oha (`cargo install oha --locked`), taskset and python3. Servers are stopped by PID.
set -euo pipefail
rounds=${1:-3}; secs=${2:-8}; shift 2 || true
rates=("$@"); [ ${#rates[@]} -gt 0 ] || rates=(5000 10000)
conns=64
command -v oha >/dev/null || { echo "oha not found: cargo install oha --locked" >&2; exit 2; }
cd "$(dirname "$0")/.."
work=$(mktemp -d)
server_pid=""
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

CGO_ENABLED=0 go build -o "$work/authzbench" ./cmd/authzbench
ab="$work/authzbench"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
taskset -c 1 "$ab" calibrate --serve "127.0.0.1:$port" &
server_pid=$!
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
url="http://127.0.0.1:$port"

# ab_run NAME ARGS...: one authzbench run; prints "req/s cpu_us late%".
ab_run() {
  local name=$1; shift
  "$ab" run --target opa/server --url "$url" --workload nop --duration "${secs}s" --warmup 1s \
    --pin-load 0 --generator-procs 1 --no-progress --format json --force -o "$work/$name.json" "$@" >/dev/null 2>&1 || true
  python3 - "$work/$name.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["runs"][0]
s = r["summary"]; o = s.get("open") or {}
late = 100 * o.get("generator_late_sends", 0) / o["intended_sends"] if o.get("intended_sends") else 0
print(round(s["throughput_rps"]["mean"]), round(r["harness"]["cpu_per_request_us"], 1), round(late, 2))
PY
}

# oha_run RATE: oha at RATE; prints "req/s cpu_us".
oha_run() {
  /usr/bin/time -f '%U %S' -o "$work/oha.time" taskset -c 0 oha -z "${secs}s" -q "$1" -c "$conns" --no-tui \
    --output-format json -m POST -H 'Content-Type: application/json' -d '{"input":{}}' "$url/v1/data/nop" >"$work/oha.json"
  python3 - "$work/oha.json" "$work/oha.time" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
n = sum(j.get("statusCodeDistribution", {}).values())
u, s = map(float, open(sys.argv[2]).read().split()[-2:])
print(round(j["summary"]["requestsPerSec"]), round((u + s) * 1e6 / n, 1) if n else "nan")
PY
}

echo "# command: experiments/oha-vs-open-loop.sh $rounds $secs ${rates[*]}"
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD), $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); oha $(oha --version | awk '{print $2}')"
printf '%-6s %-22s %10s %14s %10s\n' round run req/s "CPU µs/req" "late %"
for r in $(seq "$rounds"); do
  read -r c1 ccpu _ < <(ab_run "closed-$r" --workers 1)
  printf '%-6s %-22s %10s %14s %10s\n' "$r" "authzbench closed x1" "$c1" "$ccpu" -
  r1=$(( c1 / 500 * 500 ))
  for rate in "$r1" "${rates[@]}"; do
    read -r a acpu alate < <(ab_run "open-$r-$rate" --rate "$rate" --connections "$conns")
    printf '%-6s %-22s %10s %14s %10s\n' "$r" "authzbench open @$rate" "$a" "$acpu" "$alate"
    read -r o ocpu < <(oha_run "$rate")
    printf '%-6s %-22s %10s %14s %10s\n' "$r" "oha @$rate" "$o" "$ocpu" -
  done
done
