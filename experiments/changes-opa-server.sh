#!/usr/bin/env bash
# OPA's server at a fixed open-loop rate while its world changes: no changes, rbac's built-in
# data patches (Data API PATCH) at 1/s and 10/s, and a policy PUT of rbac's module (the same text
# again, so no decision changes: what is measured is the recompilation under the store's lock)
# at 1/s; three rounds interleaved, so that a machine that slows for a while slows every cell.
#
#   experiments/changes-opa-server.sh RESULTS_DIR [rate] [seconds]
#
# Kept as CELL-rROUND.json (the result: changes.pause_ms, near_change_latency_us against
# steady_latency_us, the timeline) and .txt (its table). PIN=auto runs the generator and OPA's
# server on cores of their own (--pin auto; none, sharing every core, by default). Needs
# authzbench on PATH, or AUTHZBENCH naming a built one with authzbench-opa beside it.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 RESULTS_DIR [rate] [seconds]" >&2; exit 2; }
out=$1; rate=${2:-2000}; secs=${3:-10}
ab=${AUTHZBENCH:-authzbench}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
[ -z "$(ls -A "$out")" ] || { echo "$out is not empty" >&2; exit 2; }
for round in 1 2 3; do
  for cell in none patch-1 patch-10 policy-1; do
    case $cell in
      none) extra=() ;;
      patch-1) extra=(--changes builtin --change-rate 1/s) ;;
      patch-10) extra=(--changes builtin --change-rate 10/s) ;;
      policy-1) extra=(--changes "$here/changes-opa/policy-put.jsonl" --change-rate 1/s) ;;
    esac
    name="$cell-r$round"
    "$ab" run --target opa/server --workload rbac --rate "$rate" --warmup 2s --duration "${secs}s" --pin "${PIN:-none}" "${extra[@]}" \
      --no-progress -o "$out/$name.json" >"$out/$name.txt" 2>&1
    echo "$name: exit $?"
  done
done
