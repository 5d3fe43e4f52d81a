#!/usr/bin/env bash
# A cache × input-skew matrix on the memory datastores: OpenFGA in process with its caches off
# (its default) or with its check query and iterator caches on, and SpiceDB served with its
# dispatch cache on (its default) or off, each over rbac's 1,000 inputs drawn uniformly or 90 %
# of the checks on 10 % of them (--input-skew hot:90/10). Three rounds, each round every cell
# once (interleaved), so a machine that slows for a while slows every cell alike.
#
#   experiments/cache-skew.sh RESULTS_DIR [seconds] [workers]
#
# Each run: rbac, WORKERS (default 2), --warmup 0s (the caches start cold, and the hit ratio
# counts the whole window), SECONDS (default 5) measured; kept as
# cache-CACHE-SKEW-rROUND.json (both targets, each with its sut.caches, hit ratio included, and
# summary.decisions) and .txt (the table). Needs authzbench and authzbench-spicedb on PATH, or
# AUTHZBENCH naming a built authzbench with authzbench-spicedb beside it.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 RESULTS_DIR [seconds] [workers]" >&2; exit 2; }
out=$1; secs=${2:-5}; workers=${3:-2}
ab=${AUTHZBENCH:-authzbench}
mkdir -p "$out"
[ -z "$(ls -A "$out")" ] || { echo "$out is not empty" >&2; exit 2; }
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD), $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
for round in 1 2 3; do
  for cache in off on; do
    if [ "$cache" = on ]; then
      caches=(--openfga-check-query-cache on --openfga-check-iterator-cache on --spicedb-dispatch-cache on)
    else
      caches=(--openfga-check-query-cache off --openfga-check-iterator-cache off --spicedb-dispatch-cache off)
    fi
    for skew in uniform hot:90/10; do
      name="cache-$cache-${skew//[:\/]/-}-r$round"
      "$ab" run --workload rbac --target openfga/inproc,spicedb/server "${caches[@]}" --input-skew "$skew" \
        --workers "$workers" --warmup 0s --duration "${secs}s" --no-progress -o "$out/$name.json" >"$out/$name.txt" 2>&1
      echo "$name: exit $?"
    done
  done
done
