//===- tests/transforms/TestUtil.h - Building IR for pass tests -*- C++ -*-===//
//
// A small builder for test models (a main graph at opset 17, typed inputs,
// initializers, nodes appended in order) and helpers that snapshot a model's
// interface (graph input/output names and types) so tests can check that no
// pass changed it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "transforms/Pass.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace onnxslim::test {

inline Type floatType(std::vector<int64_t> dims) {
  Shape s;
  for (int64_t d : dims)
    s.push_back(Dim::value(d));
  return Type::tensor(DataType::Float, s);
}

inline TensorPtr floats(std::vector<int64_t> dims, std::vector<float> v) {
  return Tensor::fromValues(DataType::Float, std::move(dims), v);
}
inline TensorPtr ints(std::vector<int64_t> dims, std::vector<int64_t> v) {
  return Tensor::fromValues(DataType::Int64, std::move(dims), v);
}

/// A model under construction.
struct TestModel {
  std::unique_ptr<Model> owned = std::make_unique<Model>();
  Model &model = *owned;
  Graph *g;

  explicit TestModel(int64_t opset = 17) {
    model.irVersion = 8;
    model.opsetImport.push_back(OpsetId{"", opset, {}});
    model.setGraph(std::make_unique<Graph>());
    g = model.graph();
    g->name = "main";
  }
  Value *input(const std::string &name, std::vector<int64_t> dims = {2}) {
    return g->addInput(name, floatType(std::move(dims)));
  }
  Value *init(const std::string &name, TensorPtr t) { return g->addInitializer(name, std::move(t)); }
  /// Appends `result = op(operands)` to `graph` (the main graph by default).
  Node *node(const std::string &op, std::vector<Value *> operands, std::vector<std::string> results,
             Graph *graph = nullptr, std::string domain = "") {
    Graph *into = graph ? graph : g;
    return into->append(into->createNode(op, operands, results, std::move(domain)));
  }
  Value *op(const std::string &op, std::vector<Value *> operands, const std::string &result) {
    return node(op, std::move(operands), {result})->result(0);
  }
  void output(Value *v, std::vector<int64_t> dims = {2}) { g->addOutput(v, floatType(std::move(dims))); }
  /// Given a then/else pair of bodies built by the caller, appends an If.
  Node *ifNode(Value *cond, std::unique_ptr<Graph> thenBody, std::unique_ptr<Graph> elseBody,
               const std::string &result) {
    Node *n = node("If", {cond}, {result});
    n->setAttr(Attribute::makeGraph("then_branch", std::move(thenBody)));
    n->setAttr(Attribute::makeGraph("else_branch", std::move(elseBody)));
    return n;
  }
  std::string text() const { return toText(model); }
  bool verifies() const {
    std::vector<std::string> errors = verify(model);
    for (const std::string &e : errors)
      ADD_FAILURE() << e;
    return errors.empty();
  }
};

/// A body graph (no inputs) for If/Loop attributes.
inline std::unique_ptr<Graph> body(const std::string &name) {
  auto g = std::make_unique<Graph>();
  g->name = name;
  return g;
}

/// Graph input and output names and types, as one comparable string.
inline std::string interfaceOf(const Model &m) {
  std::string s;
  const Graph &g = *m.graph();
  for (const Value *v : g.inputs())
    s += "in " + v->name() + ":" + (v->type() ? typeToText(*v->type()) : "?") + "\n";
  for (size_t i = 0; i < g.numOutputs(); ++i) {
    const GraphOutput &o = g.outputSlots()[i];
    s += "out " + o.use.get()->name() + ":" + (o.type ? typeToText(*o.type) : "?") + "\n";
  }
  return s;
}

/// Runs one pass on a model with a fresh context, Result: whether it changed.
inline bool runPass(Pass &pass, Model &model, PassContext *ctx = nullptr) {
  PassContext local;
  PassContext &c = ctx ? *ctx : local;
  c.setCurrentPass(pass.name());
  bool changed = pass.run(model, c);
  EXPECT_FALSE(c.failed()) << c.failureMessage();
  return changed;
}

/// The value of a counter of `pass` in a context (0 if never touched).
inline uint64_t counterValue(const PassContext &ctx, std::string_view pass, std::string_view counter) {
  for (const PassStatistics &ps : ctx.statistics())
    if (ps.pass == pass)
      for (const StatisticCounter &c : ps.counters)
        if (c.name == counter)
          return c.value;
  return 0;
}

} // namespace onnxslim::test
