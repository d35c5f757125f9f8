#!/usr/bin/env bash
# What onnxslim's transformer fusions give in ONNX Runtime, next to what ONNX
# Runtime's own optimizer reaches, on the transformer blocks of
# tests/models/transformers/ (BERT post-LN, GPT pre-LN causal, ViT, Llama
# RMSNorm + rotary, GPT-J), all in one run.
#
# Cases: every *_block.onnxtxt as written (opset 23), through the default
# pipeline; and the same block taken down to opset 14 first (convert-opset,
# no other pass: what an opset-14 exporter would give, with none of the
# LayerNormalization / Gelu / RMSNormalization / Attention /
# RotaryEmbedding ops), through `onnxslim IN OUT --target-opset 23`; and the
# opset-14 BERT block through --target-opset 17 and 20 (only the fusions
# whose op exists there).
#
# Columns:
#   nodes orig, ours      node count of the original and of onnxslim's output
#   ORT-x orig, ours      node count of the model ONNX Runtime's optimizer
#                         makes of each at its 'extended' level (saved with
#                         tools/oracle --save-optimized), and in brackets how
#                         many of those are com.microsoft contrib ops
#   off orig/ours         ONNX Runtime latency, one thread, optimizer
#                         disabled: median of the original / of ours (ms)
#                         and ours/orig
#   on orig/ours          the same with the optimizer at its default 'all'
#   min ratio off, on     ours/orig of the fastest runs (the robust figure
#                         when other processes share the cores)
#   rel diff              max relative difference of ours against the
#                         original, both run in ONNX Runtime (optimizer on)
#                         on the same seeded inputs; '!' when outside
#                         rtol 1e-4 / atol 1e-6 (the script then fails)
# Latencies: the four (model, level) sessions are timed in one process by
# bench/ort_interleaved.js, RUNS runs each after 2 warm-ups, run by run in
# turn (so that load from other processes hits all four alike).
#
# The blocks are the test models (hidden 16, 2 heads, sequence 5, FFN 32:
# latency is then mostly per-node overhead); with SIZE = E,H,S,F they are
# written anew at that size by tests/models/transformers/generate.py --size
# (same structure, seeded weights; 256,4,128,1024 for instance).
#
# usage: bench/transformers_ort.sh [BUILD_DIR] [RUNS] [SIZE]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
runs="${2:-500}"
size="${3:-}"
onnxslim="$build/tools/onnxslim"
compare="$build/tests/transforms/onnxslim_compare_outputs"
source "$root/tests/oracle/oracle_env.sh"
models="$root/tests/models/transformers"
[ -x "$onnxslim" ] || { echo "error: $onnxslim not built" >&2; exit 1; }
[ -x "$compare" ] || { echo "error: $compare not built (target onnxslim_compare_outputs)" >&2; exit 1; }
if [ -n "$size" ]; then
  python3 "$models/generate.py" --size "$size" --out "$tmp/models"
  models="$tmp/models"
fi

