# Shared by the experiments that judge a generator by the arrivals at the recording server
# (pacing-truth.sh, replay-pacing.sh, send-cost.sh). Sourced, not run; the sourcing script has
# `set -euo pipefail`.

# new_results_dir DIR: makes DIR, which must not exist or be empty (nothing in a results
# directory is ever replaced), and prints its absolute path. Call before changing directory.
new_results_dir() {
  if [ -e "$1" ] && [ -n "$(ls -A "$1")" ]; then
    echo "$1 exists and is not empty: name a new results directory" >&2; exit 2
  fi
  mkdir -p "$1"
  (cd "$1" && pwd)
}

# prepare_authzbench: moves to the repository root, makes $work (a temporary folder, removed at
# exit, when the server in $server_pid is stopped too) and sets $ab: $AUTHZBENCH if set (a
# machine without Go: a binary built elsewhere with CGO_ENABLED=0), else one built from this
# checkout.
prepare_authzbench() {
  cd "$(dirname "$0")/.."
  work=$(mktemp -d)
  server_pid=""
  trap 'if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null; fi; rm -rf "$work"' EXIT
  if [ -n "${AUTHZBENCH:-}" ]; then
    ab=$(cd "$(dirname "$AUTHZBENCH")" && pwd)/$(basename "$AUTHZBENCH")
    [ -x "$ab" ] || { echo "AUTHZBENCH=$AUTHZBENCH is no executable" >&2; exit 2; }
  else
    CGO_ENABLED=0 go build -o "$work/authzbench" ./cmd/authzbench
    ab="$work/authzbench"
  fi
}

# start_recording_server NAME CPUS ARGS...: starts `authzbench calibrate --serve 127.0.0.1:0
# ARGS...` pinned to CPUS, its report in $out/NAME.pacing.json and its output beside it; sets
# server_pid and url once it serves.
start_recording_server() {
  local name=$1 cpus=$2; shift 2
  taskset -c "$cpus" "$ab" calibrate --serve 127.0.0.1:0 "$@" --pacing-out "$out/$name.pacing.json" \
    >"$out/$name.server.out" 2>"$out/$name.server.err" &
  server_pid=$!
  url=""
  for _ in $(seq 300); do
    # The shell that starts the server in the background may not have created its stderr file
    # yet: read it only once it exists, or set -e ends the script on sed's complaint.
    if [ -f "$out/$name.server.err" ]; then
      url=$(sed -n 's/.*trivial server on \(127\.0\.0\.1:[0-9]*\).*/http:\/\/\1/p' "$out/$name.server.err")
      [ -n "$url" ] && return 0
    fi
    sleep 0.1
  done
  echo "the recording server for $name did not start: $(cat "$out/$name.server.err")" >&2; exit 1
}

# stop_recording_server NAME: stops the server by its PID (SIGTERM: it judges and writes its
# report) and notes in $out/table.txt a server that did not exit cleanly.
stop_recording_server() {
  kill "$server_pid"
  wait "$server_pid" || echo "# $1: the server exited with status $?: $(tail -1 "$out/$1.server.err")" | tee -a "$out/table.txt" >&2
  server_pid=""
}
