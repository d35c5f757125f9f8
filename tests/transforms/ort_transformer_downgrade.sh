#!/usr/bin/env bash
# The transformer exports of ../shared/models/transformers optimized for
# opset 23 (--target-opset 23: LayerNormalization, Gelu, RMSNormalization,
# RotaryEmbedding, Attention fused) and converted back down to opsets 13,
# 11 and 9 (convert-opset, which writes those ops out: transforms/opset/
# ExpandTransformer.cpp, and Range, GatherND, runtime Slices, LessOrEqual
# and the rest of what the exports need below their own opset).
#
# For each model and each target:
#  - the conversion must not decline (a decline leaves the model at 23 and
#    is reported with its message) and the result must be at the target;
#  - ONNX Runtime must load it and match the original model's first output
#    on the folder's inputs and, where the model takes an attention_mask,
#    on a left-padded one (the first 5 positions 0), rtol 1e-4, atol 1e-5.
# Prints a table model x target (nodes, status).
#
# usage: ort_transformer_downgrade.sh ONNXSLIM COMPARE_OUTPUTS [TRANSFORMERS_DIR]
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
onnxslim="$1"
compare="$2"
transformers="${3:-$root/../shared/models/transformers}"
targets=(13 11 9)
source "$root/tests/oracle/oracle_env.sh"
[ -d "$transformers" ] ||
  { echo "error: $transformers missing (the shared transformer exports; pass their folder as 3rd argument)" >&2; exit 1; }
pyonnx=/usr/bin/python3
"$pyonnx" -c 'import onnx, numpy' 2>/dev/null ||
  { echo "error: $pyonnx cannot import onnx and numpy: run scripts/setup.sh (python3-onnx)" >&2; exit 1; }

failed=0 passed=0 rows=()
fail() { failed=$((failed + 1)); echo "FAIL $1"; }
# Every node, subgraphs included.
nodes() { "$onnxslim" dump "$1" 2>/dev/null | grep -cE '^ *[^=]* = [A-Za-z][A-Za-z0-9_]*[ (<]'; }
# The model's default-domain opset.
opset() { "$pyonnx" -c 'import onnx, sys
m = onnx.load(sys.argv[1], load_external_data=False)
print(next(o.version for o in m.opset_import if o.domain in ("", "ai.onnx")))' "$1"; }
# Runs model $1 on input set $2 into $3; the first output's file name.
run() {
  local ins
  mapfile -t ins < <(for f in "$2"/*.pb; do printf -- '--input\n%s\n' "$f"; done)
  mkdir -p "$3"
  node "$oracle" "$1" --out "$3" "${ins[@]}" --quiet >/dev/null 2>"$3.err"
}

for dir in "$transformers"/*/; do
  name="$(basename "$dir")"
  [ -f "$dir/model.onnx" ] || continue
  out="$tmp/$name"; mkdir -p "$out/sets/0"
  cp "$dir"/test_data_set_0/input_*.pb "$out/sets/0/"
  # A left-padded copy of the inputs when there is an attention_mask.
  "$pyonnx" "$root/tests/transforms/left_padded_inputs.py" "$out/sets/0" "$out/sets/1" ||
    { fail "$name: writing the padded inputs"; continue; }
  sets=(0); [ -d "$out/sets/1" ] && sets+=(1)
  for s in "${sets[@]}"; do
    run "$dir/model.onnx" "$out/sets/$s" "$out/orig$s" ||
      { fail "$name: ONNX Runtime cannot run the original: $(head -c 300 "$out/orig$s.err")"; continue 2; }
  done
  if ! "$onnxslim" "$dir/model.onnx" "$out/x23.onnx" -q --target-opset 23 2>"$out/err"; then
    fail "$name: onnxslim --target-opset 23: $(head -c 400 "$out/err")"
    for t in "${targets[@]}"; do rows+=("$name $t - opset-23-failed"); done
    continue
  fi
  for t in "${targets[@]}"; do
    model="$out/x$t.onnx"
    if ! "$onnxslim" "$out/x23.onnx" "$model" -q --passes="convert-opset{target=$t}" 2>"$out/err"; then
      fail "$name $t: onnxslim: $(head -c 400 "$out/err")"; rows+=("$name $t - error"); continue
    fi
    if grep -q 'declined' "$out/err" || [ "$(opset "$model")" != "$t" ]; then
      fail "$name $t: declined: $(grep -m1 'declined' "$out/err" | head -c 600)"
      rows+=("$name $t $(nodes "$model") declined"); continue
    fi
    ok=1
    for s in "${sets[@]}"; do
      if ! run "$model" "$out/sets/$s" "$out/x$t-$s"; then
        fail "$name $t: ONNX Runtime cannot run it: $(head -c 300 "$out/x$t-$s.err")"; ok=0; break
      fi
      first="$(ls "$out/orig$s" | grep '\.pb$' | head -1)"
      mkdir -p "$out/cmp$t$s/a" "$out/cmp$t$s/b"
      cp "$out/orig$s/$first" "$out/cmp$t$s/a/"; cp "$out/x$t-$s/$first" "$out/cmp$t$s/b/"
      if ! "$compare" "$out/cmp$t$s/a" "$out/cmp$t$s/b" --rtol 1e-4 --atol 1e-5 >"$out/cmp"; then
        fail "$name $t (inputs $s): outputs differ in ONNX Runtime: $(cat "$out/cmp")"; ok=0
      fi
    done
    if [ $ok = 1 ]; then
      passed=$((passed + 1)); rows+=("$name $t $(nodes "$model") match(inputs:${sets[*]})")
    else
      rows+=("$name $t $(nodes "$model") mismatch")
    fi
  done
done
echo
printf '%-20s %-7s %-7s %s\n' model target nodes status
for r in "${rows[@]}"; do
  read -r m t n st <<<"$r"
  printf '%-20s %-7s %-7s %s\n' "$m" "$t" "$n" "$st"
done
echo "transformer downgrades: $passed passed, $failed failed"
[ "$failed" = 0 ]
