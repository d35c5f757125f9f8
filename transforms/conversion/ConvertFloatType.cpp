//===- transforms/conversion/ConvertFloatType.cpp - float32 <-> float16 ---===//
//
// convert-float-type{to=float16|bfloat16|float32 keep-io-types=true|false
// overflow=keep|inf keep-op=OP... keep-node=NAME...}: converts
// the model's floating-point weights and computation from float32 to
// float16 (to=float16, the default) or bfloat16 (to=bfloat16), or float16
// back to float32 (to=float32), in the main graph and every subgraph.
//
// to=bfloat16 follows the float16 rules below except float16's range
// (bfloat16 has float32's exponent: no constant is kept for its magnitude;
// the few finite values that round past bfloat16's largest saturate to it,
// warned), with its own table of ops (kBFloat16Since: most ops from opset
// 13, Conv, pooling and the RNNs from 22), bfloat16's exact integers (up to
// 256) for integer arithmetic, and Casts to 16. It is declined below opset
// 13 (no bfloat16 there) and, for a model with If/Loop/Scan, below 16.
//
//   Before (to=float16, opset 17):          After:
//     g (float[2] x) => (float[2] y)          g (float[2] x) => (float[2] y)
//       <float[2] w = {0.1, 0.7}> {             <float16[2] w = {0.1, 0.7}> {
//       a = Mul(x, w)                           x_fp16 = Cast<to = 10>(x)
//       b = Celu(a)                             a = Mul(x_fp16, w)
//       y = Relu(b)                             a_fp32 = Cast<to = 1>(a)
//     }                                         b = Celu(a_fp32)  # float only
//                                               b_fp16 = Cast<to = 10>(b)
//                                               y_fp16 = Relu(b_fp16)
//                                               y = Cast<to = 1>(y_fp16)
//                                             }
//   (Inserted values get fresh names; the interface keeps its.)
//
//   A constant beyond float16's range (+-65504) stays float32, and so do
//   the nodes that compute with it, up to an op that bounds its result:
//     g (float[2] x) => (float[2] y)          g (float[2] x) => (float[2] y)
//       <float s = {1048576}> {                 <float s = {1048576}> {
//       a = Mul(x, s)                           a = Mul(x, s)        # float32
//       b = Log(a)                              b = Log(a)           # float32
//       y = Relu(b)                             b_fp16 = Cast<to = 10>(b)
//     }                                         y_fp16 = Relu(b_fp16)
//                                               y = Cast<to = 1>(y_fp16)
//                                             }
//   (warned, naming s). In float16, s would be inf and y inf or NaN.
//
//   Integer arithmetic done in float (a size, a shape, an index: a Cast
//   from an integer or bool type to float32) stays float32, with the nodes
//   computing with it and constants only, until the value goes back into
//   an integer Cast or ends (float16 holds every integer only up to 2048):
//     g (float[N] x) => (float[M] y)          g (float[N] x) => (float[M] y)
//       <float two = {2}, ...> {                <float two = {2}, ...> {
//       s = Shape(x)                            x_fp16 = Cast<to = 10>(x)
//       n = Cast<to = 1>(s)                     s = Shape(x)
//       h = Div(n, two)                         n = Cast<to = 1>(s)  # float32
//       f = Floor(h)                            h = Div(n, two)      # float32
//       e = Cast<to = 7>(f)                     f = Floor(h)         # float32
//       y = Slice(x, zero, e)                   e = Cast<to = 7>(f)
//     }                                         y_fp16 = Slice(x_fp16, zero, e)
//                                               y = Cast<to = 1>(y_fp16)
//                                             }
//   In float16, N = 4099 would round to 4100 and y have 2050 elements, and
//   from N = 65520 on, n would be inf.
//
// What changes (S = the source type, D = the destination type):
//  - Initializers and Constant values of type S are rounded to D
//    (float32 -> float16 round-to-nearest-even, NaN kept; float16 ->
//    float32 is exact). A weight read both by converted and by kept nodes
//    is kept and a D copy added, so no value is rounded twice.
//  - A float32 constant with a finite value beyond +-65504 (overflow=keep,
//    the default): its readers are kept, and the readers of their results
//    in turn, until an op whose result is bounded whatever its operands
//    (Log, Sigmoid, Tanh, Softmax, Erf, Sin, Cos, Atan, Sign...; see
//    boundsItsResult); a warning names the constant. Typical sources: a
//    scale (2^20 before a Log in audio front ends), a mask value (-1e9,
//    float32's lowest) added before a Softmax. A node owning subgraphs is
//    not kept this way (its bodies follow it), nor are Shape and Size.
//    With overflow=inf, or where a converted node still reads it, the
//    value rounds to +-inf, with a warning naming the tensor.
//  - Integer arithmetic in float (to=float16): a Cast from an integer or
//    bool type to S is kept, and so is each node that reads such a value
//    and whose other S operands are such values or constants (initializers,
//    Constant nodes), its S results such values in turn: shape, size, range
//    and index arithmetic (Cast(Shape(x)) -> Div -> Floor -> Cast(int64),
//    comparisons included) stays exact in S. A node mixing such a value with
//    another S value (an attention mask Cast from int64, 1 - m, times
//    -10000: kept; added to the scores: converted) is not integer
//    arithmetic: it converts and reads the value through a Cast to D, so
//    the rest of the model is not held in S; a Cast from an integer type
//    that only such nodes read becomes a Cast to D, as before. A node
//    owning subgraphs is not kept this way (its bodies follow it), nor are
//    Cast, Shape and Size (they read any type). Counted as int-kept.
//  - Every other node is converted: its S results become D, and the type
//    attributes that make a result S are set to D (Cast and the Random*,
//    EyeLike, Bernoulli `dtype`, window ops' `output_datatype`, and the
//    value of ConstantOfShape). A Cast to S read only by kept nodes stays.
//    Cast, Shape and Size read any type: no Cast is put before them.
//  - Kept nodes compute in S: behind a Cast to S for each D operand, and
//    with a Cast to D for each S result a converted node reads. Kept are:
//    the ops and nodes named by keep-op and keep-node (to=float16; one
//    name an occurrence; the float16 accuracy fallback of api/Optimize.cpp
//    names nodes here), ops of other domains (their type rules are unknown
//    here), ops the schema table does not know at the model's opset, and,
//    for to=float16,
//    the ops whose float operands or results have no float16 form at that
//    opset in the ONNX specification (docs/Operators.md, type constraints;
//    see kNoFloat16 below). Single operands that are float32 only (Resize's
//    and Upsample's scales) keep reading S.
//    ONNX Runtime's CPU provider has no float16 kernel for many ops (Conv,
//    pooling, LSTM... on x86) but runs such nodes in float32 itself (its
//    InsertCastTransformer), so they need no Casts here; every real model
//    converted this way loads and runs there (tests/transforms/
//    ort_convert_float16.sh).
//  - The main graph's inputs and outputs keep their declared types with
//    keep-io-types=true (the default): a Cast follows each S input, and an
//    S output is produced by a Cast that takes the output's name. With
//    keep-io-types=false they become D. Subgraph inputs and outputs (If,
//    Loop, Scan bodies) always become D, as the node that owns them is
//    converted.
//
// Declined (nothing changes, a warning says why): a value whose type is
// still unknown after shape inference, or a sequence/map/optional/sparse
// value of type S (no float16 rewriting rule for them here), a node of
// another domain that owns subgraphs. A model with no S tensor is unchanged.
//
// The pass is idempotent: converted values are D, the Casts it inserted to S
// are read only by kept nodes or kept outputs, and stay.
//
//===----------------------------------------------------------------------===//
#include "transforms/Passes.h"

