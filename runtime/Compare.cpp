//===- runtime/Compare.cpp - Comparing run outputs ------------------------===//
//
// Element-wise comparison of tensors, sequences and optionals with the
// tolerance rule of Compare.h, its table, and the precision of outputs.
//
//===----------------------------------------------------------------------===//
#include "runtime/Compare.h"

#include "ir/IR.h"
#include "runtime/kernels/TensorHelpers.h"

#include <cmath>
#include <cstring>
#include <sstream>
#include <unordered_map>

namespace onnxslim::rt {

namespace {

std::string dimsText(const std::vector<int64_t> &dims) { return tops::dimsToString(dims); }

Comparison fail(std::string msg) {
  Comparison c;
  c.ok = false;
  c.message = std::move(msg);
  return c;
}

void noteMismatch(Comparison &c, int64_t i, const std::string &what) {
  if (c.mismatches++ == 0) {
    c.firstMismatch = i;
    c.message = what;
  }
  c.ok = false;
}

/// Element i of a floating tensor of element type T, as a double (a float8
/// kind is read through its bits).
template <typename T> double elementAt(const Tensor &t, int64_t i) {
  if constexpr (std::is_same_v<T, uint8_t>)
    return tops::float8ToDouble(t.dtype(), t.rawData()[i]);
  else
    return tops::toDouble(tops::load<T>(t.rawData(), i));
}

template <typename T> Comparison compareFloats(const Tensor &a, const Tensor &b, const Tolerance &tol) {
  Comparison c;
  int64_t n = a.numElements();
  double atol = tol.atol;
  if (tol.ofScale > 0) {
    double scale = 0;
    for (int64_t i = 0; i < n; ++i)
      if (double y = elementAt<T>(b, i); std::isfinite(y))
        scale = std::max(scale, std::fabs(y));
    atol += tol.ofScale * scale;
  }
  double rtol = tol.rtol;
  for (int64_t i = 0; i < n; ++i) {
    double x = elementAt<T>(a, i);
    double y = elementAt<T>(b, i);
    if (std::isnan(x) || std::isnan(y)) {
      if (std::isnan(x) != std::isnan(y)) {
        std::ostringstream os;
        os << "element " << i << ": got " << x << ", expected " << y;
        noteMismatch(c, i, os.str());
      }
      continue;
    }
    if (std::isinf(x) || std::isinf(y)) {
      if (x != y) {
        std::ostringstream os;
        os << "element " << i << ": got " << x << ", expected " << y;
        noteMismatch(c, i, os.str());
      }
      continue;
    }
    double d = std::fabs(x - y);
    c.maxAbsDiff = std::max(c.maxAbsDiff, d);
    if (y != 0)
      c.maxRelDiff = std::max(c.maxRelDiff, d / std::fabs(y));
    if (d > atol + rtol * std::fabs(y)) {
      std::ostringstream os;
      os.precision(9);
      os << "element " << i << ": got " << x << ", expected " << y << " (|diff| " << d << ")";
      noteMismatch(c, i, os.str());
    }
  }
  return c;
}

template <typename T> Comparison compareExact(const Tensor &a, const Tensor &b) {
  Comparison c;
  int64_t n = a.numElements();
  for (int64_t i = 0; i < n; ++i) {
    T x = tops::load<T>(a.rawData(), i), y = tops::load<T>(b.rawData(), i);
    double d = std::fabs(static_cast<double>(x) - static_cast<double>(y));
    c.maxAbsDiff = std::max(c.maxAbsDiff, d);
    if (y != T(0))
      c.maxRelDiff = std::max(c.maxRelDiff, d / std::fabs(static_cast<double>(y)));
    if (x != y) {
      std::ostringstream os;
      os << "element " << i << ": got " << +x << ", expected " << +y;
      noteMismatch(c, i, os.str());
    }
  }
  return c;
}

/// Less precise floating types rank lower; non-floating types rank highest.
int precisionRank(DataType t) {
  switch (t) {
  case DataType::Float8E5M2:
  case DataType::Float8E5M2FNUZ: return 0;
  case DataType::Float8E4M3FN:
  case DataType::Float8E4M3FNUZ: return 1;
  case DataType::BFloat16: return 2;
  case DataType::Float16: return 3;
  case DataType::Float: return 4;
  case DataType::Double: return 5;
  default: return 100;
  }
}

/// Forward over a graph in program order: each value gets the least precise
/// floating type among it and what it is computed from (outer values
/// through `precision`, which holds them already).
class PrecisionWalk {
public:
  DataType of(const Value *v) const {
    auto it = precision_.find(v);
    return it == precision_.end() ? DataType::Undefined : it->second;
  }

