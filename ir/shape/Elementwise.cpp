//===- ir/shape/Elementwise.cpp - Elementwise and same-shape ops ----------===//
//
// Inference rules for unary ops (the result has the operand's type), binary
// and variadic broadcasting ops (arithmetic, comparisons, logic, Where),
// casts, quantization and random generators. Where the operands' contents are
// known (shape arithmetic on int64 tensors) the results' contents are
// computed too, element by element, as SymDims: each the exact result of one
// operation, which setElements turns into what the result's element type
// holds (a float product rounds, an int32 overflow is unknown); Cast converts
// as ONNX Runtime does (castElement); a training-mode Dropout and the random
// generators give nothing.
//
//===----------------------------------------------------------------------===//
#include "ir/shape/InferContext.h"

#include <cmath>
#include <functional>

namespace onnxslim::shape {

namespace {

/// Applies `fn` to the contents of operand 0 into result 0 (same shape).
void mapElements(InferContext &ctx, const std::function<SymDim(const SymDim &)> &fn) {
  broadcastElements(ctx, 0, {0}, [&](const std::vector<SymDim> &a) { return fn(a[0]); });
}

SymDim identityElement(const SymDim &d) { return d; }

std::optional<int64_t> cst(const SymDim &d) { return d.constantValue(); }

SymDim fromBool(bool b) { return SymDim::constant(b ? 1 : 0); }

//===--- Unary --------------------------------------------------------===//

void inferSameType(InferContext &ctx) { ctx.propagate(0, 0); }

/// Identity-like ops whose contents are preserved exactly.
void inferIdentity(InferContext &ctx) {
  ctx.propagate(0, 0);
  mapElements(ctx, identityElement);
}

/// Rounding ops: the tracked contents are integral, so they are unchanged.
void inferRounding(InferContext &ctx) { inferIdentity(ctx); }

void inferNeg(InferContext &ctx) {
  ctx.propagate(0, 0);
  mapElements(ctx, [](const SymDim &d) { return SymDim::constant(0) - d; });
}

void inferAbs(InferContext &ctx) {
  ctx.propagate(0, 0);
  mapElements(ctx, [](const SymDim &d) {
    auto c = cst(d);
    return c ? SymDim::constant(*c < 0 ? -*c : *c) : SymDim();
  });
}

void inferRelu(InferContext &ctx) {
  ctx.propagate(0, 0);
  mapElements(ctx, [](const SymDim &d) {
    auto c = cst(d);
    return c ? SymDim::constant(*c < 0 ? 0 : *c) : SymDim();
  });
}

void inferSign(InferContext &ctx) {
  ctx.propagate(0, 0);
  mapElements(ctx, [](const SymDim &d) {
    auto c = cst(d);
    return c ? SymDim::constant(*c > 0 ? 1 : *c < 0 ? -1 : 0) : SymDim();
  });
}

void inferNot(InferContext &ctx) {
  ctx.propagate(0, 0);
  mapElements(ctx, [](const SymDim &d) {
    auto c = cst(d);
    return c ? fromBool(*c == 0) : SymDim();
  });
}

/// IsNaN, IsInf, RegexFullMatch: a bool tensor of the operand's shape.
void inferBoolOfShape(InferContext &ctx) {
  if (const Facts *f = ctx.input(0); f && f->isTensor())
    ctx.setTensor(0, DataType::Bool, f->shape);
}

/// Whether a Dropout provably runs in inference mode (its output is its
/// input): no training_mode input (opset 12+), or one known to be false.
/// Opsets <= 6 count as inference, as for eliminate-nop-ops (inference
/// runtimes ignore is_test).
bool dropoutIsInference(InferContext &ctx) {
  if (ctx.opset() < 12 || ctx.numInputs() < 3 || !ctx.hasInput(2))
    return true;
  auto mode = ctx.ints(2);
  return mode && mode->size() == 1 && (*mode)[0] == 0;
}

void inferDropout(InferContext &ctx) {
  ctx.propagate(0, 0);
  // In training mode elements are zeroed at random: nothing is known.
  if (dropoutIsInference(ctx))
    mapElements(ctx, identityElement);
  if (ctx.numOutputs() > 1 && ctx.hasOutput(1))
    if (const Facts *f = ctx.input(0); f && f->isTensor())
      ctx.setTensor(1, ctx.opset() >= 10 ? DataType::Bool : f->elem(), f->shape);
}

void inferClip(InferContext &ctx) {
  ctx.propagate(0, 0);
  std::optional<int64_t> lo, hi;
  if (ctx.opset() >= 11) {
    if (ctx.hasInput(1)) {
      auto v = ctx.ints(1);
      if (!v || v->size() != 1)
        return;
      lo = (*v)[0];
    }
    if (ctx.hasInput(2)) {
      auto v = ctx.ints(2);
      if (!v || v->size() != 1)
        return;
      hi = (*v)[0];
    }
  } else {
    // Attributes are floats; only integral bounds keep contents integral.
    float fl = ctx.node().attrFloat("min", -INFINITY), fh = ctx.node().attrFloat("max", INFINITY);
    if (std::isfinite(fl)) {
      if (std::trunc(fl) != fl)
        return;
      lo = static_cast<int64_t>(fl);
    }
    if (std::isfinite(fh)) {
      if (std::trunc(fh) != fh)
        return;
      hi = static_cast<int64_t>(fh);
    }
  }
  mapElements(ctx, [&](const SymDim &d) {
    auto c = cst(d);
    if (!c)
      return (lo || hi) ? SymDim() : d;
    int64_t v = *c;
    if (lo && v < *lo)
      v = *lo;
    if (hi && v > *hi)
      v = *hi;
    return SymDim::constant(v);
  });
}

//===--- Casts ----------------------------------------------------------===//

/// Contents through a cast: each element converted as ONNX Runtime's Cast
/// does (castElement); setElements then rounds to the target type.
void castElements(InferContext &ctx, DataType to) {
  std::optional<DataType> from = ctx.elemType(0);
  if (!from || to == DataType::String)
    return;
  mapElements(ctx, [&](const SymDim &d) { return castElement(d, *from, to); });
}

void inferCast(InferContext &ctx) {
  auto to = dataTypeAttr(ctx.node(), "to");
  if (!to) {
    ctx.fail("missing or invalid 'to' attribute");
    return;
  }
  const Facts *f = ctx.input(0);
  ctx.setTensor(0, *to, f && f->isTensor() ? f->shape : std::nullopt);
  if (f && f->isTensor())
    castElements(ctx, *to);
}

void inferCastLike(InferContext &ctx) {
  auto to = ctx.elemType(1);
  const Facts *f = ctx.input(0);
  if (!to)
    return;
  ctx.setTensor(0, *to, f && f->isTensor() ? f->shape : std::nullopt);
  if (f && f->isTensor())
    castElements(ctx, *to);
}

//===--- Broadcasting ops ------------------------------------------------===//

enum class ResultType { First, Bool };

/// The broadcast result of operands `ops`, or A's shape under the legacy
/// (opset < 7) broadcast attribute.
std::optional<SymShape> broadcastOperands(InferContext &ctx, const std::vector<size_t> &ops) {
  std::vector<const SymShape *> shapes;
  for (size_t i : ops)
    shapes.push_back(ctx.shape(i));
  if (ctx.opset() < 7 && ops.size() == 2) {
    const SymShape *a = ctx.shape(0), *b = ctx.shape(1);
    if (!a)
      return std::nullopt;
    if (b && b->size() > a->size()) {
      ctx.fail("legacy broadcast: B has a higher rank than A");
      return std::nullopt;
    }
    return *a;
  }
  return ctx.broadcast(shapes);
}

DataType firstKnownElem(InferContext &ctx, const std::vector<size_t> &ops) {
  for (size_t i : ops)
    if (auto e = ctx.elemType(i))
      return *e;
  return DataType::Undefined;
}

void inferBroadcast(InferContext &ctx, std::vector<size_t> ops, ResultType rt,
                    const ElementFn &fn) {
  for (size_t i : ops)
    if (!ctx.hasInput(i)) {
      ctx.fail("operand " + std::to_string(i) + " is missing");
      return;
    }
  DataType elem = rt == ResultType::Bool ? DataType::Bool : firstKnownElem(ctx, ops);
  std::optional<SymShape> shape = broadcastOperands(ctx, ops);
  if (ctx.failed())
    return;
  if (elem == DataType::Undefined && !shape)
    return;
  ctx.setTensor(0, elem, shape);
  // Legacy broadcasting aligns B at `axis`, not at the right: no contents.
  if (fn && ctx.opset() >= 7)
    broadcastElements(ctx, 0, ops, fn);
}

std::vector<size_t> allOperands(InferContext &ctx) {
  std::vector<size_t> ops;
  for (size_t i = 0; i < ctx.numInputs(); ++i)
    ops.push_back(i);
  return ops;
}

bool isIntegerResult(InferContext &ctx) { return isInteger(firstKnownElem(ctx, allOperands(ctx))); }

SymDim divide(const SymDim &a, const SymDim &b, bool integer) {
  auto x = cst(a), y = cst(b);
  if (x && y) {
    if (*y == 0 || (*x == INT64_MIN && *y == -1))
      return SymDim();
    // Exact quotients only, and integer truncation of non-negative operands
    // (negative integer division rounds differently across runtimes).
    if (*x % *y == 0 || (integer && *x >= 0 && *y > 0))
      return SymDim::constant(*x / *y);
    return SymDim();
  }
  return a.divExact(b);
}

void inferAdd(InferContext &ctx) {
  inferBroadcast(ctx, {0, 1}, ResultType::First, [](const auto &a) { return a[0] + a[1]; });
}
void inferSub(InferContext &ctx) {
  inferBroadcast(ctx, {0, 1}, ResultType::First, [](const auto &a) { return a[0] - a[1]; });
}
void inferMul(InferContext &ctx) {
  inferBroadcast(ctx, {0, 1}, ResultType::First, [](const auto &a) { return a[0] * a[1]; });
}
void inferDiv(InferContext &ctx) {
  bool integer = isIntegerResult(ctx);
  inferBroadcast(ctx, {0, 1}, ResultType::First,
                 [integer](const auto &a) { return divide(a[0], a[1], integer); });
}

void inferMod(InferContext &ctx) {
  bool fmod = ctx.node().attrInt("fmod", 0) != 0;
  inferBroadcast(ctx, {0, 1}, ResultType::First, [fmod](const auto &a) {
    auto x = cst(a[0]), y = cst(a[1]);
    if (!x || !y || *y == 0 || (*x == INT64_MIN && *y == -1))
      return SymDim();
    int64_t r = *x % *y;
    if (!fmod && r != 0 && ((r < 0) != (*y < 0)))
      r += *y;
    return SymDim::constant(r);
  });
}

void inferPow(InferContext &ctx) {
  // The result has the base's element type (the exponent's may differ).
  // Runtimes compute pow in floating point (within an ulp, not always
  // correctly rounded): only a result the base's type holds exactly, and at
  // most 2^53 (exact in double), is known.
  DataType base = ctx.elemType(0).value_or(DataType::Undefined);
  inferBroadcast(ctx, {0, 1}, ResultType::First, [base](const auto &a) {
    auto x = cst(a[0]), y = cst(a[1]);
    if (!x || !y || *y < 0 || *y > 62)
      return SymDim();
    SymDim r = SymDim::constant(1);
    for (int64_t i = 0; i < *y; ++i)
      r = r * a[0];
    auto c = cst(r);
    constexpr int64_t kExactInDouble = int64_t{1} << 53;
    if (!c || *c > kExactInDouble || *c < -kExactInDouble || !exactlyRepresentable(*c, base))
      return SymDim();
    return r;
  });
  if (ctx.failed())
    return;
  if (auto e = ctx.elemType(0); e && !ctx.results().empty() && ctx.results()[0]) {
    Facts f = *ctx.results()[0];
    f.type = Type::tensor(*e);
    ctx.setFacts(0, std::move(f));
  }
}

void inferPlainBroadcast(InferContext &ctx) {
  inferBroadcast(ctx, {0, 1}, ResultType::First, nullptr);
}

SymDim compare(const SymDim &a, const SymDim &b, const std::function<bool(int64_t, int64_t)> &op) {
  auto x = cst(a), y = cst(b);
  if (x && y)
    return fromBool(op(*x, *y));
  // Symbolic sizes: decided when their order is provable (`batch` >= 0 > -1).
  // op(1, 0), op(0, 1) and op(0, 0) tell which of >, <, == the op accepts.
  if (provablyAtLeast(a, b, 1))
    return fromBool(op(1, 0));
  if (provablyAtLeast(b, a, 1))
    return fromBool(op(0, 1));
  if (provablyEqual(a, b))
    return fromBool(op(0, 0));
  if (provablyAtLeast(a, b) && op(1, 0) == op(0, 0))
    return fromBool(op(1, 0)); // a >= b: > and == agree
  if (provablyAtLeast(b, a) && op(0, 1) == op(0, 0))
    return fromBool(op(0, 1));
  return SymDim();
}

void inferEqual(InferContext &ctx) {
  inferBroadcast(ctx, {0, 1}, ResultType::Bool, [](const auto &a) {
    if (provablyEqual(a[0], a[1]))
      return fromBool(true);
    if (provablyDifferent(a[0], a[1]))
      return fromBool(false);
    return SymDim();
  });
}
void inferLess(InferContext &ctx) {
  inferBroadcast(ctx, {0, 1}, ResultType::Bool,
                 [](const auto &a) { return compare(a[0], a[1], std::less<int64_t>()); });
}
void inferLessOrEqual(InferContext &ctx) {
  inferBroadcast(ctx, {0, 1}, ResultType::Bool,
                 [](const auto &a) { return compare(a[0], a[1], std::less_equal<int64_t>()); });
}
void inferGreater(InferContext &ctx) {
  inferBroadcast(ctx, {0, 1}, ResultType::Bool,
                 [](const auto &a) { return compare(a[0], a[1], std::greater<int64_t>()); });
}
void inferGreaterOrEqual(InferContext &ctx) {
  inferBroadcast(ctx, {0, 1}, ResultType::Bool,
                 [](const auto &a) { return compare(a[0], a[1], std::greater_equal<int64_t>()); });
}

void inferAnd(InferContext &ctx) {
  inferBroadcast(ctx, {0, 1}, ResultType::Bool, [](const auto &a) {
    auto x = cst(a[0]), y = cst(a[1]);
    if ((x && *x == 0) || (y && *y == 0))
      return fromBool(false);
    return x && y ? fromBool(true) : SymDim();
  });
}
void inferOr(InferContext &ctx) {
  inferBroadcast(ctx, {0, 1}, ResultType::Bool, [](const auto &a) {
    auto x = cst(a[0]), y = cst(a[1]);
    if ((x && *x != 0) || (y && *y != 0))
      return fromBool(true);
    return x && y ? fromBool(false) : SymDim();
  });
}
void inferXor(InferContext &ctx) {
  inferBroadcast(ctx, {0, 1}, ResultType::Bool, [](const auto &a) {
    auto x = cst(a[0]), y = cst(a[1]);
    return x && y ? fromBool((*x != 0) != (*y != 0)) : SymDim();
  });
}

void inferPRelu(InferContext &ctx) {
  // Slope broadcasts to X; the result has X's shape when that is valid.
  inferBroadcast(ctx, {0, 1}, ResultType::First, nullptr);
}

void inferSum(InferContext &ctx) {
  if (ctx.numInputs() == 0) {
    ctx.fail("needs at least one operand");
    return;
  }
  // Integers wrap (the final sum decides); a floating sum is exact in any
  // order only while the sum of magnitudes fits the significand.
  DataType dt = firstKnownElem(ctx, allOperands(ctx));
  bool floating = isFloatingPoint(dt);
  inferBroadcast(ctx, allOperands(ctx), ResultType::First, [floating, dt](const auto &a) {
    SymDim s = SymDim::constant(0);
    uint64_t magnitude = 0;
    for (const SymDim &x : a) {
      s = s + x;
      if (floating) {
        auto c = cst(x);
        if (!c || *c == INT64_MIN)
          return SymDim();
        magnitude += static_cast<uint64_t>(*c < 0 ? -*c : *c);
        if (!holdsIntegersUpTo(magnitude, dt))
          return SymDim();
      }
    }
    return s;
  });
}

void inferMean(InferContext &ctx) {
  if (ctx.numInputs() == 0) {
    ctx.fail("needs at least one operand");
    return;
  }
  inferBroadcast(ctx, allOperands(ctx), ResultType::First, nullptr);
}

void inferMaxMin(InferContext &ctx, bool isMax) {
  if (ctx.numInputs() == 0) {
    ctx.fail("needs at least one operand");
    return;
  }
  inferBroadcast(ctx, allOperands(ctx), ResultType::First, [isMax](const auto &a) {
    SymDim best = a[0];
    for (size_t i = 1; i < a.size(); ++i) {
      if (provablyEqual(best, a[i]))
        continue;
      auto x = cst(best), y = cst(a[i]);
      if (!x || !y)
        return SymDim();
      best = (isMax ? *y > *x : *y < *x) ? a[i] : best;
    }
    return best;
  });
}
void inferMax(InferContext &ctx) { inferMaxMin(ctx, true); }
void inferMin(InferContext &ctx) { inferMaxMin(ctx, false); }

void inferWhere(InferContext &ctx) {
  for (size_t i = 0; i < 3; ++i)
    if (!ctx.hasInput(i)) {
      ctx.fail("Where needs three operands");
      return;
    }
  DataType elem = firstKnownElem(ctx, {1, 2});
  std::optional<SymShape> shape = ctx.broadcast({ctx.shape(0), ctx.shape(1), ctx.shape(2)});
  if (ctx.failed() || (elem == DataType::Undefined && !shape))
    return;
  ctx.setTensor(0, elem, shape);
  broadcastElements(ctx, 0, {0, 1, 2}, [](const auto &a) {
    auto c = cst(a[0]);
    if (c)
      return *c ? a[1] : a[2];
    return provablyEqual(a[1], a[2]) ? a[1] : SymDim();
  });
}

//===--- Quantization ----------------------------------------------------===//

void inferQuantizeLinear(InferContext &ctx) {
  DataType out = DataType::UInt8;
  if (auto t = dataTypeAttr(ctx.node(), "output_dtype"))
    out = *t;
  else if (auto z = ctx.elemType(2))
    out = *z;
  const SymShape *s = ctx.shape(0);
  ctx.setTensor(0, out, s ? std::optional<SymShape>(*s) : std::nullopt);
}

void inferDequantizeLinear(InferContext &ctx) {
  DataType out = DataType::Float;
  if (ctx.opset() >= 19)
    if (auto e = ctx.elemType(1))
      out = *e;
  const SymShape *s = ctx.shape(0);
  ctx.setTensor(0, out, s ? std::optional<SymShape>(*s) : std::nullopt);
}

void inferDynamicQuantizeLinear(InferContext &ctx) {
  const SymShape *s = ctx.shape(0);
  ctx.setTensor(0, DataType::UInt8, s ? std::optional<SymShape>(*s) : std::nullopt);
  ctx.setTensor(1, DataType::Float, SymShape{});
  ctx.setTensor(2, DataType::UInt8, SymShape{});
}

//===--- Random generators -----------------------------------------------===//

void inferRandom(InferContext &ctx) {
  DataType dt = dataTypeAttr(ctx.node(), "dtype").value_or(DataType::Float);
  const Attribute *shape = ctx.node().attr("shape");
  if (!shape || shape->kind != AttrKind::Ints) {
    ctx.fail("missing 'shape' attribute");
    return;
  }
  SymShape s;
  for (int64_t d : shape->ints) {
    if (d < 0) {
      ctx.fail("negative dim in 'shape'");
      return;
    }
    s.push_back(SymDim::constant(d));
  }
  ctx.setTensor(0, dt, s);
}

/// RandomNormalLike, RandomUniformLike, Bernoulli: the operand's shape, the
/// `dtype` attribute's type (default: the operand's).
void inferRandomLike(InferContext &ctx) {
  const Facts *f = ctx.input(0);
  if (!f || !f->isTensor())
    return;
  DataType dt = dataTypeAttr(ctx.node(), "dtype").value_or(f->elem());
  ctx.setTensor(0, dt, f->shape);
}

void inferMultinomial(InferContext &ctx) {
  DataType dt = dataTypeAttr(ctx.node(), "dtype").value_or(DataType::Int32);
  int64_t samples = ctx.node().attrInt("sample_size", 1);
  const SymShape *s = ctx.shape(0);
  if (s && s->size() != 2) {
    ctx.fail("input must be 2-D [batch, classes]");
    return;
  }
  ctx.setTensor(0, dt, SymShape{s ? (*s)[0] : SymDim(), SymDim::constant(samples)});
}

void inferEyeLike(InferContext &ctx) {
  const Facts *f = ctx.input(0);
  if (!f || !f->isTensor())
    return;
  if (f->shape && f->shape->size() != 2) {
    ctx.fail("input must be 2-D");
    return;
  }
  DataType dt = dataTypeAttr(ctx.node(), "dtype").value_or(f->elem());
  ctx.setTensor(0, dt, f->shape);
}

} // namespace

void addElementwiseRules(RuleTable &t) {
  // Ops whose result has the type of operand 0.
  // clang-format off
  static constexpr const char *kSameType[] = {
      "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh",
      "Cos", "Cosh", "Erf", "Exp", "Log", "Reciprocal",
      "Sigmoid", "Sin", "Sinh", "Softplus", "Softsign", "Sqrt",
      "Tan", "Tanh", "Elu", "Selu", "LeakyRelu", "ThresholdedRelu",
      "HardSigmoid", "HardSwish", "Mish", "Celu", "Gelu", "Shrink",
      "Softmax", "LogSoftmax", "Hardmax", "BitwiseNot", "CumSum", "Trilu",
      "ReverseSequence", "Scatter", "ScatterElements", "ScatterND", "Swish"};
  // clang-format on
  for (const char *op : kSameType)
    t[op] = inferSameType;
  t["Identity"] = inferIdentity;
  t["Floor"] = inferRounding;
  t["Ceil"] = inferRounding;
  t["Round"] = inferRounding;
  t["Neg"] = inferNeg;
  t["Abs"] = inferAbs;
  t["Relu"] = inferRelu;
  t["Sign"] = inferSign;
  t["Not"] = inferNot;
  t["IsNaN"] = inferBoolOfShape;
  t["IsInf"] = inferBoolOfShape;
  t["RegexFullMatch"] = inferBoolOfShape;
  t["Dropout"] = inferDropout;
  t["Clip"] = inferClip;
  t["Cast"] = inferCast;
  t["CastLike"] = inferCastLike;
  t["Add"] = inferAdd;
  t["Sub"] = inferSub;
  t["Mul"] = inferMul;
  t["Div"] = inferDiv;
  t["Mod"] = inferMod;
  t["Pow"] = inferPow;
  for (const char *op : {"BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor"})
    t[op] = inferPlainBroadcast;
  t["Equal"] = inferEqual;
  t["Less"] = inferLess;
  t["LessOrEqual"] = inferLessOrEqual;
  t["Greater"] = inferGreater;
  t["GreaterOrEqual"] = inferGreaterOrEqual;
  t["And"] = inferAnd;
  t["Or"] = inferOr;
  t["Xor"] = inferXor;
  t["PRelu"] = inferPRelu;
  t["Sum"] = inferSum;
  t["Mean"] = inferMean;
  t["Max"] = inferMax;
  t["Min"] = inferMin;
  t["Where"] = inferWhere;
  t["QuantizeLinear"] = inferQuantizeLinear;
  t["DequantizeLinear"] = inferDequantizeLinear;
  t["DynamicQuantizeLinear"] = inferDynamicQuantizeLinear;
  t["RandomNormal"] = inferRandom;
  t["RandomUniform"] = inferRandom;
  t["RandomNormalLike"] = inferRandomLike;
  t["RandomUniformLike"] = inferRandomLike;
  t["Bernoulli"] = inferRandomLike;
  t["Multinomial"] = inferMultinomial;
  t["EyeLike"] = inferEyeLike;
}

} // namespace onnxslim::shape
