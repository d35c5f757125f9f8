//===- ir/OpSchema.h - ONNX operator schemas (arity, attributes) -*- C++ -*-===//
//
// The one table of ONNX operator schemas: for every version of every op of
// the default domain (opsets 1..24), ai.onnx.ml, ai.onnx.preview and
// ai.onnx.preview.training, the number of inputs and outputs it takes and each
// attribute's name, kind and whether it is required. The data is generated
// from the ONNX specification (docs/Changelog.md) by scripts/gen-op-schemas.py
// into ir/OpSchemaTable.inc; the validator (ir/Validate.h) checks nodes
// against it and a test checks the interpreter's kernel registry against it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Attribute.h"

#include <cstdint>
#include <span>
#include <string_view>

namespace onnxslim {

/// One attribute an op version declares.
struct AttrSchema {
  std::string_view name;
  AttrKind kind;
  bool required;
};

/// One version of one op, as the ONNX specification defines it.
struct OpSchema {
  static constexpr int kUnbounded = -1; ///< max count of a variadic input/output

  std::string_view domain; ///< "" for the default domain (ai.onnx)
  std::string_view opType;
  int sinceVersion;
  bool deprecated; ///< this version removes the op (Upsample-10, Scatter-11...)
  int minInputs, maxInputs;
  int minOutputs, maxOutputs;
  std::span<const AttrSchema> attributes;

  /// The attribute named `name`, or null when this version has none of that name.
  const AttrSchema *attribute(std::string_view name) const;
};

/// The newest default-domain opset the table describes.
int maxKnownDefaultOpset();

/// The schema of (domain, op) in effect at `opsetVersion` of that domain: the
/// newest version whose sinceVersion <= opsetVersion, or null when there is
/// none or that version is a deprecation (the op does not exist there).
/// "ai.onnx" and "" are the same domain.
const OpSchema *lookupOpSchema(std::string_view domain, std::string_view opType, int64_t opsetVersion);

/// Like lookupOpSchema, but a deprecation entry is returned too (then
/// `deprecated` is set and the op does not exist at that version).
const OpSchema *findOpSchemaVersion(std::string_view domain, std::string_view opType, int64_t opsetVersion);

/// Whether the table describes `domain` at all (unknown domains are custom ops).
bool isKnownSchemaDomain(std::string_view domain);

/// Every op version in the table, sorted by (domain, op, sinceVersion).
std::span<const OpSchema> allOpSchemas();

/// "int", "ints", "graph"...: the name of an attribute kind for diagnostics.
std::string_view attrKindName(AttrKind kind);

} // namespace onnxslim
