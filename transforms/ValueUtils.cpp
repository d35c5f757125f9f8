//===- transforms/ValueUtils.cpp - Questions passes ask of values ---------===//
#include "transforms/ValueUtils.h"

#include "transforms/PatternMatch.h"

#include <cmath>
#include <cstring>

namespace onnxslim {

TensorPtr constantNodeTensor(const Node &node) {
  if (!node.is("Constant") || node.attributes().size() != 1)
    return nullptr;
  const Attribute &a = node.attributes().front();
  if (!a.refAttrName.empty())
    return nullptr;
  if (a.name == "value" && a.kind == AttrKind::Tensor)
    return a.t;
  if (a.name == "value_float" && a.kind == AttrKind::Float)
    return Tensor::fromValues<float>(DataType::Float, {}, {a.f});
  if (a.name == "value_floats" && a.kind == AttrKind::Floats)
    return Tensor::fromValues<float>(DataType::Float, {static_cast<int64_t>(a.floats.size())}, a.floats);
  if (a.name == "value_int" && a.kind == AttrKind::Int)
    return Tensor::fromValues<int64_t>(DataType::Int64, {}, {a.i});
  if (a.name == "value_ints" && a.kind == AttrKind::Ints)
    return Tensor::fromValues<int64_t>(DataType::Int64, {static_cast<int64_t>(a.ints.size())}, a.ints);
  if (a.name == "value_string" && a.kind == AttrKind::String)
    return Tensor::fromStrings({}, {a.s});
  if (a.name == "value_strings" && a.kind == AttrKind::Strings)
    return Tensor::fromStrings({static_cast<int64_t>(a.strings.size())}, a.strings);
  return nullptr;
}

TensorPtr constantTensor(const Value *value) {
  if (!value)
    return nullptr;
  TensorPtr t;
  if (value->defKind() == Value::DefKind::Initializer)
    t = value->initializer();
  else if (const Node *def = value->definingNode(); def && value->resultNumber() == 0)
    t = constantNodeTensor(*def);
  if (!t || !t->isConsistent())
    return nullptr;
  return t;
}

std::optional<std::vector<int64_t>> constantInts(const Value *value) {
  TensorPtr t = constantTensor(value);
  if (!t)
    return std::nullopt;
  size_t n = static_cast<size_t>(t->numElements());
  std::vector<int64_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    switch (t->dtype()) {
    case DataType::Int64: out[i] = t->at<int64_t>(i); break;
    case DataType::Int32: out[i] = t->at<int32_t>(i); break;
    case DataType::Int16: out[i] = t->at<int16_t>(i); break;
    case DataType::Int8: out[i] = t->at<int8_t>(i); break;
    case DataType::UInt8: out[i] = t->at<uint8_t>(i); break;
    case DataType::UInt16: out[i] = t->at<uint16_t>(i); break;
    case DataType::UInt32: out[i] = t->at<uint32_t>(i); break;
    case DataType::UInt64: {
      uint64_t u = t->at<uint64_t>(i);
      if (u > static_cast<uint64_t>(INT64_MAX))
        return std::nullopt;
      out[i] = static_cast<int64_t>(u);
      break;
    }
    default: return std::nullopt;
    }
  }
  return out;
}

namespace {
template <typename T> bool allEqual(const Tensor &t, T x) {
  size_t n = static_cast<size_t>(t.numElements());
  for (size_t i = 0; i < n; ++i)
    if (!(t.at<T>(i) == x))
      return false;
  return true;
}

/// 16-bit float encodings: 1 is 0x3c00 (float16) / 0x3f80 (bfloat16); zero
/// is 0x0000 or 0x8000 in both.
bool allHalfEqual(const Tensor &t, int number, uint16_t one) {
  size_t n = static_cast<size_t>(t.numElements());
  for (size_t i = 0; i < n; ++i) {
    uint16_t bits = t.at<uint16_t>(i);
    bool ok = number == 1 ? bits == one : (bits & 0x7fffu) == 0;
    if (!ok)
      return false;
  }
  return true;
}
} // namespace

