//===- ir/shape/TensorOps.cpp - Shape-manipulating ops --------------------===//
//
// Inference rules for ops that move data around or produce shapes: Constant,
// Shape, Size, Reshape, Flatten, (Un)Squeeze, Transpose, Concat, Split,
// Slice, Gather*, Tile, Pad, Expand, ConstantOfShape, Range, OneHot,
// Depth/SpaceToDepth, Compress, NonZero, Unique, TopK, CenterCropPad and
// Col2Im. Target shapes are read from operand contents (constants or tracked
// shape arithmetic), so Reshape(x, Concat(Gather(Shape(x), 0), [-1])) is
// resolved symbolically.
//
// Slice on a symbolic dim: x[:, k:] and x[:, :-k] are d - k (an expression,
// never written as a dim unless it simplifies, as for a dim padded by k);
// x[:, -k:] is k only when d >= k is provable; a positive constant end on a
// symbolic dim (truncation, min(e, d)) is unknown; so is a symbolic end not
// provably within the dim (buffer[:, :seq] is min(seq, d), not seq). A
// length not provably >= 0 is the opaque max(0, ...).
//
//===----------------------------------------------------------------------===//
#include "ir/shape/InferContext.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

namespace onnxslim::shape {

namespace {

/// Bounds at least this large (or this small, negated) mean "to the end".
constexpr int64_t kOpenBound = int64_t{1} << 30;

DataType elemOf(InferContext &ctx, size_t i) {
  return ctx.elemType(i).value_or(DataType::Undefined);
}

/// Reads an int list from an attribute (older opsets) or an operand (newer).
std::optional<std::vector<int64_t>> intsFrom(InferContext &ctx, bool fromInput, size_t input,
                                             const char *attr) {
  if (fromInput)
    return ctx.hasInput(input) ? ctx.ints(input) : std::nullopt;
  const Attribute *a = ctx.node().attr(attr);
  if (a && a->kind == AttrKind::Ints)
    return a->ints;
  return std::nullopt;
}

/// Normalizes axes against `rank`; fails on out-of-range or repeated axes.
std::optional<std::vector<int64_t>> normalizeAxes(InferContext &ctx, std::vector<int64_t> axes,
                                                  int64_t rank) {
  std::set<int64_t> seen;
  for (int64_t &a : axes) {
    auto n = ctx.normalizeAxis(a, rank);
    if (!n)
      return std::nullopt;
    a = *n;
    if (!seen.insert(a).second) {
      ctx.fail("axis " + std::to_string(a) + " is repeated");
      return std::nullopt;
    }
  }
  return axes;
}

//===--- Constant, Shape, Size -----------------------------------------===//

void inferConstant(InferContext &ctx) {
  const Node &n = ctx.node();
  for (const Attribute &a : n.attributes()) {
    if (a.name == "value" && a.kind == AttrKind::Tensor && a.t) {
      ctx.setFacts(0, Facts::ofConstant(a.t));
      return;
    }
    if (a.name == "sparse_value" && a.kind == AttrKind::SparseTensor && a.sparseTensor) {
      SymShape s;
      for (int64_t d : a.sparseTensor->dims)
        s.push_back(SymDim::constant(d));
      DataType dt = a.sparseTensor->values ? a.sparseTensor->values->dtype() : DataType::Undefined;
      ctx.setTensor(0, dt, s);
      return;
    }
    if (a.name == "value_int" && a.kind == AttrKind::Int) {
      ctx.setFacts(0, Facts::ofConstant(Tensor::fromValues<int64_t>(DataType::Int64, {}, {a.i})));
      return;
    }
    if (a.name == "value_ints" && a.kind == AttrKind::Ints) {
      ctx.setFacts(0, Facts::ofConstant(Tensor::fromValues<int64_t>(
                          DataType::Int64, {static_cast<int64_t>(a.ints.size())}, a.ints)));
      return;
    }
    if (a.name == "value_float" && a.kind == AttrKind::Float) {
      ctx.setFacts(0, Facts::ofConstant(Tensor::fromValues<float>(DataType::Float, {}, {a.f})));
      return;
    }
    if (a.name == "value_floats" && a.kind == AttrKind::Floats) {
      ctx.setFacts(0, Facts::ofConstant(Tensor::fromValues<float>(
                          DataType::Float, {static_cast<int64_t>(a.floats.size())}, a.floats)));
      return;
    }
    if (a.name == "value_string" && a.kind == AttrKind::String) {
      ctx.setTensor(0, DataType::String, SymShape{});
      return;
    }
    if (a.name == "value_strings" && a.kind == AttrKind::Strings) {
      ctx.setTensor(0, DataType::String,
                    SymShape{SymDim::constant(static_cast<int64_t>(a.strings.size()))});
      return;
    }
  }
  ctx.fail("no value attribute");
}

void inferShape(InferContext &ctx) {
  const SymShape *s = ctx.shape(0);
  if (!s) {
    if (ctx.hasInput(0))
      ctx.setTensor(0, DataType::Int64, SymShape{SymDim()});
    return;
  }
  int64_t r = static_cast<int64_t>(s->size());
  int64_t start = ctx.node().attrInt("start", 0), end = ctx.node().attrInt("end", r);
  if (start < 0)
    start += r;
  if (end < 0)
    end += r;
  start = std::clamp<int64_t>(start, 0, r);
  end = std::clamp<int64_t>(end, 0, r);
  std::vector<SymDim> dims;
  for (int64_t i = start; i < end; ++i)
    dims.push_back((*s)[static_cast<size_t>(i)]);
  ctx.setTensor(0, DataType::Int64, SymShape{SymDim::constant(static_cast<int64_t>(dims.size()))});
  ctx.setElements(0, std::move(dims));
}

void inferSize(InferContext &ctx) {
  if (!ctx.hasInput(0))
    return;
  ctx.setTensor(0, DataType::Int64, SymShape{});
  if (const SymShape *s = ctx.shape(0))
    ctx.setElements(0, {product(*s)});
}

//===--- Reshape family ------------------------------------------------===//

void keepElements(InferContext &ctx) {
  if (auto e = ctx.elements(0))
    ctx.setElements(0, std::move(*e));
}

/// The constant dims of operand i when its shape is static.
std::optional<std::vector<int64_t>> staticDims(InferContext &ctx, size_t i) {
  const SymShape *s = ctx.shape(i);
  if (!s || !isStatic(*s))
    return std::nullopt;
  std::vector<int64_t> dims;
  for (const SymDim &d : *s)
    dims.push_back(*d.constantValue());
  return dims;
}

/// Picks elements of a row-major tensor of `dims`: along each axis the
/// listed source indices, in order. Result: the picked elements, row-major.
std::vector<SymDim> pickElements(const std::vector<SymDim> &src, const std::vector<int64_t> &dims,
                                 const std::vector<std::vector<int64_t>> &picks) {
  size_t rank = dims.size();
  std::vector<int64_t> strides(rank, 1);
  for (size_t r = rank; r-- > 1;)
    strides[r - 1] = strides[r] * dims[r];
  size_t total = 1;
  for (const auto &p : picks)
    total *= p.size();
  std::vector<SymDim> out;
  out.reserve(total);
  std::vector<size_t> idx(rank, 0);
  for (size_t n = 0; n < total; ++n) {
    int64_t flat = 0;
    for (size_t r = 0; r < rank; ++r)
      flat += picks[r][idx[r]] * strides[r];
    out.push_back(src[static_cast<size_t>(flat)]);
    for (size_t r = rank; r-- > 0;) {
      if (++idx[r] < picks[r].size())
        break;
      idx[r] = 0;
    }
  }
  return out;
}

void inferReshape(InferContext &ctx) {
  DataType elem = elemOf(ctx, 0);
  std::optional<std::vector<SymDim>> target;
  if (ctx.opset() < 5) {
    const Attribute *a = ctx.node().attr("shape");
    if (a && a->kind == AttrKind::Ints) {
      target = std::vector<SymDim>();
      for (int64_t d : a->ints)
        target->push_back(SymDim::constant(d));
    }
  } else {
    target = ctx.elements(1);
    if (!target) {
      // Unknown contents: the rank still follows from the shape operand's length.
      const SymShape *ts = ctx.shape(1);
      if (ts && ts->size() == 1 && (*ts)[0].isConstant())
        ctx.setTensor(0, elem, SymShape(static_cast<size_t>(*(*ts)[0].constantValue())));
      else
        ctx.setTensor(0, elem, std::nullopt);
      return;
    }
  }
  if (!target) {
    ctx.fail("missing target shape");
    return;
  }
  bool allowZero = ctx.opset() >= 14 && ctx.node().attrInt("allowzero", 0) != 0;
  const SymShape *in = ctx.shape(0);
  SymShape out;
  std::optional<size_t> inferredAt;
  bool othersKnown = true;
  for (size_t i = 0; i < target->size(); ++i) {
    const SymDim &t = (*target)[i];
    auto c = t.constantValue();
    if (!c) {
      out.push_back(t);
      othersKnown = othersKnown && t.isKnown();
      continue;
    }
    if (*c == 0 && !allowZero) {
      if (in && i >= in->size()) {
        ctx.fail("target dim " + std::to_string(i) + " is 0 (copy) but the input has rank " +
                 std::to_string(in->size()));
        return;
      }
      out.push_back(in ? (*in)[i] : SymDim());
      othersKnown = othersKnown && out.back().isKnown();
    } else if (*c == -1) {
      if (inferredAt) {
        ctx.fail("target shape has more than one -1");
        return;
      }
      inferredAt = i;
      out.push_back(SymDim());
    } else if (*c < -1) {
      ctx.fail("target shape has an invalid dim " + std::to_string(*c));
      return;
    } else {
      out.push_back(t);
    }
  }
  // A target whose known dims multiply past int64 describes no tensor (and
  // its element count would read as unknown below, hiding the contradiction).
  {
    int64_t count = 1;
    bool zero = false, overflow = false;
    for (const SymDim &d : out)
      if (auto c = d.constantValue(); c && *c >= 0) {
        zero = zero || *c == 0;
        overflow = overflow || __builtin_mul_overflow(count, *c, &count);
      }
    if (overflow && !zero) {
      ctx.fail("target shape " + str(out) + " has more elements than int64 can count");
      return;
    }
  }
  if (inferredAt && in && othersKnown) {
    SymDim total = product(*in);
    SymDim rest = SymDim::constant(1);
    for (size_t i = 0; i < out.size(); ++i)
      if (i != *inferredAt)
        rest = rest * out[i];
    auto tc = total.constantValue(), rc = rest.constantValue();
    if (tc && rc) {
      if (*rc == 0 || *tc % *rc != 0) {
        ctx.fail("cannot reshape " + str(*in) + " to " + str(out) + ": sizes do not divide");
        return;
      }
      out[*inferredAt] = SymDim::constant(*tc / *rc);
    } else {
      out[*inferredAt] = total.divExact(rest);
    }
  } else if (!inferredAt && in) {
    auto tc = product(*in).constantValue(), oc = product(out).constantValue();
    if (tc && oc && *tc != *oc) {
      ctx.fail("cannot reshape " + str(*in) + " (" + std::to_string(*tc) + " elements) to " +
               str(out));
      return;
    }
  }
  ctx.setTensor(0, elem, out);
  keepElements(ctx);
}

void inferFlatten(InferContext &ctx) {
  DataType elem = elemOf(ctx, 0);
  const SymShape *in = ctx.shape(0);
  if (!in) {
    ctx.setTensor(0, elem, SymShape{SymDim(), SymDim()});
    return;
  }
  int64_t r = static_cast<int64_t>(in->size());
  int64_t axis = ctx.node().attrInt("axis", 1);
  if (axis < 0)
    axis += r;
  if (axis < 0 || axis > r) {
    ctx.fail("axis out of range for rank " + std::to_string(r));
    return;
  }
  size_t a = static_cast<size_t>(axis);
  ctx.setTensor(0, elem, SymShape{product(*in, 0, a), product(*in, a)});
  keepElements(ctx);
}

void inferSqueeze(InferContext &ctx) {
  DataType elem = elemOf(ctx, 0);
  bool fromInput = ctx.opset() >= 13;
  std::optional<std::vector<int64_t>> axes = intsFrom(ctx, fromInput, 1, "axes");
  bool axesGiven = fromInput ? ctx.hasInput(1) : ctx.node().hasAttr("axes");
  const SymShape *in = ctx.shape(0);
  if (!in || (axesGiven && !axes)) {
    ctx.setTensor(0, elem, std::nullopt);
    return;
  }
  SymShape out;
  if (!axesGiven) {
    for (const SymDim &d : *in) {
      auto c = d.constantValue();
      if (!c) { // might be 1 at run time: the rank is unknown
        ctx.setTensor(0, elem, std::nullopt);
        return;
      }
      if (*c != 1)
        out.push_back(d);
    }
  } else {
    auto norm = normalizeAxes(ctx, *axes, static_cast<int64_t>(in->size()));
    if (!norm)
      return;
    std::set<int64_t> drop(norm->begin(), norm->end());
    for (size_t i = 0; i < in->size(); ++i) {
      if (!drop.count(static_cast<int64_t>(i))) {
        out.push_back((*in)[i]);
        continue;
      }
      auto c = (*in)[i].constantValue();
      if (c && *c != 1) {
        ctx.fail("cannot squeeze axis " + std::to_string(i) + " of size " + std::to_string(*c));
        return;
      }
    }
  }
  ctx.setTensor(0, elem, out);
  keepElements(ctx);
}

void inferUnsqueeze(InferContext &ctx) {
  DataType elem = elemOf(ctx, 0);
  bool fromInput = ctx.opset() >= 13;
  std::optional<std::vector<int64_t>> axes = intsFrom(ctx, fromInput, 1, "axes");
  const SymShape *in = ctx.shape(0);
  if (!axes) {
    if (!fromInput)
      ctx.fail("missing 'axes' attribute");
    else
      ctx.setTensor(0, elem, std::nullopt);
    return;
  }
  if (!in) {
    ctx.setTensor(0, elem, std::nullopt);
    return;
  }
  int64_t outRank = static_cast<int64_t>(in->size() + axes->size());
  auto norm = normalizeAxes(ctx, *axes, outRank);
  if (!norm)
    return;
  std::set<int64_t> ins(norm->begin(), norm->end());
  SymShape out;
  size_t j = 0;
  for (int64_t i = 0; i < outRank; ++i)
    out.push_back(ins.count(i) ? SymDim::constant(1) : (*in)[j++]);
  ctx.setTensor(0, elem, out);
  keepElements(ctx);
}

void inferTranspose(InferContext &ctx) {
  DataType elem = elemOf(ctx, 0);
  const SymShape *in = ctx.shape(0);
  const Attribute *permAttr = ctx.node().attr("perm");
  if (!in) {
    ctx.setTensor(0, elem,
                  permAttr ? std::optional<SymShape>(SymShape(permAttr->ints.size()))
                           : std::nullopt);
    return;
  }
  size_t r = in->size();
  std::vector<int64_t> perm(r);
  if (permAttr && permAttr->kind == AttrKind::Ints) {
    perm = permAttr->ints;
  } else {
    for (size_t i = 0; i < r; ++i)
      perm[i] = static_cast<int64_t>(r - 1 - i);
  }
  if (perm.size() != r) {
    ctx.fail("perm has " + std::to_string(perm.size()) + " entries for rank " + std::to_string(r));
    return;
  }
  std::vector<bool> seen(r, false);
  SymShape out;
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(r) || seen[static_cast<size_t>(p)]) {
      ctx.fail("perm is not a permutation of 0.." + std::to_string(r - 1));
      return;
    }
    seen[static_cast<size_t>(p)] = true;
    out.push_back((*in)[static_cast<size_t>(p)]);
  }
  ctx.setTensor(0, elem, out);
  auto contents = ctx.elements(0);
  auto dims = staticDims(ctx, 0);
  if (!contents || !dims || contents->size() > kMaxElements)
    return;
  // Output index (i_0..i_r) reads input index with i_k at axis perm[k].
  std::vector<int64_t> strides(r, 1);
  for (size_t k = r; k-- > 1;)
    strides[k - 1] = strides[k] * (*dims)[k];
  std::vector<int64_t> outDims(r);
  for (size_t k = 0; k < r; ++k)
    outDims[k] = (*dims)[static_cast<size_t>(perm[k])];
  std::vector<SymDim> moved;
  moved.reserve(contents->size());
  std::vector<int64_t> idx(r, 0);
  for (size_t n = 0; n < contents->size(); ++n) {
    int64_t flat = 0;
    for (size_t k = 0; k < r; ++k)
      flat += idx[k] * strides[static_cast<size_t>(perm[k])];
    moved.push_back((*contents)[static_cast<size_t>(flat)]);
    for (size_t k = r; k-- > 0;) {
      if (++idx[k] < outDims[k])
        break;
      idx[k] = 0;
    }
  }
  ctx.setElements(0, std::move(moved));
}