# Node count of the main graph of MODEL (onnxslim dump: one line per node
# between "> {" and the closing "}"); with a second argument, only the ops
# whose name starts with it (a domain such as com.microsoft.).
count_nodes() {
  "$onnxslim" dump "$1" 2>/dev/null | awk -v pre="${2:-}" '
    /^> \{/ {on = 1; next}
    on && /^\}/ {on = 0}
    on && match($0, / = [A-Za-z_][A-Za-z0-9_.]*[ (<]/) {
      op = substr($0, RSTART + 3, RLENGTH - 4)
      if (pre == "" || index(op, pre) == 1) n++
    }
    END {print n + 0}'
}
# "N(C)": nodes of the model ORT makes of MODEL at its extended level, C of
# them contrib ops.
ort_extended() {
  node "$oracle" "$1" --check-load --opt-level extended --save-optimized "$2" --quiet
  echo "$(count_nodes "$2")($(count_nodes "$2" com.microsoft.))"
}
# "median min" (ms) per LEVEL:MODEL session, timed together: times INPUTS_DIR LEVEL:MODEL...
times() {
  local inputs="$1"; shift
  node "$root/bench/ort_interleaved.js" --runs "$runs" --threads 1 --inputs "$inputs" "$@" |
    sed 's/.*"median_ms":\([^,]*\),"min_ms":\([^}]*\)}.*/\1 \2/'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }

# Cases: NAME SOURCE OPSET_OF_ORIGINAL ONNXSLIM_OPTIONS_FOR_OURS
cases=()
for src in "$models"/*_block.onnxtxt; do
  base="$(basename "$src" .onnxtxt)"; base="${base%_block}"
  cases+=("$base@23|$src|23|")
done
for src in "$models"/*_block.onnxtxt; do
  base="$(basename "$src" .onnxtxt)"; base="${base%_block}"
  cases+=("$base@14->23|$src|14|--target-opset 23")
done
cases+=("bert@14->17|$models/bert_block.onnxtxt|14|--target-opset 17")
cases+=("bert@14->20|$models/bert_block.onnxtxt|14|--target-opset 20")

printf "%-13s %11s %13s | %17s %6s | %17s %6s | %13s | %9s\n" case "nodes" "ORT-x nodes" \
  "off orig/ours ms" "ratio" "on orig/ours ms" "ratio" "min ratio" "rel diff"
printf "%-13s %11s %13s | %17s %6s | %17s %6s | %13s | %9s\n" "" "orig->ours" "orig, ours" "" "" "" "" "off     on" "ours/orig"
failed=0
for c in "${cases[@]}"; do
  IFS='|' read -r name src opset opts <<<"$c"
  out="$tmp/${name//[@>-]/_}"; mkdir -p "$out"
  if [ "$opset" = 23 ]; then
    "$onnxslim" "$src" "$out/orig.onnx" -q --passes=
  else
    "$onnxslim" "$src" "$out/orig.onnx" -q --no-model-check --passes="convert-opset{target=$opset}"
  fi
  # shellcheck disable=SC2086 # opts is a word list
  "$onnxslim" "$out/orig.onnx" "$out/ours.onnx" -q $opts
  xo="$(ort_extended "$out/orig.onnx" "$out/ortx_orig.onnx")"
  xs="$(ort_extended "$out/ours.onnx" "$out/ortx_ours.onnx")"
  node "$oracle" "$out/orig.onnx" --out "$out/a" --seed 3 --quiet >/dev/null
  inputs=()
  for f in "$out/a/inputs"/*.pb; do inputs+=(--input "$f"); done
  node "$oracle" "$out/ours.onnx" --out "$out/b" "${inputs[@]}" --quiet >/dev/null
  mark=""
  "$compare" "$out/a" "$out/b" --rtol 1e-4 --atol 1e-6 >"$out/cmp" || { mark="!"; failed=1; }
  rel=$(sed -n 's/.*max rel diff \([^ ,]*\).*/\1/p' "$out/cmp" | sort -g | tail -1)
  { read -r a0 ma0; read -r a1 ma1; read -r b0 mb0; read -r b1 mb1; } < <(times "$out/a/inputs" \
    "disabled:$out/orig.onnx" "disabled:$out/ours.onnx" "all:$out/orig.onnx" "all:$out/ours.onnx")
  printf "%-13s %11s %13s | %17s %5sx | %17s %5sx | %5sx %5sx | %8s%1s\n" "$name" \
    "$(count_nodes "$out/orig.onnx") -> $(count_nodes "$out/ours.onnx")" "$xo, $xs" \
    "$a0 / $a1" "$(ratio "$a1" "$a0")" "$b0 / $b1" "$(ratio "$b1" "$b0")" \
    "$(ratio "$ma1" "$ma0")" "$(ratio "$mb1" "$mb0")" "$rel" "$mark"
done
echo "(blocks E,H,S,F = ${size:-16,2,5,32}; ORT $(node -e 'console.log(require(process.argv[1]+"/tools/oracle/node_modules/onnxruntime-node/package.json").version)' "$root"), one intra-op thread, $runs interleaved runs each, ms)"
[ "$failed" = 0 ]
