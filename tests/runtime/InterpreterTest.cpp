//===- tests/runtime/InterpreterTest.cpp - Interpreter unit tests ---------===//
//
// Builds small graphs in C++ and runs them: execution order and values,
// If/Loop/Scan bodies reading outer-scope values, sequences carried through
// a Loop, the layout kernels' edge cases, and malformed models (wrong input
// count, inconsistent shapes, out-of-range indices, negative sizes, bad
// Reshape targets, unknown ops) that must give an error naming the node.
//
//===----------------------------------------------------------------------===//
#include "frontend/Loader.h"
#include "runtime/Compare.h"
#include "runtime/Inputs.h"
#include "runtime/Interpreter.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <limits>

using namespace onnxslim;
using namespace onnxslim::rt;

namespace {

TensorPtr floats(std::vector<int64_t> dims, std::vector<float> v) {
  return Tensor::fromValues(DataType::Float, std::move(dims), v);
}
TensorPtr ints(std::vector<int64_t> dims, std::vector<int64_t> v) {
  return Tensor::fromValues(DataType::Int64, std::move(dims), v);
}
TensorPtr boolScalar(bool b) {
  return Tensor::fromValues(DataType::Bool, {}, std::vector<uint8_t>{static_cast<uint8_t>(b)});
}
std::vector<float> floatValues(const RtValue &v) {
  EXPECT_TRUE(v.isTensor());
  if (!v.isTensor())
    return {};
  std::vector<float> out(v.tensor->numElements());
  std::memcpy(out.data(), v.tensor->rawData(), out.size() * sizeof(float));
  return out;
}
std::vector<int64_t> intValues(const RtValue &v) {
  EXPECT_TRUE(v.isTensor());
  if (!v.isTensor())
    return {};
  std::vector<int64_t> out(v.tensor->numElements());
  std::memcpy(out.data(), v.tensor->rawData(), out.size() * sizeof(int64_t));
  return out;
}

/// A model with an empty main graph at the given default-domain opset.
struct TestModel {
  Model model;
  Graph *g;
  explicit TestModel(int64_t opset = 17) {
    model.opsetImport.push_back(OpsetId{"", opset, {}});
    model.setGraph(std::make_unique<Graph>());
    g = model.graph();
    g->name = "main";
  }
  Value *input(const std::string &name, DataType dt = DataType::Float) {
    return g->addInput(name, Type::tensor(dt));
  }
  Node *node(Graph *graph, const std::string &op, std::vector<Value *> in,
             std::vector<std::string> out, const std::string &name = "") {
    Node *n = graph->createNode(op, in, out);
    n->setName(name.empty() ? op + "_" + out[0] : name);
    graph->append(n);
    return n;
  }
  Node *node(const std::string &op, std::vector<Value *> in, std::vector<std::string> out,
             const std::string &name = "") {
    return node(g, op, std::move(in), std::move(out), name);
  }
  Status run(std::vector<RtValue> in, std::vector<RtValue> &out) {
    Interpreter interp(model);
    return interp.run(*g, in, out);
  }
};

RtValue T(TensorPtr t) { return RtValue::fromTensor(std::move(t)); }

} // namespace

//===----------------------------------------------------------------------===//
// Plain graphs
//===----------------------------------------------------------------------===//

TEST(Interpreter, ValuesAndOrder) {
  TestModel m;
  Value *x = m.input("x");
  Value *shape = m.g->addInitializer("shape", ints({2}, {3, 2}));
  Value *r = m.node("Reshape", {x, shape}, {"r"})->result(0);
  Value *t = m.node("Transpose", {r}, {"t"})->result(0); // 2x3
  Node *c = m.node("Constant", {}, {"c"});
  c->setAttr(Attribute::makeTensor("value", floats({1, 3}, {10, 20, 30})));
  Node *cat = m.node("Concat", {t, c->result(0)}, {"cat"});
  cat->setAttr(Attribute::makeInt("axis", 0));
  m.g->addOutput(cat->result(0));
  m.g->addOutput(r);
  std::vector<RtValue> out;
  Status s = m.run({T(floats({6}, {0, 1, 2, 3, 4, 5}))}, out);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].tensor->dims(), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(floatValues(out[0]), (std::vector<float>{0, 2, 4, 1, 3, 5, 10, 20, 30}));
  EXPECT_EQ(out[1].tensor->dims(), (std::vector<int64_t>{3, 2}));
}

