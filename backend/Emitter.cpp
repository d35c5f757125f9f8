//===- backend/Emitter.cpp - Serialize a model without copying tensors ----===//
#include "backend/Emitter.h"

#include <climits>
#include <memory>

namespace onnxslim::backend {

namespace {

size_t varintSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

/// Size of a length-delimited field record holding `length` bytes.
uint64_t recordSize(uint32_t field, uint64_t length) {
  return varintSize(uint64_t{field} << 3 | 2) + varintSize(length) + length;
}

/// Given protobuf output [p, p+n) and a start offset, Result: the offset of
/// the first record at or after `pos` whose field number exceeds `field`.
size_t skipFieldsUpTo(const uint8_t *p, size_t n, size_t pos, uint32_t field) {
  auto varint = [&]() {
    uint64_t v = 0;
    for (unsigned shift = 0; pos < n && shift < 64; shift += 7) {
      uint8_t b = p[pos++];
      v |= uint64_t{b & 0x7Fu} << shift;
      if (!(b & 0x80))
        break;
    }
    return v;
  };
  while (pos < n) {
    size_t start = pos;
    uint64_t tag = varint();
    if ((tag >> 3) > field)
      return start;
    switch (tag & 7) {
    case 0: varint(); break;
    case 1: pos += 8; break;
    case 2: pos += static_cast<size_t>(varint()); break;
    case 5: pos += 4; break;
    default: return n; // protobuf never writes groups for this schema
    }
  }
  return n;
}

bool holdsNested(const Attribute &a) {
  return a.t || a.g || !a.tensors.empty() || !a.graphs.empty();
}

} // namespace

//===----------------------------------------------------------------------===//
// Pieces
//===----------------------------------------------------------------------===//

void Pieces::appendHeader(uint32_t field, uint64_t length) {
  uint64_t values[2] = {uint64_t{field} << 3 | 2, length};
  for (uint64_t v : values) {
    while (v >= 0x80) {
      bytes_.push_back(static_cast<char>((v & 0x7F) | 0x80));
      v >>= 7;
    }
    bytes_.push_back(static_cast<char>(v));
  }
}

void Pieces::appendContent(const google::protobuf::MessageLite &msg, size_t size) {
  if (size > static_cast<size_t>(INT_MAX)) {
    markTooLarge(size);
    return;
  }
  size_t before = bytes_.size();
  bytes_.resize(before + size);
  msg.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t *>(bytes_.data() + before));
}

void Pieces::appendMessage(uint32_t field, const google::protobuf::MessageLite &msg) {
  size_t n = msg.ByteSizeLong(); // computes and caches the sizes appendContent uses
  appendHeader(field, n);
  appendContent(msg, n);
}

void Pieces::appendPieces(uint32_t field, Pieces &&child) {
  appendHeader(field, child.size());
  size_t base = bytes_.size();
  bytes_ += child.bytes_;
  raws_.reserve(raws_.size() + child.raws_.size());
  for (Raw &r : child.raws_)
    raws_.push_back(Raw{base + r.offset, std::move(r.bytes)});
  rawSize_ += child.rawSize_;
  tooLarge_ = tooLarge_ || child.tooLarge_;
}

void Pieces::appendRaw(const Buffer &bytes) {
  if (bytes.size() == 0)
    return;
  raws_.push_back(Raw{bytes_.size(), bytes});
  rawSize_ += bytes.size();
}

//===----------------------------------------------------------------------===//
// Emitter
//===----------------------------------------------------------------------===//

/// A tensor converted and sized, ready to be written.
struct Emitter::PreparedTensor {
  onnx::TensorProto proto; ///< Without raw_data.
  size_t protoSize = 0;
  Buffer raw;
  bool hasRaw = false;
  uint64_t size = 0; ///< Encoded TensorProto size, raw_data included.
};

