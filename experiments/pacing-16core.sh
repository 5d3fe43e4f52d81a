#!/usr/bin/env bash
# The open loop's ceiling on a 16-core machine: experiments/pacing-truth.sh under three pinnings,
# so the same server-side judgement (arrival lateness against k/rate, generator CPU per request
# from the kernel) is read at the 2-core figures' rates and far beyond them.
#
#   AUTHZBENCH=/path/authzbench experiments/pacing-16core.sh RESULTS_DIR [rounds] [seconds]
#
#   small:  server on CPU 1, generator on CPU 0, 64 connections, 1 generator proc: the 2-core
#           figures' setting, to tell the machine's own timer and scheduler apart from scale;
#           2,000 5,000 10,000 req/s
#   half:   server on CPUs 8-15, generator on CPUs 0-7, 64 connections, 8 generator procs;
#           20,000 50,000 100,000 200,000 req/s
#   wide:   as half with 256 connections (oha too), for rates that 64 connections cannot carry
# Tools: TOOLS as pacing-truth.sh takes them, by default "authzbench coalesced:100us oha" (each
# send at its own time, sends due within 100 µs together, and oha where found).
# Each setting writes RESULTS_DIR/SETTING/ (table.txt and the per-run files of pacing-truth.sh).
# RESULTS_DIR must not exist, or be empty. Needs taskset and python3; oha where found.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 RESULTS_DIR [rounds] [seconds]" >&2; exit 2; }
out=$1; rounds=${2:-3}; secs=${3:-5}
[ "$(nproc)" -ge 16 ] || { echo "needs 16 CPUs, this machine has $(nproc)" >&2; exit 2; }
if [ -e "$out" ] && [ -n "$(ls -A "$out")" ]; then
  echo "$out exists and is not empty: name a new results directory" >&2; exit 2
fi
here=$(dirname "$0")
export TOOLS=${TOOLS:-authzbench coalesced:100us oha}
SERVER_CPUS=1 GEN_CPUS=0 CONNS=64 GEN_PROCS=1 \
  "$here/pacing-truth.sh" "$out/small" "$rounds" "$secs" 2000 5000 10000
SERVER_CPUS=8-15 GEN_CPUS=0-7 CONNS=64 GEN_PROCS=8 \
  "$here/pacing-truth.sh" "$out/half" "$rounds" "$secs" 20000 50000 100000 200000
SERVER_CPUS=8-15 GEN_CPUS=0-7 CONNS=256 GEN_PROCS=8 \
  "$here/pacing-truth.sh" "$out/wide" "$rounds" "$secs" 20000 50000 100000 200000
