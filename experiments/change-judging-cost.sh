#!/usr/bin/env bash
# What judging every answer against the versions it may reflect costs the generator: the same
# open-loop run of rbac on OPA's server with the world frozen and with rbac's built-in changes
# (Data API patches at 10/s), three rounds interleaved so that a machine that slows for a while
# slows both alike. The figure is the generator's CPU per request (generator.cpu_per_request_us
# in each result), which a run with changes spends on the judging and the writer beside the load.
#
#   experiments/change-judging-cost.sh RESULTS_DIR [rate] [seconds]
#
# Kept as frozen-rROUND.json / changing-rROUND.json (the results) and .txt (their tables). Needs
# authzbench on PATH, or AUTHZBENCH naming a built one with authzbench-opa beside it.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 RESULTS_DIR [rate] [seconds]" >&2; exit 2; }
out=$1; rate=${2:-1000}; secs=${3:-10}
ab=${AUTHZBENCH:-authzbench}
mkdir -p "$out"
[ -z "$(ls -A "$out")" ] || { echo "$out is not empty" >&2; exit 2; }
for round in 1 2 3; do
  for world in frozen changing; do
    extra=()
    [ "$world" = changing ] && extra=(--changes builtin --change-rate 10/s)
    name="$world-r$round"
    "$ab" run --target opa/server --workload rbac --rate "$rate" --warmup 2s --duration "${secs}s" "${extra[@]}" \
      --no-progress -o "$out/$name.json" >"$out/$name.txt" 2>&1
    echo "$name: exit $?"
  done
done
