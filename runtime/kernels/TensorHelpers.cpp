//===- runtime/kernels/TensorHelpers.cpp - Shared layout-kernel helpers ---===//
//
// Implements the helpers declared in TensorHelpers.h: 16-bit float
// conversions, integer input reading, sparse densification, broadcasting and
// the strided element copy behind most layout kernels.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/TensorHelpers.h"

#include "runtime/Interpreter.h"
#include "runtime/Simd.h"

#include <algorithm>

namespace onnxslim::rt {
namespace tops {

float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t{h & 0x8000u} << 16;
  uint32_t exp = (h >> 10) & 0x1F;
  uint32_t mant = h & 0x3FF;
  if (exp == 0) {
    float f = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -f : f;
  }
  uint32_t x = exp == 31 ? (sign | 0x7F800000u | (mant << 13))
                         : (sign | ((exp + 112) << 23) | (mant << 13));
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

uint16_t floatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t absx = x & 0x7FFFFFFFu;
  if (absx >= 0x7F800000u) // inf or NaN
    return static_cast<uint16_t>(sign | 0x7C00u | (absx > 0x7F800000u ? 0x200u : 0u));
  if (absx >= 0x47800000u) // too large: infinity
    return static_cast<uint16_t>(sign | 0x7C00u);
  if (absx < 0x38800000u) { // half subnormal or zero
    float af;
    std::memcpy(&af, &absx, 4);
    auto m = static_cast<uint32_t>(std::nearbyint(af * 16777216.0f));
    return static_cast<uint16_t>(sign | m);
  }
  uint32_t mant = absx & 0x7FFFFFu;
  uint32_t exp = (absx >> 23) - 127 + 15;
  uint32_t h = (exp << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
    ++h;
  return static_cast<uint16_t>(sign | h);
}

Status normalizeAxis(int64_t axis, int64_t rank, int64_t &out, const char *what) {
  if (axis < -rank || axis >= rank)
    return Status::error(std::string(what) + " " + std::to_string(axis) +
                         " is out of range for rank " + std::to_string(rank));
  out = axis < 0 ? axis + rank : axis;
  return Status::success();
}

Status readInts(const Tensor &t, std::vector<int64_t> &out, const char *what) {
  int64_t n = t.numElements();
  out.resize(static_cast<size_t>(n));
  bool ok = false;
  auto read = [&]<typename T>() {
    if (t.byteSize() < static_cast<size_t>(n) * sizeof(T))
      return;
    for (int64_t i = 0; i < n; ++i)
      out[i] = static_cast<int64_t>(t.at<T>(i));
    ok = true;
  };
  switch (t.dtype()) {
  case DataType::Int64: read.operator()<int64_t>(); break;
  case DataType::Int32: read.operator()<int32_t>(); break;
  case DataType::Int16: read.operator()<int16_t>(); break;
  case DataType::Int8: read.operator()<int8_t>(); break;
  case DataType::UInt64: read.operator()<uint64_t>(); break;
  case DataType::UInt32: read.operator()<uint32_t>(); break;
  case DataType::UInt16: read.operator()<uint16_t>(); break;
  case DataType::UInt8: read.operator()<uint8_t>(); break;
  default:
    return Status::error(std::string(what) + " must be an integer tensor, not " +
                         dataTypeName(t.dtype()));
  }
  if (!ok)
    return Status::error(std::string(what) + " has fewer bytes than its shape needs");
  return Status::success();
}

Status readScalar(const Tensor &t, double &out, const char *what) {
  if (t.numElements() != 1)
    return Status::error(std::string(what) + " must have exactly one element, not " +
                         std::to_string(t.numElements()));
  if (!t.isConsistent())
    return Status::error(std::string(what) + " has fewer bytes than its shape needs");
  bool handled = visitNumeric(t.dtype(), [&]<typename T>() { out = toDouble(t.at<T>(0)); });
  if (!handled)
    return Status::error(std::string(what) + " has unsupported element type " +
                         dataTypeName(t.dtype()));
  return Status::success();
}

std::vector<int64_t> stridesOf(const std::vector<int64_t> &dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;)
    s[i - 1] = s[i] * std::max<int64_t>(dims[i], 1);
  return s;
}

TensorPtr makeInt64(std::vector<int64_t> dims, const std::vector<int64_t> &values) {
  TensorBuilder b(DataType::Int64, std::move(dims));
  if (!values.empty()) // memcpy from an empty vector's null data() is undefined
    std::memcpy(b.data(), values.data(), values.size() * sizeof(int64_t));
  return b.finish();
}

Status checkOutputSize(const KernelContext &ctx, const std::vector<int64_t> &dims, DataType dt) {
  size_t limit = ctx.interpreter() ? ctx.interpreter()->options().memoryLimitBytes : size_t{1} << 36;
  int64_t count = 0;
  return checkedNumElements(dims, dt, count, limit);
}

Status checkMovable(DataType dt) {
  if (dt == DataType::String || elementSize(dt) != 0)
    return Status::success();
  return Status::error("unsupported element type " + dataTypeName(dt));
}

namespace {
template <typename T>
void copyRun(const uint8_t *src, int64_t sstride, uint8_t *dst, int64_t dstride, int64_t n) {
  const T *s = reinterpret_cast<const T *>(src);
  T *d = reinterpret_cast<T *>(dst);
  for (int64_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, s + i * sstride, sizeof(T));
    std::memcpy(d + i * dstride, &v, sizeof(T));
  }
}

/// Given src element (r, c) at src[r + c * colSrc] for r < rows, c < cols,
/// Execute: copies it to dst[r * rowDst + c], in tiles of up to kTile rows
/// whose source runs stay in L1 while every row of the tile reads them.
template <typename T>
void transposeTiles(const uint8_t *src, int64_t rows, int64_t cols, int64_t colSrc, uint8_t *dst,
                    int64_t rowDst) {
  const T *s = reinterpret_cast<const T *>(src);
  T *d = reinterpret_cast<T *>(dst);
  constexpr int64_t kTile = 32;
  // Few rows: wider tiles (a tile reads its columns' runs of `rows`).
  const int64_t colTile = kTile * kTile / std::min(rows, kTile);
  for (int64_t r0 = 0; r0 < rows; r0 += kTile)
    for (int64_t c0 = 0; c0 < cols; c0 += colTile) {
      const int64_t r1 = std::min(rows, r0 + kTile), c1 = std::min(cols, c0 + colTile);
      for (int64_t r = r0; r < r1; ++r)
        copyRun<T>(reinterpret_cast<const uint8_t *>(s + c0 * colSrc + r), colSrc,
                   reinterpret_cast<uint8_t *>(d + r * rowDst + c0), 1, c1 - c0);
    }
}

} // namespace

