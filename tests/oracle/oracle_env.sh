# Sourced by the scripts that run ONNX Runtime through tools/oracle (tests
# and benches), after they set `root` to the checkout: defines `oracle` and
# `spec` (the oracle script and the real models' specs), fails with how to
# install it when the oracle's ONNX Runtime is missing, and makes a
# temporary directory `tmp` removed on exit.
oracle="$root/tools/oracle/oracle.js"
spec="$root/tests/models/models.json"
[ -d "$root/tools/oracle/node_modules/onnxruntime-node" ] ||
  { echo "error: ONNX Runtime oracle not installed: run scripts/setup.sh" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