//===--- Concat and Split ----------------------------------------------===//

void inferConcat(InferContext &ctx) {
  if (ctx.numInputs() == 0) {
    ctx.fail("needs at least one operand");
    return;
  }
  DataType elem = DataType::Undefined;
  std::optional<int64_t> rank;
  for (size_t i = 0; i < ctx.numInputs(); ++i) {
    if (elem == DataType::Undefined)
      elem = elemOf(ctx, i);
    if (auto r = ctx.rank(i)) {
      if (rank && *rank != *r) {
        ctx.fail("operands have different ranks (" + std::to_string(*rank) + " and " +
                 std::to_string(*r) + ")");
        return;
      }
      rank = r;
    }
  }
  if (!rank) {
    ctx.setTensor(0, elem, std::nullopt);
    return;
  }
  int64_t axisAttr = ctx.node().attrInt("axis", ctx.opset() < 4 ? 1 : INT64_MIN);
  if (axisAttr == INT64_MIN) {
    ctx.fail("missing 'axis' attribute");
    return;
  }
  auto axis = ctx.normalizeAxis(axisAttr, *rank);
  if (!axis)
    return;
  SymShape out(static_cast<size_t>(*rank));
  out[static_cast<size_t>(*axis)] = SymDim::constant(0);
  bool allShapes = true;
  for (size_t i = 0; i < ctx.numInputs(); ++i) {
    const SymShape *s = ctx.shape(i);
    if (!s) {
      allShapes = false;
      continue;
    }
    for (size_t d = 0; d < s->size(); ++d) {
      if (static_cast<int64_t>(d) == *axis) {
        out[d] = out[d] + (*s)[d];
        continue;
      }
      if (provablyDifferent(out[d], (*s)[d])) {
        ctx.fail("operands differ in dim " + std::to_string(d) + " (" + out[d].str() + " vs " +
                 (*s)[d].str() + ")");
        return;
      }
      if (out[d].isUnknown() || ((*s)[d].isConstant() && !out[d].isConstant()))
        out[d] = (*s)[d];
    }
  }
  if (!allShapes)
    out[static_cast<size_t>(*axis)] = SymDim();
  ctx.setTensor(0, elem, out);
  if (*rank == 1) {
    std::vector<SymDim> all;
    for (size_t i = 0; i < ctx.numInputs(); ++i) {
      auto e = ctx.elements(i);
      if (!e)
        return;
      all.insert(all.end(), e->begin(), e->end());
    }
    ctx.setElements(0, std::move(all));
  }
}

