//===- ir/shape/InferContext.h - Per-node shape inference rules -*- C++ -*-===//
//
// Internal to ir/ShapeInference: what an inference rule sees (the node, the
// opset version, what is known of each operand) and how it reports results.
// One rule per op type, grouped by op family in ir/shape/*.cpp and collected
// in one table. A rule reads operands through InferContext, sets result facts
// with setTensor/setFacts/setElements, and on a malformed node calls fail()
// with a reason and returns: the driver then discards its results and warns.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"
#include "ir/SymbolicDim.h"

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace onnxslim::shape {

/// The default-domain opset assumed when a model imports none.
inline constexpr int64_t kLatestOpset = 21;
/// Largest tensor whose contents are tracked element by element.
inline constexpr size_t kMaxElements = 1024;

/// What inference knows about one value.
struct Facts {
  /// The type; for tensors only kind and element type are used here (the
  /// shape lives in `shape`). Other kinds carry their full type.
  std::optional<Type> type;
  /// Symbolic tensor shape; nullopt when the rank is unknown.
  std::optional<SymShape> shape;
  /// Flat row-major contents, when every element is known (small tensors).
  std::optional<std::vector<SymDim>> elements;
  /// The data, when the value is a constant (initializer or Constant node).
  TensorPtr constant;

  bool isTensor() const { return type && type->kind() == Type::Kind::Tensor; }
  /// Element type of a tensor, Undefined when not a tensor or not known.
  DataType elem() const;
  /// The IR type (tensor dims via SymDim::toDim).
  Type toType() const;
  static Facts fromType(const Type &t);
  static Facts tensor(DataType elem, std::optional<SymShape> shape);
  /// Facts of a constant tensor (type, shape, data; elements computed lazily).
  static Facts ofConstant(TensorPtr t);
};

class InferContext;
using InferFn = void (*)(InferContext &);
using RuleTable = std::unordered_map<std::string_view, InferFn>;

/// Looks up the facts of an operand value (null when nothing is known).
using FactsLookup = std::function<const Facts *(const Value *)>;
/// Infers a subgraph given facts for its inputs; returns facts for its outputs
/// (entries nullopt where unknown), or nullopt when the body is malformed.
/// `quiet` suppresses warnings (a branch that provably never runs); `fails`
/// (when given) is set when a node of the body itself is malformed for these
/// inputs, so the body cannot complete at run time.
using SubgraphInferFn = std::function<std::optional<std::vector<std::optional<Facts>>>(
    const Graph &, const std::vector<std::optional<Facts>> &, bool quiet, bool *fails)>;

class InferContext {
public:
  InferContext(const Node &node, int64_t opset, FactsLookup lookup, SubgraphInferFn subgraph,
               uint64_t *anonCounter);

  const Node &node() const { return node_; }
  /// The default-domain opset version the model imports.
  int64_t opset() const { return opset_; }

  //===--- Operands ---------------------------------------------------===//
  size_t numInputs() const { return node_.numOperands(); }
  /// Whether operand i is present (not an omitted optional input).
  bool hasInput(size_t i) const { return node_.operand(i) != nullptr; }
  /// What is known of operand i, or null.
  const Facts *input(size_t i) const;
  /// Operand i's type (any kind), or null.
  const Type *inputType(size_t i) const;
  /// Operand i's element type when it is a tensor of known element type.
  std::optional<DataType> elemType(size_t i) const;
  /// Operand i's symbolic shape, or null when its rank is unknown.
  const SymShape *shape(size_t i) const;
  std::optional<int64_t> rank(size_t i) const;
  /// Operand i's contents (from tracked elements or constant data).
  std::optional<std::vector<SymDim>> elements(size_t i) const;
  /// Operand i's contents when every element is a known integer.
  std::optional<std::vector<int64_t>> ints(size_t i) const;
  /// Operand i's contents as doubles (constant float data or known integers).
  std::optional<std::vector<double>> doubles(size_t i) const;
  /// Operand i's constant data, or null.
  TensorPtr constant(size_t i) const;

  //===--- Results ----------------------------------------------------===//
  size_t numOutputs() const { return node_.numResults(); }
  bool hasOutput(size_t i) const { return node_.result(i) != nullptr; }
  /// Given a result index, element type and shape, Execute: records a tensor result.
  void setTensor(size_t i, DataType elem, std::optional<SymShape> shape);
  /// Given a result index and facts, Execute: records them.
  void setFacts(size_t i, Facts f);
  /// Given a result index and IR type, Execute: records it.
  void setType(size_t i, const Type &t) { setFacts(i, Facts::fromType(t)); }
  /// Given a result index and its flat contents (each the exact result of one
  /// operation), Execute: records them as the result's element type holds
  /// them (representElement; nothing for an unknown element type), dropped
  /// unless the result's shape is static and holds exactly that many.
  void setElements(size_t i, std::vector<SymDim> elements);
  /// Result i gets operand j's type and shape (not its contents).
  void propagate(size_t i, size_t j);
  const std::vector<std::optional<Facts>> &results() const { return results_; }
  std::vector<std::optional<Facts>> takeResults() { return std::move(results_); }

  //===--- Diagnostics and helpers ------------------------------------===//
  /// Given a reason, Execute: marks the node malformed, Result: false.
  bool fail(std::string reason);
  bool failed() const { return failed_; }
  const std::string &error() const { return error_; }
  /// A fresh anonymous dim: a size not known but the same wherever it flows.
  SymDim freshDim();
  /// Infers a body graph (If/Loop/Scan/SequenceMap); `quiet` for a body
  /// that never runs (its malformed nodes are not reported); `fails` is set
  /// when the body cannot complete with these inputs (see SubgraphInferFn).
  std::optional<std::vector<std::optional<Facts>>>
  inferSubgraph(const Graph &g, const std::vector<std::optional<Facts>> &inputs, bool quiet = false,
                bool *fails = nullptr) const;

  /// Given an axis and a rank, Result: the axis in [0, rank), or nullopt after fail().
  std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank, const char *what = "axis");
  /// Given shapes (null = unknown rank), Result: their multidirectional
  /// broadcast, nullopt when a rank is unknown; fails on incompatible dims.
  std::optional<SymShape> broadcast(const std::vector<const SymShape *> &shapes);

private:
  const Node &node_;
  int64_t opset_;
  FactsLookup lookup_;
  SubgraphInferFn subgraph_;
  uint64_t *anonCounter_;
  std::vector<std::optional<Facts>> results_;
  bool failed_ = false;
  std::string error_;
};

