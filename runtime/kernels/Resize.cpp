//===- runtime/kernels/Resize.cpp - Resize and Upsample --------------------===//
//
// Resize (opset 10, 11, 13, 18, 19) and Upsample (7, 9). Every mode
// (nearest, linear, cubic), every coordinate_transformation_mode, every
// nearest_mode, cubic_coeff_a, exclude_outside, extrapolation_value (for
// tf_crop_and_resize), scales or sizes, and at 18+ antialias, axes and
// keep_aspect_ratio_policy.
//
// Interpolation is separable, so the kernel builds, for every resized axis,
// a table mapping each output index to a few (input index, weight) taps and
// applies the axes one after another (an axis whose table is the identity is
// skipped). Out-of-range taps are clamped to the edge, as the reference's
// edge padding does; with tf_crop_and_resize an output whose source
// coordinate falls outside the input on any axis gets extrapolation_value.
//
// Coordinates follow ONNX Runtime: computed in float, scales from sizes are
// out/in in float, output sizes from scales are trunc(scale * in); opset 10
// and Upsample use the asymmetric transform with the legacy nearest rounding
// (ceil when downsampling, floor otherwise). One exception, from the ONNX
// reference and the conformance suite: when the sizes come from scales,
// align_corners and tf_crop_and_resize divide by the real-valued output
// length scale * in rather than the truncated one. Antialiasing follows the
// ONNX reference: the linear or cubic filter is stretched by 1/scale and its
// weights normalized.
//
// Nearest mode copies elements of any dtype; linear and cubic compute in
// float (double for double) and round integers to nearest with saturation.
//
//===----------------------------------------------------------------------===//
#include "runtime/Gemm.h"
#include "runtime/Kernel.h"
#include "runtime/ThreadPool.h"
#include "runtime/kernels/Dispatch.h"
#include "runtime/kernels/NNCommon.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace onnxslim::rt {
namespace {

using namespace nn;

enum class Mode { Nearest, Linear, Cubic };
enum class Coord {
  HalfPixel,
  HalfPixelSymmetric,
  PytorchHalfPixel,
  AlignCorners,
  Asymmetric,
  TfHalfPixelForNN,
  TfCropAndResize
};
enum class Rounding { Simple, RoundPreferFloor, RoundPreferCeil, Floor, Ceil };

/// Everything that determines a resize, after attribute and input parsing.
struct ResizeSpec {
  Mode mode = Mode::Nearest;
  Coord coord = Coord::HalfPixel;
  Rounding rounding = Rounding::RoundPreferFloor;
  float cubicA = -0.75f;
  bool excludeOutside = false;
  bool antialias = false;
  float extrapolation = 0.0f;
  std::vector<int64_t> inDims, outDims;
  std::vector<float> scales;
  std::vector<float> roiStart, roiEnd;
  /// Output sizes came from scales: align_corners and tf_crop_and_resize
  /// then divide by the real-valued output length scale * in, as the ONNX
  /// reference does (it differs from the integer length when scale * in is
  /// not a whole number).
  bool fromScales = true;
};

/// One axis: for output index o, taps [o*taps, (o+1)*taps) of idx/weight.
struct AxisTable {
  int64_t taps = 1;
  std::vector<int64_t> idx;
  std::vector<double> weight;
  std::vector<uint8_t> outside;
  bool anyOutside = false;
};

//===----------------------------------------------------------------------===//
// Parsing
//===----------------------------------------------------------------------===//

Status parseMode(const std::string &s, Mode &m) {
  if (s == "nearest")
    m = Mode::Nearest;
  else if (s == "linear" || s == "bilinear" || s == "trilinear")
    m = Mode::Linear;
  else if (s == "cubic")
    m = Mode::Cubic;
  else
    return KernelContext::error("unknown mode '" + s + "'");
  return Status::success();
}

Status parseCoord(const std::string &s, Coord &c) {
  static const std::pair<const char *, Coord> table[] = {
      {"half_pixel", Coord::HalfPixel},
      {"half_pixel_symmetric", Coord::HalfPixelSymmetric},
      {"pytorch_half_pixel", Coord::PytorchHalfPixel},
      {"align_corners", Coord::AlignCorners},
      {"asymmetric", Coord::Asymmetric},
      {"tf_half_pixel_for_nn", Coord::TfHalfPixelForNN},
      {"tf_crop_and_resize", Coord::TfCropAndResize}};
  for (const auto &[name, value] : table)
    if (s == name) {
      c = value;
      return Status::success();
    }
  return KernelContext::error("unknown coordinate_transformation_mode '" + s + "'");
}

Status parseRounding(const std::string &s, Rounding &r) {
  if (s == "round_prefer_floor")
    r = Rounding::RoundPreferFloor;
  else if (s == "round_prefer_ceil")
    r = Rounding::RoundPreferCeil;
  else if (s == "floor")
    r = Rounding::Floor;
  else if (s == "ceil")
    r = Rounding::Ceil;
  else
    return KernelContext::error("unknown nearest_mode '" + s + "'");
  return Status::success();
}

/// Output dims trunc(scale * in) and validation of the scales.
Status dimsFromScales(ResizeSpec &spec) {
  size_t r = spec.inDims.size();
  if (spec.scales.size() != r)
    return KernelContext::error("scales has " + std::to_string(spec.scales.size()) +
                                " entries, the input has rank " + std::to_string(r));
  spec.outDims.resize(r);
  for (size_t i = 0; i < r; ++i) {
    float s = spec.scales[i];
    if (!(s > 0) || !std::isfinite(s))
      return KernelContext::error("scales must be positive and finite");
    double out = static_cast<double>(s * static_cast<float>(spec.inDims[i]));
    if (out > 9.0e15)
      return KernelContext::error("scales give an output that is too large");
    spec.outDims[i] = static_cast<int64_t>(out);
  }
  return Status::success();
}

/// The legacy semantics (Resize-10, Upsample): asymmetric, legacy rounding.
Status legacySpec(const KernelContext &ctx, const std::vector<int64_t> &xDims,
                  std::vector<float> scales, ResizeSpec &spec) {
  ONNXSLIM_RETURN_IF_ERROR(parseMode(ctx.attrString("mode", "nearest"), spec.mode));
  if (spec.mode == Mode::Cubic)
    return KernelContext::error("cubic mode needs opset 11 or later");
  spec.coord = Coord::Asymmetric;
  spec.rounding = Rounding::Simple;
  spec.inDims = xDims;
  spec.scales = std::move(scales);
  return dimsFromScales(spec);
}

Status readFloats(const Tensor &t, std::vector<float> &out) {
  Status s = readAs(t, out);
  return s.ok() ? s : KernelContext::error(s.message());
}

/// Resize-11 and later: attributes, roi, scales or sizes, axes, policy.
Status modernSpec(const KernelContext &ctx, const std::vector<int64_t> &xDims, ResizeSpec &spec) {
  int64_t opset = ctx.opsetVersion();
  ONNXSLIM_RETURN_IF_ERROR(parseMode(ctx.attrString("mode", "nearest"), spec.mode));
  ONNXSLIM_RETURN_IF_ERROR(
      parseCoord(ctx.attrString("coordinate_transformation_mode", "half_pixel"), spec.coord));
  ONNXSLIM_RETURN_IF_ERROR(
      parseRounding(ctx.attrString("nearest_mode", "round_prefer_floor"), spec.rounding));
  spec.cubicA = ctx.attrFloat("cubic_coeff_a", -0.75f);
  spec.excludeOutside = ctx.attrInt("exclude_outside", 0) != 0;
  spec.extrapolation = ctx.attrFloat("extrapolation_value", 0.0f);
  spec.antialias = opset >= 18 && ctx.attrInt("antialias", 0) != 0;
  spec.inDims = xDims;
  const int64_t r = static_cast<int64_t>(xDims.size());

  std::vector<int64_t> axes;
  if (opset >= 18)
    axes = ctx.attrInts("axes");
  if (axes.empty())
    for (int64_t i = 0; i < r; ++i)
      axes.push_back(i);
  std::vector<bool> seen(static_cast<size_t>(r), false);
  for (int64_t &a : axes) {
    ONNXSLIM_RETURN_IF_ERROR(normalizeAxis(a, r, a));
    if (seen[static_cast<size_t>(a)])
      return KernelContext::error("axes contains a duplicate");
    seen[static_cast<size_t>(a)] = true;
  }
  size_t na = axes.size();

  // roi: [starts..., ends...] over the axes (only tf_crop_and_resize uses it).
  spec.roiStart.assign(static_cast<size_t>(r), 0.0f);
  spec.roiEnd.assign(static_cast<size_t>(r), 1.0f);
  if (spec.coord == Coord::TfCropAndResize) {
    const Tensor *roiT = ctx.tensor(1);
    std::vector<float> roi;
    if (roiT)
      ONNXSLIM_RETURN_IF_ERROR(readFloats(*roiT, roi));
    if (!roi.empty()) {
      if (roi.size() != 2 * na)
        return KernelContext::error("roi has " + std::to_string(roi.size()) + " entries, expected " +
                                    std::to_string(2 * na));
      for (size_t i = 0; i < na; ++i) {
        spec.roiStart[static_cast<size_t>(axes[i])] = roi[i];
        spec.roiEnd[static_cast<size_t>(axes[i])] = roi[na + i];
      }
    }
  }

  std::vector<float> scales;
  std::vector<int64_t> sizes;
  if (const Tensor *t = ctx.tensor(2))
    ONNXSLIM_RETURN_IF_ERROR(readFloats(*t, scales));
  if (const Tensor *t = ctx.tensor(3)) {
    Status s = readAs(*t, sizes);
    if (!s.ok())
      return KernelContext::error("sizes: " + s.message());
  }
  if (!scales.empty() && !sizes.empty())
    return KernelContext::error("only one of scales and sizes may be given");
  if (scales.empty() && sizes.empty())
    return KernelContext::error("one of scales and sizes must be given");

  if (!scales.empty()) {
    if (scales.size() != na)
      return KernelContext::error("scales has " + std::to_string(scales.size()) +
                                  " entries, expected " + std::to_string(na));
    spec.scales.assign(static_cast<size_t>(r), 1.0f);
    for (size_t i = 0; i < na; ++i)
      spec.scales[static_cast<size_t>(axes[i])] = scales[i];
    return dimsFromScales(spec);
  }

  if (sizes.size() != na)
    return KernelContext::error("sizes has " + std::to_string(sizes.size()) +
                                " entries, expected " + std::to_string(na));
  spec.outDims = xDims;
  spec.fromScales = false;
  spec.scales.assign(static_cast<size_t>(r), 1.0f);
  for (size_t i = 0; i < na; ++i) {
    size_t a = static_cast<size_t>(axes[i]);
    if (sizes[i] < 0)
      return KernelContext::error("sizes must not be negative");
    if (xDims[a] == 0 && sizes[i] != 0)
      return KernelContext::error("cannot resize an empty dimension to a non-empty one");
    spec.outDims[a] = sizes[i];
    spec.scales[a] = xDims[a] == 0 ? 1.0f
                                   : static_cast<float>(sizes[i]) / static_cast<float>(xDims[a]);
  }
  std::string policy = opset >= 18 ? ctx.attrString("keep_aspect_ratio_policy", "stretch") : "stretch";
  if (policy == "not_larger" || policy == "not_smaller") {
    float common = policy == "not_larger" ? std::numeric_limits<float>::max() : 0.0f;
    for (int64_t a : axes)
      common = policy == "not_larger" ? std::min(common, spec.scales[static_cast<size_t>(a)])
                                      : std::max(common, spec.scales[static_cast<size_t>(a)]);
    for (int64_t a : axes) {
      size_t ai = static_cast<size_t>(a);
      spec.scales[ai] = common;
      spec.outDims[ai] =
          static_cast<int64_t>(std::round(common * static_cast<float>(xDims[ai])));
    }
  } else if (policy != "stretch") {
    return KernelContext::error("unknown keep_aspect_ratio_policy '" + policy + "'");
  }
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Per-axis tables
//===----------------------------------------------------------------------===//

/// The source coordinate of output index x along one axis.
float sourceCoord(const ResizeSpec &spec, size_t axis, int64_t x) {
  float scale = spec.scales[axis];
  float xr = static_cast<float>(x);
  float lenIn = static_cast<float>(spec.inDims[axis]);
  float lenOut = static_cast<float>(spec.outDims[axis]);
  float realOut = spec.fromScales ? scale * lenIn : lenOut;
  switch (spec.coord) {
  case Coord::Asymmetric:
    return xr / scale;
  case Coord::PytorchHalfPixel:
    return lenOut > 1 ? (xr + 0.5f) / scale - 0.5f : 0.0f;
  case Coord::TfHalfPixelForNN:
    return (xr + 0.5f) / scale;
  case Coord::AlignCorners:
    return realOut == 1 ? 0.0f : xr * (lenIn - 1) / (realOut - 1);
  case Coord::TfCropAndResize: {
    double start = spec.roiStart[axis], end = spec.roiEnd[axis];
    double v = realOut > 1 ? start * (lenIn - 1) + (xr * (end - start) * (lenIn - 1)) / (realOut - 1)
                          : 0.5 * (start + end) * (lenIn - 1);
    return static_cast<float>(v);
  }
  case Coord::HalfPixelSymmetric: {
    float outputWidth = scale * lenIn;
    float adjustment = lenOut / outputWidth;
    float center = lenIn / 2;
    float offset = center * (1 - adjustment);
    return static_cast<float>(offset + (xr + 0.5) / scale - 0.5);
  }
  case Coord::HalfPixel:
    break;
  }
  return (xr + 0.5f) / scale - 0.5f;
}

int64_t nearestIndex(float x, Rounding r, bool downsample) {
  switch (r) {
  case Rounding::Simple:
    return downsample ? static_cast<int64_t>(std::ceil(x)) : static_cast<int64_t>(x);
  case Rounding::RoundPreferCeil:
    return static_cast<int64_t>(std::round(x));
  case Rounding::Floor:
    return static_cast<int64_t>(std::floor(x));
  case Rounding::Ceil:
    return static_cast<int64_t>(std::ceil(x));
  case Rounding::RoundPreferFloor:
    break;
  }
  if (x == static_cast<float>(static_cast<int64_t>(x)) + 0.5f)
    return static_cast<int64_t>(std::floor(x));
  return static_cast<int64_t>(std::round(x));
}

double cubicKernel(double x, double A) {
  x = std::abs(x);
  if (x <= 1)
    return ((A + 2) * x - (A + 3)) * x * x + 1;
  if (x < 2)
    return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
  return 0.0;
}

AxisTable buildTable(const ResizeSpec &spec, size_t axis) {
  AxisTable t;
  const int64_t in = spec.inDims[axis], out = spec.outDims[axis];
  const float scale = spec.scales[axis];
  const double A = spec.cubicA;
  auto clampIdx = [in](int64_t i) { return std::clamp<int64_t>(i, 0, in - 1); };
  bool stretch = spec.antialias && spec.mode != Mode::Nearest && scale < 1.0f;
  int64_t start = 0;
  if (spec.mode == Mode::Nearest)
    t.taps = 1;
  else if (!stretch)
    t.taps = spec.mode == Mode::Linear ? 2 : 4;
  else {
    double support = spec.mode == Mode::Linear ? 1.0 : 2.0;
    start = static_cast<int64_t>(std::floor(-support / scale)) + 1;
    t.taps = 2 - 2 * start;
  }
  t.idx.resize(static_cast<size_t>(out * t.taps));
  t.weight.resize(t.idx.size());
  t.outside.assign(static_cast<size_t>(out), 0);
  for (int64_t o = 0; o < out; ++o) {
    float x = sourceCoord(spec, axis, o);
    int64_t *idx = &t.idx[static_cast<size_t>(o * t.taps)];
    double *w = &t.weight[static_cast<size_t>(o * t.taps)];
    if (spec.coord == Coord::TfCropAndResize &&
        !(x >= 0 && x <= static_cast<float>(in - 1))) {
      t.outside[static_cast<size_t>(o)] = 1;
      t.anyOutside = true;
    }
    // Keep index arithmetic defined for absurd roi values (and NaN).
    x = std::isnan(x) ? 0.0f : std::clamp(x, -1e12f, 1e12f);
    if (spec.mode == Mode::Nearest) {
      idx[0] = clampIdx(nearestIndex(x, spec.rounding, scale < 1.0f));
      w[0] = 1;
      continue;
    }
    if (spec.mode == Mode::Linear && !stretch) {
      float xc = std::clamp(x, 0.0f, static_cast<float>(in - 1));
      int64_t x1 = std::min(static_cast<int64_t>(xc), in - 1);
      int64_t x2 = std::min(x1 + 1, in - 1);
      double d1 = std::abs(xc - static_cast<float>(x1)), d2 = std::abs(xc - static_cast<float>(x2));
      if (x1 == x2)
        d1 = d2 = 0.5;
      idx[0] = x1;
      idx[1] = x2;
      w[0] = d2;
      w[1] = d1;
      continue;
    }
    // Cubic, or an antialiased (stretched) linear/cubic filter.
    int64_t base;
    int64_t first;
    if (!stretch) {
      base = static_cast<int64_t>(std::floor(x));
      first = base - 1;
    } else {
      base = static_cast<int64_t>(std::ceil(x)) - 1;
      first = base + start;
    }
    double sum = 0;
    for (int64_t k = 0; k < t.taps; ++k) {
      int64_t i = first + k;
      double d = static_cast<double>(i) - static_cast<double>(x);
      double v;
      if (!stretch)
        v = cubicKernel(d, A);
      else if (spec.mode == Mode::Linear)
        v = std::max(0.0, 1.0 - std::abs(d * scale));
      else
        v = cubicKernel(d * scale, A);
      if (spec.excludeOutside && (i < 0 || i >= in))
        v = 0;
      idx[k] = clampIdx(i);
      w[k] = v;
      sum += v;
    }
    if ((stretch || spec.excludeOutside) && sum != 0)
      for (int64_t k = 0; k < t.taps; ++k)
        w[k] /= sum;
  }
  return t;
}

bool isIdentity(const AxisTable &t, int64_t in, int64_t out) {
  if (in != out || t.anyOutside)
    return false;
  for (int64_t o = 0; o < out; ++o) {
    double self = 0;
    for (int64_t k = 0; k < t.taps; ++k) {
      size_t j = static_cast<size_t>(o * t.taps + k);
      if (t.idx[j] == o)
        self += t.weight[j];
      else if (t.weight[j] != 0)
        return false;
    }
    if (self != 1.0)
      return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Application
//===----------------------------------------------------------------------===//

/// Gathers along one axis (nearest): [outer, in, inner] -> [outer, out, inner].
template <typename V>
void gatherAxis(const V *src, V *dst, int64_t outer, int64_t in, int64_t out, int64_t inner,
                const AxisTable &t) {
  for (int64_t a = 0; a < outer; ++a) {
    const V *s = src + a * in * inner;
    V *d = dst + a * out * inner;
    if (inner == 1) {
      for (int64_t o = 0; o < out; ++o)
        d[o] = s[t.idx[static_cast<size_t>(o)]];
    } else {
      for (int64_t o = 0; o < out; ++o)
        std::copy(s + t.idx[static_cast<size_t>(o)] * inner,
                  s + (t.idx[static_cast<size_t>(o)] + 1) * inner, d + o * inner);
    }
  }
}

/// Weighted sum along one axis: [outer, in, inner] -> [outer, out, inner].
template <typename C>
void blendAxis(const C *src, C *dst, int64_t outer, int64_t in, int64_t out, int64_t inner,
               const AxisTable &t) {
  const int64_t taps = t.taps;
  for (int64_t a = 0; a < outer; ++a) {
    const C *s = src + a * in * inner;
    C *d = dst + a * out * inner;
    for (int64_t o = 0; o < out; ++o) {
      const int64_t *idx = &t.idx[static_cast<size_t>(o * taps)];
      const double *w = &t.weight[static_cast<size_t>(o * taps)];
      if (inner == 1) {
        C acc = 0;
        for (int64_t k = 0; k < taps; ++k)
          acc += static_cast<C>(w[k]) * s[idx[k]];
        d[o] = acc;
      } else {
        C *row = d + o * inner;
        std::fill(row, row + inner, C(0));
        for (int64_t k = 0; k < taps; ++k) {
          C wk = static_cast<C>(w[k]);
          if (wk == C(0))
            continue;
          const C *srow = s + idx[k] * inner;
          for (int64_t i = 0; i < inner; ++i)
            row[i] += wk * srow[i];
        }
      }
    }
  }
}

/// Runs the separable passes over `data` (dims `cur`, updated in place).
template <typename V, typename Pass>
void runPasses(std::vector<V> &data, std::vector<int64_t> &cur, const ResizeSpec &spec,
               const std::vector<AxisTable> &tables, const std::vector<bool> &active, Pass pass) {
  std::vector<V> next;
  for (size_t a = 0; a < cur.size(); ++a) {
    if (!active[a])
      continue;
    int64_t outer = product(cur, 0, a), inner = product(cur, a + 1);
    int64_t in = cur[a], out = spec.outDims[a];
    next.assign(static_cast<size_t>(outer * out * inner), V());
    pass(data.data(), next.data(), outer, in, out, inner, tables[a]);
    data.swap(next);
    cur[a] = out;
  }
}

/// Sets extrapolation_value at every output whose coordinate is outside on some axis.
template <typename C>
void applyExtrapolation(C *y, const std::vector<int64_t> &dims,
                        const std::vector<AxisTable> &tables, const std::vector<bool> &active,
                        C value) {
  size_t r = dims.size();
  bool any = false;
  for (size_t a = 0; a < r; ++a)
    any = any || (active[a] && tables[a].anyOutside);
  if (!any)
    return;
  int64_t total = product(dims);
  std::vector<int64_t> idx(r, 0);
  for (int64_t e = 0; e < total; ++e) {
    bool out = false;
    for (size_t a = 0; a < r && !out; ++a)
      out = active[a] && tables[a].outside[static_cast<size_t>(idx[a])];
    if (out)
      y[e] = value;
    for (size_t a = r; a-- > 0;) {
      if (++idx[a] < dims[a])
        break;
      idx[a] = 0;
    }
  }
}

/// Output elements of blendLastTwo per task at least (each task blends its
/// own rows).
constexpr int64_t kBlendMinTaskElements = int64_t{1} << 14;

#if defined(__x86_64__) && defined(__GNUC__)
#define ONNXSLIM_RESIZE_AVX512 1
/// blendLastTwo's second pass over one output row with AVX-512, 16 outputs
/// a step. Where a step's taps all lie within 16 inputs of its first
/// (`base`, >= 0: any upsampling), those 16 are loaded once and each tap's
/// inputs permuted out of them (rel: tap-major indices relative to base);
/// else (base < 0) gathered (idx). The multiplies and adds are the scalar
/// loop's (rounded forms, which are never contracted into fused
/// multiply-adds), so the bits are the same.
__attribute__((target("avx512f"))) void blendRowAvx512(const float *tmp, int64_t wIn,
                                                       int64_t wOut, int64_t taps,
                                                       const int32_t *base, const int32_t *rel,
                                                       const int32_t *idx, const float *w,
                                                       float *row) {
  const __m512 zero = _mm512_setzero_ps();
  for (int64_t ox = 0; ox < wOut; ox += 16) {
    const __mmask16 m = wOut - ox >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (wOut - ox)) - 1);
    const int64_t b = base[ox / 16];
    __m512 window = zero;
    if (b >= 0) {
      const int64_t avail = wIn - b;
      window = _mm512_maskz_loadu_ps(avail >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << avail) - 1),
                                     tmp + b);
    }
    __m512 acc = zero;
    for (int64_t k = 0; k < taps; ++k) {
      const int64_t at = k * wOut + ox;
      const __m512 t =
          b >= 0 ? _mm512_mask_permutexvar_ps(zero, m, _mm512_maskz_loadu_epi32(m, rel + at), window)
                 : _mm512_mask_i32gather_ps(zero, m, _mm512_maskz_loadu_epi32(m, idx + at), tmp, 4);
      const __m512 wk = _mm512_maskz_loadu_ps(m, w + at);
      const __m512 p = _mm512_mask_mul_round_ps(zero, m, wk, t, _MM_FROUND_CUR_DIRECTION);
      acc = _mm512_mask_add_round_ps(zero, m, acc, p, _MM_FROUND_CUR_DIRECTION);
    }
    _mm512_mask_storeu_ps(row + ox, m, acc);
  }
}

