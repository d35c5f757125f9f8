//===- frontend/ProtoImporter.h - Lower ONNX protobuf messages to IR -*- C++ -*-===//
//
// Internal to frontend/. Converts parsed protobuf messages (ModelProto minus
// its graph, GraphProto, NodeProto, TensorProto, TypeProto...) into the IR:
// names resolve to Values through a chain of scopes, an unsorted node list is
// sorted, value_info entries attach to the values they name, and every field
// the IR does not use itself is kept for a lossless round trip. The loader
// (frontend/Loader.cpp) leaves raw_data out of the messages it scanned and
// passes it as views into the mapped file (RawViews).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/Loader.h"
#include "ir/IR.h"
#include "schema/onnx.pb.h"

#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace onnxslim::frontend {

/// A lazily built description of a place in the model, for error messages:
/// a non-owning reference to a callable returning the text (the callable
/// must outlive the call it is passed to).
class Where {
public:
  template <typename F>
    requires(!std::is_same_v<std::decay_t<F>, Where>)
  Where(const F &f) // NOLINT: implicit on purpose, so lambdas pass directly
      : obj_(&f), call_([](const void *o) { return (*static_cast<const F *>(o))(); }) {}
  std::string operator()() const { return call_(obj_); }

private:
  const void *obj_;
  std::string (*call_)(const void *);
};

/// raw_data payloads the loader left out of TensorProto messages, viewed in
/// the mapped file instead, keyed by the message they belong to.
using RawViews = std::unordered_map<const onnx::TensorProto *, Buffer>;

/// What the importer needs to know about the file being read.
struct ImportContext {
  std::string displayName; ///< File name for messages.
  std::string baseDir;     ///< Directory external_data locations are relative to.
  LoadOptions options;
  /// raw_data of scanned tensors (see RawViews).
  RawViews rawViews;
  /// External-data files mapped so far, by resolved path.
  std::unordered_map<std::string, std::shared_ptr<MappedFile>> externalFiles;
};

class ProtoImporter {
public:
  explicit ProtoImporter(ImportContext &ctx) : ctx_(ctx) {}

  /// Given a ModelProto without its graph, the main GraphProto (null when the
  /// model has none) and the serialized training_info/configuration entries,
  /// Execute: builds the model, Result: the model, or null with error() set.
  std::unique_ptr<Model> importModel(onnx::ModelProto &model, onnx::GraphProto *graph,
                                     std::vector<std::string> trainingInfo,
                                     std::vector<std::string> configuration);

  /// Given a TensorProto (raw_data inside it, in the context's rawViews, or
  /// passed as `raw`), Execute: converts it (resolving external data),
  /// Result: the tensor, or
  /// null with error() set. `where` names the tensor's place in messages.
  TensorPtr importTensor(onnx::TensorProto &tp, std::optional<Buffer> raw, const Where &where);

  /// The first error, already prefixed with the file name.
  const std::string &error() const { return error_; }

private:
  struct Scope;
  bool importGraph(onnx::GraphProto &gp, Graph &g, Scope *parent, const std::string &path);
  bool importInitializer(onnx::TensorProto &tp, Graph &g, Scope &scope, const std::string &path,
                         size_t index);
  bool importNodes(google::protobuf::RepeatedPtrField<onnx::NodeProto> &nodes, Graph &g,
                   Scope &scope, const std::string &path);
  bool sortNodes(const google::protobuf::RepeatedPtrField<onnx::NodeProto> &nodes,
                 const Scope &scope, const std::string &path, std::vector<int> &order);
  bool importNode(onnx::NodeProto &np, size_t index, Graph &g, Scope &scope,
                  const std::string &path);
  bool importAttribute(onnx::AttributeProto &ap, Node *owner, Scope *scope, const Where &nodePath,
                       Attribute &a);
  bool importSubgraph(onnx::GraphProto &gp, Node *owner, Scope *scope, const std::string &path,
                      std::unique_ptr<Graph> &out);
  bool importOutputs(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> &outputs, Graph &g,
                     Scope &scope, const std::string &path);
  void importValueInfos(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> &infos,
                        Graph &g, Scope &scope);
  bool importFunction(onnx::FunctionProto &fp, Function &f);
  /// Names a graph captures from enclosing scopes (memoized per GraphProto).
  const std::vector<std::string> &freeNames(const onnx::GraphProto &g);
  std::shared_ptr<const SparseTensor> importSparse(onnx::SparseTensorProto &sp, const Where &where);
  bool decodeTyped(onnx::TensorProto &tp, Tensor &t, const Where &where);
  bool resolveExternal(Tensor &t, const Where &where);
  void reserve(const std::string &name);
  bool fail(const std::string &msg);

  ImportContext &ctx_;
  Model *model_ = nullptr;
  std::string error_;
  std::unordered_map<const onnx::GraphProto *, std::vector<std::string>> freeNames_;
};

/// Converts a TypeProto; opaque types (not modelled by the IR) set `error`.
std::optional<Type> importType(const onnx::TypeProto &tp, std::string &error);

} // namespace onnxslim::frontend
