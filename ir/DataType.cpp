//===- ir/DataType.cpp - Tensor element types -----------------------------===//
#include "ir/DataType.h"

#include <array>

namespace onnxslim {

namespace {
struct TypeInfo {
  DataType type;
  std::string_view name;
  unsigned bits;
};
constexpr std::array<TypeInfo, 25> kTypes{{
    {DataType::Undefined, "undefined", 0},
    {DataType::Float, "float", 32},
    {DataType::UInt8, "uint8", 8},
    {DataType::Int8, "int8", 8},
    {DataType::UInt16, "uint16", 16},
    {DataType::Int16, "int16", 16},
    {DataType::Int32, "int32", 32},
    {DataType::Int64, "int64", 64},
    {DataType::String, "string", 0},
    {DataType::Bool, "bool", 8},
    {DataType::Float16, "float16", 16},
    {DataType::Double, "double", 64},
    {DataType::UInt32, "uint32", 32},
    {DataType::UInt64, "uint64", 64},
    {DataType::Complex64, "complex64", 64},
    {DataType::Complex128, "complex128", 128},
    {DataType::BFloat16, "bfloat16", 16},
    {DataType::Float8E4M3FN, "float8e4m3fn", 8},
    {DataType::Float8E4M3FNUZ, "float8e4m3fnuz", 8},
    {DataType::Float8E5M2, "float8e5m2", 8},
    {DataType::Float8E5M2FNUZ, "float8e5m2fnuz", 8},
    {DataType::UInt4, "uint4", 4},
    {DataType::Int4, "int4", 4},
    {DataType::Float4E2M1, "float4e2m1", 4},
    {DataType::Float8E8M0, "float8e8m0", 8},
}};

const TypeInfo *info(DataType t) {
  auto i = static_cast<int32_t>(t);
  if (i < 0 || i >= static_cast<int32_t>(kTypes.size()))
    return nullptr;
  return &kTypes[static_cast<size_t>(i)];
}
} // namespace

unsigned elementBits(DataType t) {
  const TypeInfo *ti = info(t);
  return ti ? ti->bits : 0;
}

size_t elementSize(DataType t) {
  unsigned bits = elementBits(t);
  return bits % 8 == 0 ? bits / 8 : 0;
}

size_t storageSize(DataType t, int64_t count) {
  if (count <= 0)
    return 0;
  return (static_cast<size_t>(count) * elementBits(t) + 7) / 8;
}

std::string dataTypeName(DataType t) {
  if (const TypeInfo *ti = info(t))
    return std::string(ti->name);
  return std::to_string(static_cast<int32_t>(t));
}

std::optional<DataType> parseDataTypeName(std::string_view name) {
  for (const TypeInfo &ti : kTypes)
    if (ti.name == name && ti.type != DataType::Undefined)
      return ti.type;
  return std::nullopt;
}

bool isFloatingPoint(DataType t) {
  switch (t) {
  case DataType::Float: case DataType::Double: case DataType::Float16:
  case DataType::BFloat16: case DataType::Float8E4M3FN: case DataType::Float8E4M3FNUZ:
  case DataType::Float8E5M2: case DataType::Float8E5M2FNUZ: case DataType::Float4E2M1:
  case DataType::Float8E8M0:
    return true;
  default:
    return false;
  }
}

bool isSignedInteger(DataType t) {
  return t == DataType::Int8 || t == DataType::Int16 || t == DataType::Int32 ||
         t == DataType::Int64 || t == DataType::Int4;
}

bool isUnsignedInteger(DataType t) {
  return t == DataType::UInt8 || t == DataType::UInt16 || t == DataType::UInt32 ||
         t == DataType::UInt64 || t == DataType::UInt4;
}

} // namespace onnxslim