void inferSplit(InferContext &ctx) {
  DataType elem = elemOf(ctx, 0);
  size_t n = ctx.numOutputs();
  const SymShape *in = ctx.shape(0);
  if (!in) {
    for (size_t i = 0; i < n; ++i)
      ctx.setTensor(i, elem, std::nullopt);
    return;
  }
  auto axis = ctx.normalizeAxis(ctx.node().attrInt("axis", 0), static_cast<int64_t>(in->size()));
  if (!axis)
    return;
  size_t a = static_cast<size_t>(*axis);
  const SymDim &dim = (*in)[a];
  std::optional<std::vector<SymDim>> sizes;
  bool splitGiven;
  if (ctx.opset() >= 13 || (ctx.opset() < 2 && ctx.hasInput(1))) {
    splitGiven = ctx.hasInput(1);
    if (splitGiven)
      sizes = ctx.elements(1);
  } else {
    splitGiven = ctx.node().hasAttr("split");
    if (splitGiven) {
      sizes = std::vector<SymDim>();
      for (int64_t s : ctx.node().attrInts("split"))
        sizes->push_back(SymDim::constant(s));
    }
  }
  if (splitGiven && sizes) {
    if (sizes->size() != n) {
      ctx.fail("split has " + std::to_string(sizes->size()) + " sizes for " + std::to_string(n) +
               " outputs");
      return;
    }
    SymDim total = SymDim::constant(0);
    for (const SymDim &s : *sizes) {
      if (auto c = s.constantValue(); c && *c < 0) {
        ctx.fail("negative split size");
        return;
      }
      total = total + s;
    }
    if (provablyDifferent(total, dim)) {
      ctx.fail("split sizes sum to " + total.str() + " but the dim is " + dim.str());
      return;
    }
  } else if (!splitGiven) {
    sizes = std::vector<SymDim>(n);
    if (n == 0)
      return;
    int64_t parts = static_cast<int64_t>(n);
    if (ctx.opset() >= 18 && ctx.node().hasAttr("num_outputs")) {
      if (ctx.node().attrInt("num_outputs", 0) != parts) {
        ctx.fail("num_outputs does not match the number of outputs");
        return;
      }
      SymDim chunk = dim.ceilDiv(parts);
      for (size_t i = 0; i + 1 < n; ++i)
        (*sizes)[i] = chunk;
      (*sizes)[n - 1] = dim - chunk * SymDim::constant(parts - 1);
      if (auto c = (*sizes)[n - 1].constantValue(); c && *c < 0) {
        ctx.fail("cannot split " + dim.str() + " into " + std::to_string(parts) + " parts");
        return;
      }
    } else {
      if (auto c = dim.constantValue(); c && *c % parts != 0) {
        ctx.fail("dim " + std::to_string(*c) + " does not split evenly into " +
                 std::to_string(parts) + " parts");
        return;
      }
      SymDim chunk = dim.divExact(SymDim::constant(parts));
      for (auto &s : *sizes)
        s = chunk;
    }
  }
  std::vector<SymDim> contents;
  if (in->size() == 1)
    if (auto e = ctx.elements(0))
      contents = std::move(*e);
  size_t offset = 0;
  for (size_t i = 0; i < n; ++i) {
    SymShape out = *in;
    out[a] = sizes ? (*sizes)[i] : SymDim();
    ctx.setTensor(i, elem, out);
    auto c = out[a].constantValue();
    if (!contents.empty() && c && offset + static_cast<size_t>(*c) <= contents.size()) {
      ctx.setElements(i,
                      std::vector<SymDim>(contents.begin() + static_cast<ptrdiff_t>(offset),
                                          contents.begin() + static_cast<ptrdiff_t>(offset + *c)));
      offset += static_cast<size_t>(*c);
    } else {
      contents.clear();
    }
  }
}

