#!/usr/bin/env bash
# End-to-end check of `onnxslim --dtype bf16` on every fetched real model.
#
# bfloat16 exists in ONNX from opset 13, and most ops with weights (Conv,
# pooling, the RNNs) have a bfloat16 form only from opset 22, so each model
# is converted twice:
#
#   - at opset 22 (`--target-opset 22 --dtype bf16 --verify-each`): its
#     weights must take at most 55% of the float32 model's bytes unless the
#     bfloat16 fallback kept nodes in float32 (then the table says how many
#     and the bytes left), `onnxslim check` must find it valid;
#   - at the lowest opset that holds bfloat16 (the model's own, at least
#     13): ops without a bfloat16 form there stay float32 behind Casts, and
#     the ONNX checker of python3-onnx (onnx 1.12, opsets up to 17) must
#     accept it with full_check (strict type inference).
#
# Both must give the float32 model's outputs within bfloat16's tolerance
# (runtime/Compare.h: rtol 6e-2, atol 8e-3 + 6e-2 of the output's scale,
# 8 times float16's as bfloat16 keeps 8 significant bits to float16's 11)
# in the interpreter, on the seeded inputs of tests/models/models.json
# (mlsd's image gets its [0, 255] pixel range, as in ort_convert_float16.sh).
#
# ONNX Runtime: its CPU provider has no bfloat16 kernel for Add, Mul, Conv,
# MatMul, Relu... (1.30: "Could not find an implementation for Add(14)"),
# so it cannot run these models; the script tries each and says so in the
# table ("no bf16 kernel"), and compares ONNX Runtime's outputs with the
# float32 model's where it can run one. Our interpreter runs every
# bfloat16 op it supports in bfloat16 (runtime/kernels dispatch FloatTypes,
# which include BFloat16).
#
# Prints the table: model, constant bytes fp32 -> bf16 (opset 22) and their
# ratio, the interpreter's max abs diff at opset 22 / at the low opset,
# ONNX Runtime's result, and the nodes the fallback kept.
#
# usage: ort_convert_bfloat16.sh ONNXSLIM COMPARE_OUTPUTS [MODEL_CACHE]
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
onnxslim="$1"
compare="$2"
cache="${3:-$root/.cache/models}"
source "$root/tests/oracle/oracle_env.sh"
/usr/bin/python3 -c 'import onnx' 2>/dev/null ||
  { echo "error: /usr/bin/python3 has no onnx module (apt-get install python3-onnx)" >&2; exit 1; }
spec="$tmp/models.json"
node -e '
  const s = require(process.argv[1]);
  for (const m of s.models)
    if (m.name.startsWith("mlsd_"))
      for (const i of m.inputs) i.range = [0, 255];
  require("fs").writeFileSync(process.argv[2], JSON.stringify(s));' "$root/tests/models/models.json" "$spec" ||
  { echo "error: cannot read tests/models/models.json" >&2; exit 1; }

constBytes() {
  awk -F'|' '/constant bytes/ { v = $4; gsub(/ /, "", v);
    u = 1; if (v ~ /KiB$/) u = 1024; if (v ~ /MiB$/) u = 1048576; if (v ~ /GiB$/) u = 1073741824;
    gsub(/[A-Za-z]/, "", v); printf "%d\n", v * u }' "$1"
}
# The interpreter's largest abs diff over the outputs, "FAIL" when one is
# beyond the tolerance of the precision it is computed in.
interpDiff() {
  local out
  if out=$("$onnxslim" verify "$1" "$2" --input-specs "$spec:$3" 2>&1); then
    awk 'NR > 1 && / ok/ { if ($2 + 0 > m) m = $2 + 0 } END { printf "%.3g\n", m }' <<<"$out"
  else
    echo FAIL; echo "$out" >&2
  fi
}