TEST(Interpreter, ConstantNodesWithATensorValueAreValuesOfThePlan) {
  // A tensor `value` is the plan's (not run: the profile never sees it), as
  // a graph output, an operand, and an If branch's capture; the other forms
  // run, and a malformed one still fails naming its node.
  TestModel m;
  Value *cond = m.input("cond", DataType::Bool);
  Node *c = m.node("Constant", {}, {"c"});
  c->setAttr(Attribute::makeTensor("value", floats({2}, {1, 2})));
  Node *ci = m.node("Constant", {}, {"ci"});
  ci->setAttr(Attribute::makeInts("value_ints", {5, 6}));
  Node *add = m.node("Add", {c->result(0), c->result(0)}, {"twice"});
  Node *iff = m.node("If", {cond}, {"branch"});
  for (const char *name : {"then_branch", "else_branch"}) {
    auto b = std::make_unique<Graph>();
    Node *k = b->createNode("Constant", {}, {std::string(name) + "_k"});
    k->setAttr(Attribute::makeTensor("value", floats({2}, {10, 20})));
    b->append(k);
    Node *sum = b->createNode("Add", {c->result(0), k->result(0)}, {std::string(name) + "_sum"});
    b->append(sum);
    b->addOutput(std::string(name) == "then_branch" ? sum->result(0) : c->result(0));
    iff->setAttr(Attribute::makeGraph(name, std::move(b)));
  }
  m.g->addOutput(c->result(0));
  m.g->addOutput(ci->result(0));
  m.g->addOutput(add->result(0));
  m.g->addOutput(iff->result(0));
  RunOptions profiled;
  profiled.profile = true;
  Interpreter interp(m.model, OpRegistry::builtin(), profiled);
  for (bool b : {true, false, true}) {
    std::vector<RtValue> out;
    Status s = interp.run(*m.g, {T(boolScalar(b))}, out);
    ASSERT_TRUE(s.ok()) << s.message();
    ASSERT_EQ(out.size(), 4u);
    EXPECT_EQ(floatValues(out[0]), (std::vector<float>{1, 2}));
    EXPECT_EQ(intValues(out[1]), (std::vector<int64_t>{5, 6}));
    EXPECT_EQ(floatValues(out[2]), (std::vector<float>{2, 4}));
    EXPECT_EQ(floatValues(out[3]), (b ? std::vector<float>{11, 22} : std::vector<float>{1, 2}));
  }
  EXPECT_EQ(interp.profile().at("Constant").calls, 3); // value_ints, once a run
  EXPECT_EQ(interp.profile().at("Add").calls, 6); // one in each branch, run or not

  // Two value attributes: not the plan's; the run names the node.
  c->setAttr(Attribute::makeFloat("value_float", 3));
  Interpreter bad(m.model);
  std::vector<RtValue> out;
  Status s = bad.run(*m.g, {T(boolScalar(true))}, out);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("Constant_c"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("exactly one value attribute"), std::string::npos) << s.message();

  // A model importing no default opset: the node is not the plan's either,
  // and the run says why it cannot run it.
  Model none;
  none.setGraph(std::make_unique<Graph>());
  Node *k = none.graph()->createNode("Constant", {}, {"k"});
  k->setName("k");
  k->setAttr(Attribute::makeTensor("value", floats({1}, {1})));
  none.graph()->append(k);
  none.graph()->addOutput(k->result(0));
  Interpreter noOpset(none);
  s = noOpset.run(*none.graph(), {}, out);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("imports no opset"), std::string::npos) << s.message();
}

TEST(Interpreter, InitializerBackedInputMayBeOmitted) {
  TestModel m;
  Value *x = m.input("x");
  m.g->addInitializerToInput(x, floats({2}, {7, 8}));
  m.g->addOutput(m.node("Identity", {x}, {"y"})->result(0));
  std::vector<RtValue> out;
  ASSERT_TRUE(m.run({}, out).ok());
  EXPECT_EQ(floatValues(out[0]), (std::vector<float>{7, 8}));
  ASSERT_TRUE(m.run({T(floats({2}, {1, 2}))}, out).ok());
  EXPECT_EQ(floatValues(out[0]), (std::vector<float>{1, 2}));
}

