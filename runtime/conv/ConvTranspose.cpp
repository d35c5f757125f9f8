//===- runtime/conv/ConvTranspose.cpp - ConvTranspose and col2im ----------===//
//
// ConvTranspose as col = W^T * X by GEMM, then scattered into Y (col2im,
// the adjoint of im2col), in chunks of grid rows whose column matrix stays
// a few MB; every output starts from its bias (or 0). col2imAdd is also
// the Col2Im operator on its own (runtime/kernels/Conv.cpp).
//
//===----------------------------------------------------------------------===//
#include "runtime/Gemm.h"
#include "runtime/conv/Algorithms.h"
#include "runtime/conv/Common.h"

#include <algorithm>

namespace onnxslim::rt::nn {

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

template void col2imAdd<float>(const float *, int64_t, const Window::Dims3 &, int64_t, int64_t,
                              float *);
template void col2imAdd<double>(const double *, int64_t, const Window::Dims3 &, int64_t, int64_t,
                              double *);
template void convTransposeForward<float>(const float *, const float *, const float *, float *,
                                           int64_t, int64_t, int64_t, int64_t, const Window &);
template void convTransposeForward<double>(const double *, const double *, const double *, double *,
                                           int64_t, int64_t, int64_t, int64_t, const Window &);

} // namespace onnxslim::rt::nn
