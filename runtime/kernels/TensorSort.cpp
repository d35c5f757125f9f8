//===- runtime/kernels/TensorSort.cpp - Ordering kernels ------------------===//
//
// Kernels that order or rank elements: TopK (all versions: k as attribute
// before 10, as input after; largest/sorted at 11), ArgMax/ArgMin
// (keepdims, select_last_index at 12) and Unique (flattened or along an
// axis, sorted or in first-occurrence order). Ties keep the lower index
// first, as ONNX Runtime does.
//
//===----------------------------------------------------------------------===//
#include "runtime/Interpreter.h"
#include "runtime/kernels/TensorHelpers.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

namespace onnxslim::rt {
namespace {

using namespace tops;

/// outer/dim/inner sizes around `axis`.
void splitAround(const std::vector<int64_t> &dims, int64_t axis, int64_t &outer, int64_t &dim,
                 int64_t &inner) {
  outer = 1;
  inner = 1;
  for (int64_t i = 0; i < axis; ++i)
    outer *= dims[i];
  dim = dims[axis];
  for (size_t i = axis + 1; i < dims.size(); ++i)
    inner *= dims[i];
}

Status topKKernel(KernelContext &ctx) {
  const Tensor *x;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, x));
  if (x->rank() == 0 || !x->isConsistent())
    return ctx.error("input must be a tensor of rank >= 1");
  int64_t k;
  if (ctx.opsetVersion() < 10) {
    k = ctx.attrInt("k", -1);
  } else {
    const Tensor *kt;
    ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(1, kt));
    std::vector<int64_t> kv;
    ONNXSLIM_RETURN_IF_ERROR(readInts(*kt, kv, "K"));
    if (kv.size() != 1)
      return ctx.error("K must have one element");
    k = kv[0];
  }
  int64_t axis;
  ONNXSLIM_RETURN_IF_ERROR(normalizeAxis(ctx.attrInt("axis", -1), x->rank(), axis));
  bool largest = ctx.opsetVersion() < 11 || ctx.attrInt("largest", 1) != 0;
  int64_t outer, dim, inner;
  splitAround(x->dims(), axis, outer, dim, inner);
  if (k < 0 || k > dim)
    return ctx.error("K = " + std::to_string(k) + " is out of range for axis size " +
                     std::to_string(dim));
  std::vector<int64_t> dims = x->dims();
  dims[axis] = k;
  TensorBuilder vb(x->dtype(), dims), ib(DataType::Int64, dims);
  int64_t *idxOut = ib.dataAs<int64_t>();
  bool ok = visitNumeric(x->dtype(), [&]<typename T>() {
    using C = ComputeT<T>;
    std::vector<int64_t> order(dim);
    std::vector<C> vals(dim);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t in = 0; in < inner; ++in) {
        for (int64_t j = 0; j < dim; ++j)
          vals[j] = widen(load<T>(x->rawData(), (o * dim + j) * inner + in));
        std::iota(order.begin(), order.end(), 0);
        auto better = [&](int64_t a, int64_t b) {
          C va = vals[a], vb2 = vals[b];
          if constexpr (std::is_floating_point_v<C>) {
            bool na = std::isnan(va), nb = std::isnan(vb2);
            if (na || nb)
              return na && !nb ? largest : (!na && nb ? !largest : a < b);
          }
          if (va != vb2)
            return largest ? va > vb2 : va < vb2;
          return a < b;
        };
        std::partial_sort(order.begin(), order.begin() + k, order.end(), better);
        for (int64_t j = 0; j < k; ++j) {
          int64_t dst = (o * k + j) * inner + in;
          store<T>(vb.data(), dst, load<T>(x->rawData(), (o * dim + order[j]) * inner + in));
          idxOut[dst] = order[j];
        }
      }
  });
  if (!ok)
    return ctx.error("unsupported element type " + dataTypeName(x->dtype()));
  ctx.setOutput(0, vb.finish());
  ctx.setOutput(1, ib.finish());
  return Status::success();
}

template <bool IsMax> Status argKernel(KernelContext &ctx) {
  const Tensor *x;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, x));
  if (!x->isConsistent())
    return ctx.error("input has a data size that does not match its shape");
  int64_t axis;
  ONNXSLIM_RETURN_IF_ERROR(normalizeAxis(ctx.attrInt("axis", 0), std::max<int64_t>(x->rank(), 1), axis));
  bool keep = ctx.attrInt("keepdims", 1) != 0;
  bool last = ctx.opsetVersion() >= 12 && ctx.attrInt("select_last_index", 0) != 0;
  std::vector<int64_t> xd = x->dims();
  if (xd.empty())
    xd.push_back(1);
  int64_t outer, dim, inner;
  splitAround(xd, axis, outer, dim, inner);
  if (dim == 0)
    return ctx.error("cannot take the arg" + std::string(IsMax ? "max" : "min") + " of an empty axis");
  std::vector<int64_t> dims = x->dims();
  if (!dims.empty()) {
    if (keep)
      dims[axis] = 1;
    else
      dims.erase(dims.begin() + axis);
  }
  TensorBuilder b(DataType::Int64, dims);
  int64_t *out = b.dataAs<int64_t>();
  bool ok = visitNumeric(x->dtype(), [&]<typename T>() {
    using C = ComputeT<T>;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t in = 0; in < inner; ++in) {
        int64_t best = 0;
        C bv = widen(load<T>(x->rawData(), o * dim * inner + in));
        for (int64_t j = 1; j < dim; ++j) {
          C v = widen(load<T>(x->rawData(), (o * dim + j) * inner + in));
          bool better = IsMax ? (last ? v >= bv : v > bv) : (last ? v <= bv : v < bv);
          if (better) {
            best = j;
            bv = v;
          }
        }
        out[o * inner + in] = best;
      }
  });
  if (!ok)
    return ctx.error("unsupported element type " + dataTypeName(x->dtype()));
  ctx.setOutput(0, b.finish());
  return Status::success();
}

