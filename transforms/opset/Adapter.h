//===- transforms/opset/Adapter.h - Per-op opset version adapters -*- C++ -*-===//
//
// convert-opset (ConvertOpset.cpp) moves every default-domain node from the
// model's opset to a target one, one op version at a time. A step is keyed
// by (op, since-version of the newer schema, direction): upgrading takes a
// node from its schema at version p to the next one, s; downgrading takes a
// node at s back to p (the schema in effect at s - 1). For each step there
// must be a registered adapter; a node without one makes the whole model be
// declined, naming the node and the step.
//
// An adapter rewrites the node (and may insert nodes before it, which are
// created directly in their form at the target opset) or refuses with a
// reason. After each step the driver checks the node against the schema it
// now claims (attributes and arity); on a downgrade an attribute the older
// version lacks is dropped when it holds its neutral default (see
// isNeutralAttribute) and refused otherwise.
//
// Adapters are grouped by op family, one file each:
//   VersionBumps.cpp        steps that change nothing but the version
//   AttributesToInputs.cpp  attributes that became inputs (Squeeze, Reduce*,
//                           Split, Pad, Slice, TopK, Clip, Dropout...)
//   AxisSemantics.cpp       Softmax/LogSoftmax/Hardmax at 13
//   Normalization.cpp       BatchNormalization (spatial, training outputs),
//                           GroupNormalization (per-group -> per-channel)
//   Scan.cpp                Scan-9's removal of the batch axis, Scan-11's
//                           negative axes
//   Resize.cpp              Upsample -> Resize and Resize's versions
//   Renamed.cpp             ops replaced or whose attribute values changed
//                           (Scatter, RoiAlign, GridSample, DFT's axis)
//   Broadcast.cpp           the legacy broadcast attributes (opset < 7)
//   ExpandTransformer.cpp   the transformer ops written out for opsets that
//                           lack them (LayerNormalization, Gelu,
//                           RMSNormalization, RotaryEmbedding, Attention)
//                           and what their bodies need further down (Range,
//                           runtime Slice, GatherND, LessOrEqual...)
//   ExpandFunctions.cpp     other ops newer than the target written out in
//                           older ones (their ONNX function bodies: losses,
//                           Celu, Einsum, DFT, windows, quantized GEMMs...)
//   ExpandElementwise.cpp   activations and element-wise functions (Mish,
//                           Swish, Shrink, hyperbolic functions...),
//                           Quantize/DequantizeLinear before 10, image ops
//                           with function bodies (CenterCropPad, AffineGrid,
//                           GridSample)
//   ExpandScatter.cpp       downgrades of attributes written out exactly:
//                           ScatterND/ScatterElements reductions (a Loop
//                           over the update rows), GatherND's batch_dims,
//                           Reshape's allowzero
//
// An expansion is an adapter registered for the step below an op's first
// version (op, since-version, Down): it writes the op's definition with
// StepContext::nodeBefore in the ops of the opset just below, turning the
// node itself into the body's last node; the driver then walks each node
// it wrote on to the target, so older targets reuse every other adapter.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace onnxslim {

class PassContext;

namespace opset {

enum class Direction { Up, Down };

/// What an adapter sees besides its node.
struct StepContext {
  Model &model;
  Direction direction;
  int64_t from;   ///< since-version of the node's schema before the step
  int64_t to;     ///< since-version after the step
  int64_t target; ///< the opset the whole model is converted to

  /// Given a node, a name base and a tensor, Execute: inserts a Constant
  /// holding the tensor right before the node, Result: its value.
  Value *constantBefore(Node &node, std::string_view base, TensorPtr tensor);
  /// Given a node, an op type, operands and a name base, Execute: inserts a
  /// new node before `node` (one result, named from `base`), Result: it.
  /// The new node is written in its form at opset `to`; after the step the
  /// driver infers its result types and walks it on to the target like any
  /// other node, so an expansion is written once, for the opset just below
  /// the op it replaces, and older targets come from the adapters of the
  /// ops it uses.
  Node *nodeBefore(Node &node, std::string opType, const std::vector<Value *> &operands, std::string_view base);