void stridedCopy(const Tensor &src, int64_t srcOffset, const std::vector<int64_t> &dims,
                 const std::vector<int64_t> &srcStrides, TensorBuilder &dst, int64_t dstOffset,
                 const std::vector<int64_t> *dstStrides) {
  for (int64_t d : dims)
    if (d <= 0)
      return;
  std::vector<int64_t> dense;
  if (!dstStrides) {
    dense = stridesOf(dims);
    dstStrides = &dense;
  }
  // Coalesce: drop unit dims and merge dims that are contiguous in both.
  std::vector<int64_t> cd, css, cds;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 1)
      continue;
    if (!cd.empty() && css.back() == srcStrides[i] * dims[i] &&
        cds.back() == (*dstStrides)[i] * dims[i]) {
      cd.back() *= dims[i];
      css.back() = srcStrides[i];
      cds.back() = (*dstStrides)[i];
      continue;
    }
    cd.push_back(dims[i]);
    css.push_back(srcStrides[i]);
    cds.push_back((*dstStrides)[i]);
  }
  if (cd.empty()) {
    cd.push_back(1);
    css.push_back(1);
    cds.push_back(1);
  }
  const bool isString = src.dtype() == DataType::String;
  const size_t es = elementSize(src.dtype());
  const size_t rank = cd.size();
  const int64_t inner = cd.back(), sIn = css.back(), dIn = cds.back();
  std::vector<int64_t> counter(rank, 0);
  int64_t sPos = srcOffset, dPos = dstOffset;
  const uint8_t *sBase = src.rawData();
  uint8_t *dBase = dst.data();
  // Steps the counters of dims [0, outer) to the next position (odometer
  // order), moving sPos and dPos; Result: false after the last.
  auto advance = [&](size_t outer) {
    for (size_t k = outer; k-- > 0;) {
      ++counter[k];
      sPos += css[k];
      dPos += cds[k];
      if (counter[k] < cd[k])
        return true;
      sPos -= css[k] * cd[k];
      dPos -= cds[k] * cd[k];
      counter[k] = 0;
    }
    return false;
  };
  // A transpose of the last two dims, the inner one strided in src and the
  // one before it dense there (NCHW -> NHWC, a matrix transpose), of more
  // than kFewTransposeRows rows: tiles (transposeTiles), so that a source
  // line is read from memory once, not once per output row (mlsd_tiny's
  // 4x160x160 to NHWC took 0.6x to 0.7x as long). With fewer rows (NHWC ->
  // NCHW of 4 channels) the passes below, one streaming pass per row, were
  // faster: its 320x320x4 input took 1.3x as long in tiles. Elements of 4
  // bytes go through 16x16 register transposes on AVX-512 (ViT's keys,
  // 12 x 197 x 64 turned for the scores: 90 -> 23 us). Outer dims as below.
  constexpr int64_t kFewTransposeRows = 8;
  if (!isString && rank >= 2 && dIn == 1 && sIn > 1 && css[rank - 2] == 1 &&
      cd[rank - 2] > kFewTransposeRows &&
      (es == 1 || es == 2 || es == 4 || es == 8)) {
    const int64_t rows = cd[rank - 2], rowDst = cds[rank - 2];
    while (true) {
      const uint8_t *s = sBase + sPos * static_cast<int64_t>(es);
      uint8_t *d = dBase + dPos * static_cast<int64_t>(es);
      switch (es) {
      case 1: transposeTiles<uint8_t>(s, rows, inner, sIn, d, rowDst); break;
      case 2: transposeTiles<uint16_t>(s, rows, inner, sIn, d, rowDst); break;
      case 4:
#ifdef ONNXSLIM_ISA_X86
        // Sixteen by sixteen in registers (the same 4-byte patterns moved).
        if (simd::currentIsa().load() == simd::Isa::Avx512) {
          simd::transposeFloatsAvx512(reinterpret_cast<const float *>(s), sIn, inner, rows,
                                      reinterpret_cast<float *>(d), rowDst);
          break;
        }
#endif
        transposeTiles<uint32_t>(s, rows, inner, sIn, d, rowDst);
        break;
      default: transposeTiles<uint64_t>(s, rows, inner, sIn, d, rowDst); break;
      }
      if (!advance(rank - 2))
        return;
    }
  }
  while (true) {
    if (isString) {
      for (int64_t i = 0; i < inner; ++i)
        dst.strings()[dPos + i * dIn] = src.strings()[sPos + i * sIn];
    } else if (sIn == 1 && dIn == 1) {
      std::memcpy(dBase + dPos * es, sBase + sPos * es, inner * es);
    } else {
      const uint8_t *s = sBase + sPos * static_cast<int64_t>(es);
      uint8_t *d = dBase + dPos * static_cast<int64_t>(es);
      switch (es) {
      case 1: copyRun<uint8_t>(s, sIn, d, dIn, inner); break;
      case 2: copyRun<uint16_t>(s, sIn, d, dIn, inner); break;
      case 4: copyRun<uint32_t>(s, sIn, d, dIn, inner); break;
      case 8: copyRun<uint64_t>(s, sIn, d, dIn, inner); break;
      default:
        for (int64_t i = 0; i < inner; ++i)
          std::memcpy(d + i * dIn * static_cast<int64_t>(es), s + i * sIn * static_cast<int64_t>(es), es);
      }
    }
    if (!advance(rank - 1))
      return;
  }
}

