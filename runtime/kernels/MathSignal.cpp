//===- runtime/kernels/MathSignal.cpp - Signal processing ops -------------===//
//
// The opset-17 signal ops: HannWindow, HammingWindow, BlackmanWindow (a
// generalized cosine window, periodic or symmetric), DFT (forward/inverse,
// real or complex input, dft_length padding/truncation, onesided output),
// STFT (framed, optionally windowed DFT of a real or complex signal) and
// MelWeightMatrix (triangular mel filter bank, as the ONNX reference builds
// it). Transforms are direct O(n^2) DFTs in double precision with a
// precomputed twiddle table, which is exact enough and fine for the short
// frames these ops see.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Dispatch.h"

#include <cmath>
#include <complex>

namespace onnxslim::rt {
namespace {

constexpr double kPi = 3.14159265358979323846;

/// Reads a scalar integer input.
Status scalarInt(const KernelContext &ctx, size_t i, int64_t &v) {
  const Tensor *t;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(i, t));
  if (!typeIn<IntTypes>(t->dtype()))
    return Status::error("input " + std::to_string(i) + " must be an integer scalar");
  return readScalar(*t, v);
}

/// Writes double values into a new tensor of float type `dtype`.
Status floatsToTensor(DataType dtype, std::vector<int64_t> dims, const std::vector<double> &vals,
                      TensorPtr &out) {
  std::optional<TensorBuilder> b;
  ONNXSLIM_RETURN_IF_ERROR(allocOutput(dtype, std::move(dims), b));
  if (static_cast<size_t>(b->numElements()) != vals.size())
    return Status::error("internal size mismatch");
  return dispatchType<NumericTypes>(dtype, [&](auto tag) -> Status {
    using D = typename decltype(tag)::type;
    D *o = b->dataAs<D>();
    for (size_t i = 0; i < vals.size(); ++i)
      o[i] = convertElem<D>(vals[i]);
    out = b->finish();
    return Status::success();
  });
}

//===----------------------------------------------------------------------===//
// Windows
//===----------------------------------------------------------------------===//

template <int kKind> Status windowKernel(KernelContext &ctx) {
  int64_t size = 0;
  ONNXSLIM_RETURN_IF_ERROR(scalarInt(ctx, 0, size));
  if (size < 0)
    return ctx.error("window size must not be negative");
  bool periodic = ctx.attrInt("periodic", 1) != 0;
  auto dtype = static_cast<DataType>(ctx.attrInt("output_datatype", 1));
  int64_t count = 0;
  ONNXSLIM_RETURN_IF_ERROR(checkedNumElements({size}, DataType::Double, count));
  double denom = periodic ? static_cast<double>(size) : static_cast<double>(size - 1);
  // a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N)
  double a0, a1, a2 = 0;
  if constexpr (kKind == 0) {
    a0 = 0.5, a1 = 0.5;
  } else if constexpr (kKind == 1) {
    a0 = 25.0 / 46.0, a1 = 21.0 / 46.0;
  } else {
    a0 = 0.42, a1 = 0.5, a2 = 0.08;
  }
  std::vector<double> w(static_cast<size_t>(size));
  for (int64_t n = 0; n < size; ++n) {
    double x = denom > 0 ? 2 * kPi * static_cast<double>(n) / denom : 0;
    w[static_cast<size_t>(n)] = a0 - a1 * std::cos(x) + a2 * std::cos(2 * x);
  }
  TensorPtr out;
  ONNXSLIM_RETURN_IF_ERROR(floatsToTensor(dtype, {size}, w, out));
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

//===----------------------------------------------------------------------===//
// DFT
//===----------------------------------------------------------------------===//

using Complex = std::complex<double>;

/// out[k] = sum_j in[j] * exp(-+2 pi i j k / n) for k < outLen; `in` has n
/// samples (already padded/truncated).
void dft(const std::vector<Complex> &in, bool inverse, int64_t outLen, std::vector<Complex> &out,
         std::vector<Complex> &twiddle) {
  int64_t n = static_cast<int64_t>(in.size());
  if (static_cast<int64_t>(twiddle.size()) != n) {
    twiddle.resize(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) {
      double a = -2 * kPi * static_cast<double>(j) / static_cast<double>(n);
      twiddle[static_cast<size_t>(j)] = Complex(std::cos(a), std::sin(a));
    }
  }
  out.assign(static_cast<size_t>(outLen), Complex(0, 0));
  for (int64_t k = 0; k < outLen; ++k) {
    Complex acc(0, 0);
    int64_t idx = 0;
    for (int64_t j = 0; j < n; ++j) {
      Complex t = twiddle[static_cast<size_t>(idx)];
      acc += in[static_cast<size_t>(j)] * (inverse ? std::conj(t) : t);
      idx += k;
      if (idx >= n)
        idx %= n;
    }
    out[static_cast<size_t>(k)] = inverse ? acc / static_cast<double>(n) : acc;
  }
}

Status dftKernel(KernelContext &ctx) {
  const Tensor *X;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, X));
  const auto &dims = X->dims();
  int64_t rank = X->rank();
  if (rank < 3 || (dims.back() != 1 && dims.back() != 2))
    return ctx.error("input must have shape [batch, ..., 1 or 2], got " + shapeString(dims));
  int64_t axis = ctx.attrInt("axis", 1);
  if (axis < 0)
    axis += rank;
  if (axis < 1 || axis > rank - 2)
    return ctx.error("axis " + std::to_string(ctx.attrInt("axis", 1)) + " is out of range");
  bool inverse = ctx.attrInt("inverse", 0) != 0;
  bool onesided = ctx.attrInt("onesided", 0) != 0;
  bool complexIn = dims.back() == 2;
  if (onesided && (complexIn || inverse))
    return ctx.error("onesided is only supported for a forward DFT of a real signal");
  int64_t len = dims[static_cast<size_t>(axis)];
  int64_t n = len;
  if (ctx.hasInput(1)) {
    ONNXSLIM_RETURN_IF_ERROR(scalarInt(ctx, 1, n));
    if (n < 1)
      return ctx.error("dft_length must be positive");
  }
  if (n > (int64_t{1} << 20))
    return ctx.error("dft_length " + std::to_string(n) + " is too long");
  int64_t outLen = onesided ? n / 2 + 1 : n;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i)
    outer *= dims[static_cast<size_t>(i)];
  for (int64_t i = axis + 1; i < rank - 1; ++i)
    inner *= dims[static_cast<size_t>(i)];
  std::vector<int64_t> outDims = dims;
  outDims[static_cast<size_t>(axis)] = outLen;
  outDims.back() = 2;
  int64_t count = 0;
  ONNXSLIM_RETURN_IF_ERROR(checkedNumElements(outDims, DataType::Double, count));
  if (!typeIn<FloatTypes>(X->dtype()))
    return ctx.error("unsupported element type '" + dataTypeName(X->dtype()) + "'");
  std::vector<double> x;
  ONNXSLIM_RETURN_IF_ERROR(readAs(*X, x));
  int64_t comps = complexIn ? 2 : 1;
  std::vector<double> y(static_cast<size_t>(outer * outLen * inner * 2));
  std::vector<Complex> sig(static_cast<size_t>(n)), spec, twiddle;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        if (j >= len) {
          sig[static_cast<size_t>(j)] = 0;
          continue;
        }
        size_t base = static_cast<size_t>(((o * len + j) * inner + i) * comps);
        sig[static_cast<size_t>(j)] = Complex(x[base], complexIn ? x[base + 1] : 0.0);
      }
      dft(sig, inverse, outLen, spec, twiddle);
      for (int64_t k = 0; k < outLen; ++k) {
        size_t base = static_cast<size_t>(((o * outLen + k) * inner + i) * 2);
        y[base] = spec[static_cast<size_t>(k)].real();
        y[base + 1] = spec[static_cast<size_t>(k)].imag();
      }
    }
  }
  TensorPtr out;
  ONNXSLIM_RETURN_IF_ERROR(floatsToTensor(X->dtype(), outDims, y, out));
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

