//===- runtime/kernels/Cast.cpp - Cast and CastLike ------------------------===//
//
// Element type conversion between every pair of the spec's types:
//  - numbers and bool: float16/bfloat16 round to nearest even (double goes
//    to them with a single rounding); float -> integer truncates toward zero
//    and out-of-range values (NaN, infinities) behave as x86-64 ONNX Runtime
//    (no undefined behaviour in C++) and are noted as undefined by the spec,
//    so that they are never folded; anything -> bool is value != 0;
//  - float8 (E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ) through float, with the
//    `saturate` attribute of Cast-19; int4/uint4 (Cast-21, packed two per
//    byte, low nibble first): floats round to nearest, then every source
//    keeps its low four bits (as ONNX Runtime);
//  - strings: numbers print as the shortest representation that reads back
//    exactly (NaN, INF, -INF for the special values), integers in decimal,
//    bool as 1/0; strings are read as ONNX Runtime reads them (std::stoll,
//    std::stoull, std::stod: the longest number prefix, so "1e3" -> int64
//    is 1), and a string with no number prefix is an error. The spec
//    defines only plain integers (that fit) for integer targets and decimal,
//    scientific and INF/+INF/-INF/NaN literals for floats: anything else is
//    noted as undefined (never folded).
// Cast-1 names the target type by a string ("FLOAT"); later versions by number.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Dispatch.h"
#include "runtime/kernels/TensorHelpers.h"

#include <charconv>
#include <cctype>
#include <cerrno>
#include <cstdlib>