TEST(Interpreter, RunNodeAlone) {
  TestModel m;
  Value *x = m.input("x");
  Node *n = m.node("Unsqueeze", {x, m.g->addInitializer("axes", ints({1}, {0}))}, {"u"});
  Interpreter interp(m.model);
  RtValue in = T(floats({2}, {1, 2}));
  RtValue axes = T(ints({1}, {0}));
  std::vector<RtValue> out;
  Status s = interp.runNode(*n, {&in, &axes}, out, true);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(out[0].tensor->dims(), (std::vector<int64_t>{1, 2}));
}

TEST(Interpreter, UndefinedResultsAreRefusedOnlyWhenAsked) {
  TestModel m;
  Value *x = m.input("x");
  Node *n = m.node("Cast", {x}, {"u"}, "cast_u32");
  n->setAttr(Attribute::makeInt("to", static_cast<int64_t>(DataType::UInt32)));
  m.g->addOutput(n->result(0));
  RtValue in = T(floats({2}, {5e9f, 300}));
  std::vector<RtValue> out;
  // `run` (and runNode without the option) computes ONNX Runtime's value.
  Interpreter plain(m.model);
  Status s = plain.runNode(*n, {&in}, out, true);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_TRUE(m.run({in}, out).ok());
  uint32_t got[2];
  std::memcpy(got, out[0].tensor->rawData(), sizeof got);
  EXPECT_EQ(got[0], 0u);
  EXPECT_EQ(got[1], 300u);
  // Constant folding's interpreter refuses it, naming the node.
  RunOptions opts;
  opts.refuseUndefined = true;
  Interpreter folding(m.model, OpRegistry::builtin(), opts);
  s = folding.runNode(*n, {&in}, out, true);
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(s.isUndefined());
  EXPECT_EQ(s.message(), "node 'cast_u32' (Cast): the result is undefined by the ONNX spec: 5e+09 is out of "
                         "the range of uint32 (element 0)");
  // A defined input folds.
  RtValue fine = T(floats({2}, {3e9f, 300}));
  s = folding.runNode(*n, {&fine}, out, true);
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_FALSE(s.isUndefined());
}

//===----------------------------------------------------------------------===//
// Control flow
//===----------------------------------------------------------------------===//

TEST(Interpreter, IfReadsOuterScope) {
  TestModel m;
  Value *cond = m.input("cond", DataType::Bool);
  Value *x = m.input("x");
  Node *dup = m.node("Concat", {x, x}, {"xx"});
  dup->setAttr(Attribute::makeInt("axis", 0));
  Value *y = dup->result(0);
  Node *iff = m.node("If", {cond}, {"out"}, "if1");
  auto thenG = std::make_unique<Graph>();
  thenG->name = "then";
  {
    Node *n = thenG->createNode("Identity", {x}, {"then_out"});
    n->setName("then_id");
    thenG->append(n);
    thenG->addOutput(n->result(0));
  }
  auto elseG = std::make_unique<Graph>();
  elseG->name = "else";
  elseG->addOutput(y); // a branch may output an outer value directly
  iff->setAttr(Attribute::makeGraph("then_branch", std::move(thenG)));
  iff->setAttr(Attribute::makeGraph("else_branch", std::move(elseG)));
  m.g->addOutput(iff->result(0));
  std::vector<RtValue> out;
  Status s = m.run({T(boolScalar(true)), T(floats({2}, {1, 2}))}, out);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(floatValues(out[0]), (std::vector<float>{1, 2}));
  s = m.run({T(boolScalar(false)), T(floats({2}, {1, 2}))}, out);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(floatValues(out[0]), (std::vector<float>{1, 2, 1, 2}));
}

