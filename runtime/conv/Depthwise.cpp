//===- runtime/conv/Depthwise.cpp - Depthwise convolution -----------------===//
//
// Convolution with groups of one input channel (a channel multiplier up to
// 4), where a GEMM would have one row of K per group: a direct loop whose
// row step is a vector kernel of runtime/conv/Kernels.h.
//  - depthwisePadded (1-D/2-D): each input plane copied zero-padded (split
//    by column phase when strided, PaddedPlan), then one multiTapRow call
//    per output row, or per plane for narrow unit-stride rows fused into
//    one long row; on AVX-512, float rows of 3 taps at a column stride of
//    2, and wide ones at 1 of inputs larger than the caches, are read
//    straight from the input rows (depthwiseStride2Row, depthwiseStride1Row),
//    and narrow 3x3 planes at unit strides several rows at a time
//    (depthwiseNarrowRows). Threads take bands of output rows across all
//    planes when the planes are large, else whole planes.
//  - depthwiseConv (3-D or odd geometry): row by row, the taps whose input
//    row exists through multiTapRow, the edge outputs in scalar code.
//
//===----------------------------------------------------------------------===//
#include "runtime/ThreadPool.h"
#include "runtime/conv/Algorithms.h"
#include "runtime/conv/Common.h"
#include "runtime/conv/Kernels.h"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