/// blendLastTwo's first pass over one output row with AVX-512: tmp[i] = the
/// sum over taps k (those of nonzero weight, in order, from zero) of
/// w[k] * s[iy[k] * wIn + i], 16 columns a step kept in a register; rounded
/// multiplies and adds as in the scalar loop, so the same bits. Plain loads
/// before the masked tail.
__attribute__((target("avx512f"))) void blendColumnsAvx512(const float *s, int64_t wIn,
                                                           const int64_t *iy, const double *w,
                                                           int64_t taps, float *tmp) {
  constexpr int kMaxTaps = 8;
  const float *src[kMaxTaps];
  float wk[kMaxTaps];
  int live = 0;
  for (int64_t k = 0; k < taps && live < kMaxTaps; ++k) {
    wk[live] = static_cast<float>(w[k]);
    if (wk[live] == 0.0f)
      continue;
    src[live++] = s + iy[k] * wIn;
  }
  // (The masked forms of the rounded operations: GCC 12 warns about the
  // unmasked ones' undefined source.)
  const __m512 zero = _mm512_setzero_ps();
  const __mmask16 all = 0xFFFF;
  int64_t i = 0;
  for (; i + 16 <= wIn; i += 16) {
    __m512 acc = zero;
    for (int k = 0; k < live; ++k) {
      const __m512 p = _mm512_mask_mul_round_ps(zero, all, _mm512_set1_ps(wk[k]),
                                                _mm512_loadu_ps(src[k] + i),
                                                _MM_FROUND_CUR_DIRECTION);
      acc = _mm512_mask_add_round_ps(zero, all, acc, p, _MM_FROUND_CUR_DIRECTION);
    }
    _mm512_storeu_ps(tmp + i, acc);
  }
  if (i < wIn) {
    const __mmask16 m = __mmask16((1u << (wIn - i)) - 1);
    __m512 acc = zero;
    for (int k = 0; k < live; ++k) {
      const __m512 p = _mm512_mask_mul_round_ps(zero, m, _mm512_set1_ps(wk[k]),
                                                _mm512_maskz_loadu_ps(m, src[k] + i),
                                                _MM_FROUND_CUR_DIRECTION);
      acc = _mm512_mask_add_round_ps(zero, m, acc, p, _MM_FROUND_CUR_DIRECTION);
    }
    _mm512_mask_storeu_ps(tmp + i, m, acc);
  }
}
#endif

