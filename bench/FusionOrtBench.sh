#!/usr/bin/env bash
# What the fusions buy in ONNX Runtime. For every fetched real model, in one
# run: the original, onnxslim's default-pipeline output (standard ONNX) and
# its --target=onnxruntime output (plus com.microsoft.FusedConv) are timed in
# ONNX Runtime with one intra-op thread and ORT's own graph optimizer
# disabled (--no-optimize), so the numbers show what the model file itself
# gives a runtime that does not optimize (N runs after 2 warm-ups,
# tools/oracle --bench). Prints the best (min) latency of each, which is the
# robust estimate on a shared machine, the ratios optimized / original of
# those (lower is better), the medians, node counts and file sizes
# before -> after.
#
# The three models are measured in turn, ROUNDS times (interleaved, so that
# load from other processes hits all three alike); each column keeps the
# best min and the median of the first round.
#
# usage: bench/FusionOrtBench.sh [BUILD_DIR] [RUNS] [ROUNDS]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
runs="${2:-20}"
rounds="${3:-3}"
onnxslim="$build/tools/onnxslim"
oracle="$root/tools/oracle/oracle.js"
spec="$root/tests/models/models.json"
cache="${ONNXSLIM_MODEL_CACHE:-$root/.cache/models}"
[ -x "$onnxslim" ] || { echo "error: $onnxslim not built" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# "min median" latency (ms) of MODEL in ONNX Runtime: bench MODEL OUTDIR NAME
bench() {
  node "$oracle" "$1" --out "$2" --spec "$spec:$3" --seed 7 --threads 1 --no-optimize --bench "$runs" --quiet |
    node -e 'const l=require("fs").readFileSync(0,"utf8");const b=JSON.parse(l.trim().split("\n").pop());
             console.log(b.min_ms.toFixed(3) + " " + b.median_ms.toFixed(3))'
}
# "before -> after" node counts from onnxslim's summary table (file: its output).
nodes() { awk -F'|' '$2 ~ /^ *nodes *$/ {gsub(/ /, "", $3); gsub(/ /, "", $4); print $3 " -> " $4}' "$1"; }
size() { stat -c %s "$1"; }

printf "%-11s %9s %9s %9s %8s %8s %26s %13s %13s %21s\n" model "orig ms" "slim ms" "ort ms" "slim/or" "ort/or" \
  "medians orig/slim/ort" "nodes slim" "nodes ort" "bytes orig -> slim"
for name in $(node -e 'for (const m of require(process.argv[1]).models) console.log(m.name)' "$spec"); do
  model="$cache/$name.onnx"
  [ -f "$model" ] || { echo "error: $model missing: run scripts/fetch-models.sh" >&2; exit 1; }
  out="$tmp/$name"; mkdir -p "$out"
  "$onnxslim" "$model" "$out/slim.onnx" >"$out/slim.txt"
  "$onnxslim" "$model" "$out/ort.onnx" --target=onnxruntime >"$out/ort.txt"
  t0=1e30 t1=1e30 t2=1e30 m0="" m1="" m2=""
  for ((r = 0; r < rounds; r++)); do
    read -r a ma <<<"$(bench "$model" "$out/a" "$name")"
    read -r b mb <<<"$(bench "$out/slim.onnx" "$out/b" "$name")"
    read -r c mc <<<"$(bench "$out/ort.onnx" "$out/c" "$name")"
    t0=$(node -e "console.log(Math.min($t0, $a))"); t1=$(node -e "console.log(Math.min($t1, $b))")
    t2=$(node -e "console.log(Math.min($t2, $c))")
    [ -n "$m0" ] || { m0=$ma m1=$mb m2=$mc; }
  done
  r1=$(node -e "console.log(($t1 / $t0).toFixed(3))"); r2=$(node -e "console.log(($t2 / $t0).toFixed(3))")
  printf "%-11s %9s %9s %9s %7sx %7sx %26s %13s %13s %21s\n" "$name" "$t0" "$t1" "$t2" "$r1" "$r2" "$m0/$m1/$m2" \
    "$(nodes "$out/slim.txt")" "$(nodes "$out/ort.txt")" "$(size "$model") -> $(size "$out/slim.onnx")"
done
