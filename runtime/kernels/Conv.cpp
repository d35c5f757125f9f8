//===- runtime/kernels/Conv.cpp - Conv, ConvTranspose, Col2Im -------------===//
//
// Convolutions over 1-D, 2-D and 3-D inputs (geometry padded to 3-D):
//
//  - Conv: groups, dilations, strides, pads, auto_pad. A 1x1 kernel with unit
//    strides and no padding is one GEMM per (image, group) straight on X,
//    or, in float when it reduces channels or has at most 16 inputs, a
//    direct product over X's planes (no packed copy of X; pointwiseDirect).
//    Single-channel groups (depthwise, with a channel multiplier up to 4)
//    run a direct loop over a zero-padded copy of each input plane, split
//    by column phase for strided convolutions (PaddedPlan): one multiTapRow
//    call (vectorized, run-time ISA dispatch) per output row, or per plane
//    for narrow unit-stride rows; on AVX-512, float rows of 3 taps at a
//    column stride of 2, and wide ones at 1 of inputs larger than the
//    caches, are read straight from the input rows (depthwiseStride2Row,
//    depthwiseStride1Row); 3-D or odd geometry takes a row-by-row loop with
//    scalar edges; narrow 3x3 planes at unit strides are read straight from
//    the input too, several rows at a time (depthwiseNarrowRows). Float 3x3
//    convolutions at unit strides with 16 or more channels each way run as
//    Winograd F(2x2, 3x3) products (convWinograd: 16 direct products of the
//    transformed filters, kept transformed in the node's state for a
//    constant W, by the transformed input patches). Planes under
//    kChannelSplitPlane elements are split across threads by channels,
//    larger ones by rows or columns. Other float 1-D/2-D convolution at
//    strides 1 and 2 is a direct product over zero-padded (phase-split when
//    strided) copies of the input planes, a band of output rows at a time
//    (convProductDirect in
//    runtime/Gemm.h: each row of the virtual column matrix is a plane read
//    at a tap's offset, so no column matrix is written); at stride 2 only
//    when its rows waste few columns. The direct products' filters are
//    packed into the engine's row panels; a constant W stays packed in the
//    node's state from one run to the next (PackedFilters). Everything else
//    is im2col + GEMM, the column
//    matrix written directly in the GEMM engine's packed-B panel layout (no
//    second copy) for a few output rows at a time (sized for L2), from the
//    same padded planes when they fit. The bias is added after the product,
//    as ONNX Runtime does, so roundings follow the same sequence (the GEMM
//    adds it as it stores its results).
//  - ConvTranspose: output_padding, output_shape, groups, dilations,
//    auto_pad; col = W^T * X by GEMM, then scattered into Y (col2im), also in
//    bounded chunks.
//  - Col2Im (opset 18): the col2im scatter on its own.
//
// Float16/bfloat16 compute in float, double in double. Shapes and attributes
// are validated (channel counts, kernel vs padded input, pads, strides) and
// reported as errors before any loop runs.
//
//===----------------------------------------------------------------------===//
#include "runtime/ElementwiseChain.h"
#include "runtime/Gemm.h"
#include "runtime/Kernel.h"
#include "runtime/ThreadPool.h"
#include "runtime/conv/Kernels.h"
#include "runtime/kernels/Dispatch.h"
#include "runtime/kernels/NNCommon.h"

#include <xsimd/xsimd.hpp>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include <algorithm>
#include <cstring>
#include <memory>
#include <type_traits>

