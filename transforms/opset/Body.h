//===- transforms/opset/Body.h - Writing an expansion's nodes ---*- C++ -*-===//
//
// The expansions (Expand*.cpp, Adapter.h) write an op's definition in
// older ops before the node it replaces and turn the node into the body's
// last op. Body holds that bookkeeping: nodes in their form at ctx.to
// (axes as attributes or inputs), typed constants, and the finishing of
// the node itself; Attr describes an attribute in a brace list.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "transforms/opset/Adapter.h"

#include "runtime/Float16.h"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace onnxslim {
namespace opset {

/// Given an element type, dims and values, Result: a tensor of that type
/// holding the values (rounded to it), or null for a type without numbers.
inline TensorPtr typedTensor(DataType t, std::vector<int64_t> dims, const std::vector<double> &v) {
  auto as = [&](auto zero) {
    using T = decltype(zero);
    std::vector<T> out(v.size());
    for (size_t i = 0; i < v.size(); ++i)
      out[i] = static_cast<T>(v[i]);
    return Tensor::fromValues(t, dims, out);
  };
  switch (t) {
  case DataType::Float: return as(float{});
  case DataType::Double: return as(double{});
  case DataType::Int8: return as(int8_t{});
  case DataType::Int16: return as(int16_t{});
  case DataType::Int32: return as(int32_t{});
  case DataType::Int64: return as(int64_t{});
  case DataType::UInt8: return as(uint8_t{});
  case DataType::UInt16: return as(uint16_t{});
  case DataType::UInt32: return as(uint32_t{});
  case DataType::UInt64: return as(uint64_t{});
  case DataType::Bool: {
    std::vector<uint8_t> out(v.size());
    for (size_t i = 0; i < v.size(); ++i)
      out[i] = v[i] != 0;
    return Tensor::fromValues(t, dims, out);
  }
  case DataType::Float16:
  case DataType::BFloat16: {
    std::vector<uint16_t> out(v.size());
    for (size_t i = 0; i < v.size(); ++i)
      out[i] = t == DataType::Float16 ? rt::doubleToHalfBits(v[i]) : rt::doubleToBFloat16Bits(v[i]);
    return Tensor::fromValues(t, dims, out);
  }
  default: return nullptr;
  }
}

/// A copyable attribute description (Attribute itself is move-only, and
/// brace lists copy).
struct Attr {
  enum Kind { Int, Ints, Float, String, TensorValue } kind;
  std::string name;
  int64_t i = 0;
  std::vector<int64_t> is;
  float f = 0;
  std::string s;
  TensorPtr t;
  Attribute make() const {
    switch (kind) {
    case Int: return Attribute::makeInt(name, i);
    case Ints: return Attribute::makeInts(name, is);
    case Float: return Attribute::makeFloat(name, f);
    case TensorValue: return Attribute::makeTensor(name, t);
    case String: break;
    }
    return Attribute::makeString(name, s);
  }
};
inline Attr aInt(std::string name, int64_t v) { return Attr{Attr::Int, std::move(name), v, {}, 0, {}, {}}; }
inline Attr aInts(std::string name, std::vector<int64_t> v) { return Attr{Attr::Ints, std::move(name), 0, std::move(v), 0, {}, {}}; }
inline Attr aFloat(std::string name, float v) { return Attr{Attr::Float, std::move(name), 0, {}, v, {}, {}}; }
inline Attr aTensor(std::string name, TensorPtr v) { return Attr{Attr::TensorValue, std::move(name), 0, {}, 0, {}, std::move(v)}; }

/// Whether opset `opset` takes Squeeze/Unsqueeze/ReduceSum (`op`) axes as an
/// input rather than an attribute.
inline bool axesAreInput(std::string_view op, int64_t opset) {
  if (op == "Squeeze" || op == "Unsqueeze" || op == "ReduceSum")
    return opset >= 13;
  return opset >= 18; // the other Reduce* ops
}

/// What an expansion writes: nodes before `node` in their form at ctx.to,
/// and finally `node` itself turned into the last op of the body.
class Body {
public:
  Body(Node &node, StepContext &ctx) : node_(node), ctx_(ctx) {}

  /// A new node `type` over `in` (one result), before the node.
  Value *op(std::string type, const std::vector<Value *> &in, std::string_view what,
            std::vector<Attr> attrs = {}) {
    Node *n = ctx_.nodeBefore(node_, std::move(type), in, nodeBase(node_, what));
    for (const Attr &a : attrs)
      n->setAttr(a.make());
    return n->result(0);
  }
  /// An op taking axes (Squeeze, Unsqueeze, Reduce*) in its form at ctx.to.
  Value *axesOp(std::string type, Value *x, const std::vector<int64_t> &axes, std::string_view what,
                std::vector<Attr> attrs = {}) {
    auto [in, at] = axesForm(type, x, axes, what, std::move(attrs));
    return op(std::move(type), in, what, std::move(at));
  }
  Value *ints(const std::vector<int64_t> &v, std::string_view what, bool scalar = false) {
    return ctx_.constantBefore(node_, nodeBase(node_, what), StepContext::int64s(v, scalar));
  }
  /// A constant of element type `t` (which typedTensor takes).
  Value *constant(DataType t, std::vector<int64_t> dims, const std::vector<double> &v, std::string_view what) {
    return ctx_.constantBefore(node_, nodeBase(node_, what), typedTensor(t, std::move(dims), v));
  }
  /// A constant holding `t`.
  Value *constant(TensorPtr t, std::string_view what) { return ctx_.constantBefore(node_, nodeBase(node_, what), t); }
  Value *scalar(DataType t, double v, std::string_view what) { return constant(t, {}, {v}, what); }