/// The common image case of blendAxis over the last two axes (float, both
/// resized, no extrapolation): per output row, the input row blend of the
/// first pass is computed into `tmp` and the second pass reads it at once,
/// with the same operations in the same order as the two passes, so the
/// same bits; but without the full-size copies and intermediate between them.
/// The second pass's taps are laid out tap-major in 32-bit indices and float
/// weights once. Large resizes run bands of output rows (across all planes)
/// as tasks, every row the same operations on any thread.
void blendLastTwo(const float *x, float *y, int64_t planes, int64_t hIn, int64_t wIn,
                  int64_t hOut, int64_t wOut, const AxisTable &th, const AxisTable &tw) {
  const int64_t taps = tw.taps;
  std::vector<int32_t> idx(static_cast<size_t>(taps * wOut));
  std::vector<float> weight(idx.size());
  for (int64_t ox = 0; ox < wOut; ++ox)
    for (int64_t k = 0; k < taps; ++k) {
      idx[static_cast<size_t>(k * wOut + ox)] =
          static_cast<int32_t>(tw.idx[static_cast<size_t>(ox * taps + k)]);
      weight[static_cast<size_t>(k * wOut + ox)] =
          static_cast<float>(tw.weight[static_cast<size_t>(ox * taps + k)]);
    }
#ifdef ONNXSLIM_RESIZE_AVX512
  const bool avx512 = gemmEngineIsAvx512();
  // Per step of 16 outputs: the first input its taps read, when they all
  // lie within 16 of it (else -1), and the taps' indices relative to it.
  std::vector<int32_t> base(static_cast<size_t>((wOut + 15) / 16), -1), rel(idx.size());
  for (int64_t c = 0; avx512 && c < (wOut + 15) / 16; ++c) {
    const int64_t o0 = 16 * c, o1 = std::min(wOut, o0 + 16);
    int32_t lo = std::numeric_limits<int32_t>::max(), hi = 0;
    for (int64_t k = 0; k < taps; ++k)
      for (int64_t ox = o0; ox < o1; ++ox) {
        lo = std::min(lo, idx[static_cast<size_t>(k * wOut + ox)]);
        hi = std::max(hi, idx[static_cast<size_t>(k * wOut + ox)]);
      }
    if (hi - lo >= 16)
      continue;
    base[static_cast<size_t>(c)] = lo;
    for (int64_t k = 0; k < taps; ++k)
      for (int64_t ox = o0; ox < o1; ++ox)
        rel[static_cast<size_t>(k * wOut + ox)] = idx[static_cast<size_t>(k * wOut + ox)] - lo;
  }
#endif
  // Rows [r0, r1) of every plane.
  auto rows = [&](int64_t r0, int64_t r1) {
    thread_local std::vector<float> tmp;
    tmp.resize(static_cast<size_t>(wIn));
    for (int64_t pl = 0; pl < planes; ++pl) {
      const float *s = x + pl * hIn * wIn;
      float *d = y + pl * hOut * wOut;
      for (int64_t oy = r0; oy < r1; ++oy) {
        const int64_t *iy = &th.idx[static_cast<size_t>(oy * th.taps)];
        const double *w = &th.weight[static_cast<size_t>(oy * th.taps)];
        float *row = d + oy * wOut;
#ifdef ONNXSLIM_RESIZE_AVX512
        if (avx512 && th.taps <= 8) {
          blendColumnsAvx512(s, wIn, iy, w, th.taps, tmp.data());
          blendRowAvx512(tmp.data(), wIn, wOut, taps, base.data(), rel.data(), idx.data(),
                         weight.data(), row);
          continue;
        }
#endif
        std::fill(tmp.begin(), tmp.end(), 0.0f);
        for (int64_t k = 0; k < th.taps; ++k) {
          float wk = static_cast<float>(w[k]);
          if (wk == 0.0f)
            continue;
          const float *srow = s + iy[k] * wIn;
          for (int64_t i = 0; i < wIn; ++i)
            tmp[static_cast<size_t>(i)] += wk * srow[i];
        }
#ifdef ONNXSLIM_RESIZE_AVX512
        if (avx512) {
          blendRowAvx512(tmp.data(), wIn, wOut, taps, base.data(), rel.data(), idx.data(),
                         weight.data(), row);
          continue;
        }
#endif
        for (int64_t ox = 0; ox < wOut; ++ox) {
          float acc = 0;
          for (int64_t k = 0; k < taps; ++k)
            acc += weight[static_cast<size_t>(k * wOut + ox)] *
                   tmp[static_cast<size_t>(idx[static_cast<size_t>(k * wOut + ox)])];
          row[ox] = acc;
        }
      }
    }
  };
  parallelRowBands(hOut, planes * hOut * wOut / kBlendMinTaskElements, rows);
}

