#!/usr/bin/env bash
# OPA's server given the workload as a bundle from authzbench's bundle server, at a modest
# open-loop rate, while the world changes by bundle revisions: rbac-data-N's built-in stream
# (users moving roles) published as a snapshot bundle every 5 s, which OPA's bundle plugin
# downloads by long polling and activates; beside the same server with no changes. About 1 MB
# (rbac-data-17000) and 10 MB (rbac-data-170000) of data; every decision asks for OPA's
# provenance, so each answer is judged by the revision it names. Three rounds interleaved, so
# that a machine that slows for a while slows every cell.
#
#   experiments/bundle-changes-opa-server.sh RESULTS_DIR [rate] [seconds]
#
# Kept as CELL-rROUND.json (the result: the writes' latency, publication to activation;
# changes.pause_ms, near_change_latency_us against steady_latency_us, the timeline) and .txt
# (its table). Needs authzbench on PATH, or AUTHZBENCH naming a built one with authzbench-opa
# beside it.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 RESULTS_DIR [rate] [seconds]" >&2; exit 2; }
out=$1; rate=${2:-200}; secs=${3:-20}
ab=${AUTHZBENCH:-authzbench}
mkdir -p "$out"
[ -z "$(ls -A "$out")" ] || { echo "$out is not empty" >&2; exit 2; }
for round in 1 2 3; do
  for size in 1mb 10mb; do
    case $size in
      1mb) workload=rbac-data-17000 ;;
      10mb) workload=rbac-data-170000 ;;
    esac
    for cell in none bundle-5s; do
      case $cell in
        none) extra=() ;;
        bundle-5s) extra=(--changes builtin --change-rate 0.2/s) ;;
      esac
      name="$size-$cell-r$round"
      # --timeout bounds each write too: a 10 MB revision's activation takes seconds here.
      code=0
      "$ab" run --target opa/server --bundle-server --provenance --workload "$workload" --rate "$rate" --warmup 2s \
        --duration "${secs}s" --timeout 30s "${extra[@]}" --no-progress -o "$out/$name.json" >"$out/$name.txt" 2>&1 || code=$?
      echo "$name: exit $code"
    done
  done
done