//===--- Slice ---------------------------------------------------------===//

int64_t clampBound(int64_t v) {
  return std::clamp<int64_t>(v, -(int64_t{1} << 62), int64_t{1} << 62);
}

/// Length of slice [s, e) step `step` of a dim of constant size d (ONNX rules).
int64_t sliceLength(int64_t d, int64_t s, int64_t e, int64_t step) {
  if (d <= 0 || step == 0)
    return 0;
  s = clampBound(s);
  e = clampBound(e);
  if (s < 0)
    s += d;
  if (e < 0)
    e += d;
  if (step > 0) {
    s = std::clamp<int64_t>(s, 0, d);
    e = std::clamp<int64_t>(e, 0, d);
    return e > s ? (e - s + step - 1) / step : 0;
  }
  s = std::clamp<int64_t>(s, 0, d - 1);
  e = std::clamp<int64_t>(e, -1, d - 1);
  return s > e ? (s - e + (-step) - 1) / (-step) : 0;
}

/// First index of a slice of a constant-size dim (for slicing contents).
int64_t sliceStart(int64_t d, int64_t s, int64_t step) {
  if (d <= 0)
    return 0;
  s = clampBound(s);
  if (s < 0)
    s += d;
  return step > 0 ? std::clamp<int64_t>(s, 0, d) : std::clamp<int64_t>(s, 0, d - 1);
}

/// max(0, len): `len` itself when provably >= 0 (or a constant), otherwise
/// an opaque atom (equal only to the same expression elsewhere).
SymDim nonNegative(const SymDim &len) {
  if (len.isUnknown())
    return len;
  if (auto c = len.constantValue())
    return SymDim::constant(std::max<int64_t>(*c, 0));
  if (auto b = len.lowerBound(); b && *b >= 0)
    return len;
  return SymDim::opaque("max(0, " + len.str() + ")");
}

/// Length of a Slice of a dim of size d (ONNX: a negative bound counts from
/// the end, then both are clamped to [0, d], length max(0, ceil((e - s) /
/// step))). Every case is exact for every run-time size the symbols can
/// take; what cannot be proven is unknown. For step > 0 the length is
/// max(0, E - S) with E the clamped end (E <= d always) and S the start:
/// a start s >= 0 need not be clamped, as min(s, d) gives the same length
/// against any E <= d. Bounds beyond +-2^30 mean "to the end" (the one
/// size assumption: no dim reaches 2^30 along a sliced axis).
SymDim sliceDim(const SymDim &d, const SymDim &s, const SymDim &e, int64_t step) {
  auto dc = d.constantValue(), sc = s.constantValue(), ec = e.constantValue();
  if (step == 0 || d.isUnknown())
    return SymDim();
  if (dc && *dc < 0)
    return SymDim();
  if (dc && sc && ec)
    return SymDim::constant(sliceLength(*dc, *sc, *ec, step));
  if (step < 0) {
    // Only the full reversal x[::-1] is resolved symbolically.
    if (sc && ec && (*sc == -1 || *sc >= kOpenBound) && *ec <= -kOpenBound && step == -1)
      return d;
    return SymDim();
  }
  auto atLeast = [](const SymDim &x, int64_t k) {
    auto b = x.lowerBound();
    return b && *b >= k;
  };
  // The start S.
  SymDim start;
  if (sc && *sc <= -kOpenBound) {
    start = SymDim::constant(0);
  } else if (sc && *sc < 0) {
    // x[-k:] starts at max(0, d - k): d - k only when d >= k is provable.
    if (!atLeast(d, -*sc))
      return SymDim();
    start = d + s;
  } else if (sc) {
    start = dc ? SymDim::constant(std::min(*sc, *dc)) : s;
  } else if (atLeast(s, 0)) {
    start = s; // a symbolic start provably >= 0
  } else {
    return SymDim();
  }
  // The clamped end E (<= d).
  SymDim end;
  if (ec) {
    if (*ec >= kOpenBound)
      end = d;
    else if (*ec <= -kOpenBound)
      end = SymDim::constant(0);
    else if (*ec < 0)
      end = d + e; // max(0, d + e): the final max(0, .) covers the clamp
    else if (dc)
      end = SymDim::constant(std::min(*ec, *dc));
    else
      end = minimum(e, d); // e itself when provably <= d
  } else if (provablyEqual(e, d)) {
    end = d;
  } else if (atLeast(e, 0)) {
    end = minimum(e, d); // e when provably within [0, d], else min(e, d)
  } else {
    return SymDim(); // an end from another tensor may be negative
  }
  // Both operands of a minimum here are >= 0, so from 0 it is the length.
  auto zero = start.constantValue();
  SymDim len = zero && *zero == 0 && minimumOperands(end) ? end : nonNegative(end - start);
  return len.isUnknown() ? len : len.ceilDiv(step);
}