bool isSplatOf(const Tensor &t, int number) {
  if (t.numElements() <= 0 || !t.isConsistent())
    return false;
  switch (t.dtype()) {
  case DataType::Float: return allEqual<float>(t, static_cast<float>(number));
  case DataType::Double: return allEqual<double>(t, static_cast<double>(number));
  case DataType::Float16: return allHalfEqual(t, number, 0x3c00u);
  case DataType::BFloat16: return allHalfEqual(t, number, 0x3f80u);
  case DataType::Int64: return allEqual<int64_t>(t, number);
  case DataType::Int32: return allEqual<int32_t>(t, number);
  case DataType::Int16: return allEqual<int16_t>(t, static_cast<int16_t>(number));
  case DataType::Int8: return allEqual<int8_t>(t, static_cast<int8_t>(number));
  case DataType::UInt64: return allEqual<uint64_t>(t, static_cast<uint64_t>(number));
  case DataType::UInt32: return allEqual<uint32_t>(t, static_cast<uint32_t>(number));
  case DataType::UInt16: return allEqual<uint16_t>(t, static_cast<uint16_t>(number));
  case DataType::UInt8: return allEqual<uint8_t>(t, static_cast<uint8_t>(number));
  default: return false;
  }
}

std::optional<Shape> knownShape(const Value *value) {
  if (!value)
    return std::nullopt;
  const std::optional<Type> &type = value->type();
  if (type && type->isTensor() && type->shape())
    return *type->shape();
  if (TensorPtr t = constantTensor(value)) {
    Shape s;
    for (int64_t d : t->dims())
      s.push_back(Dim::value(d));
    return s;
  }
  return std::nullopt;
}

std::optional<DataType> knownElemType(const Value *value) {
  if (!value)
    return std::nullopt;
  const std::optional<Type> &type = value->type();
  if (type && type->isTensor() && type->hasElemType && type->elemType() != DataType::Undefined)
    return type->elemType();
  if (TensorPtr t = constantTensor(value))
    return t->dtype();
  return std::nullopt;
}

bool knownEqual(const Dim &a, const Dim &b) {
  return !a.isUnknown() && a.kind() == b.kind() &&
         (a.isValue() ? a.getValue() == b.getValue() : a.getSymbol() == b.getSymbol());
}

namespace {

/// Ops whose result 0 has operand 0's shape whatever the values.
bool preservesShape(const Node &n) {
  static const char *const kOps[] = {"Identity", "Cast", "Relu", "LeakyRelu", "Sigmoid", "Tanh", "Erf", "Gelu",
                                     "Neg", "Abs", "Sqrt", "Exp", "Softmax", "LogSoftmax", "LayerNormalization",
                                     "RMSNormalization", "Dropout", "HardSigmoid", "HardSwish", "Elu", "Clip"};
  for (const char *op : kOps)
    if (n.is(op))
      return true;
  return false;
}

/// One step of dimOrigin: the (operand, dim) that dim `d` of `v` copies,
/// or null.
std::pair<const Value *, size_t> dimSource(const Value *v, size_t d) {
  const Node *n = v->definingNode();
  std::optional<Shape> out = knownShape(v);
  if (!n || !out || d >= out->size() || n->numOperands() == 0 || !n->operand(0) || n->result(0) != v)
    return {nullptr, 0};
  const Value *x = n->operand(0);
  std::optional<Shape> in = knownShape(x);
  if (!in)
    return {nullptr, 0};
  if (n->is("Transpose")) {
    std::vector<int64_t> perm = n->attrInts("perm");
    if (perm.size() == out->size() && perm[d] >= 0 && static_cast<size_t>(perm[d]) < in->size())
      return {x, static_cast<size_t>(perm[d])};
    return {nullptr, 0};
  }
  if (n->is("Reshape")) {
    if (n->numOperands() < 2 || n->attrInt("allowzero", 0) != 0 || d >= in->size())
      return {nullptr, 0};
    std::optional<std::vector<int64_t>> target = constantInts(n->operand(1));
    if (target && d < target->size() && (*target)[d] == 0)
      return {x, d};
    return {nullptr, 0};
  }
  if (n->is("MatMul")) {
    std::optional<Shape> rhs = n->numOperands() == 2 ? knownShape(n->operand(1)) : std::nullopt;
    if (rhs && rhs->size() == 2 && in->size() == out->size() && in->size() >= 2 && d + 1 < out->size())
      return {x, d};
    return {nullptr, 0};
  }
  if (preservesShape(*n))
    return in->size() == out->size() ? std::pair<const Value *, size_t>{x, d} : std::pair<const Value *, size_t>{nullptr, 0};
  if ((n->is("Add") || n->is("Sub") || n->is("Mul") || n->is("Div")) && n->numOperands() == 2) {
    for (size_t side = 0; side < 2; ++side) {
      const Value *self = n->operand(side), *other = n->operand(1 - side);
      std::optional<Shape> s = knownShape(self), o = knownShape(other);
      if (!self || !other || !s || !o || s->size() != out->size() || !constantTensor(other))
        continue;
      size_t lead = out->size() - std::min(o->size(), out->size());
      if (o->size() > out->size())
        continue;
      if (d < lead || ((*o)[d - lead].isValue() && (*o)[d - lead].getValue() == 1))
        return {self, d};
    }
  }
  return {nullptr, 0};
}

} // namespace

