//===- runtime/kernels/TensorIndex.cpp - Indexing and selection kernels ---===//
//
// Kernels that read or write elements at computed positions: Gather,
// GatherElements, GatherND, Scatter, ScatterElements, ScatterND (with their
// reductions), OneHot, Where, NonZero, Compress, ReverseSequence, Range and
// CumSum. Every index read from a tensor is range-checked; an out-of-range
// index is an error naming the index and the dim.
//
//===----------------------------------------------------------------------===//
#include "runtime/Interpreter.h"
#include "runtime/kernels/TensorHelpers.h"

#include <algorithm>
#include <cmath>

namespace onnxslim::rt {
namespace {

using namespace tops;

/// Checks an index against `dim`, wrapping negative ones.
Status checkIndex(int64_t &idx, int64_t dim, const char *what) {
  int64_t orig = idx;
  if (idx < 0)
    idx += dim;
  if (idx < 0 || idx >= dim)
    return Status::error(std::string(what) + " index " + std::to_string(orig) +
                         " is out of range for dim " + std::to_string(dim));
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Gather family
//===----------------------------------------------------------------------===//

Status gatherKernel(KernelContext &ctx) {
  const Tensor *data, *idxT;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, data));
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(1, idxT));
  ONNXSLIM_RETURN_IF_ERROR(checkMovable(data->dtype()));
  if (data->rank() == 0)
    return ctx.error("Gather data must have rank >= 1");
  int64_t axis;
  ONNXSLIM_RETURN_IF_ERROR(normalizeAxis(ctx.attrInt("axis", 0), data->rank(), axis));
  std::vector<int64_t> idx;
  ONNXSLIM_RETURN_IF_ERROR(readInts(*idxT, idx, "indices"));
  int64_t dim = data->dims()[axis];
  for (int64_t &i : idx)
    ONNXSLIM_RETURN_IF_ERROR(checkIndex(i, dim, "Gather"));
  std::vector<int64_t> dims(data->dims().begin(), data->dims().begin() + axis);
  dims.insert(dims.end(), idxT->dims().begin(), idxT->dims().end());
  dims.insert(dims.end(), data->dims().begin() + axis + 1, data->dims().end());
  ONNXSLIM_RETURN_IF_ERROR(checkOutputSize(ctx, dims, data->dtype()));
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i)
    outer *= data->dims()[i];
  for (int64_t i = axis + 1; i < data->rank(); ++i)
    inner *= data->dims()[i];
  TensorBuilder b(data->dtype(), dims);
  size_t es = elementSize(data->dtype());
  int64_t n = static_cast<int64_t>(idx.size()), dst = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < n; ++k, dst += inner) {
      int64_t src = (o * dim + idx[k]) * inner;
      if (es == 0)
        for (int64_t j = 0; j < inner; ++j)
          b.strings()[dst + j] = data->strings()[src + j];
      else
        std::memcpy(b.data() + dst * es, data->rawData() + src * es, inner * es);
    }
  ctx.setOutput(0, b.finish());
  return Status::success();
}

Status gatherElementsKernel(KernelContext &ctx) {
  const Tensor *data, *idxT;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, data));
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(1, idxT));
  ONNXSLIM_RETURN_IF_ERROR(checkMovable(data->dtype()));
  int64_t rank = data->rank(), axis;
  if (rank == 0 || idxT->rank() != rank)
    return ctx.error("data " + dimsToString(data->dims()) + " and indices " +
                     dimsToString(idxT->dims()) + " must have the same rank >= 1");
  ONNXSLIM_RETURN_IF_ERROR(normalizeAxis(ctx.attrInt("axis", 0), rank, axis));
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && idxT->dims()[d] > data->dims()[d])
      return ctx.error("indices " + dimsToString(idxT->dims()) + " exceed data " +
                       dimsToString(data->dims()) + " on dim " + std::to_string(d));
  std::vector<int64_t> idx;
  ONNXSLIM_RETURN_IF_ERROR(readInts(*idxT, idx, "indices"));
  std::vector<int64_t> ds = stridesOf(data->dims()), is = stridesOf(idxT->dims());
  TensorBuilder b(data->dtype(), idxT->dims());
  size_t es = elementSize(data->dtype());
  int64_t dim = data->dims()[axis];
  for (size_t i = 0; i < idx.size(); ++i) {
    int64_t rem = static_cast<int64_t>(i), src = 0;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t c = rem / is[d];
      rem %= is[d];
      if (d == axis) {
        c = idx[i];
        ONNXSLIM_RETURN_IF_ERROR(checkIndex(c, dim, "GatherElements"));
      }
      src += c * ds[d];
    }
    copyElement(*data, src, b, static_cast<int64_t>(i), es);
  }
  ctx.setOutput(0, b.finish());
  return Status::success();
}