void inferSlice(InferContext &ctx) {
  DataType elem = elemOf(ctx, 0);
  const SymShape *in = ctx.shape(0);
  if (!in) {
    ctx.setTensor(0, elem, std::nullopt);
    return;
  }
  int64_t r = static_cast<int64_t>(in->size());
  std::optional<std::vector<SymDim>> starts, ends;
  std::optional<std::vector<int64_t>> axes, steps;
  bool axesKnown = true;
  if (ctx.opset() < 10) {
    auto toSym = [](const std::vector<int64_t> &v) {
      std::vector<SymDim> out;
      for (int64_t x : v)
        out.push_back(SymDim::constant(x));
      return out;
    };
    if (!ctx.node().hasAttr("starts") || !ctx.node().hasAttr("ends")) {
      ctx.fail("missing 'starts' or 'ends' attribute");
      return;
    }
    starts = toSym(ctx.node().attrInts("starts"));
    ends = toSym(ctx.node().attrInts("ends"));
    if (ctx.node().hasAttr("axes"))
      axes = ctx.node().attrInts("axes");
  } else {
    starts = ctx.elements(1);
    ends = ctx.elements(2);
    if (ctx.hasInput(3)) {
      axes = ctx.ints(3);
      axesKnown = axes.has_value();
    }
    if (ctx.hasInput(4)) {
      steps = ctx.ints(4);
      if (!steps) {
        ctx.setTensor(0, elem, SymShape(in->size()));
        return;
      }
    }
  }
  if (!starts || !ends || !axesKnown) {
    // Which dims change is known only from the axes; the rank is kept.
    SymShape out(in->size());
    if (axes) {
      std::set<int64_t> changed;
      for (int64_t a : *axes)
        changed.insert(a < 0 ? a + r : a);
      for (int64_t i = 0; i < r; ++i)
        if (!changed.count(i))
          out[static_cast<size_t>(i)] = (*in)[static_cast<size_t>(i)];
    }
    ctx.setTensor(0, elem, out);
    return;
  }
  if (starts->size() != ends->size()) {
    ctx.fail("starts and ends have different lengths");
    return;
  }
  size_t k = starts->size();
  if (!axes) {
    axes = std::vector<int64_t>(k);
    std::iota(axes->begin(), axes->end(), 0);
  }
  if (!steps)
    steps = std::vector<int64_t>(k, 1);
  if (axes->size() != k || steps->size() != k) {
    ctx.fail("starts, ends, axes and steps have different lengths");
    return;
  }
  auto norm = normalizeAxes(ctx, *axes, r);
  if (!norm)
    return;
  SymShape out = *in;
  for (size_t i = 0; i < k; ++i) {
    if ((*steps)[i] == 0) {
      ctx.fail("step is 0");
      return;
    }
    size_t a = static_cast<size_t>((*norm)[i]);
    out[a] = sliceDim((*in)[a], (*starts)[i], (*ends)[i], (*steps)[i]);
  }
  ctx.setTensor(0, elem, out);
  // Contents of a sliced small tensor (Shape -> Slice, reversed pads...).
  auto contents = ctx.elements(0);
  auto dims = staticDims(ctx, 0);
  if (!contents || !dims)
    return;
  std::vector<std::vector<int64_t>> picks(dims->size());
  for (size_t a = 0; a < dims->size(); ++a)
    for (int64_t j = 0; j < (*dims)[a]; ++j)
      picks[a].push_back(j);
  for (size_t i = 0; i < k; ++i) {
    auto st = (*starts)[i].constantValue(), en = (*ends)[i].constantValue();
    if (!st || !en)
      return;
    size_t a = static_cast<size_t>((*norm)[i]);
    int64_t d = (*dims)[a], step = (*steps)[i];
    int64_t len = sliceLength(d, *st, *en, step), pos = sliceStart(d, *st, step);
    picks[a].clear();
    for (int64_t j = 0; j < len; ++j, pos += step)
      if (pos >= 0 && pos < d)
        picks[a].push_back(pos);
  }
  ctx.setElements(0, pickElements(*contents, *dims, picks));
}

//===--- Gather family -------------------------------------------------===//

void inferGather(InferContext &ctx) {
  DataType elem = elemOf(ctx, 0);
  const SymShape *data = ctx.shape(0), *idx = ctx.shape(1);
  if (!data || !idx) {
    ctx.setTensor(0, elem, std::nullopt);
    return;
  }
  int64_t r = static_cast<int64_t>(data->size());
  if (r == 0) {
    ctx.fail("data must have rank >= 1");
    return;
  }
  auto axis = ctx.normalizeAxis(ctx.node().attrInt("axis", 0), r);
  if (!axis)
    return;
  size_t a = static_cast<size_t>(*axis);
  SymShape out(data->begin(), data->begin() + static_cast<ptrdiff_t>(a));
  out.insert(out.end(), idx->begin(), idx->end());
  out.insert(out.end(), data->begin() + static_cast<ptrdiff_t>(a) + 1, data->end());
  auto indices = ctx.ints(1);
  auto dimSize = (*data)[a].constantValue();
  if (indices && dimSize)
    for (int64_t i : *indices)
      if (i < -*dimSize || i >= *dimSize) {
        ctx.fail("index " + std::to_string(i) + " is out of range for a dim of size " +
                 std::to_string(*dimSize));
        return;
      }
  ctx.setTensor(0, elem, out);
  auto contents = ctx.elements(0);
  if (r == 1 && contents && indices) {
    std::vector<SymDim> picked;
    int64_t n = static_cast<int64_t>(contents->size());
    for (int64_t i : *indices)
      picked.push_back((*contents)[static_cast<size_t>(i < 0 ? i + n : i)]);
    ctx.setElements(0, std::move(picked));
  }
}

