//===- runtime/kernels/ResizeGridSample.cpp - GridSample -------------------===//
//
// GridSample (opset 16, 20, 22) over 4-D inputs (all modes: bilinear/linear,
// nearest, bicubic/cubic) and 5-D inputs (nearest, linear), with the
// padding modes zeros, border and reflection and align_corners. Semantics
// follow ONNX Runtime: the grid is denormalized to pixel coordinates,
// padding is applied per fetched pixel, nearest rounds half to even and
// bicubic uses Keys' kernel with A = -0.75 on a 4x4 neighbourhood.
//
//===----------------------------------------------------------------------===//
#include "runtime/Kernel.h"
#include "runtime/kernels/Dispatch.h"
#include "runtime/kernels/NNCommon.h"

#include <algorithm>
#include <cmath>

namespace onnxslim::rt {
namespace {

using namespace nn;

enum class GsMode { Nearest, Linear, Cubic };
enum class GsPad { Zeros, Border, Reflection };

/// Pixel fetch with padding over a volume [D, H, W] (D = 1 for images).
template <typename C> struct Sampler {
  const C *data = nullptr;
  int64_t dims[3] = {1, 1, 1}; // D, H, W
  C lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
  GsPad pad = GsPad::Zeros;

  static C reflect(C x, C xMin, C xMax) {
    C range = xMax - xMin;
    if (range <= 0)
      return xMin;
    if (x < xMin) {
      C dx = xMin - x;
      int64_t n = static_cast<int64_t>(dx / range);
      C r = dx - static_cast<C>(n) * range;
      return n % 2 == 0 ? xMin + r : xMax - r;
    }
    if (x > xMax) {
      C dx = x - xMax;
      int64_t n = static_cast<int64_t>(dx / range);
      C r = dx - static_cast<C>(n) * range;
      return n % 2 == 0 ? xMax - r : xMin + r;
    }
    return x;
  }

  C at(int64_t z, int64_t y, int64_t x) const {
    int64_t idx[3] = {z, y, x};
    for (int i = 0; i < 3; ++i) {
      if (pad == GsPad::Zeros) {
        if (idx[i] < 0 || idx[i] >= dims[i])
          return C(0);
      } else if (pad == GsPad::Border) {
        idx[i] = std::clamp<int64_t>(idx[i], 0, dims[i] - 1);
      } else {
        idx[i] = static_cast<int64_t>(reflect(static_cast<C>(idx[i]), lo[i], hi[i]));
        idx[i] = std::clamp<int64_t>(idx[i], 0, dims[i] - 1);
      }
    }
    return data[(idx[0] * dims[1] + idx[1]) * dims[2] + idx[2]];
  }
};

template <typename C> void cubicCoeffs(C x, C coeffs[4]) {
  const C A = C(-0.75);
  x = std::abs(x);
  coeffs[0] = ((A * (x + 1) - 5 * A) * (x + 1) + 8 * A) * (x + 1) - 4 * A;
  coeffs[1] = ((A + 2) * x - (A + 3)) * x * x + 1;
  coeffs[2] = ((A + 2) * (1 - x) - (A + 3)) * (1 - x) * (1 - x) + 1;
  coeffs[3] = ((A * (2 - x) - 5 * A) * (2 - x) + 8 * A) * (2 - x) - 4 * A;
}

/// Pixel coordinate of normalized location n along an axis of `len` pixels;
/// non-finite or huge values are pinned far outside so index math stays defined.
template <typename C> C denormalize(C n, int64_t len, bool alignCorners) {
  C x = alignCorners ? (n + 1) / 2 * static_cast<C>(len - 1)
                     : ((n + 1) * static_cast<C>(len) - 1) / 2;
  const C limit = C(1e15);
  if (!(x > -limit))
    return -limit;
  if (!(x < limit))
    return limit;
  return x;
}

template <typename T> Status gridSampleTyped(KernelContext &ctx) {
  using C = ComputeType<T>;
  FloatInput<T> X;
  ONNXSLIM_RETURN_IF_ERROR(requiredFloatInput(ctx, 0, "input X", X));
  const Tensor *gridT = nullptr;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(1, gridT));
  if (!isFloatingPoint(gridT->dtype()))
    return KernelContext::error("grid must be a floating-point tensor");
  std::vector<C> gridValues;
  ONNXSLIM_RETURN_IF_ERROR(readAs(*gridT, gridValues));
  const std::vector<int64_t> &gDims = gridT->dims();
  int64_t spatial = X.rank() - 2;
  if (spatial != 2 && spatial != 3)
    return KernelContext::error("only 4-D and 5-D inputs are supported, got " +
                                shapeString(X.dims()));
  if (static_cast<int64_t>(gDims.size()) != X.rank() || gDims.back() != spatial || gDims[0] != X.dims()[0])
    return KernelContext::error("grid " + shapeString(gDims) + " does not match input " +
                                shapeString(X.dims()));
  std::string modeName = ctx.attrString("mode", "bilinear");
  GsMode mode;
  if (modeName == "bilinear" || modeName == "linear")
    mode = GsMode::Linear;
  else if (modeName == "nearest")
    mode = GsMode::Nearest;
  else if (modeName == "bicubic" || modeName == "cubic")
    mode = GsMode::Cubic;
  else
    return KernelContext::error("unknown mode '" + modeName + "'");
  if (mode == GsMode::Cubic && spatial == 3)
    return KernelContext::error("cubic mode supports 4-D inputs only");
  std::string padName = ctx.attrString("padding_mode", "zeros");
  GsPad pad;
  if (padName == "zeros")
    pad = GsPad::Zeros;
  else if (padName == "border")
    pad = GsPad::Border;
  else if (padName == "reflection")
    pad = GsPad::Reflection;
  else
    return KernelContext::error("unknown padding_mode '" + padName + "'");
  bool alignCorners = ctx.attrInt("align_corners", 0) != 0;

