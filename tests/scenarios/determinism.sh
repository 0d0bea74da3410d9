#!/usr/bin/env bash
# Replays a scenario RUNS times with the same seed and fails unless every trace is the same,
# byte for byte (issue 7's determinism). Usage: determinism.sh EMULATOR SCENARIO RUNS [SEED]
set -euo pipefail
emulator=$1 scenario=$2 runs=$3 seed=${4:-1}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for i in $(seq 1 "$runs"); do
  "$emulator" replay "$scenario" --seed "$seed" --trace "$dir/trace.$i" >"$dir/out.$i" || {
    cat "$dir/out.$i"; echo "run $i of $scenario failed" >&2; exit 1; }
  if [ "$i" -gt 1 ] && ! cmp -s "$dir/trace.1" "$dir/trace.$i"; then
    echo "run $i's trace differs from run 1's:" >&2
    diff "$dir/trace.1" "$dir/trace.$i" >&2 || true
    exit 1
  fi
done
echo "$runs runs of $scenario (seed $seed): $(wc -l <"$dir/trace.1") trace lines, identical"
