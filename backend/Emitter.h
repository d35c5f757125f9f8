//===- backend/Emitter.h - Serialize a model without copying tensors -*- C++ -*-===//
//
// Internal to backend/. Serializes a Model into Pieces: one byte string (the
// protobuf encoding of everything but tensor payloads) plus references to
// the tensor payloads (Buffers: the mapped input, external data or owned
// bytes) and where they go. The total size is known before anything is
// written, and writing the pieces in order yields exactly the bytes protobuf
// would produce for the whole ModelProto — without building that message or
// copying a single weight.
//
// How: a message on the path to tensor payloads (ModelProto → GraphProto →
// NodeProto → AttributeProto → TensorProto) is built by ProtoExporter as a
// skeleton without its nested graphs/nodes/tensors, serialized by protobuf,
// and the nested parts are spliced in at their field-number position
// (protobuf writes fields in number order). A node whose attributes hold no
// tensor and no graph is serialized whole by protobuf. A node holding
// tensors is sized first (skeleton sizes plus payload sizes) and written
// straight into its graph's pieces; only subgraphs are built separately
// (their size is known once they are built) and then appended.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "backend/ProtoExporter.h"

#include <string>
#include <vector>

namespace onnxslim::backend {

/// A serialized message: bytes, with tensor payloads referenced at offsets.
class Pieces {
public:
  /// Given bytes, Execute: appends them.
  void append(const char *p, size_t n) { bytes_.append(p, n); }
  /// Given a field number and a length, Execute: appends a length-delimited field header.
  void appendHeader(uint32_t field, uint64_t length);
  /// Given a message whose ByteSizeLong() was just computed, Execute:
  /// appends its encoding (no field header).
  void appendContent(const google::protobuf::MessageLite &msg, size_t size);
  /// Given a field number and a message, Execute: appends the field (protobuf-serialized).
  void appendMessage(uint32_t field, const google::protobuf::MessageLite &msg);
  /// Given a field number and pieces, Execute: appends them as that field.
  void appendPieces(uint32_t field, Pieces &&child);
  /// Given tensor bytes, Execute: appends a reference to them (no copy, no header).
  void appendRaw(const Buffer &bytes);

  /// Total encoded size.
  uint64_t size() const { return bytes_.size() + rawSize_; }
  /// Whether some part was too large for protobuf to encode (the total then
  /// exceeds 2 GB as well).
  bool tooLarge() const { return tooLarge_; }
  void markTooLarge(uint64_t size) {
    tooLarge_ = true;
    rawSize_ += size;
  }
  std::string &bytes() { return bytes_; }

  /// Given a sink `put(const char *, size_t)`, Execute: writes everything in order.
  template <typename Put> void emit(Put &&put) const {
    size_t pos = 0;
    for (const Raw &r : raws_) {
      put(bytes_.data() + pos, r.offset - pos);
      put(reinterpret_cast<const char *>(r.bytes.data()), r.bytes.size());
      pos = r.offset;
    }
    put(bytes_.data() + pos, bytes_.size() - pos);
  }

private:
  struct Raw {
    size_t offset; ///< Position in bytes_ where the payload goes.
    Buffer bytes;
  };
  std::string bytes_;
  std::vector<Raw> raws_;
  uint64_t rawSize_ = 0;
  bool tooLarge_ = false;
};

/// Serializes models into Pieces (see the file comment).
class Emitter {
public:
  explicit Emitter(const ExportOptions &opts) : exporter_(opts) {}

  /// Given a model, Execute: appends its ModelProto encoding to `out`,
  /// Result: false with error() set (a node that reads no value...).
  bool model(const Model &m, Pieces &out);
  const std::string &error() const { return exporter_.error(); }

private:
  struct PreparedTensor;
  struct PreparedAttribute;

  template <typename Emit>
  bool splice(const google::protobuf::MessageLite &skeleton, size_t skeletonSize,
              const uint32_t *fields, size_t numFields, Emit &&emit, Pieces &out);
  bool graph(const Graph &g, Pieces &out);
  bool node(const Node &n, Pieces &out);
  bool prepareTensor(const Tensor &t, const std::string *name, bool isInitializer,
                     PreparedTensor &out);
  bool writeTensor(uint32_t field, const PreparedTensor &t, Pieces &out);
  bool prepareAttribute(const Attribute &a, PreparedAttribute &out);
  bool writeAttribute(PreparedAttribute &a, Pieces &out);

  ProtoExporter exporter_;
  onnx::NodeProto scratchNode_; ///< Reused for nodes serialized whole.
};

} // namespace onnxslim::backend