template <typename T> Status runResize(KernelContext &ctx, const Tensor &x, const ResizeSpec &spec) {
  int64_t count = 0;
  ONNXSLIM_RETURN_IF_ERROR(checkedNumElements(spec.outDims, x.dtype(), count));
  size_t r = spec.inDims.size();
  std::vector<AxisTable> tables(r);
  std::vector<bool> active(r, false);
  bool empty = count == 0 || x.numElements() == 0;
  for (size_t a = 0; a < r && !empty; ++a) {
    tables[a] = buildTable(spec, a);
    active[a] = !isIdentity(tables[a], spec.inDims[a], spec.outDims[a]);
  }
  // Zeroed only when nothing is computed (an empty input); otherwise the
  // last copy below writes every element.
  std::optional<TensorBuilder> out;
  ONNXSLIM_RETURN_IF_ERROR(allocOutput(x.dtype(), spec.outDims, out,
                                       empty ? TensorBuilder::Fill::Zeroed
                                             : TensorBuilder::Fill::Uninitialized));
  if (empty) {
    ctx.setOutput(0, out->finish());
    return Status::success();
  }
  ElemView<T> in;
  ONNXSLIM_RETURN_IF_ERROR(viewElements(x, in));
  std::vector<int64_t> cur = spec.inDims;
  if (spec.mode == Mode::Nearest) {
    // Elements are moved as same-sized unsigned words (bool included).
    using W = std::conditional_t<
        sizeof(T) == 1, uint8_t,
        std::conditional_t<sizeof(T) == 2, uint16_t,
                           std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>>;
    static_assert(sizeof(W) == sizeof(T));
    std::vector<W> data(static_cast<size_t>(in.size()));
    std::memcpy(data.data(), in.data(), data.size() * sizeof(W));
    runPasses(data, cur, spec, tables, active, gatherAxis<W>);
    T fillValue = convertElem<T>(spec.extrapolation);
    W fill;
    std::memcpy(&fill, &fillValue, sizeof(W));
    applyExtrapolation(data.data(), spec.outDims, tables, active, fill);
    std::memcpy(out->data(), data.data(), data.size() * sizeof(W));
  } else if (std::is_same_v<T, float> && r >= 2 && active[r - 2] && active[r - 1] &&
             !tables[r - 2].anyOutside && !tables[r - 1].anyOutside &&
             std::count(active.begin(), active.end(), true) == 2 &&
             spec.inDims[r - 1] <= std::numeric_limits<int32_t>::max()) {
    // (blendLastTwo indexes an input row with 32-bit offsets.)
    blendLastTwo(reinterpret_cast<const float *>(in.data()), reinterpret_cast<float *>(out->data()),
                 product(spec.inDims, 0, r - 2), spec.inDims[r - 2], spec.inDims[r - 1],
                 spec.outDims[r - 2], spec.outDims[r - 1], tables[r - 2], tables[r - 1]);
  } else {
    using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
    std::vector<C> data(static_cast<size_t>(in.size()));
    for (int64_t i = 0; i < in.size(); ++i)
      data[static_cast<size_t>(i)] = convertElem<C>(in[i]);
    runPasses(data, cur, spec, tables, active, blendAxis<C>);
    applyExtrapolation(data.data(), spec.outDims, tables, active,
                       static_cast<C>(spec.extrapolation));
    T *y = out->dataAs<T>();
    for (size_t i = 0; i < data.size(); ++i) {
      if constexpr (isIntLike<T>) {
        double v = std::nearbyint(static_cast<double>(data[i]));
        v = std::clamp(v, static_cast<double>(std::numeric_limits<T>::lowest()),
                       static_cast<double>(std::numeric_limits<T>::max()));
        y[i] = static_cast<T>(v);
      } else {
        y[i] = convertElem<T>(data[i]);
      }
    }
  }
  ctx.setOutput(0, out->finish());
  return Status::success();
}

