//===- backend/ProtoExporter.h - Raise the IR to ONNX protobuf -*- C++ -*-===//
//
// Internal to backend/. The inverse of frontend/ProtoImporter: converts IR
// models, graphs, nodes, attributes, tensors and types into protobuf
// messages, honouring the ExplicitFields and tensor encodings the importer
// recorded so that an unchanged model is written back field-for-field equal.
// Tensor payloads can be diverted to an external-data file (ExternalSink)
// or left out of the message for the writer to stream (omitRaw).
//
// IR versions 1-3 require every initializer of the main graph to be a graph
// input as well; an initializer a pass added to such a model is listed in
// graph.input (after the declared inputs, typed from its tensor) and not in
// value_info. A model that was valid has none to add, so it round-trips.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"
#include "schema/onnx.pb.h"

#include <string>
#include <vector>

namespace onnxslim::backend {

/// Collects the tensors written to one external-data file and gives each an
/// aligned offset in it.
class ExternalSink {
public:
  explicit ExternalSink(std::string location) : location_(std::move(location)) {}

  struct Chunk {
    Buffer bytes; ///< Keeps the tensor's storage alive until it is written.
    uint64_t offset;
  };
  /// Given tensor bytes, Execute: reserves room for them, Result: their offset.
  uint64_t add(const Buffer &bytes);
  const std::string &location() const { return location_; }
  const std::vector<Chunk> &chunks() const { return chunks_; }
  uint64_t size() const { return size_; }

private:
  std::string location_;
  std::vector<Chunk> chunks_;
  uint64_t size_ = 0;
};

struct ExportOptions {
  /// Where external tensors go; null writes every tensor inline (tensors
  /// loaded from external data then become raw_data).
  ExternalSink *external = nullptr;
  /// Also move initializers of at least `threshold` bytes to `external`.
  bool externalizeLarge = false;
  size_t threshold = 1024;
};

class ProtoExporter {
public:
  explicit ProtoExporter(const ExportOptions &opts) : opts_(opts) {}

  /// Given a model, Execute: fills every ModelProto field but `graph` (and
  /// remembers the model's IR version for exporting its main graph).
  bool exportModelFields(const Model &m, onnx::ModelProto &p);
  /// Given a graph, Execute: fills `p`; without nodes/initializers if asked
  /// (backend/Emitter streams those itself).
  bool exportGraph(const Graph &g, onnx::GraphProto &p, bool withNodes = true,
                   bool withInitializers = true);
  /// Given a node, Execute: fills `p`, without attributes if asked.
  bool exportNode(const Node &n, onnx::NodeProto &p, bool withAttributes = true);
  /// Given an attribute, Execute: fills `p`; with `withNested` false, leaves
  /// out the tensors (t, tensors) and graphs (g, graphs) it holds.
  bool exportAttribute(const Attribute &a, onnx::AttributeProto &p, bool withNested = true);
  /// Given a tensor, Execute: fills `p`. `name` overrides the tensor's name
  /// (an initializer is named by its value). With `omitRaw`, raw bytes are
  /// not copied into `p`; `rawOut` then receives them and `hasRaw` says
  /// whether a raw_data field must be streamed after the header.
  bool exportTensor(const Tensor &t, onnx::TensorProto &p, const std::string *name,
                    bool isInitializer, bool omitRaw, Buffer *rawOut = nullptr,
                    bool *hasRaw = nullptr);

  const std::string &error() const { return error_; }

private:
  bool exportSparse(const SparseTensor &s, onnx::SparseTensorProto &p, const std::string *name);
  bool exportFunction(const Function &f, onnx::FunctionProto &p);
  void exportValueInfos(const Graph &g, google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> &out);
  bool fail(const std::string &msg);

  /// Whether `g` is the main graph of a model of IR version 1-3, where
  /// every initializer must also be a graph input.
  bool initializersAreInputs(const Graph &g) const;

  ExportOptions opts_;
  std::string error_;
  /// Set by exportModelFields: the model's main graph and IR version.
  const Graph *mainGraph_ = nullptr;
  int64_t irVersion_ = 0;
};

/// Converts an IR type into `p` (which the caller has made present).
void exportType(const Type &t, onnx::TypeProto &p);

} // namespace onnxslim::backend
