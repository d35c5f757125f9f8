//===- runtime/kernels/PoolRoi.cpp - Region pooling and box selection -----===//
//
// The detection-head ops: RoiAlign (opset 10 with output_half_pixel
// coordinates, 16 with coordinate_transformation_mode; avg and max modes),
// MaxRoiPool, and NonMaxSuppression (corner or center-point boxes, per-class
// greedy selection by descending score, ties in index order).
//
// Semantics follow ONNX Runtime, including RoiAlign's max mode, which takes
// the maximum over the sampling points of the largest weighted corner value.
// Every roi batch index and box is validated before use.
//
//===----------------------------------------------------------------------===//
#include "runtime/Kernel.h"
#include "runtime/kernels/Dispatch.h"
#include "runtime/kernels/NNCommon.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace onnxslim::rt {
namespace {

using namespace nn;

//===----------------------------------------------------------------------===//
// RoiAlign
//===----------------------------------------------------------------------===//

/// Bilinear sample taps of one point (weights zero when outside).
template <typename C> struct Taps {
  int64_t i1 = 0, i2 = 0, i3 = 0, i4 = 0;
  C w1 = 0, w2 = 0, w3 = 0, w4 = 0;
};

template <typename C> Taps<C> bilinearTaps(C y, C x, int64_t H, int64_t W) {
  Taps<C> t;
  if (!(y >= -1 && y <= static_cast<C>(H) && x >= -1 && x <= static_cast<C>(W)))
    return t; // outside (or NaN): contributes zero
  y = std::max(y, C(0));
  x = std::max(x, C(0));
  int64_t yLow = static_cast<int64_t>(y), xLow = static_cast<int64_t>(x), yHigh, xHigh;
  if (yLow >= H - 1) {
    yHigh = yLow = H - 1;
    y = static_cast<C>(yLow);
  } else {
    yHigh = yLow + 1;
  }
  if (xLow >= W - 1) {
    xHigh = xLow = W - 1;
    x = static_cast<C>(xLow);
  } else {
    xHigh = xLow + 1;
  }
  C ly = y - static_cast<C>(yLow), lx = x - static_cast<C>(xLow);
  C hy = 1 - ly, hx = 1 - lx;
  t.i1 = yLow * W + xLow;
  t.i2 = yLow * W + xHigh;
  t.i3 = yHigh * W + xLow;
  t.i4 = yHigh * W + xHigh;
  t.w1 = hy * hx;
  t.w2 = hy * lx;
  t.w3 = ly * hx;
  t.w4 = ly * lx;
  return t;
}

template <typename T> Status roiAlignTyped(KernelContext &ctx) {
  using C = ComputeType<T>;
  FloatInput<T> X;
  ONNXSLIM_RETURN_IF_ERROR(requiredFloatInput(ctx, 0, "input X", X));
  const Tensor *roisT = nullptr, *batchT = nullptr;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(1, roisT));
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(2, batchT));
  std::vector<C> rois;
  std::vector<int64_t> batchIdx;
  ONNXSLIM_RETURN_IF_ERROR(readAs(*roisT, rois));
  ONNXSLIM_RETURN_IF_ERROR(readAs(*batchT, batchIdx));
  if (X.rank() != 4)
    return KernelContext::error("input X must be 4-D, got " + shapeString(X.dims()));
  if (roisT->rank() != 2 || roisT->dims()[1] != 4)
    return KernelContext::error("rois must be [num_rois, 4], got " + shapeString(roisT->dims()));
  int64_t numRois = roisT->dims()[0];
  if (static_cast<int64_t>(batchIdx.size()) != numRois)
    return KernelContext::error("batch_indices must have one entry per roi");
  int64_t N = X.dims()[0], Cn = X.dims()[1], H = X.dims()[2], W = X.dims()[3];
  int64_t oh = ctx.attrInt("output_height", 1), ow = ctx.attrInt("output_width", 1);
  int64_t samplingRatio = ctx.attrInt("sampling_ratio", 0);
  if (oh <= 0 || ow <= 0 || oh > (int64_t{1} << 20) || ow > (int64_t{1} << 20) ||
      samplingRatio < 0)
    return KernelContext::error("output_height/output_width must be positive and "
                                "sampling_ratio non-negative");
  C scale = static_cast<C>(ctx.attrFloat("spatial_scale", 1.0f));
  std::string modeName = ctx.attrString("mode", "avg");
  if (modeName != "avg" && modeName != "max")
    return KernelContext::error("unknown mode '" + modeName + "'");
  bool maxMode = modeName == "max";
  std::string coord = ctx.opsetVersion() >= 16
                          ? ctx.attrString("coordinate_transformation_mode", "half_pixel")
                          : "output_half_pixel";
  if (coord != "half_pixel" && coord != "output_half_pixel")
    return KernelContext::error("unknown coordinate_transformation_mode '" + coord + "'");
  bool halfPixel = coord == "half_pixel";
  FloatOutput<T> Y;
  ONNXSLIM_RETURN_IF_ERROR(Y.init({numRois, Cn, oh, ow}));
  C *y = Y.data();
  for (int64_t r = 0; r < numRois; ++r) {
    int64_t b = batchIdx[static_cast<size_t>(r)];
    if (b < 0 || b >= N)
      return KernelContext::error("batch index " + std::to_string(b) + " is out of range");
    const C *box = rois.data() + r * 4;
    C offset = halfPixel ? C(0.5) : C(0);
    C x0 = box[0] * scale - offset, y0 = box[1] * scale - offset;
    C x1 = box[2] * scale - offset, y1 = box[3] * scale - offset;
    C roiW = x1 - x0, roiH = y1 - y0;
    if (!halfPixel) {
      roiW = std::max(roiW, C(1));
      roiH = std::max(roiH, C(1));
    }
    C binH = roiH / static_cast<C>(oh), binW = roiW / static_cast<C>(ow);
    auto gridCount = [&](C extent, int64_t bins) -> int64_t {
      if (samplingRatio > 0)
        return samplingRatio;
      C v = std::ceil(extent / static_cast<C>(bins));
      return v > 0 && v < C(1 << 20) ? static_cast<int64_t>(v) : (v > 0 ? int64_t{1} << 20 : 0);
    };
    int64_t gh = gridCount(roiH, oh), gw = gridCount(roiW, ow);
    if (gh * gw > (int64_t{1} << 24) / (oh * ow) + 1)
      return KernelContext::error("roi " + std::to_string(r) +
                                  " needs too many sampling points (sampling_ratio 0 on a huge box)");
    C count = static_cast<C>(std::max<int64_t>(gh * gw, 1));
    // Taps per (ph, pw, iy, ix) are shared by every channel.
    std::vector<Taps<C>> taps;
    taps.reserve(static_cast<size_t>(oh * ow * gh * gw));
    for (int64_t ph = 0; ph < oh; ++ph)
      for (int64_t pw = 0; pw < ow; ++pw)
        for (int64_t iy = 0; iy < gh; ++iy) {
          C yy = y0 + static_cast<C>(ph) * binH +
                 (static_cast<C>(iy) + C(0.5)) * binH / static_cast<C>(gh);
          for (int64_t ix = 0; ix < gw; ++ix) {
            C xx = x0 + static_cast<C>(pw) * binW +
                   (static_cast<C>(ix) + C(0.5)) * binW / static_cast<C>(gw);
            taps.push_back(bilinearTaps(yy, xx, H, W));
          }
        }
    int64_t perBin = gh * gw;
    for (int64_t c = 0; c < Cn; ++c) {
      const C *plane = X.data() + (b * Cn + c) * H * W;
      C *out = y + ((r * Cn + c) * oh) * ow;
      for (int64_t bin = 0; bin < oh * ow; ++bin) {
        const Taps<C> *t = taps.data() + bin * perBin;
        C acc = 0;
        for (int64_t k = 0; k < perBin; ++k) {
          const Taps<C> &p = t[k];
          if (!maxMode) {
            acc += p.w1 * plane[p.i1] + p.w2 * plane[p.i2] + p.w3 * plane[p.i3] +
                   p.w4 * plane[p.i4];
          } else {
            C v = std::max(std::max(p.w1 * plane[p.i1], p.w2 * plane[p.i2]),
                           std::max(p.w3 * plane[p.i3], p.w4 * plane[p.i4]));
            acc = k == 0 ? v : std::max(acc, v);
          }
        }
        out[bin] = maxMode ? acc : acc / count;
      }
    }
  }
  ctx.setOutput(0, Y.finish());
  return Status::success();
}

