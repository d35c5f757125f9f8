//===- ir/shape/InferContext.cpp - Per-node shape inference rules ---------===//
//
// The InferContext accessors, the helpers shared by the rule families
// (reading constant tensors, broadcasting, merging facts from two paths) and
// the table that maps op types to rules.
//
//===----------------------------------------------------------------------===//
#include "ir/shape/InferContext.h"

#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace onnxslim::shape {

//===----------------------------------------------------------------------===//
// Facts
//===----------------------------------------------------------------------===//

DataType Facts::elem() const { return isTensor() ? type->elemType() : DataType::Undefined; }

Type Facts::toType() const {
  if (!type)
    return Type();
  if (!isTensor())
    return *type;
  Type t = Type::tensor(type->elemType(),
                        shape ? std::optional<Shape>(onnxslim::toShape(*shape)) : std::nullopt);
  t.hasElemType = type->elemType() != DataType::Undefined;
  return t;
}

Facts Facts::fromType(const Type &t) {
  Facts f;
  if (t.kind() == Type::Kind::Tensor) {
    f.type = Type::tensor(t.hasElemType ? t.elemType() : DataType::Undefined);
    if (t.shape())
      f.shape = toSymShape(*t.shape());
  } else {
    f.type = t;
  }
  return f;
}

Facts Facts::tensor(DataType elem, std::optional<SymShape> shape) {
  Facts f;
  f.type = Type::tensor(elem);
  f.shape = std::move(shape);
  return f;
}

Facts Facts::ofConstant(TensorPtr t) {
  SymShape s;
  for (int64_t d : t->dims())
    s.push_back(SymDim::constant(d));
  Facts f = tensor(t->dtype(), std::move(s));
  f.constant = std::move(t);
  return f;
}

//===----------------------------------------------------------------------===//
// Reading constant data
//===----------------------------------------------------------------------===//

namespace {

float halfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else { // subnormal
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400u) == 0);
      bits = sign | static_cast<uint32_t>(127 - 15 - e) << 23 | (mant & 0x3ffu) << 13;
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | mant << 13;
  } else {
    bits = sign | (exp + 127 - 15) << 23 | mant << 13;
  }
  return std::bit_cast<float>(bits);
}

/// Element i of a numeric tensor as a double; nullopt for other dtypes.
std::optional<double> elementAsDouble(const Tensor &t, size_t i) {
  switch (t.dtype()) {
  case DataType::Float: return t.at<float>(i);
  case DataType::Double: return t.at<double>(i);
  case DataType::Float16: return halfToFloat(t.at<uint16_t>(i));
  case DataType::BFloat16:
    return std::bit_cast<float>(static_cast<uint32_t>(t.at<uint16_t>(i)) << 16);
  case DataType::Int8: return t.at<int8_t>(i);
  case DataType::Int16: return t.at<int16_t>(i);
  case DataType::Int32: return t.at<int32_t>(i);
  case DataType::Int64: return static_cast<double>(t.at<int64_t>(i));
  case DataType::UInt8: return t.at<uint8_t>(i);
  case DataType::Bool: return t.at<uint8_t>(i) != 0 ? 1.0 : 0.0;
  case DataType::UInt16: return t.at<uint16_t>(i);
  case DataType::UInt32: return t.at<uint32_t>(i);
  case DataType::UInt64: return static_cast<double>(t.at<uint64_t>(i));
  default: return std::nullopt;
  }
}

bool readable(const Tensor &t, size_t maxElements) {
  if (t.dtype() == DataType::String || elementSize(t.dtype()) == 0 || !t.isConsistent())
    return false;
  for (int64_t d : t.dims())
    if (d < 0)
      return false;
  return static_cast<size_t>(t.numElements()) <= maxElements &&
         t.byteSize() >= static_cast<size_t>(t.numElements()) * elementSize(t.dtype());
}

} // namespace

