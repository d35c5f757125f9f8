//===- transforms/ValueUtils.h - Questions passes ask of values -*- C++ -*-===//
//
// Small helpers shared by the passes: the constant a value holds (an
// initializer that is not a graph input, or a Constant node's result), its
// integer elements, whether every element is 0 or 1, the known shape and
// element type of a value, and the common rewrite "this node computes its
// input: replace it by that input" done without renaming graph outputs.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"

#include <optional>
#include <string_view>
#include <vector>

namespace onnxslim {

class Rewriter;

/// Whether `node` owns subgraphs (If/Loop/Scan bodies); unlike
/// Node::subgraphs() it allocates nothing, so hot loops ask this first.
inline bool hasSubgraphs(const Node &node) {
  for (const Attribute &a : node.attributes())
    if (a.g || !a.graphs.empty())
      return true;
  return false;
}

/// Given a Constant node, Result: its tensor (value, value_float(s),
/// value_int(s), value_string(s)); null for sparse_value, an attribute
/// reference or a malformed node.
TensorPtr constantNodeTensor(const Node &node);

/// Given a value, Result: the constant it holds (an initializer that is not
/// a graph input, or a Constant node's result) if its bytes match its dtype
/// and dims; null otherwise.
TensorPtr constantTensor(const Value *value);

/// Given an integer constant (any integer dtype), Result: its elements as
/// int64; nullopt for anything else.
std::optional<std::vector<int64_t>> constantInts(const Value *value);

/// Given a tensor and 0 or 1, Result: whether it has at least one element
/// and every element equals that number exactly (numeric dtypes only; -0.0
/// counts as 0).
bool isSplatOf(const Tensor &tensor, int number);

/// Given a tensor, Result: a hash of its dtype, dims and content (XXH3),
/// computed on first request and cached in Tensor::cachedHash; never 0.
/// `computed` (optional) tells whether this call did the hashing.
uint64_t tensorContentHash(const Tensor &tensor, bool *computed = nullptr);

/// Given a value, Result: its shape when its type is a tensor of known rank
/// (from its declared type, or the dims of the constant it holds).
std::optional<Shape> knownShape(const Value *value);

/// Given a value, Result: its element type when known.
std::optional<DataType> knownElemType(const Value *value);

/// Whether two dims are known to be equal (the same number or the same symbol).
bool knownEqual(const Dim &a, const Dim &b);

/// Where a dim of a value comes from: the value and dim it is a copy of,
/// found by following, for every input, exact copies back through
/// Transpose (the permuted dim), Reshape with allowzero = 0 and a 0 at that
/// position (the input's dim), MatMul with a 1-D/2-D right side (the left
/// side's dims but the last), shape-preserving unary ops and elementwise
/// binary ops whose other operand is a constant that broadcasts there (its
/// aligned dim is 1 or absent). Stops at anything else (say, a graph input
/// or a Reshape that computes the dim). Result: the origin; (value, dim)
/// itself when nothing is followed.
std::pair<const Value *, size_t> dimOrigin(const Value *value, size_t dim);

/// Whether dim `ad` of `a` and dim `bd` of `b` are equal on every input:
/// known equal (knownEqual), or copies of one dim (dimOrigin), which also
/// holds for dims nothing else knows (`?` after a Reshape with -1).
bool sameDim(const Value *a, size_t ad, const Value *b, size_t bd);

/// Whether two tensors are equal: dtype, dims and bytes (the same pointer,
/// or equal content hashes and content).
bool sameTensorContent(const TensorPtr &a, const TensorPtr &b);
/// Whether two attributes are equal (name, kind, value bit for bit; graph
/// attributes are never equal).
bool sameAttribute(const Attribute &a, const Attribute &b);
/// Whether two nodes carry the same attributes, in any order.
bool sameAttributes(const Node &a, const Node &b);

/// Given a node all of whose results but the first are unused and a value
/// equal to that first result, Execute: makes the users read `replacement`
/// and erases the node; when the result is a graph output (whose name is the
/// model's interface) the node becomes `Identity(replacement)` instead,
/// which eliminate-identity-ops resolves, Result: false (no change) when
/// there is nothing to do, with the reason reported through the rewriter.
bool replaceNodeWithValue(Node *node, Value *replacement, Rewriter &rewriter, std::string_view what);

} // namespace onnxslim
