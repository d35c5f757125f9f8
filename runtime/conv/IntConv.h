//===- runtime/conv/IntConv.h - Exact 8-bit integer convolution -*- C++ -*-===//
//
// ConvInteger's and QLinearConv's product: the int32 convolution of
// (x - xZero) and (w - wZero[m]) for 8-bit x and w, up to three spatial
// dims, as runtime/IntGemm.h's product of each group's filters and the
// im2col rows of its channels, built a chunk of output positions at a time
// (padding reads xZero, so it adds nothing). A 1x1 convolution of stride 1
// without padding reads the input planes in place.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/kernels/NNCommon.h"

#include <cstdint>

namespace onnxslim::rt::nn {

/// An 8-bit tensor's bytes, type and zero points (in its own type).
struct IntConvOperand {
  const uint8_t *data = nullptr;
  bool isSigned = false;
  const int32_t *zero = nullptr; ///< null: zero
  bool zeroPerChannel = false;   ///< w only: one per output channel
};

/// Given x [N, Cin, spatial], w [M, Cin / group, kernel] and the window
/// (rank <= 3), Execute: writes y [N, M, out spatial] (int32).
void integerConvolution(const IntConvOperand &x, const IntConvOperand &w, int64_t N, int64_t Cin,
                        int64_t M, int64_t group, const Window &win, int32_t *y);

} // namespace onnxslim::rt::nn
