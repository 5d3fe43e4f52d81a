#!/usr/bin/env bash
# A paced replay's pacing as the server sees it: a decision log whose events are 1 ms apart,
# replayed by `authzbench run --speed S` against the recording server, which judges each arrival
# against its own event's recorded offset / S (docs/pacing.md, "Judging a replay"), not against
# anything the generator says of itself.
#
#   experiments/replay-pacing.sh RESULTS_DIR [rounds] [seconds] [speeds...]
#   experiments/replay-pacing.sh /tmp/replay-check 1 2          # one short round, to see it work
#
# Defaults: 3 rounds, a log of 10 s (10,000 events, 1 ms apart), speeds 1 2 5 (1,000, 2,000 and
# 5,000 events a second). RESULTS_DIR must not exist, or be empty: nothing in it is replaced.
#
# The log: the inputs of the built-in nop workload (`authzbench workloads export nop`), cycled,
# each written as an OPA decision-log event of path authzbench/nop/allow with result true and a
# timestamp 1 ms after the one before (python3 writes it; kept as RESULTS_DIR/decisions.jsonl).
# The trivial server answers every request {"result":true}, so every decision is reproduced.
#
# For each round and each speed, interleaved so a noisy machine favours none:
#   - a fresh recording server, `authzbench calibrate --serve 127.0.0.1:0 --pacing-schedule LOG
#     --pacing-speed S --pacing-skip-requests 1`, pinned to CPU 1 (taskset); the skip leaves out
#     the one request `run --url` sends before its load;
#   - the replay pinned to CPU 0, `authzbench run --target opa/server --url ... --decision-log LOG
#     --policy nop.rego --speed S --connections 64 --generator-procs 1`;
#   - the server stopped by PID (SIGTERM), on which it writes its pacing report.
#
# Kept in RESULTS_DIR, per run NAME = round-speed: NAME.pacing.json (the server's report),
# NAME.result.json (the replay's result), NAME.out/.err, NAME.server.out/.err; table.txt is the
# table printed. Its "schedule" column says whether the schedule the server judged (report
# `replay`) is the one the result says the run followed (`load.replay`): events, span, speed.
#
# Needs go (or AUTHZBENCH, a prebuilt binary), taskset and python3; 2 CPUs at least. The pins,
# as taskset's lists: SERVER_CPUS (default 1), GEN_CPUS (default 0); CONNS (default 64).
set -euo pipefail
. "$(dirname "$0")/lib/recording.sh"
[ $# -ge 1 ] || { echo "usage: $0 RESULTS_DIR [rounds] [seconds] [speeds...]" >&2; exit 2; }
out=$1; rounds=${2:-3}; secs=${3:-10}; shift; shift $(( $# < 2 ? $# : 2 ))
speeds=("$@"); [ ${#speeds[@]} -gt 0 ] || speeds=(1 2 5)
conns=${CONNS:-64}
server_cpus=${SERVER_CPUS:-1}
gen_cpus=${GEN_CPUS:-0}
needs=(taskset python3)
[ -n "${AUTHZBENCH:-}" ] || needs+=(go)
for need in "${needs[@]}"; do
  command -v "$need" >/dev/null || { echo "$need not found" >&2; exit 2; }
done
case $rounds$secs in *[!0-9]*) echo "rounds and seconds are whole numbers, got $rounds and $secs" >&2; exit 2 ;; esac
[ "$rounds" -ge 1 ] && [ "$secs" -ge 1 ] || { echo "rounds and seconds must be at least 1" >&2; exit 2; }
[ "$(nproc)" -ge 2 ] || { echo "needs 2 CPUs: the server on CPU $server_cpus, the replay on CPU $gen_cpus" >&2; exit 2; }
out=$(new_results_dir "$out")

prepare_authzbench

# The log: secs × 1,000 events, 1 ms apart, from the nop workload's inputs.
"$ab" workloads export nop "$work/nop" >/dev/null
log="$out/decisions.jsonl"
python3 - "$work/nop/inputs.jsonl" "$log" "$((secs * 1000))" <<'PY'
import datetime, json, sys
inputs = [json.loads(line)["input"] for line in open(sys.argv[1]) if line.strip()]
start = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
with open(sys.argv[2], "x") as f:
    for k in range(int(sys.argv[3])):
        ts = (start + datetime.timedelta(milliseconds=k)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        f.write(json.dumps({"decision_id": f"replay-pacing-{k}", "path": "authzbench/nop/allow",
                            "input": inputs[k % len(inputs)], "result": True, "timestamp": ts}) + "\n")
PY
policy="$work/nop/nop.rego"

# row NAME SPEED ROUND STATUS: one line of the table from the server's report and the result.
row() {
  python3 - "$out/$1.pacing.json" "$out/$1.result.json" "$@" <<'PY'
import json, sys
report, resultfile, name, speed, rnd, status = sys.argv[1:]
note = "" if status == "0" else f"replay exit {status}; see {name}.err"
try:
    p = json.load(open(report))
except (OSError, ValueError) as e:
    print(f"{rnd:<6} {speed:>5} no pacing report ({e}) {note}")
    sys.exit(0)
schedule = "no result"
try:
    followed = json.load(open(resultfile))["runs"][0]["load"].get("replay") or {}
    judged = p.get("replay") or {}
    same = all(followed.get(k) == judged.get(k) for k in ("events", "span_s", "speed"))
    schedule = "same" if same else f"DIFFERS: judged {judged.get('describe')}, followed {followed}"
except (OSError, ValueError, KeyError, IndexError) as e:
    schedule = f"no result ({e})"
l = p["lateness_us"]
print(f'{rnd:<6} {speed:>5} {p["achieved_rps"]:>9.0f} {p["arrivals"]:>8} {p["missing"]:>8} {p.get("extra", 0):>6} '
      f'{l["p50"]:>8.0f} {l["p99"]:>8.0f} {l["max"]:>9.0f} {p["late_over_1ms_percent"]:>8.2f}  {schedule} {note}')
PY
}

{
  echo "# command: experiments/replay-pacing.sh $out $rounds $secs ${speeds[*]}"
  echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown), $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
  echo "# log: $((secs * 1000)) events 1 ms apart; server on CPUs $server_cpus, replay on CPUs $gen_cpus, $conns connections"
  echo "# lateness: µs against each event's recorded offset / speed, as the server saw the arrivals"
  printf '%-6s %5s %9s %8s %8s %6s %8s %8s %9s %8s  %s\n' round speed achieved judged missing extra p50 p99 max ">1ms %" schedule
} | tee -a "$out/table.txt"
for r in $(seq "$rounds"); do
  for speed in "${speeds[@]}"; do
    name="$r-$speed"
    start_recording_server "$name" "$server_cpus" --pacing-schedule "$log" --pacing-speed "$speed" --pacing-skip-requests 1
    status=0
    taskset -c "$gen_cpus" "$ab" run --target opa/server --url "$url" --decision-log "$log" --policy "$policy" \
      --speed "$speed" --connections "$conns" --generator-procs 1 --no-progress --format json \
      -o "$out/$name.result.json" >"$out/$name.out" 2>"$out/$name.err" || status=$?
    stop_recording_server "$name"
    row "$name" "$speed" "$r" "$status" | tee -a "$out/table.txt"
  done
done
