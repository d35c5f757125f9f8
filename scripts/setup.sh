#!/usr/bin/env bash
# Install everything onnxslim needs to build and test on Debian 12:
# the Debian packages below (only the missing ones; pybind11-dev, python3-dev
# and python3-onnx are for the Python module and its tests) and the ONNX Runtime
# oracle from the npm registry (tools/oracle/node_modules, git-ignored).
#
# Idempotent: a second run only checks (dpkg -s) and returns quickly.
# Runs as root (CI) or through sudo.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ORACLE="$REPO/tools/oracle"

die() { echo "setup: error: $*" >&2; exit 1; }
note() { echo "setup: $*" >&2; }

PACKAGES=(
  build-essential cmake pkg-config
  libprotobuf-dev protobuf-compiler
  libxtensor-dev libxsimd-dev
  googletest libgtest-dev libbenchmark-dev
  llvm-14-tools
  clang-14 libclang-rt-14-dev
  libonnx-testdata
  libcli11-dev libxxhash-dev nlohmann-json3-dev
  pybind11-dev python3-dev python3-onnx
)
# Node.js may come from elsewhere (e.g. a newer upstream build that bundles
# npm); take Debian's only when there is none.
command -v node >/dev/null 2>&1 || PACKAGES+=(nodejs)
command -v npm >/dev/null 2>&1 || PACKAGES+=(npm)

if [[ $(id -u) -eq 0 ]]; then
  SUDO=()
elif command -v sudo >/dev/null 2>&1; then
  SUDO=(sudo)
else
  SUDO=()
fi

installed() {
  [[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" == "install ok installed" ]]
}

MISSING=()
for p in "${PACKAGES[@]}"; do
  installed "$p" || MISSING+=("$p")
done

if ((${#MISSING[@]} > 0)); then
  command -v apt-get >/dev/null 2>&1 ||
    die "apt-get not found; install these packages by hand: ${MISSING[*]}"
  if [[ $(id -u) -ne 0 && ${#SUDO[@]} -eq 0 ]]; then
    die "not root and no sudo; as root run: apt-get install ${MISSING[*]}"
  fi
  note "installing ${MISSING[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${SUDO[@]}" apt-get update -qq ||
    die "apt-get update failed (is the Debian mirror reachable?)"
  "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${MISSING[@]}" ||
    die "apt-get install failed for: ${MISSING[*]}"
else
  note "Debian packages: all present"
fi

command -v node >/dev/null 2>&1 || die "node still missing after installing nodejs"
command -v npm >/dev/null 2>&1 || die "npm still missing after installing npm"

# The ONNX Runtime oracle: onnxruntime-node at the exact version that
# tools/oracle/package.json pins. ONNXRUNTIME_NODE_INSTALL=skip stops its
# install step from downloading a GPU add-on; the CPU library ships inside
# the package.
want="$(node -p 'require(process.argv[1]).dependencies["onnxruntime-node"]' "$ORACLE/package.json")"
have="$(node -p 'try { require(process.argv[1]).version } catch (e) { "" }' \
  "$ORACLE/node_modules/onnxruntime-node/package.json" 2>/dev/null || true)"
if [[ "$have" != "$want" ]]; then
  note "installing onnxruntime-node@$want into tools/oracle/node_modules"
  (cd "$ORACLE" && ONNXRUNTIME_NODE_INSTALL=skip npm install --no-audit --no-fund --loglevel=error) ||
    die "npm install in tools/oracle failed (is the npm registry reachable? check 'npm config get registry')"
else
  note "onnxruntime-node@$have: present"
fi

# Smoke test: the native add-on loads on this machine.
(cd "$ORACLE" && node -e 'require("onnxruntime-node")') ||
  die "onnxruntime-node is installed but does not load; remove tools/oracle/node_modules and run scripts/setup.sh again"

note "done"