Status roiAlignKernel(KernelContext &ctx) {
  return dispatchFloatOp(ctx, 0,
                         [&](auto tag) { return roiAlignTyped<typename decltype(tag)::type>(ctx); });
}

//===----------------------------------------------------------------------===//
// MaxRoiPool
//===----------------------------------------------------------------------===//

template <typename T> Status maxRoiPoolTyped(KernelContext &ctx) {
  using C = ComputeType<T>;
  FloatInput<T> X, R;
  ONNXSLIM_RETURN_IF_ERROR(requiredFloatInput(ctx, 0, "input X", X));
  ONNXSLIM_RETURN_IF_ERROR(requiredFloatInput(ctx, 1, "rois", R));
  if (X.rank() != 4)
    return KernelContext::error("input X must be 4-D, got " + shapeString(X.dims()));
  if (R.rank() != 2 || R.dims()[1] != 5)
    return KernelContext::error("rois must be [num_rois, 5], got " + shapeString(R.dims()));
  std::vector<int64_t> pooled = ctx.attrInts("pooled_shape");
  if (pooled.size() != 2 || pooled[0] <= 0 || pooled[1] <= 0)
    return KernelContext::error("pooled_shape must be two positive integers");
  double scale = ctx.attrFloat("spatial_scale", 1.0f);
  int64_t N = X.dims()[0], Cn = X.dims()[1], H = X.dims()[2], W = X.dims()[3];
  int64_t numRois = R.dims()[0], ph = pooled[0], pw = pooled[1];
  FloatOutput<T> Y;
  ONNXSLIM_RETURN_IF_ERROR(Y.init({numRois, Cn, ph, pw}));
  auto roundCoord = [&](C v) -> int64_t {
    double d = std::round(static_cast<double>(v) * scale);
    return static_cast<int64_t>(std::clamp(d, -1e15, 1e15));
  };
  for (int64_t r = 0; r < numRois; ++r) {
    const C *roi = R.data() + r * 5;
    double bd = static_cast<double>(roi[0]);
    if (!(bd >= 0 && bd < static_cast<double>(N)))
      return KernelContext::error("roi batch index " + std::to_string(bd) + " is out of range");
    int64_t b = static_cast<int64_t>(bd);
    int64_t xs = roundCoord(roi[1]), ys = roundCoord(roi[2]);
    int64_t xe = roundCoord(roi[3]), ye = roundCoord(roi[4]);
    double roiW = static_cast<double>(std::max<int64_t>(xe - xs + 1, 1));
    double roiH = static_cast<double>(std::max<int64_t>(ye - ys + 1, 1));
    double binH = roiH / static_cast<double>(ph), binW = roiW / static_cast<double>(pw);
    for (int64_t c = 0; c < Cn; ++c) {
      const C *plane = X.data() + (b * Cn + c) * H * W;
      C *out = Y.data() + (r * Cn + c) * ph * pw;
      for (int64_t py = 0; py < ph; ++py) {
        int64_t hs = static_cast<int64_t>(std::floor(static_cast<double>(py) * binH)) + ys;
        int64_t he = static_cast<int64_t>(std::ceil(static_cast<double>(py + 1) * binH)) + ys;
        hs = std::clamp<int64_t>(hs, 0, H);
        he = std::clamp<int64_t>(he, 0, H);
        for (int64_t px = 0; px < pw; ++px) {
          int64_t ws = static_cast<int64_t>(std::floor(static_cast<double>(px) * binW)) + xs;
          int64_t we = static_cast<int64_t>(std::ceil(static_cast<double>(px + 1) * binW)) + xs;
          ws = std::clamp<int64_t>(ws, 0, W);
          we = std::clamp<int64_t>(we, 0, W);
          C best = 0;
          bool any = false;
          for (int64_t yy = hs; yy < he; ++yy)
            for (int64_t xx = ws; xx < we; ++xx) {
              C v = plane[yy * W + xx];
              if (!any || v > best)
                best = v;
              any = true;
            }
          out[py * pw + px] = any ? best : C(0);
        }
      }
    }
  }
  ctx.setOutput(0, Y.finish());
  return Status::success();
}

