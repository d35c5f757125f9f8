#!/usr/bin/env bash
# The transformer fusions (fuse-layernorm, fuse-rmsnorm, fuse-gelu,
# fuse-attention, fuse-rotary-embedding) on the small transformer blocks of
# tests/models/transformers/ against ONNX Runtime.
#
# For each *_block.onnxtxt: the text is written as a model with no pass (the
# original) and through the default pipeline with the verifier after every
# pass (the fused model). Both run in ONNX Runtime (tools/oracle) on the same
# seeded inputs and must agree within a relative difference of 1e-4 (float32);
# the fused model must also run in the interpreter and agree with ONNX
# Runtime's original outputs. Every op named on the file's `# EXPECT-OPS:`
# line must be in the fused model, every `# EXPECT-TEXT:` line's text in its
# dump (the causal masks become `is_causal = 1`), and no decomposed op (Softmax, Erf, Tanh,
# ReduceMean, Sqrt, Pow, Reciprocal) may remain. The op models (op_*.onnxtxt,
# single Attention / RotaryEmbedding nodes) check the interpreter's kernels
# against ONNX Runtime. The BERT block is also run at opsets 18 and 20,
# where only the fusions whose op exists may fire. Prints node counts
# before -> after.
#
# usage: ort_transformer_fusions.sh ONNXSLIM COMPARE_OUTPUTS
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
onnxslim="$1"
compare="$2"
source "$root/tests/oracle/oracle_env.sh"
models="$root/tests/models/transformers"
rtol=1e-4 atol=1e-6