Status gatherNDKernel(KernelContext &ctx) {
  const Tensor *data, *idxT;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, data));
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(1, idxT));
  ONNXSLIM_RETURN_IF_ERROR(checkMovable(data->dtype()));
  int64_t r = data->rank(), q = idxT->rank();
  int64_t bdims = ctx.opsetVersion() >= 12 ? ctx.attrInt("batch_dims", 0) : 0;
  if (r < 1 || q < 1 || bdims < 0 || bdims >= std::min(r, q))
    return ctx.error("invalid ranks for GatherND: data " + dimsToString(data->dims()) +
                     ", indices " + dimsToString(idxT->dims()) + ", batch_dims " +
                     std::to_string(bdims));
  int64_t k = idxT->dims()[q - 1];
  if (k < 1 || k > r - bdims)
    return ctx.error("last indices dim " + std::to_string(k) + " is out of range");
  for (int64_t i = 0; i < bdims; ++i)
    if (data->dims()[i] != idxT->dims()[i])
      return ctx.error("batch dims of data and indices differ");
  std::vector<int64_t> idx;
  ONNXSLIM_RETURN_IF_ERROR(readInts(*idxT, idx, "indices"));
  std::vector<int64_t> dims(idxT->dims().begin(), idxT->dims().end() - 1);
  dims.insert(dims.end(), data->dims().begin() + bdims + k, data->dims().end());
  int64_t batch = 1, slice = 1;
  for (int64_t i = 0; i < bdims; ++i)
    batch *= data->dims()[i];
  for (int64_t i = bdims + k; i < r; ++i)
    slice *= data->dims()[i];
  int64_t tuples = static_cast<int64_t>(idx.size()) / k;
  int64_t perBatch = batch ? tuples / batch : 0;
  std::vector<int64_t> ds = stridesOf(data->dims());
  int64_t batchStride = bdims > 0 ? ds[bdims - 1] : 0;
  TensorBuilder b(data->dtype(), dims);
  size_t es = elementSize(data->dtype());
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t bi = perBatch ? t / perBatch : 0;
    int64_t src = bi * batchStride;
    for (int64_t j = 0; j < k; ++j) {
      int64_t c = idx[t * k + j];
      ONNXSLIM_RETURN_IF_ERROR(checkIndex(c, data->dims()[bdims + j], "GatherND"));
      src += c * ds[bdims + j];
    }
    for (int64_t e = 0; e < slice; ++e)
      copyElement(*data, src + e, b, t * slice + e, es);
  }
  ctx.setOutput(0, b.finish());
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Scatter family
//===----------------------------------------------------------------------===//

enum class Reduction { None, Add, Mul, Max, Min };

Status readReduction(KernelContext &ctx, Reduction &red) {
  red = Reduction::None;
  if (ctx.opsetVersion() < 16)
    return Status::success();
  std::string s = ctx.attrString("reduction", "none");
  if (s == "none")
    red = Reduction::None;
  else if (s == "add")
    red = Reduction::Add;
  else if (s == "mul")
    red = Reduction::Mul;
  else if (s == "max" && ctx.opsetVersion() >= 18)
    red = Reduction::Max;
  else if (s == "min" && ctx.opsetVersion() >= 18)
    red = Reduction::Min;
  else
    return ctx.error("unknown reduction '" + s + "'");
  return Status::success();
}