std::optional<std::vector<SymDim>> tensorElements(const Tensor &t) {
  if (!readable(t, kMaxElements))
    return std::nullopt;
  size_t n = static_cast<size_t>(t.numElements());
  std::vector<SymDim> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (t.dtype() == DataType::Int64) {
      out.push_back(SymDim::constant(t.at<int64_t>(i)));
      continue;
    }
    if (t.dtype() == DataType::UInt64) {
      uint64_t u = t.at<uint64_t>(i);
      if (u > static_cast<uint64_t>(INT64_MAX))
        return std::nullopt;
      out.push_back(SymDim::constant(static_cast<int64_t>(u)));
      continue;
    }
    std::optional<double> d = elementAsDouble(t, i);
    if (!d || !std::isfinite(*d) || std::trunc(*d) != *d || std::fabs(*d) > 9.0e15)
      return std::nullopt;
    out.push_back(SymDim::constant(static_cast<int64_t>(*d)));
  }
  return out;
}

std::optional<std::vector<double>> tensorDoubles(const Tensor &t, size_t maxElements) {
  if (!readable(t, maxElements))
    return std::nullopt;
  size_t n = static_cast<size_t>(t.numElements());
  std::vector<double> out(n);
  for (size_t i = 0; i < n; ++i) {
    std::optional<double> d = elementAsDouble(t, i);
    if (!d)
      return std::nullopt;
    out[i] = *d;
  }
  return out;
}

//===----------------------------------------------------------------------===//
// What a tensor of a given element type holds
//===----------------------------------------------------------------------===//

namespace {

/// The range of an integer type (bool: [0, 1]); uint64 is cut at INT64_MAX,
/// the largest number a SymDim holds.
std::optional<std::pair<int64_t, int64_t>> integerRange(DataType dt) {
  switch (dt) {
  case DataType::Bool: return std::pair<int64_t, int64_t>{0, 1};
  case DataType::Int4: return std::pair<int64_t, int64_t>{-8, 7};
  case DataType::UInt4: return std::pair<int64_t, int64_t>{0, 15};
  case DataType::Int8: return std::pair<int64_t, int64_t>{INT8_MIN, INT8_MAX};
  case DataType::UInt8: return std::pair<int64_t, int64_t>{0, UINT8_MAX};
  case DataType::Int16: return std::pair<int64_t, int64_t>{INT16_MIN, INT16_MAX};
  case DataType::UInt16: return std::pair<int64_t, int64_t>{0, UINT16_MAX};
  case DataType::Int32: return std::pair<int64_t, int64_t>{INT32_MIN, INT32_MAX};
  case DataType::UInt32: return std::pair<int64_t, int64_t>{0, UINT32_MAX};
  case DataType::Int64: return std::pair<int64_t, int64_t>{INT64_MIN, INT64_MAX};
  case DataType::UInt64: return std::pair<int64_t, int64_t>{0, INT64_MAX};
  default: return std::nullopt;
  }
}

/// Significand bits (with the implicit one) of the floating types whose
/// integers are tracked; 0 for the others.
int significandBits(DataType dt) {
  switch (dt) {
  case DataType::Float: return 24;
  case DataType::Double: return 53;
  case DataType::Float16: return 11;
  case DataType::BFloat16: return 8;
  default: return 0;
  }
}

/// `v` rounded to `bits` significant bits, to nearest even; nullopt when the
/// result does not fit an int64.
std::optional<int64_t> roundToSignificand(int64_t v, int bits) {
  uint64_t m = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  int width = 64 - std::countl_zero(m);
  if (width <= bits)
    return v;
  int shift = width - bits;
  uint64_t low = m & ((uint64_t{1} << shift) - 1), half = uint64_t{1} << (shift - 1);
  m >>= shift;
  if (low > half || (low == half && (m & 1)))
    ++m;
  if (m > (uint64_t{1} << 63) >> shift)
    return std::nullopt;
  m <<= shift;
  if (v >= 0)
    return m > static_cast<uint64_t>(INT64_MAX) ? std::nullopt : std::optional<int64_t>(static_cast<int64_t>(m));
  return m == (uint64_t{1} << 63) ? INT64_MIN : -static_cast<int64_t>(m);
}

} // namespace

