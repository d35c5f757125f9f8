#!/usr/bin/env bash
# Every real model runs in onnxslim's interpreter (`onnxslim run`) on the
# inputs ONNX Runtime was given (tools/oracle writes them to DIR/inputs/),
# and every output must match ONNX Runtime's within rtol 1e-4, atol 1e-5 --
# or, on the deep convolution stacks where ORT itself moves that much between
# its optimized and unoptimized runs (face_back, mlsd_*: up to 1e-2 absolute
# on offsets), be no further from ORT than twice ORT's own difference
# (onnxslim_compare_outputs --noise). The outputs must be the same bytes
# on 2 and 3 threads as on 1, and `run -O` (optimized in memory first) must
# match ORT the same way. Then `onnxslim verify M M` must pass.
#
# usage: ort_interpreter.sh ONNXSLIM COMPARE_OUTPUTS [MODEL_CACHE]
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
onnxslim="$1"
compare="$2"
cache="${3:-${ONNXSLIM_MODEL_CACHE:-$root/.cache/models}}"
source "$root/tests/oracle/oracle_env.sh"

passed=0 failed=0 failures=()
for name in $(node -e 'for (const m of require(process.argv[1]).models) console.log(m.name)' "$spec"); do
  model="$cache/$name.onnx"
  [ -f "$model" ] || { echo "error: $model missing: run scripts/fetch-models.sh" >&2; exit 1; }
  out="$tmp/$name"; mkdir -p "$out/ort" "$out/ours"
  if ! node "$oracle" "$model" --out "$out/ort" --spec "$spec:$name" --seed 7 --quiet >/dev/null 2>"$out/err" ||
     ! node "$oracle" "$model" --out "$out/noopt" --spec "$spec:$name" --seed 7 --no-optimize --quiet >/dev/null 2>>"$out/err"; then
    failed=$((failed + 1)); failures+=("$name: onnxruntime: $(cat "$out/err")"); continue
  fi
  inputs=()
  for f in "$out/ort/inputs"/*.pb; do
    inputs+=(--input "$f")
  done
  if ! "$onnxslim" run "$model" "${inputs[@]}" --output-dir "$out/ours" -q 2>"$out/err"; then
    failed=$((failed + 1)); failures+=("$name: onnxslim run: $(cat "$out/err")"); continue
  fi
  if ! "$compare" "$out/ort" "$out/ours" --rtol 1e-4 --atol 1e-5 --noise "$out/noopt" >"$out/cmp"; then
    failed=$((failed + 1)); failures+=("$name: outputs differ from ONNX Runtime: $(cat "$out/cmp")"); continue
  fi
  # The same bits on two and three threads as on one (the default).
  differ=""
  for threads in 2 3; do
    mkdir -p "$out/t$threads"
    if ! "$onnxslim" run "$model" "${inputs[@]}" --output-dir "$out/t$threads" -q --threads "$threads" 2>"$out/err"; then
      differ="onnxslim run --threads $threads: $(cat "$out/err")"; break
    fi
    for f in "$out/ours"/*.pb; do
      cmp -s "$f" "$out/t$threads/$(basename "$f")" ||
        { differ="$(basename "$f" .pb) differs between 1 and $threads threads"; break 2; }
    done
  done
  if [ -n "$differ" ]; then
    failed=$((failed + 1)); failures+=("$name: $differ"); continue
  fi
  # `run -O` (the default pipeline in memory first) still matches ORT.
  mkdir -p "$out/opt"
  if ! "$onnxslim" run "$model" "${inputs[@]}" --output-dir "$out/opt" -q -O 2>"$out/err" ||
     ! "$compare" "$out/ort" "$out/opt" --rtol 1e-4 --atol 1e-5 --noise "$out/noopt" >"$out/cmpO"; then
    failed=$((failed + 1)); failures+=("$name: run -O: $(cat "$out/err" "$out/cmpO" 2>/dev/null)"); continue
  fi
  if ! "$onnxslim" verify "$model" "$model" --input-specs "$spec:$name" >"$out/verify" 2>&1; then
    failed=$((failed + 1)); failures+=("$name: verify M M failed: $(cat "$out/verify")"); continue
  fi
  passed=$((passed + 1)); echo "ok   $name (matches ONNX Runtime, also with -O; same bits on 1, 2, 3 threads; verify M M passes)"; sed 's/^/     /' "$out/cmp"
done
for f in "${failures[@]}"; do echo "FAIL $f"; done
echo "interpreter vs ort: $passed passed, $failed failed"
[ "$failed" = 0 ]