Status runSpec(KernelContext &ctx, const Tensor &x, const ResizeSpec &spec) {
  if (spec.mode == Mode::Nearest)
    return dispatchType<NumericBoolTypes>(
        x.dtype(), [&](auto tag) { return runResize<typename decltype(tag)::type>(ctx, x, spec); });
  return dispatchType<NumericTypes>(
      x.dtype(), [&](auto tag) { return runResize<typename decltype(tag)::type>(ctx, x, spec); });
}

Status resizeKernel(KernelContext &ctx) {
  const Tensor *x = nullptr;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, x));
  ResizeSpec spec;
  if (ctx.opsetVersion() < 11) {
    const Tensor *s = nullptr;
    ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(1, s));
    std::vector<float> scales;
    ONNXSLIM_RETURN_IF_ERROR(readFloats(*s, scales));
    ONNXSLIM_RETURN_IF_ERROR(legacySpec(ctx, x->dims(), std::move(scales), spec));
  } else {
    ONNXSLIM_RETURN_IF_ERROR(modernSpec(ctx, x->dims(), spec));
  }
  return runSpec(ctx, *x, spec);
}

Status upsampleKernel(KernelContext &ctx) {
  const Tensor *x = nullptr;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, x));
  std::vector<float> scales;
  if (const Tensor *s = ctx.tensor(1)) {
    ONNXSLIM_RETURN_IF_ERROR(readFloats(*s, scales));
  } else if (const Attribute *a = ctx.attr("scales"); a && a->kind == AttrKind::Floats) {
    scales = a->floats;
  } else {
    return KernelContext::error("scales (attribute before opset 9, input after) is required");
  }
  ResizeSpec spec;
  ONNXSLIM_RETURN_IF_ERROR(legacySpec(ctx, x->dims(), std::move(scales), spec));
  return runSpec(ctx, *x, spec);
}

} // namespace

void registerResizeKernels(OpRegistry &registry) {
  registry.add("Resize", 10, kLatestOpset, resizeKernel);
  registry.add("Upsample", 7, 9, upsampleKernel);
}

} // namespace onnxslim::rt
