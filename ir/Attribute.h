//===- ir/Attribute.h - Node attributes ------------------------*- C++ -*-===//
//
// An attribute of a node: a name, a kind and a value of that kind. Mirrors
// ONNX's AttributeProto (every kind, including graphs, which the attribute
// owns, and type protos). Attributes are move-only because they own graphs.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Support.h"
#include "Tensor.h"
#include "Type.h"

#include <memory>
#include <string>
#include <vector>

namespace onnxslim {

class Graph;

/// The ONNX AttributeProto.AttributeType numbers.
enum class AttrKind : int32_t {
  Undefined = 0,
  Float = 1,
  Int = 2,
  String = 3,
  Tensor = 4,
  Graph = 5,
  SparseTensor = 11,
  TypeProto = 13,
  Floats = 6,
  Ints = 7,
  Strings = 8,
  Tensors = 9,
  Graphs = 10,
  SparseTensors = 12,
  TypeProtos = 14,
};

class Attribute {
public:
  Attribute();
  explicit Attribute(std::string name, AttrKind kind = AttrKind::Undefined);
  Attribute(Attribute &&) noexcept;
  Attribute &operator=(Attribute &&) noexcept;
  ~Attribute();

  static Attribute makeInt(std::string name, int64_t v);
  static Attribute makeFloat(std::string name, float v);
  static Attribute makeString(std::string name, std::string v);
  static Attribute makeInts(std::string name, std::vector<int64_t> v);
  static Attribute makeFloats(std::string name, std::vector<float> v);
  static Attribute makeTensor(std::string name, TensorPtr v);
  static Attribute makeGraph(std::string name, std::unique_ptr<Graph> g);

  std::string name;
  AttrKind kind = AttrKind::Undefined;
  /// For attributes inside functions: the name of the function attribute this refers to.
  std::string refAttrName;
  std::string docString;

  float f = 0;
  int64_t i = 0;
  std::string s;
  TensorPtr t;
  std::unique_ptr<Graph> g;
  std::shared_ptr<const SparseTensor> sparseTensor;
  std::optional<Type> tp;

  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::vector<TensorPtr> tensors;
  std::vector<std::unique_ptr<Graph>> graphs;
  std::vector<std::shared_ptr<const SparseTensor>> sparseTensors;
  std::vector<Type> typeProtos;

  ExplicitFields explicitFields;
  /// Whether the `type` field was present (very old models omit it).
  bool hasKind = true;

  /// Every subgraph this attribute owns (g and graphs), in order.
  std::vector<Graph *> subgraphs() const;
};

} // namespace onnxslim
