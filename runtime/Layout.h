//===- runtime/Layout.h - Channels-last values ------------------*- C++ -*-===//
//
// A float image between a pointwise and a depthwise convolution is cheaper
// to hold channels last (RtValue::channelsLast): the depthwise kernel's
// vectors then run along the channels with no transposes, and the
// pointwise products read and write it as their natural operand. The
// interpreter plans which Conv writes its output that way and converts a
// channels-last value back for every reader not planned for it; these are
// the conversions and views it uses.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/Kernel.h"

#include <cstdint>
#include <vector>

namespace onnxslim::rt {

/// Given N images of C planes of P elements of elemSize bytes, Execute:
/// writes them channels last (toLast) or channels first from channels last.
void transposeImages(const uint8_t *src, uint8_t *dst, int64_t N, int64_t C, int64_t P,
                     size_t elemSize, bool toLast);

/// Given a channels-last tensor value, Result: a channels-first copy.
RtValue channelsFirstCopy(const RtValue &v);

/// Given a tensor, Result: the same bytes under other dims (of the same
/// element count).
TensorPtr withDims(const TensorPtr &t, std::vector<int64_t> dims);

/// Whether channels-last values are planned at all: the depthwise kernel
/// that reads them runs on AVX-512.
bool channelsLastAvailable();

} // namespace onnxslim::rt
