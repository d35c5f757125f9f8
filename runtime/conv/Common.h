//===- runtime/conv/Common.h - What every convolution shares ---*- C++ -*-===//
//
// The pieces the convolution algorithms of runtime/conv/ share: per-thread
// scratch buffers, the fused epilogue (an Add of a value computed before
// the convolution, then a Relu/Clip clamp, bit-identical to the nodes run
// apart), the zero-padded, phase-split copy of input planes that the
// depthwise, direct and im2col paths read (PaddedPlan), the filters kept
// packed in a node's state (PackedFilters), and the budgets that size
// chunks and the split across threads. An internal header of
// runtime/conv/*.cpp and runtime/kernels/Conv.cpp.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/ElementwiseChain.h"
#include "runtime/Kernel.h"
#include "runtime/ThreadPool.h"
#include "runtime/kernels/NNCommon.h"

#include <xsimd/xsimd.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace onnxslim::rt::nn {

/// Filters packed for a direct product (packDirectFilters, group by group),
/// with what they were packed from: w, its geometry and the engine whose
/// panels they are in.
struct PackedFilters {
  const float *source = nullptr;
  int64_t group = 0, Mg = 0, rows = 0;
  std::string engine;
  /// Which layout `data` holds: the direct product's row panels of filters
  /// (false), or the filters transposed into the GEMM's packed-B panels
  /// (pointwiseTransposed).
  bool transposed = false;
  /// Parts of K the transposed layout is packed in, part after part
  /// (pointwiseKParts).
  int64_t parts = 1;
  std::vector<float, xsimd::aligned_allocator<float, 64>> data;
  /// The filters cut to their live taps (convForward), and what from.
  const float *liveFrom = nullptr;
  std::vector<int64_t> liveKernel;
  std::vector<float> live;

  /// Whether `data` holds w's filters (group groups of Mg x rows) packed in
  /// that layout for the current engine; if not, Execute: resizes `data` to
  /// n elements and records those filters as what it will hold (the caller
  /// then packs them).
  bool holds(const float *w, int64_t groups, int64_t mg, int64_t r, bool isTransposed,
             int64_t n, int64_t inParts = 1);
};

/// Given filters read as a K x M matrix (element (k, m) at w[m * mStride +
/// k * kStride]: input channels by output channels), Execute: writes it
/// into `packed` as the GEMM's B panels (gemmPanelWidth<float>() columns
/// each, zero past M), for a product that multiplies positions by filters.
void packFilterColumns(const float *w, int64_t mStride, int64_t kStride, int64_t M, int64_t K,
                       float *packed);

/// Elements of the im2col/col2im buffer built at a time (a few MB).
constexpr int64_t kColumnBudget = int64_t{1} << 20;

/// Fewest GEMM columns of a chunk cut to kConvColumnBudget (the GEMM engine's
/// column block, so that A is not packed more often than in one big call).
constexpr int64_t kMinChunkColumns = 2048;

/// Fewest GEMM columns of a chunk cut smaller for threads.
constexpr int64_t kMinThreadColumns = 128;

/// Output planes smaller than this many elements are split across threads
/// by channels (depthwise: whole planes; pointwise: blocks of output
/// channels), larger ones by rows or columns. Either way each core's part
/// of a tensor is the part it wrote in the layer before, and with channels
/// one contiguous range: cut into bands of a small plane's rows, a core's
/// part was many short runs, and the runs the other core wrote next to
/// them (which its prefetches reach) crossed between the two core
/// complexes of the bench machine. Larger planes keep their rows and
/// columns: split by channels, they ran slower (figures: bench/conv_notes.md).
constexpr int64_t kChannelSplitPlane = 4096;

