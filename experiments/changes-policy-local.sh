#!/usr/bin/env bash
# OPA and Cedar in process at a fixed open-loop rate while the policy itself changes, beside
# the same rates of data writes: no changes; rbac's data stream (--changes builtin: a user's
# role revoked and granted back) at 1/s and 10/s; rbac's policy stream (--changes
# builtin-policy: a grant of the roles table withdrawn and the whole policy put back, a module
# compiled for OPA, a policy set swapped for Cedar) at 1/s and 10/s. Three rounds interleaved,
# so that a machine that slows for a while slows every cell.
#
#   experiments/changes-policy-local.sh RESULTS_DIR [rate] [seconds]
#
# Kept as CELL-rROUND.json (the result: the writes' latency under operations, changes.pause_ms,
# the decisions' latency) and .txt (its table). Needs authzbench on PATH, or AUTHZBENCH naming
# a built one.
set -uo pipefail
[ $# -ge 1 ] || { echo "usage: $0 RESULTS_DIR [rate] [seconds]" >&2; exit 2; }
out=$1; rate=${2:-500}; secs=${3:-10}
ab=${AUTHZBENCH:-authzbench}
mkdir -p "$out"
[ -z "$(ls -A "$out")" ] || { echo "$out is not empty" >&2; exit 2; }
for round in 1 2 3; do
  for cell in none data-1 data-10 policy-1 policy-10; do
    case $cell in
      none) extra=() ;;
      data-1) extra=(--changes builtin --change-rate 1/s) ;;
      data-10) extra=(--changes builtin --change-rate 10/s) ;;
      policy-1) extra=(--changes builtin-policy --change-rate 1/s) ;;
      policy-10) extra=(--changes builtin-policy --change-rate 10/s) ;;
    esac
    name="$cell-r$round"
    code=0
    "$ab" run --target opa/inproc,cedar/inproc --workload rbac --rate "$rate" --warmup 1s --duration "${secs}s" "${extra[@]}" \
      --no-progress -o "$out/$name.json" >"$out/$name.txt" 2>&1 || code=$?
    echo "$name: exit $code"
  done
done
