//===- runtime/kernels/Conv.cpp - Conv, ConvTranspose, Col2Im -------------===//
//
// The convolution operators: their attributes and shapes, checked and
// reported as errors before any loop runs (channel counts, kernel vs
// padded input, pads, strides), and the choice of algorithm, each of which
// lives in runtime/conv/ (see Algorithms.h):
//
//  - Conv over 1-D, 2-D and 3-D inputs (geometry padded to 3-D; groups,
//    dilations, strides, pads, auto_pad), by the first that fits:
//     - single-channel groups with a channel multiplier up to 4: depthwise
//       (Depthwise.cpp), over padded planes where planPadded allows;
//     - float 2-D, one group, where at most half of the tap-output pairs
//       read input (atrous kernels on small planes): a product per tap
//       over the outputs it reads input for (TapRegions.cpp);
//     - a 1x1 kernel with unit strides and no padding: in float, a direct
//       product over X's planes when it reduces channels or has at most 16
//       inputs (Direct.cpp, pointwiseDirect), else a GEMM straight on X
//       (Im2col.cpp, convPointwiseGemm);
//     - float 2-D, one group, 9 to 64 outputs per image and 64 or more
//       output channels (ResNet's last stage), or with up to 1024
//       outputs and 128 or more output channels, strided (its
//       downsampling layers) or on rows the direct product's tiles cover
//       poorly where Winograd does not apply (Inception's 1x7 kernels on
//       17x17): the transposed product over the column matrix, packed as
//       the product reads it (Im2col.cpp, convPositionRows);
//     - at most kFewColumns outputs per image: dot products with the
//       gathered receptive fields (Im2col.cpp, convFewColumns);
//     - float 3x3 at unit strides with 16 or more channels each way:
//       Winograd F(2x2, 3x3) (Winograd.cpp);
//     - other float 1-D/2-D convolution at strides 1 and 2 (at 2 only
//       when its rows waste few columns of the direct product's tiles):
//       a direct product over padded planes (Direct.cpp, convDirect);
//     - everything else: im2col + GEMM (Im2col.cpp, convIm2col).
//    A constant W keeps its packed (or Winograd-transformed) filters in the
//    node's state from one run to the next (PackedFilters). A fused Add and
//    Relu/Clip (the interpreter's output addend and clamp, float only) are
//    applied by each algorithm as it stores its outputs or block by block.
//  - ConvTranspose: output_padding, output_shape, groups, dilations,
//    auto_pad (ConvTranspose.cpp).
//  - Col2Im (opset 18): the col2im scatter on its own.
//
// Float16/bfloat16 compute in float, double in double.
//
//===----------------------------------------------------------------------===//
#include "runtime/Gemm.h"
#include "runtime/Kernel.h"
#include "runtime/Layout.h"
#include "runtime/conv/Algorithms.h"
#include "runtime/conv/Common.h"
#include "runtime/conv/Kernels.h"
#include "runtime/kernels/Dispatch.h"
#include "runtime/kernels/NNCommon.h"

#include <memory>
#include <type_traits>