#include "ir/IR.h"
#include "ir/OpSchema.h"
#include "ir/ShapeInference.h"
#include "runtime/Float16.h"
#include "transforms/Clone.h"
#include "transforms/ValueUtils.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace onnxslim {

namespace {

/// An op whose float operands or results have no float16 form before
/// opset `untilOpset` (INT64_MAX: at no opset up to the newest). From the
/// ONNX specification's type constraints (docs/Operators.md and
/// docs/Changelog.md, checked against onnx 1.12's schemas up to opset 17):
/// Celu (T: float), CumSum-11 (float16 from 14), QuantizeLinear-10/13 and
/// DequantizeLinear-10/13 (float16 scale/x from 19), DynamicQuantizeLinear
/// (x: float), IsInf-10 (float16 from 20), NonMaxSuppression (boxes, scores:
/// float), QLinearConv and QLinearMatMul (scales: float), Range (T has no
/// float16), TfIdfVectorizer (Y: float).
struct NoFloat16 {
  std::string_view op;
  int64_t untilOpset;
};
constexpr NoFloat16 kNoFloat16[] = {
    {"Celu", INT64_MAX},
    {"CumSum", 14},
    {"DequantizeLinear", 19},
    {"DynamicQuantizeLinear", INT64_MAX},
    {"IsInf", 20},
    {"NonMaxSuppression", INT64_MAX},
    {"QLinearConv", INT64_MAX},
    {"QLinearMatMul", INT64_MAX},
    {"QuantizeLinear", 19},
    {"Range", INT64_MAX},
    {"TfIdfVectorizer", INT64_MAX},
};

/// The ops whose float operands and results all have a bfloat16 form, from
/// the opset that gives it to them: the first version from which every type
/// constraint holding tensor(float) also holds tensor(bfloat16) (onnx
/// 1.12's schemas, opsets 1-17), and the ops opset 22 re-versioned to add
/// bfloat16 (onnx/onnx#6099: Conv, pooling, the RNNs, Softplus...). Any
/// other op (TopK, Resize, ConstantOfShape, Celu, Range, ops newer than
/// opset 17...) computes in float32 behind Casts.
struct BFloat16Since {
  std::string_view op;
  int64_t opset;
};
constexpr BFloat16Since kBFloat16Since[] = {
    {"Abs", 13}, {"Add", 13}, {"ArgMax", 13}, {"ArgMin", 13}, {"BatchNormalization", 14}, {"BlackmanWindow", 17},
    {"Cast", 13}, {"CastLike", 15}, {"Ceil", 13}, {"Clip", 13}, {"Concat", 13}, {"Constant", 13}, {"CumSum", 14},
    {"DFT", 17}, {"DepthToSpace", 13}, {"Div", 13}, {"Equal", 13}, {"Erf", 13}, {"Exp", 13}, {"Expand", 13},
    {"Flatten", 13}, {"Floor", 13}, {"Gather", 13}, {"GatherElements", 13}, {"GatherND", 13}, {"Gemm", 13},
    {"Greater", 13}, {"GreaterOrEqual", 16}, {"HammingWindow", 17}, {"HannWindow", 17}, {"Hardmax", 13},
    {"Identity", 13}, {"If", 16}, {"IsNaN", 13}, {"LRN", 13}, {"LayerNormalization", 17}, {"LeakyRelu", 16},
    {"Less", 13}, {"LessOrEqual", 16}, {"Log", 13}, {"LogSoftmax", 13}, {"Loop", 16}, {"MatMul", 13}, {"Max", 13},
    {"Mean", 13}, {"MeanVarianceNormalization", 13}, {"MelWeightMatrix", 17}, {"Min", 13}, {"Mod", 13}, {"Mul", 13},
    {"Neg", 13}, {"NonZero", 13}, {"PRelu", 16}, {"Pad", 13}, {"Pow", 15}, {"Reciprocal", 13}, {"ReduceL1", 13},
    {"ReduceL2", 13}, {"ReduceLogSum", 13}, {"ReduceLogSumExp", 13}, {"ReduceMax", 13}, {"ReduceMean", 13},
    {"ReduceMin", 13}, {"ReduceProd", 13}, {"ReduceSum", 13}, {"ReduceSumSquare", 13}, {"Relu", 13}, {"Reshape", 13},
    {"STFT", 17}, {"Scan", 16}, {"ScatterElements", 13}, {"ScatterND", 13}, {"Shape", 13}, {"Sigmoid", 13},
    {"Sign", 13}, {"Size", 13}, {"Slice", 13}, {"Softmax", 13}, {"SoftmaxCrossEntropyLoss", 13},
    {"SpaceToDepth", 13}, {"Split", 13}, {"Sqrt", 13}, {"Squeeze", 13}, {"Sub", 13}, {"Sum", 13}, {"Tanh", 13},
    {"Tile", 13}, {"Transpose", 13}, {"Trilu", 14}, {"Unsqueeze", 13}, {"Where", 16},
    // opset 22
    {"Acos", 22}, {"Acosh", 22}, {"Asin", 22}, {"Asinh", 22}, {"Atan", 22}, {"Atanh", 22}, {"AveragePool", 22},
    {"Bernoulli", 22}, {"Conv", 22}, {"ConvTranspose", 22}, {"Cos", 22}, {"Cosh", 22}, {"DeformConv", 22},
    {"Det", 22}, {"Dropout", 22}, {"Elu", 22}, {"EyeLike", 22}, {"GRU", 22}, {"GlobalAveragePool", 22},
    {"GlobalLpPool", 22}, {"GlobalMaxPool", 22}, {"GridSample", 22}, {"HardSigmoid", 22}, {"HardSwish", 22},
    {"InstanceNormalization", 22}, {"LSTM", 22}, {"LpNormalization", 22}, {"LpPool", 22}, {"MaxPool", 22},
    {"MaxRoiPool", 22}, {"MaxUnpool", 22}, {"Mish", 22}, {"Multinomial", 22}, {"NegativeLogLikelihoodLoss", 22},
    {"RNN", 22}, {"RandomNormal", 22}, {"RandomNormalLike", 22}, {"RandomUniform", 22}, {"RandomUniformLike", 22},
    {"RoiAlign", 22}, {"Round", 22}, {"Selu", 22}, {"Sin", 22}, {"Sinh", 22}, {"Softplus", 22}, {"Softsign", 22},
    {"Tan", 22}, {"ThresholdedRelu", 22},
};

/// Whether a default-domain `op` has a bfloat16 form at `opset`.
bool hasBFloat16Form(std::string_view op, int64_t opset) {
  for (const BFloat16Since &e : kBFloat16Since)
    if (e.op == op)
      return opset >= e.opset;
  return false;
}

/// Whether operand `i` of a default-domain `op` at `opset` is float32 only
/// (tensor(float) in the spec, whatever the node's other types).
bool isFloat32OnlyOperand(const Node &n, size_t i, int64_t opset) {
  if (n.is("Resize"))
    return i == (opset >= 11 ? 2u : 1u); // scales
  if (n.is("Upsample"))
    return opset >= 9 && i == 1; // scales
  return false;
}

/// Ops whose float result's type comes from an attribute that defaults to
/// float (so a converted node gets the attribute set to float16).
bool defaultsToFloat(const Node &n, std::string_view &attr) {
  if (n.is("RandomNormal") || n.is("RandomUniform")) {
    attr = "dtype";
    return true;
  }
  if (n.is("HannWindow") || n.is("HammingWindow") || n.is("BlackmanWindow") || n.is("MelWeightMatrix")) {
    attr = "output_datatype";
    return true;
  }
  return false;
}

/// Ops whose float result is bounded whatever the magnitude of their
/// operands (|Log x| <= 104 on float32, the others within [-pi, pi] or
/// [-1, 1], |Asinh x|, Acosh x <= 89): where a value beyond the float16
/// range stops spreading.
bool boundsItsResult(const Node &n) {
  static constexpr std::string_view kBounded[] = {"Acosh", "Asinh", "Atan", "Cos", "Erf", "HardSigmoid",
                                                  "Log", "Sigmoid", "Sign", "Sin", "Softmax", "Softsign",
                                                  "Tanh"};
  return n.isDefaultDomain() &&
         std::find(std::begin(kBounded), std::end(kBounded), n.opType()) != std::end(kBounded);
}

/// Whether a finite float rounds to float16 +-inf, given its float16 bits.
bool overflowsHalf(float f, uint16_t half) { return std::isfinite(f) && (half & 0x7fffu) == 0x7c00u; }

/// The number of finite float32 elements of `t` that float16 cannot hold
/// (they would round to +-inf).
size_t countBeyondHalf(const Tensor &t) {
  if (t.dtype() != DataType::Float || !t.isConsistent())
    return 0;
  size_t count = 0;
  for (int64_t i = 0, n = t.numElements(); i < n; ++i) {
    float f = t.at<float>(static_cast<size_t>(i));
    count += overflowsHalf(f, rt::floatToHalfBits(f));
  }
  return count;
}

bool typeMentions(const Type &t, DataType dt) {
  if (t.kind() == Type::Kind::Tensor || t.kind() == Type::Kind::SparseTensor)
    return t.elemType() == dt;
  if (t.kind() == Type::Kind::Map && t.elemType() == dt)
    return true;
  return t.inner() && typeMentions(*t.inner(), dt);
}

bool isTensorOf(const Value *v, DataType dt) {
  return v && v->type() && v->type()->kind() == Type::Kind::Tensor && v->type()->elemType() == dt;
}

class ConvertFloatTypePass : public Pass {
public:
  std::string_view name() const override { return "convert-float-type"; }
  std::string_view description() const override {
    return "Convert float32 weights and computation to float16 (to=float16) or back (to=float32); "
           "keep-io-types=false converts the interface too";
  }

