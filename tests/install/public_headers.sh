#!/usr/bin/env bash
# public_headers: every header installed under P/include/onnxslim/ compiles
# alone (`#include <onnxslim/...>` in an otherwise empty translation unit,
# -std=c++20 -fsyntax-only) with nothing on the include path but the
# standard library and P/include.
#
# /usr/include also holds protobuf, xtensor and xsimd, so the compiler runs
# with -nostdinc -nostdinc++ and gets its own directories back (from
# `CXX -E -x c++ - -v`) with /usr/include replaced by a directory of
# symlinks to only the files that libc6-dev and linux-libc-dev install
# there (/usr/local/include is dropped).
#
# The check must bite: a header including <google/protobuf/message.h> or
# <xtensor/xarray.hpp> compiles with the compiler's usual flags and must
# fail with these.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
p="$tmp/p"
install_to "$ONNXSLIM_BUILD" "$p"

# The C library's headers alone, as a directory of symlinks.
libc="$tmp/libc/usr/include"
mkdir -p "$tmp/libc"
command -v dpkg >/dev/null || fail "dpkg not found: this check needs a Debian-style system"
files=()
while IFS= read -r f; do
  [ ! -f "$f" ] || files+=("$f")
done < <(dpkg -L libc6-dev linux-libc-dev | grep '^/usr/include/')
[ "${#files[@]}" -gt 100 ] || fail "libc6-dev and linux-libc-dev list only ${#files[@]} headers under /usr/include"
# $tmp/libc/usr/include/F -> /usr/include/F for each file F.
cp -s --parents -t "$tmp/libc" "${files[@]}"

# The compiler's own search list, /usr/include swapped for the symlinks.
flags=(-std=c++20 -fsyntax-only -nostdinc -nostdinc++)
while IFS= read -r dir; do
  case "$dir" in
    /usr/local/*) continue ;;
    /usr/include) dir="$libc" ;;
    /usr/include/c++/*) ;; # libstdc++
    /usr/include/*/c++/*) ;; # libstdc++, the target's part
    /usr/include/*) dir="$libc/${dir#/usr/include/}" ;;
  esac
  flags+=(-isystem "$dir")
done < <("$ONNXSLIM_CXX" -E -x c++ - -v </dev/null 2>&1 |
         sed -n '/^#include <...> search starts here:/,/^End of search list\./p' | sed -n 's/^ \(\/.*\)$/\1/p')
flags+=(-I "$p/include")
echo "flags: ${flags[*]}"

# Given a TU's text, Execute: compiles it with `flags`, its diagnostics in
# $tmp/err.txt; Result: the compiler's status.
compile() {
  printf '%s\n' "$1" >"$tmp/tu.cpp"
  "$ONNXSLIM_CXX" "${flags[@]}" "$tmp/tu.cpp" 2>"$tmp/err.txt"
}

# The standard library works under these flags (C and C++ headers).
compile $'#include <cstdio>\n#include <cmath>\n#include <thread>\n#include <linux/limits.h>\nint main() {}' ||
  { cat "$tmp/err.txt" >&2; fail "the standard library does not compile under the restricted flags"; }

# The check bites: what the library uses inside is out of reach.
for h in google/protobuf/message.h xtensor/xarray.hpp xsimd/xsimd.hpp; do
  [ -f "/usr/include/$h" ] || fail "/usr/include/$h missing: the expected-failure case needs it (scripts/setup.sh)"
  "$ONNXSLIM_CXX" -std=c++20 -fsyntax-only -x c++ - <<<"#include <$h>" 2>"$tmp/err.txt" ||
    { cat "$tmp/err.txt" >&2; fail "<$h> does not compile even with the usual flags"; }
  if compile "#include <onnxslim/onnxslim.h>"$'\n'"#include <$h>"; then
    fail "a TU including <$h> compiled under the restricted flags: the check cannot see such a header"
  fi
  grep -q "$h: No such file" "$tmp/err.txt" ||
    { cat "$tmp/err.txt" >&2; fail "<$h> failed under the restricted flags, but not for being out of reach"; }
  echo "expected failure: <$h> is out of reach"
done

# Every installed header, alone.
headers=0 failed=()
while IFS= read -r h; do
  rel="${h#"$p/include/"}"
  headers=$((headers + 1))
  if compile "#include <$rel>"; then
    echo "ok: <$rel>"
  else
    cat "$tmp/err.txt" >&2
    failed+=("$rel")
  fi
done < <(find "$p/include/onnxslim" -type f \( -name '*.h' -o -name '*.hpp' \) | sort)
[ "$headers" -ge 10 ] || fail "only $headers headers installed under include/onnxslim/"
[ "${#failed[@]}" = 0 ] || fail "${#failed[@]} of $headers public headers do not compile alone: ${failed[*]}"
echo "public_headers: all $headers headers compile alone"
