#!/usr/bin/env bash
# The default pipeline on every fetched real model and on the transformer
# test blocks: nodes, initializers, Constant nodes, constant bytes and file
# size before -> after, and wall times (process start to written file, median
# of RUNS, interleaved so that machine noise hits every column alike):
#
#   pipe      `onnxslim IN OUT --no-model-check`: load, the default pipeline,
#             save (atomic, fsynced)
#   floor     a bare protobuf parse + serialize + write + fsync of the same
#             model in its own process (bench_load_save --rss protobuf)
#   x floor   pipe / floor: the issue's target is <= 3 on every model
#   checked   `onnxslim IN OUT` as a user runs it, with the default model check
#             (both models run in the interpreter on seeded inputs: its cost
#             is inference time, see bench/interpreter_vs_ort.sh)
#
# usage: bench/pipeline_models.sh [BUILD_DIR] [RUNS] [extra onnxslim flags...]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
runs="${2:-5}"
shift $(( $# > 2 ? 2 : $# ))
onnxslim="$build/tools/onnxslim"
floor="$build/bench/bench_load_save"
spec="$root/tests/models/models.json"
cache="${ONNXSLIM_MODEL_CACHE:-$root/.cache/models}"
for exe in "$onnxslim" "$floor"; do
  [ -x "$exe" ] || { echo "error: $exe not built: run scripts/build.sh" >&2; exit 1; }
done
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

now() { date +%s%N; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# row NAME: the before/after columns of one line of the summary table.
row() { awk -F'|' -v k="$1" '$2 ~ "^ *"k" *$" {gsub(/ /,"",$3); gsub(/ /,"",$4); print $3 "->" $4}' "$tmp/summary"; }

models=()
for name in $(node -e 'for (const m of require(process.argv[1]).models) console.log(m.name)' "$spec"); do
  [ -f "$cache/$name.onnx" ] || { echo "error: $cache/$name.onnx missing: run scripts/fetch-models.sh" >&2; exit 1; }
  models+=("$cache/$name.onnx")
done
# The transformer blocks are text: written once as binary ONNX, unchanged.
for txt in "$root"/tests/models/transformers/*_block.onnxtxt; do
  name="$(basename "$txt" .onnxtxt)"
  "$onnxslim" "$txt" "$tmp/$name.onnx" --passes= -q
  models+=("$tmp/$name.onnx")
done

printf "%-12s %11s %9s %9s %20s %20s %8s %8s %8s %9s\n" model nodes inits Constant \
  "constant bytes" "file size" "pipe ms" "floor ms" "x floor" "checked"
worst=0
for model in "${models[@]}"; do
  name="$(basename "$model" .onnx)"
  "$onnxslim" "$model" "$tmp/out.onnx" --no-model-check "$@" >"$tmp/summary"
  : >"$tmp/pipe"; : >"$tmp/floor"; : >"$tmp/checked"
  for _ in $(seq "$runs"); do
    t0=$(now); "$onnxslim" "$model" "$tmp/out.onnx" -q --no-model-check "$@"; t1=$(now)
    "$floor" --rss protobuf "$model" "$tmp/pb.onnx" >/dev/null; t2=$(now)
    "$onnxslim" "$model" "$tmp/out2.onnx" -q "$@"; t3=$(now)
    echo $(( (t1 - t0) / 1000 )) >>"$tmp/pipe"; echo $(( (t2 - t1) / 1000 )) >>"$tmp/floor"
    echo $(( (t3 - t2) / 1000 )) >>"$tmp/checked"
  done
  p=$(median <"$tmp/pipe"); f=$(median <"$tmp/floor"); c=$(median <"$tmp/checked")
  printf "%-12s %11s %9s %9s %20s %20s " "$name" "$(row nodes)" "$(row initializers)" \
    "$(row Constant)" "$(row 'constant bytes')" "$(row 'file size')"
  awk -v p="$p" -v f="$f" -v c="$c" 'BEGIN { printf "%8.1f %8.1f %7.2fx %9.1f\n", p / 1000, f / 1000, p / f, c / 1000 }'
  worst=$(awk -v w="$worst" -v p="$p" -v f="$f" 'BEGIN { r = p / f; print (r > w ? r : w) }')
done
echo "worst pipe / floor: ${worst}x (target <= 3)"