/// Applies updates[u] to out[target[u]] with the reduction, for every u.
Status scatterInto(const Tensor &data, const Tensor &updates, const std::vector<int64_t> &target,
                   int64_t slice, Reduction red, TensorPtr &out) {
  if (updates.dtype() != data.dtype())
    return Status::error("updates have element type " + dataTypeName(updates.dtype()) +
                         " but data has " + dataTypeName(data.dtype()));
  ONNXSLIM_RETURN_IF_ERROR(checkMovable(data.dtype()));
  TensorBuilder b(data.dtype(), data.dims());
  size_t es = elementSize(data.dtype());
  int64_t n = data.numElements();
  if (es == 0)
    std::copy(data.strings().begin(), data.strings().end(), b.strings().begin());
  else
    std::memcpy(b.data(), data.rawData(), n * es);
  if (red == Reduction::None || es == 0) {
    if (red != Reduction::None)
      return Status::error("reductions are not defined on strings");
    for (size_t u = 0; u < target.size(); ++u)
      for (int64_t e = 0; e < slice; ++e)
        copyElement(updates, static_cast<int64_t>(u) * slice + e, b, target[u] + e, es);
    out = b.finish();
    return Status::success();
  }
  bool ok = visitNumeric(data.dtype(), [&]<typename T>() {
    using C = ComputeT<T>;
    for (size_t u = 0; u < target.size(); ++u)
      for (int64_t e = 0; e < slice; ++e) {
        int64_t to = target[u] + e;
        C a = widen(load<T>(b.data(), to));
        C v = widen(load<T>(updates.rawData(), static_cast<int64_t>(u) * slice + e));
        C r;
        switch (red) {
        case Reduction::Add: r = static_cast<C>(a + v); break;
        case Reduction::Mul: r = static_cast<C>(a * v); break;
        case Reduction::Max: r = std::max(a, v); break;
        default: r = std::min(a, v); break;
        }
        store<T>(b.data(), to, narrow<T>(r));
      }
  });
  if (!ok)
    return Status::error("unsupported element type " + dataTypeName(data.dtype()));
  out = b.finish();
  return Status::success();
}

Status scatterElementsKernel(KernelContext &ctx) {
  const Tensor *data, *idxT, *upd;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, data));
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(1, idxT));
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(2, upd));
  Reduction red;
  ONNXSLIM_RETURN_IF_ERROR(readReduction(ctx, red));
  int64_t rank = data->rank(), axis;
  if (rank == 0 || idxT->rank() != rank || upd->dims() != idxT->dims())
    return ctx.error("data " + dimsToString(data->dims()) + ", indices " +
                     dimsToString(idxT->dims()) + " and updates " + dimsToString(upd->dims()) +
                     " do not fit");
  ONNXSLIM_RETURN_IF_ERROR(normalizeAxis(ctx.attrInt("axis", 0), rank, axis));
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && idxT->dims()[d] > data->dims()[d])
      return ctx.error("indices " + dimsToString(idxT->dims()) + " exceed data " +
                       dimsToString(data->dims()) + " on dim " + std::to_string(d));
  std::vector<int64_t> idx;
  ONNXSLIM_RETURN_IF_ERROR(readInts(*idxT, idx, "indices"));
  std::vector<int64_t> ds = stridesOf(data->dims()), is = stridesOf(idxT->dims());
  std::vector<int64_t> target(idx.size());
  for (size_t i = 0; i < idx.size(); ++i) {
    int64_t rem = static_cast<int64_t>(i), t = 0;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t c = rem / is[d];
      rem %= is[d];
      if (d == axis) {
        c = idx[i];
        ONNXSLIM_RETURN_IF_ERROR(checkIndex(c, data->dims()[axis], "Scatter"));
      }
      t += c * ds[d];
    }
    target[i] = t;
  }
  TensorPtr out;
  ONNXSLIM_RETURN_IF_ERROR(scatterInto(*data, *upd, target, 1, red, out));
  ctx.setOutput(0, out);
  return Status::success();
}