namespace onnxslim::rt {
namespace {

//===----------------------------------------------------------------------===//
// float8
//===----------------------------------------------------------------------===//

struct F8Format {
  int mantBits;
  int bias;
  bool fnuz;      ///< no negative zero, NaN is 0x80, no infinities
  bool hasInf;    ///< E5M2: exponent all ones is inf/NaN
  float maxValue; ///< largest finite magnitude
  uint8_t maxCode;
};

const F8Format *f8Format(DataType t) {
  static const F8Format e4m3fn{3, 7, false, false, 448.0f, 0x7e};
  static const F8Format e4m3fnuz{3, 8, true, false, 240.0f, 0x7f};
  static const F8Format e5m2{2, 15, false, true, 57344.0f, 0x7b};
  static const F8Format e5m2fnuz{2, 16, true, false, 57344.0f, 0x7f};
  switch (t) {
  case DataType::Float8E4M3FN:
    return &e4m3fn;
  case DataType::Float8E4M3FNUZ:
    return &e4m3fnuz;
  case DataType::Float8E5M2:
    return &e5m2;
  case DataType::Float8E5M2FNUZ:
    return &e5m2fnuz;
  default:
    return nullptr;
  }
}

float decodeF8(uint8_t b, const F8Format &F) {
  int expBits = 7 - F.mantBits;
  uint32_t expMask = (1u << expBits) - 1;
  bool neg = b & 0x80;
  uint32_t e = (b >> F.mantBits) & expMask;
  uint32_t m = b & ((1u << F.mantBits) - 1);
  if (F.fnuz) {
    if (b == 0x80)
      return std::numeric_limits<float>::quiet_NaN();
  } else if (F.hasInf) {
    if (e == expMask)
      return m ? std::numeric_limits<float>::quiet_NaN()
               : (neg ? -std::numeric_limits<float>::infinity()
                      : std::numeric_limits<float>::infinity());
  } else if ((b & 0x7f) == 0x7f) {
    return std::numeric_limits<float>::quiet_NaN();
  }
  float v = e == 0 ? std::ldexp(static_cast<float>(m), 1 - F.bias - F.mantBits)
                   : std::ldexp(static_cast<float>(m + (1u << F.mantBits)),
                                static_cast<int>(e) - F.bias - F.mantBits);
  return neg ? -v : v;
}

uint8_t encodeF8(float f, const F8Format &F, bool saturate) {
  uint8_t sign = std::signbit(f) ? 0x80 : 0;
  uint8_t nan = F.fnuz ? 0x80 : static_cast<uint8_t>(0x7f | sign);
  if (std::isnan(f))
    return nan;
  auto overflow = [&]() -> uint8_t {
    if (saturate)
      return static_cast<uint8_t>(sign | F.maxCode);
    return F.hasInf ? static_cast<uint8_t>(sign | 0x7c) : nan;
  };
  float a = std::fabs(f);
  if (std::isinf(a))
    return overflow();
  int emin = 1 - F.bias;
  int e = 0;
  std::frexp(a, &e);
  int exp = std::max(e - 1, emin);
  float v = std::ldexp(std::nearbyint(std::ldexp(a, F.mantBits - exp)), exp - F.mantBits);
  if (v > F.maxValue)
    return overflow();
  if (v == 0)
    return F.fnuz ? 0 : sign;
  std::frexp(v, &e);
  exp = e - 1;
  uint32_t code;
  if (exp < emin) {
    code = static_cast<uint32_t>(std::ldexp(v, F.mantBits - emin));
  } else {
    uint32_t mant = static_cast<uint32_t>(std::ldexp(v, F.mantBits - exp)) - (1u << F.mantBits);
    code = (static_cast<uint32_t>(exp + F.bias) << F.mantBits) | mant;
  }
  return static_cast<uint8_t>(sign | code);
}

//===----------------------------------------------------------------------===//
// Strings
//===----------------------------------------------------------------------===//

template <typename S> std::string formatElem(const S &v) {
  char buf[64];
  if constexpr (isFloatLike<S>) {
    auto c = toCompute(v);
    if (std::isnan(c))
      return "NaN";
    if (std::isinf(c))
      return c > 0 ? "INF" : "-INF";
    auto res = std::to_chars(buf, buf + sizeof(buf), c);
    return std::string(buf, res.ptr);
  } else if constexpr (std::is_same_v<S, bool>) {
    return v ? "1" : "0";
  } else {
    auto res = std::to_chars(buf, buf + sizeof(buf), v);
    return std::string(buf, res.ptr);
  }
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char &c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

/// Whether `s` is a plain decimal integer: an optional sign, then digits.
bool isPlainInteger(std::string_view s) {
  size_t i = !s.empty() && (s[0] == '+' || s[0] == '-') ? 1 : 0;
  if (i == s.size())
    return false;
  for (; i < s.size(); ++i)
    if (s[i] < '0' || s[i] > '9')
      return false;
  return true;
}

/// Whether `s` is what the spec lets Cast read as a float: a plain decimal
/// ("3.14", "1000") or scientific ("1e-5", "1E8") number, or INF, +INF,
/// -INF, NaN in any case. Hex floats, "infinity", spaces and trailing text
/// are left undefined by the spec (ONNX Runtime reads a prefix).
bool isFloatLiteral(std::string_view s) {
  std::string l = lower(s);
  if (l == "inf" || l == "+inf" || l == "-inf" || l == "nan")
    return true;
  size_t i = 0, n = s.size();
  auto digits = [&] {
    size_t start = i;
    while (i < n && s[i] >= '0' && s[i] <= '9')
      ++i;
    return i - start;
  };
  if (i < n && (s[i] == '+' || s[i] == '-'))
    ++i;
  size_t mantissa = digits();
  if (i < n && s[i] == '.') {
    ++i;
    mantissa += digits();
  }
  if (mantissa == 0)
    return false;
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < n && (s[i] == '+' || s[i] == '-'))
      ++i;
    if (digits() == 0)
      return false;
  }
  return i == n;
}

/// Reads a string as ONNX Runtime's Cast does (std::stoll, std::stoull,
/// std::stod): leading white space, then the longest prefix that is a
/// number; nothing read, or a value out of the parsed type's range, fails.
/// The result is then converted to D as C++ does (integers wrap). Sets
/// `defined` to whether the spec defines the result: a plain integer that
/// D holds for integer types, a float literal (isFloatLiteral) for floats.
template <typename D> bool parseElem(const std::string &s, D &out, bool &defined) {
  const char *begin = s.c_str();
  char *end = nullptr;
  errno = 0;
  if constexpr (isFloatLike<D>) {
    double d = std::strtod(begin, &end);
    if (end == begin || errno == ERANGE)
      return false;
    if constexpr (std::is_same_v<D, double>)
      out = d;
    else if constexpr (std::is_same_v<D, float>)
      out = static_cast<float>(d);
    else
      out = D::fromFloat(static_cast<float>(d));
    defined = isFloatLiteral(s);
    return true;
  } else if constexpr (std::is_same_v<D, bool> || std::is_unsigned_v<D>) {
    unsigned long long v = std::strtoull(begin, &end, 10);
    if (end == begin || errno == ERANGE)
      return false;
    out = static_cast<D>(v);
    defined = isPlainInteger(s) && (s[0] != '-' || v == 0) &&
              (std::is_same_v<D, bool> || v <= std::numeric_limits<D>::max());
    return true;
  } else {
    long long v = std::strtoll(begin, &end, 10);
    if (end == begin || errno == ERANGE)
      return false;
    out = static_cast<D>(v);
    defined = isPlainInteger(s) && v >= std::numeric_limits<D>::lowest() &&
              v <= std::numeric_limits<D>::max();
    return true;
  }
}

//===----------------------------------------------------------------------===//
// Conversion
//===----------------------------------------------------------------------===//

bool isInt4(DataType t) { return t == DataType::Int4 || t == DataType::UInt4; }

bool castable(DataType t) {
  return t == DataType::String || f8Format(t) || isInt4(t) || typeIn<NumericBoolTypes>(t);
}

/// Unpacks a 4-bit tensor (two elements per byte, low nibble first).
std::vector<int8_t> unpackInt4(const Tensor &x) {
  bool isSigned = x.dtype() == DataType::Int4;
  int64_t n = x.numElements();
  std::vector<int8_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    uint8_t nib = (x.rawData()[i / 2] >> (4 * (i % 2))) & 0x0f;
    v[static_cast<size_t>(i)] =
        static_cast<int8_t>(isSigned && (nib & 0x8) ? static_cast<int>(nib) - 16 : nib);
  }
  return v;
}