Status uniqueKernel(KernelContext &ctx) {
  const Tensor *x;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, x));
  ONNXSLIM_RETURN_IF_ERROR(checkMovable(x->dtype()));
  if (!x->isConsistent())
    return ctx.error("input has a data size that does not match its shape");
  bool sorted = ctx.attrInt("sorted", 1) != 0;
  bool hasAxis = ctx.attr("axis") != nullptr;
  std::vector<int64_t> dims = hasAxis ? x->dims() : std::vector<int64_t>{x->numElements()};
  int64_t axis = 0;
  if (hasAxis)
    ONNXSLIM_RETURN_IF_ERROR(normalizeAxis(ctx.attrInt("axis", 0), x->rank(), axis));
  if (dims.empty())
    return ctx.error("Unique along an axis needs rank >= 1");
  int64_t outer, n, inner;
  splitAround(dims, axis, outer, n, inner);
  // Compares slices a and b element by element: -1, 0 or 1.
  std::function<int(int64_t, int64_t)> cmp;
  auto elem = [&](int64_t slice, int64_t o, int64_t e) { return (o * n + slice) * inner + e; };
  if (x->dtype() == DataType::String) {
    cmp = [&](int64_t a, int64_t b) {
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t e = 0; e < inner; ++e) {
          int c = x->strings()[elem(a, o, e)].compare(x->strings()[elem(b, o, e)]);
          if (c)
            return c < 0 ? -1 : 1;
        }
      return 0;
    };
  } else {
    bool ok = visitNumeric(x->dtype(), [&]<typename T>() {
      cmp = [&](int64_t a, int64_t b) {
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t e = 0; e < inner; ++e) {
            auto va = widen(load<T>(x->rawData(), elem(a, o, e)));
            auto vb = widen(load<T>(x->rawData(), elem(b, o, e)));
            if (va < vb)
              return -1;
            if (vb < va)
              return 1;
          }
        return 0;
      };
    });
    if (!ok)
      return ctx.error("unsupported element type " + dataTypeName(x->dtype()));
  }
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return cmp(a, b) < 0; });
  // Groups of equal slices: representative = first occurrence.
  std::vector<int64_t> firsts, counts, groupOf(n);
  for (size_t i = 0; i < order.size(); ++i) {
    if (i == 0 || cmp(order[i - 1], order[i]) != 0) {
      firsts.push_back(order[i]);
      counts.push_back(0);
    }
    groupOf[order[i]] = static_cast<int64_t>(firsts.size()) - 1;
    ++counts.back();
  }
  auto groups = static_cast<int64_t>(firsts.size());
  std::vector<int64_t> rank(groups); // output position of each group
  std::iota(rank.begin(), rank.end(), 0);
  if (!sorted) {
    std::vector<int64_t> byFirst(groups);
    std::iota(byFirst.begin(), byFirst.end(), 0);
    std::sort(byFirst.begin(), byFirst.end(),
              [&](int64_t a, int64_t b) { return firsts[a] < firsts[b]; });
    for (int64_t p = 0; p < groups; ++p)
      rank[byFirst[p]] = p;
  }
  std::vector<int64_t> indices(groups), cnt(groups), inverse(n);
  for (int64_t g = 0; g < groups; ++g) {
    indices[rank[g]] = firsts[g];
    cnt[rank[g]] = counts[g];
  }
  for (int64_t i = 0; i < n; ++i)
    inverse[i] = rank[groupOf[i]];
  std::vector<int64_t> ydims = dims;
  ydims[axis] = groups;
  TensorBuilder yb(x->dtype(), ydims);
  size_t es = elementSize(x->dtype());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t p = 0; p < groups; ++p)
      for (int64_t e = 0; e < inner; ++e)
        copyElement(*x, elem(indices[p], o, e), yb, (o * groups + p) * inner + e, es);
  ctx.setOutput(0, yb.finish());
  ctx.setOutput(1, makeInt64({groups}, indices));
  ctx.setOutput(2, makeInt64({n}, inverse));
  ctx.setOutput(3, makeInt64({groups}, cnt));
  return Status::success();
}

} // namespace

void registerTensorSortKernels(OpRegistry &r) {
  r.add("TopK", 1, kLatestOpset, topKKernel);
  r.add("ArgMax", 1, kLatestOpset, argKernel<true>);
  r.add("ArgMin", 1, kLatestOpset, argKernel<false>);
  r.add("Unique", 11, kLatestOpset, uniqueKernel);
}

} // namespace onnxslim::rt