bool exactlyRepresentable(int64_t v, DataType dt) {
  if (auto r = integerRange(dt))
    return v >= r->first && v <= r->second;
  int bits = significandBits(dt);
  if (bits == 0)
    return false;
  auto rounded = roundToSignificand(v, bits);
  if (!rounded || *rounded != v)
    return false;
  return dt != DataType::Float16 || (v >= -65504 && v <= 65504);
}

bool holdsIntegersUpTo(uint64_t bound, DataType dt) {
  if (auto r = integerRange(dt))
    return bound <= static_cast<uint64_t>(r->second);
  int bits = significandBits(dt);
  return bits != 0 && bound <= (uint64_t{1} << bits);
}

SymDim representElement(const SymDim &exact, DataType dt) {
  if (dt == DataType::Int64)
    return exact;
  std::optional<int64_t> c = exact.constantValue();
  if (!c)
    return SymDim(); // symbolic sizes are int64 values
  if (integerRange(dt) || dt == DataType::BFloat16)
    return exactlyRepresentable(*c, dt) ? exact : SymDim();
  int bits = significandBits(dt);
  if (bits == 0)
    return SymDim();
  std::optional<int64_t> r = roundToSignificand(*c, bits);
  if (!r || (dt == DataType::Float16 && (*r > 65504 || *r < -65504)))
    return SymDim(); // infinity (float16), or beyond what a SymDim holds
  return SymDim::constant(*r);
}

SymDim castElement(const SymDim &v, DataType from, DataType to) {
  if (from == DataType::Undefined || to == DataType::Undefined)
    return SymDim();
  std::optional<int64_t> c = v.constantValue();
  if (!c) {
    // A size stays a size through integer casts that cannot change it.
    return to == DataType::Int64 && (from == DataType::Int64 || from == DataType::UInt64) ? v : SymDim();
  }
  if (to == DataType::Bool)
    return SymDim::constant(*c != 0 ? 1 : 0);
  if (significandBits(to) != 0)
    return v; // rounded by representElement
  auto range = integerRange(to);
  if (!range)
    return SymDim();
  if (isFloatingPoint(from))
    // Float to integer: out-of-range values are undefined (ORT differs by
    // platform); the tracked values are integral, so truncation keeps them.
    return *c >= range->first && *c <= range->second ? v : SymDim();
  if (!integerRange(from))
    return SymDim();
  // Integer (or bool) to integer: two's-complement wrap to the target width.
  auto u = static_cast<uint64_t>(*c);
  switch (to) {
  case DataType::Int8: return SymDim::constant(static_cast<int8_t>(u));
  case DataType::UInt8: return SymDim::constant(static_cast<uint8_t>(u));
  case DataType::Int16: return SymDim::constant(static_cast<int16_t>(u));
  case DataType::UInt16: return SymDim::constant(static_cast<uint16_t>(u));
  case DataType::Int32: return SymDim::constant(static_cast<int32_t>(u));
  case DataType::UInt32: return SymDim::constant(static_cast<uint32_t>(u));
  case DataType::Int64: return SymDim::constant(*c);
  case DataType::UInt64: return *c >= 0 ? v : SymDim(); // 2^64 + c is beyond int64
  default: return SymDim(); // 4-bit types: not modeled
  }
}

//===----------------------------------------------------------------------===//
// InferContext
//===----------------------------------------------------------------------===//

InferContext::InferContext(const Node &node, int64_t opset, FactsLookup lookup,
                           SubgraphInferFn subgraph, uint64_t *anonCounter)
    : node_(node), opset_(opset), lookup_(std::move(lookup)), subgraph_(std::move(subgraph)),
      anonCounter_(anonCounter), results_(node.numResults()) {}

const Facts *InferContext::input(size_t i) const {
  const Value *v = node_.operand(i);
  if (!v)
    return nullptr;
  const Facts *f = lookup_(v);
  return f && f->type ? f : nullptr;
}

const Type *InferContext::inputType(size_t i) const {
  const Facts *f = input(i);
  return f ? &*f->type : nullptr;
}

std::optional<DataType> InferContext::elemType(size_t i) const {
  const Facts *f = input(i);
  if (!f || !f->isTensor() || f->elem() == DataType::Undefined)
    return std::nullopt;
  return f->elem();
}

