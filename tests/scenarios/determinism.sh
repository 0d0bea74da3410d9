#!/usr/bin/env bash
# Replays each scenario RUNS times with the same seed and fails unless its traces are all the
# same, byte for byte (the scenarios' determinism).
# Usage: determinism.sh EMULATOR RUNS SEED SCENARIO...
set -euo pipefail
emulator=$1 runs=$2 seed=$3
shift 3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for scenario in "$@"; do
  for i in $(seq 1 "$runs"); do
    "$emulator" replay "$scenario" --seed "$seed" --trace "$dir/trace.$i" >"$dir/out.$i" 2>&1 || {
      cat "$dir/out.$i"; echo "run $i of $scenario failed" >&2; exit 1; }
    if [ "$i" -gt 1 ] && ! cmp -s "$dir/trace.1" "$dir/trace.$i"; then
      echo "run $i's trace of $scenario differs from run 1's:" >&2
      diff "$dir/trace.1" "$dir/trace.$i" >&2 || true
      exit 1
    fi
  done
  echo "$runs runs of $scenario (seed $seed): $(wc -l <"$dir/trace.1") trace lines, identical"
done
