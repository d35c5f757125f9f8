#!/usr/bin/env bash
# Latency of onnxslim's interpreter against ONNX Runtime (tools/oracle) in
# the same run, on every fetched real model with the same inputs: one thread
# each (ours --threads 1, ORT one intra-op thread), and all threads (ours by
# --threads 0, one per core; ORT with one intra-op thread per core, its default
# on this machine). Prints the median of N runs of each and the ratios
# ours / ORT (lower is better; ORT's graph optimizer is on, as a user would
# run it, and its one-thread time with it off is shown too).
#
# usage: bench/interpreter_vs_ort.sh [BUILD_DIR] [RUNS]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
runs="${2:-5}"
onnxslim="$build/tools/onnxslim"
oracle="$root/tools/oracle/oracle.js"
spec="$root/tests/models/models.json"
cache="${ONNXSLIM_MODEL_CACHE:-$root/.cache/models}"
[ -x "$onnxslim" ] || { echo "error: $onnxslim not built: run scripts/build.sh" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
median() { node -e 'const l=require("fs").readFileSync(0,"utf8");console.log(JSON.parse(l.trim().split("\n").pop()).median_ms.toFixed(2))'; }

cores=$(nproc)
printf "%-12s %9s %9s %9s %8s | %9s %9s %8s   (all = %s threads)\n" model "ort-1t" "noopt-1t" "ours-1t" "ratio-1t" "ort-all" "ours-all" "ratio" "$cores"
for name in $(node -e 'for (const m of require(process.argv[1]).models) console.log(m.name)' "$spec"); do
  model="$cache/$name.onnx"
  [ -f "$model" ] || { echo "error: $model missing: run scripts/fetch-models.sh" >&2; exit 1; }
  out="$tmp/$name"; mkdir -p "$out"
  ort=$(node "$oracle" "$model" --out "$out/ort" --spec "$spec:$name" --seed 7 --threads 1 --bench "$runs" --quiet | median)
  noopt=$(node "$oracle" "$model" --out "$out/ort2" --spec "$spec:$name" --seed 7 --threads 1 --no-optimize --bench "$runs" --quiet | median)
  inputs=()
  for f in "$out/ort/inputs"/*.pb; do inputs+=(--input "$f"); done
  ortAll=$(node "$oracle" "$model" --out "$out/ort3" --spec "$spec:$name" --seed 7 --threads "$cores" --bench "$runs" --quiet | median)
  latency() { sed -n 's/^latency_ms: \([0-9.]*\).*/\1/p'; }
  ours=$("$onnxslim" run "$model" "${inputs[@]}" --output-dir "$out/ours" -q --bench "$runs" --threads 1 | latency)
  oursAll=$("$onnxslim" run "$model" "${inputs[@]}" --output-dir "$out/ours2" -q --bench "$runs" --threads 0 | latency)
  ratio=$(node -e "console.log(($ours / $ort).toFixed(2))")
  ratioAll=$(node -e "console.log(($oursAll / $ortAll).toFixed(2))")
  printf "%-12s %9s %9s %9s %7sx | %9s %9s %7sx\n" "$name" "$ort" "$noopt" "$ours" "$ratio" "$ortAll" "$oursAll" "$ratioAll"
done