failed=0 passed=0
fail() { failed=$((failed + 1)); echo "FAIL $1"; }
count_nodes() { "$onnxslim" dump "$1" 2>/dev/null | awk '/^> \{/ {on=1; next} on && /^\}/ {on=0} on && / = [A-Za-z]+[ (<]/ {n++} END {print n+0}'; }
ops_of() { "$onnxslim" dump "$1" 2>/dev/null | sed -n 's/^ *[^=]* = \([A-Za-z]*\)[ (<].*/\1/p' | sort -u; }
inputs_of() { for f in "$1"/inputs/*.pb; do [ -f "$f" ] && printf -- '--input\n%s\n' "$f"; done; }

for src in "$models"/op_*.onnxtxt "$models"/*_block.onnxtxt; do
  name="$(basename "$src" .onnxtxt)"
  out="$tmp/$name"; mkdir -p "$out/a" "$out/b" "$out/c"
  if ! "$onnxslim" "$src" "$out/orig.onnx" -q --passes= 2>"$out/err"; then
    fail "$name: writing the original: $(cat "$out/err")"; continue
  fi
  if [[ "$name" == op_* ]]; then
    cp "$out/orig.onnx" "$out/opt.onnx"
  elif ! "$onnxslim" "$src" "$out/opt.onnx" -q --verify-each 2>"$out/err"; then
    fail "$name: onnxslim: $(cat "$out/err")"; continue
  fi
  if ! node "$oracle" "$out/orig.onnx" --out "$out/a" --seed 3 --quiet >/dev/null 2>"$out/err"; then
    fail "$name: ONNX Runtime cannot run the original: $(head -c 400 "$out/err")"; continue
  fi
  mapfile -t inputs < <(inputs_of "$out/a")
  if ! node "$oracle" "$out/opt.onnx" --out "$out/b" "${inputs[@]}" --quiet >/dev/null 2>"$out/err"; then
    fail "$name: ONNX Runtime cannot run the fused model: $(head -c 400 "$out/err")"; continue
  fi
  if ! "$onnxslim" run "$out/opt.onnx" "${inputs[@]}" --output-dir "$out/c" -q 2>"$out/err"; then
    fail "$name: the interpreter cannot run the fused model: $(cat "$out/err")"; continue
  fi
  ok=1
  if ! "$compare" "$out/a" "$out/b" --rtol $rtol --atol $atol >"$out/cmp"; then
    fail "$name: ONNX Runtime, original vs fused: $(cat "$out/cmp")"; ok=0
  fi
  if ! "$compare" "$out/a" "$out/c" --rtol $rtol --atol $atol >"$out/cmpi"; then
    fail "$name: ONNX Runtime original vs interpreter fused: $(cat "$out/cmpi")"; ok=0
  fi
  ops="$(ops_of "$out/opt.onnx")"
  for want in $(sed -n 's/^# EXPECT-OPS://p' "$src"); do
    grep -qx "$want" <<<"$ops" || { fail "$name: no $want in the fused model (ops: $(echo $ops))"; ok=0; }
  done
  while IFS= read -r want; do
    "$onnxslim" dump "$out/opt.onnx" 2>/dev/null | grep -qF -- "$want" ||
      { fail "$name: the fused model has no '$want'"; ok=0; }
  done < <(sed -n 's/^# EXPECT-TEXT: //p' "$src")
  if [[ "$name" != op_* ]]; then
    left="$(grep -xE 'Softmax|Erf|Tanh|ReduceMean|Sqrt|Pow|Reciprocal' <<<"$ops" | tr '\n' ' ')"
    [ -z "$left" ] || { fail "$name: decomposed ops remain: $left"; ok=0; }
  fi
  if [ $ok = 1 ]; then
    passed=$((passed + 1))
    echo "ok   $name: nodes $(count_nodes "$out/orig.onnx") -> $(count_nodes "$out/opt.onnx"); ops after: $(echo $ops)"
    sed 's/^/     ORT orig vs fused: /' "$out/cmp"
    sed 's/^/     ORT orig vs interpreter fused: /' "$out/cmpi"
  fi
done
# The BERT block at lower opsets (18: ReduceMean takes its axes as an
# input there, as the block writes it): each fusion fires only where its op
# exists (LayerNormalization 17, Gelu 20, Attention 23), never raising the
# opset; outputs still match in ONNX Runtime.
for variant in 18:LayerNormalization:Gelu,Attention 20:LayerNormalization,Gelu:Attention; do
  IFS=: read -r opset want unwanted <<<"$variant"
  name="bert_block@$opset"
  out="$tmp/$name"; mkdir -p "$out/a" "$out/b"
  sed "s/opset_import: \[\"\" : 23\]/opset_import: [\"\" : $opset]/" "$models/bert_block.onnxtxt" >"$out/src.onnxtxt"
  if ! grep -q "\"\" : $opset\]" "$out/src.onnxtxt"; then fail "$name: could not set the opset"; continue; fi
  if ! "$onnxslim" "$out/src.onnxtxt" "$out/orig.onnx" -q --passes= 2>"$out/err" ||
     ! "$onnxslim" "$out/src.onnxtxt" "$out/opt.onnx" -q --verify-each 2>>"$out/err"; then
    fail "$name: onnxslim: $(cat "$out/err")"; continue
  fi
  if ! node "$oracle" "$out/orig.onnx" --out "$out/a" --seed 3 --quiet >/dev/null 2>"$out/err"; then
    fail "$name: ONNX Runtime cannot run the original: $(head -c 400 "$out/err")"; continue
  fi
  mapfile -t inputs < <(inputs_of "$out/a")
  if ! node "$oracle" "$out/opt.onnx" --out "$out/b" "${inputs[@]}" --quiet >/dev/null 2>"$out/err"; then
    fail "$name: ONNX Runtime cannot run the fused model: $(head -c 400 "$out/err")"; continue
  fi
  ok=1
  "$compare" "$out/a" "$out/b" --rtol $rtol --atol $atol >"$out/cmp" || { fail "$name: outputs differ: $(cat "$out/cmp")"; ok=0; }
  ops="$(ops_of "$out/opt.onnx")"
  for op in ${want//,/ }; do grep -qx "$op" <<<"$ops" || { fail "$name: no $op in the fused model"; ok=0; }; done
  for op in ${unwanted//,/ }; do ! grep -qx "$op" <<<"$ops" || { fail "$name: $op at opset $opset"; ok=0; }; done
  if [ $ok = 1 ]; then
    passed=$((passed + 1))
    echo "ok   $name: nodes $(count_nodes "$out/orig.onnx") -> $(count_nodes "$out/opt.onnx"); ops after: $(echo $ops)"
    sed 's/^/     ORT orig vs fused: /' "$out/cmp"
  fi
done
echo "transformer fusions: $passed passed, $failed failed"
[ "$failed" = 0 ]