Status scatterNDKernel(KernelContext &ctx) {
  const Tensor *data, *idxT, *upd;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, data));
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(1, idxT));
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(2, upd));
  Reduction red;
  ONNXSLIM_RETURN_IF_ERROR(readReduction(ctx, red));
  int64_t r = data->rank(), q = idxT->rank();
  if (r < 1 || q < 1)
    return ctx.error("data and indices must have rank >= 1");
  int64_t k = idxT->dims()[q - 1];
  if (k < 0 || k > r)
    return ctx.error("last indices dim " + std::to_string(k) + " exceeds the data rank");
  std::vector<int64_t> want(idxT->dims().begin(), idxT->dims().end() - 1);
  want.insert(want.end(), data->dims().begin() + k, data->dims().end());
  if (upd->dims() != want)
    return ctx.error("updates have shape " + dimsToString(upd->dims()) + ", expected " +
                     dimsToString(want));
  std::vector<int64_t> idx;
  ONNXSLIM_RETURN_IF_ERROR(readInts(*idxT, idx, "indices"));
  std::vector<int64_t> ds = stridesOf(data->dims());
  int64_t slice = 1;
  for (int64_t i = k; i < r; ++i)
    slice *= data->dims()[i];
  int64_t tuples = k ? static_cast<int64_t>(idx.size()) / k : idxT->numElements();
  std::vector<int64_t> target(tuples, 0);
  for (int64_t t = 0; t < tuples; ++t)
    for (int64_t j = 0; j < k; ++j) {
      int64_t c = idx[t * k + j];
      ONNXSLIM_RETURN_IF_ERROR(checkIndex(c, data->dims()[j], "ScatterND"));
      target[t] += c * ds[j];
    }
  TensorPtr out;
  ONNXSLIM_RETURN_IF_ERROR(scatterInto(*data, *upd, target, slice, red, out));
  ctx.setOutput(0, out);
  return Status::success();
}

//===----------------------------------------------------------------------===//
// OneHot, Where, NonZero, Compress
//===----------------------------------------------------------------------===//

Status oneHotKernel(KernelContext &ctx) {
  const Tensor *idxT, *depthT, *values;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, idxT));
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(1, depthT));
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(2, values));
  ONNXSLIM_RETURN_IF_ERROR(checkMovable(values->dtype()));
  double depthD;
  ONNXSLIM_RETURN_IF_ERROR(readScalar(*depthT, depthD, "depth"));
  if (!(depthD >= 1) || depthD > 1e12)
    return ctx.error("depth must be positive");
  auto depth = static_cast<int64_t>(depthD);
  if (values->numElements() != 2 || (values->dtype() != DataType::String && !values->isConsistent()))
    return ctx.error("values must have two elements [off, on]");
  std::vector<double> idx(static_cast<size_t>(idxT->numElements()));
  bool ok = visitNumeric(idxT->dtype(), [&]<typename T>() {
    for (size_t i = 0; i < idx.size(); ++i)
      idx[i] = toDouble(load<T>(idxT->rawData(), static_cast<int64_t>(i)));
  });
  if (!ok || !idxT->isConsistent())
    return ctx.error("indices must be a numeric tensor");
  int64_t outRank = idxT->rank() + 1, axis;
  ONNXSLIM_RETURN_IF_ERROR(normalizeAxis(ctx.attrInt("axis", -1), outRank, axis));
  std::vector<int64_t> dims = idxT->dims();
  dims.insert(dims.begin() + axis, depth);
  ONNXSLIM_RETURN_IF_ERROR(checkOutputSize(ctx, dims, values->dtype()));
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i)
    outer *= dims[i];
  for (int64_t i = axis + 1; i < outRank; ++i)
    inner *= dims[i];
  TensorBuilder b(values->dtype(), dims);
  size_t es = elementSize(values->dtype());
  int64_t total = b.numElements();
  for (int64_t i = 0; i < total; ++i)
    copyElement(*values, 0, b, i, es);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      double v = idx[o * inner + in];
      auto c = static_cast<int64_t>(std::trunc(v));
      if (c < 0)
        c += depth;
      if (c < 0 || c >= depth)
        continue;
      copyElement(*values, 1, b, (o * depth + c) * inner + in, es);
    }
  ctx.setOutput(0, b.finish());
  return Status::success();
}

