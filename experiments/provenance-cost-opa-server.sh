#!/usr/bin/env bash
# What asking OPA's server for its provenance costs (--provenance: every decision answers the
# revision of the bundle it read, so a run whose world changes judges it exactly): rbac on OPA's
# server given its workload as a bundle, closed loop, with and without --provenance, three
# rounds interleaved.
#
#   experiments/provenance-cost-opa-server.sh RESULTS_DIR [workers] [seconds]
#
# Kept as CELL-rROUND.json and .txt. Needs authzbench on PATH, or AUTHZBENCH naming a built one.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 RESULTS_DIR [workers] [seconds]" >&2; exit 2; }
out=$1; workers=${2:-4}; secs=${3:-5}
ab=${AUTHZBENCH:-authzbench}
mkdir -p "$out"
[ -z "$(ls -A "$out")" ] || { echo "$out is not empty" >&2; exit 2; }
for round in 1 2 3; do
  for cell in off on; do
    case $cell in
      off) extra=() ;;
      on) extra=(--provenance) ;;
    esac
    name="$cell-r$round"
    code=0
    "$ab" run --target opa/server --bundle-server "${extra[@]}" --workload rbac --workers "$workers" --warmup 1s \
      --duration "${secs}s" --no-progress -o "$out/$name.json" >"$out/$name.txt" 2>&1 || code=$?
    echo "$name: exit $code"
  done
done
