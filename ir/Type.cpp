//===- ir/Type.cpp - Value types and symbolic shapes ----------------------===//
#include "ir/Type.h"

namespace onnxslim {

std::optional<int64_t> staticNumElements(const Shape &shape) {
  int64_t n = 1;
  for (const Dim &d : shape) {
    if (!d.isValue() || d.getValue() < 0)
      return std::nullopt;
    if (d.getValue() != 0 && n > INT64_MAX / d.getValue())
      return std::nullopt;
    n *= d.getValue();
  }
  return n;
}

Type::Type(const Type &o)
    : hasElemType(o.hasElemType), denotation(o.denotation), kind_(o.kind_), elem_(o.elem_),
      shape_(o.shape_), inner_(o.inner_ ? std::make_unique<Type>(*o.inner_) : nullptr) {}

Type &Type::operator=(const Type &o) {
  if (this != &o) {
    Type copy(o);
    *this = std::move(copy);
  }
  return *this;
}

Type::~Type() = default;

Type Type::tensor(DataType elem, std::optional<Shape> shape) {
  Type t;
  t.kind_ = Kind::Tensor;
  t.elem_ = elem;
  t.shape_ = std::move(shape);
  return t;
}

Type Type::sparseTensor(DataType elem, std::optional<Shape> shape) {
  Type t = tensor(elem, std::move(shape));
  t.kind_ = Kind::SparseTensor;
  return t;
}

Type Type::sequence(Type elem) {
  Type t;
  t.kind_ = Kind::Sequence;
  t.inner_ = std::make_unique<Type>(std::move(elem));
  return t;
}

Type Type::optional(Type elem) {
  Type t = sequence(std::move(elem));
  t.kind_ = Kind::Optional;
  return t;
}

Type Type::map(DataType key, Type value) {
  Type t = sequence(std::move(value));
  t.kind_ = Kind::Map;
  t.elem_ = key;
  return t;
}

bool Type::operator==(const Type &o) const {
  if (kind_ != o.kind_ || elem_ != o.elem_ || shape_ != o.shape_ ||
      hasElemType != o.hasElemType || denotation != o.denotation)
    return false;
  if (!inner_ || !o.inner_)
    return !inner_ && !o.inner_;
  return *inner_ == *o.inner_;
}

} // namespace onnxslim