namespace onnxslim::rt {
namespace nn {

/// Filters packed for a direct product (packDirectFilters, group by group),
/// with what they were packed from: w, its geometry and the engine whose
/// panels they are in.
struct PackedFilters {
  const float *source = nullptr;
  int64_t group = 0, Mg = 0, rows = 0;
  std::string engine;
  std::vector<float, xsimd::aligned_allocator<float, 64>> data;
};

std::shared_ptr<void> makePackedFilters() { return std::make_shared<PackedFilters>(); }

namespace {

/// Elements of the im2col/col2im buffer built at a time (a few MB).
constexpr int64_t kColumnBudget = int64_t{1} << 20;

/// Elements of a Conv column matrix chunk: small enough to stay in L2 between
/// its construction and the GEMM that reads it.
constexpr int64_t kConvColumnBudget = int64_t{1} << 17;

/// Fewest GEMM columns of a chunk cut to kConvColumnBudget (the GEMM engine's
/// column block, so that A is not packed more often than in one big call).
constexpr int64_t kMinChunkColumns = 2048;

/// Fewest GEMM columns of a chunk cut smaller for threads.
constexpr int64_t kMinThreadColumns = 128;

/// Elements of zero-padded input planes that im2col may stage (16 MB of floats).
constexpr int64_t kPaddedBudget = int64_t{1} << 22;

/// Elements of zero-padded input planes that a direct convolution may stage
/// for one output row (128 MB of floats): beyond that, im2col.
constexpr int64_t kDirectPaddedBudget = int64_t{1} << 25;

/// Elements of a direct convolution band's zero-padded planes (256 KB of
/// floats: with its output, the band stays in a core's L2 from its fill to
/// its product).
constexpr int64_t kDirectBandElements = int64_t{1} << 16;

/// Fewest virtual columns of a direct convolution band (each block of a
/// band re-reads the filters).
constexpr int64_t kDirectMinBandColumns = 1024;


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

/// dst[i] = src[i] for i < n: inline SIMD copies, for the short runs (a
/// panel's width or less) of the column matrices, where a call to memcpy
/// per run cost more than the copy.
template <typename C> inline void copyShort(C *dst, const C *src, int64_t n) {
  int64_t i = 0;
  if constexpr (std::is_same_v<C, float> || std::is_same_v<C, double>) {
    using B = xsimd::batch<C>;
    constexpr int64_t W = static_cast<int64_t>(B::size);
    for (; i + W <= n; i += W)
      B::load_unaligned(src + i).store_unaligned(dst + i);
  }
  for (; i < n; ++i)
    dst[i] = src[i];
}

/// Copies `len` elements of a column-matrix row that starts at column j into
/// the packed-B panels it spans (see im2colPacked).
template <typename C>
inline void scatterToPanels(const C *row, int64_t len, int64_t j, int64_t panelWidth,
                            int64_t panelStride, C *base) {
  int64_t o = j % panelWidth;
  C *dst = base + (j / panelWidth) * panelStride + o;
  for (int64_t ox = 0; ox < len;) {
    int64_t n = std::min(panelWidth - o, len - ox);
    copyShort(dst, row + ox, n);
    ox += n;
    dst += panelStride - o;
    o = 0;
  }
}

/// Builds the column matrix of `channels` image planes for grid rows
/// [r0, r0+nRows) (row (c, kz, ky, kx), column = grid position - r0 * width)
/// straight in the GEMM engine's packed-B layout of `panelWidth`-column
/// panels (see gemmPanelWidth), so that the product reads it without another
/// copy. Columns past the end are zero.
template <typename C>
void im2colPacked(const C *img, int64_t channels, const Window::Dims3 &g, int64_t r0,
                  int64_t nRows, int64_t panelWidth, C *dst) {
  const int64_t ow = g.out[2], cols = nRows * ow;
  const int64_t inS = g.in[0] * g.in[1] * g.in[2];
  const int64_t K = channels * g.kernel[0] * g.kernel[1] * g.kernel[2];
  const int64_t panelStride = K * panelWidth;
  C *row = scratch<C, 1>(ow);
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t kz = 0; kz < g.kernel[0]; ++kz)
      for (int64_t ky = 0; ky < g.kernel[1]; ++ky)
        for (int64_t kx = 0; kx < g.kernel[2]; ++kx) {
          int64_t kk = ((c * g.kernel[0] + kz) * g.kernel[1] + ky) * g.kernel[2] + kx;
          C *base = dst + kk * panelWidth;
          int64_t off = kx * g.dilations[2] - g.padBegin[2];
          int64_t lo, hi;
          validRange(off, g.strides[2], g.in[2], ow, lo, hi);
          for (int64_t r = r0; r < r0 + nRows; ++r) {
            int64_t oz = r / g.out[1], oy = r % g.out[1];
            int64_t iz = oz * g.strides[0] + kz * g.dilations[0] - g.padBegin[0];
            int64_t iy = oy * g.strides[1] + ky * g.dilations[1] - g.padBegin[1];
            if (iz < 0 || iz >= g.in[0] || iy < 0 || iy >= g.in[1]) {
              std::fill(row, row + ow, C(0));
            } else {
              const C *srow = img + c * inS + (iz * g.in[1] + iy) * g.in[2];
              std::fill(row, row + lo, C(0));
              std::fill(row + hi, row + ow, C(0));
              if (g.strides[2] == 1) {
                std::memcpy(row + lo, srow + lo + off, sizeof(C) * static_cast<size_t>(hi - lo));
              } else {
                for (int64_t ox = lo; ox < hi; ++ox)
                  row[ox] = srow[ox * g.strides[2] + off];
              }
            }
            scatterToPanels(row, ow, (r - r0) * ow, panelWidth, panelStride, base);
          }
        }
  if (int64_t tail = cols % panelWidth) {
    C *last = dst + (cols / panelWidth) * panelStride;
    for (int64_t kk = 0; kk < K; ++kk)
      std::fill(last + kk * panelWidth + tail, last + (kk + 1) * panelWidth, C(0));
  }
}

/// The adjoint of im2col: adds each column entry into the image element it
/// was read from (entries that fall into the padding are dropped).
template <typename C>
void col2imAdd(const C *col, int64_t channels, const Window::Dims3 &g, int64_t r0, int64_t nRows,
               C *img) {
  const int64_t ow = g.out[2], cols = nRows * ow;
  const int64_t inS = g.in[0] * g.in[1] * g.in[2];
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t kz = 0; kz < g.kernel[0]; ++kz)
      for (int64_t ky = 0; ky < g.kernel[1]; ++ky)
        for (int64_t kx = 0; kx < g.kernel[2]; ++kx) {
          const C *src =
              col + (((c * g.kernel[0] + kz) * g.kernel[1] + ky) * g.kernel[2] + kx) * cols;
          int64_t off = kx * g.dilations[2] - g.padBegin[2];
          int64_t lo, hi;
          validRange(off, g.strides[2], g.in[2], ow, lo, hi);
          for (int64_t r = r0; r < r0 + nRows; ++r) {
            int64_t oz = r / g.out[1], oy = r % g.out[1];
            int64_t iz = oz * g.strides[0] + kz * g.dilations[0] - g.padBegin[0];
            int64_t iy = oy * g.strides[1] + ky * g.dilations[1] - g.padBegin[1];
            if (iz < 0 || iz >= g.in[0] || iy < 0 || iy >= g.in[1])
              continue;
            const C *srow = src + (r - r0) * ow;
            C *drow = img + c * inS + (iz * g.in[1] + iy) * g.in[2];
            if (g.strides[2] == 1) {
              for (int64_t ox = lo; ox < hi; ++ox)
                drow[ox + off] += srow[ox];
            } else {
              for (int64_t ox = lo; ox < hi; ++ox)
                drow[ox * g.strides[2] + off] += srow[ox];
            }
          }
        }
}

/// Grid rows per chunk so that rows x (chunk rows x width) stays in budget.
int64_t chunkRows(int64_t matrixRows, int64_t width, int64_t gridRows) {
  int64_t perRow = std::max<int64_t>(1, matrixRows * width);
  return std::clamp<int64_t>(kColumnBudget / perRow, 1, std::max<int64_t>(gridRows, 1));
}

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
bool planPadded(const Window::Dims3 &g, PaddedPlan &p) {
  constexpr size_t kMaxPhases = 16;
  if (g.in[0] != 1 || g.kernel[0] != 1 || g.out[0] != 1 || g.padBegin[0] != 0)
    return false;
  const int64_t ow = g.out[2], sx = g.strides[2], kx = g.kernel[2], ky = g.kernel[1];
  // Kernel extents beyond the padded input (possible only in malformed
  // geometry) would overflow the arithmetic below.
  for (size_t d = 1; d < 3; ++d)
    if ((g.kernel[d] - 1) > (g.in[d] + g.padBegin[d] + g.padEnd[d]) / g.dilations[d])
      return false;
  int64_t maxShift = 0;
  std::vector<int64_t> phaseOf(static_cast<size_t>(kx)), shiftOf(phaseOf.size());
  for (int64_t k = 0; k < kx; ++k) {
    int64_t col = k * g.dilations[2];
    int64_t ph = col % sx;
    auto it = std::find(p.phases.begin(), p.phases.end(), ph);
    phaseOf[k] = it - p.phases.begin();
    if (it == p.phases.end()) {
      if (p.phases.size() == kMaxPhases)
        return false;
      p.phases.push_back(ph);
    }
    shiftOf[k] = col / sx;
    maxShift = std::max(maxShift, shiftOf[k]);
  }
  p.phaseLen = ow + maxShift;
  p.rowPitch = static_cast<int64_t>(p.phases.size()) * p.phaseLen;
  p.rows = (g.out[1] - 1) * g.strides[1] + (ky - 1) * g.dilations[1] + 1;
  const int64_t inS = g.in[1] * g.in[2], outS = g.out[1] * ow;
  if (p.rows <= 0 || p.rowPitch > (4 * (inS + outS) + 4096) / p.rows)
    return false;
  for (int64_t ph : p.phases) {
    int64_t off = ph - g.padBegin[2], lo, hi;
    validRange(off, sx, g.in[2], p.phaseLen, lo, hi);
    p.offset.push_back(off);
    p.lo.push_back(lo);
    p.hi.push_back(hi);
  }
  p.tapRel.clear();
  for (int64_t y = 0; y < ky; ++y)
    for (int64_t k = 0; k < kx; ++k)
      p.tapRel.push_back(y * g.dilations[1] * p.rowPitch + phaseOf[k] * p.phaseLen + shiftOf[k]);
  return true;
}

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

/// im2colPacked for 1-D/2-D geometry from `channels` padded planes (the
/// layout of planPadded, planes `planeSize` elements apart): every row of
/// the column matrix is then one contiguous run of a plane, copied straight
/// into the panels.
template <typename C>
void im2colFromPadded(const C *planes, int64_t planeSize, int64_t channels,
                      const Window::Dims3 &g, const PaddedPlan &p, int64_t r0, int64_t nRows,
                      int64_t panelWidth, C *dst) {
  const int64_t ow = g.out[2], cols = nRows * ow, kS = g.kernel[1] * g.kernel[2];
  const int64_t K = channels * kS, panelStride = K * panelWidth;
  const int64_t rowStep = g.strides[1] * p.rowPitch;
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t t = 0; t < kS; ++t) {
      C *base = dst + (c * kS + t) * panelWidth;
      const C *src = planes + c * planeSize + p.tapRel[t] + r0 * rowStep;
      for (int64_t r = 0; r < nRows; ++r, src += rowStep)
        scatterToPanels(src, ow, r * ow, panelWidth, panelStride, base);
    }
  if (int64_t tail = cols % panelWidth) {
    C *last = dst + (cols / panelWidth) * panelStride;
    for (int64_t kk = 0; kk < K; ++kk)
      std::fill(last + kk * panelWidth + tail, last + (kk + 1) * panelWidth, C(0));
  }
}

/// Output widths below which unit-stride rows are fused into one long row;
/// up to kFuseWideWidth when the plane is tall enough that its rows of
/// padding taps (which a fused plane multiplies by zero) are few: a call
/// per row of 80 to 160 outputs cost as much as the taps (face_back 0.85x,
/// mlsd_tiny 0.97x on one thread).
constexpr int64_t kFuseWidth = 64;
constexpr int64_t kFuseWideWidth = 256;

/// Fewest output rows of a depthwise band (each copies the kernel's halo
/// rows again), and fewest outputs per plane (each band sets up every
/// plane again: mlsd's 192 planes of 40x40 in bands took 1.3x as long on
/// two threads as on one, 0.8x split by planes).
constexpr int64_t kMinBandRows = 4;
constexpr int64_t kMinBandOutputs = 512;

/// Output planes smaller than this many elements are split across threads
/// by channels (depthwise: whole planes; pointwise: blocks of output
/// channels), larger ones by rows or columns. Either way each core's part
/// of a tensor is the part it wrote in the layer before, and with channels
/// one contiguous range: cut into bands of a small plane's rows, a core's
/// part was many short runs, and the runs the other core wrote next to
/// them (which its prefetches reach) crossed between the two core
/// complexes of the bench machine. Measured on two threads: eight
/// 576x32x32 depthwise layers 0.5x as long, three 96->576->depthwise->96
/// blocks at 32x32 0.84x, mlsd_tiny 0.98x (1.055 -> 1.034 of ONNX
/// Runtime's time); face_back's 128x128 stage, split by channels, took 1.3x
/// as long, so larger planes keep their rows and columns.
constexpr int64_t kChannelSplitPlane = 4096;

/// Most kernel rows of a depthwise convolution read straight from its
/// input rows (depthwiseStride2Row, depthwiseStride1Row).
constexpr int64_t kMaxFromInputRows = 7;
/// Fewest outputs of a unit-stride row read straight from the input (3x3
/// layers on one thread: 0.6x to 0.75x as long at 80 to 256 outputs, 1.3x
/// at 64 and 2.5x at 20, where fused padded rows cost less per row).
constexpr int64_t kFromInputWidth = 80;
/// Fewest input elements of a unit-stride depthwise convolution read
/// straight from its input (2 MB of floats; on two threads mlsd's 32x160x160
/// and 144x80x80 layers took 0.77x and 0.91x as long, face_back's
/// 24x128x128 ones, just written and still in cache, 1.07x to 1.6x).
constexpr int64_t kFromInputMinElements = int64_t{1} << 19;