passed=0 failed=0 failures=() rows=()
fail() { failed=$((failed + 1)); failures+=("$1"); }
for name in $(node -e 'for (const m of require(process.argv[1]).models) console.log(m.name)' "$spec"); do
  model="$cache/$name.onnx"
  [ -f "$model" ] || { echo "error: $model missing: run scripts/fetch-models.sh" >&2; exit 1; }
  out="$tmp/$name"; mkdir -p "$out/a" "$out/b"
  if ! "$onnxslim" "$model" "$out/fp32.onnx" --no-model-check >"$out/sum32" 2>"$out/err32"; then
    fail "$name: onnxslim: $(cat "$out/err32")"; continue
  fi
  # 1. Opset 22: the weights halve.
  if ! "$onnxslim" "$model" "$out/bf22.onnx" --target-opset 22 --dtype bf16 --verify-each --input-specs "$spec:$name" \
       >"$out/sum22" 2>"$out/err22"; then
    fail "$name: onnxslim --target-opset 22 --dtype bf16: $(head -c 600 "$out/err22")"; continue
  fi
  b32=$(constBytes "$out/sum32") b16=$(constBytes "$out/sum22")
  ratio=$(awk -v a="$b16" -v b="$b32" 'BEGIN { printf "%.3f", b ? a / b : 0 }')
  kept=$(sed -n 's/^model check: the bfloat16 model matches too (within bfloat16.s tolerance), with \([0-9]*\) node(s) kept in float32$/\1/p' "$out/sum22")
  if ! grep -q "^model check: the bfloat16 model matches too" "$out/sum22"; then
    fail "$name: the model check did not compare the bfloat16 model: $(grep 'model check' "$out/sum22")"; continue
  fi
  if [ -z "$kept" ] && awk -v r="$ratio" 'BEGIN { exit !(r > 0.55) }'; then
    fail "$name: bfloat16 weights are $ratio of float32's (expected about half)"; continue
  fi
  if ! "$onnxslim" check "$out/bf22.onnx" >"$out/chk" 2>&1; then
    fail "$name: the opset-22 bfloat16 model is invalid: $(head -c 400 "$out/chk")"; continue
  fi
  d22=$(interpDiff "$out/fp32.onnx" "$out/bf22.onnx" "$name" 2>"$out/ver22")
  [ "$d22" = FAIL ] && { fail "$name: opset 22: outputs differ beyond bfloat16's tolerance: $(cat "$out/ver22")"; continue; }
  # 2. The lowest opset holding bfloat16: the ONNX checker accepts it.
  opset=$("$onnxslim" "$model" --inspect 2>/dev/null | sed -n 's/^opsets: ai.onnx=\([0-9]*\).*/\1/p')
  low=$((opset < 13 ? 13 : opset))
  if ! "$onnxslim" "$model" "$out/bflow.onnx" --target-opset "$low" --dtype bf16 --input-specs "$spec:$name" -q \
       2>"$out/errlow"; then
    fail "$name: onnxslim --target-opset $low --dtype bf16: $(head -c 600 "$out/errlow")"; continue
  fi
  if ! /usr/bin/python3 -c 'import onnx, sys; onnx.checker.check_model(onnx.load(sys.argv[1]), full_check=True)' \
       "$out/bflow.onnx" >"$out/onnxchk" 2>&1; then
    fail "$name: the ONNX checker rejects the opset-$low bfloat16 model: $(tail -c 400 "$out/onnxchk")"; continue
  fi
  dlow=$(interpDiff "$out/fp32.onnx" "$out/bflow.onnx" "$name" 2>"$out/verlow")
  [ "$dlow" = FAIL ] && { fail "$name: opset $low: outputs differ beyond bfloat16's tolerance: $(cat "$out/verlow")"; continue; }
  # 3. ONNX Runtime, where it has the kernels.
  ort="no bf16 kernel"
  if node "$oracle" "$out/bf22.onnx" --out "$out/b" --spec "$spec:$name" --seed 7 --quiet >/dev/null 2>"$out/oerr"; then
    node "$oracle" "$out/fp32.onnx" --out "$out/a" --spec "$spec:$name" --seed 7 --quiet >/dev/null 2>&1
    if "$compare" "$out/a" "$out/b" --rtol 6e-2 --atol 8e-3 --scaled-atol 6e-2 >"$out/cmp"; then
      ort="ok"
    else
      fail "$name: ONNX Runtime's outputs differ beyond bfloat16's tolerance: $(cat "$out/cmp")"; continue
    fi
  elif ! grep -q "Could not find an implementation" "$out/oerr"; then
    fail "$name: ONNX Runtime cannot load the bfloat16 model: $(head -c 400 "$out/oerr")"; continue
  fi
  passed=$((passed + 1))
  rows+=("$(printf '%-12s %10s -> %10s  %6s   %-9s %-9s %-15s %s' "$name" "$b32" "$b16" "$ratio" "$d22" "$dlow" "$ort" \
           "${kept:+$kept nodes kept}")")
done

printf '%-12s %10s    %10s  %6s   %-9s %-9s %-15s %s\n' model "fp32 bytes" "bf16 bytes" ratio "diff@22" "diff@low" \
  "ONNX Runtime" "fallback"
for r in "${rows[@]}"; do echo "$r"; done
for f in "${failures[@]}"; do echo "FAIL $f"; done
echo "convert bfloat16: $passed passed, $failed failed"
[ "$failed" = 0 ]