namespace onnxslim::rt {
namespace nn {
namespace {

/// Elements of zero-padded input planes that a direct convolution may stage
/// for one output row (128 MB of floats): beyond that, im2col.
constexpr int64_t kDirectPaddedBudget = int64_t{1} << 25;

/// Given `planes` input planes of geometry g, Execute: writes to out, plane
/// after plane, the elements a 1x1 kernel at g's strides reads (g.out of
/// them per plane).
void gatherStrided(const float *x, int64_t planes, const Window::Dims3 &g, float *out) {
  const int64_t inS = g.in[0] * g.in[1] * g.in[2];
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t d = 0; d < g.out[0]; ++d)
      for (int64_t h = 0; h < g.out[1]; ++h) {
        const float *row = x + p * inS + (d * g.strides[0] * g.in[1] + h * g.strides[1]) * g.in[2];
        for (int64_t v = 0; v < g.out[2]; ++v)
          *out++ = row[v * g.strides[2]];
      }
}

/// Given a window, Result: true when some kernel taps read only padding for
/// every output (ASPP's dilated 3x3 kernels on a 14x14 map read their
/// center alone), with `live` the same convolution over the taps that read
/// the input for some output (a range per axis; pads moved so the outputs
/// stay put) and `first` each axis' first live tap. Dropped taps add
/// products of zeros.
bool liveTaps(const Window &win, Window &live, std::vector<int64_t> &first) {
  live = win;
  first.assign(win.rank, 0);
  bool fewer = false;
  for (size_t i = 0; i < win.rank; ++i) {
    const int64_t s = win.strides[i], d = win.dilations[i], in = win.in[i], out = win.out[i];
    int64_t k0 = -1, k1 = -1;
    for (int64_t k = 0; k < win.kernel[i]; ++k) {
      // The first output whose read is at or past 0 must still be inside.
      const int64_t off = k * d - win.padBegin[i];
      const int64_t o = off >= 0 ? 0 : (-off + s - 1) / s;
      if (o < out && o * s + off < in) {
        k0 = k0 < 0 ? k : k0;
        k1 = k;
      }
    }
    if (k0 < 0 || win.padBegin[i] - k0 * d < 0)
      return false;
    live.kernel[i] = k1 - k0 + 1;
    live.padBegin[i] = win.padBegin[i] - k0 * d;
    live.padEnd[i] = (out - 1) * s + (live.kernel[i] - 1) * d + 1 - in - live.padBegin[i];
    if (live.padEnd[i] < 0 ||
        (in + live.padBegin[i] + live.padEnd[i] - (live.kernel[i] - 1) * d - 1) / s + 1 != out)
      return false;
    first[i] = k0;
    fewer = fewer || live.kernel[i] < win.kernel[i];
  }
  return fewer;
}

/// Given filters w ([M, Cg, kernel]) and the live window from liveTaps,
/// Result: the filters cut to its taps, kept in `kept` for the next runs
/// (the direct products then find their packed form there too), or in
/// `scratch`.
const float *liveFilters(const float *w, int64_t rows, const Window &win, const Window &live,
                         const std::vector<int64_t> &first, PackedFilters *kept,
                         std::vector<float> &scratch) {
  if (kept && kept->liveFrom == w && kept->liveKernel == live.kernel)
    return kept->live.data();
  const Window::Dims3 g = win.to3d(), l = live.to3d();
  const size_t lead = 3 - win.rank;
  int64_t f[3] = {0, 0, 0};
  for (size_t i = 0; i < win.rank; ++i)
    f[lead + i] = first[i];
  std::vector<float> &out = kept ? kept->live : scratch;
  out.resize(static_cast<size_t>(rows * live.kernelSize()));
  float *o = out.data();
  const int64_t kS = win.kernelSize();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t a = 0; a < l.kernel[0]; ++a)
      for (int64_t b = 0; b < l.kernel[1]; ++b)
        for (int64_t c = 0; c < l.kernel[2]; ++c)
          *o++ = w[r * kS + ((a + f[0]) * g.kernel[1] + b + f[1]) * g.kernel[2] + c + f[2]];
  if (kept) {
    kept->liveFrom = w;
    kept->liveKernel = live.kernel;
  }
  return out.data();
}

} // namespace

