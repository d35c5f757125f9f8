#!/usr/bin/env bash
# Every real model, written back by `onnxslim --passes=` (a pure load + save),
# must load in ONNX Runtime and give bit-identical outputs to the original on
# the same seeded inputs.
#
# usage: ort_roundtrip.sh ONNXSLIM_BINARY [MODEL_CACHE]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
onnxslim="$1"
cache="${2:-${ONNXSLIM_MODEL_CACHE:-$root/.cache/models}}"
source "$root/tests/oracle/oracle_env.sh"

passed=0 failed=0 failures=()
for name in $(node -e 'for (const m of require(process.argv[1]).models) console.log(m.name)' "$spec"); do
  model="$cache/$name.onnx"
  if [ ! -f "$model" ]; then
    echo "error: $model missing: run scripts/fetch-models.sh" >&2
    exit 1
  fi
  out="$tmp/$name"
  mkdir -p "$out/a" "$out/b"
  if ! "$onnxslim" "$model" "$out/rt.onnx" --passes= -q 2>"$out/err" ||
     ! node "$oracle" "$model" --out "$out/a" --spec "$spec:$name" --seed 7 --quiet >/dev/null ||
     ! node "$oracle" "$out/rt.onnx" --out "$out/b" --spec "$spec:$name" --seed 7 --quiet >/dev/null; then
    failed=$((failed + 1)); failures+=("$name: $(cat "$out/err")"); continue
  fi
  same=1 count=0
  for f in "$out/a"/*.pb; do
    count=$((count + 1))
    cmp -s "$f" "$out/b/$(basename "$f")" || { same=0; failures+=("$name: output $(basename "$f") differs"); }
  done
  if [ "$same" = 1 ] && [ "$count" -gt 0 ]; then
    passed=$((passed + 1)); echo "ok   $name ($count outputs bit-identical)"
  else
    failed=$((failed + 1)); [ "$count" -gt 0 ] || failures+=("$name: no outputs")
  fi
done
for f in "${failures[@]}"; do echo "FAIL $f"; done
echo "ort roundtrip: $passed passed, $failed failed"
[ "$failed" = 0 ]
