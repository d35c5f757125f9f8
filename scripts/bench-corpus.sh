#!/usr/bin/env bash
# Build the benchmark corpus's manifest: export the torchvision models
# (bench/corpus/export_torchvision.py, into CACHE, default
# <repo>/.cache/bench-models; already exported ones are kept), then add to
# CACHE/corpus.json, by path (nothing is copied):
# - the transformer exports of ../shared/models/transformers (their inputs
#   from its manifest.json, and their TensorProto inputs
#   test_data_set_0/input_<i>.pb as input_files);
# - the real models fetched from npm by scripts/fetch-models.sh into
#   .cache/models (their inputs from tests/models/models.json); those not
#   fetched are named and left out;
# - isnet_quint8: the quantized ISNet background-removal model
#   (ConvInteger, DynamicQuantizeLinear; 1024x1024) of the npm package
#   @imgly/background-removal-data@1.4.5, whose dist/ holds it in 4 MB
#   chunks named by their sha256 (dist/resources.json, "/models/small"):
#   fetched with npm pack into CACHE, assembled, checked by sha256.
#   ISNET=0 leaves it out (the package is 136 MB).
# The result: one manifest, each entry saying where its model is and how to
# make its inputs (bench/corpus/README.md; bench/interpreter_vs_ort.sh reads
# it with CORPUS=CACHE/corpus.json).
#
# Installs python3-torch and python3-torchvision (Debian's; the export runs
# with /usr/bin/python3) when missing, as scripts/setup.sh does.
#
# usage: scripts/bench-corpus.sh [CACHE] [--force] [--only NAME,...]
#   (the arguments go to export_torchvision.py)
# Environment: TRANSFORMERS_DIR (default <repo>/../shared/models/transformers),
#   ONNXSLIM_MODEL_CACHE (the npm models, default <repo>/.cache/models).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY=/usr/bin/python3

die() { echo "bench-corpus: error: $*" >&2; exit 1; }
note() { echo "bench-corpus: $*" >&2; }

# The positional argument, if any, is CACHE (--only takes a value).
cache="$REPO/.cache/bench-models"
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[i]}" in
    --only) ((i++)) || true ;;
    -*) ;;
    *) cache="${args[i]}" ;;
  esac
done
transformers="${TRANSFORMERS_DIR:-$REPO/../shared/models/transformers}"
npmCache="${ONNXSLIM_MODEL_CACHE:-$REPO/.cache/models}"