/// Loop: carried `acc` (concatenates the outer `x` each iteration), a scan
/// output of the iteration number, trip count and condition.
TEST(Interpreter, LoopWithOuterScopeCarriedAndScan) {
  TestModel m;
  Value *trip = m.input("M", DataType::Int64);
  Value *cond = m.input("cond", DataType::Bool);
  Value *acc0 = m.input("acc0");
  Value *x = m.input("x");
  Node *loop = m.node("Loop", {trip, cond, acc0}, {"acc", "iters"}, "loop1");
  auto body = std::make_unique<Graph>();
  body->name = "body";
  Value *i = body->addInput("i", Type::tensor(DataType::Int64, Shape{}));
  Value *c = body->addInput("c", Type::tensor(DataType::Bool, Shape{}));
  Value *a = body->addInput("a", Type::tensor(DataType::Float));
  Node *cat = body->createNode("Concat", {a, x}, {"a_next"});
  cat->setAttr(Attribute::makeInt("axis", 0));
  cat->setName("body_cat");
  body->append(cat);
  Node *idc = body->createNode("Identity", {c}, {"c_next"});
  idc->setName("body_cond");
  body->append(idc);
  Node *idi = body->createNode("Identity", {i}, {"i_out"});
  idi->setName("body_iter");
  body->append(idi);
  body->addOutput(idc->result(0));
  body->addOutput(cat->result(0));
  body->addOutput(idi->result(0), Type::tensor(DataType::Int64, Shape{}));
  loop->setAttr(Attribute::makeGraph("body", std::move(body)));
  m.g->addOutput(loop->result(0));
  m.g->addOutput(loop->result(1));

  std::vector<RtValue> out;
  Status s = m.run({T(ints({}, {3})), T(boolScalar(true)), T(floats({1}, {0})),
                    T(floats({2}, {5, 6}))},
                   out);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(floatValues(out[0]), (std::vector<float>{0, 5, 6, 5, 6, 5, 6}));
  EXPECT_EQ(intValues(out[1]), (std::vector<int64_t>{0, 1, 2}));

  // Zero iterations: carried value unchanged, scan output has a 0 leading dim.
  s = m.run({T(ints({}, {0})), T(boolScalar(true)), T(floats({1}, {0})), T(floats({2}, {5, 6}))},
            out);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(floatValues(out[0]), (std::vector<float>{0}));
  EXPECT_EQ(out[1].tensor->dims(), (std::vector<int64_t>{0}));
  EXPECT_EQ(out[1].tensor->dtype(), DataType::Int64);
}

