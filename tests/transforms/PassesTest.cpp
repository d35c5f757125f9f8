//===- tests/transforms/PassesTest.cpp - Each cleanup pass on C++-built IR ===//
//
// Every pass on graphs built through the IR API: the rewrite it must make,
// the cases it must decline (graph outputs, graph inputs, subgraph captures,
// side effects, non-determinism, unknown shapes, malformed attributes), the
// model's interface unchanged, the verifier clean afterwards, and the pass
// idempotent (a second run changes nothing).
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

#include "ir/Equivalence.h"
#include "transforms/Clone.h"
#include "transforms/Passes.h"
#include "transforms/ValueUtils.h"

namespace onnxslim {
namespace {

using namespace test;

/// Runs `pass` and checks the invariants every pass keeps; Result: changed.
bool runChecked(std::unique_ptr<Pass> pass, TestModel &m, PassContext *ctx = nullptr) {
  std::string interface = interfaceOf(m.model);
  bool changed = runPass(*pass, m.model, ctx);
  EXPECT_EQ(interfaceOf(m.model), interface) << "the pass changed the model's interface";
  EXPECT_TRUE(m.verifies());
  std::unique_ptr<Model> after = cloneModel(m.model);
  EXPECT_FALSE(runPass(*pass, m.model)) << "a second run changed the IR again";
  std::optional<std::string> diff = firstDifference(*after, m.model);
  EXPECT_FALSE(diff) << *diff;
  return changed;
}

Value *boolInput(TestModel &m, const std::string &name) {
  return m.g->addInput(name, Type::tensor(DataType::Bool, Shape{}));
}

//===----------------------------------------------------------------------===//
// eliminate-dead-nodes
//===----------------------------------------------------------------------===//

TEST(EliminateDeadNodes, RemovesADeadBranch) {
  TestModel m;
  Value *x = m.input("x");
  Value *a = m.op("Relu", {x}, "a");
  Value *d = m.op("Exp", {x}, "d");
  m.op("Add", {d, a}, "e");
  m.output(m.op("Neg", {a}, "y"));
  PassContext ctx;
  EXPECT_TRUE(runChecked(createEliminateDeadNodesPass(), m, &ctx));
  EXPECT_EQ(m.g->numNodes(), 2u);
  EXPECT_EQ(counterValue(ctx, "eliminate-dead-nodes", "dead-nodes"), 2u);
  EXPECT_TRUE(a->hasOneUse());
}

TEST(EliminateDeadNodes, KeepsSideEffectsAndWhatTheyRead) {
  TestModel m;
  m.model.opsetImport.push_back(OpsetId{"com.example", 1, {}});
  Value *x = m.input("x");
  Value *s = m.op("Sin", {x}, "s");
  m.node("Print", {s}, {"p"}, nullptr, "com.example");
  m.node("RandomNormalLike", {x}, {"r"});
  m.output(m.op("Neg", {x}, "y"));
  EXPECT_TRUE(runChecked(createEliminateDeadNodesPass(), m));
  ASSERT_EQ(m.g->numNodes(), 3u); // Sin, Print, Neg (the random op had no effect)
  EXPECT_EQ(m.g->firstNode()->opType(), "Sin");
}

TEST(EliminateDeadNodes, FollowsSubgraphCaptures) {
  TestModel m;
  Value *x = m.input("x");
  Value *c = boolInput(m, "c");
  Value *k = m.op("Sin", {x}, "k");    // read only inside a live body: live
  Value *d = m.op("Exp", {x}, "d");    // read only by a dead node of a live body
  Value *only = m.op("Tan", {x}, "only"); // read only inside a dead If
  std::unique_ptr<Graph> t1 = body("t1"), e1 = body("e1");
  t1->append(t1->createNode("Cos", {d}, {"deadInBody"}));
  Node *o1 = t1->append(t1->createNode("Neg", {k}, {"o1"}));
  t1->addOutput(o1->result(0), floatType({2}));
  e1->addOutput(x, floatType({2}));
  m.output(m.ifNode(c, std::move(t1), std::move(e1), "y")->result(0));
  std::unique_ptr<Graph> t2 = body("t2"), e2 = body("e2");
  Node *o3 = t2->append(t2->createNode("Neg", {only}, {"o3"}));
  t2->addOutput(o3->result(0), floatType({2}));
  e2->addOutput(only, floatType({2}));
  m.ifNode(c, std::move(t2), std::move(e2), "unused");

  EXPECT_TRUE(runChecked(createEliminateDeadNodesPass(), m));
  std::vector<std::string> ops;
  for (Node *n : m.g->nodes())
    ops.push_back(n->opType());
  EXPECT_EQ(ops, (std::vector<std::string>{"Sin", "If"}));
  EXPECT_EQ(k->useCount(), 1u);
  EXPECT_EQ(m.g->lastNode()->attr("then_branch")->g->numNodes(), 1u);
}

TEST(EliminateDeadNodes, KeepsAnIfWhoseBodyHasASideEffect) {
  TestModel m;
  m.model.opsetImport.push_back(OpsetId{"com.example", 1, {}});
  Value *x = m.input("x");
  std::unique_ptr<Graph> t = body("t"), e = body("e");
  Node *p = t->append(t->createNode("Print", {x}, {"p"}, "com.example"));
  t->addOutput(p->result(0), floatType({2}));
  e->addOutput(x, floatType({2}));
  m.ifNode(boolInput(m, "c"), std::move(t), std::move(e), "unused");
  m.output(m.op("Neg", {x}, "y"));
  EXPECT_FALSE(runChecked(createEliminateDeadNodesPass(), m));
  EXPECT_EQ(m.g->numNodes(), 2u);
}

//===----------------------------------------------------------------------===//
// eliminate-identity-ops
//===----------------------------------------------------------------------===//

TEST(EliminateIdentityOps, ResolvesChains) {
  TestModel m;
  Value *a = m.op("Relu", {m.input("x")}, "a");
  Value *b = m.op("Identity", {a}, "b");
  Value *c = m.op("Identity", {b}, "c");
  Node *neg = m.node("Neg", {c}, {"y"});
  m.output(neg->result(0));
  EXPECT_TRUE(runChecked(createEliminateIdentityOpsPass(), m));
  EXPECT_EQ(m.g->numNodes(), 2u);
  EXPECT_EQ(neg->operand(0), a);
}

TEST(EliminateIdentityOps, RenamesTheProducerOfAGraphOutput) {
  TestModel m;
  Value *a = m.op("Relu", {m.input("x")}, "a");
  Value *b = m.op("Identity", {a}, "b");
  m.op("Neg", {b}, "side"); // another user, dead but present
  m.output(m.op("Identity", {b}, "y"));
  EXPECT_TRUE(runChecked(createEliminateIdentityOpsPass(), m));
  EXPECT_EQ(m.g->output(0), a);
  EXPECT_EQ(a->name(), "y");
  EXPECT_EQ(m.g->numNodes(), 2u);
}

TEST(EliminateIdentityOps, KeepsIdentitiesThatNameOutputs) {
  TestModel m;
  Value *x = m.input("x");
  Value *w = m.init("w", floats({2}, {1, 2}));
  Value *a = m.op("Relu", {x}, "a");
  m.output(a);
  Value *y1 = m.op("Identity", {x}, "y1"); // input of the graph
  Value *y2 = m.op("Identity", {a}, "y2"); // another graph output
  Value *y3 = m.op("Identity", {w}, "y3"); // an initializer
  Node *user = m.node("Add", {y1, y2}, {"y4"});
  m.output(y1);
  m.output(y2);
  m.output(y3);
  m.output(user->result(0));
  EXPECT_TRUE(runChecked(createEliminateIdentityOpsPass(), m)); // only the node user moved
  EXPECT_EQ(m.g->numNodes(), 5u);
  EXPECT_EQ(user->operand(0), x);
  EXPECT_EQ(user->operand(1), a);
}

TEST(EliminateIdentityOps, DoesNotRenameIntoAShadowingSubgraph) {
  // a = Relu(x); the then-body reads `a` and defines its own value named "y";
  // y = Identity(a) is a graph output: renaming a to "y" would make the body
  // read its own "y" when the model is written out.
  TestModel m;
  Value *x = m.input("x");
  Value *a = m.op("Relu", {x}, "a");
  std::unique_ptr<Graph> t = body("t"), e = body("e");
  Node *shadow = t->append(t->createNode("Neg", {x}, {"y"}));
  Node *useA = t->append(t->createNode("Add", {shadow->result(0), a}, {"o"}));
  t->addOutput(useA->result(0), floatType({2}));
  e->addOutput(x, floatType({2}));
  Node *iff = m.ifNode(boolInput(m, "c"), std::move(t), std::move(e), "z");
  m.output(iff->result(0));
  Node *id = m.node("Identity", {a}, {"y"});
  m.output(id->result(0));
  EXPECT_FALSE(runChecked(createEliminateIdentityOpsPass(), m));
  EXPECT_EQ(a->name(), "a");
  EXPECT_EQ(m.g->lastNode(), id);
}

TEST(EliminateIdentityOps, BypassesInsideBodies) {
  TestModel m;
  Value *x = m.input("x");
  Value *i = m.op("Identity", {x}, "i");
  std::unique_ptr<Graph> t = body("t"), e = body("e");
  Node *inner = t->append(t->createNode("Identity", {i}, {"ii"}));
  Node *neg = t->append(t->createNode("Neg", {inner->result(0)}, {"o"}));
  t->addOutput(neg->result(0), floatType({2}));
  Node *keep = e->append(e->createNode("Identity", {i}, {"eo"}));
  e->addOutput(keep->result(0), floatType({2}));
  m.output(m.ifNode(boolInput(m, "c"), std::move(t), std::move(e), "y")->result(0));
  EXPECT_TRUE(runChecked(createEliminateIdentityOpsPass(), m));
  EXPECT_EQ(neg->operand(0), x);
  EXPECT_EQ(keep->operand(0), x); // a body output reading an outer value keeps its Identity
  EXPECT_EQ(m.g->numNodes(), 1u);
}

//===----------------------------------------------------------------------===//
// eliminate-unused-initializers
//===----------------------------------------------------------------------===//

TEST(EliminateUnusedInitializers, RemovesOnlyUnreadNonInputs) {
  TestModel m;
  Value *x = m.input("x");
  Value *d = m.input("d");
  m.g->addInitializerToInput(d, floats({2}, {5, 6}));
  Value *w = m.init("w", floats({2}, {1, 2}));
  m.init("v", floats({2}, {3, 4}));
  m.output(m.op("Add", {x, w}, "y"));
  PassContext ctx;
  EXPECT_TRUE(runChecked(createEliminateUnusedInitializersPass(), m, &ctx));
  ASSERT_EQ(m.g->initializers().size(), 2u);
  EXPECT_EQ(counterValue(ctx, "eliminate-unused-initializers", "initializers"), 1u);

  std::unique_ptr<Pass> withInputs = createEliminateUnusedInitializersPass();
  std::string error;
  ASSERT_TRUE(withInputs->setOption("include-inputs", "true", error));
  EXPECT_EQ(withInputs->optionsText(), "include-inputs=true");
  EXPECT_TRUE(runPass(*withInputs, m.model));
  EXPECT_EQ(m.g->inputs().size(), 1u);
  EXPECT_EQ(m.g->initializers().size(), 1u);
  EXPECT_TRUE(m.verifies());
}

//===----------------------------------------------------------------------===//
// eliminate-duplicate-constants
//===----------------------------------------------------------------------===//

TEST(EliminateDuplicateConstants, MergesLargeTensorsOfAnyDtype) {
  TestModel m;
  Value *x = m.input("x", {1000, 1000});
  std::vector<float> big(1000 * 1000);
  for (size_t i = 0; i < big.size(); ++i)
    big[i] = static_cast<float>(i % 977);
  Value *w1 = m.init("w1", floats({1000, 1000}, big));
  Value *w2 = m.init("w2", floats({1000, 1000}, big));
  big[123456] += 1;
  Value *w3 = m.init("w3", floats({1000, 1000}, big)); // differs in one element
  Value *s1 = m.init("s1", Tensor::fromStrings({2}, {"a", "b"}));
  Value *s2 = m.init("s2", Tensor::fromStrings({2}, {"a", "b"}));
  Value *h1 = m.init("h1", Tensor::fromValues<uint16_t>(DataType::Float16, {3}, {1, 2, 3}));
  Value *h2 = m.init("h2", Tensor::fromValues<uint16_t>(DataType::Float16, {3}, {1, 2, 3}));
  Value *u = m.init("u", Tensor::fromValues<uint16_t>(DataType::UInt16, {3}, {1, 2, 3})); // same bytes
  Value *a = m.op("Add", {x, w1}, "a");
  Value *b = m.op("Add", {a, w2}, "b");
  m.output(m.op("Add", {b, w3}, "y"), {1000, 1000});
  Node *strings = m.node("Concat", {s1, s2}, {"s"});
  Node *halves = m.node("Concat", {h1, h2, u}, {"h"});
  PassContext ctx;
  EXPECT_TRUE(runChecked(createEliminateDuplicateConstantsPass(), m, &ctx));
  EXPECT_EQ(b->definingNode()->operand(1), w1);
  EXPECT_EQ(m.g->lastNode()->operand(0), h1);
  EXPECT_EQ(strings->operand(1), s1);
  EXPECT_EQ(halves->operand(1), h1);
  EXPECT_EQ(halves->operand(2), u);
  (void)w3;
  EXPECT_EQ(m.g->initializers().size(), 5u); // w1 w3 s1 h1 u
  EXPECT_EQ(counterValue(ctx, "eliminate-duplicate-constants", "merged-initializers"), 3u);
}

TEST(EliminateDuplicateConstants, HashesEachTensorOnce) {
  // Equal constants in sibling bodies cannot merge: they are compared on
  // every run, but hashed only on the first.
  TestModel m;
  Value *x = m.input("x");
  std::unique_ptr<Graph> t = body("t"), e = body("e");
  for (Graph *g : {t.get(), e.get()}) {
    Node *k = g->append(g->createNode("Constant", {}, {g->name + "k"}));
    k->setAttr(Attribute::makeTensor("value", floats({2}, {7, 8})));
    Node *add = g->append(g->createNode("Add", {x, k->result(0)}, {g->name + "o"}));
    g->addOutput(add->result(0), floatType({2}));
  }
  Graph *tb = t.get();
  m.output(m.ifNode(boolInput(m, "c"), std::move(t), std::move(e), "y")->result(0));
  std::unique_ptr<Pass> pass = createEliminateDuplicateConstantsPass();
  PassContext first, second;
  EXPECT_FALSE(runPass(*pass, m.model, &first));
  EXPECT_EQ(counterValue(first, "eliminate-duplicate-constants", "tensors-hashed"), 2u);
  EXPECT_NE(tb->firstNode()->attr("value")->t->cachedHash.load(), 0u);
  EXPECT_FALSE(runPass(*pass, m.model, &second));
  EXPECT_EQ(counterValue(second, "eliminate-duplicate-constants", "tensors-hashed"), 0u);
}

TEST(EliminateDuplicateConstants, SamplesLargeTensorsBeforeHashingThem) {
  // Four same-shape 128 KiB weights, as the layers of a transformer: w2
  // differs from w1 everywhere, w3 equals w1, w4 differs from w1 in one
  // element between two samples. Only the tensors whose 16-sample
  // fingerprints collide (w1, w3, w4) are hashed whole; w2 is read only
  // at its samples.
  TestModel m;
  Value *x = m.input("x", {128, 256});
  std::vector<float> v1(128 * 256), v2(v1.size());
  for (size_t i = 0; i < v1.size(); ++i) {
    v1[i] = static_cast<float>(i * 7919 % 1013);
    v2[i] = static_cast<float>(i * 104729 % 1021);
  }
  std::vector<float> v4 = v1;
  v4[1000] += 1; // byte 4000: past the first sample (0..255), before the second
  Value *w1 = m.init("w1", floats({128, 256}, v1));
  Value *w2 = m.init("w2", floats({128, 256}, v2));
  Value *w3 = m.init("w3", floats({128, 256}, v1));
  Value *w4 = m.init("w4", floats({128, 256}, v4));
  Value *a = m.op("Add", {x, w1}, "a");
  Value *b = m.op("Add", {a, w2}, "b");
  Value *c = m.op("Add", {b, w3}, "c");
  m.output(m.op("Add", {c, w4}, "y"), {128, 256});
  PassContext ctx;
  EXPECT_TRUE(runChecked(createEliminateDuplicateConstantsPass(), m, &ctx));
  EXPECT_EQ(c->definingNode()->operand(1), w1);
  EXPECT_EQ(m.g->lastNode()->operand(1), w4);
  EXPECT_EQ(b->definingNode()->operand(1), w2);
  (void)w3;
  EXPECT_EQ(m.g->initializers().size(), 3u); // w1 w2 w4
  EXPECT_EQ(counterValue(ctx, "eliminate-duplicate-constants", "tensors-sampled"), 4u);
  EXPECT_EQ(counterValue(ctx, "eliminate-duplicate-constants", "tensors-hashed"), 3u);
  EXPECT_EQ(w2->initializer()->cachedHash.load(), 0u);
  EXPECT_NE(w4->initializer()->cachedHash.load(), 0u);
}

TEST(EliminateDuplicateConstants, HashesSmallTensorsWholeWithoutSampling) {
  TestModel m;
  Value *x = m.input("x", {16});
  std::vector<float> v(16, 1.0f);
  Value *k1 = m.init("k1", floats({16}, v));
  v[15] = 2;
  Value *k2 = m.init("k2", floats({16}, v)); // differs in its last element
  m.output(m.op("Add", {m.op("Add", {x, k1}, "a"), k2}, "y"), {16});
  PassContext ctx;
  EXPECT_FALSE(runChecked(createEliminateDuplicateConstantsPass(), m, &ctx));
  EXPECT_EQ(counterValue(ctx, "eliminate-duplicate-constants", "tensors-sampled"), 0u);
  EXPECT_EQ(counterValue(ctx, "eliminate-duplicate-constants", "tensors-hashed"), 2u);
}

TEST(EliminateDuplicateConstants, KeepsInterfaceValuesAndUsesOuterConstantsInBodies) {
  TestModel m;
  Value *x = m.input("x");
  Value *d = m.input("d");
  m.g->addInitializerToInput(d, floats({2}, {1, 2})); // overridable: not a constant
  Value *k = m.init("k", floats({2}, {1, 2}));
  Value *s = m.op("Add", {x, d}, "s");
  Node *mul = m.node("Mul", {s, k}, {"y"});
  m.output(mul->result(0));
  std::unique_ptr<Graph> t = body("t"), e = body("e");
  Node *inner = t->append(t->createNode("Constant", {}, {"ik"}));
  inner->setAttr(Attribute::makeTensor("value", floats({2}, {1, 2})));
  Node *use = t->append(t->createNode("Sub", {x, inner->result(0)}, {"o"}));
  t->addOutput(use->result(0), floatType({2}));
  e->addOutput(x, floatType({2}));
  m.output(m.ifNode(boolInput(m, "c"), std::move(t), std::move(e), "z")->result(0));
  EXPECT_TRUE(runChecked(createEliminateDuplicateConstantsPass(), m));
  EXPECT_EQ(s->definingNode()->operand(1), d);
  EXPECT_EQ(mul->operand(1), k);
  EXPECT_EQ(use->operand(1), k);
  EXPECT_EQ(m.g->lastNode()->attr("then_branch")->g->numNodes(), 1u);
}

TEST(EliminateDuplicateConstants, SkipsTensorsWithoutBytes) {
  TestModel m;
  Value *x = m.input("x");
  // An external tensor whose data was not loaded: no bytes, inconsistent.
  auto ext = std::make_shared<Tensor>(DataType::Float, std::vector<int64_t>{2}, Buffer());
  ext->encoding = TensorEncoding::External;
  Value *e1 = m.init("e1", ext);
  Value *e2 = m.init("e2", ext);
  m.output(m.op("Add", {x, e1}, "a"));
  m.output(m.op("Add", {x, e2}, "b"));
  EXPECT_FALSE(runChecked(createEliminateDuplicateConstantsPass(), m));
}

//===----------------------------------------------------------------------===//
// eliminate-redundant-transposes
//===----------------------------------------------------------------------===//

Node *transpose(TestModel &m, Value *in, std::vector<int64_t> perm, const std::string &name) {
  Node *t = m.node("Transpose", {in}, {name});
  if (!perm.empty())
    t->setAttr(Attribute::makeInts("perm", std::move(perm)));
  return t;
}

TEST(EliminateRedundantTransposes, ComposesAndCancels) {
  TestModel m;
  Value *x = m.input("x", {2, 3, 4});
  Node *t1 = transpose(m, x, {0, 2, 1}, "t1");
  Node *t2 = transpose(m, t1->result(0), {2, 0, 1}, "t2");
  Node *t3 = transpose(m, t2->result(0), {1, 0, 2}, "t3"); // cancels the composition
  m.output(m.op("Neg", {t3->result(0)}, "y"), {2, 3, 4});
  EXPECT_TRUE(runChecked(createEliminateRedundantTransposesPass(), m));
  ASSERT_EQ(m.g->numNodes(), 1u);
  EXPECT_EQ(m.g->firstNode()->operand(0), x);
}

TEST(EliminateRedundantTransposes, DeclinesBadPermsAndUnknownRanks) {
  TestModel m;
  Value *x = m.input("x", {2, 3});
  Value *u = m.g->addInput("u", Type::tensor(DataType::Float)); // unknown rank
  Node *bad1 = transpose(m, x, {0, 0}, "bad1");
  Node *bad2 = transpose(m, bad1->result(0), {1, 0}, "bad2");
  Node *noPerm1 = transpose(m, u, {}, "np1");
  Node *noPerm2 = transpose(m, noPerm1->result(0), {}, "np2");
  m.output(bad2->result(0), {3, 2});
  m.g->addOutput(noPerm2->result(0), Type::tensor(DataType::Float));
  EXPECT_FALSE(runChecked(createEliminateRedundantTransposesPass(), m));
  EXPECT_EQ(m.g->numNodes(), 4u);
}

TEST(EliminateRedundantTransposes, ComposesWithoutPermWhenTheRankIsKnown) {
  TestModel m;
  Value *x = m.input("x", {2, 3, 4});
  Node *t1 = transpose(m, x, {}, "t1"); // [2,1,0]
  Node *t2 = transpose(m, t1->result(0), {1, 2, 0}, "t2");
  m.output(t2->result(0), {3, 2, 4});
  EXPECT_TRUE(runChecked(createEliminateRedundantTransposesPass(), m));
  ASSERT_EQ(m.g->numNodes(), 1u);
  EXPECT_EQ(m.g->firstNode()->attrInts("perm"), (std::vector<int64_t>{1, 0, 2}));
}

//===----------------------------------------------------------------------===//
// eliminate-common-subexpressions
//===----------------------------------------------------------------------===//

TEST(EliminateCommonSubexpressions, FoldsManyDuplicatesByHashing) {
  TestModel m;
  Value *x = m.input("x");
  Value *w = m.init("w", floats({2}, {1, 2}));
  Value *acc = nullptr;
  for (int i = 0; i < 1000; ++i) {
    Value *r = m.op("Add", {x, w}, "r" + std::to_string(i));
    Value *s = m.op("Mul", {r, r}, "s" + std::to_string(i));
    acc = acc ? m.op("Sum", {acc, s}, "acc" + std::to_string(i)) : s;
  }
  m.output(acc);
  PassContext ctx;
  EXPECT_TRUE(runChecked(createEliminateCommonSubexpressionsPass(), m, &ctx));
  EXPECT_EQ(counterValue(ctx, "eliminate-common-subexpressions", "erased"), 1998u);
  EXPECT_EQ(m.g->numNodes(), 2u + 999u);
}

TEST(EliminateCommonSubexpressions, ComparesAttributesAndTensors) {
  TestModel m;
  Value *x = m.input("x");
  Node *a = m.node("LeakyRelu", {x}, {"a"});
  a->setAttr(Attribute::makeFloat("alpha", 0.1f));
  Node *b = m.node("LeakyRelu", {x}, {"b"});
  b->setAttr(Attribute::makeFloat("alpha", 0.2f));
  Node *c = m.node("LeakyRelu", {x}, {"c"});
  c->setAttr(Attribute::makeFloat("alpha", 0.1f));
  Node *k1 = m.node("Constant", {}, {"k1"});
  k1->setAttr(Attribute::makeTensor("value", floats({2}, {3, 4})));
  Node *k2 = m.node("Constant", {}, {"k2"});
  k2->setAttr(Attribute::makeTensor("value", floats({2}, {3, 4})));
  Node *sum = m.node("Sum", {a->result(0), b->result(0), c->result(0), k1->result(0), k2->result(0)}, {"y"});
  m.output(sum->result(0));
  EXPECT_TRUE(runChecked(createEliminateCommonSubexpressionsPass(), m));
  EXPECT_EQ(sum->operand(2), a->result(0));
  EXPECT_EQ(sum->operand(1), b->result(0));
  EXPECT_EQ(sum->operand(4), k1->result(0));
  EXPECT_EQ(m.g->numNodes(), 4u);
}

TEST(EliminateCommonSubexpressions, KeepsRandomAndCustomOps) {
  TestModel m;
  m.model.opsetImport.push_back(OpsetId{"com.example", 1, {}});
  Value *x = m.input("x");
  Value *r1 = m.op("RandomUniformLike", {x}, "r1");
  Value *r2 = m.op("RandomUniformLike", {x}, "r2");
  Value *d1 = m.op("Dropout", {x}, "d1");
  Value *d2 = m.op("Dropout", {x}, "d2");
  Value *c1 = m.node("Op", {x}, {"c1"}, nullptr, "com.example")->result(0);
  Value *c2 = m.node("Op", {x}, {"c2"}, nullptr, "com.example")->result(0);
  m.output(m.op("Sum", {r1, r2, d1, d2, c1, c2}, "y"));
  EXPECT_FALSE(runChecked(createEliminateCommonSubexpressionsPass(), m));
}

TEST(EliminateCommonSubexpressions, ScopesFollowBodies) {
  TestModel m;
  Value *x = m.input("x");
  Value *outer = m.op("Sin", {x}, "outer");
  auto makeBodies = [&](const std::string &tag, Node *&thenNode, Node *&elseNode) {
    std::unique_ptr<Graph> t = body("t" + tag), e = body("e" + tag);
    thenNode = t->append(t->createNode("Sin", {x}, {"ts" + tag}));
    Node *tc = t->append(t->createNode("Cos", {x}, {"tc" + tag}));
    Node *tsum = t->append(t->createNode("Add", {thenNode->result(0), tc->result(0)}, {"to" + tag}));
    t->addOutput(tsum->result(0), floatType({2}));
    elseNode = e->append(e->createNode("Cos", {x}, {"ec" + tag}));
    e->addOutput(elseNode->result(0), floatType({2}));
    return std::make_pair(std::move(t), std::move(e));
  };
  Node *ts, *ec;
  auto [t, e] = makeBodies("1", ts, ec);
  Graph *tg = t.get();
  Value *c = boolInput(m, "c");
  Node *iff = m.ifNode(c, std::move(t), std::move(e), "y");
  m.output(m.op("Add", {iff->result(0), outer}, "z"));
  EXPECT_TRUE(runChecked(createEliminateCommonSubexpressionsPass(), m));
  EXPECT_EQ(tg->numNodes(), 2u);                       // Sin replaced by the outer one
  EXPECT_EQ(tg->lastNode()->operand(0), outer);
  EXPECT_EQ(iff->attr("else_branch")->g->numNodes(), 1u); // sibling Cos stays
}

//===----------------------------------------------------------------------===//
// eliminate-nop-ops
//===----------------------------------------------------------------------===//

TEST(EliminateNopOps, RemovesIdentityArithmetic) {
  TestModel m;
  Value *x = m.input("x", {2, 3});
  Value *one = m.init("one", floats({}, {1}));
  // x + (-0.0) is x for every float x (x + (+0.0) is not: -0.0 + 0.0 = +0.0).
  Value *zeros = m.init("zeros", floats({1, 3}, {-0.0f, -0.0f, -0.0f}));
  Value *ione = m.init("ione", ints({}, {1}));
  Value *a = m.op("Mul", {one, x}, "a");
  Value *b = m.op("Add", {a, zeros}, "b");
  Value *c = m.op("Pow", {b, ione}, "c");
  Value *d = m.op("Div", {c, one}, "d");
  Node *neg = m.node("Neg", {d}, {"y"});
  m.output(neg->result(0), {2, 3});
  EXPECT_TRUE(runChecked(createEliminateNopOpsPass(), m));
  EXPECT_EQ(m.g->numNodes(), 1u);
  EXPECT_EQ(neg->operand(0), x);
}

TEST(EliminateNopOps, DeclinesNonIdentityArithmetic) {
  TestModel m;
  Value *x = m.input("x", {3});
  Value *zero = m.init("zero", floats({}, {0}));
  Value *ones23 = m.init("ones23", floats({2, 3}, {1, 1, 1, 1, 1, 1}));
  Value *half = m.init("half", Tensor::fromValues<uint16_t>(DataType::Float16, {}, {0x3c00}));
  m.output(m.op("Sub", {zero, x}, "a"), {3});
  m.output(m.op("Mul", {x, ones23}, "b"), {2, 3});
  m.output(m.op("Mul", {x, half}, "c"), {3}); // dtype differs from x's
  EXPECT_FALSE(runChecked(createEliminateNopOpsPass(), m));
  EXPECT_EQ(m.g->numNodes(), 3u);
}

TEST(EliminateNopOps, RemovesShapeOpsThatChangeNothing) {
  TestModel m;
  Shape symbolic{Dim::symbol("N"), Dim::value(3)};
  Value *x = m.g->addInput("x", Type::tensor(DataType::Float, symbolic));
  Value *s = m.init("s", ints({2}, {0, -1}));
  Value *e = m.init("e", ints({1}, {1}));
  Value *starts = m.init("starts", ints({2}, {0, -3}));
  Value *ends = m.init("ends", ints({2}, {INT64_MAX, 3}));
  Value *pads = m.init("pads", ints({4}, {0, 0, 0, 0}));
  Value *a = m.op("Reshape", {x, s}, "a");
  (void)a;
  Node *reshape = m.g->firstNode();
  Node *expand = m.node("Expand", {x, e}, {"b"});
  Node *slice = m.node("Slice", {x, starts, ends}, {"c"});
  Node *pad = m.node("Pad", {x, pads}, {"d"});
  Node *cast = m.node("Cast", {x}, {"f"});
  cast->setAttr(Attribute::makeInt("to", 1));
  Node *concat = m.node("Concat", {x}, {"g"});
  concat->setAttr(Attribute::makeInt("axis", 0));
  Node *sum = m.node("Sum", {reshape->result(0), expand->result(0), slice->result(0), pad->result(0),
                             cast->result(0), concat->result(0)},
                     {"y"});
  m.g->addOutput(sum->result(0), Type::tensor(DataType::Float, symbolic));
  EXPECT_TRUE(runChecked(createEliminateNopOpsPass(), m));
  EXPECT_EQ(m.g->numNodes(), 1u);
  for (size_t i = 0; i < sum->numOperands(); ++i)
    EXPECT_EQ(sum->operand(i), x) << i;
}

TEST(EliminateNopOps, DeclinesShapeOpsThatMayChangeSomething) {
  TestModel m;
  Shape symbolic{Dim::symbol("N"), Dim::value(3)};
  Value *x = m.g->addInput("x", Type::tensor(DataType::Float, symbolic));
  Value *s = m.init("s", ints({2}, {3, -1}));     // N is not provably 3
  Value *e = m.init("e", ints({2}, {2, 3}));      // N is not provably 2
  Value *starts = m.init("starts", ints({1}, {0}));
  Value *ends = m.init("ends", ints({1}, {2147483647})); // N might be larger
  Value *axes = m.init("axes", ints({1}, {0}));
  Value *cond = boolInput(m, "t");
  std::vector<Value *> outs = {
      m.op("Reshape", {x, s}, "a"), m.op("Expand", {x, e}, "b"), m.op("Slice", {x, starts, ends, axes}, "c"),
      m.op("Squeeze", {x}, "d"), m.node("Dropout", {x, nullptr, cond}, {"f"})->result(0),
  };
  for (Value *v : outs)
    m.g->addOutput(v, Type::tensor(DataType::Float));
  Node *cast = m.node("Cast", {x}, {"g"});
  cast->setAttr(Attribute::makeInt("to", 7));
  m.g->addOutput(cast->result(0), Type::tensor(DataType::Int64));
  Node *drop = m.node("Dropout", {x}, {"h", "mask"});
  m.g->addOutput(drop->result(0), Type::tensor(DataType::Float));
  m.g->addOutput(drop->result(1), Type::tensor(DataType::Bool));
  EXPECT_FALSE(runChecked(createEliminateNopOpsPass(), m));
  EXPECT_EQ(m.g->numNodes(), 7u);
}

TEST(EliminateNopOps, AGraphOutputBecomesAnIdentity) {
  TestModel m;
  Value *x = m.input("x", {2});
  Value *zero = m.init("zero", floats({}, {0}));
  m.output(m.op("Sub", {x, zero}, "y"));
  EXPECT_TRUE(runChecked(createEliminateNopOpsPass(), m));
  ASSERT_EQ(m.g->numNodes(), 1u);
  EXPECT_EQ(m.g->firstNode()->opType(), "Identity");
  EXPECT_EQ(m.g->firstNode()->operand(0), x);
  EXPECT_EQ(m.g->output(0)->name(), "y");
}

TEST(EliminateNopOps, MalformedNodesAreDeclinedNotFatal) {
  TestModel m;
  Value *x = m.input("x", {2});
  m.output(m.node("Cast", {x}, {"a"})->result(0));                // no 'to'
  m.output(m.node("Reshape", {x}, {"b"})->result(0));             // no shape
  m.output(m.node("Transpose", {x}, {"c"})->result(0));           // (another pass's op)
  m.output(m.node("Slice", {x, nullptr, nullptr}, {"d"})->result(0)); // omitted starts/ends
  m.output(m.node("Add", {x}, {"e"})->result(0));                 // one operand
  m.output(m.node("Pad", {x}, {"f"})->result(0));                 // no pads
  EXPECT_FALSE(runChecked(createEliminateNopOpsPass(), m));
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

TEST(ValueUtils, ConstantsOfEveryForm) {
  TestModel m;
  Node *f = m.node("Constant", {}, {"f"});
  f->setAttr(Attribute::makeFloat("value_float", 1.0f));
  Node *is = m.node("Constant", {}, {"is"});
  is->setAttr(Attribute::makeInts("value_ints", {4, 5}));
  Value *x = m.input("x");
  Value *d = m.input("d");
  m.g->addInitializerToInput(d, floats({2}, {1, 2}));
  ASSERT_TRUE(constantTensor(f->result(0)));
  EXPECT_TRUE(isSplatOf(*constantTensor(f->result(0)), 1));
  EXPECT_EQ(constantInts(is->result(0)), (std::vector<int64_t>{4, 5}));
  EXPECT_FALSE(constantTensor(x));
  EXPECT_FALSE(constantTensor(d)) << "a graph input with a default is not a constant";
  EXPECT_TRUE(isSplatOf(*Tensor::fromValues<uint16_t>(DataType::BFloat16, {2}, {0x3f80, 0x3f80}), 1));
  EXPECT_TRUE(isSplatOf(*Tensor::fromValues<uint16_t>(DataType::Float16, {2}, {0x0000, 0x8000}), 0));
  EXPECT_FALSE(isSplatOf(*floats({0}, {}), 0)) << "an empty tensor is not a splat";
  TensorPtr t = floats({2}, {1, 2});
  EXPECT_EQ(tensorContentHash(*t), tensorContentHash(*floats({2}, {1, 2})));
  EXPECT_NE(tensorContentHash(*t), tensorContentHash(*floats({2, 1}, {1, 2})));
  EXPECT_NE(tensorContentHash(*t), tensorContentHash(*Tensor::fromValues<float>(DataType::Int32, {2}, {1, 2})));
}

} // namespace
} // namespace onnxslim