/// A depthwise convolution splits from a quarter of the multiply-adds of
/// other products (worthSplitting's threshold over this): it sits between
/// pointwise convolutions that split, and one that stays on the caller's
/// core reads half its input from the other's caches, and the next reads
/// half of its output back (measured: face_back's 64x64 stage took 1.4x as
/// long on two threads as on one, 0.7x once its depthwise layers split).
constexpr int64_t kDepthwiseSplitBoost = 4;

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
  const int64_t taps = g.kernel[1] * g.kernel[2], rowStep = g.strides[1] * p.rowPitch;
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
  // gather either; mlsd's 96x160x160 layer took 0.4x as long on one
  // thread), and at 1 from kFromInputWidth outputs a row when the input is
  // larger than the caches hold (depthwiseStride1Row; otherwise the copy
  // costs little and fused rows less per row than one call each).
  const bool rowKernel = std::is_same_v<C, float> && kw == 3 && g.dilations[2] == 1 &&
                         kh <= kMaxFromInputRows && depthwiseRowsAvailable();
  const bool stride2 = rowKernel && g.strides[2] == 2;
  const bool stride1 = rowKernel && g.strides[2] == 1 && ow >= kFromInputWidth &&
                       N * Cin * inS >= kFromInputMinElements;
  auto *const rowKernelFor = stride1 ? depthwiseStride1Row : depthwiseStride2Row;
  // Narrow 3x3 planes at unit strides are read straight from the input as
  // well, several rows at a time (depthwiseNarrowRows): the padded copy,
  // the fused row's scratch and its copy out cost more than the taps
  // (eight 576x32x32 layers in a row took 0.54x as long on one thread).
  const bool narrow = std::is_same_v<C, float> && kh == 3 && kw == 3 && g.strides[1] == 1 &&
                      g.strides[2] == 1 && g.dilations[1] == 1 && g.dilations[2] == 1 &&
                      depthwiseNarrowFits(ow, g.in[2], g.padBegin[2]);
  auto fromInput = [&](int64_t n, int64_t ci, int64_t oy0, int64_t oy1) {
    if constexpr (std::is_same_v<C, float>) {
      const float *plane = x + (n * Cin + ci) * inS;
      const float *in[kMaxFromInputRows];
      for (int64_t m = ci * Mg; m < (ci + 1) * Mg; ++m) {
        C *yo = y + (n * M + m) * outS + oy0 * ow;
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
        depthwiseNarrowRows(oy0, oy1, ow, g.in[1], g.in[2], g.padBegin[1], g.padBegin[2], plane,
                            w + m * taps, bias ? bias[m] : 0.0f, yo, clamp);
        if (!clamp)
          epilogue(yo, (oy1 - oy0) * ow);
      }
    }
  };
  // Output rows [oy0, oy1) of the outputs of input plane (n, ci).
  auto rows = [&](int64_t n, int64_t ci, int64_t oy0, int64_t oy1) {
    if (narrow)
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
  // Split once there is enough work, whatever its intensity: a depthwise
  // convolution does a few multiply-adds per element moved, but its planes
  // are independent and contiguous, so each thread streams its own
  // (measured: mlsd's 96- and 144-channel layers at 160x160).
  const int64_t work = N * Cin * Mg * outS * taps;
  const bool split = N * Cin * oh > 1 &&
                     worthSplitting(work * kDepthwiseSplitBoost,
                                    work * kDepthwiseSplitBoost / kParallelMinIntensity);
  // The most bands (up to four per thread) that keep kMinBandRows rows and
  // about kMinBandOutputs outputs of a plane each; bands from one per
  // thread (face_front's 32x32 planes: split by planes, each core read half
  // its input from the other's cache, 0.7x once they split by rows).
  // A whole number of bands per thread (three bands on two threads left
  // one core idle for a third of mlsd's 144x80x80 stride-2 layer).
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

/// Convolution with at most kFewColumns output positions per image (a
/// frame of a 1-D signal, a tiny feature map): each position's receptive
/// field is gathered into one row (zeros in the padding), and every output
/// is a dot product of a filter row with it (gemmFewColumns), with no
/// packing of the filters.
template <typename C>
void convFewColumns(const C *x, const C *w, const C *bias, C *y, int64_t N, int64_t Cin,
                    int64_t M, int64_t group, const Window::Dims3 &g, const Epilogue<C> &epilogue) {
  const int64_t Cg = Cin / group, Mg = M / group;
  const int64_t kS = g.kernel[0] * g.kernel[1] * g.kernel[2], rows = Cg * kS;
  const int64_t inS = g.in[0] * g.in[1] * g.in[2], outS = g.out[0] * g.out[1] * g.out[2];
  std::vector<C> fields(static_cast<size_t>(outS * rows));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t gi = 0; gi < group; ++gi) {
      const C *xg = x + (n * Cin + gi * Cg) * inS;
      for (int64_t j = 0; j < outS; ++j) {
        const int64_t oz = j / (g.out[1] * g.out[2]), oy = j / g.out[2] % g.out[1],
                      ox = j % g.out[2];
        C *dst = fields.data() + j * rows;
        for (int64_t c = 0; c < Cg; ++c)
          for (int64_t kz = 0; kz < g.kernel[0]; ++kz)
            for (int64_t ky = 0; ky < g.kernel[1]; ++ky)
              for (int64_t kx = 0; kx < g.kernel[2]; ++kx) {
                const int64_t iz = oz * g.strides[0] + kz * g.dilations[0] - g.padBegin[0];
                const int64_t iy = oy * g.strides[1] + ky * g.dilations[1] - g.padBegin[1];
                const int64_t ix = ox * g.strides[2] + kx * g.dilations[2] - g.padBegin[2];
                const bool in = iz >= 0 && iz < g.in[0] && iy >= 0 && iy < g.in[1] && ix >= 0 &&
                                ix < g.in[2];
                *dst++ = in ? xg[c * inS + (iz * g.in[1] + iy) * g.in[2] + ix] : C(0);
              }
      }
      C *yg = y + (n * M + gi * Mg) * outS;
      gemmFewColumns(Mg, outS, rows, w + gi * Mg * rows, rows, fields.data(), rows, yg, outS,
                     bias ? bias + gi * Mg : nullptr);
      if (epilogue.on())
        for (int64_t m = 0; m < Mg; ++m)
          epilogue(yg + m * outS, outS);
    }
}

/// Given the filters w of a float convolution ([group * Mg, rows]),
/// Result: them packed for convProductDirect, group after group
/// (directFilterElements(Mg, rows) apart): from `kept` when it holds them
/// packed from the same w for the same geometry and engine, else packed
/// into `kept` (kept for the next call) or, without it, into scratch.
const float *directFilters(const float *w, int64_t group, int64_t Mg, int64_t rows,
                           PackedFilters *kept) {
  const int64_t size = directFilterElements(Mg, rows);
  const char *engine = gemmEngineName();
  if (kept && kept->source == w && kept->group == group && kept->Mg == Mg &&
      kept->rows == rows && kept->engine == engine)
    return kept->data.data();
  float *packed;
  if (!kept)
    packed = scratch<float, 4>(group * size);
  else {
    kept->data.resize(static_cast<size_t>(group * size));
    packed = kept->data.data();
    kept->source = w;
    kept->group = group;
    kept->Mg = Mg;
    kept->rows = rows;
    kept->engine = engine;
  }
  for (int64_t gi = 0; gi < group; ++gi)
    packDirectFilters(Mg, rows, w + gi * Mg * rows, rows, packed + gi * size);
  return packed;
}

/// Float 1-D/2-D convolution straight from zero-padded input planes (the
/// layout of planPadded, split by column phase when strided), with no
/// column matrix: row k = (c, tap) of the virtual column matrix is plane c
/// at the tap's offset, and output row oy starts oy * stride padded rows
/// in (convProductDirect). The output rows are cut into bands, each a
/// task that copies the padded rows its outputs read (its rows plus the
/// kernel's halo) into its own thread's planes and runs the product on
/// them, so the planes are still in that core's L2 when the product reads
/// them for every tap. A column's result does not depend on the bands, so
/// neither does the output on the thread count.
void convDirect(const float *x, const float *w, const float *bias, float *y, int64_t N,
                int64_t Cin, int64_t M, int64_t group, const Window::Dims3 &g,
                const PaddedPlan &plan, const Epilogue<float> &epilogue, PackedFilters *kept) {
  const int64_t Cg = Cin / group, Mg = M / group, kS = g.kernel[1] * g.kernel[2];
  const int64_t rows = Cg * kS, inS = g.in[1] * g.in[2], outS = g.out[1] * g.out[2];
  const int64_t oh = g.out[1], ow = g.out[2], pitch = plan.rowPitch, sy = g.strides[1];
  // Padded rows read by a band of n output rows: (n - 1) * sy + reach.
  const int64_t reach = plan.rows - (oh - 1) * sy;
  const int64_t filterSize = directFilterElements(Mg, rows);
  const float *filters = directFilters(w, group, Mg, rows, kept);
  // Bands within kDirectBandElements, of at least kDirectMinBandColumns;
  // with threads, at least four per thread (a late worker then leaves its
  // share to the others).
  int64_t bandRows =
      std::clamp<int64_t>(std::max((kDirectBandElements / (Cg * pitch) - reach) / sy + 1,
                                   (kDirectMinBandColumns + pitch - 1) / pitch),
                          1, oh);
  int64_t bands = (oh + bandRows - 1) / bandRows;
  const bool split = worthSplitting(N * M * rows * outS, N * (Cin * inS + M * outS));
  if (split)
    bands = std::max(bands, std::min<int64_t>(oh, 4 * threadCount()));
  bandRows = (oh + bands - 1) / bands;
  bands = (oh + bandRows - 1) / bandRows;
  // A clamp alone is applied as the product stores; after a fused Add, the
  // epilogue does both over the band's output.
  const bool clampInProduct = epilogue.clamps && !epilogue.addend;
  const StoreClamp sc{epilogue.lo, epilogue.hi};
  auto band = [&](int64_t task) {
    const int64_t b = task % bands, gi = task / bands % group, n = task / bands / group;
    const int64_t oy0 = b * bandRows, oy1 = std::min(oh, oy0 + bandRows);
    const int64_t bandIn = (oy1 - oy0 - 1) * sy + reach, planeSize = bandIn * pitch;
    // The product reads up to kConvDirectSlack elements past the last plane.
    float *planes = scratch<float, 2>(Cg * planeSize + kConvDirectSlack);
    std::fill(planes + Cg * planeSize, planes + Cg * planeSize + kConvDirectSlack, 0.0f);
    thread_local std::vector<int64_t> offsets;
    offsets.resize(static_cast<size_t>(rows));
    const float *xg = x + (n * Cin + gi * Cg) * inS;
    for (int64_t c = 0; c < Cg; ++c) {
      fillPaddedRows(xg + c * inS, g, plan, oy0 * sy, oy0 * sy + bandIn, planes + c * planeSize);
      for (int64_t t = 0; t < kS; ++t)
        offsets[static_cast<size_t>(c * kS + t)] = c * planeSize + plan.tapRel[t];
    }
    float *yb = y + (n * M + gi * Mg) * outS + oy0 * ow;
    convProductDirect(Mg, rows, filters + gi * filterSize, planes, offsets.data(), oy1 - oy0,
                      sy * pitch, ow, yb, outS,
                      bias ? bias + gi * Mg : nullptr, clampInProduct ? &sc : nullptr);
    if (epilogue.addend)
      for (int64_t m = 0; m < Mg; ++m)
        epilogue(yb + m * outS, (oy1 - oy0) * ow);
  };
  parallelForIf(split, N * group * bands, band);
}