  /// Execute: turns the node into `type` over `in` with `attrs` (its first
  /// result keeps its name and uses); Constants only it read are erased.
  void finish(std::string type, const std::vector<Value *> &in, std::vector<Attr> attrs = {}) {
    std::vector<Value *> old = node_.operands();
    node_.attributes().clear();
    node_.setOpType(std::move(type));
    node_.resizeOperands(in.size());
    for (size_t i = 0; i < in.size(); ++i)
      node_.setOperand(i, in[i]);
    for (const Attr &a : attrs)
      node_.setAttr(a.make());
    for (Value *v : old)
      if (Node *def = v ? v->definingNode() : nullptr; def && def->is("Constant") && def->resultsUnused())
        def->erase();
  }
  /// Execute: the node becomes what computes `v`: the last node written
  /// itself when it made `v` (and nothing reads it), else Identity(v).
  void finishWith(Value *v) {
    Node *def = v->definingNode();
    if (!def || ctx_.created.empty() || ctx_.created.back() != def || v->hasUses() || def->numResults() != 1) {
      finish("Identity", {v});
      return;
    }
    std::vector<Value *> in = def->operands();
    std::vector<Attribute> attrs = std::move(def->attributes());
    std::string type = def->opType();
    ctx_.created.pop_back();
    def->erase();
    finish(std::move(type), in);
    node_.attributes() = std::move(attrs);
  }
  void finishAxes(std::string type, Value *x, const std::vector<int64_t> &axes, std::vector<Attr> attrs = {}) {
    auto [in, at] = axesForm(type, x, axes, "axes", std::move(attrs));
    finish(std::move(type), in, std::move(at));
  }

  /// Execute: result i of the node (the model's name, uses, type) becomes
  /// `v`, made before the node; the node's slot is left omitted.
  void moveResult(size_t i, Value *v) {
    Value *r = node_.result(i);
    if (!r)
      return;
    std::string name = r->name();
    r->replaceAllUsesWith(v);
    r->setName(ctx_.model.names().fresh(name + "_moved"));
    if (r->type())
      v->setType(r->type());
    v->valueInfoOrder = r->valueInfoOrder;
    v->info = std::move(r->info);
    r->valueInfoOrder = Value::kNoValueInfo;
    r->info = {};
    v->setName(name);
    node_.dropResult(i);
    node_.trimResults();
  }

  Node &node() { return node_; }
  StepContext &ctx() { return ctx_; }

private:
  std::pair<std::vector<Value *>, std::vector<Attr>> axesForm(std::string_view type, Value *x,
                                                                   const std::vector<int64_t> &axes,
                                                                   std::string_view what,
                                                                   std::vector<Attr> attrs) {
    std::vector<Value *> in{x};
    if (axesAreInput(type, ctx_.to))
      in.push_back(ints(axes, std::string(what) + "_axes"));
    else
      attrs.push_back(aInts("axes", axes));
    return {in, std::move(attrs)};
  }

  Node &node_;
  StepContext &ctx_;
};

/// Writes Round(x) (half to even) of a float, double or float16 `x` in
/// Floor and comparisons (ExpandFunctions.cpp's Round-11 expansion says
/// how); the node makes the last Where
/// when `finish`, Result: else the rounded value.
inline Value *roundBody(Body &b, Value *x, DataType t, bool finish) {
  double whole = t == DataType::Double ? 4503599627370496.0 : t == DataType::Float ? 8388608.0 : 1024.0;
  Value *f = b.op("Floor", {x}, "floor");
  Value *d = b.op("Sub", {x, f}, "fraction");
  Value *half = b.scalar(t, 0.5, "half");
  Value *two = b.scalar(t, 2, "two");
  Value *odd = b.op("Sub", {f, b.op("Mul", {two, b.op("Floor", {b.op("Mul", {f, half}, "halved")}, "halved_floor")}, "even")},
                    "odd");
  Value *inner = b.op("Where", {b.op("Less", {d, half}, "below"), b.scalar(t, 0, "zero"), odd}, "tie");
  Value *up = b.op("Where", {b.op("Greater", {d, half}, "above"), b.scalar(t, 1, "one"), inner}, "up");
  Value *rounded = b.op("Add", {f, up}, "rounded");
  Value *isWhole = b.op("Greater", {b.op("Abs", {x}, "abs"), b.scalar(t, whole, "whole")}, "is_whole");
  if (finish) {
    b.finish("Where", {isWhole, x, rounded});
    return nullptr;
  }
  return b.op("Where", {isWhole, x, rounded}, "round");
}

/// A Cast's `to` attribute.
inline Attr castTo(DataType t) { return aInt("to", static_cast<int64_t>(t)); }

} // namespace opset
} // namespace onnxslim