void inferGatherElements(InferContext &ctx) {
  DataType elem = elemOf(ctx, 0);
  const SymShape *data = ctx.shape(0), *idx = ctx.shape(1);
  if (data && idx && data->size() != idx->size()) {
    ctx.fail("data and indices ranks differ");
    return;
  }
  if (data)
    if (!ctx.normalizeAxis(ctx.node().attrInt("axis", 0), static_cast<int64_t>(data->size())))
      return;
  ctx.setTensor(0, elem, idx ? std::optional<SymShape>(*idx) : std::nullopt);
}

void inferGatherND(InferContext &ctx) {
  DataType elem = elemOf(ctx, 0);
  const SymShape *data = ctx.shape(0), *idx = ctx.shape(1);
  if (!data || !idx || idx->empty()) {
    if (idx && idx->empty())
      ctx.fail("indices must have rank >= 1");
    else
      ctx.setTensor(0, elem, std::nullopt);
    return;
  }
  int64_t b = ctx.node().attrInt("batch_dims", 0);
  auto last = idx->back().constantValue();
  if (!last) {
    ctx.setTensor(0, elem, std::nullopt);
    return;
  }
  if (*last < 1 || b < 0 || b + *last > static_cast<int64_t>(data->size()) ||
      b >= static_cast<int64_t>(idx->size())) {
    ctx.fail("indices' last dim " + std::to_string(*last) + " with batch_dims " +
             std::to_string(b) + " exceeds the data rank " + std::to_string(data->size()));
    return;
  }
  SymShape out(idx->begin(), idx->end() - 1);
  out.insert(out.end(), data->begin() + b + *last, data->end());
  ctx.setTensor(0, elem, out);
}

//===--- Tile, Pad, Expand ---------------------------------------------===//

void inferTile(InferContext &ctx) {
  DataType elem = elemOf(ctx, 0);
  const SymShape *in = ctx.shape(0);
  auto reps = ctx.elements(1);
  if (!in) {
    ctx.setTensor(0, elem, std::nullopt);
    return;
  }
  if (!reps) {
    ctx.setTensor(0, elem, SymShape(in->size()));
    return;
  }
  if (reps->size() != in->size()) {
    ctx.fail("repeats has " + std::to_string(reps->size()) + " entries for rank " +
             std::to_string(in->size()));
    return;
  }
  SymShape out;
  for (size_t i = 0; i < in->size(); ++i) {
    if (auto c = (*reps)[i].constantValue(); c && *c < 0) {
      ctx.fail("negative repeat");
      return;
    }
    out.push_back((*in)[i] * (*reps)[i]);
  }
  ctx.setTensor(0, elem, out);
  auto contents = ctx.elements(0);
  auto count = staticSize(out);
  if (in->size() == 1 && contents && count && static_cast<size_t>(*count) <= kMaxElements) {
    std::vector<SymDim> tiled;
    for (size_t i = 0; i < static_cast<size_t>(*count); ++i)
      tiled.push_back((*contents)[i % contents->size()]);
    ctx.setElements(0, std::move(tiled));
  }
}

void inferPad(InferContext &ctx) {
  DataType elem = elemOf(ctx, 0);
  const SymShape *in = ctx.shape(0);
  if (!in) {
    ctx.setTensor(0, elem, std::nullopt);
    return;
  }
  int64_t r = static_cast<int64_t>(in->size());
  std::optional<std::vector<SymDim>> pads;
  if (ctx.opset() >= 11) {
    pads = ctx.elements(1);
  } else {
    const char *name = ctx.opset() < 2 ? "paddings" : "pads";
    if (!ctx.node().hasAttr(name)) {
      ctx.fail(std::string("missing '") + name + "' attribute");
      return;
    }
    pads = std::vector<SymDim>();
    for (int64_t p : ctx.node().attrInts(name))
      pads->push_back(SymDim::constant(p));
  }
  std::vector<int64_t> axes(static_cast<size_t>(r));
  std::iota(axes.begin(), axes.end(), 0);
  if (ctx.opset() >= 18 && ctx.hasInput(3)) {
    auto a = ctx.ints(3);
    if (!a) {
      ctx.setTensor(0, elem, SymShape(in->size()));
      return;
    }
    auto norm = normalizeAxes(ctx, *a, r);
    if (!norm)
      return;
    axes = *norm;
  }
  if (!pads) {
    SymShape out = *in;
    for (int64_t a : axes)
      out[static_cast<size_t>(a)] = SymDim();
    ctx.setTensor(0, elem, out);
    return;
  }
  size_t k = axes.size();
  if (pads->size() != 2 * k) {
    ctx.fail("pads has " + std::to_string(pads->size()) + " entries; expected " +
             std::to_string(2 * k));
    return;
  }
  SymShape out = *in;
  for (size_t i = 0; i < k; ++i) {
    size_t a = static_cast<size_t>(axes[i]);
    out[a] = (*in)[a] + (*pads)[i] + (*pads)[i + k];
    if (auto c = out[a].constantValue(); c && *c < 0) {
      ctx.fail("padding makes dim " + std::to_string(a) + " negative");
      return;
    }
  }
  ctx.setTensor(0, elem, out);
}

void inferExpand(InferContext &ctx) {
  DataType elem = elemOf(ctx, 0);
  const SymShape *in = ctx.shape(0);
  auto target = ctx.elements(1);
  if (!in || !target) {
    const SymShape *ts = ctx.shape(1);
    if (in && ts && ts->size() == 1 && (*ts)[0].isConstant()) {
      size_t rank = std::max(in->size(), static_cast<size_t>(*(*ts)[0].constantValue()));
      ctx.setTensor(0, elem, SymShape(rank));
    } else {
      ctx.setTensor(0, elem, std::nullopt);
    }
    return;
  }
  SymShape shape(target->begin(), target->end());
  auto out = ctx.broadcast({in, &shape});
  if (!out)
    return;
  ctx.setTensor(0, elem, out);
  broadcastElements(ctx, 0, {0}, [](const auto &a) { return a[0]; });
}

//===--- Generators ----------------------------------------------------===//

