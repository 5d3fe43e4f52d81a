# Shared by the experiments over OpenFGA and SpiceDB (rebac-matrix.sh, rebac-tuples.sh,
# datastore-analyze.sh). Sourced, not run.

# start_results DIR LINE: makes DIR, which must not exist or be empty (nothing in a results
# directory is ever replaced), and starts DIR/table.txt with when, at which commit and on what
# machine the runs began, then LINE (how the script was called); both printed too.
start_results() {
  if [ -e "$1" ] && [ -n "$(ls -A "$1")" ]; then
    echo "$1 exists and is not empty: name a new results directory" >&2; exit 2
  fi
  mkdir -p "$1"
  {
    echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD), $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), load average $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "# $2"
  } | tee "$1/table.txt"
}

# caches_off TARGET: sets the array caches to the flags that turn off TARGET's decision caches,
# so that every check reaches the engine's datastore.
caches_off() {
  case $1 in
    openfga/*) caches=(--openfga-check-query-cache off --openfga-check-iterator-cache off --openfga-cache-controller off) ;;
    spicedb/*) caches=(--spicedb-dispatch-cache off) ;;
    *) echo "$1: not an OpenFGA or SpiceDB target" >&2; exit 2 ;;
  esac
}