/// One element to a 4-bit value: floats round to nearest (halves away from
/// zero), then the low four bits are kept, as ONNX Runtime does.
template <typename S> uint8_t toNibble(const S &v) {
  int64_t i;
  if constexpr (isFloatLike<S>)
    i = floatToInt<int64_t>(std::round(static_cast<double>(toCompute(v))));
  else
    i = static_cast<int64_t>(v);
  return static_cast<uint8_t>(static_cast<uint64_t>(i) & 0x0f);
}

/// Converts n elements of S to element type `to` into builder `b`. Sets
/// `undefined` (first case only) when a float is out of an integer target's
/// range, which the spec leaves undefined.
template <typename S>
Status castSpan(const S *src, int64_t n, DataType to, bool saturate, TensorBuilder &b,
                std::string &undefined) {
  if (to == DataType::String) {
    auto &out = b.strings();
    for (int64_t i = 0; i < n; ++i)
      out[static_cast<size_t>(i)] = formatElem(src[i]);
    return Status::success();
  }
  if (const F8Format *F = f8Format(to)) {
    uint8_t *o = b.data();
    for (int64_t i = 0; i < n; ++i)
      o[i] = encodeF8(convertElem<float>(src[i]), *F, saturate);
    return Status::success();
  }
  if (to == DataType::Int4 || to == DataType::UInt4) {
    uint8_t *o = b.data();
    std::memset(o, 0, b.byteSize());
    for (int64_t i = 0; i < n; ++i)
      o[i / 2] = static_cast<uint8_t>(o[i / 2] | (toNibble(src[i]) << (4 * (i % 2))));
    return Status::success();
  }
  return dispatchType<NumericBoolTypes>(to, [&](auto tag) -> Status {
    using D = typename decltype(tag)::type;
    D *o = b.dataAs<D>();
    for (int64_t i = 0; i < n; ++i)
      o[i] = convertElem<D>(src[i]);
    if constexpr (isFloatLike<S> && isIntLike<D>)
      for (int64_t i = 0; i < n && undefined.empty(); ++i)
        if (!floatToIntIsDefined<D>(static_cast<double>(toCompute(src[i]))))
          undefined = formatElem(src[i]) + " is out of the range of " + dataTypeName(to) +
                      " (element " + std::to_string(i) + ")";
    return Status::success();
  });
}

/// Strings -> element type `to`. Sets `undefined` (first case only) for a
/// string whose conversion the spec leaves undefined (see parseElem).
Status castFromStrings(const std::vector<std::string> &src, DataType to, bool saturate,
                       TensorBuilder &b, std::string &undefined) {
  if (to == DataType::String) {
    b.strings() = src;
    return Status::success();
  }
  auto parseAll = [&](auto tag, auto &&store) -> Status {
    using D = typename decltype(tag)::type;
    for (size_t i = 0; i < src.size(); ++i) {
      D v{};
      bool defined = true;
      if (!parseElem(src[i], v, defined))
        return Status::error("cannot parse '" + src[i] + "' as " + dataTypeName(to));
      if (!defined && undefined.empty())
        undefined = "the string '" + src[i] + "' is not " +
                    (isFloatLike<D> ? "a number literal" : "a plain integer in the range") + " of " +
                    dataTypeName(to) + " (element " + std::to_string(i) + ")";
      store(i, v);
    }
    return Status::success();
  };
  if (const F8Format *F = f8Format(to)) {
    uint8_t *o = b.data();
    return parseAll(TypeTag<float>{}, [&](size_t i, float v) { o[i] = encodeF8(v, *F, saturate); });
  }
  if (isInt4(to)) {
    uint8_t *o = b.data();
    std::memset(o, 0, b.byteSize());
    return parseAll(TypeTag<int64_t>{}, [&](size_t i, int64_t v) {
      o[i / 2] = static_cast<uint8_t>(o[i / 2] | (toNibble(v) << (4 * (i % 2))));
    });
  }
  return dispatchType<NumericBoolTypes>(to, [&](auto tag) -> Status {
    using D = typename decltype(tag)::type;
    D *o = b.dataAs<D>();
    return parseAll(tag, [&](size_t i, D v) { o[i] = v; });
  });
}


