#!/usr/bin/env python3
"""The command line (tools/) and the Python extension (python/) reach the
library only through its public headers, as any downstream program does:
every #include in tools/*.{cpp,h} and python/*.cpp is

  - "onnxslim/..." or <onnxslim/...>: a public header (include/onnxslim/);
  - "tools/X.h" from tools/: the tool's own headers, which obey the same rule;
  - <CLI/...>, <nlohmann/...> (tools/) or <pybind11/...> (python/);
  - a standard or system header: <name> without a directory, or <sys/...>;

never an internal header (ir/, frontend/, backend/, runtime/, transforms/,
api/, schema/: they reach users through include/onnxslim/ or not at all) nor
protobuf, xtensor or xsimd. Every "onnxslim/..." include must exist under
include/.

usage: tools_public_includes.py SOURCE_DIR   (exit 1 listing each offence)

The check bites: before looking at the tree it runs on included lines that
must be refused ("ir/Printer.h", <transforms/Passes.h>, <xtensor/...>) and
on ones that must pass, and fails if it judges any of them wrongly.
"""
import re
import sys
from pathlib import Path

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
THIRD_PARTY = {"tools": ("CLI/", "nlohmann/"), "python": ("pybind11/",)}


def offence(folder, kind, path, src):
    """Why `#include <path>` / "path" in `folder` breaks the rule ("" if it does not)."""
    if path.startswith("onnxslim/"):
        return "" if (src / "include" / path).is_file() else f"{path} is not a public header under include/"
    if kind == '"':
        if folder == "tools" and path.startswith("tools/") and (src / path).is_file():
            return ""
        return f'"{path}" is not a public header (include/onnxslim/) nor one of tools/\'s own'
    if path.startswith(THIRD_PARTY.get(folder, ())):
        return ""
    if "/" not in path or path.startswith("sys/"):
        return ""
    return f"<{path}> is not a public header, the standard library or a library {folder}/ may use"


def check(folder, lines, src):
    """The offences among `lines` (text of a file in `folder`), as (line number, reason)."""
    found = []
    for number, line in enumerate(lines, 1):
        m = INCLUDE.match(line)
        if m:
            why = offence(folder, m.group(1), m.group(2), src)
            if why:
                found.append((number, why))
    return found


def main():
    src = Path(sys.argv[1])
    # The check must bite: internal headers and libraries are refused, the
    # allowed forms pass.
    refused = ['#include "ir/Printer.h"', "#include <transforms/Passes.h>", '#include "runtime/Inputs.h"',
               "#include <xtensor/xarray.hpp>", "#include <google/protobuf/message.h>",
               '#include "onnxslim/no_such_header.h"', '#include "tools/NoSuch.h"', "#include <pybind11/pybind11.h>"]
    allowed = ['#include "onnxslim/onnxslim.h"', "#include <onnxslim/passes.h>", '#include "tools/Summary.h"',
               "#include <CLI/CLI.hpp>", "#include <nlohmann/json.hpp>", "#include <vector>",
               "#include <sys/stat.h>", "#include <unistd.h>"]
    wrong = [line for line in refused if not check("tools", [line], src)]
    wrong += [line for line in allowed if check("tools", [line], src)]
    if check("python", ["#include <pybind11/stl.h>"], src) or not check("python", ['#include "tools/Summary.h"'], src):
        wrong.append("python/'s own rule")
    if wrong:
        print(f"tools_public_includes: the check judges these wrongly: {wrong}")
        return 1

    files = sorted((src / "tools").glob("*.cpp")) + sorted((src / "tools").glob("*.h")) + \
        sorted((src / "python").glob("*.cpp"))
    if len(files) < 5:
        print(f"tools_public_includes: only {len(files)} files found under {src}/tools and {src}/python")
        return 1
    failures = 0
    for f in files:
        for number, why in check(f.parent.name, f.read_text().splitlines(), src):
            print(f"{f.relative_to(src)}:{number}: {why}")
            failures += 1
    print(f"tools_public_includes: {len(files)} files, {failures} internal include(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
