#!/usr/bin/env bash
# Single-thread latency of onnxslim's interpreter against ONNX Runtime (one
# intra-op thread, measured by tools/oracle in the same run) on every fetched
# real model, with the same inputs. Prints the median of N runs of each and
# the ratio ours / ORT (lower is better; ORT's graph optimizer is on, as a
# user would run it, and also shown off).
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

printf "%-12s %12s %12s %12s %10s\n" model "ort ms" "ort-noopt ms" "ours ms" "ours/ort"
for name in $(node -e 'for (const m of require(process.argv[1]).models) console.log(m.name)' "$spec"); do
  model="$cache/$name.onnx"
  [ -f "$model" ] || { echo "error: $model missing: run scripts/fetch-models.sh" >&2; exit 1; }
  out="$tmp/$name"; mkdir -p "$out"
  ort=$(node "$oracle" "$model" --out "$out/ort" --spec "$spec:$name" --seed 7 --threads 1 --bench "$runs" --quiet | median)
  noopt=$(node "$oracle" "$model" --out "$out/ort2" --spec "$spec:$name" --seed 7 --threads 1 --no-optimize --bench "$runs" --quiet | median)
  inputs=()
  for f in "$out/ort/inputs"/*.pb; do inputs+=(--input "$f"); done
  ours=$("$onnxslim" run "$model" "${inputs[@]}" --output-dir "$out/ours" -q --bench "$runs" | sed -n 's/^latency_ms: \([0-9.]*\).*/\1/p')
  ratio=$(node -e "console.log(($ours / $ort).toFixed(2))")
  printf "%-12s %12s %12s %12s %9sx\n" "$name" "$ort" "$noopt" "$ours" "$ratio"
done
