//===- api/RunValues.h - RunValue and the runtime's values -------*- C++ -*-===//
//
// The API's RunValue (onnxslim.h) and the interpreter's RtValue
// (runtime/Kernel.h) hold the same things: a tensor, a sequence of tensors
// or an optional, and the element type of an empty one. run(), verify()
// and the data-file functions convert between them here.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "onnxslim/onnxslim.h"

#include "runtime/Kernel.h"

namespace onnxslim {

/// Given an API value, Result: the same runtime value.
rt::RtValue toRuntime(const RunValue &value);

/// Given a runtime value, Result: the same API value.
RunValue fromRuntime(const rt::RtValue &value);

} // namespace onnxslim