/// Where's elements as unsigned words of their size: out[i] = c[i] ? x : y,
/// each of x and y one value (XS, YS false) or one per output element.
/// Both operands are read and the condition selects between them, with no
/// branch, so the loop vectorizes (a branch per element mispredicts on
/// masks). (Through memcpy: an input's bytes need not be aligned.)
template <typename U, bool XS, bool YS>
void whereWordsOf(const uint8_t *c, const uint8_t *x, const uint8_t *y, uint8_t *out, int64_t n) {
  U xv = 0, yv = 0;
  if (!XS)
    std::memcpy(&xv, x, sizeof(U));
  if (!YS)
    std::memcpy(&yv, y, sizeof(U));
  for (int64_t i = 0; i < n; ++i) {
    U a = xv, b = yv;
    if (XS)
      std::memcpy(&a, x + i * sizeof(U), sizeof(U));
    if (YS)
      std::memcpy(&b, y + i * sizeof(U), sizeof(U));
    const U v = c[i] ? a : b;
    std::memcpy(out + i * sizeof(U), &v, sizeof(U));
  }
}

template <typename U>
void whereWords(const uint8_t *c, const uint8_t *x, bool xs, const uint8_t *y, bool ys, uint8_t *out, int64_t n) {
  if (xs && ys)
    whereWordsOf<U, true, true>(c, x, y, out, n);
  else if (xs)
    whereWordsOf<U, true, false>(c, x, y, out, n);
  else if (ys)
    whereWordsOf<U, false, true>(c, x, y, out, n);
  else
    whereWordsOf<U, false, false>(c, x, y, out, n);
}

/// Where without a broadcast walk, when the condition has the output's
/// dims and X and Y each have them or are one element (a mask filled with
/// two constants, a select between whole tensors); Result: whether it ran.
/// A condition byte other than 0 is true, as everywhere.
bool whereFlat(const Tensor &cond, const Tensor &x, const Tensor &y, const std::vector<int64_t> &dims,
               TensorBuilder &b, size_t es) {
  const int64_t n = b.numElements();
  auto fits = [&](const Tensor &t) { return t.numElements() == 1 || t.dims() == dims; };
  if (cond.dims() != dims || !fits(x) || !fits(y) || !x.isConsistent() || !y.isConsistent() || n == 0)
    return false;
  const bool xs = x.numElements() != 1, ys = y.numElements() != 1;
  const uint8_t *c = cond.rawData(), *xp = x.rawData(), *yp = y.rawData();
  switch (es) {
  case 1: whereWords<uint8_t>(c, xp, xs, yp, ys, b.data(), n); return true;
  case 2: whereWords<uint16_t>(c, xp, xs, yp, ys, b.data(), n); return true;
  case 4: whereWords<uint32_t>(c, xp, xs, yp, ys, b.data(), n); return true;
  case 8: whereWords<uint64_t>(c, xp, xs, yp, ys, b.data(), n); return true;
  default: return false;
  }
}