/// Output tiles (2x2 outputs each) of a Winograd chunk, about: its 16
/// products are then GEMMs of a few hundred columns, and its transformed
/// inputs and products (16 x channels x tiles each) stay within a few MB.
constexpr int64_t kWinogradTiles = 256;

/// Fewest input and output channels of a convolution run as Winograd
/// products (below, the 16 products are too small for the GEMM).
constexpr int64_t kWinogradMinChannels = 16;

/// Whether a float convolution runs as Winograd F(2x2, 3x3)
/// (convWinograd): 2-D, 3x3, unit strides and dilations, one group, at
/// least kWinogradMinChannels channels in and out, planes of at least 8x8.
bool winogradFits(const Window::Dims3 &g, int64_t Cin, int64_t M, int64_t group) {
  return group == 1 && Cin >= kWinogradMinChannels && M >= kWinogradMinChannels &&
         g.kernel[0] == 1 && g.in[0] == 1 && g.kernel[1] == 3 && g.kernel[2] == 3 &&
         g.strides[1] == 1 && g.strides[2] == 1 && g.dilations[1] == 1 && g.dilations[2] == 1 &&
         g.out[1] >= 8 && g.out[2] >= 8;
}

/// fn(q, batch) for q = 0, W, 2W, ... while a whole batch of W fits in n,
/// then fn(q, 0.0f) for each q left: one body for both (see loadAt).
template <typename Fn> inline void forBatches(int64_t n, Fn &&fn) {
  using B = xsimd::batch<float>;
  constexpr int64_t W = static_cast<int64_t>(B::size);
  int64_t q = 0;
  for (; q + W <= n; q += W)
    fn(q, B(0.0f));
  for (; q < n; ++q)
    fn(q, 0.0f);
}
template <typename V> inline V loadAt(const float *p, int64_t q) {
  if constexpr (std::is_same_v<V, float>)
    return p[q];
  else
    return V::load_unaligned(p + q);
}
template <typename V> inline void storeAt(float *p, int64_t q, V v) {
  if constexpr (std::is_same_v<V, float>)
    p[q] = v;
  else
    v.store_unaligned(p + q);
}

/// The filters of convWinograd: U[xi] (M x Cin) = G g G^T at each position
/// xi of the transformed domain, G = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1],
/// packed for the direct product (convProductDirect) position by position.
/// Kept in `kept` (group -1 marks the Winograd form) for a constant W, and
/// taken from there while w, its shape and the engine are the same; else
/// computed into `local`.
const float *winogradFilters(const float *w, int64_t M, int64_t Cin, PackedFilters *kept,
                             std::vector<float, xsimd::aligned_allocator<float, 64>> &local) {
  const char *engine = gemmEngineName();
  if (kept && kept->source == w && kept->group == -1 && kept->Mg == M && kept->rows == Cin &&
      kept->engine == engine)
    return kept->data.data();
  std::vector<float> U(static_cast<size_t>(16 * M * Cin));
  for (int64_t m = 0; m < M; ++m)
    for (int64_t c = 0; c < Cin; ++c) {
      const float *k = w + (m * Cin + c) * 9;
      float t[4][3]; // G g
      for (int j = 0; j < 3; ++j) {
        t[0][j] = k[j];
        t[1][j] = 0.5f * (k[j] + k[3 + j] + k[6 + j]);
        t[2][j] = 0.5f * (k[j] - k[3 + j] + k[6 + j]);
        t[3][j] = k[6 + j];
      }
      for (int i = 0; i < 4; ++i) {
        const float u[4] = {t[i][0], 0.5f * (t[i][0] + t[i][1] + t[i][2]),
                            0.5f * (t[i][0] - t[i][1] + t[i][2]), t[i][2]};
        for (int j = 0; j < 4; ++j)
          U[static_cast<size_t>(((i * 4 + j) * M + m) * Cin + c)] = u[j];
      }
    }
  auto &data = kept ? kept->data : local;
  const int64_t size = directFilterElements(M, Cin);
  data.resize(static_cast<size_t>(16 * size));
  for (int64_t xi = 0; xi < 16; ++xi)
    packDirectFilters(M, Cin, U.data() + xi * M * Cin, Cin, data.data() + xi * size);
  if (kept) {
    kept->source = w;
    kept->group = -1;
    kept->Mg = M;
    kept->rows = Cin;
    kept->engine = engine;
  }
  return data.data();
}

