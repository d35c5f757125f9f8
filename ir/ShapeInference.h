//===- ir/ShapeInference.h - Type and shape inference ----------*- C++ -*-===//
//
// Infers the type of every node result of a model: element type and shape,
// with symbolic dims. Nodes are visited in topological order, through If,
// Loop, Scan and SequenceMap bodies (their inputs get types from the parent
// op's semantics; outer-scope values are visible), using the opset version
// the model imports for the default domain to pick each op's semantics.
//
// Symbolic dims. A dim is a number, a named symbol or unknown. Internally the
// inferencer works on SymDim expressions (ir/SymbolicDim.h), so `batch*seq`,
// `seq + 1` or an unnamed input dim can be proven equal where they meet (a
// broadcast, a Concat, a Reshape with -1). When written back to a Value, an
// expression that is neither a constant nor one of the model's own symbols
// becomes an unknown dim: user symbol names are kept, never rewritten, and no
// names are invented.
//
// Interface. Graph input types change only through
// ShapeInferenceOptions::inputShapes; declared graph output types (the
// GraphOutput slots) are never touched; the output *values* get their unknown
// dims filled like any other value. Existing value types are kept unless
// `overwrite`: inference only fills what they leave unknown.
//
// Symbolic values. Small integer tensors carry their contents as SymDims, so
// shape arithmetic (Shape -> Gather -> Concat -> Reshape) is followed:
// Shape(x) of x:[batch, seq, 768] is known to hold (batch, seq, 768).
// Tracked contents are what the tensor's element type holds at run time
// (a Cast to uint8 wraps, float arithmetic rounds to float, symbols live only
// in int64 tensors, undefined results are unknown), and no run-time size is
// assumed (a Slice to another tensor's length is not that length). The
// ShapeInferencer keeps these tables alive for passes that simplify shape
// chains (symbolicValue / symbolicShape).
//
// Never fails: a malformed node (rank mismatch, bad attribute) gets a warning
// naming it and its results keep their existing type (or none); nodes of
// unknown domains keep theirs.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "SymbolicDim.h"
#include "Type.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace onnxslim {

class Model;
class Node;
class Value;

struct ShapeInferenceOptions {
  /// Replace existing value types with the inferred ones (default: keep them
  /// and only fill the dims, element types and ranks they leave unknown).
  bool overwrite = false;
  /// Main-graph input shapes to use instead of the declared ones
  /// (`--input-shapes NAME:1,3,224,224`). A name that is no input is a warning.
  std::map<std::string, Shape> inputShapes;
  /// Also warn about ops (of any domain) without an inference rule and about
  /// node results left without a type.
  bool strict = false;
  /// Give each node result that gets a type and has no value_info entry one
  /// (appended after the existing entries), so the backend writes the
  /// inferred type. Graph outputs are excluded (their list declares them).
  bool addValueInfo = true;
};

struct ShapeInferenceResult {
  /// Values (node results and subgraph inputs) whose type was set or refined.
  size_t valuesTyped = 0;
  /// One line each, naming the node (name and op type) and the subgraph path.
  std::vector<std::string> warnings;
};

/// Infers types over a whole model and keeps the symbolic side tables alive
/// for later queries. Entries are keyed by Value pointer: after erasing
/// values, call forget() (or clear()) before their memory can be reused.
class ShapeInferencer {
public:
  /// Given a model (kept by reference) and options.
  explicit ShapeInferencer(Model &model, ShapeInferenceOptions options = {});
  ~ShapeInferencer();
  ShapeInferencer(const ShapeInferencer &) = delete;
  ShapeInferencer &operator=(const ShapeInferencer &) = delete;

  /// Execute: infers every graph (tables rebuilt from scratch) and writes the
  /// types back, Result: counts and warnings.
  ShapeInferenceResult run();

  /// Given a node, Result: the types its results would get from the current
  /// operand types and tables (nullopt where nothing is known). Writes nothing.
  std::vector<std::optional<Type>> inferResultTypes(const Node &node,
                                                    std::vector<std::string> *warnings = nullptr);
  /// Given a node and result number, Result: that result's inferred type.
  std::optional<Type> inferResultType(const Node &node, size_t resultIndex);
  /// Given a node (say, just rewritten), Execute: re-infers it (and the bodies
  /// it owns), writes its results' types (per the overwrite policy: clear a
  /// stale type first, or use `overwrite`) and updates the tables,
  /// Result: how many types changed. Users of its results are not revisited.
  size_t updateNode(Node &node, std::vector<std::string> *warnings = nullptr);

  /// Contents of a small tensor of integral values (shape arithmetic) as IR
  /// dims: numbers (negative ones too, e.g. -1 in a Reshape target), user
  /// symbols, unknown; nullopt when not known element by element.
  std::optional<std::vector<Dim>> symbolicValue(const Value *v);
  /// The same contents as SymDim expressions (anonymous and composite dims
  /// included, so they can be compared with symbolicShape()).
  std::optional<std::vector<SymDim>> symbolicElements(const Value *v);
  /// The symbolic shape of a tensor value (nullopt when its rank is unknown).
  std::optional<SymShape> symbolicShape(const Value *v);

  /// Given a value, Execute: drops what the tables know about it.
  void forget(const Value *v);
  /// Execute: drops all tables (types already written stay).
  void clear();

private:
  struct Impl;
  friend std::optional<Type> inferNodeResultType(const Node &, size_t, std::vector<std::string> *);
  friend std::unordered_map<const Value *, Type> inferTypesFromOps(const Model &, std::vector<std::string> *);
  std::unique_ptr<Impl> impl_;
};

/// Given a model, Execute: infers and writes the type of every node result
/// (ShapeInferencer::run), Result: counts and warnings.
ShapeInferenceResult inferShapes(Model &model, const ShapeInferenceOptions &options = {});

/// Given a model, Result: the type inferred for each value from the main
/// graph's declared input types, the initializers' data and the ops alone
/// (as with `overwrite`: a declared node result or subgraph input type is
/// used only where nothing is inferred for it, so that one wrong
/// declaration does not spread to the values computed from it). Values
/// nothing is known about are absent. Writes nothing. The validator
/// (ir/Validate.h) compares the declared types with these. With
/// `contradictions`, also the nodes whose operands' known dims or types
/// contradict the op (MatMul inner dims 5 and 3, dims that do not
/// broadcast...), one line each naming the node: ONNX Runtime refuses such
/// a model at load.
std::unordered_map<const Value *, Type> inferTypesFromOps(const Model &model,
                                                          std::vector<std::string> *contradictions = nullptr);

/// Given one node, Result: result `resultIndex`'s type inferred from its
/// operands' current types and constant data (initializers, Constant nodes;
/// shape arithmetic producing an operand is followed up to 48 nodes back),
/// or nullopt. For re-inferring a node after a rewrite without a whole run.
std::optional<Type> inferNodeResultType(const Node &node, size_t resultIndex,
                                        std::vector<std::string> *warnings = nullptr);

} // namespace onnxslim