void inferConstantOfShape(InferContext &ctx) {
  DataType dt = DataType::Float;
  std::optional<SymDim> fill = SymDim::constant(0);
  if (const Attribute *v = ctx.node().attr("value"); v && v->kind == AttrKind::Tensor && v->t) {
    dt = v->t->dtype();
    auto e = tensorElements(*v->t);
    fill = e && e->size() == 1 ? std::optional<SymDim>((*e)[0]) : std::nullopt;
  }
  auto dims = ctx.elements(0);
  if (!dims) {
    const SymShape *s = ctx.shape(0);
    if (s && s->size() == 1 && (*s)[0].isConstant())
      ctx.setTensor(0, dt, SymShape(static_cast<size_t>(*(*s)[0].constantValue())));
    else
      ctx.setTensor(0, dt, std::nullopt);
    return;
  }
  for (const SymDim &d : *dims)
    if (auto c = d.constantValue(); c && *c < 0) {
      ctx.fail("negative dim " + std::to_string(*c) + " in the shape");
      return;
    }
  SymShape out(dims->begin(), dims->end());
  ctx.setTensor(0, dt, out);
  auto count = staticSize(out);
  if (fill && count && static_cast<size_t>(*count) <= kMaxElements)
    ctx.setElements(0, std::vector<SymDim>(static_cast<size_t>(*count), *fill));
}

void inferRange(InferContext &ctx) {
  DataType dt = DataType::Undefined;
  for (size_t i = 0; i < 3 && dt == DataType::Undefined; ++i)
    dt = elemOf(ctx, i);
  for (size_t i = 0; i < 3; ++i)
    if (auto r = ctx.rank(i);
        r && *r != 0 && !(*r == 1 && ctx.shape(i)->front().constantValue() == 1)) {
      ctx.fail("start, limit and delta must be scalars");
      return;
    }
  SymDim len;
  auto start = ctx.elements(0), limit = ctx.elements(1), delta = ctx.elements(2);
  if (isInteger(dt) || dt == DataType::Undefined) {
    if (start && limit && delta && start->size() == 1 && limit->size() == 1 && delta->size() == 1) {
      auto s = (*start)[0], l = (*limit)[0];
      auto d = (*delta)[0].constantValue();
      if (d && *d == 0) {
        ctx.fail("delta is 0");
        return;
      }
      if (d && *d > 0)
        len = (l - s).ceilDiv(*d);
      else if (d)
        len = (s - l).ceilDiv(-*d);
      if (auto c = len.constantValue(); c && *c < 0)
        len = SymDim::constant(0);
    }
  } else {
    auto s = ctx.doubles(0), l = ctx.doubles(1), d = ctx.doubles(2);
    if (s && l && d && s->size() == 1 && l->size() == 1 && d->size() == 1) {
      if ((*d)[0] == 0) {
        ctx.fail("delta is 0");
        return;
      }
      // As ONNX Runtime: limit - start in the tensors' type, then the
      // quotient in double.
      double diff = dt == DataType::Float
                        ? static_cast<double>(static_cast<float>((*l)[0]) - static_cast<float>((*s)[0]))
                        : (*l)[0] - (*s)[0];
      double n = std::ceil(diff / (*d)[0]);
      if (std::isfinite(n) && n < 9.0e15)
        len = SymDim::constant(n > 0 ? static_cast<int64_t>(n) : 0);
    }
  }
  ctx.setTensor(0, dt, SymShape{len});
  auto n = len.constantValue();
  if (n && static_cast<size_t>(*n) <= kMaxElements && start && delta && start->size() == 1 &&
      delta->size() == 1 && (isInteger(dt) || dt == DataType::Undefined)) {
    std::vector<SymDim> values;
    SymDim v = (*start)[0];
    for (int64_t i = 0; i < *n; ++i, v = v + (*delta)[0])
      values.push_back(v);
    ctx.setElements(0, std::move(values));
  }
}

void inferOneHot(InferContext &ctx) {
  DataType dt = elemOf(ctx, 2);
  const SymShape *in = ctx.shape(0);
  if (!in) {
    ctx.setTensor(0, dt, std::nullopt);
    return;
  }
  int64_t outRank = static_cast<int64_t>(in->size()) + 1;
  auto axis = ctx.normalizeAxis(ctx.node().attrInt("axis", -1), outRank);
  if (!axis)
    return;
  SymDim depth;
  if (auto d = ctx.doubles(1); d && d->size() == 1)
    depth = SymDim::constant(static_cast<int64_t>((*d)[0]));
  else if (auto e = ctx.elements(1); e && e->size() == 1)
    depth = (*e)[0];
  SymShape out = *in;
  out.insert(out.begin() + *axis, depth);
  ctx.setTensor(0, dt, out);
}

//===--- Block rearrangements ------------------------------------------===//

SymDim divideDim(InferContext &ctx, const SymDim &d, int64_t k, const char *what) {
  auto c = d.constantValue();
  if (c && (k == 0 || *c % k != 0)) {
    ctx.fail(std::string(what) + " " + std::to_string(*c) + " is not divisible by " +
             std::to_string(k));
    return SymDim();
  }
  return d.divExact(SymDim::constant(k));
}

void inferDepthToSpace(InferContext &ctx) {
  DataType elem = elemOf(ctx, 0);
  const SymShape *in = ctx.shape(0);
  int64_t b = ctx.node().attrInt("blocksize", 0);
  if (b <= 0 || b > (1 << 20)) {
    ctx.fail("missing or invalid 'blocksize'");
    return;
  }
  if (!in) {
    ctx.setTensor(0, elem, SymShape(4));
    return;
  }
  if (in->size() != 4) {
    ctx.fail("input must be 4-D");
    return;
  }
  SymDim c = divideDim(ctx, (*in)[1], b * b, "channels");
  if (ctx.failed())
    return;
  SymDim bd = SymDim::constant(b);
  ctx.setTensor(0, elem, SymShape{(*in)[0], c, (*in)[2] * bd, (*in)[3] * bd});
}

void inferSpaceToDepth(InferContext &ctx) {
  DataType elem = elemOf(ctx, 0);
  const SymShape *in = ctx.shape(0);
  int64_t b = ctx.node().attrInt("blocksize", 0);
  if (b <= 0 || b > (1 << 20)) {
    ctx.fail("missing or invalid 'blocksize'");
    return;
  }
  if (!in) {
    ctx.setTensor(0, elem, SymShape(4));
    return;
  }
  if (in->size() != 4) {
    ctx.fail("input must be 4-D");
    return;
  }
  SymDim h = divideDim(ctx, (*in)[2], b, "height");
  SymDim w = divideDim(ctx, (*in)[3], b, "width");
  if (ctx.failed())
    return;
  ctx.setTensor(0, elem, SymShape{(*in)[0], (*in)[1] * SymDim::constant(b * b), h, w});
}

//===--- Data-dependent results ----------------------------------------===//