TEST(Interpreter, LoopCarriesSequences) {
  TestModel m;
  Value *trip = m.input("M", DataType::Int64);
  Node *empty = m.node("SequenceEmpty", {}, {"seq0"});
  Node *loop = m.node("Loop", {trip, nullptr, empty->result(0)}, {"seq"}, "loop_seq");
  auto body = std::make_unique<Graph>();
  Value *i = body->addInput("i", Type::tensor(DataType::Int64, Shape{}));
  Value *c = body->addInput("c", Type::tensor(DataType::Bool, Shape{}));
  Value *sq = body->addInput("s", std::nullopt);
  Node *cast = body->createNode("Unsqueeze", {i, nullptr}, {"i1"});
  cast->setName("unsq");
  body->append(cast);
  Node *axes = body->createNode("Constant", {}, {"axes"});
  axes->setAttr(Attribute::makeTensor("value", ints({1}, {0})));
  body->insertBefore(cast, axes);
  cast->setOperand(1, axes->result(0));
  Node *ins = body->createNode("SequenceInsert", {sq, cast->result(0)}, {"s_next"});
  ins->setName("ins");
  body->append(ins);
  body->addOutput(c);
  body->addOutput(ins->result(0));
  loop->setAttr(Attribute::makeGraph("body", std::move(body)));
  Node *cat = m.node("ConcatFromSequence", {loop->result(0)}, {"cat"});
  cat->setAttr(Attribute::makeInt("axis", 0));
  Node *len = m.node("SequenceLength", {loop->result(0)}, {"len"});
  m.g->addOutput(cat->result(0));
  m.g->addOutput(len->result(0));
  std::vector<RtValue> out;
  Status s = m.run({T(ints({}, {4}))}, out);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(intValues(out[0]), (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(intValues(out[1]), (std::vector<int64_t>{4}));
}

TEST(Interpreter, ScanWithOuterScope) {
  TestModel m(16);
  Value *init = m.input("init");
  Value *xs = m.input("xs");
  Value *bias = m.input("bias");
  Node *scan = m.node("Scan", {init, xs}, {"final", "ys"}, "scan1");
  scan->setAttr(Attribute::makeInt("num_scan_inputs", 1));
  auto body = std::make_unique<Graph>();
  Value *st = body->addInput("st", std::nullopt);
  Value *x = body->addInput("x", std::nullopt);
  Node *c1 = body->createNode("Concat", {st, x}, {"cat"});
  c1->setAttr(Attribute::makeInt("axis", 0));
  c1->setName("cat");
  body->append(c1);
  Node *sl = body->createNode("Slice", {c1->result(0), nullptr, nullptr}, {"next"});
  sl->setName("slice");
  Node *starts = body->createNode("Constant", {}, {"starts"});
  starts->setAttr(Attribute::makeTensor("value", ints({1}, {-2})));
  Node *ends = body->createNode("Constant", {}, {"ends"});
  ends->setAttr(Attribute::makeTensor("value", ints({1}, {INT64_MAX})));
  body->append(starts);
  body->append(ends);
  sl->setOperand(1, starts->result(0));
  sl->setOperand(2, ends->result(0));
  body->append(sl);
  Node *y = body->createNode("Concat", {x, bias}, {"y"});
  y->setAttr(Attribute::makeInt("axis", 0));
  y->setName("y");
  body->append(y);
  body->addOutput(sl->result(0));
  body->addOutput(y->result(0));
  scan->setAttr(Attribute::makeGraph("body", std::move(body)));
  m.g->addOutput(scan->result(0));
  m.g->addOutput(scan->result(1));
  std::vector<RtValue> out;
  Status s = m.run({T(floats({2}, {0, 0})), T(floats({3, 1}, {1, 2, 3})), T(floats({1}, {9}))}, out);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(floatValues(out[0]), (std::vector<float>{2, 3}));
  EXPECT_EQ(out[1].tensor->dims(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(floatValues(out[1]), (std::vector<float>{1, 9, 2, 9, 3, 9}));
}

//===----------------------------------------------------------------------===//
// Layout kernels
//===----------------------------------------------------------------------===//

TEST(Interpreter, SliceNegativeStepsAndPadReflect) {
  TestModel m(18);
  Value *x = m.input("x");
  Value *starts = m.g->addInitializer("starts", ints({1}, {-1}));
  Value *ends = m.g->addInitializer("ends", ints({1}, {INT64_MIN}));
  Value *axes = m.g->addInitializer("axes", ints({1}, {0}));
  Value *steps = m.g->addInitializer("steps", ints({1}, {-2}));
  Value *sl = m.node("Slice", {x, starts, ends, axes, steps}, {"sl"})->result(0);
  Value *pads = m.g->addInitializer("pads", ints({2}, {2, 1}));
  Node *pad = m.node("Pad", {x, pads}, {"pad"});
  pad->setAttr(Attribute::makeString("mode", "reflect"));
  m.g->addOutput(sl);
  m.g->addOutput(pad->result(0));
  std::vector<RtValue> out;
  Status s = m.run({T(floats({5}, {0, 1, 2, 3, 4}))}, out);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(floatValues(out[0]), (std::vector<float>{4, 2, 0}));
  EXPECT_EQ(floatValues(out[1]), (std::vector<float>{2, 1, 0, 1, 2, 3, 4, 3}));
}

TEST(Interpreter, SplitGatherNegativeIndicesTopK) {
  TestModel m(18);
  Value *x = m.input("x");
  Node *split = m.node("Split", {x}, {"a", "b", "c"});
  split->setAttr(Attribute::makeInt("num_outputs", 3));
  Value *idx = m.g->addInitializer("idx", ints({2}, {-1, 0}));
  Value *gathered = m.node("Gather", {x, idx}, {"g"})->result(0);
  Value *k = m.g->addInitializer("k", ints({1}, {2}));
  Node *topk = m.node("TopK", {x, k}, {"vals", "inds"});
  for (int i = 0; i < 3; ++i)
    m.g->addOutput(split->result(i));
  m.g->addOutput(gathered);
  m.g->addOutput(topk->result(0));
  m.g->addOutput(topk->result(1));
  std::vector<RtValue> out;
  Status s = m.run({T(floats({5}, {3, 1, 4, 1, 5}))}, out);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(floatValues(out[0]), (std::vector<float>{3, 1}));
  EXPECT_EQ(floatValues(out[1]), (std::vector<float>{4, 1}));
  EXPECT_EQ(floatValues(out[2]), (std::vector<float>{5}));
  EXPECT_EQ(floatValues(out[3]), (std::vector<float>{5, 3}));
  EXPECT_EQ(floatValues(out[4]), (std::vector<float>{5, 4}));
  EXPECT_EQ(intValues(out[5]), (std::vector<int64_t>{4, 2}));
}

//===----------------------------------------------------------------------===//
// Malformed models: errors name the node, never crash
//===----------------------------------------------------------------------===//

namespace {
void expectError(const Status &s, const std::string &needle1, const std::string &needle2 = "") {
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find(needle1), std::string::npos) << s.message();
  if (!needle2.empty()) {
    EXPECT_NE(s.message().find(needle2), std::string::npos) << s.message();
  }
}
} // namespace

TEST(InterpreterErrors, WrongInputCount) {
  TestModel m;
  Value *x = m.input("x");
  m.g->addOutput(m.node("Identity", {x}, {"y"})->result(0));
  std::vector<RtValue> out;
  expectError(m.run({}, out), "missing");
  expectError(m.run({T(floats({1}, {1})), T(floats({1}, {1}))}, out), "2 were given");
  // A node with too few operands.
  TestModel m2;
  Value *a = m2.input("a");
  m2.g->addOutput(m2.node("Gather", {a}, {"g"}, "gather_short")->result(0));
  expectError(m2.run({T(floats({2}, {1, 2}))}, out), "'gather_short' (Gather)", "input 1");
  // Declared dtype/shape mismatch.
  TestModel m3;
  Value *b = m3.g->addInput("b", Type::tensor(DataType::Float, Shape{Dim::value(3)}));
  m3.g->addOutput(m3.node("Identity", {b}, {"y"})->result(0));
  expectError(m3.run({T(floats({2}, {1, 2}))}, out), "dim 0");
  expectError(m3.run({T(ints({3}, {1, 2, 3}))}, out), "element type");
}

TEST(InterpreterErrors, InconsistentShapes) {
  TestModel m;
  Value *a = m.input("a");
  Value *b = m.input("b");
  Node *cat = m.node("Concat", {a, b}, {"c"}, "bad_concat");
  cat->setAttr(Attribute::makeInt("axis", 0));
  m.g->addOutput(cat->result(0));
  std::vector<RtValue> out;
  expectError(m.run({T(floats({1, 2}, {1, 2})), T(floats({1, 3}, {1, 2, 3}))}, out),
              "node 'bad_concat' (Concat)", "incompatible");
  // A tensor whose bytes do not match its dims.
  auto broken = std::make_shared<Tensor>(DataType::Float, std::vector<int64_t>{4},
                                         Buffer::copyOf("abcd", 4));
  expectError(m.run({T(broken), T(floats({1}, {1}))}, out), "does not match");
}

TEST(InterpreterErrors, GatherIndexOutOfRange) {
  TestModel m;
  Value *x = m.input("x");
  Value *idx = m.g->addInitializer("idx", ints({2}, {0, 5}));
  m.g->addOutput(m.node("Gather", {x, idx}, {"g"}, "gather1")->result(0));
  std::vector<RtValue> out;
  expectError(m.run({T(floats({3}, {1, 2, 3}))}, out), "node 'gather1' (Gather)", "index 5");
}

TEST(InterpreterErrors, NegativeSizesAndBadReshape) {
  TestModel m;
  Value *shape = m.input("shape", DataType::Int64);
  m.g->addOutput(m.node("ConstantOfShape", {shape}, {"c"}, "cos")->result(0));
  std::vector<RtValue> out;
  expectError(m.run({T(ints({2}, {2, -3}))}, out), "node 'cos' (ConstantOfShape)", "negative");
  expectError(m.run({T(ints({2}, {INT64_MAX, INT64_MAX}))}, out), "node 'cos'");

  TestModel r;
  Value *x = r.input("x");
  Value *target = r.input("target", DataType::Int64);
  r.g->addOutput(r.node("Reshape", {x, target}, {"y"}, "reshape1")->result(0));
  expectError(r.run({T(floats({6}, {0, 1, 2, 3, 4, 5})), T(ints({2}, {4, 2}))}, out),
              "node 'reshape1' (Reshape)", "cannot reshape");
  expectError(r.run({T(floats({6}, {0, 1, 2, 3, 4, 5})), T(ints({2}, {-1, -1}))}, out),
              "node 'reshape1'", "more than one -1");
  expectError(r.run({T(floats({6}, {0, 1, 2, 3, 4, 5})), T(ints({2}, {4, -1}))}, out),
              "node 'reshape1'");
  expectError(r.run({T(floats({6}, {0, 1, 2, 3, 4, 5})), T(ints({2}, {-2, 3}))}, out),
              "node 'reshape1'", "negative");
}

TEST(InterpreterErrors, UnknownOp) {
  TestModel m;
  Value *x = m.input("x");
  m.g->addOutput(m.node("FrobnicateTensor", {x}, {"y"}, "frob")->result(0));
  std::vector<RtValue> out;
  expectError(m.run({T(floats({1}, {1}))}, out), "node 'frob' (FrobnicateTensor)",
              "unsupported op ai.onnx.FrobnicateTensor version 17");
}

TEST(InterpreterErrors, ErrorInsideSubgraphNamesPath) {
  TestModel m;
  Value *cond = m.input("cond", DataType::Bool);
  Value *x = m.input("x");
  Value *idx = m.g->addInitializer("idx", ints({1}, {7}));
  Node *iff = m.node("If", {cond}, {"out"}, "if_outer");
  auto thenG = std::make_unique<Graph>();
  Node *g = thenG->createNode("Gather", {x, idx}, {"gx"});
  g->setName("inner_gather");
  thenG->append(g);
  thenG->addOutput(g->result(0));
  auto elseG = std::make_unique<Graph>();
  elseG->addOutput(x);
  iff->setAttr(Attribute::makeGraph("then_branch", std::move(thenG)));
  iff->setAttr(Attribute::makeGraph("else_branch", std::move(elseG)));
  m.g->addOutput(iff->result(0));
  std::vector<RtValue> out;
  Status s = m.run({T(boolScalar(true)), T(floats({2}, {1, 2}))}, out);
  expectError(s, "node 'inner_gather' (Gather) in subgraph if_outer(If).then_branch", "index 7");
  EXPECT_EQ(s.message().find("if_outer' (If)"), std::string::npos) << s.message();
  // The else branch works.
  ASSERT_TRUE(m.run({T(boolScalar(false)), T(floats({2}, {1, 2}))}, out).ok());
}

TEST(InterpreterErrors, LoopIterationCapAndMemoryLimit) {
  TestModel m;
  Value *cond = m.input("cond", DataType::Bool);
  Node *loop = m.node("Loop", {nullptr, cond}, {}, "forever");
  auto body = std::make_unique<Graph>();
  body->addInput("i", std::nullopt);
  Value *c = body->addInput("c", std::nullopt);
  body->addOutput(c);
  loop->setAttr(Attribute::makeGraph("body", std::move(body)));
  Value *shape = m.input("shape", DataType::Int64);
  m.g->addOutput(m.node("ConstantOfShape", {shape}, {"big"}, "big")->result(0));
  RunOptions opts;
  opts.maxLoopIterations = 1000;
  opts.memoryLimitBytes = 1 << 20;
  Interpreter interp(m.model, OpRegistry::builtin(), opts);
  std::vector<RtValue> out;
  expectError(interp.run(*m.g, {T(boolScalar(true)), T(ints({1}, {4}))}, out), "'forever' (Loop)",
              "1000 iterations");
  expectError(interp.run(*m.g, {T(boolScalar(false)), T(ints({1}, {1 << 20}))}, out), "'big'",
              "size limit");
}

//===----------------------------------------------------------------------===//
// Inputs and Compare
//===----------------------------------------------------------------------===//

TEST(Inputs, SeededShapesTypesAndSpecs) {
  TestModel m;
  m.g->addInput("x", Type::tensor(DataType::Float, Shape{Dim::symbol("batch"), Dim::value(3),
                                                          Dim::unknown()}));
  m.g->addInput("ids", Type::tensor(DataType::Int64, Shape{Dim::value(4)}));
  m.g->addInput("flag", Type::tensor(DataType::Bool, Shape{}));
  Value *w = m.g->addInput("w", Type::tensor(DataType::Float, Shape{Dim::value(1)}));
  m.g->addInitializerToInput(w, floats({1}, {1}));
  m.g->addInput("sr", Type::tensor(DataType::Int64, Shape{}));
  InputOptions opts;
  opts.seed = 42;
  ASSERT_TRUE(parseDimFlag("batch=2", opts.dims).ok());
  EXPECT_FALSE(parseDimFlag("batch", opts.dims).ok());
  EXPECT_FALSE(parseDimFlag("batch=x", opts.dims).ok());
  InputSpec sr;
  sr.name = "sr";
  sr.value = 16000;
  opts.specs.push_back(sr);
  std::vector<RtValue> a, b;
  ASSERT_TRUE(makeInputs(*m.g, opts, a).ok());
  ASSERT_TRUE(makeInputs(*m.g, opts, b).ok());
  ASSERT_EQ(a.size(), 5u);
  EXPECT_EQ(a[0].tensor->dims(), (std::vector<int64_t>{2, 3, 1}));
  for (float v : floatValues(a[0])) {
    EXPECT_GE(v, -1.0f);
    EXPECT_LT(v, 1.0f);
  }
  for (int64_t v : intValues(a[1])) {
    EXPECT_GE(v, 0);
    EXPECT_LE(v, 9);
  }
  EXPECT_EQ(a[2].tensor->dtype(), DataType::Bool);
  EXPECT_EQ(a[3].kind, RtValue::Kind::None); // initializer-backed
  EXPECT_EQ(intValues(a[4]), (std::vector<int64_t>{16000}));
  EXPECT_TRUE(compareValues(a[0], b[0], 0, 0).ok); // same seed, same values
  opts.seed = 43;
  ASSERT_TRUE(makeInputs(*m.g, opts, b).ok());
  EXPECT_FALSE(compareValues(a[0], b[0], 0, 0).ok);
}

TEST(Inputs, ReadsModelsJson) {
  std::string path = std::string(ONNXSLIM_SOURCE_DIR) + "/tests/models/models.json";
  std::ifstream probe(path);
  if (!probe)
    FAIL() << "no " << path << ": run scripts/fetch-models.sh";
  std::vector<InputSpec> specs;
  Status s = loadInputSpecs(path, "vad_legacy", specs);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_GE(specs.size(), 2u);
  EXPECT_EQ(specs[0].name, "input");
  ASSERT_TRUE(specs[0].range.has_value());
  EXPECT_EQ(specs[0].range->first, -0.5);
  EXPECT_FALSE(loadInputSpecs(path, "no_such_model", specs).ok());
}

TEST(Compare, TolerancesNaNAndShapes) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  Comparison c = compareTensors(*floats({3}, {1.0f, nan, 100.0f}), *floats({3}, {1.0f, nan, 100.05f}),
                                1e-3, 1e-5);
  EXPECT_TRUE(c.ok) << c.message;
  EXPECT_NEAR(c.maxAbsDiff, 0.05, 1e-3);
  c = compareTensors(*floats({2}, {1.0f, 2.0f}), *floats({2}, {1.0f, 2.1f}), 1e-3, 1e-5);
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.mismatches, 1);
  EXPECT_EQ(c.firstMismatch, 1);
  EXPECT_FALSE(compareTensors(*floats({2}, {1, 2}), *floats({1, 2}, {1, 2}), 1, 1).ok);
  EXPECT_FALSE(compareTensors(*floats({1}, {1}), *ints({1}, {1}), 1, 1).ok);
  EXPECT_FALSE(compareTensors(*ints({1}, {1}), *ints({1}, {2}), 1, 1).ok); // ints are exact
  EXPECT_FALSE(compareTensors(*floats({1}, {nan}), *floats({1}, {1}), 1, 1).ok);
  EXPECT_TRUE(compareTensors(*Tensor::fromStrings({1}, {"a"}), *Tensor::fromStrings({1}, {"a"}), 0, 0).ok);
  RtValue s1 = RtValue::fromSequence({floats({1}, {1})}), s2 = RtValue::fromSequence({});
  EXPECT_FALSE(compareValues(s1, s2, 0, 0).ok);
}

//===----------------------------------------------------------------------===//
// Real models (when fetched): run on seeded inputs without error
//===----------------------------------------------------------------------===//

TEST(RealModels, RunOnSeededInputs) {
  const char *names[] = {"ppocr_det", "ppocr_rec", "ppocr_cls", "vad_legacy", "vad_v5",
                         "face_front", "face_back", "mlsd_tiny", "mlsd_large", "hello_deepa"};
  std::string json = std::string(ONNXSLIM_SOURCE_DIR) + "/tests/models/models.json";
  int ran = 0;
  for (const char *name : names) {
    std::string path = std::string(ONNXSLIM_MODEL_CACHE) + "/" + name + ".onnx";
    if (!std::ifstream(path))
      continue;
    std::string error;
    std::unique_ptr<Model> model = loadModel(path, error);
    ASSERT_TRUE(model) << error;
    InputOptions opts;
    opts.seed = 1;
    ASSERT_TRUE(loadInputSpecs(json, name, opts.specs).ok()) << name;
    std::vector<RtValue> in, out;
    Status s = makeInputs(*model->graph(), opts, in);
    ASSERT_TRUE(s.ok()) << name << ": " << s.message();
    Interpreter interp(*model);
    s = interp.run(*model->graph(), in, out);
    EXPECT_TRUE(s.ok()) << name << ": " << s.message();
    EXPECT_EQ(out.size(), model->graph()->numOutputs()) << name;
    ++ran;
  }
  if (ran == 0)
    FAIL() << "no real models in " << ONNXSLIM_MODEL_CACHE << ": run scripts/fetch-models.sh";
}