Status stftKernel(KernelContext &ctx) {
  const Tensor *S;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, S));
  const auto &dims = S->dims();
  if (S->rank() != 3 || (dims[2] != 1 && dims[2] != 2))
    return ctx.error("signal must have shape [batch, length, 1 or 2], got " + shapeString(dims));
  if (!typeIn<FloatTypes>(S->dtype()))
    return ctx.error("unsupported element type '" + dataTypeName(S->dtype()) + "'");
  int64_t step = 0;
  ONNXSLIM_RETURN_IF_ERROR(scalarInt(ctx, 1, step));
  if (step < 1)
    return ctx.error("frame_step must be positive");
  std::vector<double> window;
  int64_t frameLen = -1;
  if (ctx.hasInput(2)) {
    const Tensor *W = ctx.tensor(2);
    if (!W || W->rank() != 1)
      return ctx.error("window must be a 1-D tensor");
    ONNXSLIM_RETURN_IF_ERROR(readAs(*W, window));
    frameLen = W->dims()[0];
  }
  if (ctx.hasInput(3)) {
    int64_t fl = 0;
    ONNXSLIM_RETURN_IF_ERROR(scalarInt(ctx, 3, fl));
    if (frameLen >= 0 && fl != frameLen)
      return ctx.error("frame_length does not match the window length");
    frameLen = fl;
  }
  if (frameLen < 1)
    return ctx.error("STFT needs a window or a positive frame_length");
  bool complexIn = dims[2] == 2;
  bool onesided = ctx.attrInt("onesided", 1) != 0;
  if (onesided && complexIn)
    return ctx.error("onesided is only supported for a real signal");
  int64_t batch = dims[0], length = dims[1];
  if (frameLen > length)
    return ctx.error("frame length exceeds the signal length");
  int64_t frames = (length - frameLen) / step + 1;
  int64_t bins = onesided ? frameLen / 2 + 1 : frameLen;
  int64_t count = 0;
  ONNXSLIM_RETURN_IF_ERROR(checkedNumElements({batch, frames, bins, 2}, DataType::Double, count));
  std::vector<double> x;
  ONNXSLIM_RETURN_IF_ERROR(readAs(*S, x));
  int64_t comps = complexIn ? 2 : 1;
  std::vector<double> y(static_cast<size_t>(batch * frames * bins * 2));
  std::vector<Complex> sig(static_cast<size_t>(frameLen)), spec, twiddle;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t f = 0; f < frames; ++f) {
      for (int64_t j = 0; j < frameLen; ++j) {
        size_t base = static_cast<size_t>((b * length + f * step + j) * comps);
        double w = window.empty() ? 1.0 : window[static_cast<size_t>(j)];
        sig[static_cast<size_t>(j)] = Complex(x[base] * w, complexIn ? x[base + 1] * w : 0.0);
      }
      dft(sig, false, bins, spec, twiddle);
      for (int64_t k = 0; k < bins; ++k) {
        size_t base = static_cast<size_t>(((b * frames + f) * bins + k) * 2);
        y[base] = spec[static_cast<size_t>(k)].real();
        y[base + 1] = spec[static_cast<size_t>(k)].imag();
      }
    }
  }
  TensorPtr out;
  ONNXSLIM_RETURN_IF_ERROR(floatsToTensor(S->dtype(), {batch, frames, bins, 2}, y, out));
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