/// An attribute converted and sized; nested graphs already serialized.
struct Emitter::PreparedAttribute {
  onnx::AttributeProto proto; ///< Whole if !nested, else without t/g/tensors/graphs.
  size_t protoSize = 0;
  bool nested = false;
  std::unique_ptr<PreparedTensor> t;
  std::unique_ptr<Pieces> g;
  std::vector<PreparedTensor> tensors;
  std::vector<Pieces> graphs;
  uint64_t size = 0; ///< Encoded AttributeProto size.
};

template <typename Emit>
bool Emitter::splice(const google::protobuf::MessageLite &skeleton, size_t skeletonSize,
                     const uint32_t *fields, size_t numFields, Emit &&emit, Pieces &out) {
  if (skeletonSize > static_cast<size_t>(INT_MAX)) {
    out.markTooLarge(skeletonSize);
    return true;
  }
  size_t base = out.bytes().size();
  out.bytes().resize(base + skeletonSize);
  const auto *p = reinterpret_cast<uint8_t *>(out.bytes().data() + base);
  skeleton.SerializeWithCachedSizesToArray(const_cast<uint8_t *>(p));
  if (numFields == 0)
    return true;
  // Where each insert goes, relative to the skeleton's start.
  size_t splits[8];
  size_t pos = 0;
  for (size_t i = 0; i < numFields; ++i)
    splits[i] = pos = skipFieldsUpTo(p, skeletonSize, pos, fields[i]);
  // Cut the skeleton after the first insert point; put it back piecewise.
  std::string rest(out.bytes(), base + splits[0]);
  out.bytes().resize(base + splits[0]);
  for (size_t i = 0; i < numFields; ++i) {
    if (i > 0)
      out.append(rest.data() + (splits[i - 1] - splits[0]), splits[i] - splits[i - 1]);
    if (!emit(i))
      return false;
  }
  size_t last = splits[numFields - 1] - splits[0];
  out.append(rest.data() + last, rest.size() - last);
  return true;
}

bool Emitter::prepareTensor(const Tensor &t, const std::string *name, bool isInitializer,
                            PreparedTensor &out) {
  if (!exporter_.exportTensor(t, out.proto, name, isInitializer, /*omitRaw=*/true, &out.raw,
                              &out.hasRaw))
    return false;
  out.protoSize = out.proto.ByteSizeLong();
  out.size = out.protoSize + (out.hasRaw ? recordSize(9, out.raw.size()) : 0);
  return true;
}

bool Emitter::writeTensor(uint32_t field, const PreparedTensor &t, Pieces &out) {
  out.appendHeader(field, t.size);
  if (!t.hasRaw) {
    out.appendContent(t.proto, t.protoSize);
    return true;
  }
  static const uint32_t kRawField[] = {9};
  return splice(t.proto, t.protoSize, kRawField, 1,
                [&](size_t) {
                  out.appendHeader(9, t.raw.size());
                  out.appendRaw(t.raw);
                  return true;
                },
                out);
}

bool Emitter::prepareAttribute(const Attribute &a, PreparedAttribute &out) {
  out.nested = holdsNested(a);
  if (!exporter_.exportAttribute(a, out.proto, /*withNested=*/!out.nested))
    return false;
  out.protoSize = out.proto.ByteSizeLong();
  out.size = out.protoSize;
  if (!out.nested)
    return true;
  if (a.t) {
    out.t = std::make_unique<PreparedTensor>();
    if (!prepareTensor(*a.t, nullptr, false, *out.t))
      return false;
    out.size += recordSize(5, out.t->size);
  }
  if (a.g) {
    out.g = std::make_unique<Pieces>();
    if (!graph(*a.g, *out.g))
      return false;
    out.size += recordSize(6, out.g->size());
  }
  // Sized up front: prepared messages cache their sizes and must not move.
  out.tensors.resize(a.tensors.size());
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    if (!a.tensors[i])
      continue;
    if (!prepareTensor(*a.tensors[i], nullptr, false, out.tensors[i]))
      return false;
    out.size += recordSize(10, out.tensors[i].size);
  }
  out.graphs.resize(a.graphs.size());
  for (size_t i = 0; i < a.graphs.size(); ++i) {
    if (!a.graphs[i])
      continue;
    if (!graph(*a.graphs[i], out.graphs[i]))
      return false;
    out.size += recordSize(11, out.graphs[i].size());
  }
  return true;
}