# Debian's torch and torchvision (and onnx, for the exporter's check).
installed() { [[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" == "install ok installed" ]]; }
MISSING=()
for p in python3-torch python3-torchvision python3-onnx; do installed "$p" || MISSING+=("$p"); done
if ((${#MISSING[@]} > 0)); then
  command -v apt-get >/dev/null 2>&1 || die "apt-get not found; install by hand: ${MISSING[*]}"
  if [[ $(id -u) -eq 0 ]]; then SUDO=(); elif command -v sudo >/dev/null 2>&1; then SUDO=(sudo); else
    die "not root and no sudo; as root run: apt-get install ${MISSING[*]}"
  fi
  note "installing ${MISSING[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${SUDO[@]}" apt-get update -qq || die "apt-get update failed (is the Debian mirror reachable?)"
  "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${MISSING[@]}" ||
    die "apt-get install failed for: ${MISSING[*]}"
fi

"$PY" "$REPO/bench/corpus/export_torchvision.py" "$@"
# The quantized ISNet, assembled from the package's chunks.
isnet="$cache/isnet_quint8.onnx"
isnetSha=7001d60734fdc112dd9c062635fb59cd401fb82a9d4213134bce4dbd655c803a
if [[ "${ISNET:-1}" != 0 ]] && ! { [[ -f "$isnet" ]] && echo "$isnetSha  $isnet" | sha256sum -c --status; }; then
  note "fetching @imgly/background-removal-data@1.4.5 (136 MB) for isnet_quint8"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack -q @imgly/background-removal-data@1.4.5 >/dev/null && tar xzf ./*.tgz) ||
    die "npm pack @imgly/background-removal-data@1.4.5 failed (is the npm registry reachable?)"
  node -e '
    const fs = require("fs"), path = require("path"), [dist, out] = process.argv.slice(1);
    const chunks = require(path.join(dist, "resources.json"))["/models/small"].chunks;
    fs.writeFileSync(out, Buffer.concat(chunks.map(c => fs.readFileSync(path.join(dist, c.hash)))));' \
    "$tmp/package/dist" "$isnet.part"
  echo "$isnetSha  $isnet.part" | sha256sum -c --status || die "isnet_quint8: sha256 mismatch"
  mv "$isnet.part" "$isnet"
fi

# Add the transformer exports and the npm models to the manifest (entries of
# the same names are replaced, so a second run gives the same file).
"$PY" - "$cache/corpus.json" "$transformers" "$npmCache" "$REPO/tests/models/models.json" "$isnet" <<'EOF'
import json, os, sys

manifest_path, transformers, npm_cache, npm_spec, isnet = sys.argv[1:]
here = os.path.dirname(os.path.abspath(manifest_path))
rel = lambda p: os.path.relpath(os.path.abspath(p), here)
with open(manifest_path) as f:
    manifest = json.load(f)
added, missing = [], []

# Transformers: token ids in [0, 300), attention masks all ones, images and
# audio noise (shared/models/transformers/README.md); the exact inputs are
# its test_data_set_0 files.
tm = os.path.join(transformers, "manifest.json")
if os.path.exists(tm):
    with open(tm) as f:
        info = json.load(f)
    for name, m in info.items():
        path = os.path.join(transformers, name, "model.onnx")
        if not os.path.exists(path):
            missing.append(name)
            continue
        inputs, files = [], []
        for i, spec in enumerate(m["inputs"]):
            dtype = {"float32": "float"}.get(spec["dtype"], spec["dtype"])
            e = {"name": spec["name"], "dtype": dtype, "shape": spec["shape"]}
            if spec["name"] == "attention_mask":
                e["value"] = 1
            elif dtype.startswith("int"):
                e["range"] = [0, 299]
            else:
                e["range"] = [-1, 1]
            inputs.append(e)
            pb = os.path.join(transformers, name, "test_data_set_0", f"input_{i}.pb")
            if os.path.exists(pb):
                files.append(rel(pb))
        entry = {"name": name, "file": rel(path),
                 "source": f"shared/models/transformers/{name} (opset {m.get('opset')}, sha256 {m.get('sha256')})",
                 "inputs": inputs}
        if len(files) == len(inputs):
            entry["input_files"] = files
        added.append(entry)
else:
    print(f"bench-corpus: no {tm}: transformer exports left out", file=sys.stderr)

# The npm models that scripts/fetch-models.sh fetched.
with open(npm_spec) as f:
    for m in json.load(f)["models"]:
        path = os.path.join(npm_cache, m["file"])
        if not os.path.exists(path):
            missing.append(m["name"])
            continue
        added.append({"name": m["name"], "file": rel(path),
                      "source": f"npm {m['package']} {m['path']} (tests/models/models.json)",
                      "inputs": m["inputs"]})

# The quantized ISNet: an RGB image in [0, 1].
if os.path.exists(isnet):
    added.append({"name": "isnet_quint8", "file": rel(isnet),
                  "source": "npm @imgly/background-removal-data@1.4.5 /models/small (sha256 7001d607...)",
                  "inputs": [{"name": "input", "dtype": "float", "shape": [1, 3, 1024, 1024], "range": [0, 1]}]})
names = {e["name"] for e in added}
manifest["models"] = [e for e in manifest["models"] if e["name"] not in names] + added
with open(manifest_path, "w") as f:
    json.dump(manifest, f, indent=1)
    f.write("\n")
print(f"bench-corpus: {manifest_path}: {len(manifest['models'])} models "
      f"({len(manifest['models']) - len(added)} torchvision, {len(added)} by path)", file=sys.stderr)
if missing:
    print(f"bench-corpus: not present, left out: {', '.join(missing)} "
          "(scripts/fetch-models.sh fetches the npm ones)", file=sys.stderr)
EOF