Status whereKernel(KernelContext &ctx) {
  const Tensor *cond, *x, *y;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, cond));
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(1, x));
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(2, y));
  if (cond->dtype() != DataType::Bool || !cond->isConsistent())
    return ctx.error("condition must be a bool tensor");
  if (x->dtype() != y->dtype())
    return ctx.error("X and Y have different element types " + dataTypeName(x->dtype()) +
                     " and " + dataTypeName(y->dtype()));
  ONNXSLIM_RETURN_IF_ERROR(checkMovable(x->dtype()));
  std::vector<int64_t> dims;
  ONNXSLIM_RETURN_IF_ERROR(broadcastShapes({cond->dims(), x->dims(), y->dims()}, dims));
  ONNXSLIM_RETURN_IF_ERROR(checkOutputSize(ctx, dims, x->dtype()));
  TensorBuilder b(x->dtype(), dims);
  size_t es = elementSize(x->dtype());
  if (whereFlat(*cond, *x, *y, dims, b, es)) {
    ctx.setOutput(0, b.finish());
    return Status::success();
  }
  std::array<std::vector<int64_t>, 3> strides = {broadcastStrides(cond->dims(), dims),
                                                 broadcastStrides(x->dims(), dims),
                                                 broadcastStrides(y->dims(), dims)};
  const uint8_t *c = cond->rawData();
  forEachBroadcast<3>(dims, strides, [&](int64_t i, const std::array<int64_t, 3> &off) {
    if (c[off[0]])
      copyElement(*x, off[1], b, i, es);
    else
      copyElement(*y, off[2], b, i, es);
  });
  ctx.setOutput(0, b.finish());
  return Status::success();
}

/// Whether element i of `t` is non-zero (strings: non-empty).
Status nonZeroMask(const Tensor &t, std::vector<bool> &mask) {
  int64_t n = t.numElements();
  mask.assign(static_cast<size_t>(n), false);
  if (t.dtype() == DataType::String) {
    for (int64_t i = 0; i < n; ++i)
      mask[i] = !t.strings()[i].empty();
    return Status::success();
  }
  if (!t.isConsistent())
    return Status::error("input has a data size that does not match its shape");
  bool ok = visitNumeric(t.dtype(), [&]<typename T>() {
    for (int64_t i = 0; i < n; ++i)
      mask[i] = widen(load<T>(t.rawData(), i)) != ComputeT<T>(0);
  });
  if (!ok)
    return Status::error("unsupported element type " + dataTypeName(t.dtype()));
  return Status::success();
}

Status nonZeroKernel(KernelContext &ctx) {
  const Tensor *in;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, in));
  std::vector<bool> mask;
  ONNXSLIM_RETURN_IF_ERROR(nonZeroMask(*in, mask));
  std::vector<int64_t> dims = in->dims();
  if (dims.empty())
    dims.push_back(1);
  int64_t rank = static_cast<int64_t>(dims.size());
  int64_t nnz = std::count(mask.begin(), mask.end(), true);
  std::vector<int64_t> strides = stridesOf(dims), out(rank * nnz);
  int64_t j = 0;
  for (size_t i = 0; i < mask.size(); ++i) {
    if (!mask[i])
      continue;
    int64_t rem = static_cast<int64_t>(i);
    for (int64_t d = 0; d < rank; ++d) {
      out[d * nnz + j] = rem / strides[d];
      rem %= strides[d];
    }
    ++j;
  }
  ctx.setOutput(0, makeInt64({rank, nnz}, out));
  return Status::success();
}

Status compressKernel(KernelContext &ctx) {
  const Tensor *in, *cond;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, in));
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(1, cond));
  ONNXSLIM_RETURN_IF_ERROR(checkMovable(in->dtype()));
  if (cond->rank() != 1)
    return ctx.error("condition must be 1-D");
  std::vector<bool> mask;
  ONNXSLIM_RETURN_IF_ERROR(nonZeroMask(*cond, mask));
  size_t es = elementSize(in->dtype());
  if (!ctx.attr("axis")) {
    int64_t n = std::min<int64_t>(in->numElements(), static_cast<int64_t>(mask.size()));
    std::vector<int64_t> sel;
    for (int64_t i = 0; i < n; ++i)
      if (mask[i])
        sel.push_back(i);
    TensorPtr out;
    ONNXSLIM_RETURN_IF_ERROR(gatherByIndex(*in, {static_cast<int64_t>(sel.size())}, sel, out));
    ctx.setOutput(0, out);
    return Status::success();
  }
  int64_t axis;
  ONNXSLIM_RETURN_IF_ERROR(normalizeAxis(ctx.attrInt("axis", 0), in->rank(), axis));
  int64_t dim = in->dims()[axis];
  if (static_cast<int64_t>(mask.size()) > dim &&
      std::find(mask.begin() + dim, mask.end(), true) != mask.end())
    return ctx.error("condition selects index beyond dim " + std::to_string(dim));
  std::vector<int64_t> sel;
  for (int64_t i = 0; i < std::min<int64_t>(dim, static_cast<int64_t>(mask.size())); ++i)
    if (mask[i])
      sel.push_back(i);
  std::vector<int64_t> dims = in->dims();
  dims[axis] = static_cast<int64_t>(sel.size());
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i)
    outer *= dims[i];
  for (int64_t i = axis + 1; i < in->rank(); ++i)
    inner *= dims[i];
  TensorBuilder b(in->dtype(), dims);
  int64_t dst = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t s : sel)
      for (int64_t e = 0; e < inner; ++e)
        copyElement(*in, (o * dim + s) * inner + e, b, dst++, es);
  ctx.setOutput(0, b.finish());
  return Status::success();
}

