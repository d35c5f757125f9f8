//===- ir/Type.h - Value types and symbolic shapes -------------*- C++ -*-===//
//
// The type of an IR value: a tensor (element type + optional shape whose dims
// are numbers, named symbols or unknown), a sparse tensor, a sequence, a map or
// an optional. Mirrors ONNX's TypeProto closely enough to round-trip it, but
// is plain value-semantic C++.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "DataType.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace onnxslim {

/// One dimension: a known size, a named symbol (`batch`), or unknown.
class Dim {
public:
  enum class Kind : uint8_t { Unknown, Value, Symbol };

  Dim() = default;
  static Dim value(int64_t v) { Dim d; d.kind_ = Kind::Value; d.value_ = v; return d; }
  static Dim symbol(std::string s) { Dim d; d.kind_ = Kind::Symbol; d.symbol_ = std::move(s); return d; }
  static Dim unknown() { return Dim(); }

  Kind kind() const { return kind_; }
  bool isValue() const { return kind_ == Kind::Value; }
  bool isSymbol() const { return kind_ == Kind::Symbol; }
  bool isUnknown() const { return kind_ == Kind::Unknown; }
  int64_t getValue() const { return value_; }
  const std::string &getSymbol() const { return symbol_; }

  /// ONNX dimension denotation (rarely used; kept for round trip).
  std::string denotation;

  bool operator==(const Dim &o) const {
    return kind_ == o.kind_ && value_ == o.value_ && symbol_ == o.symbol_ &&
           denotation == o.denotation;
  }
  bool operator!=(const Dim &o) const { return !(*this == o); }

private:
  Kind kind_ = Kind::Unknown;
  int64_t value_ = 0;
  std::string symbol_;
};

/// A shape of known rank. (Unknown rank is an absent Shape: std::optional.)
using Shape = std::vector<Dim>;

/// Number of elements when every dim is a known value, else nullopt.
std::optional<int64_t> staticNumElements(const Shape &shape);

class Type {
public:
  enum class Kind : uint8_t {
    Empty,        ///< A TypeProto with no value set.
    Tensor,
    SparseTensor,
    Sequence,
    Map,
    Optional,
  };

  Type() = default;
  Type(const Type &o);
  Type &operator=(const Type &o);
  Type(Type &&) noexcept = default;
  Type &operator=(Type &&) noexcept = default;
  ~Type();

  static Type tensor(DataType elem, std::optional<Shape> shape = std::nullopt);
  static Type sparseTensor(DataType elem, std::optional<Shape> shape = std::nullopt);
  static Type sequence(Type elem);
  static Type optional(Type elem);
  static Type map(DataType key, Type value);

  Kind kind() const { return kind_; }
  bool isTensor() const { return kind_ == Kind::Tensor; }

  /// Element type of a (sparse) tensor; key type of a map.
  DataType elemType() const { return elem_; }
  void setElemType(DataType t) { elem_ = t; }
  /// Shape of a (sparse) tensor; nullopt when the rank is unknown.
  const std::optional<Shape> &shape() const { return shape_; }
  std::optional<Shape> &shape() { return shape_; }
  /// Element type of a sequence or optional; value type of a map.
  const Type *inner() const { return inner_.get(); }
  Type *inner() { return inner_.get(); }

  /// Whether the ONNX elem_type field was set (tensor types may omit it).
  bool hasElemType = true;
  /// ONNX type denotation (kept for round trip).
  std::string denotation;

  bool operator==(const Type &o) const;
  bool operator!=(const Type &o) const { return !(*this == o); }

private:
  Kind kind_ = Kind::Empty;
  DataType elem_ = DataType::Undefined;
  std::optional<Shape> shape_;
  std::unique_ptr<Type> inner_;
};

} // namespace onnxslim
