#!/bin/sh
# Records rbac-decisions.jsonl, the example decision log of docs/replay.md: the first 300
# inputs of the built-in rbac workload asked of `authzbench opa run --server` (OPA linked into
# authzbench) with OPA's console decision logger on, about 150 a second with a pause of a
# second in the middle, so that a replay has a pace to follow. The log is OPA's console output
# as it wrote it (its stderr). rbac.rego and data.json are the workload's own, exported.
#
#   sh docs/replay/record.sh            # uses authzbench on PATH; AUTHZBENCH=./authzbench to pick one
set -eu
ab=${AUTHZBENCH:-authzbench}
port=${PORT:-18199}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$ab" workloads export rbac "$work" >/dev/null
cp "$work/rbac.rego" "$work/data.json" "$here/"

"$ab" opa run --server --addr "127.0.0.1:$port" --log-level error \
	--set decision_logs.console=true "$work/rbac.rego" "$work/data.json" 2>"$work/console.log" &
opa=$!
until curl -fs "http://127.0.0.1:$port/health" >/dev/null; do sleep 0.1; done

n=0
head -n 300 "$work/inputs.jsonl" | sed 's/,"expect":[a-z]*}$/}/' | while read -r body; do
	curl -fs -o /dev/null -X POST "http://127.0.0.1:$port/v1/data/authzbench/rbac/allow" -d "$body"
	n=$((n + 1))
	if [ "$n" -eq 150 ]; then sleep 1; fi
done
sleep 0.5 # the console logger writes after it answers
kill "$opa"
wait "$opa" 2>/dev/null || true
cp "$work/console.log" "$here/rbac-decisions.jsonl"
echo "$(grep -c '"msg":"Decision Log"' "$here/rbac-decisions.jsonl") decisions in $here/rbac-decisions.jsonl"
