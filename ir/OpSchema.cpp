//===- ir/OpSchema.cpp - ONNX operator schema lookup -----------------------===//
//
// The table itself is generated data (ir/OpSchemaTable.inc); this file lays
// it out as constexpr arrays and looks versions up by binary search.
//
//===----------------------------------------------------------------------===//
#include "ir/OpSchema.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <tuple>

namespace onnxslim {

namespace {

constexpr AttrSchema kAttrs[] = {
#define ONNXSLIM_SCHEMA_ATTR(name, kind, required) AttrSchema{name, AttrKind::kind, required},
#include "ir/OpSchemaTable.inc"
#undef ONNXSLIM_SCHEMA_ATTR
};

constexpr size_t kNumAttrs = std::size(kAttrs);

const OpSchema kOps[] = {
#define ONNXSLIM_SCHEMA_OP(domain, op, since, deprecated, minIn, maxIn, minOut, maxOut, first, count)      \
  OpSchema{domain, op, since, deprecated, minIn, maxIn, minOut, maxOut,                                   \
           std::span<const AttrSchema>(kAttrs + (first), count)},
#include "ir/OpSchemaTable.inc"
#undef ONNXSLIM_SCHEMA_OP
};

static_assert(kNumAttrs > 0, "the generated table is empty");

std::string_view canonicalDomain(std::string_view domain) { return domain == "ai.onnx" ? std::string_view() : domain; }

} // namespace

const AttrSchema *OpSchema::attribute(std::string_view name) const {
  for (const AttrSchema &a : attributes)
    if (a.name == name)
      return &a;
  return nullptr;
}

int maxKnownDefaultOpset() { return ONNXSLIM_SCHEMA_MAX_DEFAULT_OPSET; }

const OpSchema *findOpSchemaVersion(std::string_view domain, std::string_view opType, int64_t opsetVersion) {
  domain = canonicalDomain(domain);
  // The table is sorted by (domain, op, since): find the last entry <= (domain, op, version).
  auto key = [](const OpSchema &s) { return std::make_tuple(s.domain, s.opType, static_cast<int64_t>(s.sinceVersion)); };
  auto it = std::upper_bound(std::begin(kOps), std::end(kOps), std::make_tuple(domain, opType, opsetVersion),
                             [&](const auto &k, const OpSchema &s) { return k < key(s); });
  if (it == std::begin(kOps))
    return nullptr;
  const OpSchema &s = *(it - 1);
  if (s.domain != domain || s.opType != opType)
    return nullptr;
  return &s;
}

const OpSchema *lookupOpSchema(std::string_view domain, std::string_view opType, int64_t opsetVersion) {
  const OpSchema *s = findOpSchemaVersion(domain, opType, opsetVersion);
  return s && !s->deprecated ? s : nullptr;
}

bool isKnownSchemaDomain(std::string_view domain) {
  domain = canonicalDomain(domain);
  return std::any_of(std::begin(kOps), std::end(kOps), [&](const OpSchema &s) { return s.domain == domain; });
}

std::span<const OpSchema> allOpSchemas() { return {kOps, std::size(kOps)}; }

std::string_view attrKindName(AttrKind kind) {
  switch (kind) {
  case AttrKind::Undefined: return "undefined";
  case AttrKind::Float: return "float";
  case AttrKind::Int: return "int";
  case AttrKind::String: return "string";
  case AttrKind::Tensor: return "tensor";
  case AttrKind::Graph: return "graph";
  case AttrKind::SparseTensor: return "sparse_tensor";
  case AttrKind::TypeProto: return "type_proto";
  case AttrKind::Floats: return "floats";
  case AttrKind::Ints: return "ints";
  case AttrKind::Strings: return "strings";
  case AttrKind::Tensors: return "tensors";
  case AttrKind::Graphs: return "graphs";
  case AttrKind::SparseTensors: return "sparse_tensors";
  case AttrKind::TypeProtos: return "type_protos";
  }
  return "unknown";
}

} // namespace onnxslim