/// A 3x3 convolution as Winograd's minimal filtering F(2x2, 3x3) (Lavin
/// and Gray, 2016): each 2x2 block of outputs is A^T [(G g G^T) . (B^T d B)] A
/// over its 4x4 input patch d, so a block costs 16 multiply-adds per input
/// channel instead of 36. For each of the 16 positions of the 4x4
/// transformed domain, the products over the channels are one GEMM of the
/// transformed filters (M x Cin) by the transformed patches (Cin x tiles).
/// Tasks are chunks of whole rows of tiles (kWinogradTiles about), the same
/// whatever the thread count, so results do not depend on it; each task
/// transforms its patches, runs its 16 products and writes its output rows
/// (then the bias, then the epilogue). The sums differ from the direct
/// product's in their last bits (the transforms round), as ONNX Runtime's
/// algorithms differ among themselves.
void convWinograd(const float *x, const float *w, const float *bias, float *y, int64_t N,
                  int64_t Cin, int64_t M, const Window::Dims3 &g, const Epilogue<float> &epilogue,
                  PackedFilters *kept) {
  const int64_t ih = g.in[1], iw = g.in[2], oh = g.out[1], ow = g.out[2];
  const int64_t padTop = g.padBegin[1], padLeft = g.padBegin[2];
  const int64_t inS = ih * iw, outS = oh * ow;
  const int64_t tilesH = (oh + 1) / 2, tilesW = (ow + 1) / 2;
  const int64_t packedSize = directFilterElements(M, Cin);
  std::vector<float, xsimd::aligned_allocator<float, 64>> local;
  const float *packed = winogradFilters(w, M, Cin, kept, local);
  // With threads, at least two chunks a thread where the rows of tiles
  // allow (a column's sums do not depend on its chunk's width).
  const bool split = worthSplitting(N * M * Cin * 9 * outS, N * (Cin * inS + M * outS));
  int64_t chunkRows = std::clamp<int64_t>(kWinogradTiles / tilesW, 1, tilesH);
  if (split)
    chunkRows = std::min(chunkRows, std::max<int64_t>(1, tilesH / (2 * threadCount())));
  const int64_t chunks = (tilesH + chunkRows - 1) / chunkRows;
  // A patch row's even and odd columns, padding included: padded column
  // 2k is input column 2k - padLeft.
  const int64_t half = tilesW + 1, padW = 2 * half;
  auto task = [&](int64_t k) {
    const int64_t n = k / chunks, ty0 = k % chunks * chunkRows;
    const int64_t ty1 = std::min(tilesH, ty0 + chunkRows), tiles = (ty1 - ty0) * tilesW;
    const int64_t bufRows = 2 * (ty1 - ty0) + 2;
    // The 16 transformed inputs (Cin x T each) and products (M x T), rows
    // of T (the tiles rounded up to whole column tiles of the direct
    // product, the columns past them zero), each 64 bytes further from a
    // multiple of 4 KB than the one before (16 streams at 4 KB strides
    // would share a set of the L1 cache).
    const int64_t tile = directColumnTile(), T = (tiles + tile - 1) / tile * tile;
    const int64_t strideV = Cin * T + 16, strideP = M * T + 16;
    float *V = scratch<float, 2>(16 * strideV + kConvDirectSlack);
    for (int64_t xi = 0; xi < 16; ++xi)
      for (int64_t c = 0; c < Cin; ++c)
        std::fill(V + xi * strideV + c * T + tiles, V + xi * strideV + (c + 1) * T, 0.0f);
    std::fill(V + 16 * strideV, V + 16 * strideV + kConvDirectSlack, 0.0f);
    thread_local std::vector<int64_t> offsets;
    offsets.resize(static_cast<size_t>(Cin));
    for (int64_t c = 0; c < Cin; ++c)
      offsets[static_cast<size_t>(c)] = c * T;
    float *P = scratch<float, 3>(16 * strideP);
    float *E = scratch<float, 4>(2 * bufRows * half + 8 * half + padW);
    float *O = E + bufRows * half, *tE = O + bufRows * half, *tO = tE + 4 * half;
    float *row = tO + 4 * half;
    // V[xi] = B^T d B at xi, B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]:
    // the row combinations over whole patch rows (even and odd columns
    // apart), then the column ones, in SIMD batches of tiles.
    for (int64_t c = 0; c < Cin; ++c) {
      const float *plane = x + (n * Cin + c) * inS;
      for (int64_t r = 0; r < bufRows; ++r) {
        const int64_t iy = 2 * ty0 + r - padTop;
        std::fill(row, row + padW, 0.0f);
        if (iy >= 0 && iy < ih)
          std::memcpy(row + padLeft, plane + iy * iw,
                      sizeof(float) * static_cast<size_t>(std::min(iw, padW - padLeft)));
        gatherEven(row, half, E + r * half);
        gatherEven(row + 1, half, O + r * half);
      }
      for (int64_t ty = ty0; ty < ty1; ++ty) {
        const int64_t r0 = 2 * (ty - ty0);
        for (int h = 0; h < 2; ++h) {
          const float *d = (h == 0 ? E : O) + r0 * half;
          float *t = h == 0 ? tE : tO;
          if (winogradRowCombos(d, half, half, t, half))
            continue;
          forBatches(half, [&](int64_t q, auto tag) {
            using Vt = decltype(tag);
            const Vt d0 = loadAt<Vt>(d, q), d1 = loadAt<Vt>(d + half, q),
                     d2 = loadAt<Vt>(d + 2 * half, q), d3 = loadAt<Vt>(d + 3 * half, q);
            storeAt<Vt>(t, q, d0 - d2);
            storeAt<Vt>(t + half, q, d1 + d2);
            storeAt<Vt>(t + 2 * half, q, d2 - d1);
            storeAt<Vt>(t + 3 * half, q, d1 - d3);
          });
        }
        float *v = V + c * T + (ty - ty0) * tilesW;
        for (int i = 0; i < 4; ++i) {
          const float *e = tE + i * half, *o = tO + i * half;
          float *v0 = v + 4 * i * strideV, *v1 = v0 + strideV, *v2 = v1 + strideV,
                *v3 = v2 + strideV;
          if (winogradColumnCombos(e, o, tilesW, v0, strideV))
            continue;
          forBatches(tilesW, [&](int64_t q, auto tag) {
            using Vt = decltype(tag);
            const Vt e0 = loadAt<Vt>(e, q), e1 = loadAt<Vt>(e + 1, q), o0 = loadAt<Vt>(o, q),
                     o1 = loadAt<Vt>(o + 1, q);
            storeAt<Vt>(v0, q, e0 - e1);
            storeAt<Vt>(v1, q, o0 + e1);
            storeAt<Vt>(v2, q, e1 - o0);
            storeAt<Vt>(v3, q, o0 - o1);
          });
        }
      }
    }
    for (int64_t xi = 0; xi < 16; ++xi)
      convProductDirect(M, Cin, packed + xi * packedSize, V + xi * strideV,
                        offsets.data(), 1, T, T, P + xi * strideP, T, nullptr, nullptr);
    // Y = A^T P A + bias, A^T = [1 1 1 0; 0 1 -1 -1]: a row of tiles' even
    // and odd outputs, then interleaved into the output row (columns and
    // rows past the output dropped).
    float *ev = E, *od = E + tilesW;
    const int64_t oy0 = 2 * ty0, oy1 = std::min(oh, 2 * ty1);
    for (int64_t m = 0; m < M; ++m) {
      const float b = bias ? bias[m] : 0.0f;
      float *ym = y + (n * M + m) * outS;
      for (int64_t ty = ty0; ty < ty1; ++ty) {
        const float *p = P + m * T + (ty - ty0) * tilesW;
        for (int64_t i = 0; i < 2 && 2 * ty + i < oh; ++i) {
          float *out = ym + (2 * ty + i) * ow;
          if (winogradOutputRow(p, strideP, static_cast<int>(i), tilesW, b, ow, out))
            continue;
          forBatches(tilesW, [&](int64_t q, auto tag) {
            using Vt = decltype(tag);
            auto at = [&](int xi) { return loadAt<Vt>(p + xi * strideP, q); };
            // s_j: row i of A^T P at column j.
            Vt sj[4];
            for (int j = 0; j < 4; ++j)
              sj[j] = i == 0 ? Vt(at(j) + at(4 + j) + at(8 + j))
                             : Vt(at(4 + j) - at(8 + j) - at(12 + j));
            storeAt<Vt>(ev, q, sj[0] + sj[1] + sj[2] + Vt(b));
            storeAt<Vt>(od, q, sj[1] - sj[2] - sj[3] + Vt(b));
          });
          using B = xsimd::batch<float>;
          constexpr int64_t W = static_cast<int64_t>(B::size);
          int64_t q = 0;
          for (; 2 * (q + W) <= ow; q += W) {
            const B e = B::load_unaligned(ev + q), o = B::load_unaligned(od + q);
            xsimd::zip_lo(e, o).store_unaligned(out + 2 * q);
            xsimd::zip_hi(e, o).store_unaligned(out + 2 * q + W);
          }
          for (; 2 * q < ow; ++q) {
            out[2 * q] = ev[q];
            if (2 * q + 1 < ow)
              out[2 * q + 1] = od[q];
          }
        }
      }
      epilogue(ym + oy0 * ow, (oy1 - oy0) * ow);
    }
  };
  parallelForIf(split, N * chunks, task);
}

/// Whether a pointwise product of M output and K input channels per group
/// runs as a direct product (pointwiseDirect) rather than a GEMM: when it
/// reduces channels or has very few (measured on mlsd's layers: the GEMM's
/// packing of B, a strided copy of the input, costs more than it saves
/// there; expansions reuse each packed panel for many rows and keep it).
bool pointwiseIsDirect(int64_t M, int64_t K, int64_t planeSize) {
  return planeSize >= directColumnTile() && (M <= K || K <= 16);
}

/// Pointwise float convolution (1x1 kernel, unit strides, no padding) as a
/// direct product over the input planes themselves (convProductDirect with
/// one output row: row c of the product's B is plane c), with no packed
/// copy of B. Tasks are pieces of whole column tiles (the product then
/// reads nothing past a plane) times blocks of whole row panels when the
/// pieces are too few for the threads; the last columns short of a tile go
/// through the GEMM, the same columns whatever the thread count, and no
/// column's result depends on its task.
void pointwiseDirect(const float *x, const float *w, const float *bias, float *y, int64_t N,
                     int64_t Cin, int64_t M, int64_t group, int64_t planeSize,
                     const Epilogue<float> &epilogue, PackedFilters *kept) {
  const int64_t Cg = Cin / group, Mg = M / group, tile = directColumnTile();
  const int64_t panels = directPanels(Mg);
  const int64_t tiles = planeSize / tile, filterSize = directFilterElements(Mg, Cg);
  const float *filters = directFilters(w, group, Mg, Cg, kept);
  std::vector<int64_t> offsets(static_cast<size_t>(Cg));
  for (int64_t c = 0; c < Cg; ++c)
    offsets[static_cast<size_t>(c)] = c * planeSize;
  const bool split = worthSplitting(N * M * Cg * planeSize, N * (Cin + M) * planeSize);
  int64_t pieces = std::max<int64_t>(1, tiles * tile / kMinChunkColumns), blocks = 1;
  if (split) {
    pieces = std::max<int64_t>(pieces, 4 * threadCount());
    pieces = std::clamp<int64_t>(pieces, 1,
                                 std::max<int64_t>(1, tiles * tile / kMinThreadColumns));
    // Narrow planes by blocks of output channels alone (kChannelSplitPlane).
    if (planeSize < kChannelSplitPlane && panels >= threadCount())
      pieces = 1;
    blocks = std::clamp<int64_t>((4 * threadCount() + pieces - 1) / pieces, 1, panels);
    // A whole number of tasks per thread where the panels allow (mlsd's
    // 20x20 layers: 3 x 3 tasks on two threads left one core a task idle).
    for (int64_t b = blocks; b <= panels; ++b)
      if (pieces * b % threadCount() == 0) {
        blocks = b;
        break;
      }
  } else
    pieces = std::clamp<int64_t>(pieces, 1, std::max<int64_t>(1, tiles));
  const bool clampInProduct = epilogue.clamps && !epilogue.addend;
  const StoreClamp sc{epilogue.lo, epilogue.hi};
  const int64_t perGroup = pieces * blocks, tasks = N * group * perGroup;
  auto task = [&](int64_t k) {
    const int64_t t = k % perGroup / blocks, bl = k % blocks;
    const int64_t gi = k / perGroup % group, n = k / perGroup / group;
    const int64_t j0 = tiles * t / pieces * tile, j1 = tiles * (t + 1) / pieces * tile;
    const int64_t p0 = panels * bl / blocks, p1 = panels * (bl + 1) / blocks;
    const int64_t m0 = directPanelStart(Mg, p0), m1 = directPanelStart(Mg, p1);
    const float *xg = x + (n * Cin + gi * Cg) * planeSize;
    float *yg = y + (n * M + gi * Mg + m0) * planeSize;
    const float *bg = bias ? bias + gi * Mg + m0 : nullptr;
    if (j1 > j0)
      convProductDirect(Mg, Cg, filters + gi * filterSize, xg + j0, offsets.data(), 1, j1 - j0,
                        j1 - j0, y + (n * M + gi * Mg) * planeSize + j0, planeSize,
                        bias ? bias + gi * Mg : nullptr, clampInProduct ? &sc : nullptr, p0, p1);
    // The columns short of a tile: the last piece's.
    const int64_t end = t + 1 == pieces ? planeSize : j1;
    if (end > j1)
      sgemm(false, false, m1 - m0, end - j1, Cg, 1.0f, w + (gi * Mg + m0) * Cg, Cg, xg + j1,
            planeSize, 0.0f, yg + j1, planeSize, bg);
    if (epilogue.addend || (end > j1 && epilogue.clamps))
      for (int64_t m = 0; m < m1 - m0; ++m) {
        const int64_t from = epilogue.addend ? j0 : j1;
        epilogue(yg + m * planeSize + from, end - from);
      }
  };
  parallelForIf(split, tasks, task);
}

} // namespace