void inferCompress(InferContext &ctx) {
  DataType elem = elemOf(ctx, 0);
  const SymShape *in = ctx.shape(0);
  SymDim kept = ctx.freshDim();
  if (auto cond = ctx.ints(1)) {
    int64_t n = 0;
    for (int64_t c : *cond)
      n += c != 0;
    kept = SymDim::constant(n);
  }
  const Attribute *axisAttr = ctx.node().attr("axis");
  if (!axisAttr) {
    ctx.setTensor(0, elem, SymShape{kept});
    return;
  }
  if (!in) {
    ctx.setTensor(0, elem, std::nullopt);
    return;
  }
  auto axis = ctx.normalizeAxis(axisAttr->i, static_cast<int64_t>(in->size()));
  if (!axis)
    return;
  SymShape out = *in;
  out[static_cast<size_t>(*axis)] = kept;
  ctx.setTensor(0, elem, out);
}

void inferNonZero(InferContext &ctx) {
  auto r = ctx.rank(0);
  SymDim count = ctx.freshDim();
  if (auto e = ctx.elements(0)) {
    int64_t n = 0;
    bool known = true;
    for (const SymDim &d : *e) {
      auto c = d.constantValue();
      known = known && c;
      n += c && *c != 0;
    }
    if (known)
      count = SymDim::constant(n);
  }
  ctx.setTensor(0, DataType::Int64, SymShape{r ? SymDim::constant(*r) : SymDim(), count});
}

void inferUnique(InferContext &ctx) {
  DataType elem = elemOf(ctx, 0);
  const SymShape *in = ctx.shape(0);
  SymDim unique = ctx.freshDim();
  const Attribute *axisAttr = ctx.node().attr("axis");
  SymDim inverseLen;
  if (!axisAttr) {
    ctx.setTensor(0, elem, SymShape{unique});
    inverseLen = in ? product(*in) : SymDim();
  } else if (in) {
    auto axis = ctx.normalizeAxis(axisAttr->i, static_cast<int64_t>(in->size()));
    if (!axis)
      return;
    SymShape out = *in;
    out[static_cast<size_t>(*axis)] = unique;
    inverseLen = (*in)[static_cast<size_t>(*axis)];
    ctx.setTensor(0, elem, out);
  } else {
    ctx.setTensor(0, elem, std::nullopt);
  }
  ctx.setTensor(1, DataType::Int64, SymShape{unique});
  ctx.setTensor(2, DataType::Int64, SymShape{inverseLen});
  ctx.setTensor(3, DataType::Int64, SymShape{unique});
}

void inferTopK(InferContext &ctx) {
  DataType elem = elemOf(ctx, 0);
  const SymShape *in = ctx.shape(0);
  SymDim k;
  if (ctx.opset() < 10) {
    if (!ctx.node().hasAttr("k")) {
      ctx.fail("missing 'k' attribute");
      return;
    }
    k = SymDim::constant(ctx.node().attrInt("k", 0));
  } else if (auto e = ctx.elements(1); e && e->size() == 1) {
    k = (*e)[0];
  } else {
    k = ctx.freshDim();
  }
  if (!in) {
    ctx.setTensor(0, elem, std::nullopt);
    ctx.setTensor(1, DataType::Int64, std::nullopt);
    return;
  }
  auto axis = ctx.normalizeAxis(ctx.node().attrInt("axis", -1), static_cast<int64_t>(in->size()));
  if (!axis)
    return;
  const SymDim &d = (*in)[static_cast<size_t>(*axis)];
  auto kc = k.constantValue(), dc = d.constantValue();
  if (kc && (*kc < 0 || (dc && *kc > *dc))) {
    ctx.fail("k = " + std::to_string(*kc) + " is out of range for a dim of size " + d.str());
    return;
  }
  SymShape out = *in;
  out[static_cast<size_t>(*axis)] = k;
  ctx.setTensor(0, elem, out);
  ctx.setTensor(1, DataType::Int64, out);
}

//===--- Opset 18 shape ops --------------------------------------------===//

void inferCenterCropPad(InferContext &ctx) {
  DataType elem = elemOf(ctx, 0);
  const SymShape *in = ctx.shape(0);
  auto target = ctx.elements(1);
  if (!in) {
    ctx.setTensor(0, elem, std::nullopt);
    return;
  }
  int64_t r = static_cast<int64_t>(in->size());
  std::vector<int64_t> axes = ctx.node().attrInts("axes");
  if (axes.empty()) {
    axes.resize(static_cast<size_t>(r));
    std::iota(axes.begin(), axes.end(), 0);
  }
  auto norm = normalizeAxes(ctx, axes, r);
  if (!norm)
    return;
  SymShape out = *in;
  if (target && target->size() != norm->size()) {
    ctx.fail("shape has " + std::to_string(target->size()) + " entries for " +
             std::to_string(norm->size()) + " axes");
    return;
  }
  for (size_t i = 0; i < norm->size(); ++i)
    out[static_cast<size_t>((*norm)[i])] = target ? (*target)[i] : SymDim();
  ctx.setTensor(0, elem, out);
}

void inferCol2Im(InferContext &ctx) {
  DataType elem = elemOf(ctx, 0);
  const SymShape *in = ctx.shape(0);
  auto image = ctx.elements(1), block = ctx.elements(2);
  if (!in || !image || !block) {
    ctx.setTensor(0, elem, std::nullopt);
    return;
  }
  if (in->size() != 3 || image->size() != block->size()) {
    ctx.fail("input must be [N, C*prod(block), L] with image and block shapes of equal length");
    return;
  }
  SymShape out{(*in)[0], (*in)[1].divExact(product(SymShape(block->begin(), block->end())))};
  out.insert(out.end(), image->begin(), image->end());
  ctx.setTensor(0, elem, out);
}

} // namespace

void addTensorRules(RuleTable &t) {
  t["Constant"] = inferConstant;
  t["Shape"] = inferShape;
  t["Size"] = inferSize;
  t["Reshape"] = inferReshape;
  t["Flatten"] = inferFlatten;
  t["Squeeze"] = inferSqueeze;
  t["Unsqueeze"] = inferUnsqueeze;
  t["Transpose"] = inferTranspose;
  t["Concat"] = inferConcat;
  t["Split"] = inferSplit;
  t["Slice"] = inferSlice;
  t["Gather"] = inferGather;
  t["GatherElements"] = inferGatherElements;
  t["GatherND"] = inferGatherND;
  t["Tile"] = inferTile;
  t["Pad"] = inferPad;
  t["Expand"] = inferExpand;
  t["ConstantOfShape"] = inferConstantOfShape;
  t["Range"] = inferRange;
  t["OneHot"] = inferOneHot;
  t["DepthToSpace"] = inferDepthToSpace;
  t["SpaceToDepth"] = inferSpaceToDepth;
  t["Compress"] = inferCompress;
  t["NonZero"] = inferNonZero;
  t["Unique"] = inferUnique;
  t["TopK"] = inferTopK;
  t["CenterCropPad"] = inferCenterCropPad;
  t["Col2Im"] = inferCol2Im;
}

} // namespace onnxslim::shape