/// A depthwise convolution splits from a sixteenth of the multiply-adds of
/// other products (worthSplitting's threshold over this): it sits between
/// pointwise convolutions that split, and one that stays on the caller's
/// core reads half its input from the other's caches, and the next reads
/// half of its output back. From a quarter, mobile networks' stride-2 and
/// 7x7 layers ran on one core and took as long on two threads as on one,
/// or longer.
constexpr int64_t kDepthwiseSplitBoost = 16;

/// Given a depthwise convolution's multiply-adds, Result: whether to split it.
inline bool depthwiseWorthSplitting(int64_t multiplyAdds) {
  return worthSplitting(multiplyAdds * kDepthwiseSplitBoost,
                        multiplyAdds * kDepthwiseSplitBoost / kParallelMinIntensity);
}

inline int64_t ceilDiv(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

/// The output positions [lo, hi) of a row for which input index
/// pos * stride + offset lies in [0, extent).
inline void validRange(int64_t offset, int64_t stride, int64_t extent, int64_t count, int64_t &lo,
                       int64_t &hi) {
  lo = offset >= 0 ? 0 : ceilDiv(-offset, stride);
  hi = extent - offset <= 0 ? 0 : ceilDiv(extent - offset, stride);
  lo = std::min(lo, count);
  hi = std::clamp(hi, lo, count);
}

/// A per-thread scratch buffer of at least n elements (contents undefined),
/// reused across calls so that big column matrices are not reallocated,
/// zeroed and page-faulted for every convolution.
template <typename C, int Slot = 0> C *scratch(int64_t n) {
  // 64-byte aligned: the GEMM micro-kernels load packed panels with aligned loads.
  thread_local std::vector<C, xsimd::aligned_allocator<C, 64>> buffer;
  if (static_cast<int64_t>(buffer.size()) < n)
    buffer.resize(static_cast<size_t>(n));
  return buffer.data();
}

/// p[i] = clamp(p[i]) for i < n, as ClipF in ElementwiseUnary.cpp computes
/// it (x < lo ? lo : x, then > hi ? hi : that; NaN passes), so a fused
/// Conv + Clip/Relu is bit-identical to the two nodes run apart.
template <typename C> void clampSpan(C *p, int64_t n, C lo, C hi) {
  if constexpr (std::is_same_v<C, float>) {
    clampFloats(p, n, lo, hi); // AVX-512 where the GEMM engine is
    return;
  }
  int64_t i = 0;
  if constexpr (std::is_same_v<C, float> || std::is_same_v<C, double>) {
    using B = xsimd::batch<C>;
    constexpr int64_t W = static_cast<int64_t>(B::size);
    const B vlo(lo), vhi(hi);
    for (; i + W <= n; i += W) {
      B x = B::load_unaligned(p + i);
      B y = xsimd::select(x < vlo, vlo, x);
      xsimd::select(y > vhi, vhi, y).store_unaligned(p + i);
    }
  }
  for (; i < n; ++i) {
    C y = p[i] < lo ? lo : p[i];
    p[i] = y > hi ? hi : y;
  }
}

/// What a fused Add and activation do to the output, in the compute type:
/// y += z at the same position of the addend z (as the Add kernel
/// computes it), then the clamp; nothing when neither was fused.
template <typename C> struct Epilogue {
  bool clamps = false;
  C lo = 0, hi = 0;
  const C *addend = nullptr; ///< element i of the output's addend
  const C *base = nullptr;   ///< the output
  Epilogue(const KernelContext::OutputClamp *c, const C *z, const C *y) : addend(z), base(y) {
    if (c) {
      clamps = true;
      lo = static_cast<C>(c->lo);
      hi = static_cast<C>(c->hi);
    }
  }
  bool on() const { return clamps || addend; }
  /// Given n outputs at p (inside the output), Execute: applies both.
  void operator()(C *p, int64_t n) const {
    if (addend) {
      const C *z = addend + (p - base);
      if constexpr (std::is_same_v<C, float>)
        addFloats(p, z, n); // AVX-512 where the GEMM engine is
      else
        for (int64_t i = 0; i < n; ++i)
          p[i] = p[i] + z[i];
    }
    if (clamps)
      clampSpan(p, n, lo, hi);
  }
};

/// Grid rows per chunk so that rows x (chunk rows x width) stays in budget.
int64_t chunkRows(int64_t matrixRows, int64_t width, int64_t gridRows);

/// The layout of a zero-padded input plane (depthwisePadded, im2colFromPadded):
/// every input row is stored zero-padded and split by column phase (input
/// column modulo the x stride), so that each kernel tap reads a contiguous
/// run of the buffer for a whole output row.
struct PaddedPlan {
  int64_t rows = 0;            ///< padded rows kept (those some output row reads)
  int64_t phaseLen = 0;        ///< elements per phase row (ow + largest tap shift)
  int64_t rowPitch = 0;        ///< phases * phaseLen
  std::vector<int64_t> phases; ///< distinct column phases, in first-use order
  /// Per phase: element j of a phase row is input column j * sx + offset,
  /// inside the input for j in [lo, hi).
  std::vector<int64_t> offset, lo, hi;
  std::vector<int64_t> tapRel; ///< per tap (ky, kx): offset from the output row's base
};

/// Plans the padded-plane layout for a 1-D/2-D geometry; false when the
/// geometry is 3-D, has many column phases, or the plane would be much
/// larger than the input and output planes (huge pads, strides or
/// dilations), in which case the callers fall back to their direct paths.
bool planPadded(const Window::Dims3 &g, PaddedPlan &p);

/// dst[j] = src[2 * j] for j < n (gatherEvenFloats for float).
template <typename C> inline void gatherEven(const C *src, int64_t n, C *dst) {
  if constexpr (std::is_same_v<C, float>) {
    gatherEvenFloats(src, n, dst);
    return;
  }
  for (int64_t j = 0; j < n; ++j)
    dst[j] = src[2 * j];
}

/// p[0 .. n) = 0, inline for the one or two columns of a row's padding
/// (std::fill became a call to memset per row end: 5% of a depthwise layer).
template <typename C> inline void zeroShort(C *p, int64_t n) {
  if (n <= 2) {
    if (n > 0)
      p[0] = C(0);
    if (n > 1)
      p[1] = C(0);
    return;
  }
  std::fill(p, p + n, C(0));
}

/// Writes one input plane into the padded, phase-split buffer of `p`.
template <typename C>
void fillPaddedRows(const C *plane, const Window::Dims3 &g, const PaddedPlan &p, int64_t r0,
                    int64_t r1, C *buf) {
  const int64_t sx = g.strides[2], iw = g.in[2];
  for (int64_t r = r0; r < r1; ++r) {
    C *dst = buf + (r - r0) * p.rowPitch;
    int64_t iy = r - g.padBegin[1];
    if (iy < 0 || iy >= g.in[1]) {
      std::fill(dst, dst + p.rowPitch, C(0));
      continue;
    }
    const C *src = plane + iy * iw;
    for (size_t ph = 0; ph < p.phases.size(); ++ph, dst += p.phaseLen) {
      const int64_t off = p.offset[ph], lo = p.lo[ph], hi = p.hi[ph];
      zeroShort(dst, lo);
      if (sx == 1)
        std::memcpy(dst + lo, src + lo + off, sizeof(C) * static_cast<size_t>(hi - lo));
      else if (sx == 2)
        gatherEven(src + 2 * lo + off, hi - lo, dst + lo);
      else
        for (int64_t j = lo; j < hi; ++j)
          dst[j] = src[j * sx + off];
      zeroShort(dst + hi, p.phaseLen - hi);
    }
  }
}

template <typename C>
void fillPadded(const C *plane, const Window::Dims3 &g, const PaddedPlan &p, C *buf) {
  fillPaddedRows(plane, g, p, 0, p.rows, buf);
}

} // namespace onnxslim::rt::nn