  /// Walks `g`, Result: the least precise type anywhere in it.
  DataType walk(const Graph &g) {
    DataType all = DataType::Undefined;
    for (const Value *v : g.inputs())
      all = leastPrecise(all, set(v, declared(v)));
    for (const Value *v : g.initializers())
      all = leastPrecise(all, set(v, declared(v)));
    for (const Node *n : g.nodes()) {
      DataType p = DataType::Undefined;
      for (const Value *v : n->operands())
        if (v)
          p = leastPrecise(p, of(v));
      if ((n->is("Cast") || n->is("Constant") || n->is("CastLike")) && n->isDefaultDomain()) {
        if (const Attribute *to = n->attr("to"); to && to->kind == AttrKind::Int)
          p = leastPrecise(p, static_cast<DataType>(to->i));
        if (const Attribute *value = n->attr("value"); value && value->t)
          p = leastPrecise(p, value->t->dtype());
      }
      for (const Attribute &a : n->attributes())
        for (const Graph *sub : a.subgraphs())
          p = leastPrecise(p, walk(*sub));
      for (size_t i = 0; i < n->numResults(); ++i)
        if (const Value *r = n->result(i))
          p = leastPrecise(p, declared(r));
      for (size_t i = 0; i < n->numResults(); ++i)
        if (const Value *r = n->result(i))
          set(r, p);
      all = leastPrecise(all, p);
    }
    return all;
  }

private:
  static DataType declared(const Value *v) {
    if (v->initializer())
      return v->initializer()->dtype();
    return v->type() && v->type()->isTensor() && v->type()->hasElemType ? v->type()->elemType() : DataType::Undefined;
  }
  DataType set(const Value *v, DataType t) { return precision_[v] = leastPrecise(of(v), t); }

