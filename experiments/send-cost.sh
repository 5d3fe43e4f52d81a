#!/usr/bin/env bash
# Where an open-loop send's CPU goes: authzbench's open loop against the trivial recording
# server, sampled by perf, each sample put in one of a few places (the loop's thread put to
# sleep and woken, the send, the server's wake-up inside the send, the read of the answer,
# start-up, the Go runtime), and the generator's whole CPU (user + system, /usr/bin/time)
# shared out among them by their samples.
#
#   experiments/send-cost.sh RESULTS_DIR [seconds] [rate[:coalesce]...]
#   experiments/send-cost.sh results/send-cost-DATE 8 2000 5000 10000 10000:100us
#
# Defaults: 8 s at 2000 5000 10000 req/s. RESULTS_DIR must not exist, or be empty. Each run:
# a fresh server pinned to CPU 1, authzbench pinned to CPU 0 (64 connections, --generator-procs
# 1, --warmup 1s) under `perf record -e cpu-clock -g`, the server stopped by PID. Kept per run
# NAME = rate[-coalesce]: NAME.cost.txt (the table), NAME.time, NAME.result.json, NAME.err,
# NAME.pacing.json (the server's judgement of the arrivals); table.txt is every table printed.
#
# Sampling slows what it samples (perf's interrupts), so the generator's CPU here is a little
# above a run without perf: read the shares, and take CPU per request from pacing-truth.sh.
# Samples are placed by their call stacks, innermost first: a sample in the kernel under the
# loop's sendto is the send's, and among those, one under sock_def_readable is the wake-up of
# the server's thread (on loopback the sender's CPU delivers the bytes and wakes the reader).
#
# Needs perf, taskset, /usr/bin/time, python3, and go unless AUTHZBENCH names a built binary.
set -euo pipefail
. "$(dirname "$0")/lib/recording.sh"
[ $# -ge 1 ] || { echo "usage: $0 RESULTS_DIR [seconds] [rate[:coalesce]...]" >&2; exit 2; }
out=$1; secs=${2:-8}; shift $(( $# < 2 ? $# : 2 ))
points=("$@"); [ ${#points[@]} -gt 0 ] || points=(2000 5000 10000)
for p in "${points[@]}"; do
  [[ $p =~ ^[0-9]+(:[0-9]+(ns|us|ms))?$ ]] || { echo "point $p: a rate, or rate:coalesce (10000:100us)" >&2; exit 2; }
done
[[ $secs =~ ^[0-9]+$ ]] && [ "$secs" -ge 1 ] || { echo "seconds $secs: a whole number, 1 or more" >&2; exit 2; }
needs=(perf taskset python3 /usr/bin/time)
[ -n "${AUTHZBENCH:-}" ] || needs+=(go)
for need in "${needs[@]}"; do
  command -v "$need" >/dev/null || { echo "$need not found" >&2; exit 2; }
done
[ "$(nproc)" -ge 2 ] || { echo "needs 2 CPUs: the server on CPU 1, the generator on CPU 0" >&2; exit 2; }
out=$(new_results_dir "$out")

prepare_authzbench

cat >"$work/classify.py" <<'PY'
import collections, json, re, sys

def place(frames):
    j = ' '.join(frames)
    if 'eventLoop).run' not in j:
        if any(s in j for s in ('runtime.main', 'doInit', '_dl_start', 'ld-linux', 'rt0_go')):
            return 'start-up and end (command, inits, result)'
        if any(s in j for s in ('gcBgMarkWorker', 'gcDrain', 'bgsweep', 'bgscavenge')):
            return 'Go runtime: garbage collector'
        if any(s in j for s in ('sysmon', 'sigtramp', 'mstart', 'schedule')):
            return 'Go runtime: scheduler, monitor, signals'
        return 'other goroutines'
    if '__x64_sys_sendto' in j:
        if 'sock_def_readable' in j:
            return 'send: waking the server'
        return 'send: the rest (TCP, loopback)'
    if 'epoll_pwait2' in j:
        if any(s in j for s in ('__schedule', 'finish_task_switch', 'schedule_hrtimeout')):
            return 'wait: put to sleep and woken'
        return 'wait: the rest'
    if 'recvmsg' in j:
        return 'read: recvmsg'
    return 'loop: the rest (Go)'

stacks, timefile, pacing, name = sys.argv[1:]
counts, total = collections.Counter(), 0
for block in open(stacks, errors='replace').read().split('\n\n'):
    lines = [l.strip() for l in block.strip().split('\n') if l.strip()]
    frames = [re.sub(r'\+0x[0-9a-f]+', '', l.split(' ', 1)[1].rsplit(' (', 1)[0])
              for l in lines[1:] if ' ' in l]
    if frames:
        counts[place(frames)] += 1
        total += 1
u, s = map(float, open(timefile).read().split()[-2:])
p = json.load(open(pacing))
per = (u + s) * 1e6 / max(1, p['seen'])
l = p['lateness_us']
print(f'# {name}: {p["seen"]} requests, {u + s:.2f} s of CPU ({per:.1f} µs a request, perf '
      f'running), {total} samples; arrivals late p50 {l["p50"]:.0f} / p99 {l["p99"]:.0f} µs, '
      f'{p["late_over_1ms_percent"]:.2f} % > 1 ms')
for k, v in sorted(counts.items(), key=lambda kv: -kv[1]):
    print(f'{100 * v / total:6.1f} %  {per * v / total:6.1f} µs  {k}')
PY

{
  echo "# command: experiments/send-cost.sh $out $secs ${points[*]}"
  echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown), $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), kernel $(uname -r)"
  echo "# server on CPU 1, generator on CPU 0, 64 connections, --generator-procs 1; µs: the whole process's CPU per request, shared out by perf samples"
} | tee -a "$out/table.txt"
for p in "${points[@]}"; do
  rate=${p%%:*}; coalesce=0; [[ $p = *:* ]] && coalesce=${p#*:}
  name=$rate; [ "$coalesce" = 0 ] || name=$rate-$coalesce
  start_recording_server "$name" 1 --pacing-rate "$rate" --pacing-skip 1s
  # time is perf's child and times authzbench alone; perf's interrupts land in that time.
  taskset -c 0 perf record -q -e cpu-clock -F 4000 -g -o "$work/$name.data" -- \
    /usr/bin/time -f '%U %S' -o "$out/$name.time" \
    "$ab" run --target opa/server --url "$url" --workload nop --rate "$rate" --coalesce "$coalesce" \
    --connections 64 --warmup 1s --duration "${secs}s" --generator-procs 1 --no-progress \
    --format json -o "$out/$name.result.json" >"$out/$name.out" 2>"$out/$name.err"
  stop_recording_server "$name"
  perf script -i "$work/$name.data" 2>/dev/null >"$work/$name.stacks"
  python3 "$work/classify.py" "$work/$name.stacks" "$out/$name.time" "$out/$name.pacing.json" "$name" \
    | tee "$out/$name.cost.txt" | tee -a "$out/table.txt"
done
