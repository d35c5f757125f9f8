//===- runtime/conv/Common.cpp - What every convolution shares -----------===//
//
// The non-template parts of runtime/conv/Common.h: the padded-plane plan,
// chunk sizes and the node state of packed filters.
//
//===----------------------------------------------------------------------===//
#include "runtime/conv/Common.h"

#include "runtime/Gemm.h"

#include <memory>

namespace onnxslim::rt::nn {

std::shared_ptr<void> makePackedFilters() { return std::make_shared<PackedFilters>(); }

bool PackedFilters::holds(const float *w, int64_t groups, int64_t mg, int64_t r,
                          bool isTransposed, int64_t n, int64_t inParts) {
  const char *current = gemmEngineName();
  if (source == w && group == groups && Mg == mg && rows == r && engine == current &&
      transposed == isTransposed && parts == inParts)
    return true;
  data.resize(static_cast<size_t>(n));
  source = w;
  group = groups;
  Mg = mg;
  rows = r;
  engine = current;
  transposed = isTransposed;
  parts = inParts;
  return false;
}

int64_t chunkRows(int64_t matrixRows, int64_t width, int64_t gridRows) {
  int64_t perRow = std::max<int64_t>(1, matrixRows * width);
  return std::clamp<int64_t>(kColumnBudget / perRow, 1, std::max<int64_t>(gridRows, 1));
}

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

void packFilterColumns(const float *w, int64_t mStride, int64_t kStride, int64_t M, int64_t K,
                       float *packed) {
  const int64_t width = gemmPanelWidth<float>(), panels = (M + width - 1) / width;
  for (int64_t p = 0; p < panels; ++p)
    for (int64_t k = 0; k < K; ++k) {
      float *row = packed + (p * K + k) * width;
      for (int64_t j = 0; j < width; ++j) {
        const int64_t m = p * width + j;
        row[j] = m < M ? w[m * mStride + k * kStride] : 0.0f;
      }
    }
}

} // namespace onnxslim::rt::nn