  bool setOption(std::string_view key, std::string_view value, std::string &error) override {
    if (key == "to") {
      if (value != "float16" && value != "bfloat16" && value != "float32") {
        error = "option to of " + std::string(name()) + " takes float16, bfloat16 or float32, not '" +
                std::string(value) + "'";
        return false;
      }
      to_ = value == "float16" ? DataType::Float16 : value == "bfloat16" ? DataType::BFloat16 : DataType::Float;
      return true;
    }
    if (key == "keep-io-types") {
      if (value != "true" && value != "false") {
        error = "option keep-io-types of " + std::string(name()) + " takes true or false";
        return false;
      }
      keepIO_ = value == "true";
      return true;
    }
    if (key == "overflow") {
      if (value != "keep" && value != "inf") {
        error = "option overflow of " + std::string(name()) + " takes keep or inf, not '" + std::string(value) + "'";
        return false;
      }
      keepWide_ = value == "keep";
      return true;
    }
    if (key == "keep-node" || key == "keep-op") { // one name per occurrence
      (key == "keep-node" ? keepNodes_ : keepOps_).emplace(value);
      return true;
    }
    return Pass::setOption(key, value, error);
  }
  std::string optionsText() const override {
    std::string s = to_ == DataType::Float16 ? "" : to_ == DataType::BFloat16 ? "to=bfloat16" : "to=float32";
    auto add = [&](const char *o) { s += std::string(s.empty() ? "" : " ") + o; };
    if (!keepIO_)
      add("keep-io-types=false");
    if (!keepWide_)
      add("overflow=inf");
    for (const std::string &op : keepOps_)
      add(("keep-op=" + op).c_str());
    for (const std::string &node : keepNodes_)
      add(("keep-node=" + node).c_str());
    return s;
  }

