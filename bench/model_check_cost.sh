#!/usr/bin/env bash
# What the default model check costs: for every fetched real model, the
# end-to-end time of `onnxslim IN OUT` (default pipeline, outputs compared
# in the interpreter before writing) against `onnxslim IN OUT
# --no-model-check`, interleaved in this run (median of RUNS), with the
# check's own line from the summary (max differences, dims used, or why it
# was skipped).
#
# usage: bench/model_check_cost.sh [BUILD_DIR] [RUNS]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
runs="${2:-5}"
onnxslim="$build/tools/onnxslim"
spec="$root/tests/models/models.json"
cache="${ONNXSLIM_MODEL_CACHE:-$root/.cache/models}"
[ -x "$onnxslim" ] || { echo "error: $onnxslim not built: run scripts/build.sh" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

now() { date +%s%N; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

printf "%-12s %10s %10s %7s  %s\n" model "check ms" "no-chk ms" ratio "model check line"
for name in $(node -e 'for (const m of require(process.argv[1]).models) console.log(m.name)' "$spec"); do
  model="$cache/$name.onnx"
  [ -f "$model" ] || { echo "error: $model missing: run scripts/fetch-models.sh" >&2; exit 1; }
  line=$("$onnxslim" "$model" "$tmp/out.onnx" | grep '^model check' || echo "model check: (no line)")
  : >"$tmp/on"; : >"$tmp/off"
  for _ in $(seq "$runs"); do
    t0=$(now); "$onnxslim" "$model" "$tmp/out.onnx" -q; t1=$(now)
    "$onnxslim" "$model" "$tmp/off.onnx" -q --no-model-check; t2=$(now)
    echo $(( (t1 - t0) / 1000 )) >>"$tmp/on"; echo $(( (t2 - t1) / 1000 )) >>"$tmp/off"
  done
  on=$(median <"$tmp/on"); off=$(median <"$tmp/off")
  awk -v n="$name" -v a="$on" -v b="$off" -v l="${line#model check: }" \
    'BEGIN { printf "%-12s %10.1f %10.1f %6.2fx  %s\n", n, a / 1000, b / 1000, a / b, l }'
done