/// Casts x to `to`; the same type returns x itself. `undefined` receives
/// why the spec leaves the result undefined, if it does.
Status castTensor(const TensorPtr &x, DataType to, bool saturate, TensorPtr &out,
                  std::string &undefined) {
  DataType from = x->dtype();
  if (!castable(from))
    return Status::error("cannot cast from element type '" + dataTypeName(from) + "'");
  if (!castable(to))
    return Status::error("cannot cast to element type '" + dataTypeName(to) + "'");
  if (!x->isConsistent())
    return Status::error("tensor data size does not match its shape");
  if (from == to) {
    out = x;
    return Status::success();
  }
  std::optional<TensorBuilder> b;
  ONNXSLIM_RETURN_IF_ERROR(allocOutput(to, x->dims(), b, TensorBuilder::Fill::Uninitialized));
  int64_t n = x->numElements();
  if (from == DataType::String) {
    ONNXSLIM_RETURN_IF_ERROR(castFromStrings(x->strings(), to, saturate, *b, undefined));
  } else if (isInt4(from)) {
    std::vector<int8_t> unpacked = unpackInt4(*x);
    ONNXSLIM_RETURN_IF_ERROR(castSpan(unpacked.data(), n, to, saturate, *b, undefined));
  } else if (const F8Format *F = f8Format(from)) {
    std::vector<float> decoded(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
      decoded[static_cast<size_t>(i)] = decodeF8(x->rawData()[i], *F);
    ONNXSLIM_RETURN_IF_ERROR(castSpan(decoded.data(), n, to, saturate, *b, undefined));
  } else {
    ONNXSLIM_RETURN_IF_ERROR(dispatchType<NumericBoolTypes>(from, [&](auto tag) -> Status {
      using S = typename decltype(tag)::type;
      ElemView<S> v;
      ONNXSLIM_RETURN_IF_ERROR(viewElements(*x, v));
      return castSpan(v.data(), v.size(), to, saturate, *b, undefined);
    }));
  }
  out = b->finish();
  return Status::success();
}

/// The `to` attribute: a DataType number, or (Cast-1) a type name such as "FLOAT".
Status targetType(const KernelContext &ctx, DataType &to) {
  const Attribute *a = ctx.attr("to");
  if (!a)
    return ctx.error("missing attribute 'to'");
  if (a->kind == AttrKind::String) {
    std::string name = lower(a->s);
    if (auto t = parseDataTypeName(name)) {
      to = *t;
      return Status::success();
    }
    return ctx.error("unknown type name '" + a->s + "' in attribute 'to'");
  }
  to = static_cast<DataType>(a->i);
  return Status::success();
}

Status castKernel(KernelContext &ctx) {
  const Tensor *X;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, X));
  DataType to = DataType::Undefined;
  ONNXSLIM_RETURN_IF_ERROR(targetType(ctx, to));
  TensorPtr out;
  std::string undefined;
  ONNXSLIM_RETURN_IF_ERROR(
      castTensor(ctx.tensorPtr(0), to, ctx.attrInt("saturate", 1) != 0, out, undefined));
  if (!undefined.empty())
    ctx.noteUndefined(undefined);
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

Status castLikeKernel(KernelContext &ctx) {
  const Tensor *X, *Like;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, X));
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(1, Like));
  TensorPtr out;
  std::string undefined;
  ONNXSLIM_RETURN_IF_ERROR(
      castTensor(ctx.tensorPtr(0), Like->dtype(), ctx.attrInt("saturate", 1) != 0, out, undefined));
  if (!undefined.empty())
    ctx.noteUndefined(undefined);
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

} // namespace

double tops::float8ToDouble(DataType t, uint8_t bits) {
  const F8Format *f = f8Format(t);
  return f ? decodeF8(bits, *f) : std::numeric_limits<double>::quiet_NaN();
}

void registerCastKernels(OpRegistry &r) {
  r.add("Cast", 1, kLatestOpset, castKernel);
  r.add("CastLike", 15, kLatestOpset, castLikeKernel);
}

} // namespace onnxslim::rt
