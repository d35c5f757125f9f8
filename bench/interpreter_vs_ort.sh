#!/usr/bin/env bash
# Latency of onnxslim's interpreter against ONNX Runtime (tools/oracle) in
# the same run, on every fetched real model with the same inputs: one thread
# each (ours --threads 1, ORT one intra-op thread), and all threads (ours by
# --threads 0, one per core; ORT with one intra-op thread per core, its default
# on this machine). Prints the median of N runs of each and the ratios
# ours / ORT (lower is better). ORT's graph optimizer is on, as a user would
# run it (its one-thread time with it off is shown too); ours is shown both
# on the model as given (what folding and the model check's reference run)
# and with `run -O`, the default pipeline applied in memory first (what the
# model check's candidate runs, and the counterpart of ORT's optimizer).
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
printf "%-12s %8s %8s | %8s %6s %8s %6s | %8s | %8s %6s %8s %6s   (all = %s threads)\n" model "ort-1t" "noopt-1t" "ours-1t" "ratio" "-O 1t" "ratio" "ort-all" "ours-all" "ratio" "-O all" "ratio" "$cores"
ratio() { node -e "console.log(($1 / $2).toFixed(2))"; }
latency() { sed -n 's/^latency_ms: \([0-9.]*\).*/\1/p'; }
for name in $(node -e 'for (const m of require(process.argv[1]).models) console.log(m.name)' "$spec"); do
  model="$cache/$name.onnx"
  [ -f "$model" ] || { echo "error: $model missing: run scripts/fetch-models.sh" >&2; exit 1; }
  out="$tmp/$name"; mkdir -p "$out"
  ort=$(node "$oracle" "$model" --out "$out/ort" --spec "$spec:$name" --seed 7 --threads 1 --bench "$runs" --quiet | median)
  noopt=$(node "$oracle" "$model" --out "$out/ort2" --spec "$spec:$name" --seed 7 --threads 1 --no-optimize --bench "$runs" --quiet | median)
  inputs=()
  for f in "$out/ort/inputs"/*.pb; do inputs+=(--input "$f"); done
  ortAll=$(node "$oracle" "$model" --out "$out/ort3" --spec "$spec:$name" --seed 7 --threads "$cores" --bench "$runs" --quiet | median)
  ours=$("$onnxslim" run "$model" "${inputs[@]}" --output-dir "$out/ours" -q --bench "$runs" --threads 1 | latency)
  oursO=$("$onnxslim" run "$model" "${inputs[@]}" --output-dir "$out/oursO" -q --bench "$runs" --threads 1 -O | latency)
  oursAll=$("$onnxslim" run "$model" "${inputs[@]}" --output-dir "$out/ours2" -q --bench "$runs" --threads 0 | latency)
  oursOAll=$("$onnxslim" run "$model" "${inputs[@]}" --output-dir "$out/ours2O" -q --bench "$runs" --threads 0 -O | latency)
  printf "%-12s %8s %8s | %8s %5sx %8s %5sx | %8s | %8s %5sx %8s %5sx\n" "$name" "$ort" "$noopt" \
    "$ours" "$(ratio "$ours" "$ort")" "$oursO" "$(ratio "$oursO" "$ort")" "$ortAll" \
    "$oursAll" "$(ratio "$oursAll" "$ortAll")" "$oursOAll" "$(ratio "$oursOAll" "$ortAll")"
done