//===--- Shared helpers -----------------------------------------------===//

/// Contents of a (small, numeric) tensor as SymDims: integers exactly, floats
/// only when every value is integral; nullopt otherwise.
std::optional<std::vector<SymDim>> tensorElements(const Tensor &t);
/// Contents of a numeric tensor as doubles, nullopt for other dtypes or sizes.
std::optional<std::vector<double>> tensorDoubles(const Tensor &t,
                                                 size_t maxElements = kMaxElements);
/// Given the exact result of one operation on tracked elements and the
/// element type of the tensor that holds it, Result: what that tensor holds
/// there. int64 keeps anything (symbolic dims included); the other integer
/// types and bool keep numbers in their range (a value outside is not known:
/// the op's wrap-around is not modeled); float, double and float16 round a
/// number to nearest even as one IEEE operation does (overflow: not known);
/// bfloat16 keeps exactly representable numbers only; every other type, and
/// any symbolic element outside int64, is not known.
SymDim representElement(const SymDim &exact, DataType dt);
/// Whether `v` is a number `dt` holds exactly (no rounding, no wrap).
bool exactlyRepresentable(int64_t v, DataType dt);
/// Whether `dt` holds every integer of magnitude <= `bound` exactly (so sums
/// and products bounded so are exact in any evaluation order).
bool holdsIntegersUpTo(uint64_t bound, DataType dt);
/// Given an element held by a tensor of type `from` and a target type, Result:
/// Cast's result as ONNX Runtime computes it: integers (and bool) wrap to a
/// narrower integer type, floating values convert to an integer type only in
/// range (out of range is undefined: not known), anything to bool is `!= 0`,
/// and a number to a floating type rounds as representElement does.
SymDim castElement(const SymDim &v, DataType from, DataType to);
using ElementFn = std::function<SymDim(const std::vector<SymDim> &)>;
/// Given result `result`'s static shape (already set) and the contents of
/// `operands`, Execute: computes the result's contents elementwise with numpy
/// broadcasting; does nothing when some contents or shapes are not known.
void broadcastElements(InferContext &ctx, size_t result, const std::vector<size_t> &operands,
                       const ElementFn &fn);
/// Broadcast of two dims; `ok` is cleared when they are provably incompatible.
SymDim broadcastDim(const SymDim &a, const SymDim &b, bool &ok);
/// The merge of two facts of one value from different paths (If branches,
/// Loop iterations): equal parts kept, differing dims unknown.
std::optional<Facts> mergeFacts(const std::optional<Facts> &a, const std::optional<Facts> &b);
/// Merge of two IR types the same way (nullopt when the kinds differ).
std::optional<Type> mergeTypes(const Type &a, const Type &b);
/// An int attribute naming an element type (Cast's `to`, `dtype`...), when valid.
std::optional<DataType> dataTypeAttr(const Node &n, std::string_view name);

//===--- Rule families (one .cpp each) ---------------------------------===//
void addElementwiseRules(RuleTable &t);
void addTensorRules(RuleTable &t);
void addReductionRules(RuleTable &t);
void addNNRules(RuleTable &t);
void addSequenceRules(RuleTable &t);

/// The rule for a default-domain op type, or null.
InferFn findRule(std::string_view opType);
/// The rule for an op of another domain this file knows (ai.onnx.ml,
/// ai.onnx.preview.training), or null.
InferFn findDomainRule(std::string_view domain, std::string_view opType);

} // namespace onnxslim::shape
