//===- runtime/conv/IntConv.cpp - Exact 8-bit integer convolution ---------===//

#include "runtime/conv/IntConv.h"

#include "runtime/IntGemm.h"

#include <algorithm>
#include <cstring>

namespace onnxslim::rt::nn {
namespace {

/// The im2col rows of one image's group of channels: row k is channel
/// k / kernelSize at kernel offset k % kernelSize, its columns the output
/// positions; a tap in the padding reads the zero point.
class Im2colRows final : public IntGemmRows {
public:
  Im2colRows(const uint8_t *x, const Window::Dims3 &d, uint8_t zero)
      : x_(x), d_(d), zero_(zero), inPlane_(d.in[0] * d.in[1] * d.in[2]),
        taps_(d.kernel[0] * d.kernel[1] * d.kernel[2]) {
    inPlace_ = taps_ == 1;
    for (int i = 0; i < 3; ++i)
      inPlace_ = inPlace_ && d.strides[i] == 1 && d.padBegin[i] == 0 && d.out[i] == d.in[i];
  }

  const uint8_t *row(int64_t k, int64_t p0, int64_t count, uint8_t *out) const override {
    const int64_t c = k / taps_, tap = k % taps_;
    const uint8_t *plane = x_ + c * inPlane_;
    if (inPlace_)
      return plane + p0;
    const int64_t kw = tap % d_.kernel[2], kh = tap / d_.kernel[2] % d_.kernel[1],
                  kd = tap / (d_.kernel[2] * d_.kernel[1]);
    const int64_t OW = d_.out[2], OH = d_.out[1], IW = d_.in[2], IH = d_.in[1], ID = d_.in[0];
    const int64_t sw = d_.strides[2];
    const int64_t xOff = kw * d_.dilations[2] - d_.padBegin[2];
    uint8_t *dst = out;
    for (int64_t p = p0, end = p0 + count; p < end;) {
      const int64_t ow = p % OW, oh = p / OW % OH, od = p / (OW * OH);
      const int64_t run = std::min(OW - ow, end - p);
      const int64_t id = od * d_.strides[0] - d_.padBegin[0] + kd * d_.dilations[0];
      const int64_t ih = oh * d_.strides[1] - d_.padBegin[1] + kh * d_.dilations[1];
      if (id < 0 || id >= ID || ih < 0 || ih >= IH) {
        std::memset(dst, zero_, static_cast<size_t>(run));
      } else {
        const uint8_t *src = plane + (id * IH + ih) * IW;
        // Output columns [lo, hi) of the run read inside the row.
        const int64_t x0 = ow * sw + xOff;
        int64_t lo = 0, hi = run;
        if (x0 < 0)
          lo = std::min(run, (-x0 + sw - 1) / sw);
        hi = std::max(lo, std::min(run, x0 < IW ? (IW - 1 - x0) / sw + 1 : 0));
        std::memset(dst, zero_, static_cast<size_t>(lo));
        if (sw == 1)
          std::memcpy(dst + lo, src + x0 + lo, static_cast<size_t>(hi - lo));
        else
          for (int64_t i = lo; i < hi; ++i)
            dst[i] = src[x0 + i * sw];
        std::memset(dst + hi, zero_, static_cast<size_t>(run - hi));
      }
      dst += run;
      p += run;
    }
    return out;
  }

private:
  const uint8_t *x_;
  Window::Dims3 d_;
  uint8_t zero_;
  int64_t inPlane_, taps_;
  bool inPlace_ = false;
};

} // namespace

void integerConvolution(const IntConvOperand &x, const IntConvOperand &w, int64_t N, int64_t Cin,
                        int64_t M, int64_t group, const Window &win, int32_t *y) {
  const Window::Dims3 d = win.to3d();
  const int64_t Cg = Cin / group, Mg = M / group, taps = win.kernelSize();
  const int64_t K = Cg * taps, P = win.outSize(), inPlane = win.inSize();
  const int32_t xz = x.zero ? x.zero[0] : 0;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t g = 0; g < group; ++g) {
      Im2colRows rows(x.data + (n * Cin + g * Cg) * inPlane, d, static_cast<uint8_t>(xz));
      IntOperand a{w.isSigned, w.zero ? w.zero + (w.zeroPerChannel ? g * Mg : 0) : nullptr,
                   w.zeroPerChannel};
      IntOperand b{x.isSigned, x.zero, false};
      intGemm(Mg, P, K, w.data + g * Mg * K, K, a, rows, b, y + (n * M + g * Mg) * P, P);
    }
}

} // namespace onnxslim::rt::nn