Status gatherByIndex(const Tensor &src, const std::vector<int64_t> &dims,
                     const std::vector<int64_t> &index, TensorPtr &out) {
  ONNXSLIM_RETURN_IF_ERROR(checkMovable(src.dtype()));
  TensorBuilder b(src.dtype(), dims);
  size_t es = elementSize(src.dtype());
  for (size_t i = 0; i < index.size(); ++i)
    copyElement(src, index[i], b, static_cast<int64_t>(i), es);
  out = b.finish();
  return Status::success();
}

TensorPtr reshaped(const TensorPtr &t, std::vector<int64_t> dims) {
  auto r = std::make_shared<Tensor>(t->dtype(), std::move(dims), t->buffer());
  if (t->dtype() == DataType::String)
    r->setStrings(t->strings());
  return r;
}

std::string dimsToString(const std::vector<int64_t> &dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i)
      s += ", ";
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

Status broadcastShapes(const std::vector<std::vector<int64_t>> &shapes, std::vector<int64_t> &out) {
  size_t rank = 0;
  for (const auto &s : shapes)
    rank = std::max(rank, s.size());
  out.assign(rank, 1);
  for (const auto &s : shapes) {
    size_t off = rank - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t d = s[i], &o = out[off + i];
      if (d == o || d == 1)
        continue;
      if (o == 1) {
        o = d;
        continue;
      }
      std::string msg = "shapes cannot be broadcast:";
      for (const auto &x : shapes)
        msg += " " + dimsToString(x);
      return Status::error(msg);
    }
  }
  return Status::success();
}

