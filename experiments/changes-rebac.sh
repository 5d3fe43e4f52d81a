#!/usr/bin/env bash
# OpenFGA's and SpiceDB's servers with 1 % writes: a relationship family's own stream (github-N's
# collaborators and team memberships removed and added) at RATE/100 changes a second beside an
# open loop of RATE checks a second, in each consistency the engine names, three repetitions
# interleaved: each round runs every engine × consistency once, so a machine that slows for a
# while slows every cell alike.
#
#   experiments/changes-rebac.sh RESULTS_DIR [seconds] [rate] [workload]
#
# Each run: WORKLOAD (default github-1000), RATE (default 100) checks a second, RATE/100 writes a
# second, --warmup 2s, SECONDS (default 20) measured, --stale-allowed left to the consistency's
# promise; kept as TARGET-CONSISTENCY-rROUND.json (the result: changes.answers, stale ages,
# time to visible, new-enemy window) and .txt (the table). A run exits 1 when it missed its rate
# or got a wrong answer: the script goes on and says so. Needs authzbench and authzbench-spicedb on
# PATH, or AUTHZBENCH naming a built authzbench with authzbench-spicedb beside it.
set -uo pipefail
[ $# -ge 1 ] || { echo "usage: $0 RESULTS_DIR [seconds] [rate] [workload]" >&2; exit 2; }
out=$1; secs=${2:-20}; rate=${3:-100}; workload=${4:-github-1000}
ab=${AUTHZBENCH:-authzbench}
writes=$(awk -v r="$rate" 'BEGIN { print r / 100 }')
mkdir -p "$out"
[ -z "$(ls -A "$out")" ] || { echo "$out is not empty" >&2; exit 2; }
for round in 1 2 3; do
  for cell in spicedb/server:minimize_latency spicedb/server:at_least_as_fresh spicedb/server:fully_consistent \
      openfga/server:MINIMIZE_LATENCY openfga/server:HIGHER_CONSISTENCY; do
    target=${cell%%:*}; consistency=${cell#*:}
    name="${target/\//-}-$consistency-r$round"
    "$ab" run --workload "$workload" --target "$target" --consistency "$consistency" --changes builtin --change-rate "$writes/s" \
      --rate "$rate" --warmup 2s --duration "${secs}s" --no-progress -o "$out/$name.json" >"$out/$name.txt" 2>&1
    echo "$name: exit $?"
  done
done
