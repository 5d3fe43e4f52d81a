#!/usr/bin/env bash
# rbac checks on OpenFGA (in process) and SpiceDB (served) over their memory datastores and over
# PostgreSQL (one authzbench starts, durable), three repetitions interleaved: each round runs
# every engine × datastore once, so a machine that slows for a while slows every cell alike.
#
#   experiments/datastore-rbac.sh RESULTS_DIR [seconds] [workload] [workers]
#
# Each run: WORKLOAD (default rbac; rbac-data-N for a directory of N users), WORKERS (default 2),
# --warmup 2s, SECONDS (default 10) measured; kept as
# TARGET-DATASTORE-rROUND.json (the result, with the load rate and the database's size in each
# target's sut.datastore) and .txt (the table). spicedb/inproc is left out: it has no PostgreSQL
# datastore (docs/rebac.md says why). Needs authzbench and authzbench-spicedb on PATH, or
# AUTHZBENCH naming a built authzbench with authzbench-spicedb beside it.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 RESULTS_DIR [seconds] [workload] [workers]" >&2; exit 2; }
out=$1; secs=${2:-10}; workload=${3:-rbac}; workers=${4:-2}
ab=${AUTHZBENCH:-authzbench}
mkdir -p "$out"
[ -z "$(ls -A "$out")" ] || { echo "$out is not empty" >&2; exit 2; }
for round in 1 2 3; do
  for target in openfga/inproc spicedb/server; do
    for ds in memory postgres; do
      name="${target/\//-}-$ds-r$round"
      "$ab" run --workload "$workload" --target "$target" --datastore "$ds" --workers "$workers" --warmup 2s --duration "${secs}s" \
        --no-progress -o "$out/$name.json" >"$out/$name.txt" 2>&1
      echo "$name: exit $?"
    done
  done
done