  std::unordered_map<const Value *, DataType> precision_;
};

} // namespace

DataType leastPrecise(DataType a, DataType b) {
  if (precisionRank(b) >= 100)
    return a;
  if (precisionRank(a) >= 100)
    return b;
  return precisionRank(b) < precisionRank(a) ? b : a;
}

Tolerance toleranceFor(DataType precision) {
  switch (precision) {
  case DataType::Double: return {1e-8, 1e-10, 0};
  case DataType::Float16: return {1e-2, 1e-3, 1e-2};
  case DataType::BFloat16: return {6e-2, 8e-3, 6e-2};
  case DataType::Float8E4M3FN:
  case DataType::Float8E4M3FNUZ: return {0.25, 0.125, 0.25};
  case DataType::Float8E5M2:
  case DataType::Float8E5M2FNUZ: return {0.5, 0.25, 0.5};
  default: return {1e-4, 1e-5, 0};
  }
}

std::string describe(const Tolerance &t) {
  std::ostringstream os;
  os << "rtol " << t.rtol << ", atol " << t.atol;
  if (t.ofScale > 0)
    os << " + " << t.ofScale << " of the output's scale";
  return os.str();
}

std::vector<DataType> outputPrecisions(const Graph &graph) {
  PrecisionWalk walk;
  walk.walk(graph);
  std::vector<DataType> out;
  for (const Value *v : graph.outputs())
    out.push_back(walk.of(v));
  return out;
}

Comparison compareTensors(const Tensor &actual, const Tensor &expected, const Tolerance &tol) {
  if (actual.dtype() != expected.dtype())
    return fail("element type " + dataTypeName(actual.dtype()) + ", expected " +
                dataTypeName(expected.dtype()));
  if (actual.dims() != expected.dims())
    return fail("shape " + dimsText(actual.dims()) + ", expected " + dimsText(expected.dims()));
  if (!actual.isConsistent() || !expected.isConsistent())
    return fail("a tensor's data size does not match its shape");
  switch (actual.dtype()) {
  case DataType::Float: return compareFloats<float>(actual, expected, tol);
  case DataType::Double: return compareFloats<double>(actual, expected, tol);
  case DataType::Float16: return compareFloats<tops::F16>(actual, expected, tol);
  case DataType::BFloat16: return compareFloats<tops::BF16>(actual, expected, tol);
  case DataType::Float8E4M3FN:
  case DataType::Float8E4M3FNUZ:
  case DataType::Float8E5M2:
  case DataType::Float8E5M2FNUZ: return compareFloats<uint8_t>(actual, expected, tol);
  case DataType::Int8: return compareExact<int8_t>(actual, expected);
  case DataType::Int16: return compareExact<int16_t>(actual, expected);
  case DataType::Int32: return compareExact<int32_t>(actual, expected);
  case DataType::Int64: return compareExact<int64_t>(actual, expected);
  case DataType::UInt8: return compareExact<uint8_t>(actual, expected);
  case DataType::UInt16: return compareExact<uint16_t>(actual, expected);
  case DataType::UInt32: return compareExact<uint32_t>(actual, expected);
  case DataType::UInt64: return compareExact<uint64_t>(actual, expected);
  case DataType::Bool: return compareExact<bool>(actual, expected);
  case DataType::String: {
    Comparison c;
    for (size_t i = 0; i < actual.strings().size(); ++i)
      if (actual.strings()[i] != expected.strings()[i])
        noteMismatch(c, static_cast<int64_t>(i),
                     "element " + std::to_string(i) + ": got \"" + actual.strings()[i] +
                         "\", expected \"" + expected.strings()[i] + "\"");
    return c;
  }
  default: {
    // Other types (4-bit ints, float4, float8e8m0, complex): compare bytes.
    if (actual.byteSize() != expected.byteSize() ||
        std::memcmp(actual.rawData(), expected.rawData(), actual.byteSize()) != 0)
      return fail("bytes differ (element type " + dataTypeName(actual.dtype()) + ")");
    return Comparison();
  }
  }
}

Comparison compareValues(const RtValue &actual, const RtValue &expected, const Tolerance &tol) {
  using Kind = RtValue::Kind;
  // An optional holding a value compares like the value itself.
  if (actual.kind == Kind::Optional && expected.kind != Kind::Optional) {
    if (!actual.optional)
      return fail("got an empty optional");
    return compareValues(*actual.optional, expected, tol);
  }
  if (expected.kind == Kind::Optional && actual.kind != Kind::Optional) {
    if (!expected.optional)
      return fail("expected an empty optional");
    return compareValues(actual, *expected.optional, tol);
  }
  if (actual.kind != expected.kind) {
    auto name = [](Kind k) {
      switch (k) {
      case Kind::None: return "nothing";
      case Kind::Tensor: return "a tensor";
      case Kind::Sequence: return "a sequence";
      default: return "an optional";
      }
    };
    return fail(std::string("got ") + name(actual.kind) + ", expected " + name(expected.kind));
  }
  switch (actual.kind) {
  case Kind::None:
    return Comparison();
  case Kind::Tensor:
    if (!actual.tensor || !expected.tensor)
      return fail("missing tensor");
    return compareTensors(*actual.tensor, *expected.tensor, tol);
  case Kind::Sequence: {
    if (actual.sequence.size() != expected.sequence.size())
      return fail("sequence of " + std::to_string(actual.sequence.size()) + " tensors, expected " +
                  std::to_string(expected.sequence.size()));
    Comparison total;
    for (size_t i = 0; i < actual.sequence.size(); ++i) {
      Comparison c = compareTensors(*actual.sequence[i], *expected.sequence[i], tol);
      total.maxAbsDiff = std::max(total.maxAbsDiff, c.maxAbsDiff);
      total.maxRelDiff = std::max(total.maxRelDiff, c.maxRelDiff);
      total.mismatches += c.mismatches;
      if (!c.ok && total.ok) {
        total.ok = false;
        total.message = "sequence element " + std::to_string(i) + ": " + c.message;
      }
    }
    return total;
  }
  case Kind::Optional:
    if (!actual.optional || !expected.optional) {
      if (!actual.optional && !expected.optional)
        return Comparison();
      return fail(actual.optional ? "got a value, expected an empty optional"
                                  : "got an empty optional, expected a value");
    }
    return compareValues(*actual.optional, *expected.optional, tol);
  }
  return Comparison();
}

} // namespace onnxslim::rt
