#!/usr/bin/env bash
# What the default model check costs, against ONNX Runtime's own offline
# optimizer: for every fetched real model and every transformer export in
# ../shared/models/transformers, the whole-process time of
#
#   default   `onnxslim IN OUT` (default pipeline; the model check proves
#             exact rewrites structurally and runs the models otherwise)
#   no-check  `onnxslim IN OUT --no-model-check`
#   ort       ONNX Runtime's offline optimizer at the basic level, through
#             the oracle (node, session creation with optimizedModelFilePath)
#
# taken in turns in each round (median of RUNS), with default/ort as the
# ratio that counts (target: at most 3 on every row) and the summary's model
# check line (what it proved which way, and its time).
#
# usage: bench/model_check_cost.sh [BUILD_DIR] [RUNS] [TRANSFORMERS_DIR]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
runs="${2:-5}"
transformers="${3:-$root/../shared/models/transformers}"
onnxslim="$build/tools/onnxslim"
cache="${ONNXSLIM_MODEL_CACHE:-$root/.cache/models}"
[ -x "$onnxslim" ] || { echo "error: $onnxslim not built: run scripts/build.sh" >&2; exit 1; }
source "$root/tests/oracle/oracle_env.sh"

now() { date +%s%N; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

models=()
for name in $(node -e 'for (const m of require(process.argv[1]).models) console.log(m.name)' "$spec"); do
  [ -f "$cache/$name.onnx" ] || { echo "error: $cache/$name.onnx missing: run scripts/fetch-models.sh" >&2; exit 1; }
  models+=("$name=$cache/$name.onnx")
done
if [ -d "$transformers" ]; then
  for dir in "$transformers"/*/; do
    [ -f "$dir/model.onnx" ] && models+=("$(basename "$dir")=$dir/model.onnx")
  done
else
  echo "note: $transformers not found; the transformer exports are left out" >&2
fi

over=0
printf "%-18s %9s %9s %9s %7s  %s\n" model "default" "no-check" "ort" "def/ort" "model check line"
for entry in "${models[@]}"; do
  name="${entry%%=*}" model="${entry#*=}"
  line=$("$onnxslim" "$model" "$tmp/out.onnx" | grep '^model check' | head -1 || true)
  : >"$tmp/on"; : >"$tmp/off"; : >"$tmp/ort"
  for _ in $(seq "$runs"); do
    t0=$(now); "$onnxslim" "$model" "$tmp/out.onnx" -q; t1=$(now)
    "$onnxslim" "$model" "$tmp/off.onnx" -q --no-model-check; t2=$(now)
    node "$oracle" "$model" --check-load --save-optimized "$tmp/ort.onnx" --opt-level basic --quiet; t3=$(now)
    echo $(((t1 - t0) / 1000)) >>"$tmp/on"
    echo $(((t2 - t1) / 1000)) >>"$tmp/off"
    echo $(((t3 - t2) / 1000)) >>"$tmp/ort"
  done
  on=$(median <"$tmp/on") off=$(median <"$tmp/off") ort=$(median <"$tmp/ort")
  awk -v n="$name" -v a="$on" -v b="$off" -v c="$ort" -v l="${line#model check: }" \
    'BEGIN { printf "%-18s %7.0fms %7.0fms %7.0fms %6.2fx  %s\n", n, a / 1000, b / 1000, c / 1000, a / c, l }'
  awk -v a="$on" -v c="$ort" 'BEGIN { exit !(a > 3 * c) }' && over=$((over + 1))
done
echo "rows above 3x ONNX Runtime's offline optimizer: $over of ${#models[@]}"
