#!/usr/bin/env python3
"""docs/API.md matches include/onnxslim/onnxslim.h: every type, function
and struct field the header declares is named in the document (as `name`
or in a code block), and every `onnxslim::name` the document uses exists in
the header or in the headers passes.h brings in.

usage: api_doc_coverage.py SOURCE_DIR   (exit 1 listing what is missing)
"""
import re
import sys
from pathlib import Path

src = Path(sys.argv[1])
header = (src / "include/onnxslim/onnxslim.h").read_text()
doc = (src / "docs/API.md").read_text()
# Comments are not declarations.
code = re.sub(r"//[^\n]*", "", header)

declared = set()
declared.update(re.findall(r"^(?:struct|class|enum class) (\w+)", code, re.M))
declared.update(re.findall(r"^[\w:<>,\s]*?[\s*&>](\w+)\(", code, re.M))
# Fields: "  Type name = value;" or "  Type name;" at struct level (two spaces).
for body in re.findall(r"^struct \w+ \{\n(.*?)^\};", code, re.M | re.S):
    declared.update(re.findall(r"^  (?!static|return|if|for)[\w:<>,\s*&]+?[\s*&>](\w+)(?: = [^;]*)?;", body, re.M))
declared -= {"operator", "bool"}

missing = sorted(n for n in declared if not re.search(r"\b%s\b" % re.escape(n), doc))
# Names the document attributes to the library must exist somewhere public.
public = code + "".join(p.read_text() for p in (src / "ir").glob("*.h")) + \
    "".join(p.read_text() for p in (src / "transforms").glob("*.h"))
unknown = sorted({n for n in re.findall(r"onnxslim::(\w+)", doc) if not re.search(r"\b%s\b" % n, public)})

if len(declared) < 40:
    print(f"api_doc_coverage: only {len(declared)} declarations found in onnxslim.h: the parser is broken")
    sys.exit(1)
for n in missing:
    print(f"docs/API.md does not mention `{n}` (declared in include/onnxslim/onnxslim.h)")
for n in unknown:
    print(f"docs/API.md names onnxslim::{n}, which no public header declares")
print(f"api_doc_coverage: {len(declared)} declarations, {len(missing)} undocumented, {len(unknown)} unknown")
sys.exit(1 if missing or unknown else 0)