//===----------------------------------------------------------------------===//
// MelWeightMatrix
//===----------------------------------------------------------------------===//

Status melKernel(KernelContext &ctx) {
  int64_t numMel = 0, dftLen = 0, sampleRate = 0;
  ONNXSLIM_RETURN_IF_ERROR(scalarInt(ctx, 0, numMel));
  ONNXSLIM_RETURN_IF_ERROR(scalarInt(ctx, 1, dftLen));
  ONNXSLIM_RETURN_IF_ERROR(scalarInt(ctx, 2, sampleRate));
  const Tensor *lo, *hi;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(3, lo));
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(4, hi));
  double lower = 0, upper = 0;
  ONNXSLIM_RETURN_IF_ERROR(readScalar(*lo, lower));
  ONNXSLIM_RETURN_IF_ERROR(readScalar(*hi, upper));
  if (numMel < 1 || dftLen < 1 || sampleRate < 1)
    return ctx.error("num_mel_bins, dft_length and sample_rate must be positive");
  int64_t bins = dftLen / 2 + 1;
  int64_t count = 0;
  ONNXSLIM_RETURN_IF_ERROR(checkedNumElements({bins, numMel + 2}, DataType::Double, count));
  auto toMel = [](double hz) { return 2595.0 * std::log10(1 + hz / 700.0); };
  double lowMel = toMel(lower), highMel = toMel(upper);
  double melStep = (highMel - lowMel) / static_cast<double>(numMel + 2);
  std::vector<int64_t> points(static_cast<size_t>(numMel + 2));
  for (int64_t i = 0; i < numMel + 2; ++i) {
    double mel = static_cast<double>(i) * melStep + lowMel;
    double hz = 700.0 * (std::pow(10.0, mel / 2595.0) - 1);
    points[static_cast<size_t>(i)] =
        static_cast<int64_t>(std::floor(static_cast<double>(dftLen + 1) * hz / static_cast<double>(sampleRate)));
  }
  std::vector<double> w(static_cast<size_t>(bins * numMel), 0.0);
  auto set = [&](int64_t row, int64_t col, double v) {
    if (row >= 0 && row < bins)
      w[static_cast<size_t>(row * numMel + col)] = v;
  };
  for (int64_t i = 0; i < numMel; ++i) {
    int64_t left = points[static_cast<size_t>(i)], center = points[static_cast<size_t>(i + 1)],
            right = points[static_cast<size_t>(i + 2)];
    int64_t lowToCenter = center - left;
    if (lowToCenter == 0) {
      set(center, i, 1);
    } else {
      for (int64_t j = left; j <= center; ++j)
        set(j, i, static_cast<double>(j - left) / static_cast<double>(lowToCenter));
    }
    int64_t centerToHigh = right - center;
    for (int64_t j = center; centerToHigh > 0 && j < right; ++j)
      set(j, i, static_cast<double>(right - j) / static_cast<double>(centerToHigh));
  }
  TensorPtr out;
  ONNXSLIM_RETURN_IF_ERROR(floatsToTensor(static_cast<DataType>(ctx.attrInt("output_datatype", 1)),
                                          {bins, numMel}, w, out));
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

} // namespace

void registerMathSignalKernels(OpRegistry &r) {
  constexpr int64_t L = kLatestOpset;
  r.add("HannWindow", 17, L, windowKernel<0>);
  r.add("HammingWindow", 17, L, windowKernel<1>);
  r.add("BlackmanWindow", 17, L, windowKernel<2>);
  r.add("DFT", 17, L, dftKernel);
  r.add("STFT", 17, L, stftKernel);
  r.add("MelWeightMatrix", 17, L, melKernel);
}

} // namespace onnxslim::rt