Status maxRoiPoolKernel(KernelContext &ctx) {
  return dispatchFloatOp(
      ctx, 0, [&](auto tag) { return maxRoiPoolTyped<typename decltype(tag)::type>(ctx); });
}

//===----------------------------------------------------------------------===//
// NonMaxSuppression
//===----------------------------------------------------------------------===//

struct Box {
  float y1, x1, y2, x2;
};

/// The boxes a class has kept so far, a column per coordinate (and each
/// one's area), so that a candidate is compared with all of them in
/// vector lanes.
struct KeptBoxes {
  std::vector<float> y1, x1, y2, x2, area;
  size_t size() const { return y1.size(); }
  void clear() {
    for (auto *v : {&y1, &x1, &y2, &x2, &area})
      v->clear();
  }
  void push(const Box &b, float a) {
    y1.push_back(b.y1), x1.push_back(b.x1), y2.push_back(b.y2), x2.push_back(b.x2);
    area.push_back(a);
  }
};

float boxArea(const Box &b) { return (b.y2 - b.y1) * (b.x2 - b.x1); }

/// Whether a kept box overlaps the candidate (area `areaC`) by more than
/// the threshold: IoU = intersection / union, computed as ONNX Runtime
/// does (boxes of no area, and no intersection, never suppress), four kept
/// boxes a step without a branch where SSE2 is there (the same operations
/// per lane: maxps(c, k) is std::max(k, c), NaN included); the first step
/// with a suppressor ends the search.
bool anySuppresses(const KeptBoxes &k, const Box &c, float areaC, float threshold) {
  if (areaC <= 0)
    return false;
  size_t j = 0;
#ifdef __SSE2__
  const __m128 cy1 = _mm_set1_ps(c.y1), cx1 = _mm_set1_ps(c.x1), cy2 = _mm_set1_ps(c.y2),
               cx2 = _mm_set1_ps(c.x2), ca = _mm_set1_ps(areaC), t = _mm_set1_ps(threshold),
               zero = _mm_setzero_ps();
  for (; j + 4 <= k.size(); j += 4) {
    const __m128 iy1 = _mm_max_ps(cy1, _mm_loadu_ps(&k.y1[j]));
    const __m128 ix1 = _mm_max_ps(cx1, _mm_loadu_ps(&k.x1[j]));
    const __m128 iy2 = _mm_min_ps(cy2, _mm_loadu_ps(&k.y2[j]));
    const __m128 ix2 = _mm_min_ps(cx2, _mm_loadu_ps(&k.x2[j]));
    const __m128 inter = _mm_mul_ps(_mm_max_ps(_mm_sub_ps(iy2, iy1), zero),
                                    _mm_max_ps(_mm_sub_ps(ix2, ix1), zero));
    const __m128 ka = _mm_loadu_ps(&k.area[j]);
    const __m128 uni = _mm_sub_ps(_mm_add_ps(ka, ca), inter);
    __m128 hit = _mm_and_ps(_mm_cmpgt_ps(ka, zero), _mm_cmpgt_ps(inter, zero));
    hit = _mm_and_ps(hit, _mm_cmpgt_ps(uni, zero));
    hit = _mm_and_ps(hit, _mm_cmpgt_ps(_mm_div_ps(inter, uni), t));
    if (_mm_movemask_ps(hit))
      return true;
  }
#endif
  for (; j < k.size(); ++j) {
    const float iy1 = std::max(k.y1[j], c.y1), ix1 = std::max(k.x1[j], c.x1);
    const float iy2 = std::min(k.y2[j], c.y2), ix2 = std::min(k.x2[j], c.x2);
    const float inter = std::max(0.0f, iy2 - iy1) * std::max(0.0f, ix2 - ix1);
    const float uni = k.area[j] + areaC - inter;
    if (k.area[j] > 0 && inter > 0 && uni > 0 && inter / uni > threshold)
      return true;
  }
  return false;
}