  int64_t N = X.dims()[0], Cn = X.dims()[1];
  int64_t inDims[3] = {1, 1, 1}, outDims[3] = {1, 1, 1};
  for (int64_t i = 0; i < spatial; ++i) {
    inDims[3 - spatial + i] = X.dims()[static_cast<size_t>(2 + i)];
    outDims[3 - spatial + i] = gDims[static_cast<size_t>(1 + i)];
  }
  std::vector<int64_t> yDims = {N, Cn};
  for (int64_t i = 0; i < spatial; ++i)
    yDims.push_back(gDims[static_cast<size_t>(1 + i)]);
  FloatOutput<T> Y;
  ONNXSLIM_RETURN_IF_ERROR(Y.init(yDims));
  if (Y.size() == 0) {
    ctx.setOutput(0, Y.finish());
    return Status::success();
  }
  for (int i = 0; i < 3; ++i)
    if (inDims[i] <= 0)
      return KernelContext::error("input spatial dims must be positive");
  const int64_t inS = inDims[0] * inDims[1] * inDims[2];
  const int64_t outS = outDims[0] * outDims[1] * outDims[2];
  Sampler<C> s;
  s.pad = pad;
  for (int i = 0; i < 3; ++i) {
    s.dims[i] = inDims[i];
    s.lo[i] = alignCorners ? C(0) : C(-0.5);
    s.hi[i] = alignCorners ? static_cast<C>(inDims[i] - 1) : static_cast<C>(inDims[i]) - C(0.5);
  }
  for (int64_t n = 0; n < N; ++n) {
    const C *grid = gridValues.data() + n * outS * spatial;
    for (int64_t c = 0; c < Cn; ++c) {
      s.data = X.data() + (n * Cn + c) * inS;
      C *y = Y.data() + (n * Cn + c) * outS;
      for (int64_t o = 0; o < outS; ++o) {
        const C *gp = grid + o * spatial;
        // Grid order is (x, y[, z]); coordinates here are (z, y, x).
        C coord[3] = {0, 0, 0};
        for (int64_t i = 0; i < spatial; ++i)
          coord[2 - i] = denormalize(gp[i], inDims[2 - i], alignCorners);
        if (mode == GsMode::Nearest) {
          y[o] = s.at(static_cast<int64_t>(std::nearbyint(coord[0])),
                      static_cast<int64_t>(std::nearbyint(coord[1])),
                      static_cast<int64_t>(std::nearbyint(coord[2])));
        } else if (mode == GsMode::Linear) {
          int64_t base[3];
          C frac[3];
          for (int i = 0; i < 3; ++i) {
            C f = std::floor(coord[i]);
            base[i] = static_cast<int64_t>(f);
            frac[i] = coord[i] - f;
          }
          C acc = 0;
          int zTaps = spatial == 3 ? 2 : 1;
          for (int dz = 0; dz < zTaps; ++dz)
            for (int dy = 0; dy < 2; ++dy)
              for (int dx = 0; dx < 2; ++dx) {
                C w = (dy ? frac[1] : 1 - frac[1]) * (dx ? frac[2] : 1 - frac[2]);
                if (spatial == 3)
                  w *= dz ? frac[0] : 1 - frac[0];
                acc += w * s.at(base[0] + dz, base[1] + dy, base[2] + dx);
              }
          y[o] = acc;
        } else {
          int64_t x0 = static_cast<int64_t>(std::floor(coord[2])) - 1;
          int64_t y0 = static_cast<int64_t>(std::floor(coord[1])) - 1;
          C cx[4], cy[4];
          cubicCoeffs(coord[2] - static_cast<C>(x0) - 1, cx);
          cubicCoeffs(coord[1] - static_cast<C>(y0) - 1, cy);
          C acc = 0;
          for (int h = 0; h < 4; ++h) {
            C row = 0;
            for (int w = 0; w < 4; ++w)
              row += cx[w] * s.at(0, y0 + h, x0 + w);
            acc += cy[h] * row;
          }
          y[o] = acc;
        }
      }
    }
  }
  ctx.setOutput(0, Y.finish());
  return Status::success();
}

Status gridSampleKernel(KernelContext &ctx) {
  return dispatchFloatOp(
      ctx, 0, [&](auto tag) { return gridSampleTyped<typename decltype(tag)::type>(ctx); });
}

} // namespace

void registerResizeGridSampleKernels(OpRegistry &registry) {
  registry.add("GridSample", 16, kLatestOpset, gridSampleKernel);
}

} // namespace onnxslim::rt