template <typename C>
void convForward(const C *x, const C *w, const C *bias, C *y, int64_t N, int64_t Cin, int64_t M,
                 int64_t group, const Window &win, const KernelContext::OutputClamp *outClamp,
                 const C *addend, PackedFilters *kept) {
  const Epilogue<C> epilogue(outClamp, addend, y);
  const Window::Dims3 g = win.to3d();
  const int64_t inS = win.inSize(), outS = win.outSize(), kS = win.kernelSize();
  const int64_t Cg = Cin / group, Mg = M / group;
  if (N == 0 || M == 0 || outS == 0)
    return;
  bool pointwise = kS == 1;
  for (size_t i = 0; i < 3; ++i)
    pointwise = pointwise && g.strides[i] == 1 && g.padBegin[i] == 0 && g.padEnd[i] == 0;
  if (Cg == 1 && Mg <= 4 && !pointwise) {
    PaddedPlan plan;
    if (planPadded(g, plan))
      depthwisePadded(x, w, bias, y, N, Cin, M, group, g, plan, epilogue);
    else
      depthwiseConv(x, w, bias, y, N, Cin, M, group, g, epilogue);
    return;
  }
  // The bias is added after the product (as ONNX Runtime does), so that the
  // rounding of every output follows the same sequence of operations; the
  // GEMM adds it as it stores its last K slice (see sgemm's rowBias).
  auto biasOf = [&](int64_t gi) { return bias ? bias + gi * Mg : nullptr; };
  const int64_t rows = Cg * kS;
  if constexpr (std::is_same_v<C, float>)
    if (pointwise && pointwiseIsDirect(Mg, Cg, outS)) {
      pointwiseDirect(x, w, bias, y, N, Cin, M, group, outS, epilogue, kept);
      return;
    }
  if (pointwise) {
    // Column pieces: with a fused clamp, about kMinChunkColumns wide, so
    // that the clamp reads its piece of the output while it is still in
    // L2; with threads, the pieces are the tasks. Every piece keeps
    // kMinThreadColumns columns, so the GEMM's K slice (MLAS's rule, which
    // only shortens it for narrower products) is the whole product's.
    const bool split = worthSplitting(N * M * Cg * outS, N * (Cin + M) * outS);
    int64_t pieces = epilogue.on() ? std::max<int64_t>(1, outS / kMinChunkColumns) : 1;
    if (split)
      pieces = std::max<int64_t>(pieces, 4 * threadCount());
    pieces = std::max<int64_t>(1, std::min(pieces, outS / kMinThreadColumns));
    constexpr int64_t kMinBlockRows = 16;
    // Narrow planes (see kChannelSplitPlane) are split by output channels
    // alone, when they have rows for a block per thread.
    const bool byChannels = split && outS < kChannelSplitPlane &&
                            Mg >= kMinBlockRows * threadCount();
    if (byChannels)
      pieces = 1;
    // Planes too narrow for enough pieces (mlsd's 20x20 layers: three on
    // two threads, one core idle for a third of the product) have their
    // output channels cut into blocks of kMinBlockRows or more as well, the
    // fewest that make the tasks at least two per thread and a whole number
    // per thread. Tasks run block by block, so each core writes whole
    // output planes. The GEMM's K slice depends on the columns only: a
    // block's outputs see the operations of the whole product.
    const int64_t threads = threadCount();
    int64_t blocks = 1;
    // (Split by channels: at least one block per thread when two are too
    // many for the rows.)
    auto fewestBlocks = [&](int64_t least) {
      for (int64_t b = 1; b <= Mg / kMinBlockRows; ++b)
        if (pieces * b >= least && pieces * b % threads == 0)
          return b;
      return int64_t{0};
    };
    if (split) {
      blocks = fewestBlocks(2 * threads);
      if (blocks == 0 && byChannels)
        blocks = fewestBlocks(threads);
      blocks = std::max<int64_t>(blocks, 1);
    }
    for (int64_t n = 0; n < N; ++n)
      for (int64_t gi = 0; gi < group; ++gi) {
        const C *xg = x + (n * Cin + gi * Cg) * inS;
        C *yg = y + (n * M + gi * Mg) * outS;
        const C *bg = biasOf(gi);
        auto piece = [&](int64_t task) {
          const int64_t t = task % pieces, b = task / pieces;
          const int64_t j0 = outS * t / pieces, j1 = outS * (t + 1) / pieces;
          // Block edges on multiples of 8 rows (whole micro-kernel panels).
          const int64_t m0 = b == 0 ? 0 : Mg * b / blocks / 8 * 8;
          const int64_t m1 = b + 1 == blocks ? Mg : Mg * (b + 1) / blocks / 8 * 8;
          gemm(false, false, m1 - m0, j1 - j0, Cg, C(1), w + (gi * Mg + m0) * rows, rows,
               xg + j0, inS, C(0), yg + m0 * outS + j0, outS, bg ? bg + m0 : nullptr);
          if (epilogue.on())
            for (int64_t m = m0; m < m1; ++m)
              epilogue(yg + m * outS + j0, j1 - j0);
        };
        parallelForIf(split, pieces * blocks, piece);
      }
    return;
  }
  if (outS <= kFewColumns) {
    convFewColumns(x, w, bias, y, N, Cin, M, group, g, epilogue);
    return;
  }
  if constexpr (std::is_same_v<C, float>) {
    if (winogradFits(g, Cin, M, group)) {
      convWinograd(x, w, bias, y, N, Cin, M, g, epilogue, kept);
      return;
    }
    // The product reads the padded planes directly: unit strides, and
    // strides of 2 when rows of half tiles (see convProductDirect) waste at
    // most 1/7 of their columns (mlsd's 4->32 stem at 320x320 took 0.7x as
    // long as im2col and the GEMM on one thread, 0.46x on two; a 128->256
    // layer with rows of 20 outputs, 1.18x).
    const int64_t half = directColumnTile() / 2, ow = g.out[2];
    const bool strided = g.strides[1] > 1 || g.strides[2] > 1;
    PaddedPlan plan;
    if (g.strides[1] <= 2 && g.strides[2] <= 2 &&
        (!strided || (ow + half - 1) / half * half * 7 <= ow * 8) && planPadded(g, plan) &&
        Cg * (plan.rows - (g.out[1] - 1) * g.strides[1]) * plan.rowPitch <=
            kDirectPaddedBudget) {
      convDirect(x, w, bias, y, N, Cin, M, group, g, plan, epilogue, kept);
      return;
    }
  }
  const int64_t ow = g.out[2], gridRows = g.out[0] * g.out[1];
  // Chunks small enough for L2 when that still leaves the GEMM at least
  // kMinChunkColumns columns (it repacks A for every call); never larger
  // than the few-MB chunks.
  int64_t step =
      std::min(chunkRows(rows, ow, gridRows),
               std::max((kConvColumnBudget + rows * ow - 1) / std::max<int64_t>(1, rows * ow),
                        (kMinChunkColumns + ow - 1) / ow));
  // With threads, the chunks are the tasks (each builds its own columns and
  // runs its GEMM): cut into a multiple of the thread count, at least four
  // per thread (a late worker then leaves its share to the others), as long
  // as a chunk keeps kMinThreadColumns columns. The GEMM's K slice is the whole
  // product's whatever the cut (gemmPackedB's sliceColumns), so results do
  // not depend on it.
  const int threads =
      worthSplitting(N * M * rows * outS, N * (Cin * inS + M * outS)) ? threadCount() : 1;
  if (threads > 1) {
    int64_t chunks = (gridRows + step - 1) / step;
    chunks = std::max<int64_t>((chunks + threads - 1) / threads * threads, 4 * threads);
    int64_t even = (gridRows + chunks - 1) / chunks;
    if (even * ow >= kMinThreadColumns && gridRows > even)
      step = even;
  }
  const int64_t chunks = (gridRows + step - 1) / step;
  const int64_t width = gemmPanelWidth<C>();
  const int64_t colSize = rows * ((step * ow + width - 1) / width) * width;
  // 1-D/2-D: the group's channels are first copied zero-padded (a pass over
  // the input), so that every column row is one contiguous copy.
  PaddedPlan plan;
  const bool padded = planPadded(g, plan) && Cg * plan.rows * plan.rowPitch <= kPaddedBudget;
  const int64_t planeSize = plan.rows * plan.rowPitch;
  C *planes = padded ? scratch<C, 2>(Cg * planeSize) : nullptr;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t gi = 0; gi < group; ++gi) {
      const C *xg = x + (n * Cin + gi * Cg) * inS;
      const C *wg = w + gi * Mg * rows;
      C *yg = y + (n * M + gi * Mg) * outS;
      if (padded) {
        auto fill = [&](int64_t c) { fillPadded(xg + c * inS, g, plan, planes + c * planeSize); };
        parallelForIf(threads > 1 && Cg * planeSize >= kParallelMinElements, Cg, fill);
      }
      auto chunk = [&](int64_t t) {
        const int64_t r0 = t * step, nr = std::min(step, gridRows - r0);
        C *col = scratch<C>(colSize);
        if (padded)
          im2colFromPadded(planes, planeSize, Cg, g, plan, r0, nr, width, col);
        else
          im2colPacked(xg, Cg, g, r0, nr, width, col);
        gemmPackedB(false, Mg, nr * ow, rows, C(1), wg, rows, col, width, C(0), yg + r0 * ow,
                    outS, biasOf(gi), outS);
        if (epilogue.on())
          for (int64_t m = 0; m < Mg; ++m)
            epilogue(yg + m * outS + r0 * ow, nr * ow);
      };
      parallelForIf(threads > 1, chunks, chunk);
    }
}