const SymShape *InferContext::shape(size_t i) const {
  const Facts *f = input(i);
  return f && f->isTensor() && f->shape ? &*f->shape : nullptr;
}

std::optional<int64_t> InferContext::rank(size_t i) const {
  const SymShape *s = shape(i);
  return s ? std::optional<int64_t>(static_cast<int64_t>(s->size())) : std::nullopt;
}

std::optional<std::vector<SymDim>> InferContext::elements(size_t i) const {
  const Facts *f = input(i);
  if (!f || !f->isTensor())
    return std::nullopt;
  if (f->elements)
    return f->elements;
  if (f->constant)
    return tensorElements(*f->constant);
  return std::nullopt;
}

std::optional<std::vector<int64_t>> InferContext::ints(size_t i) const {
  auto e = elements(i);
  if (!e)
    return std::nullopt;
  std::vector<int64_t> out;
  out.reserve(e->size());
  for (const SymDim &d : *e) {
    auto v = d.constantValue();
    if (!v)
      return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

std::optional<std::vector<double>> InferContext::doubles(size_t i) const {
  const Facts *f = input(i);
  if (!f || !f->isTensor())
    return std::nullopt;
  if (f->constant)
    if (auto d = tensorDoubles(*f->constant))
      return d;
  if (auto v = ints(i))
    return std::vector<double>(v->begin(), v->end());
  return std::nullopt;
}

TensorPtr InferContext::constant(size_t i) const {
  const Facts *f = input(i);
  return f ? f->constant : nullptr;
}

void InferContext::setTensor(size_t i, DataType elem, std::optional<SymShape> shape) {
  setFacts(i, Facts::tensor(elem, std::move(shape)));
}

void InferContext::setFacts(size_t i, Facts f) {
  if (i < results_.size())
    results_[i] = std::move(f);
}

void InferContext::setElements(size_t i, std::vector<SymDim> elements) {
  if (i >= results_.size() || !results_[i] || !results_[i]->shape || elements.size() > kMaxElements)
    return;
  DataType dt = results_[i]->elem();
  if (dt == DataType::Undefined)
    return; // what the tensor holds depends on its type
  auto n = staticSize(*results_[i]->shape);
  if (!n || static_cast<size_t>(*n) != elements.size())
    return;
  for (SymDim &e : elements)
    e = representElement(e, dt);
  results_[i]->elements = std::move(elements);
}

void InferContext::propagate(size_t i, size_t j) {
  if (const Facts *f = input(j)) {
    Facts copy;
    copy.type = f->type;
    copy.shape = f->shape;
    setFacts(i, std::move(copy));
  }
}

bool InferContext::fail(std::string reason) {
  if (!failed_) {
    failed_ = true;
    error_ = std::move(reason);
  }
  return false;
}

SymDim InferContext::freshDim() { return SymDim::anonymous(++*anonCounter_); }

std::optional<std::vector<std::optional<Facts>>>
InferContext::inferSubgraph(const Graph &g, const std::vector<std::optional<Facts>> &inputs,
                            bool quiet, bool *fails) const {
  if (fails)
    *fails = false;
  if (!subgraph_)
    return std::nullopt;
  return subgraph_(g, inputs, quiet, fails);
}

std::optional<int64_t> InferContext::normalizeAxis(int64_t axis, int64_t rank, const char *what) {
  if (axis < -rank || axis >= rank) {
    fail(std::string(what) + " " + std::to_string(axis) + " is out of range for rank " +
         std::to_string(rank));
    return std::nullopt;
  }
  return axis < 0 ? axis + rank : axis;
}

SymDim broadcastDim(const SymDim &a, const SymDim &b, bool &ok) {
  auto ca = a.constantValue(), cb = b.constantValue();
  if (ca && *ca == 1)
    return b;
  if (cb && *cb == 1)
    return a;
  if (provablyEqual(a, b))
    return a;
  // min(b, k) with k >= 1 is b or k; it is 1 when b is: wherever the two
  // broadcast, the result is b (slicing a longer constant table to a
  // sequence length, then broadcasting against that length).
  auto minOf = [](const SymDim &m, const SymDim &x) {
    auto ops = minimumOperands(m);
    if (!ops)
      return false;
    std::string other = ops->first == x.str() ? ops->second : ops->second == x.str() ? ops->first : "";
    char *end = nullptr;
    long long k = other.empty() ? 0 : std::strtoll(other.c_str(), &end, 10);
    return end && *end == '\0' && k >= 1;
  };
  if (minOf(a, b))
    return b;
  if (minOf(b, a))
    return a;
  if (ca && cb) {
    ok = false;
    return SymDim();
  }
  if (ca)
    return a; // b must be 1 or equal to a: either way the result is a.
  if (cb)
    return b;
  return SymDim();
}

std::optional<SymShape> InferContext::broadcast(const std::vector<const SymShape *> &shapes) {
  size_t rank = 0;
  for (const SymShape *s : shapes) {
    if (!s)
      return std::nullopt;
    rank = std::max(rank, s->size());
  }
  SymShape out(rank, SymDim::constant(1));
  for (const SymShape *s : shapes) {
    size_t offset = rank - s->size();
    for (size_t i = 0; i < s->size(); ++i) {
      bool ok = true;
      out[offset + i] = broadcastDim(out[offset + i], (*s)[i], ok);
      if (!ok) {
        std::string msg = "shapes cannot be broadcast:";
        for (const SymShape *t : shapes)
          msg += " " + str(*t);
        fail(msg);
        return std::nullopt;
      }
    }
  }
  return out;
}

/// Given the result's static shape and the operands' contents, computes the
/// result's contents with numpy broadcasting. Nothing when some operand's
/// contents or shape are not known.
void broadcastElements(InferContext &ctx, size_t result, const std::vector<size_t> &operands,
                       const ElementFn &fn) {
  const auto &res = ctx.results();
  if (result >= res.size() || !res[result] || !res[result]->shape)
    return;
  const SymShape &outShape = *res[result]->shape;
  auto outCount = staticSize(outShape);
  if (!outCount || static_cast<size_t>(*outCount) > kMaxElements)
    return;
  std::vector<std::vector<SymDim>> data;
  std::vector<std::vector<int64_t>> dims;
  for (size_t i : operands) {
    auto e = ctx.elements(i);
    const SymShape *s = ctx.shape(i);
    if (!e || !s || !isStatic(*s) || s->size() > outShape.size())
      return;
    std::vector<int64_t> d;
    for (const SymDim &x : *s)
      d.push_back(*x.constantValue());
    data.push_back(std::move(*e));
    dims.push_back(std::move(d));
  }
  size_t rank = outShape.size();
  std::vector<int64_t> out(rank);
  for (size_t r = 0; r < rank; ++r)
    out[r] = *outShape[r].constantValue();
  std::vector<SymDim> values(static_cast<size_t>(*outCount));
  std::vector<SymDim> args(operands.size());
  std::vector<int64_t> index(rank, 0);
  for (int64_t flat = 0; flat < *outCount; ++flat) {
    int64_t rem = flat;
    for (size_t r = rank; r-- > 0;) {
      index[r] = out[r] ? rem % out[r] : 0;
      rem = out[r] ? rem / out[r] : 0;
    }
    for (size_t k = 0; k < operands.size(); ++k) {
      const std::vector<int64_t> &d = dims[k];
      size_t offset = rank - d.size();
      int64_t pos = 0;
      for (size_t r = 0; r < d.size(); ++r)
        pos = pos * d[r] + (d[r] == 1 ? 0 : index[offset + r]);
      if (pos < 0 || static_cast<size_t>(pos) >= data[k].size())
        return;
      args[k] = data[k][static_cast<size_t>(pos)];
    }
    values[static_cast<size_t>(flat)] = fn(args);
  }
  ctx.setElements(result, std::move(values));
}

//===----------------------------------------------------------------------===//
// Merging facts from two paths
//===----------------------------------------------------------------------===//

std::optional<Type> mergeTypes(const Type &a, const Type &b) {
  if (a.kind() != b.kind())
    return std::nullopt;
  switch (a.kind()) {
  case Type::Kind::Tensor:
  case Type::Kind::SparseTensor: {
    if (a.elemType() != b.elemType())
      return std::nullopt;
    std::optional<Shape> shape;
    if (a.shape() && b.shape() && a.shape()->size() == b.shape()->size()) {
      shape = Shape();
      for (size_t i = 0; i < a.shape()->size(); ++i) {
        const Dim &x = (*a.shape())[i], &y = (*b.shape())[i];
        bool same = x.kind() == y.kind() && !x.isUnknown() &&
                    (x.isValue() ? x.getValue() == y.getValue() : x.getSymbol() == y.getSymbol());
        shape->push_back(same ? x : Dim::unknown());
      }
    }
    Type t = a.kind() == Type::Kind::Tensor ? Type::tensor(a.elemType(), std::move(shape))
                                            : Type::sparseTensor(a.elemType(), std::move(shape));
    t.hasElemType = a.hasElemType;
    return t;
  }
  case Type::Kind::Sequence:
  case Type::Kind::Optional: {
    if (!a.inner() || !b.inner())
      return std::nullopt;
    auto inner = mergeTypes(*a.inner(), *b.inner());
    if (!inner)
      return std::nullopt;
    return a.kind() == Type::Kind::Sequence ? Type::sequence(*inner) : Type::optional(*inner);
  }
  default:
    if (a == b)
      return a;
    return std::nullopt;
  }
}

std::optional<Facts> mergeFacts(const std::optional<Facts> &a, const std::optional<Facts> &b) {
  if (!a || !b || !a->type || !b->type)
    return std::nullopt;
  if (a->isTensor() != b->isTensor())
    return std::nullopt;
  if (!a->isTensor()) {
    auto t = mergeTypes(*a->type, *b->type);
    if (!t)
      return std::nullopt;
    Facts f;
    f.type = std::move(t);
    return f;
  }
  if (a->elem() != b->elem())
    return std::nullopt;
  Facts f = Facts::tensor(a->elem(), std::nullopt);
  if (a->shape && b->shape && a->shape->size() == b->shape->size()) {
    f.shape = SymShape();
    for (size_t i = 0; i < a->shape->size(); ++i)
      f.shape->push_back(provablyEqual((*a->shape)[i], (*b->shape)[i]) ? (*a->shape)[i] : SymDim());
  }
  if (a->elements && b->elements && *a->elements == *b->elements && f.shape && isStatic(*f.shape))
    f.elements = a->elements;
  return f;
}

std::optional<DataType> dataTypeAttr(const Node &n, std::string_view name) {
  const Attribute *a = n.attr(name);
  if (!a || a->kind != AttrKind::Int)
    return std::nullopt;
  if (a->i <= 0 || a->i > static_cast<int64_t>(DataType::Float8E8M0))
    return std::nullopt;
  return static_cast<DataType>(a->i);
}

//===----------------------------------------------------------------------===//
// The rule table
//===----------------------------------------------------------------------===//

namespace {

const RuleTable &defaultTable() {
  static const RuleTable table = [] {
    RuleTable t;
    addElementwiseRules(t);
    addTensorRules(t);
    addReductionRules(t);
    addNNRules(t);
    addSequenceRules(t);
    return t;
  }();
  return table;
}

} // namespace

InferFn findRule(std::string_view opType) {
  const RuleTable &t = defaultTable();
  auto it = t.find(opType);
  return it == t.end() ? nullptr : it->second;
}

InferFn findDomainRule(std::string_view domain, std::string_view opType) {
  // Training ops (ai.onnx.preview.training) are registered under a prefixed
  // name in the same table so their rules can sit with their family.
  if (domain == "ai.onnx.preview.training" || domain == "ai.onnx.ml") {
    std::string key = std::string(domain) + ":" + std::string(opType);
    const RuleTable &t = defaultTable();
    auto it = t.find(std::string_view(key));
    return it == t.end() ? nullptr : it->second;
  }
  return nullptr;
}

} // namespace onnxslim::shape
