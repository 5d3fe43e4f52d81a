#!/usr/bin/env bash
# Pacing as the server sees it, and what it costs: authzbench's open loop, oha and k6 asked for
# the same rate against the same trivial server, judged by the arrivals the server records, not
# by anything a generator says of itself.
#
#   experiments/pacing-truth.sh RESULTS_DIR [rounds] [seconds] [rates...]
#   TOOLS="authzbench oha" experiments/pacing-truth.sh RESULTS_DIR 1 2 2000   # a subset
#
# Defaults: 3 rounds, 8 s, 2000 5000 10000 req/s, every tool found. RESULTS_DIR must not exist,
# or be empty: nothing in it is ever replaced.
#
# For each round, each rate and each tool, interleaved so a noisy machine favours none:
#   - a fresh recording server, `authzbench calibrate --serve --pacing-rate RATE --pacing-skip
#     1s`, pinned to CPU 1 (taskset), answering {"result":true} to any request;
#   - the generator pinned to CPU 0, 64 keep-alive connections, RATE req/s for 1 + SECONDS s
#     (the first second, each tool's start-up or warm-up, is left out of the judgement):
#       authzbench  run --target opa/server --url ... --workload nop --rate RATE --connections 64
#                   --warmup 1s --duration SECONDS --generator-procs 1
#       oha         -q RATE -c 64 -z (1+SECONDS)s, POST {"input":{}}
#       k6          constant-arrival-rate, RATE per 1s, 64 VUs pre-allocated and at most, POST
#   - the server stopped with SIGTERM, on which it writes its pacing report.
# Lateness is each arrival's against the ideal schedule k/RATE, placed so the earliest arrival
# relative to its slot is on time (docs/pacing.md). CPU per request is the kernel's account of
# the generator's whole process (user + system, /usr/bin/time), start-up included, over every
# request the server saw from it: the same measure for every tool.
#
# Kept in RESULTS_DIR, per run NAME = round-rate-tool: NAME.pacing.json (the server's report),
# NAME.time (user and system seconds), NAME.out/.err (the generator's output, authzbench's
# result as NAME.result.json), NAME.server.out/.err; table.txt is the table printed.
#
# Needs go, taskset, /usr/bin/time and python3; and for the other generators:
#   oha: cargo install oha --locked          (the issue's figures: oha 1.16)
#   k6:  go install go.k6.io/k6@v1.8.1
# A generator not found is named and skipped. Servers are stopped by PID.
#
# On a bigger machine (the 16-core figures of docs/pacing.md), these variables move the pins:
#   SERVER_CPUS  the recording server's CPUs, as taskset's list    (default 1)
#   GEN_CPUS     the generator's CPUs                             (default 0)
#   CONNS        keep-alive connections of every generator         (default 64)
#   GEN_PROCS    authzbench's --generator-procs                    (default 1)
#   AUTHZBENCH   an authzbench binary built already (a machine without Go: build one with
#                CGO_ENABLED=0 go build and carry it there); go is then not needed
#   BASELINE     a second authzbench binary (another commit's): the tool "baseline" runs it
#                exactly as "authzbench" is run, so two builds are compared in one interleaved run
#
#   COALESCE     the coalesced tool's --coalesce                   (default 100us)
#                (or name the window in the tool: coalesced:50us coalesced:200us, several
#                windows in one interleaved run)
#
# More tools, for reference rows (TOOLS="authzbench coalesced baseline closed oha"):
#   coalesced authzbench's open loop with --coalesce COALESCE: sends due that close together go
#             out at one wake-up, each earlier one up to COALESCE late
#   coalesced:WINDOW  the same with --coalesce WINDOW (the file names say coalesced-WINDOW)
#   baseline  BASELINE's open loop, as above
#   closed    authzbench's closed loop at its own pace: --workers CONNS on as many connections,
#             the same window; the CPU per request a generator pays when it never waits for a
#             send's time. Its arrivals follow no schedule: its lateness columns read "-".
# Without /usr/bin/time the generator's CPU is read by python3 from the same kernel account
# (resource.getrusage of the finished child).
set -euo pipefail
. "$(dirname "$0")/lib/recording.sh"
[ $# -ge 1 ] || { echo "usage: $0 RESULTS_DIR [rounds] [seconds] [rates...]" >&2; exit 2; }
out=$1; rounds=${2:-3}; secs=${3:-8}; shift; shift $(( $# < 2 ? $# : 2 ))
rates=("$@"); [ ${#rates[@]} -gt 0 ] || rates=(2000 5000 10000)
conns=${CONNS:-64}
server_cpus=${SERVER_CPUS:-1}
gen_cpus=${GEN_CPUS:-0}
gen_procs=${GEN_PROCS:-1}
needs=(taskset python3)
[ -n "${AUTHZBENCH:-}" ] || needs+=(go)
for need in "${needs[@]}"; do
  command -v "$need" >/dev/null || { echo "$need not found" >&2; exit 2; }
done
[ "$(nproc)" -ge 2 ] || { echo "needs 2 CPUs: the server on CPU $server_cpus, the generator on CPU $gen_cpus" >&2; exit 2; }
out=$(new_results_dir "$out")

tools=()
for t in ${TOOLS:-authzbench oha k6}; do
  case $t in
    authzbench|coalesced|closed) tools+=("$t") ;;
    coalesced:*)
      # The window is checked by authzbench itself, which exits 2 on a bad one before any load;
      # here it must only be safe in a file name.
      [[ ${t#coalesced:} =~ ^[0-9]+(ns|us|ms)$ ]] || { echo "tool $t: the window is a number and ns, us or ms (coalesced:200us)" >&2; exit 2; }
      tools+=("$t") ;;
    baseline)
      [ -x "${BASELINE:-}" ] || { echo "the baseline tool runs \$BASELINE, an authzbench binary: set it" >&2; exit 2; }
      tools+=("$t") ;;
    oha|k6)
      if command -v "$t" >/dev/null; then tools+=("$t"); else
        how="cargo install oha --locked"; [ "$t" = k6 ] && how="go install go.k6.io/k6@v1.8.1"
        echo "# $t not found: skipped (install: $how)" | tee -a "$out/table.txt" >&2
      fi ;;
    *) echo "unknown tool $t: known authzbench, coalesced, coalesced:WINDOW, baseline, closed, oha, k6" >&2; exit 2 ;;
  esac
done
[ ${#tools[@]} -gt 0 ] || { echo "no generator to run" >&2; exit 2; }

prepare_authzbench
# timer OUTFILE COMMAND...: runs COMMAND and writes its user and system CPU seconds to OUTFILE.
if [ -x /usr/bin/time ]; then
  timer() { local o=$1; shift; /usr/bin/time -f '%U %S' -o "$o" "$@"; }
else
  timer() {
    local o=$1; shift
    python3 -c 'import resource, subprocess, sys
rc = subprocess.call(sys.argv[2:])
r = resource.getrusage(resource.RUSAGE_CHILDREN)
open(sys.argv[1], "w").write(f"{r.ru_utime} {r.ru_stime}\n")
sys.exit(rc)' "$o" "$@"
  }
fi
cat >"$work/k6.js" <<'JS'
import http from 'k6/http';
export const options = {
  discardResponseBodies: true,
  scenarios: {
    pace: {
      executor: 'constant-arrival-rate', rate: Number(__ENV.RATE), timeUnit: '1s',
      duration: __ENV.DURATION, preAllocatedVUs: Number(__ENV.VUS), maxVUs: Number(__ENV.VUS),
    },
  },
};
const body = JSON.stringify({ input: {} });
const params = { headers: { 'Content-Type': 'application/json' } };
export default function () { http.post(`${__ENV.URL}/v1/data/nop`, body, params); }
JS

# generate TOOL NAME RATE: drives the server from the generator's CPUs, timed; returns the
# generator's status.
generate() {
  local tool=$1 name=$2 rate=$3
  local timed=(timer "$out/$name.time" taskset -c "$gen_cpus")
  case $tool in
    authzbench|baseline|coalesced|coalesced:*)
      local bin=$ab extra=(); [ "$tool" = baseline ] && bin=$BASELINE
      [ "$tool" = coalesced ] && extra=(--coalesce "${COALESCE:-100us}")
      [[ $tool = coalesced:* ]] && extra=(--coalesce "${tool#coalesced:}")
      "${timed[@]}" "$bin" run --target opa/server --url "$url" --workload nop --rate "$rate" "${extra[@]}" \
      --connections "$conns" --warmup 1s --duration "${secs}s" --generator-procs "$gen_procs" --no-progress \
      --format json -o "$out/$name.result.json" ;;
    closed) "${timed[@]}" "$ab" run --target opa/server --url "$url" --workload nop --workers "$conns" \
      --warmup 1s --duration "${secs}s" --generator-procs "$gen_procs" --no-progress \
      --format json -o "$out/$name.result.json" ;;
    oha) "${timed[@]}" oha -z "$((secs + 1))s" -q "$rate" -c "$conns" --no-tui --output-format json \
      -m POST -H 'Content-Type: application/json' -d '{"input":{}}' "$url/v1/data/nop" ;;
    k6) "${timed[@]}" k6 run --quiet --no-usage-report -e RATE="$rate" -e DURATION="$((secs + 1))s" \
      -e VUS="$conns" -e URL="$url" "$work/k6.js" ;;
  esac >"$out/$name.out" 2>"$out/$name.err"
}

# row NAME TOOL RATE ROUND STATUS: one line of the table from the server's report and the time.
row() {
  python3 - "$out/$1.pacing.json" "$out/$1.time" "$@" <<'PY'
import json, os, sys
report, timefile, name, tool, rate, rnd, status = sys.argv[1:]
note = "" if status == "0" else f"generator exit {status}; see {name}.err"
try:
    p = json.load(open(report))
except (OSError, ValueError) as e:
    print(f"{rnd:<6} {rate:>7} {tool:<16} no pacing report ({e}) {note}")
    sys.exit(0)
def num(x, places=0):
    return x if isinstance(x, str) else f"{x:.{places}f}"
cpu = "-"
if os.path.exists(timefile) and p["seen"]:
    u, s = map(float, open(timefile).read().split()[-2:])
    cpu = f'{(u + s) * 1e6 / p["seen"]:.1f}'
l = p["lateness_us"]
if tool == "closed":  # no schedule to be late for
    l = {"p50": "-", "p99": "-", "max": "-"}
    p["late_over_1ms_percent"] = p["missing"] = "-"
print(f'{rnd:<6} {rate:>7} {tool:<16} {p["achieved_rps"]:>9.0f} {p["arrivals"]:>8} {num(p["missing"]):>8} '
      f'{num(l["p50"]):>8} {num(l["p99"]):>8} {num(l["max"]):>9} {num(p["late_over_1ms_percent"], 2):>8} {cpu:>8} {note}')
PY
}

{
  echo "# command: experiments/pacing-truth.sh $out $rounds $secs ${rates[*]} (tools: ${tools[*]})"
  echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown), $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
  echo "# server on CPUs $server_cpus, generator on CPUs $gen_cpus, $conns connections, authzbench --generator-procs $gen_procs"
  for t in "${tools[@]}"; do
    case $t in
      oha) echo "# $(oha --version)" ;;
      k6) echo "# $(k6 version | head -1)" ;;
    esac
  done
  echo "# lateness: µs against the ideal schedule, as the server saw the arrivals; CPU: the generator's whole process, µs per request"
  printf '%-6s %7s %-16s %9s %8s %8s %8s %8s %9s %8s %8s\n' round rate tool achieved judged missing p50 p99 max ">1ms %" "CPU µs"
} | tee -a "$out/table.txt"
for r in $(seq "$rounds"); do
  for rate in "${rates[@]}"; do
    for tool in "${tools[@]}"; do
      name="$r-$rate-${tool/:/-}"
      start_recording_server "$name" "$server_cpus" --pacing-rate "$rate" --pacing-skip 1s
      status=0
      generate "$tool" "$name" "$rate" || status=$?
      stop_recording_server "$name"
      row "$name" "$tool" "$rate" "$r" "$status" | tee -a "$out/table.txt"
    done
  done
done
