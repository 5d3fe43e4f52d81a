#!/usr/bin/env bash
# OPA's server given 10 MB of data as a bundle (rbac-data-170000, --bundle-server --provenance)
# at 200 req/s open loop, with rbac-data-N's built-in stream published every 5 s as snapshot
# bundles (the whole world at each version) and as delta bundles (the change's JSON Patch
# alone, --bundle-changes delta); three rounds interleaved.
#
#   experiments/bundle-delta-opa-server.sh RESULTS_DIR [rate] [seconds] [workload size-label write-timeout]
#
# (rbac-data-1700000 100mb 120s for about 100 MB of data.)
#
# Kept as CELL-rROUND.json and .txt, read as experiments/bundle-changes-opa-server.sh's are.
# Needs authzbench on PATH, or AUTHZBENCH naming a built one.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 RESULTS_DIR [rate] [seconds]" >&2; exit 2; }
out=$1; rate=${2:-200}; secs=${3:-20}; workload=${4:-rbac-data-170000}; size=${5:-10mb}; timeout=${6:-30s}
ab=${AUTHZBENCH:-authzbench}
mkdir -p "$out"
[ -z "$(ls -A "$out")" ] || { echo "$out is not empty" >&2; exit 2; }
for round in 1 2 3; do
  for cell in snapshot delta; do
    name="$size-$cell-r$round"
    code=0
    "$ab" run --target opa/server --bundle-server --provenance --bundle-changes "$cell" --workload "$workload" \
      --rate "$rate" --warmup 2s --duration "${secs}s" --timeout "$timeout" --ready-timeout 10m --changes builtin --change-rate 0.2/s \
      --no-progress -o "$out/$name.json" >"$out/$name.txt" 2>&1 || code=$?
    echo "$name: exit $code"
  done
done