  bool run(Model &model, PassContext &context) override;

private:
  /// Whether the pass narrows float32 (to float16 or bfloat16).
  bool narrowing() const { return to_ != DataType::Float; }
  DataType src() const { return narrowing() ? DataType::Float : DataType::Float16; }
  DataType dst() const { return to_; }
  /// The suffix of the values it names: "_fp16", "_bf16", "_fp32".
  const char *suffix(DataType t) const {
    return t == DataType::Float16 ? "_fp16" : t == DataType::BFloat16 ? "_bf16" : "_fp32";
  }

  /// Why the model cannot be converted, or "" (types inferred first).
  std::string declineReason(const std::vector<Graph *> &graphs) const;
  bool isKept(const Node &n) const;
  /// Execute: keeps in S the nodes that compute with a constant beyond the
  /// float16 range, and their users up to a bounded op; warns once per such
  /// constant. Result: the number of nodes it kept.
  uint64_t keepWideRegions(const std::vector<Graph *> &graphs, PassContext &context);
  /// Execute: keeps in S the Casts from an integer or bool type to S and
  /// the nodes computing with their values and constants only (integer
  /// arithmetic in float; see the banner). Result: the number of nodes it kept.
  uint64_t keepIntegerArithmetic(const std::vector<Graph *> &graphs, PassContext &context);
  enum class Want { Src, Dst, Either };
  /// What use `u` of an S value reads: S, D, or either.
  Want want(const Use &u) const;
  /// Given an S tensor, Result: its D rounding; counts values that overflowed.
  TensorPtr convertTensor(const Tensor &t, size_t &overflowed) const;
  TensorPtr convertTensorWarn(const Tensor &t, const std::string &what, PassContext &context) const;
  /// Given an S value, Execute: gives D to the uses that want D and S to
  /// the others, Result: whether the IR changed.
  bool convertValue(Value *v, PassContext &context);
  /// Given a value and a type, Execute: inserts `Cast<to>(v)` after v's
  /// definition, Result: the cast's result.
  Value *castAfterDef(Value *v, DataType to);