//===----------------------------------------------------------------------===//
// ReverseSequence, Range, CumSum
//===----------------------------------------------------------------------===//

Status reverseSequenceKernel(KernelContext &ctx) {
  const Tensor *in, *lensT;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, in));
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(1, lensT));
  ONNXSLIM_RETURN_IF_ERROR(checkMovable(in->dtype()));
  if (in->rank() < 2)
    return ctx.error("input must have rank >= 2");
  int64_t batchAxis = ctx.attrInt("batch_axis", 1), timeAxis = ctx.attrInt("time_axis", 0);
  if (!((batchAxis == 0 && timeAxis == 1) || (batchAxis == 1 && timeAxis == 0)))
    return ctx.error("batch_axis and time_axis must be 0 and 1 in some order");
  std::vector<int64_t> lens;
  ONNXSLIM_RETURN_IF_ERROR(readInts(*lensT, lens, "sequence_lens"));
  int64_t batch = in->dims()[batchAxis], time = in->dims()[timeAxis];
  if (static_cast<int64_t>(lens.size()) != batch)
    return ctx.error("sequence_lens has " + std::to_string(lens.size()) + " entries for batch " +
                     std::to_string(batch));
  std::vector<int64_t> strides = stridesOf(in->dims());
  int64_t inner = strides[1];
  size_t es = elementSize(in->dtype());
  TensorBuilder b(in->dtype(), in->dims());
  for (int64_t bi = 0; bi < batch; ++bi) {
    if (lens[bi] < 0 || lens[bi] > time)
      return ctx.error("sequence length " + std::to_string(lens[bi]) + " is out of range [0, " +
                       std::to_string(time) + "]");
    for (int64_t t = 0; t < time; ++t) {
      int64_t src = t < lens[bi] ? lens[bi] - 1 - t : t;
      int64_t to = batchAxis == 0 ? bi * strides[0] + t * strides[1] : t * strides[0] + bi * strides[1];
      int64_t from = batchAxis == 0 ? bi * strides[0] + src * strides[1]
                                    : src * strides[0] + bi * strides[1];
      for (int64_t e = 0; e < inner; ++e)
        copyElement(*in, from + e, b, to + e, es);
    }
  }
  ctx.setOutput(0, b.finish());
  return Status::success();
}