template <typename C>
void convTransposeForward(const C *x, const C *w, const C *bias, C *y, int64_t N, int64_t Cin,
                          int64_t M, int64_t group, const Window &win) {
  const Window::Dims3 g = win.to3d();
  const int64_t imgS = win.inSize(), gridS = win.outSize(), kS = win.kernelSize();
  const int64_t Cg = Cin / group, Mg = M / group;
  const int64_t rows = Mg * kS;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m)
      std::fill(y + (n * M + m) * imgS, y + (n * M + m + 1) * imgS, bias ? bias[m] : C(0));
  if (N == 0 || M == 0 || gridS == 0 || imgS == 0)
    return;
  const int64_t ow = g.out[2], gridRows = g.out[0] * g.out[1];
  const int64_t step = chunkRows(rows, ow, gridRows);
  C *col = scratch<C>(rows * step * ow);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t gi = 0; gi < group; ++gi) {
      const C *xg = x + (n * Cin + gi * Cg) * gridS;
      const C *wg = w + gi * Cg * rows;
      C *yg = y + (n * M + gi * Mg) * imgS;
      for (int64_t r0 = 0; r0 < gridRows; r0 += step) {
        int64_t nr = std::min(step, gridRows - r0);
        gemm(true, false, rows, nr * ow, Cg, C(1), wg, rows, xg + r0 * ow, gridS, C(0), col,
             nr * ow);
        col2imAdd(col, Mg, g, r0, nr, yg);
      }
    }
}

template void convForward<float>(const float *, const float *, const float *, float *, int64_t,
                                 int64_t, int64_t, int64_t, const Window &,
                                 const KernelContext::OutputClamp *, const float *,
                                 PackedFilters *);
template void convForward<double>(const double *, const double *, const double *, double *,
                                  int64_t, int64_t, int64_t, int64_t, const Window &,
                                  const KernelContext::OutputClamp *, const double *,
                                  PackedFilters *);
template void convTransposeForward<float>(const float *, const float *, const float *, float *,
                                          int64_t, int64_t, int64_t, int64_t, const Window &);
template void convTransposeForward<double>(const double *, const double *, const double *,
                                           double *, int64_t, int64_t, int64_t, int64_t,
                                           const Window &);

} // namespace nn