template <typename C>
void convForward(const C *x, const C *w, const C *bias, C *y, int64_t N, int64_t Cin, int64_t M,
                 int64_t group, const Window &win, const KernelContext::OutputClamp *outClamp,
                 const C *addend, PackedFilters *kept) {
  const Epilogue<C> epilogue(outClamp, addend, y);
  const Window::Dims3 g = win.to3d();
  const int64_t outS = win.outSize(), kS = win.kernelSize();
  const int64_t Cg = Cin / group, Mg = M / group;
  if (N == 0 || M == 0 || outS == 0)
    return;
  if constexpr (std::is_same_v<C, float>) {
    Window live;
    std::vector<int64_t> first;
    if (kS > 1 && liveTaps(win, live, first)) {
      std::vector<float> scratch;
      const float *lw = liveFilters(w, M * Cg, win, live, first, kept, scratch);
      convForward(x, lw, bias, y, N, Cin, M, group, live, outClamp, addend, kept);
      return;
    }
  }
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
  if constexpr (std::is_same_v<C, float>) {
    if (!pointwise && tapRegionsFit(g, group)) {
      convTapRegions(x, w, bias, y, N, Cin, M, g, epilogue, kept);
      return;
    }
    if (pointwise && pointwiseIsTransposed(Mg, Cg, outS)) {
      pointwiseTransposed(x, w, bias, y, N, Cin, M, group, outS, epilogue, kept);
      return;
    }
    if (pointwise && pointwiseIsDirect(Mg, Cg, outS)) {
      pointwiseDirect(x, w, bias, y, N, Cin, M, group, outS, epilogue, kept);
      return;
    }
    // A strided 1x1 kernel without padding: the positions it reads,
    // gathered into planes, are a pointwise product's input.
    bool strided1x1 = kS == 1 && !pointwise;
    for (size_t i = 0; i < 3; ++i)
      strided1x1 = strided1x1 && g.padBegin[i] == 0 && g.padEnd[i] == 0;
    if (strided1x1 && (pointwiseIsTransposed(Mg, Cg, outS) || pointwiseIsDirect(Mg, Cg, outS))) {
      float *planes = scratch<float, 6>(N * Cin * outS);
      gatherStrided(x, N * Cin, g, planes);
      if (pointwiseIsTransposed(Mg, Cg, outS))
        pointwiseTransposed(planes, w, bias, y, N, Cin, M, group, outS, epilogue, kept);
      else
        pointwiseDirect(planes, w, bias, y, N, Cin, M, group, outS, epilogue, kept);
      return;
    }
  }
  if (pointwise) {
    convPointwiseGemm(x, w, bias, y, N, Cin, M, group, win, epilogue);
    return;
  }
  if constexpr (std::is_same_v<C, float>) {
    if (positionRowsFit(g, Cin, M, group)) {
      convPositionRows(x, w, bias, y, N, Cin, M, g, epilogue, kept);
      return;
    }
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
    // most 1/7 of their columns (beyond that, im2col and the GEMM cost less).
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
  convIm2col(x, w, bias, y, N, Cin, M, group, win, epilogue);
}

template void convForward<float>(const float *, const float *, const float *, float *, int64_t,
                                 int64_t, int64_t, int64_t, const Window &,
                                 const KernelContext::OutputClamp *, const float *,
                                 PackedFilters *);
template void convForward<double>(const double *, const double *, const double *, double *,
                                  int64_t, int64_t, int64_t, int64_t, const Window &,
                                  const KernelContext::OutputClamp *, const double *,
                                  PackedFilters *);
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

/// The convolutions that read and write channels-last images.
enum class ChannelsLastForm : uint8_t { None, Pointwise, Depthwise };

ChannelsLastForm channelsLastForm(const Window &win, const std::vector<int64_t> &kernel,
                                  int64_t Cin, int64_t M, int64_t group) {
  if (win.rank != 2)
    return ChannelsLastForm::None;
  bool pointwise = group == 1;
  for (size_t i = 0; i < 2; ++i)
    pointwise = pointwise && kernel[i] == 1 && win.strides[i] == 1 && win.padBegin[i] == 0 &&
                win.padEnd[i] == 0;
  if (pointwise)
    return ChannelsLastForm::Pointwise;
  if (depthwiseChannelsLastFits(win.to3d(), Cin, M, group))
    return ChannelsLastForm::Depthwise;
  return ChannelsLastForm::None;
}

/// A pointwise or depthwise convolution with its input (xLast), output
/// (yLast) or both channels last; the addend only when y is channels first.
void convChannelsLast(ChannelsLastForm form, const float *x, bool xLast, const float *w,
                      const float *bias, float *y, bool yLast, int64_t N, int64_t Cin, int64_t M,
                      const Window &win, const KernelContext::OutputClamp *clamp,
                      const float *addend, PackedFilters *kept) {
  const Window::Dims3 g = win.to3d();
  const int64_t outS = g.out[1] * g.out[2];
  if (form == ChannelsLastForm::Pointwise) {
    pointwiseChannelsLast(x, xLast, w, bias, y, yLast, N, Cin, M, outS, Epilogue<float>(clamp, addend, y),
                          kept);
    return;
  }
  // Depthwise: into a channels-last output, from either input (a
  // channels-first one's blocks are transposed as they are read); through
  // a copy where y is channels first, the epilogue over y's planes then.
  if (yLast) {
    depthwiseChannelsLast(x, xLast, w, bias, y, N, Cin, g, Epilogue<float>(clamp, nullptr, y));
    return;
  }
  float *t = scratch<float, 20>(N * M * outS);
  depthwiseChannelsLast(x, xLast, w, bias, t, N, Cin, g, Epilogue<float>(nullptr, nullptr, t));
  transposeImages(reinterpret_cast<const uint8_t *>(t), reinterpret_cast<uint8_t *>(y), N, M, outS,
                  sizeof(float), false);
  const Epilogue<float> epilogue(clamp, addend, y);
  if (epilogue.on())
    epilogue(y, N * M * outS);
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
  // Channels-last input or output (runtime/Layout.h): taken by pointwise
  // and depthwise products; any other reads a channels-first copy.
  const ChannelsLastForm lastForm =
      std::is_same_v<T, float> ? channelsLastForm(win, kernel, Cin, M, group) : ChannelsLastForm::None;
  const bool xLast = ctx.inputChannelsLast(0);
  const bool yLast = lastForm != ChannelsLastForm::None && ctx.channelsLastRequested() &&
                     channelsLastPlaneFits(win.outSize());
  using XC = std::remove_cv_t<std::remove_pointer_t<decltype(X.data())>>;
  std::vector<XC> xFirst;
  const XC *x = X.data();
  if (xLast && lastForm == ChannelsLastForm::None && X.size() > 0) {
    xFirst.resize(static_cast<size_t>(X.size()));
    transposeImages(reinterpret_cast<const uint8_t *>(x), reinterpret_cast<uint8_t *>(xFirst.data()),
                    N, Cin, X.size() / std::max<int64_t>(N * Cin, 1), sizeof(XC), false);
    x = xFirst.data();
  }
  // An Add and a clamp fused by the interpreter are taken for float only
  // (other types leave them to their nodes, whose rounding they would have
  // to match); the addend first, as the clamp follows it (never into a
  // channels-last output).
  const KernelContext::OutputClamp *clamp = nullptr;
  const float *addend = nullptr;
  if constexpr (std::is_same_v<T, float>) {
    if (const Tensor *z = yLast ? nullptr : ctx.takeOutputAddend(outDims))
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
      const float *b = hasBias ? B.data() : nullptr;
      if (lastForm != ChannelsLastForm::None && (xLast || yLast))
        convChannelsLast(lastForm, x, xLast, W.data(), b, Y.data(), yLast, N, Cin, M, win, clamp,
                         addend, kept);
      else
        convForward(x, W.data(), b, Y.data(), N, Cin, M, group, win, clamp, addend, kept);
    } else
      convForward(X.data(), W.data(), hasBias ? B.data() : nullptr, Y.data(), N, Cin, M, group,
                  win, clamp);
  }
  ctx.setOutput(0, Y.finish());
  if (yLast)
    ctx.setOutputChannelsLast();
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