Status nonMaxSuppressionKernel(KernelContext &ctx) {
  const Tensor *boxesT = nullptr, *scoresT = nullptr;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, boxesT));
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(1, scoresT));
  if (boxesT->rank() != 3 || boxesT->dims()[2] != 4)
    return KernelContext::error("boxes must be [batches, boxes, 4], got " +
                                shapeString(boxesT->dims()));
  if (scoresT->rank() != 3 || scoresT->dims()[0] != boxesT->dims()[0] ||
      scoresT->dims()[2] != boxesT->dims()[1])
    return KernelContext::error("scores " + shapeString(scoresT->dims()) +
                                " do not match boxes " + shapeString(boxesT->dims()));
  std::vector<float> boxes, scores;
  ONNXSLIM_RETURN_IF_ERROR(readAs(*boxesT, boxes));
  ONNXSLIM_RETURN_IF_ERROR(readAs(*scoresT, scores));
  int64_t maxOut = 0;
  float iouThreshold = 0, scoreThreshold = 0;
  bool hasScoreThreshold = false;
  if (const Tensor *t = ctx.tensor(2); t && t->numElements() > 0)
    ONNXSLIM_RETURN_IF_ERROR(readScalar(*t, maxOut));
  if (const Tensor *t = ctx.tensor(3); t && t->numElements() > 0)
    ONNXSLIM_RETURN_IF_ERROR(readScalar(*t, iouThreshold));
  if (const Tensor *t = ctx.tensor(4); t && t->numElements() > 0) {
    ONNXSLIM_RETURN_IF_ERROR(readScalar(*t, scoreThreshold));
    hasScoreThreshold = true;
  }
  if (iouThreshold < 0 || iouThreshold > 1)
    return KernelContext::error("iou_threshold must be in [0, 1]");
  bool center = ctx.attrInt("center_point_box", 0) != 0;
  int64_t batches = boxesT->dims()[0], numBoxes = boxesT->dims()[1];
  int64_t classes = scoresT->dims()[1];
  // Canonical corner boxes.
  std::vector<Box> canon(static_cast<size_t>(batches * numBoxes));
  for (size_t i = 0; i < canon.size(); ++i) {
    const float *b = boxes.data() + i * 4;
    if (center) {
      float xc = b[0], yc = b[1], w = b[2], h = b[3];
      canon[i] = {yc - h / 2, xc - w / 2, yc + h / 2, xc + w / 2};
    } else {
      canon[i] = {std::min(b[0], b[2]), std::min(b[1], b[3]), std::max(b[0], b[2]),
                  std::max(b[1], b[3])};
    }
  }
  std::vector<int64_t> selected;
  std::vector<int64_t> order;
  KeptBoxes kept;
  for (int64_t b = 0; b < batches && maxOut > 0; ++b)
    for (int64_t c = 0; c < classes; ++c) {
      const float *sc = scores.data() + (b * classes + c) * numBoxes;
      order.clear();
      for (int64_t i = 0; i < numBoxes; ++i)
        if (!hasScoreThreshold || sc[i] > scoreThreshold)
          order.push_back(i);
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t l, int64_t r) { return sc[l] > sc[r]; });
      kept.clear();
      for (int64_t i : order) {
        if (static_cast<int64_t>(kept.size()) >= maxOut)
          break;
        const Box &cand = canon[static_cast<size_t>(b * numBoxes + i)];
        const float area = boxArea(cand);
        if (!anySuppresses(kept, cand, area, iouThreshold)) {
          kept.push(cand, area);
          selected.insert(selected.end(), {b, c, i});
        }
      }
    }
  std::optional<TensorBuilder> out;
  ONNXSLIM_RETURN_IF_ERROR(
      allocOutput(DataType::Int64, {static_cast<int64_t>(selected.size() / 3), 3}, out));
  std::copy(selected.begin(), selected.end(), out->dataAs<int64_t>());
  ctx.setOutput(0, out->finish());
  return Status::success();
}

} // namespace

void registerPoolRoiKernels(OpRegistry &registry) {
  registry.add("RoiAlign", 10, kLatestOpset, roiAlignKernel);
  registry.add("MaxRoiPool", 1, kLatestOpset, maxRoiPoolKernel);
  registry.add("NonMaxSuppression", 10, kLatestOpset, nonMaxSuppressionKernel);
}

} // namespace onnxslim::rt