bool Emitter::writeAttribute(PreparedAttribute &a, Pieces &out) {
  out.appendHeader(5, a.size);
  if (!a.nested) {
    out.appendContent(a.proto, a.protoSize);
    return true;
  }
  static const uint32_t kNestedFields[] = {5, 6, 10, 11};
  return splice(a.proto, a.protoSize, kNestedFields, 4,
                [&](size_t i) {
                  switch (i) {
                  case 0:
                    return !a.t || writeTensor(5, *a.t, out);
                  case 1:
                    if (a.g)
                      out.appendPieces(6, std::move(*a.g));
                    return true;
                  case 2:
                    for (const PreparedTensor &t : a.tensors)
                      if (!writeTensor(10, t, out))
                        return false;
                    return true;
                  default:
                    for (Pieces &g : a.graphs)
                      out.appendPieces(11, std::move(g));
                    return true;
                  }
                },
                out);
}

bool Emitter::node(const Node &n, Pieces &out) {
  bool nested = false;
  for (const Attribute &a : n.attributes())
    nested = nested || holdsNested(a);
  if (!nested) {
    scratchNode_.Clear();
    if (!exporter_.exportNode(n, scratchNode_))
      return false;
    out.appendMessage(1, scratchNode_);
    return true;
  }
  onnx::NodeProto np;
  if (!exporter_.exportNode(n, np, /*withAttributes=*/false))
    return false;
  size_t npSize = np.ByteSizeLong();
  std::vector<PreparedAttribute> attrs(n.attributes().size());
  uint64_t size = npSize;
  for (size_t i = 0; i < attrs.size(); ++i) {
    if (!prepareAttribute(n.attributes()[i], attrs[i]))
      return false;
    size += recordSize(5, attrs[i].size);
  }
  out.appendHeader(1, size);
  static const uint32_t kAttributeField[] = {5};
  return splice(np, npSize, kAttributeField, 1,
                [&](size_t) {
                  for (PreparedAttribute &a : attrs)
                    if (!writeAttribute(a, out))
                      return false;
                  return true;
                },
                out);
}

bool Emitter::graph(const Graph &g, Pieces &out) {
  onnx::GraphProto gp;
  if (!exporter_.exportGraph(g, gp, /*withNodes=*/false, /*withInitializers=*/false))
    return false;
  static const uint32_t kFields[] = {1, 5};
  return splice(gp, gp.ByteSizeLong(), kFields, 2,
                [&](size_t i) {
                  if (i == 0) {
                    for (const Node *n : g.nodes())
                      if (!node(*n, out))
                        return false;
                    return true;
                  }
                  for (const Value *v : g.initializers()) {
                    if (!v->initializer())
                      continue;
                    PreparedTensor t;
                    if (!prepareTensor(*v->initializer(), &v->name(), /*isInitializer=*/true, t) ||
                        !writeTensor(5, t, out))
                      return false;
                  }
                  return true;
                },
                out);
}

bool Emitter::model(const Model &m, Pieces &out) {
  onnx::ModelProto mp;
  if (!exporter_.exportModelFields(m, mp))
    return false;
  static const uint32_t kGraphField[] = {7};
  return splice(mp, mp.ByteSizeLong(), kGraphField, m.graph() ? 1 : 0,
                [&](size_t) {
                  Pieces child;
                  if (!graph(*m.graph(), child))
                    return false;
                  out.appendPieces(7, std::move(child));
                  return true;
                },
                out);
}

} // namespace onnxslim::backend