namespace {

using namespace nn;

/// Checks kernel_shape (when present) against the weight's spatial dims.
Status checkKernelShape(const KernelContext &ctx, const std::vector<int64_t> &kernel) {
  std::vector<int64_t> attr = ctx.attrInts("kernel_shape");
  if (!attr.empty() && attr != kernel)
    return KernelContext::error("kernel_shape " + shapeString(attr) +
                                " does not match the weight's spatial dims " +
                                shapeString(kernel));
  return Status::success();
}

/// Reads the optional bias input (index 2) and checks it has `M` elements.
template <typename T>
Status readBias(const KernelContext &ctx, int64_t M, FloatInput<T> &bias, bool &hasBias) {
  ONNXSLIM_RETURN_IF_ERROR(optionalFloatInput(ctx, 2, "bias B", bias, hasBias));
  if (hasBias && (bias.rank() != 1 || bias.size() != M))
    return KernelContext::error("bias B has shape " + shapeString(bias.dims()) + ", expected [" +
                                std::to_string(M) + "]");
  return Status::success();
}

template <typename T> Status convTyped(KernelContext &ctx) {
  FloatInput<T> X, W, B;
  ONNXSLIM_RETURN_IF_ERROR(requiredFloatInput(ctx, 0, "input X", X));
  ONNXSLIM_RETURN_IF_ERROR(requiredFloatInput(ctx, 1, "weight W", W));
  if (X.rank() < 3)
    return KernelContext::error("input X must have rank >= 3, got " + shapeString(X.dims()));
  if (W.rank() != X.rank())
    return KernelContext::error("weight W " + shapeString(W.dims()) +
                                " must have the rank of X " + shapeString(X.dims()));
  int64_t N = X.dims()[0], Cin = X.dims()[1], M = W.dims()[0];
  int64_t group = ctx.attrInt("group", 1);
  if (group <= 0)
    return KernelContext::error("group must be positive, got " + std::to_string(group));
  if (Cin % group != 0 || W.dims()[1] * group != Cin)
    return KernelContext::error("channel mismatch: X has " + std::to_string(Cin) +
                                " channels, W " + shapeString(W.dims()) + " with group " +
                                std::to_string(group) + " expects " +
                                std::to_string(W.dims()[1] * group));
  if (M % group != 0)
    return KernelContext::error("output channels " + std::to_string(M) +
                                " are not divisible by group " + std::to_string(group));
  std::vector<int64_t> kernel(W.dims().begin() + 2, W.dims().end());
  ONNXSLIM_RETURN_IF_ERROR(checkKernelShape(ctx, kernel));
  bool hasBias = false;
  ONNXSLIM_RETURN_IF_ERROR(readBias(ctx, M, B, hasBias));
  Window win;
  ONNXSLIM_RETURN_IF_ERROR(computeWindow(
      ctx, std::vector<int64_t>(X.dims().begin() + 2, X.dims().end()), kernel, {}, win));
  std::vector<int64_t> outDims = {N, M};
  outDims.insert(outDims.end(), win.out.begin(), win.out.end());
  FloatOutput<T> Y;
  // convForward writes every output element.
  ONNXSLIM_RETURN_IF_ERROR(Y.init(outDims, TensorBuilder::Fill::Uninitialized));
  // An Add and a clamp fused by the interpreter are taken for float only
  // (other types leave them to their nodes, whose rounding they would have
  // to match); the addend first, as the clamp follows it.
  const KernelContext::OutputClamp *clamp = nullptr;
  const float *addend = nullptr;
  if constexpr (std::is_same_v<T, float>) {
    if (const Tensor *z = ctx.takeOutputAddend(outDims))
      addend = z->dataAs<float>();
    clamp = ctx.takeOutputClamp();
  }
  if (Y.size() > 0) {
    if constexpr (std::is_same_v<T, float>) {
      // A constant W is packed for the direct product once, in the node's
      // state, and reused by the next runs (as a runtime prepacks weights
      // at session start).
      PackedFilters *kept = nullptr;
      if (std::shared_ptr<void> *state = ctx.nodeState(); state && ctx.isConstantInput(1)) {
        if (!*state)
          *state = makePackedFilters();
        kept = static_cast<PackedFilters *>(state->get());
      }
      convForward(X.data(), W.data(), hasBias ? B.data() : nullptr, Y.data(), N, Cin, M, group,
                  win, clamp, addend, kept);
    } else
      convForward(X.data(), W.data(), hasBias ? B.data() : nullptr, Y.data(), N, Cin, M, group,
                  win, clamp);
  }
  ctx.setOutput(0, Y.finish());
  return Status::success();
}

Status convKernel(KernelContext &ctx) {
  return dispatchFloatOp(ctx, 0, [&](auto tag) { return convTyped<typename decltype(tag)::type>(ctx); });
}

/// ConvTranspose geometry: output dims and pads from pads / auto_pad /
/// output_shape / output_padding, as a Window over the output image.
Status convTransposeWindow(const KernelContext &ctx, const std::vector<int64_t> &inSpatial,
                           const std::vector<int64_t> &kernel, Window &win) {
  size_t n = inSpatial.size();
  if (n == 0 || n > 3)
    return KernelContext::error("only 1-D, 2-D and 3-D ConvTranspose is supported");
  auto readList = [&](const char *name, size_t count, int64_t dflt,
                      std::vector<int64_t> &out) -> Status {
    out = ctx.attrInts(name);
    if (out.empty()) {
      out.assign(count, dflt);
      return Status::success();
    }
    if (out.size() != count)
      return KernelContext::error(std::string(name) + " has " + std::to_string(out.size()) +
                                  " entries, expected " + std::to_string(count));
    return Status::success();
  };
  std::vector<int64_t> strides, dilations, pads, outPad;
  ONNXSLIM_RETURN_IF_ERROR(readList("strides", n, 1, strides));
  ONNXSLIM_RETURN_IF_ERROR(readList("dilations", n, 1, dilations));
  ONNXSLIM_RETURN_IF_ERROR(readList("pads", 2 * n, 0, pads));
  ONNXSLIM_RETURN_IF_ERROR(readList("output_padding", n, 0, outPad));
  std::vector<int64_t> outShape = ctx.attrInts("output_shape");
  if (!outShape.empty()) {
    if (outShape.size() == n + 2)
      outShape.erase(outShape.begin(), outShape.begin() + 2);
    if (outShape.size() != n)
      return KernelContext::error("output_shape has " + std::to_string(outShape.size()) +
                                  " entries, expected " + std::to_string(n));
  }
  std::string autoPad = ctx.attrString("auto_pad", "NOTSET");
  if (autoPad != "NOTSET" && !autoPad.empty() && autoPad != "VALID" && autoPad != "SAME_UPPER" &&
      autoPad != "SAME_LOWER")
    return KernelContext::error("unknown auto_pad value '" + autoPad + "'");
  win.rank = n;
  win.kernel = kernel;
  win.strides = strides;
  win.dilations = dilations;
  win.out = inSpatial; // the grid of input positions
  win.in.assign(n, 0); // the output image
  win.padBegin.assign(n, 0);
  win.padEnd.assign(n, 0);
  const int64_t kLimit = int64_t{1} << 24;
  for (size_t i = 0; i < n; ++i) {
    if (kernel[i] <= 0 || strides[i] <= 0 || dilations[i] <= 0 || kernel[i] > kLimit ||
        strides[i] > kLimit || dilations[i] > kLimit)
      return KernelContext::error("kernel, strides and dilations must be positive");
    if (pads[i] < 0 || pads[i + n] < 0 || pads[i] > kLimit || pads[i + n] > kLimit)
      return KernelContext::error("pads " + shapeString(pads) + " are out of range");
    if (inSpatial[i] < 0 || inSpatial[i] > (int64_t{1} << 32))
      return KernelContext::error("input dimension " + std::to_string(inSpatial[i]) +
                                  " is out of range");
    if (outPad[i] < 0 || outPad[i] > kLimit)
      return KernelContext::error("output_padding " + shapeString(outPad) + " is out of range");
    int64_t effK = (kernel[i] - 1) * dilations[i] + 1;
    int64_t natural = strides[i] * (inSpatial[i] - 1) + outPad[i] + effK;
    bool same = autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER";
    if (!outShape.empty() || same) {
      int64_t target = !outShape.empty() ? outShape[i] : inSpatial[i] * strides[i];
      if (target < 0 || target > (int64_t{1} << 40))
        return KernelContext::error("output_shape " + shapeString(outShape) + " is out of range");
      // A negative total (output_shape beyond the natural size) pads at the
      // end: halves round toward minus infinity, as in the spec's reference.
      int64_t total = natural - target;
      int64_t half = total >= 0 ? total / 2 : -((1 - total) / 2);
      if (autoPad == "SAME_UPPER") {
        win.padBegin[i] = half;
        win.padEnd[i] = total - half;
      } else {
        win.padBegin[i] = total - half;
        win.padEnd[i] = half;
      }
      win.in[i] = target;
    } else {
      if (autoPad != "VALID") {
        win.padBegin[i] = pads[i];
        win.padEnd[i] = pads[i + n];
      }
      win.in[i] = natural - win.padBegin[i] - win.padEnd[i];
      if (win.in[i] < 0)
        return KernelContext::error("pads " + shapeString(pads) +
                                    " are larger than the ConvTranspose output");
    }
  }
  return Status::success();
}

template <typename T> Status convTransposeTyped(KernelContext &ctx) {
  FloatInput<T> X, W, B;
  ONNXSLIM_RETURN_IF_ERROR(requiredFloatInput(ctx, 0, "input X", X));
  ONNXSLIM_RETURN_IF_ERROR(requiredFloatInput(ctx, 1, "weight W", W));
  if (X.rank() < 3)
    return KernelContext::error("input X must have rank >= 3, got " + shapeString(X.dims()));
  if (W.rank() != X.rank())
    return KernelContext::error("weight W " + shapeString(W.dims()) +
                                " must have the rank of X " + shapeString(X.dims()));
  int64_t N = X.dims()[0], Cin = X.dims()[1];
  int64_t group = ctx.attrInt("group", 1);
  if (group <= 0)
    return KernelContext::error("group must be positive, got " + std::to_string(group));
  if (W.dims()[0] != Cin || Cin % group != 0)
    return KernelContext::error("channel mismatch: X has " + std::to_string(Cin) +
                                " channels, W " + shapeString(W.dims()) + " with group " +
                                std::to_string(group));
  int64_t M = W.dims()[1] * group;
  std::vector<int64_t> kernel(W.dims().begin() + 2, W.dims().end());
  ONNXSLIM_RETURN_IF_ERROR(checkKernelShape(ctx, kernel));
  bool hasBias = false;
  ONNXSLIM_RETURN_IF_ERROR(readBias(ctx, M, B, hasBias));
  Window win;
  ONNXSLIM_RETURN_IF_ERROR(convTransposeWindow(
      ctx, std::vector<int64_t>(X.dims().begin() + 2, X.dims().end()), kernel, win));
  std::vector<int64_t> outDims = {N, M};
  outDims.insert(outDims.end(), win.in.begin(), win.in.end());
  FloatOutput<T> Y;
  // convTransposeForward starts every output element from the bias (or 0).
  ONNXSLIM_RETURN_IF_ERROR(Y.init(outDims, TensorBuilder::Fill::Uninitialized));
  if (Y.size() > 0)
    convTransposeForward(X.data(), W.data(), hasBias ? B.data() : nullptr, Y.data(), N, Cin, M,
                         group, win);
  ctx.setOutput(0, Y.finish());
  return Status::success();
}

Status convTransposeKernel(KernelContext &ctx) {
  return dispatchFloatOp(
      ctx, 0, [&](auto tag) { return convTransposeTyped<typename decltype(tag)::type>(ctx); });
}

template <typename T> Status col2ImTyped(KernelContext &ctx) {
  FloatInput<T> X;
  ONNXSLIM_RETURN_IF_ERROR(requiredFloatInput(ctx, 0, "input", X));
  const Tensor *imageT = nullptr, *blockT = nullptr;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(1, imageT));
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(2, blockT));
  std::vector<int64_t> image, block;
  ONNXSLIM_RETURN_IF_ERROR(readAs(*imageT, image));
  ONNXSLIM_RETURN_IF_ERROR(readAs(*blockT, block));
  if (X.rank() != 3)
    return KernelContext::error("input must be [N, C*prod(block_shape), L], got " +
                                shapeString(X.dims()));
  if (image.size() != block.size())
    return KernelContext::error("image_shape and block_shape differ in length");
  for (int64_t d : image)
    if (d <= 0)
      return KernelContext::error("image_shape " + shapeString(image) + " must be positive");
  Window win;
  ONNXSLIM_RETURN_IF_ERROR(computeWindow(ctx, image, block, {}, win));
  int64_t kS = win.kernelSize();
  if (X.dims()[1] % kS != 0)
    return KernelContext::error("input dim 1 (" + std::to_string(X.dims()[1]) +
                                ") is not a multiple of prod(block_shape) = " +
                                std::to_string(kS));
  if (X.dims()[2] != win.outSize())
    return KernelContext::error("input has " + std::to_string(X.dims()[2]) +
                                " blocks, the geometry gives " + std::to_string(win.outSize()));
  int64_t N = X.dims()[0], Cc = X.dims()[1] / kS;
  std::vector<int64_t> outDims = {N, Cc};
  outDims.insert(outDims.end(), image.begin(), image.end());
  FloatOutput<T> Y;
  ONNXSLIM_RETURN_IF_ERROR(Y.init(outDims));
  Window::Dims3 g = win.to3d();
  int64_t gridRows = g.out[0] * g.out[1];
  for (int64_t n = 0; n < N; ++n)
    col2imAdd(X.data() + n * X.dims()[1] * X.dims()[2], Cc, g, 0, gridRows,
              Y.data() + n * Cc * win.inSize());
  ctx.setOutput(0, Y.finish());
  return Status::success();
}

Status col2ImKernel(KernelContext &ctx) {
  return dispatchFloatOp(ctx, 0,
                         [&](auto tag) { return col2ImTyped<typename decltype(tag)::type>(ctx); });
}

} // namespace

void registerConvKernels(OpRegistry &registry) {
  registry.add("Conv", 1, kLatestOpset, convKernel);
  registry.add("ConvTranspose", 1, kLatestOpset, convTransposeKernel);
  registry.add("Col2Im", 18, kLatestOpset, col2ImKernel);
}

} // namespace onnxslim::rt
