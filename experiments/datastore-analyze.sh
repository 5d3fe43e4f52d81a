#!/usr/bin/env bash
# Checks over PostgreSQL with and without the ANALYZE authzbench runs after the load, before the
# clock: the rbac policy over N users (rbac-data-N: about 1.4 N + 550 tuples; 300 users make
# about 10^3, 7,000 about 10^4, 70,000 about 10^5), each engine's caches off so that every check
# reaches the database, one worker. Three rounds, each round every size × target × (analyzed,
# --datastore-no-analyze) once, interleaved.
#
#   experiments/datastore-analyze.sh RESULTS_DIR [seconds] [users] [targets]
#
# USERS a space-separated list of N (default "300 7000 70000"), TARGETS (default "spicedb/server";
# openfga/inproc too, but its memory check before every run loads in quadratic time: minutes at
# 70,000). Each run: --warmup 1s, SECONDS (default 5) measured; kept as
# TARGET-N-analyzed|not-rROUND.json and .txt; table.txt says when each ran and how it exited. A
# run that exits non-zero is said there and the script goes on. Needs authzbench and
# authzbench-spicedb on PATH, or AUTHZBENCH naming a built authzbench with authzbench-spicedb
# beside it, and PostgreSQL installed.
set -uo pipefail
. "$(dirname "$0")/lib/rebac.sh"
[ $# -ge 1 ] || { echo "usage: $0 RESULTS_DIR [seconds] [users] [targets]" >&2; exit 2; }
out=$1; secs=${2:-5}; sizes=${3:-300 7000 70000}; targets=${4:-spicedb/server}
ab=${AUTHZBENCH:-authzbench}
for target in $targets; do caches_off "$target"; done # a target it cannot run refused before anything is made
start_results "$out" "ROUNDS=${ROUNDS:-3} $0 $*"
for round in $(seq "${ROUNDS:-3}"); do
  for n in $sizes; do
    for target in $targets; do
      caches_off "$target"
      for analyze in analyzed not; do
        extra=()
        [ "$analyze" = not ] && extra=(--datastore-no-analyze)
        name="${target/\//-}-$n-$analyze-r$round"
        start=$(date +%s)
        "$ab" run --workload "rbac-data-$n" --target "$target" --datastore postgres "${caches[@]}" "${extra[@]}" --workers 1 \
          --warmup 1s --duration "${secs}s" --no-progress -o "$out/$name.json" >"$out/$name.txt" 2>&1
        echo "$name: exit $? after $(($(date +%s) - start)) s, at $(date -u +%H:%M:%S), load average $(cut -d' ' -f1 /proc/loadavg)" | tee -a "$out/table.txt"
      done
    done
  done
done
