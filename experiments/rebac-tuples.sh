#!/usr/bin/env bash
# Check latency against the number of tuples, on PostgreSQL beside memory: the rbac policy over a
# directory of N users (rbac-data-N: about 1.4 N + 550 tuples; 300 users make about 10^3, 7,000
# about 10^4, 70,000 about 10^5), OpenFGA in process and SpiceDB served, each engine's caches off
# so that every check reaches its datastore, allowed and denied apart (summary.decisions), and
# the load rate each engine's bulk path reached (sut.datastore). Three rounds, each round every
# size × target × datastore once (interleaved).
#
#   experiments/rebac-tuples.sh RESULTS_DIR [seconds] [users] [targets] [datastores]
#
# USERS a space-separated list of N (default "300 7000"), TARGETS (default "openfga/inproc
# spicedb/server"), DATASTORES (default "memory postgres"). Each run: one worker (the latency of
# one check at a time), --warmup 1s, SECONDS (default 5) measured; kept as
# TARGET-DATASTORE-NUSERS-rROUND.json and .txt. Every run loads rbac-data-N into the engine's
# memory datastore first, to check it (docs/rebac.md: OpenFGA's memory datastore loads in
# quadratic time), whatever datastore it measures. A run that exits non-zero is said in
# table.txt and the script goes on. ROUNDS (default 3) fewer rounds, where one run takes
# minutes (OpenFGA at 10^5 tuples). Needs authzbench and authzbench-spicedb on PATH, or
# AUTHZBENCH naming a built authzbench with authzbench-spicedb beside it.
set -uo pipefail
. "$(dirname "$0")/lib/rebac.sh"
[ $# -ge 1 ] || { echo "usage: $0 RESULTS_DIR [seconds] [users] [targets] [datastores]" >&2; exit 2; }
out=$1; secs=${2:-5}; sizes=${3:-300 7000}; targets=${4:-openfga/inproc spicedb/server}; datastores=${5:-memory postgres}
ab=${AUTHZBENCH:-authzbench}
for target in $targets; do caches_off "$target"; done # a target it cannot run refused before anything is made
start_results "$out" "ROUNDS=${ROUNDS:-3} $0 $*"
for round in $(seq "${ROUNDS:-3}"); do
  for n in $sizes; do
    for target in $targets; do
      caches_off "$target"
      for ds in $datastores; do
        name="${target/\//-}-$ds-$n-r$round"
        start=$(date +%s)
        "$ab" run --workload "rbac-data-$n" --target "$target" --datastore "$ds" "${caches[@]}" --workers 1 \
          --warmup 1s --duration "${secs}s" --no-progress -o "$out/$name.json" >"$out/$name.txt" 2>&1
        echo "$name: exit $? after $(($(date +%s) - start)) s, at $(date -u +%H:%M:%S), load average $(cut -d' ' -f1 /proc/loadavg)" | tee -a "$out/table.txt"
      done
    done
  done
done
