#!/usr/bin/env python3
"""gen-op-schemas.py - generate ir/OpSchemaTable.inc from the ONNX operator changelog.

The op schema table (arity and attributes of every version of every ONNX
operator) is data taken from the ONNX specification: onnx/onnx's
docs/Changelog.md (default domain, ai.onnx.preview, ai.onnx.preview.training)
and docs/Changelog-ml.md (ai.onnx.ml). Each op version there has a heading
`### <a name="Op-N"></a>**Op-N**</a>` (`(deprecated)` after it when that
version removes the op), then

  #### Attributes      <dt><tt>name</tt> : TYPE (required)</dt> or (default is ...)
  #### Inputs (A - B)  or `#### Inputs` alone (then every listed input is required)
  #### Outputs (A - B) likewise; `&#8734;` is an unbounded (variadic) count

This script parses those sections and writes the C++ table. It is run by
hand (the build never runs Python), and its output is checked in:

  python3 scripts/gen-op-schemas.py CHANGELOG.md CHANGELOG-ML.md \
      --source 'onnx/onnx@<commit>' > ir/OpSchemaTable.inc

Only default-domain versions up to --max-opset (24: what ONNX Runtime 1.30
runs) are kept; the other domains are kept whole.
"""
import argparse
import re
import sys

ATTR_KINDS = {
    "float": "Float", "int": "Int", "string": "String", "tensor": "Tensor",
    "graph": "Graph", "sparse_tensor": "SparseTensor", "type_proto": "TypeProto",
    "list of floats": "Floats", "list of ints": "Ints", "list of strings": "Strings",
    "list of tensors": "Tensors", "list of graphs": "Graphs",
    "list of sparse_tensors": "SparseTensors", "list of type_protos": "TypeProtos",
}
UNBOUNDED = -1

HEADING = re.compile(r'^### <a name="([^"]+)-(\d+)"></a>\*\*[^*]+\*\*( \(deprecated\))?')
DOMAIN = re.compile(r"^# (\S+)")
COUNT = re.compile(r"^#### (Inputs|Outputs)(?: \((\d+) - (\d+|&#8734;)\))?\s*$")
DT = re.compile(r"^<dt><tt>([^<]*)</tt>(.*)</dt>")
ATTR = re.compile(r"^ : (.+?)(?: \((required|default is .*)\))?\s*$")


def parse(path, domains_wanted):
    ops = []
    domain = None
    cur = None
    section = None
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            m = DOMAIN.match(line)
            if m:
                domain = "" if m.group(1) == "ai.onnx" else m.group(1)
                cur = None
                continue
            m = HEADING.match(line)
            if m:
                full, since, deprecated = m.group(1), int(m.group(2)), bool(m.group(3))
                name = full[len(domain) + 1:] if domain and full.startswith(domain + ".") else full
                cur = {"domain": domain, "name": name, "since": since, "deprecated": deprecated,
                       "attrs": [], "inputs": None, "outputs": None, "nin": 0, "nout": 0}
                if domain in domains_wanted:
                    ops.append(cur)
                section = None
                continue
            if cur is None:
                continue
            if line.startswith("#### Attributes"):
                section = "attrs"
                continue
            m = COUNT.match(line)
            if m:
                section = m.group(1).lower()
                if m.group(2) is not None:
                    hi = UNBOUNDED if m.group(3) == "&#8734;" else int(m.group(3))
                    cur[section] = (int(m.group(2)), hi)
                continue
            if line.startswith("#### "):
                section = None
                continue
            m = DT.match(line)
            if not m or section is None:
                continue
            if section == "attrs":
                a = ATTR.match(m.group(2))
                if not a:
                    sys.exit(f"{path}: cannot parse attribute line: {line}")
                kind = ATTR_KINDS.get(a.group(1).strip())
                if kind is None:
                    sys.exit(f"{path}: unknown attribute type '{a.group(1)}' in: {line}")
                cur["attrs"].append((m.group(1), kind, a.group(2) == "required"))
            elif section == "inputs":
                cur["nin"] += 1
            else:
                cur["nout"] += 1
    for op in ops:
        # `#### Inputs` with no count: every listed input is required.
        for key, n in (("inputs", "nin"), ("outputs", "nout")):
            if op[key] is None:
                op[key] = (op[n], op[n])
    return ops


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("changelog")
    ap.add_argument("changelog_ml")
    ap.add_argument("--source", default="onnx/onnx docs/Changelog.md")
    ap.add_argument("--max-opset", type=int, default=24)
    args = ap.parse_args()

    ops = parse(args.changelog, {"", "ai.onnx.preview", "ai.onnx.preview.training"})
    ops += parse(args.changelog_ml, {"ai.onnx.ml"})
    ops = [o for o in ops if o["domain"] != "" or o["since"] <= args.max_opset]
    ops.sort(key=lambda o: (o["domain"], o["name"], o["since"]))

    out = sys.stdout
    out.write("//===- ir/OpSchemaTable.inc - ONNX op schemas (generated) -------*- C++ -*-===//\n")
    out.write("//\n")
    out.write("// GENERATED by scripts/gen-op-schemas.py from " + args.source + "\n")
    out.write("// (docs/Changelog.md and docs/Changelog-ml.md). Do not edit by hand: rerun the script.\n")
    out.write(f"// Default domain: opsets 1..{args.max_opset}. {len(ops)} op versions.\n")
    out.write("//\n")
    out.write("// ONNXSLIM_SCHEMA_ATTR(name, AttrKind, required)\n")
    out.write("// ONNXSLIM_SCHEMA_OP(domain, op, since_version, deprecated, min_inputs,\n")
    out.write("//                    max_inputs, min_outputs, max_outputs, first_attr, num_attrs)\n")
    out.write("// A count of -1 is unbounded (variadic).\n")
    out.write("//\n")
    out.write("//===----------------------------------------------------------------------===//\n")
    out.write(f"#define ONNXSLIM_SCHEMA_MAX_DEFAULT_OPSET {args.max_opset}\n\n")
    out.write("#ifdef ONNXSLIM_SCHEMA_ATTR\n")
    first = 0
    for o in ops:
        o["first"] = first
        for name, kind, req in o["attrs"]:
            out.write(f'ONNXSLIM_SCHEMA_ATTR("{name}", {kind}, {"true" if req else "false"})'
                      f" // {o['name']}-{o['since']}\n")
        first += len(o["attrs"])
    out.write("#endif\n\n#ifdef ONNXSLIM_SCHEMA_OP\n")
    for o in ops:
        out.write(f'ONNXSLIM_SCHEMA_OP("{o["domain"]}", "{o["name"]}", {o["since"]}, '
                  f'{"true" if o["deprecated"] else "false"}, {o["inputs"][0]}, {o["inputs"][1]}, '
                  f'{o["outputs"][0]}, {o["outputs"][1]}, {o["first"]}, {len(o["attrs"])})\n')
    out.write("#endif\n")


if __name__ == "__main__":
    main()