  Model *model_ = nullptr;
  int64_t opset_ = 0;
  DataType to_ = DataType::Float16;
  bool keepIO_ = true;
  bool keepWide_ = true;
  std::set<std::string, std::less<>> keepNodes_, keepOps_;
  std::unordered_set<const Node *> kept_;
  uint64_t casts_ = 0;
};

std::string ConvertFloatTypePass::declineReason(const std::vector<Graph *> &graphs) const {
  auto check = [&](const Value *v) -> std::string {
    if (!v->type() || (v->type()->kind() == Type::Kind::Tensor && v->type()->elemType() == DataType::Undefined))
      return "the type of '" + v->name() + "' is unknown";
    if (v->type()->kind() != Type::Kind::Tensor && typeMentions(*v->type(), src()))
      return "'" + v->name() + "' is a sequence, map, optional or sparse value of " + dataTypeName(src());
    return "";
  };
  if (to_ == DataType::BFloat16 && opset_ < 13)
    return "bfloat16 needs opset 13 or later (the model imports opset " + std::to_string(opset_) +
           "; --target-opset 13 converts it first)";
  for (Graph *g : graphs) {
    if (to_ == DataType::BFloat16 && opset_ < 16)
      for (Node *n : g->nodes())
        if (hasSubgraphs(*n))
          return n->opType() + " '" + n->name() + "' carries bfloat16 values only from opset 16 (the model imports opset " +
                 std::to_string(opset_) + "; --target-opset 16 converts it first)";
    for (Value *v : g->inputs())
      if (std::string r = check(v); !r.empty())
        return r;
    if (!g->sparseInitializers().empty())
      return "a graph has sparse initializers";
    for (Value *v : g->initializers())
      if (v->initializer()->dtype() == src() && !v->initializer()->isConsistent())
        return "initializer '" + v->name() + "' has a data size that does not match its shape";
    for (Node *n : g->nodes()) {
      if (!n->isDefaultDomain() && hasSubgraphs(*n))
        return "node '" + n->name() + "' (" + n->domain() + "." + n->opType() + ") of another domain owns subgraphs";
      if (const Attribute *a = n->attr("value");
          a && a->kind == AttrKind::Tensor && a->t && a->t->dtype() == src() && !a->t->isConsistent())
        return "the value of " + n->opType() + " '" + n->name() + "' has a data size that does not match its shape";
      for (Value *r : n->results())
        if (r)
          if (std::string why = check(r); !why.empty())
            return why + " (a result of " + n->opType() + (n->name().empty() ? "" : " '" + n->name() + "'") + ")";
    }
  }
  return "";
}

bool ConvertFloatTypePass::isKept(const Node &n) const {
  if (!n.isDefaultDomain())
    return true;
  if (n.is("If") || n.is("Loop") || n.is("Scan"))
    return false;
  if (!lookupOpSchema("", n.opType(), opset_))
    return true;
  if (n.is("Constant")) {
    // Converted through its value (in convertValue) when it is a dense S
    // tensor or value_float(s); any other form stays as it is.
    const Attribute *a = n.attr("value");
    return !(a ? a->kind == AttrKind::Tensor && a->t && a->t->dtype() == src()
               : narrowing() && (n.hasAttr("value_float") || n.hasAttr("value_floats")));
  }
  if (!narrowing())
    return false;
  if (keepOps_.count(n.opType()) || (!n.name().empty() && keepNodes_.count(n.name())))
    return true;
  if (to_ == DataType::BFloat16)
    return !hasBFloat16Form(n.opType(), opset_);
  for (const NoFloat16 &e : kNoFloat16)
    if (n.opType() == e.op && opset_ < e.untilOpset)
      return true;
  // LayerNormalization's Mean and InvStdDev are float or bfloat16 only.
  if (n.is("LayerNormalization") && (n.result(1) || n.result(2)))
    return true;
  return false;
}

uint64_t ConvertFloatTypePass::keepWideRegions(const std::vector<Graph *> &graphs, PassContext &context) {
  // Seeds: the S constants with a value float16 cannot hold.
  std::vector<std::pair<Value *, size_t>> seeds;
  for (Graph *g : graphs) {
    for (Value *v : g->initializers())
      if (!v->isGraphInput())
        if (size_t n = countBeyondHalf(*v->initializer()))
          seeds.emplace_back(v, n);
    for (Node *n : g->nodes())
      if (n->is("Constant") && !kept_.count(n))
        if (const Attribute *a = n->attr("value"); a && a->kind == AttrKind::Tensor && a->t)
          if (size_t count = countBeyondHalf(*a->t))
            seeds.emplace_back(n->result(0), count);
  }
  // A wide value's readers compute in S; their results are wide in turn
  // unless the op bounds them. Nodes owning subgraphs are not kept (their
  // bodies are converted with them): such a use reads a float16 rounding.
  uint64_t keptHere = 0;
  std::unordered_set<const Value *> wide;
  for (auto [seed, count] : seeds) {
    uint64_t before = keptHere;
    std::vector<Value *> work{seed};
    wide.insert(seed);
    while (!work.empty()) {
      Value *v = work.back();
      work.pop_back();
      for (Use *u : v->uses()) {
        Node *n = u->owner();
        if (!n || hasSubgraphs(*n) || n->is("Shape") || n->is("Size"))
          continue;
        if (kept_.insert(n).second)
          ++keptHere;
        if (boundsItsResult(*n))
          continue;
        for (Value *r : n->results())
          if (isTensorOf(r, src()) && wide.insert(r).second)
            work.push_back(r);
      }
    }
    context.warn(std::string(seed->isInitializer() ? "initializer '" : "Constant '") + seed->name() + "': " +
                 std::to_string(count) + " value(s) beyond the float16 range (+-65504): kept in float32 with the " +
                 std::to_string(keptHere - before) + " node(s) computing with it");
  }
  context.counter("range-kept", "Nodes kept in float32 for values beyond the float16 range") += keptHere;
  return keptHere;
}

uint64_t ConvertFloatTypePass::keepIntegerArithmetic(const std::vector<Graph *> &graphs, PassContext &context) {
  // Values of type S computed from integers. Graphs come outer first and
  // nodes in order, so a value is known before its readers are looked at.
  std::unordered_set<const Value *> integral;
  auto isConstant = [](const Value *v) {
    const Node *def = v->definingNode();
    return (v->isInitializer() && !v->isGraphInput()) || (def && def->is("Constant"));
  };
  std::vector<Node *> casts, keptHere;
  for (Graph *g : graphs)
    for (Node *n : g->nodes()) {
      bool keep = false;
      if (n->is("Cast") && n->result(0) && isTensorOf(n->result(0), src())) {
        const Value *x = n->operand(0);
        keep = x && x->type() && x->type()->kind() == Type::Kind::Tensor &&
               (isInteger(x->type()->elemType()) || x->type()->elemType() == DataType::Bool);
        if (keep)
          casts.push_back(n);
      } else if (!hasSubgraphs(*n) && !n->is("Cast") && !n->is("Shape") && !n->is("Size")) {
        // (Cast, Shape and Size read any type: they compute nothing in S.)
        bool readsIntegral = false, readsOther = false;
        for (const Value *v : n->operands())
          if (isTensorOf(v, src())) {
            if (integral.count(v))
              readsIntegral = true;
            else if (!isConstant(v))
              readsOther = true;
          }
        keep = readsIntegral && !readsOther;
      }
      if (!keep)
        continue;
      for (const Value *r : n->results())
        if (isTensorOf(r, src()))
          integral.insert(r);
      if (kept_.insert(n).second)
        keptHere.push_back(n);
    }
  // A Cast whose value no kept node reads computes nothing in S: it stays
  // free, and becomes a single Cast to D where converted nodes read it.
  std::unordered_set<const Node *> added(keptHere.begin(), keptHere.end());
  for (Node *cast : casts) {
    bool read = false;
    for (Use *u : cast->result(0)->uses())
      read = read || (u->owner() && u->owner() != cast && kept_.count(u->owner()));
    if (!read && added.erase(cast))
      kept_.erase(cast);
  }
  context.counter("int-kept", "Nodes kept in float32 for integer arithmetic (shape, size, index) done in float") +=
      added.size();
  return added.size();
}

ConvertFloatTypePass::Want ConvertFloatTypePass::want(const Use &u) const {
  if (Node *n = u.owner()) {
    // Cast, Shape and Size read any type: they never need a Cast before them.
    if (u.index() == 0 && (n->is("Cast") || n->is("Shape") || n->is("Size")))
      return Want::Either;
    return !kept_.count(n) && !(narrowing() && isFloat32OnlyOperand(*n, u.index(), opset_)) ? Want::Dst : Want::Src;
  }
  // A graph output: the main graph's keep their type unless asked; a
  // subgraph's follow the (converted) node that owns them.
  return u.ownerGraph()->parentNode() || !keepIO_ ? Want::Dst : Want::Src;
}

TensorPtr ConvertFloatTypePass::convertTensor(const Tensor &t, size_t &overflowed) const {
  int64_t n = t.numElements();
  size_t count = n > 0 ? static_cast<size_t>(n) : 0;
  std::string bytes(count * (narrowing() ? 2 : 4), '\0');
  overflowed = 0;
  for (size_t i = 0; i < count; ++i) {
    if (to_ == DataType::Float16) {
      float f = t.at<float>(i);
      uint16_t h = rt::floatToHalfBits(f);
      overflowed += overflowsHalf(f, h);
      std::memcpy(bytes.data() + 2 * i, &h, 2);
    } else if (to_ == DataType::BFloat16) {
      // Finite values within half a bfloat16 ulp of float32's largest round
      // to inf; they saturate to bfloat16's largest instead (a mask value
      // of float32's lowest stays the lowest finite value).
      float f = t.at<float>(i);
      uint16_t b = rt::floatToBFloat16Bits(f);
      if (std::isfinite(f) && (b & 0x7fffu) == 0x7f80u) {
        b = static_cast<uint16_t>((b & 0x8000u) | 0x7f7fu);
        ++overflowed;
      }
      std::memcpy(bytes.data() + 2 * i, &b, 2);
    } else {
      float f = rt::halfBitsToFloat(t.at<uint16_t>(i));
      std::memcpy(bytes.data() + 4 * i, &f, 4);
    }
  }
  auto out = std::make_shared<Tensor>(dst(), t.dims(), Buffer::fromString(std::move(bytes)));
  out->name = t.name;
  out->docString = t.docString;
  out->metadataProps = t.metadataProps;
  return out;
}

TensorPtr ConvertFloatTypePass::convertTensorWarn(const Tensor &t, const std::string &what,
                                                  PassContext &context) const {
  size_t overflowed = 0;
  TensorPtr out = convertTensor(t, overflowed);
  if (overflowed && to_ == DataType::BFloat16) {
    context.warn(what + ": " + std::to_string(overflowed) +
                 " value(s) beyond the bfloat16 range (+-3.3895e38) saturated to its largest finite value");
    context.counter("overflows", "Tensors with values beyond the destination type's range") += 1;
  } else if (overflowed) {
    context.warn(what + ": " + std::to_string(overflowed) + " value(s) beyond the float16 range (+-65504) became +-inf");
    context.counter("overflows", "Tensors with values beyond the float16 range") += 1;
  }
  context.counter("tensors", "Tensors converted") += 1;
  return out;
}

Value *ConvertFloatTypePass::castAfterDef(Value *v, DataType to) {
  Graph *g = v->graph();
  std::string suffix = this->suffix(to);
  Node *cast = g->createNode("Cast", {v}, {model_->names().fresh(v->name() + suffix)});
  cast->setName(model_->names().fresh(v->name() + suffix + "_cast"));
  cast->setAttr(Attribute::makeInt("to", static_cast<int64_t>(to)));
  if (Node *def = v->definingNode())
    g->insertAfter(def, cast);
  else if (g->firstNode())
    g->insertBefore(g->firstNode(), cast);
  else
    g->append(cast);
  Type t = *v->type();
  t.setElemType(to);
  cast->result(0)->setType(t);
  ++casts_;
  return cast->result(0);
}

bool ConvertFloatTypePass::convertValue(Value *v, PassContext &context) {
  std::vector<Use *> dstUses, srcUses;
  for (Use *u : v->uses())
    if (Want w = want(*u); w != Want::Either)
      (w == Want::Dst ? dstUses : srcUses).push_back(u);
  Node *def = v->definingNode();
  Graph *g = v->graph();
  bool mainInput = v->isGraphInput() && !g->parentNode();

  // Where v's own type ends up: D for converted definitions, S for kept ones.
  // Free definitions (initializers, Constants, Casts) follow their uses.
  bool free = !v->isGraphInput() && (v->isInitializer() || (def && !kept_.count(def) &&
                                                             (def->is("Constant") || def->is("Cast"))));
  bool becomesDst;
  if (v->isGraphInput())
    becomesDst = !(mainInput && keepIO_);
  else if (free)
    becomesDst = srcUses.empty();
  else
    becomesDst = !kept_.count(def);

  auto convertInPlace = [&](Value *val, Node *node) {
    if (val->isInitializer()) {
      TensorPtr t = convertTensorWarn(*val->initializer(), "initializer '" + val->name() + "'", context);
      if (val != v) { // a twin: its tensor is named like it
        auto named = std::make_shared<Tensor>(*t);
        named->name = val->name();
        t = std::move(named);
      }
      val->setInitializer(std::move(t));
    }
    if (node && node->is("Constant")) {
      if (Attribute *a = node->attr("value")) {
        a->t = convertTensorWarn(*a->t, "Constant '" + val->name() + "'", context);
      } else {
        const Attribute *f = node->attr("value_float");
        std::vector<float> vals = f ? std::vector<float>{f->f} : node->attr("value_floats")->floats;
        std::vector<int64_t> dims;
        if (!f)
          dims.push_back(static_cast<int64_t>(vals.size()));
        auto t = Tensor::fromValues(DataType::Float, dims, vals);
        node->removeAttr("value_float");
        node->removeAttr("value_floats");
        node->setAttr(Attribute::makeTensor("value", convertTensorWarn(*t, "Constant '" + val->name() + "'", context)));
      }
    } else if (node && node->is("Cast")) {
      node->setAttr(Attribute::makeInt("to", static_cast<int64_t>(dst())));
    }
    if (val->type())
      val->type()->setElemType(dst());
  };

  bool changed = false;
  if (free && !dstUses.empty() && !srcUses.empty()) {
    // Mixed: keep v for the S readers, add a D twin for the others.
    Value *twin = nullptr;
    std::string twinName = model_->names().fresh(v->name() + suffix(dst()));
    if (v->isInitializer()) {
      twin = g->addInitializer(twinName, v->initializer());
      twin->setType(v->type());
      convertInPlace(twin, nullptr);
    } else {
      Node *clone = g->createNode(def->opType(), def->operands(), {twinName});
      ValueMap map;
      for (const Attribute &a : def->attributes()) {
        Attribute copy;
        cloneAttribute(a, copy, map); // a Constant's or Cast's: no subgraphs
        clone->setAttr(std::move(copy));
      }
      clone->setName(model_->names().fresh(def->name().empty() ? twinName : def->name()));
      g->insertAfter(def, clone);
      twin = clone->result(0);
      twin->setType(v->type());
      convertInPlace(twin, clone);
    }
    for (Use *u : dstUses)
      u->set(twin);
    return true;
  }

  if (becomesDst) {
    if (!v->isGraphInput() || v->initializer())
      convertInPlace(v, free ? def : nullptr);
    else
      v->type()->setElemType(dst());
    changed = true;
  }
  std::vector<Use *> &wrong = becomesDst ? srcUses : dstUses;
  if (wrong.empty())
    return changed;
  Value *cast = castAfterDef(v, becomesDst ? src() : dst());
  std::vector<Use *> outputs;
  for (Use *u : wrong) {
    if (u->isGraphOutput() && !u->ownerGraph()->parentNode())
      outputs.push_back(u);
    u->set(cast);
  }
  // A main-graph output keeps its name: the cast takes it, v a fresh one.
  if (!outputs.empty()) {
    std::string name = v->name();
    v->setName(model_->names().fresh(name + (becomesDst ? suffix(dst()) : "_orig")));
    cast->setName(name);
  }
  return true;
}

bool ConvertFloatTypePass::run(Model &model, PassContext &context) {
  if (!model.graph())
    return false;
  model_ = &model;
  opset_ = model.opsetVersion("");
  kept_.clear();
  casts_ = 0;

  ShapeInferenceOptions inferOpts;
  inferOpts.addValueInfo = false;
  inferShapes(model, inferOpts);

  std::vector<Graph *> graphs{model.graph()};
  model.graph()->walk([&](Node *n) {
    for (Graph *sg : n->subgraphs())
      graphs.push_back(sg);
  });
  // Nothing of type S: nothing to do (and nothing to decline).
  bool any = false;
  for (Graph *g : graphs) {
    for (Value *v : g->inputs())
      any = any || (v->type() && typeMentions(*v->type(), src()));
    for (Value *v : g->initializers())
      any = any || v->initializer()->dtype() == src();
    for (Node *n : g->nodes())
      for (Value *r : n->results())
        any = any || (r && r->type() && typeMentions(*r->type(), src()));
  }
  if (!any)
    return false;
  if (std::string why = declineReason(graphs); !why.empty()) {
    context.warn("declined: " + why + "; the model is left in " + dataTypeName(src()));
    return false;
  }

  uint64_t keptWithSrc = 0;
  for (Graph *g : graphs)
    for (Node *n : g->nodes())
      if (isKept(*n)) {
        kept_.insert(n);
        bool touchesSrc = false;
        for (Value *v : n->operands())
          touchesSrc = touchesSrc || isTensorOf(v, src());
        for (Value *r : n->results())
          touchesSrc = touchesSrc || isTensorOf(r, src());
        keptWithSrc += touchesSrc;
      }

  if (to_ == DataType::Float16 && keepWide_)
    keepWideRegions(graphs, context);
  if (narrowing())
    keepIntegerArithmetic(graphs, context);

  // The S values, collected before any rewrite adds values.
  std::vector<Value *> values;
  for (Graph *g : graphs) {
    for (Value *v : g->inputs())
      if (isTensorOf(v, src()))
        values.push_back(v);
    for (Value *v : g->initializers())
      if (!v->isGraphInput() && v->initializer()->dtype() == src())
        values.push_back(v);
    for (Node *n : g->nodes())
      for (Value *r : n->results())
        if (isTensorOf(r, src()))
          values.push_back(r);
  }
  // Converted nodes whose S results come from a type attribute.
  bool changed = false;
  for (Graph *g : graphs)
    for (Node *n : g->nodes()) {
      if (kept_.count(n) || !n->result(0) || !isTensorOf(n->result(0), src()))
        continue;
      std::string_view attr;
      for (const char *name : {"dtype", "output_datatype"})
        if (const Attribute *a = n->attr(name); a && a->kind == AttrKind::Int && a->i == static_cast<int64_t>(src())) {
          n->setAttr(Attribute::makeInt(name, static_cast<int64_t>(dst())));
          changed = true;
        }
      if (narrowing() && defaultsToFloat(*n, attr) && !n->hasAttr(attr)) {
        n->setAttr(Attribute::makeInt(std::string(attr), static_cast<int64_t>(dst())));
        changed = true;
      }
      if (n->is("ConstantOfShape")) {
        const Attribute *a = n->attr("value");
        TensorPtr t = a && a->kind == AttrKind::Tensor ? a->t : Tensor::fromValues(DataType::Float, {1}, std::vector<float>{0.0f});
        if (t->dtype() == src()) {
          n->setAttr(Attribute::makeTensor("value", convertTensorWarn(*t, "ConstantOfShape '" + n->result(0)->name() + "'", context)));
          changed = true;
        }
      }
    }
  for (Value *v : values)
    changed = convertValue(v, context) || changed;
  // Output slots declare their own types.
  for (Graph *g : graphs)
    for (size_t i = 0; i < g->numOutputs(); ++i) {
      GraphOutput &slot = g->outputSlot(i);
      Value *v = g->output(i);
      if (slot.type && slot.type->kind() == Type::Kind::Tensor && v && v->type() &&
          slot.type->elemType() != v->type()->elemType() &&
          (slot.type->elemType() == src() || slot.type->elemType() == dst())) {
        slot.type->setElemType(v->type()->elemType());
        changed = true;
      }
    }
  context.counter("kept-nodes", "Nodes kept in the source type (no float16 form)") += keptWithSrc;
  context.counter("casts", "Casts inserted") += casts_;
  return changed;
}

} // namespace

std::unique_ptr<Pass> createConvertFloatTypePass() { return std::make_unique<ConvertFloatTypePass>(); }

std::unique_ptr<Pass> createConvertFloatTypePass(std::string_view to, bool keepIOTypes,
                                                 const std::vector<std::string> &keepNodes) {
  auto pass = std::make_unique<ConvertFloatTypePass>();
  std::string error;
  [[maybe_unused]] bool ok = pass->setOption("to", to, error);
  assert(ok && "convert-float-type converts to float16 or float32");
  pass->setOption("keep-io-types", keepIOTypes ? "true" : "false", error);
  for (const std::string &name : keepNodes)
    pass->setOption("keep-node", name, error);
  return pass;
}

} // namespace onnxslim
