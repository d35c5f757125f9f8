//===- runtime/Compare.cpp - Comparing run outputs ------------------------===//
//
// Element-wise comparison of tensors, sequences and optionals with the
// rtol/atol rule of Compare.h.
//
//===----------------------------------------------------------------------===//
#include "runtime/Compare.h"

#include "runtime/kernels/TensorHelpers.h"

#include <cmath>
#include <sstream>

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

template <typename T> Comparison compareFloats(const Tensor &a, const Tensor &b, double rtol, double atol) {
  Comparison c;
  int64_t n = a.numElements();
  for (int64_t i = 0; i < n; ++i) {
    double x = tops::toDouble(tops::load<T>(a.rawData(), i));
    double y = tops::toDouble(tops::load<T>(b.rawData(), i));
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

} // namespace

Comparison compareTensors(const Tensor &actual, const Tensor &expected, double rtol, double atol) {
  if (actual.dtype() != expected.dtype())
    return fail("element type " + dataTypeName(actual.dtype()) + ", expected " +
                dataTypeName(expected.dtype()));
  if (actual.dims() != expected.dims())
    return fail("shape " + dimsText(actual.dims()) + ", expected " + dimsText(expected.dims()));
  if (!actual.isConsistent() || !expected.isConsistent())
    return fail("a tensor's data size does not match its shape");
  switch (actual.dtype()) {
  case DataType::Float: return compareFloats<float>(actual, expected, rtol, atol);
  case DataType::Double: return compareFloats<double>(actual, expected, rtol, atol);
  case DataType::Float16: return compareFloats<tops::F16>(actual, expected, rtol, atol);
  case DataType::BFloat16: return compareFloats<tops::BF16>(actual, expected, rtol, atol);
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
    // Other types (8-bit floats, 4-bit ints, complex): compare bytes.
    if (actual.byteSize() != expected.byteSize() ||
        std::memcmp(actual.rawData(), expected.rawData(), actual.byteSize()) != 0)
      return fail("bytes differ (element type " + dataTypeName(actual.dtype()) + ")");
    return Comparison();
  }
  }
}

Comparison compareValues(const RtValue &actual, const RtValue &expected, double rtol, double atol) {
  using Kind = RtValue::Kind;
  // An optional holding a value compares like the value itself.
  if (actual.kind == Kind::Optional && expected.kind != Kind::Optional) {
    if (!actual.optional)
      return fail("got an empty optional");
    return compareValues(*actual.optional, expected, rtol, atol);
  }
  if (expected.kind == Kind::Optional && actual.kind != Kind::Optional) {
    if (!expected.optional)
      return fail("expected an empty optional");
    return compareValues(actual, *expected.optional, rtol, atol);
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
    return compareTensors(*actual.tensor, *expected.tensor, rtol, atol);
  case Kind::Sequence: {
    if (actual.sequence.size() != expected.sequence.size())
      return fail("sequence of " + std::to_string(actual.sequence.size()) + " tensors, expected " +
                  std::to_string(expected.sequence.size()));
    Comparison total;
    for (size_t i = 0; i < actual.sequence.size(); ++i) {
      Comparison c = compareTensors(*actual.sequence[i], *expected.sequence[i], rtol, atol);
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
    return compareValues(*actual.optional, *expected.optional, rtol, atol);
  }
  return Comparison();
}

} // namespace onnxslim::rt
