#!/usr/bin/env bash
# float16 models through the default pipeline (its model check on), against
# ONNX Runtime.
#
# The corpus: the float16 forms of tests/models/float16/ (fp16 weights and
# arithmetic: MatMul+Add, Conv+BatchNormalization, a CNN, a LayerNorm, a
# GELU, an attention), and the `--dtype fp16` output of every fetched real
# model and of every transformer export in ../shared/models/transformers,
# fed back in as a model of its own. For each:
#
#   - `onnxslim IN OUT --verify-each` succeeds: the default model check
#     compares each output with the tolerance of the precision it is
#     computed in (runtime/Compare.h: float16's rtol 1e-2, atol 1e-3 + 1e-2
#     of the output's scale), so a rewrite that moves a float16 result by an
#     ulp is no failure; the summary must say it used float16's tolerance,
#     or that it proved the model without running it (a model optimized
#     already, fed back in, gets exact rewrites only);
#   - the output is valid (`onnxslim check`) and loads in ONNX Runtime;
#   - ONNX Runtime's outputs of the input and of the output on the same
#     seeded inputs agree within float16's tolerance, and so do the
#     interpreter's (`onnxslim verify`, which picks the tolerance itself).
#
# Prints: model, nodes before -> after, the model check's max abs diff, result.
#
# usage: ort_float16_models.sh ONNXSLIM COMPARE_OUTPUTS [MODEL_CACHE] [TRANSFORMERS_DIR]
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
onnxslim="$1"
compare="$2"
cache="${3:-$root/.cache/models}"
transformers="${4:-$root/../shared/models/transformers}"
source "$root/tests/oracle/oracle_env.sh"
[ -d "$transformers" ] ||
  { echo "error: $transformers missing (the shared transformer exports; pass their folder as 4th argument)" >&2; exit 1; }

passed=0 failed=0 failures=() rows=()
fail() { failed=$((failed + 1)); failures+=("$1"); }
nodes() { "$onnxslim" "$1" --inspect 2>/dev/null | sed -n 's/^nodes: *\([0-9]*\).*/\1/p' | head -1; }

# check NAME INPUT_MODEL [ORACLE_ARGS...]: the steps above on one float16 model.
check() {
  local name="$1" in="$2"; shift 2
  local out="$tmp/$name"; mkdir -p "$out/a" "$out/b"
  if ! "$onnxslim" "$in" "$out/opt.onnx" --verify-each >"$out/sum" 2>"$out/err"; then
    fail "$name: onnxslim: $(head -c 600 "$out/err")"; return
  fi
  if ! grep -q "^model check: .*\(tolerance of float16\|proved without running\)" "$out/sum"; then
    fail "$name: the model check did not run with float16's tolerance: $(grep 'model check' "$out/sum")"; return
  fi
  if ! "$onnxslim" check "$out/opt.onnx" >"$out/chk" 2>&1; then
    fail "$name: the output is invalid: $(head -c 400 "$out/chk")"; return
  fi
  if ! node "$oracle" "$in" --out "$out/a" --seed 11 --quiet "$@" >/dev/null 2>"$out/oerr"; then
    fail "$name: ONNX Runtime cannot run the input: $(head -c 400 "$out/oerr")"; return
  fi
  local inputs=()
  for f in "$out/a"/inputs/*.pb; do [ -f "$f" ] && inputs+=(--input "$f"); done
  if ! node "$oracle" "$out/opt.onnx" --out "$out/b" "${inputs[@]}" --quiet >/dev/null 2>"$out/oerr"; then
    fail "$name: ONNX Runtime cannot load or run the output: $(head -c 400 "$out/oerr")"; return
  fi
  if ! "$compare" "$out/a" "$out/b" --rtol 1e-2 --atol 1e-3 --scaled-atol 1e-2 >"$out/cmp"; then
    fail "$name: ONNX Runtime's outputs differ beyond float16's tolerance: $(cat "$out/cmp")"; return
  fi
  if ! "$onnxslim" verify "$in" "$out/opt.onnx" "${inputs[@]}" >"$out/ver" 2>&1; then
    fail "$name: the interpreter's outputs differ: $(cat "$out/ver")"; return
  fi
  local diff
  diff=$(sed -n 's/^model check: .*max abs diff \([^,]*\),.*/\1/p' "$out/sum")
  rows+=("$(printf '%-26s %5s -> %-5s %-10s ok' "$name" "$(nodes "$in")" "$(nodes "$out/opt.onnx")" "$diff")")
  passed=$((passed + 1))
}

# 1. The float16 forms.
for src in "$root"/tests/models/float16/*.onnxtxt; do
  name="$(basename "$src" .onnxtxt)"
  mkdir -p "$tmp/src"
  "$onnxslim" "$src" "$tmp/src/$name.onnx" -q --passes= || { fail "$name: cannot write the text model"; continue; }
  check "$name" "$tmp/src/$name.onnx"
done

# 2. --dtype fp16 outputs of the real models, fed back in.
for name in $(node -e 'for (const m of require(process.argv[1]).models) console.log(m.name)' "$spec"); do
  model="$cache/$name.onnx"
  [ -f "$model" ] || { echo "error: $model missing: run scripts/fetch-models.sh" >&2; exit 1; }
  mkdir -p "$tmp/fp16"
  if ! "$onnxslim" "$model" "$tmp/fp16/$name.onnx" -q --dtype fp16 --input-specs "$spec:$name" 2>"$tmp/fp16/$name.err"; then
    fail "$name: --dtype fp16: $(cat "$tmp/fp16/$name.err")"; continue
  fi
  check "$name.fp16" "$tmp/fp16/$name.onnx" --spec "$spec:$name"
done

# 3. --dtype fp16 outputs of the transformer exports, fed back in.
for dir in "$transformers"/*/; do
  name="$(basename "$dir")"
  [ -f "$dir/model.onnx" ] || continue
  mkdir -p "$tmp/fp16"
  if ! "$onnxslim" "$dir/model.onnx" "$tmp/fp16/$name.onnx" -q --dtype fp16 2>"$tmp/fp16/$name.err"; then
    fail "$name: --dtype fp16: $(cat "$tmp/fp16/$name.err")"; continue
  fi
  check "$name.fp16" "$tmp/fp16/$name.onnx"
done

printf '%-26s %5s    %-5s %-10s %s\n' model nodes after "check diff" result
for r in "${rows[@]}"; do echo "$r"; done
for f in "${failures[@]}"; do echo "FAIL $f"; done
echo "float16 models: $passed passed, $failed failed"
[ "$failed" = 0 ]
