#!/usr/bin/env bash
# The cache × consistency matrix under 1 % writes: SpiceDB served {fully_consistent,
# at_least_as_fresh, minimize_latency} × its dispatch cache {on, off}, and OpenFGA in process
# {HIGHER_CONSISTENCY, MINIMIZE_LATENCY} × {no cache, check query cache, check query + iterator
# caches + cache controller}, each over its memory datastore and over a PostgreSQL authzbench
# starts (durable), for each input skew asked. Three rounds, each round every cell once
# (interleaved), so a machine that slows for a while slows every cell alike; a skew's three rounds
# all run before the next skew's, so that a matrix cut short is cut by skew.
#
#   experiments/rebac-matrix.sh RESULTS_DIR [seconds] [rate] [skews] [datastores]
#
# Each run: WORKLOAD (default rbac: 1,376 tuples, 1,000 inputs; github-1000 has a stream of its
# own, collaborators and team memberships removed and added), an open loop of RATE (default 100)
# checks a second, the workload's built-in stream at RATE/100 writes a second, --warmup 2s (it
# fills the caches; the hit ratio counts the measured phase only), SECONDS (default 5) measured,
# --stale-allowed left to the consistency's promise; SKEWS a space-separated list (default
# "uniform hot:90/10"), DATASTORES too (default "memory postgres"), CELLS (an extended regular
# expression on "ENGINE CONSISTENCY CACHES", default every cell) a part of the matrix. Kept as
# ENGINE-CONSISTENCY-CACHES-DATASTORE-SKEW-rROUND.json (sut.caches with the hit ratio,
# sut.consistency, changes.answers with the stale count, summary.decisions) and .txt (the
# tables). A run that exits non-zero (a missed rate, a wrong answer) is said in table.txt and the
# script goes on. Needs authzbench and authzbench-spicedb on PATH, or AUTHZBENCH naming a built
# authzbench with authzbench-spicedb beside it.
set -uo pipefail
. "$(dirname "$0")/lib/rebac.sh"
[ $# -ge 1 ] || { echo "usage: $0 RESULTS_DIR [seconds] [rate] [skews] [datastores]" >&2; exit 2; }
out=$1; secs=${2:-5}; rate=${3:-100}; skews=${4:-uniform hot:90/10}; datastores=${5:-memory postgres}
ab=${AUTHZBENCH:-authzbench}
workload=${WORKLOAD:-rbac}; only=${CELLS:-.}
writes=$(awk -v r="$rate" 'BEGIN { print r / 100 }')
start_results "$out" "WORKLOAD=$workload CELLS='$only' $0 $*"

# A cell: engine, consistency, the caches' name in the file name, then the cache flags.
cells=(
  "spicedb fully_consistent dispatch --spicedb-dispatch-cache on"
  "spicedb fully_consistent none --spicedb-dispatch-cache off"
  "spicedb at_least_as_fresh dispatch --spicedb-dispatch-cache on"
  "spicedb at_least_as_fresh none --spicedb-dispatch-cache off"
  "spicedb minimize_latency dispatch --spicedb-dispatch-cache on"
  "spicedb minimize_latency none --spicedb-dispatch-cache off"
  "openfga HIGHER_CONSISTENCY none --openfga-check-query-cache off --openfga-check-iterator-cache off --openfga-cache-controller off"
  "openfga HIGHER_CONSISTENCY query --openfga-check-query-cache on --openfga-check-iterator-cache off --openfga-cache-controller off"
  "openfga HIGHER_CONSISTENCY all --openfga-check-query-cache on --openfga-check-iterator-cache on --openfga-cache-controller on"
  "openfga MINIMIZE_LATENCY none --openfga-check-query-cache off --openfga-check-iterator-cache off --openfga-cache-controller off"
  "openfga MINIMIZE_LATENCY query --openfga-check-query-cache on --openfga-check-iterator-cache off --openfga-cache-controller off"
  "openfga MINIMIZE_LATENCY all --openfga-check-query-cache on --openfga-check-iterator-cache on --openfga-cache-controller on"
)
for skew in $skews; do
  for round in 1 2 3; do
    for ds in $datastores; do
      for cell in "${cells[@]}"; do
        read -r engine consistency caches flags <<<"$cell"
        grep -qE -- "$only" <<<"$engine $consistency $caches" || continue
        if [ "$engine" = spicedb ]; then target=spicedb/server; else target=openfga/inproc; fi
        name="$engine-$consistency-$caches-$ds-${skew//[:\/]/-}-r$round"
        # shellcheck disable=SC2086 # flags is a list of flags
        "$ab" run --workload "$workload" --target "$target" --datastore "$ds" --consistency "$consistency" $flags \
          --input-skew "$skew" --changes builtin --change-rate "$writes/s" --rate "$rate" --warmup 2s \
          --duration "${secs}s" --no-progress -o "$out/$name.json" >"$out/$name.txt" 2>&1
        echo "$name: exit $? at $(date -u +%H:%M:%S), load average $(cut -d' ' -f1 /proc/loadavg)" | tee -a "$out/table.txt"
      done
    done
  done
done
