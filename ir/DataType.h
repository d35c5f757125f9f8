//===- ir/DataType.h - Tensor element types --------------------*- C++ -*-===//
//
// The element types of ONNX tensors. The numeric values are the ONNX
// TensorProto.DataType numbers, so the frontend and backend convert by cast.
// Values the IR does not know (a newer spec) are kept as their number.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace onnxslim {

enum class DataType : int32_t {
  Undefined = 0,
  Float = 1,
  UInt8 = 2,
  Int8 = 3,
  UInt16 = 4,
  Int16 = 5,
  Int32 = 6,
  Int64 = 7,
  String = 8,
  Bool = 9,
  Float16 = 10,
  Double = 11,
  UInt32 = 12,
  UInt64 = 13,
  Complex64 = 14,
  Complex128 = 15,
  BFloat16 = 16,
  Float8E4M3FN = 17,
  Float8E4M3FNUZ = 18,
  Float8E5M2 = 19,
  Float8E5M2FNUZ = 20,
  UInt4 = 21,
  Int4 = 22,
  Float4E2M1 = 23,
  Float8E8M0 = 24,
};

/// Size in bytes of one element, or 0 for String, sub-byte types and unknown
/// types. Sub-byte types (4-bit) pack two elements per byte.
size_t elementSize(DataType t);

/// Bits per element (4 for the 4-bit types, 0 for String and unknown types).
unsigned elementBits(DataType t);

/// Bytes needed for `count` elements of a fixed-size or sub-byte type.
size_t storageSize(DataType t, int64_t count);

/// The ONNX textual-syntax name: "float", "int64", "bfloat16", "float8e4m3fn"...
/// Unknown numbers print as their decimal value.
std::string dataTypeName(DataType t);

/// Inverse of dataTypeName.
std::optional<DataType> parseDataTypeName(std::string_view name);

bool isFloatingPoint(DataType t);
bool isSignedInteger(DataType t);
bool isUnsignedInteger(DataType t);
inline bool isInteger(DataType t) { return isSignedInteger(t) || isUnsignedInteger(t); }

} // namespace onnxslim