std::pair<const Value *, size_t> dimOrigin(const Value *value, size_t dim) {
  // Bounded: exporters' chains are short; a long walk only costs time.
  for (int steps = 0; value && steps < 64; ++steps) {
    auto [src, d] = dimSource(value, dim);
    if (!src)
      break;
    value = src, dim = d;
  }
  return {value, dim};
}

bool sameDim(const Value *a, size_t ad, const Value *b, size_t bd) {
  std::optional<Shape> as = knownShape(a), bs = knownShape(b);
  if (!as || !bs || ad >= as->size() || bd >= bs->size())
    return false;
  return knownEqual((*as)[ad], (*bs)[bd]) || dimOrigin(a, ad) == dimOrigin(b, bd);
}

namespace {
template <typename T> bool sameBits(const std::vector<T> &a, const std::vector<T> &b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}
} // namespace

bool sameTensorContent(const TensorPtr &a, const TensorPtr &b) {
  if (a == b)
    return true;
  if (!a || !b)
    return false;
  return tensorContentHash(*a) == tensorContentHash(*b) && a->sameContent(*b);
}

bool sameAttribute(const Attribute &a, const Attribute &b) {
  if (a.name != b.name || a.kind != b.kind || a.refAttrName != b.refAttrName)
    return false;
  switch (a.kind) {
  case AttrKind::Float: return std::memcmp(&a.f, &b.f, sizeof a.f) == 0;
  case AttrKind::Int: return a.i == b.i;
  case AttrKind::String: return a.s == b.s;
  case AttrKind::Tensor: return sameTensorContent(a.t, b.t);
  case AttrKind::Floats: return sameBits(a.floats, b.floats);
  case AttrKind::Ints: return a.ints == b.ints;
  case AttrKind::Strings: return a.strings == b.strings;
  case AttrKind::Tensors:
    if (a.tensors.size() != b.tensors.size())
      return false;
    for (size_t i = 0; i < a.tensors.size(); ++i)
      if (!sameTensorContent(a.tensors[i], b.tensors[i]))
        return false;
    return true;
  case AttrKind::TypeProto: return a.tp == b.tp;
  case AttrKind::TypeProtos: return a.typeProtos == b.typeProtos;
  case AttrKind::SparseTensor: return a.sparseTensor == b.sparseTensor;
  case AttrKind::SparseTensors: return a.sparseTensors == b.sparseTensors;
  default: return false; // graphs (excluded earlier) and unknown kinds
  }
}

bool sameAttributes(const Node &a, const Node &b) {
  if (a.attributes().size() != b.attributes().size())
    return false;
  for (const Attribute &x : a.attributes()) {
    const Attribute *y = b.attr(x.name);
    if (!y || !sameAttribute(x, *y))
      return false;
  }
  return true;
}

bool replaceNodeWithValue(Node *node, Value *replacement, Rewriter &rewriter, std::string_view what) {
  Value *result = node->result(0);
  if (!result || !replacement)
    return rewriter.notifyMatchFailure(node, "no result or no input");
  for (size_t i = 1; i < node->numResults(); ++i)
    if (node->result(i) && node->result(i)->hasUses())
      return rewriter.notifyMatchFailure(node, "a second result is used");
  if (!result->isGraphOutput()) {
    if (rewriter.debugEnabled())
      rewriter.notifyRewrite(node, std::string(what) + ": replaced by '" + replacement->name() + "'");
    rewriter.replaceAllUsesWith(result, replacement);
    rewriter.eraseNode(node);
    return true;
  }
  // The result names a graph output: keep the name, computed by an Identity
  // (eliminate-identity-ops then renames the producer where it can).
  if (node->is("Identity") && node->numOperands() == 1 && node->operand(0) == replacement)
    return rewriter.notifyMatchFailure(node, "result is a graph output");
  if (rewriter.debugEnabled())
    rewriter.notifyRewrite(node, std::string(what) + ": graph output, now Identity('" +
                                     replacement->name() + "')");
  std::string outName = result->name();
  Node *identity = rewriter.createNodeBefore(node, "Identity", {replacement}, {outName});
  identity->setName(node->name());
  Value *kept = identity->result(0);
  kept->setType(result->type());
  kept->valueInfoOrder = result->valueInfoOrder;
  kept->info = result->info;
  rewriter.replaceNodeUsesWith(result, replacement);
  rewriter.replaceAllUsesWith(result, kept);
  rewriter.eraseNode(node);
  rewriter.renameValue(kept, outName);
  return true;
}

} // namespace onnxslim