namespace onnxslim::rt::nn {
namespace {

/// Output widths below which unit-stride rows are fused into one long row;
/// up to kFuseWideWidth when the plane is tall enough that its rows of
/// padding taps (which a fused plane multiplies by zero) are few: a call
/// per row of 80 to 160 outputs costs as much as the taps.
constexpr int64_t kFuseWidth = 64;
constexpr int64_t kFuseWideWidth = 256;

/// Fewest output rows of a depthwise band (each copies the kernel's halo
/// rows again), and fewest outputs per plane (each band sets up every
/// plane again, so many small planes split better by planes than by bands).
constexpr int64_t kMinBandRows = 4;
constexpr int64_t kMinBandOutputs = 512;


/// Fewest outputs a row of a 5x5 plane in strips (depthwiseStride1Rows5):
/// narrower rows leave too much of a vector empty, and run faster in
/// channel blocks.
constexpr int64_t kStrips5MinWidth = 14;

/// Fewest outputs of a unit-stride row read straight from the input
/// (narrower rows cost less fused into padded planes).
constexpr int64_t kFromInputWidth = 80;

/// Fewest input elements of a unit-stride depthwise convolution read
/// straight from its input (64K floats). Below, the padded copy costs
/// little. Above, inside a model, it costs more than the taps: its scratch
/// is cold when the layer runs (other layers used the caches since), so
/// the copy is a second pass over memory. An isolated layer, whose scratch
/// stays warm from run to run, hides that.
constexpr int64_t kFromInputMinElements = int64_t{1} << 16;

} // namespace

/// Depthwise convolution over a zero-padded copy of each input plane (see
/// planPadded): every output row is one multiTapRow call over all taps, with
/// no edge cases. With unit strides and narrow rows (see kFuseWidth), a
/// plane's rows are one call: output (oy, ox) and (oy + 1, ox) read every
/// tap one padded row apart, so the rows run as one long row of the padded
/// pitch into scratch, and the valid columns are copied out. With threads,
/// the tasks are bands of output rows across all planes when the planes are
/// large enough (the cut of the convolutions and products before and after
/// it: each core then reads what it wrote), else whole planes; a band copies
/// only the padded rows it reads.
template <typename C>
void depthwisePadded(const C *x, const C *w, const C *bias, C *y, int64_t N, int64_t Cin,
                     int64_t M, int64_t group, const Window::Dims3 &g, const PaddedPlan &p,
                     const Epilogue<C> &epilogue) {
  const int64_t Mg = M / group;
  const int64_t inS = g.in[1] * g.in[2], ow = g.out[2], oh = g.out[1], outS = oh * ow;
  const int64_t taps = g.kernel[1] * g.kernel[2];
  // Split once there is enough work, whatever its intensity: a depthwise
  // convolution does a few multiply-adds per element moved, but its planes
  // are independent and contiguous, so each thread streams its own.
  const int64_t work = N * Cin * Mg * outS * taps;
  const bool split = N * Cin * oh > 1 && depthwiseWorthSplitting(work);
  // 5x5 planes at unit strides from kStrips5MinWidth outputs a row run in
  // strips read straight from the input (depthwiseStride1Rows5), not in
  // channel blocks, whose transposes in and out cost a third of them.
  const bool strips5 = std::is_same_v<C, float> && g.in[0] == 1 && g.kernel[0] == 1 &&
                       g.kernel[1] == 5 && g.kernel[2] == 5 && g.strides[1] == 1 &&
                       g.strides[2] == 1 && g.dilations[1] == 1 && g.dilations[2] == 1 &&
                       g.padBegin[2] >= 0 && g.padBegin[2] <= 2 && ow >= kStrips5MinWidth &&
                       depthwiseRowsAvailable();
  if constexpr (std::is_same_v<C, float>)
    if (!strips5 && depthwiseBlockedFits(g, Cin, M, group))
      return depthwiseBlocked(x, w, bias, y, N, Cin, g, epilogue, split);
  const int64_t rowStep = g.strides[1] * p.rowPitch;
  const int64_t halo = p.rows - (oh - 1) * g.strides[1]; // padded rows one output row reads
  const int64_t kh = g.kernel[1], kw = g.kernel[2];
  const bool fused = g.strides[1] == 1 && p.phases.size() == 1 &&
                     (ow < kFuseWidth || (ow < kFuseWideWidth && oh >= 4 * kh));
  // A clamp alone is applied as the rows are stored; after a fused Add, the
  // epilogue does both over each plane's rows.
  // (Float only: StoreClamp's bounds are floats.)
  const StoreClamp sc{static_cast<float>(epilogue.lo), static_cast<float>(epilogue.hi)};
  const StoreClamp *clamp =
      std::is_same_v<C, float> && epilogue.clamps && !epilogue.addend ? &sc : nullptr;
  // Float rows of 3 taps are read straight from the input, with no padded
  // copy: at a column stride of 2 (depthwiseStride2Row: no phase-split
  // gather either), and at 1 from kFromInputWidth outputs a row when the
  // input has kFromInputMinElements (depthwiseStride1Row; otherwise the
  // copy costs little and fused rows less per row than one call each).
  const bool rowKernel = std::is_same_v<C, float> && kw == 3 && g.dilations[2] == 1 &&
                         kh <= kMaxFromInputRows && depthwiseRowsAvailable();
  const bool stride2 = rowKernel && g.strides[2] == 2;
  const bool stride1 = rowKernel && g.strides[2] == 1 && ow >= kFromInputWidth &&
                       N * Cin * inS >= kFromInputMinElements;
  auto *const rowKernelFor = stride1 ? depthwiseStride1Row : depthwiseStride2Row;
  // Narrow 3x3 planes at unit strides are read straight from the input as
  // well, several rows at a time (depthwiseNarrowRows): the padded copy,
  // the fused row's scratch and its copy out cost more than the taps.
  const bool narrow = std::is_same_v<C, float> && kh == 3 && kw == 3 && g.strides[1] == 1 &&
                      g.strides[2] == 1 && g.dilations[1] == 1 && g.dilations[2] == 1 &&
                      depthwiseNarrowFits(ow, g.in[2], g.padBegin[2]);
  // 3x3 at strides of 2 (both) take whole bands of a plane a call; at unit
  // strides, planes wider than the narrow kernel's, in strips.
  const bool stride2Plane = stride2 && kh == 3 && g.strides[1] == 2 && g.dilations[1] == 1 &&
                            (g.padBegin[2] == 0 || g.padBegin[2] == 1);
  const bool strips = std::is_same_v<C, float> && !narrow && kh == 3 && kw == 3 &&
                      g.strides[1] == 1 && g.strides[2] == 1 && g.dilations[1] == 1 &&
                      g.dilations[2] == 1 && (g.padBegin[2] == 0 || g.padBegin[2] == 1) &&
                      depthwiseRowsAvailable();
  auto fromInput = [&](int64_t n, int64_t ci, int64_t oy0, int64_t oy1) {
    if constexpr (std::is_same_v<C, float>) {
      const float *plane = x + (n * Cin + ci) * inS;
      const float *in[kMaxFromInputRows];
      for (int64_t m = ci * Mg; m < (ci + 1) * Mg; ++m) {
        C *yo = y + (n * M + m) * outS + oy0 * ow;
        if (stride2Plane &&
            depthwiseStride2Rows(oy0, oy1, ow, g.in[1], g.in[2], g.padBegin[1], g.padBegin[2],
                                 plane, w + m * taps, bias ? bias[m] : 0.0f, yo, clamp)) {
          if (!clamp)
            epilogue(yo, (oy1 - oy0) * ow);
          continue;
        }
        for (int64_t oy = oy0; oy < oy1; ++oy) {
          for (int64_t ky = 0; ky < kh; ++ky) {
            const int64_t iy = oy * g.strides[1] + ky * g.dilations[1] - g.padBegin[1];
            in[ky] = iy >= 0 && iy < g.in[1] ? plane + iy * g.in[2] : nullptr;
          }
          rowKernelFor(ow, g.in[2], g.padBegin[2], kh, in, w + m * taps, bias ? bias[m] : 0.0f,
                       yo + (oy - oy0) * ow, clamp);
        }
        if (!clamp)
          epilogue(yo, (oy1 - oy0) * ow);
      }
    }
  };
  auto fromNarrow = [&](int64_t n, int64_t ci, int64_t oy0, int64_t oy1) {
    if constexpr (std::is_same_v<C, float>) {
      const float *plane = x + (n * Cin + ci) * inS;
      for (int64_t m = ci * Mg; m < (ci + 1) * Mg; ++m) {
        C *yo = y + (n * M + m) * outS + oy0 * ow;
        if (strips5)
          depthwiseStride1Rows5(oy0, oy1, ow, g.in[1], g.in[2], g.padBegin[1], g.padBegin[2],
                                plane, w + m * taps, bias ? bias[m] : 0.0f, yo, clamp);
        else if (strips)
          depthwiseStride1Rows(oy0, oy1, ow, g.in[1], g.in[2], g.padBegin[1], g.padBegin[2],
                               plane, w + m * taps, bias ? bias[m] : 0.0f, yo, clamp);
        else
          depthwiseNarrowRows(oy0, oy1, ow, g.in[1], g.in[2], g.padBegin[1], g.padBegin[2],
                              plane, w + m * taps, bias ? bias[m] : 0.0f, yo, clamp);
        if (!clamp)
          epilogue(yo, (oy1 - oy0) * ow);
      }
    }
  };
  // Output rows [oy0, oy1) of the outputs of input plane (n, ci).
  auto rows = [&](int64_t n, int64_t ci, int64_t oy0, int64_t oy1) {
    if (narrow || strips || strips5)
      return fromNarrow(n, ci, oy0, oy1);
    if (stride2 || stride1)
      return fromInput(n, ci, oy0, oy1);
    C *buf = scratch<C, 2>(((oy1 - oy0 - 1) * g.strides[1] + halo) * p.rowPitch);
    C *tmp = fused ? scratch<C, 3>((oy1 - oy0) * p.rowPitch) : nullptr;
    // The tap pointers: on the stack for the usual kernels (up to 7x7).
    const C *onStack[49];
    std::vector<const C *> onHeap(taps > 49 ? static_cast<size_t>(taps) : 0);
    const C **ptrs = taps > 49 ? onHeap.data() : onStack;
    C weightsOnStack[49];
    std::vector<C> weightsOnHeap(taps > 49 ? static_cast<size_t>(taps) : 0);
    C *liveWeights = taps > 49 ? weightsOnHeap.data() : weightsOnStack;
    fillPaddedRows(x + (n * Cin + ci) * inS, g, p, oy0 * g.strides[1],
                   (oy1 - 1) * g.strides[1] + halo, buf);
    for (int64_t m = ci * Mg; m < (ci + 1) * Mg; ++m) {
      const C *wk = w + m * taps;
      const C b = bias ? bias[m] : C(0);
      C *yo = y + (n * M + m) * outS + oy0 * ow;
      if (fused) {
        for (int64_t t = 0; t < taps; ++t)
          ptrs[t] = buf + p.tapRel[t];
        multiTapRow((oy1 - oy0 - 1) * p.rowPitch + ow, taps, ptrs, wk, b, tmp, clamp);
        for (int64_t oy = 0; oy < oy1 - oy0; ++oy)
          std::memcpy(yo + oy * ow, tmp + oy * p.rowPitch, sizeof(C) * static_cast<size_t>(ow));
      } else
        for (int64_t oy = 0; oy < oy1 - oy0; ++oy) {
          // Taps in rows of the padding add zeros: only the others run (in
          // order: the sum is the same, and that much less work for short
          // planes with tall kernels).
          const C *base = buf + oy * rowStep;
          const int64_t iy0 = (oy0 + oy) * g.strides[1] - g.padBegin[1];
          int64_t live = 0;
          for (int64_t ky = 0, t = 0; ky < kh; ++ky) {
            const int64_t iy = iy0 + ky * g.dilations[1];
            if (iy < 0 || iy >= g.in[1]) {
              t += kw;
              continue;
            }
            for (int64_t kx = 0; kx < kw; ++kx, ++t) {
              ptrs[live] = base + p.tapRel[t];
              liveWeights[live++] = wk[t];
            }
          }
          multiTapRow(ow, live, ptrs, live == taps ? wk : liveWeights, b, yo + oy * ow, clamp);
        }
      if (!clamp)
        epilogue(yo, (oy1 - oy0) * ow);
    }
  };
  // The most bands (up to four per thread) that keep kMinBandRows rows and
  // about kMinBandOutputs outputs of a plane each; bands from one per
  // thread (split by planes, each core would read half its input from the
  // other's cache). A whole number of bands per thread, so that no core
  // idles while another runs the last band.
  int64_t bands = 0;
  if (split && outS >= kChannelSplitPlane) {
    bands = std::min<int64_t>({4 * threadCount(), oh / kMinBandRows, oh * ow / kMinBandOutputs});
    bands -= bands % threadCount();
  }
  if (split && bands >= threadCount()) {
    const int64_t step = (oh + bands - 1) / bands;
    parallelFor((oh + step - 1) / step, [&](int64_t b) {
      for (int64_t plane = 0; plane < N * Cin; ++plane)
        rows(plane / Cin, plane % Cin, b * step, std::min(oh, (b + 1) * step));
    });
  } else if (split)
    parallelFor(N * Cin, [&](int64_t plane) { rows(plane / Cin, plane % Cin, 0, oh); });
  else
    for (int64_t plane = 0; plane < N * Cin; ++plane)
      rows(plane / Cin, plane % Cin, 0, oh);
}

/// Direct convolution for groups of one input channel (depthwise). Each
/// output row is one multiTapRow call over the taps whose input row exists
/// (strided taps are first gathered into contiguous rows); the few outputs
/// at the left/right edges, where some taps fall into the padding, are
/// summed in scalar code in the same tap order.
template <typename C>
void depthwiseConv(const C *x, const C *w, const C *bias, C *y, int64_t N, int64_t Cin, int64_t M,
                   int64_t group, const Window::Dims3 &g, const Epilogue<C> &epilogue) {
  const int64_t Mg = M / group;
  const int64_t inS = g.in[0] * g.in[1] * g.in[2], outS = g.out[0] * g.out[1] * g.out[2];
  const int64_t kS = g.kernel[0] * g.kernel[1] * g.kernel[2];
  const int64_t ow = g.out[2], sx = g.strides[2];
  std::vector<int64_t> los(static_cast<size_t>(g.kernel[2])), his(los.size()), offs(los.size());
  for (int64_t kx = 0; kx < g.kernel[2]; ++kx) {
    offs[kx] = kx * g.dilations[2] - g.padBegin[2];
    validRange(offs[kx], sx, g.in[2], ow, los[kx], his[kx]);
  }
  std::vector<const C *> rowOf(static_cast<size_t>(kS)), ptrs(rowOf.size());
  std::vector<int64_t> tapLo(rowOf.size()), tapHi(rowOf.size()), tapOff(rowOf.size());
  std::vector<C> wts(rowOf.size());
  C *gathered = sx == 1 ? nullptr : scratch<C, 2>(kS * ow);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m) {
      const C *xin = x + (n * Cin + m / Mg) * inS;
      const C *wk = w + m * kS;
      C *yo = y + (n * M + m) * outS;
      C b = bias ? bias[m] : C(0);
      for (int64_t oz = 0; oz < g.out[0]; ++oz)
        for (int64_t oy = 0; oy < g.out[1]; ++oy) {
          C *yrow = yo + (oz * g.out[1] + oy) * ow;
          int64_t taps = 0, L = 0, H = ow;
          for (int64_t kz = 0; kz < g.kernel[0]; ++kz) {
            int64_t iz = oz * g.strides[0] + kz * g.dilations[0] - g.padBegin[0];
            if (iz < 0 || iz >= g.in[0])
              continue;
            for (int64_t ky = 0; ky < g.kernel[1]; ++ky) {
              int64_t iy = oy * g.strides[1] + ky * g.dilations[1] - g.padBegin[1];
              if (iy < 0 || iy >= g.in[1])
                continue;
              const C *srow = xin + (iz * g.in[1] + iy) * g.in[2];
              for (int64_t kx = 0; kx < g.kernel[2]; ++kx, ++taps) {
                wts[taps] = wk[(kz * g.kernel[1] + ky) * g.kernel[2] + kx];
                if (sx == 1) {
                  // Tap input for output ox is srow[ox + off], valid on [lo, hi).
                  rowOf[taps] = srow;
                  tapOff[taps] = offs[kx];
                  tapLo[taps] = los[kx];
                  tapHi[taps] = his[kx];
                } else {
                  // Gather the strided samples; zeros where they fall outside.
                  C *dst = gathered + taps * ow;
                  std::fill(dst, dst + ow, C(0));
                  for (int64_t ox = los[kx]; ox < his[kx]; ++ox)
                    dst[ox] = srow[ox * sx + offs[kx]];
                  rowOf[taps] = dst;
                  tapOff[taps] = 0;
                  tapLo[taps] = 0;
                  tapHi[taps] = ow;
                }
                L = std::max(L, tapLo[taps]);
                H = std::min(H, tapHi[taps]);
              }
            }
          }
          if (H < L)
            H = L;
          if (H > L) {
            for (int64_t t = 0; t < taps; ++t)
              ptrs[t] = rowOf[t] + tapOff[t] + L;
            multiTapRow(H - L, taps, ptrs.data(), wts.data(), b, yrow + L);
          }
          auto edge = [&](int64_t ox) {
            C acc = 0;
            for (int64_t t = 0; t < taps; ++t)
              if (ox >= tapLo[t] && ox < tapHi[t])
                acc += wts[t] * rowOf[t][ox + tapOff[t]];
            yrow[ox] = acc + b;
          };
          for (int64_t ox = 0; ox < L; ++ox)
            edge(ox);
          for (int64_t ox = H; ox < ow; ++ox)
            edge(ox);
        }
      epilogue(yo, outS);
    }
}

template void depthwisePadded<float>(const float *, const float *, const float *, float *, int64_t,
                                    int64_t, int64_t, int64_t, const Window::Dims3 &,
                                    const PaddedPlan &, const Epilogue<float> &);
template void depthwisePadded<double>(const double *, const double *, const double *, double *, int64_t,
                                    int64_t, int64_t, int64_t, const Window::Dims3 &,
                                    const PaddedPlan &, const Epilogue<double> &);
template void depthwiseConv<float>(const float *, const float *, const float *, float *, int64_t,
                                  int64_t, int64_t, int64_t, const Window::Dims3 &,
                                  const Epilogue<float> &);
template void depthwiseConv<double>(const double *, const double *, const double *, double *, int64_t,
                                  int64_t, int64_t, int64_t, const Window::Dims3 &,
                                  const Epilogue<double> &);

} // namespace onnxslim::rt::nn