  /// The nodes nodeBefore() made during this step, in order.
  std::vector<Node *> created;
  /// Int64 1-D tensor of `values` (or a scalar when `scalar`).
  static TensorPtr int64s(const std::vector<int64_t> &values, bool scalar = false);
};

/// "" when the step succeeded, else why the node cannot take it.
using AdapterFn = std::string (*)(Node &node, StepContext &ctx);

class AdapterRegistry {
public:
  /// Given an op, the since-version s of the newer schema, a direction and a
  /// function, Execute: registers it (a later registration replaces).
  void add(std::string_view op, int version, Direction direction, AdapterFn fn);
  /// Registers the same function both ways.
  void addBoth(std::string_view op, int version, AdapterFn fn);
  /// The adapter for (op, s, direction), or null.
  AdapterFn find(std::string_view op, int version, Direction direction) const;
  size_t size() const { return adapters_.size(); }

private:
  std::map<std::tuple<std::string, int, Direction>, AdapterFn, std::less<>> adapters_;
};

/// Steps that need no rewrite (VersionBumps.cpp).
void registerVersionBumps(AdapterRegistry &registry);
/// Attributes that became inputs (AttributesToInputs.cpp).
void registerAttributesToInputs(AdapterRegistry &registry);
/// Softmax/LogSoftmax/Hardmax (AxisSemantics.cpp).
void registerAxisSemantics(AdapterRegistry &registry);
/// BatchNormalization (Normalization.cpp).
void registerNormalization(AdapterRegistry &registry);
/// Upsample and Resize (Resize.cpp).
void registerResize(AdapterRegistry &registry);
/// Scatter, RoiAlign, GridSample (Renamed.cpp).
void registerRenamed(AdapterRegistry &registry);

/// Legacy broadcasting before 7 (Broadcast.cpp).
void registerBroadcast(AdapterRegistry &registry);

/// Scan (Scan.cpp).
void registerScan(AdapterRegistry &registry);

/// The transformer ops and what their bodies need (ExpandTransformer.cpp).
void registerTransformerExpansions(AdapterRegistry &registry);
/// Other ops newer than the target (ExpandFunctions.cpp).
void registerFunctionExpansions(AdapterRegistry &registry);
/// Activations, element-wise functions, quantization (ExpandElementwise.cpp).
void registerElementwiseExpansions(AdapterRegistry &registry);
/// Scatter reductions, GatherND batch_dims, Reshape allowzero going down
/// (ExpandScatter.cpp); registered after VersionBumps.cpp, whose adapters
/// of the same steps it replaces.
void registerScatterExpansions(AdapterRegistry &registry);

/// Every adapter above, built once.
const AdapterRegistry &builtinAdapters();

/// Whether attribute `a` of `op` holds the value that means the same as its
/// absence in an older version (select_last_index=0, ceil_mode=0, ...), so a
/// downgrade may drop it.
bool isNeutralAttribute(std::string_view op, const Attribute &a);

/// Whether the changelog's deprecation entry of `op` at `sinceVersion` is
/// really a version with a same-named successor, which ONNX Runtime still
/// runs: GroupNormalization-18 (deprecated for its per-group scale/bias,
/// fixed by GroupNormalization-21; onnx/onnx#7939). A model holding one
/// loads only with --allow-invalid; the driver then upgrades such a node
/// through its adapter (Normalization.cpp). Nothing is converted down to
/// it: onnx.checker and our validator reject it.
bool isSupersededInPlace(std::string_view op, int64_t sinceVersion);

//===--- Helpers shared by the adapter files --------------------------===//

/// "Op 'name'" for messages.
std::string describe(const Node &node);
/// "name_what" (or "Op_what" for an unnamed node): the base of the names of
/// what an adapter makes for the node.
std::string nodeBase(const Node &node, std::string_view what);
/// Given a node, an axes-taking op (Squeeze, Unsqueeze), its data and
/// axes, Execute: creates that op over `x` in its form at the target opset
/// (axes an attribute before 13, a Constant input from 13, inserted before
/// `node`), Result: the new node, not yet placed in the graph.
Node *createAxesOp(Node &node, StepContext &ctx, std::string opType, Value *x, const std::vector<int64_t> &axes,
                   std::string_view base);
/// Given a node, one of its results i and a new node `w` (not yet placed)
/// whose operand 0 is that result, Execute: places `w` right after the
/// node and moves the result's uses, name, declared type and value_info to
/// `w`'s result (the model's interface keeps its names), leaving result i
/// with a fresh name ("name_what") and type `inner`.
void wrapResult(Node &node, size_t i, Node *w, StepContext &ctx, std::optional<Type> inner, std::string_view what);
/// Given a node and an operand index, Result: the operand's integer
/// constant, or nullopt (absent or not constant).
std::optional<std::vector<int64_t>> constantIntsOperand(const Node &node, size_t i);
/// Given a node and the index of an ints attribute, Execute: moves the
/// attribute `name` (when present) into operand `index` as an int64 1-D
/// Constant (empty operands pad the gap), Result: whether it was present.
bool attributeToInput(Node &node, StepContext &ctx, std::string_view name, size_t index);
/// Given a node, an operand index and an attribute name, Execute: when the
/// operand is present, requires an integer constant and makes it the ints
/// attribute `name`, dropping the operand (and trailing empty ones),
/// Result: "" or why not.
std::string inputToAttribute(Node &node, size_t index, std::string_view name);
/// Given a node and an operand index, Execute: omits that operand and
/// erases the Constant that defined it when nothing else reads it.
void clearOperand(Node &node, size_t i);
/// Drops trailing omitted operands.
void trimOperands(Node &node);

} // namespace opset
} // namespace onnxslim