Status rangeKernel(KernelContext &ctx) {
  const Tensor *s, *l, *d;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, s));
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(1, l));
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(2, d));
  if (s->dtype() != l->dtype() || s->dtype() != d->dtype())
    return ctx.error("start, limit and delta must have the same element type");
  for (const Tensor *t : {s, l, d})
    if (t->numElements() != 1 || !t->isConsistent())
      return ctx.error("start, limit and delta must be scalars");
  Status st;
  bool ok = visitNumeric(s->dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool>) {
      st = ctx.error("Range does not take bool");
    } else {
      using C = ComputeT<T>;
      C start = widen(load<T>(s->rawData(), 0)), limit = widen(load<T>(l->rawData(), 0)),
        delta = widen(load<T>(d->rawData(), 0));
      if (delta == C(0)) {
        st = ctx.error("delta cannot be 0");
        return;
      }
      double count = std::ceil((static_cast<double>(limit) - static_cast<double>(start)) /
                               static_cast<double>(delta));
      if (!(count > 0))
        count = 0;
      if (count > 1e12) {
        st = ctx.error("Range would produce too many elements");
        return;
      }
      auto n = static_cast<int64_t>(count);
      st = checkOutputSize(ctx, {n}, s->dtype());
      if (!st.ok())
        return;
      TensorBuilder b(s->dtype(), {n});
      C v = start;
      for (int64_t i = 0; i < n; ++i) {
        store<T>(b.data(), i, narrow<T>(v));
        v = static_cast<C>(v + delta);
      }
      ctx.setOutput(0, b.finish());
    }
  });
  if (!ok)
    return ctx.error("unsupported element type " + dataTypeName(s->dtype()));
  return st;
}

Status cumSumKernel(KernelContext &ctx) {
  const Tensor *x, *axisT;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, x));
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(1, axisT));
  std::vector<int64_t> av;
  ONNXSLIM_RETURN_IF_ERROR(readInts(*axisT, av, "axis"));
  if (av.size() != 1)
    return ctx.error("axis must be a scalar");
  int64_t axis;
  ONNXSLIM_RETURN_IF_ERROR(normalizeAxis(av[0], std::max<int64_t>(x->rank(), 1), axis));
  if (!x->isConsistent())
    return ctx.error("input has a data size that does not match its shape");
  bool exclusive = ctx.attrInt("exclusive", 0) != 0, reverse = ctx.attrInt("reverse", 0) != 0;
  std::vector<int64_t> dims = x->dims();
  if (dims.empty())
    dims.push_back(1);
  int64_t outer = 1, inner = 1, dim = dims[axis];
  for (int64_t i = 0; i < axis; ++i)
    outer *= dims[i];
  for (size_t i = axis + 1; i < dims.size(); ++i)
    inner *= dims[i];
  TensorBuilder b(x->dtype(), x->dims());
  bool ok = visitNumeric(x->dtype(), [&]<typename T>() {
    using C = ComputeT<T>;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t in = 0; in < inner; ++in) {
        C acc = C(0);
        for (int64_t k = 0; k < dim; ++k) {
          int64_t t = reverse ? dim - 1 - k : k;
          int64_t i = (o * dim + t) * inner + in;
          C v = widen(load<T>(x->rawData(), i));
          if (exclusive) {
            store<T>(b.data(), i, narrow<T>(acc));
            acc = static_cast<C>(acc + v);
          } else {
            acc = static_cast<C>(acc + v);
            store<T>(b.data(), i, narrow<T>(acc));
          }
        }
      }
  });
  if (!ok || x->dtype() == DataType::Bool)
    return ctx.error("unsupported element type " + dataTypeName(x->dtype()));
  ctx.setOutput(0, b.finish());
  return Status::success();
}

} // namespace

void registerTensorIndexKernels(OpRegistry &r) {
  r.add("Gather", 1, kLatestOpset, gatherKernel);
  r.add("GatherElements", 11, kLatestOpset, gatherElementsKernel);
  r.add("GatherND", 11, kLatestOpset, gatherNDKernel);
  r.add("Scatter", 9, kLatestOpset, scatterElementsKernel);
  r.add("ScatterElements", 11, kLatestOpset, scatterElementsKernel);
  r.add("ScatterND", 11, kLatestOpset, scatterNDKernel);
  r.add("OneHot", 9, kLatestOpset, oneHotKernel);
  r.add("Where", 9, kLatestOpset, whereKernel);
  r.add("NonZero", 9, kLatestOpset, nonZeroKernel);
  r.add("Compress", 9, kLatestOpset, compressKernel);
  r.add("ReverseSequence", 10, kLatestOpset, reverseSequenceKernel);
  r.add("Range", 11, kLatestOpset, rangeKernel);
  r.add("CumSum", 11, kLatestOpset, cumSumKernel);
}

} // namespace onnxslim::rt
