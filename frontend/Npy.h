//===- frontend/Npy.h - NumPy .npy files as tensors -------------*- C++ -*-===//
//
// Reads the .npy format (NumPy's format description, versions 1.0-3.0):
// the magic "\x93NUMPY", a version, a little-endian header length, and a
// Python dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (1, 3), }
// followed by the raw elements. C order only; little-endian or
// byte-order-free element types of fixed size (bool, int8-64, uint8-64,
// float16/32/64). Errors name the file.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Tensor.h"

#include <string>

namespace onnxslim {

/// Given the path of a .npy file, Result: its array as a tensor, or null
/// with `error` set.
TensorPtr loadNpyFile(const std::string &path, std::string &error);

/// Given the bytes of a .npy file and a name for errors, Result: the tensor,
/// or null with `error` set.
TensorPtr parseNpy(const std::string &bytes, const std::string &name, std::string &error);

} // namespace onnxslim