std::vector<int64_t> broadcastStrides(const std::vector<int64_t> &dims,
                                      const std::vector<int64_t> &outDims) {
  std::vector<int64_t> s(outDims.size(), 0);
  std::vector<int64_t> own = stridesOf(dims);
  size_t off = outDims.size() - dims.size();
  for (size_t i = 0; i < dims.size(); ++i)
    s[off + i] = dims[i] == 1 ? 0 : own[i];
  return s;
}

} // namespace tops

Status densifySparse(const SparseTensor &sparse, TensorPtr &out) {
  if (!sparse.values)
    return Status::error("sparse tensor has no values");
  const Tensor &values = *sparse.values;
  ONNXSLIM_RETURN_IF_ERROR(tops::checkMovable(values.dtype()));
  int64_t count = 0;
  ONNXSLIM_RETURN_IF_ERROR(checkedNumElements(sparse.dims, values.dtype(), count));
  int64_t nnz = values.numElements();
  if (values.rank() != 1)
    return Status::error("sparse values must be 1-D");
  if (values.dtype() != DataType::String && !values.isConsistent())
    return Status::error("sparse values have the wrong byte size");
  std::vector<int64_t> idx;
  if (sparse.indices)
    ONNXSLIM_RETURN_IF_ERROR(tops::readInts(*sparse.indices, idx, "sparse indices"));
  std::vector<int64_t> linear(static_cast<size_t>(nnz));
  int64_t rank = static_cast<int64_t>(sparse.dims.size());
  if (static_cast<int64_t>(idx.size()) == nnz) {
    linear = idx;
  } else if (static_cast<int64_t>(idx.size()) == nnz * rank) {
    std::vector<int64_t> strides = tops::stridesOf(sparse.dims);
    for (int64_t i = 0; i < nnz; ++i) {
      int64_t l = 0;
      for (int64_t d = 0; d < rank; ++d) {
        int64_t v = idx[i * rank + d];
        if (v < 0 || v >= sparse.dims[d])
          return Status::error("sparse index out of range");
        l += v * strides[d];
      }
      linear[i] = l;
    }
  } else {
    return Status::error("sparse indices do not match the number of values");
  }
  TensorBuilder b(values.dtype(), sparse.dims);
  size_t es = elementSize(values.dtype());
  for (int64_t i = 0; i < nnz; ++i) {
    if (linear[i] < 0 || linear[i] >= count)
      return Status::error("sparse index " + std::to_string(linear[i]) + " out of range");
    tops::copyElement(values, i, b, linear[i], es);
  }
  out = b.finish();
  return Status::success();
}

} // namespace onnxslim::rt
