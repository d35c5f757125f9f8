//===- tests/ir/IRTest.cpp - IR mutators, use lists, scoping, verifier ----===//
//
// Builds small graphs through the public API and checks that use lists stay
// consistent under every mutator, that subgraph captures are real uses, and
// that the verifier reports each kind of broken invariant (corrupted on
// purpose through IRTestPeer, since the API itself cannot break them).
//
//===----------------------------------------------------------------------===//
#include "ir/IR.h"
#include "ir/Verifier.h"

#include <gtest/gtest.h>

namespace onnxslim {

/// Reaches into the IR to break invariants the public API protects.
struct IRTestPeer {
  static void setResultNumber(Value *v, unsigned n) { v->resultNo_ = n; }
  static void setDefiningNode(Value *v, Node *n) { v->node_ = n; }
  static void unlinkUse(Use &u) { u.unlink(); }
  static void setUseValueWithoutLinking(Use &u, Value *v) { u.value_ = v; }
  static void setUseIndex(Use &u, unsigned i) { u.index_ = i; }
};

namespace {

Type floatTensor(std::vector<int64_t> dims) {
  Shape s;
  for (int64_t d : dims)
    s.push_back(Dim::value(d));
  return Type::tensor(DataType::Float, s);
}

/// x -> Relu -> Neg -> y, with Add(x, w) dead on the side.
struct Chain {
  Model model;
  Graph *g;
  Value *x, *w;
  Node *relu, *neg, *add;

  Chain() {
    model.setGraph(std::make_unique<Graph>());
    g = model.graph();
    g->name = "main";
    x = g->addInput("x", floatTensor({2}));
    w = g->addInitializer("w", Tensor::fromValues<float>(DataType::Float, {2}, {1.f, 2.f}));
    relu = g->append(g->createNode("Relu", {x}, {"r"}));
    neg = g->append(g->createNode("Neg", {relu->result(0)}, {"y"}));
    add = g->append(g->createNode("Add", {x, w}, {"dead"}));
    g->addOutput(neg->result(0), floatTensor({2}));
  }
};

bool hasErrorContaining(const std::vector<std::string> &errors, const std::string &needle) {
  for (const std::string &e : errors)
    if (e.find(needle) != std::string::npos)
      return true;
  return false;
}

TEST(IR, BuildsAndVerifies) {
  Chain c;
  EXPECT_TRUE(verify(c.model).empty());
  EXPECT_EQ(c.g->numNodes(), 3u);
  EXPECT_EQ(c.x->useCount(), 2u);
  EXPECT_TRUE(c.relu->result(0)->hasOneUse());
  EXPECT_EQ(c.neg->result(0)->definingNode(), c.neg);
  EXPECT_TRUE(c.neg->result(0)->isGraphOutput());
  EXPECT_FALSE(c.relu->result(0)->isGraphOutput());
  EXPECT_TRUE(c.w->isInitializer());
  EXPECT_EQ(c.w->initializer()->numElements(), 2);
  EXPECT_TRUE(c.model.names().contains("dead"));
}

TEST(IR, UsersAreDistinctNodes) {
  Chain c;
  Node *mul = c.g->append(c.g->createNode("Mul", {c.x, c.x}, {"sq"}));
  EXPECT_EQ(c.x->useCount(), 4u);
  std::vector<Node *> users = c.x->users();
  EXPECT_EQ(users.size(), 3u);
  EXPECT_NE(std::find(users.begin(), users.end(), mul), users.end());
}

TEST(IR, SetOperandRelinks) {
  Chain c;
  c.neg->setOperand(0, c.x);
  EXPECT_FALSE(c.relu->result(0)->hasUses());
  EXPECT_EQ(c.x->useCount(), 3u);
  c.neg->setOperand(0, nullptr); // omitted input
  EXPECT_EQ(c.x->useCount(), 2u);
  EXPECT_EQ(c.neg->operand(0), nullptr);
  EXPECT_TRUE(verify(c.model).empty());
}

TEST(IR, ReplaceAllUsesMovesNodeAndOutputUses) {
  Chain c;
  Value *y = c.neg->result(0);
  y->replaceAllUsesWith(c.relu->result(0));
  EXPECT_FALSE(y->hasUses());
  EXPECT_EQ(c.g->output(0), c.relu->result(0));
  EXPECT_TRUE(c.relu->result(0)->isGraphOutput());
  c.neg->erase();
  EXPECT_EQ(c.g->numNodes(), 2u);
  EXPECT_TRUE(verify(c.model).empty());
}

TEST(IR, ReplaceUsesWithIfIsSelective) {
  Chain c;
  Node *mul = c.g->append(c.g->createNode("Mul", {c.x, c.x}, {"sq"}));
  c.x->replaceUsesWithIf(c.w, [&](Use &u) { return u.owner() == mul; });
  EXPECT_EQ(mul->operand(0), c.w);
  EXPECT_EQ(mul->operand(1), c.w);
  EXPECT_EQ(c.x->useCount(), 2u);
  EXPECT_TRUE(verify(c.model).empty());
}

TEST(IR, OperandVectorGrowthKeepsUseLists) {
  Chain c;
  Node *concat = c.g->append(c.g->createNode("Concat", {}, {"cat"}));
  for (int i = 0; i < 100; ++i) // forces several reallocations of the operand vector
    concat->addOperand(i % 2 ? c.x : c.w);
  EXPECT_EQ(c.x->useCount(), 52u);
  EXPECT_EQ(c.w->useCount(), 51u);
  concat->eraseOperand(0);
  EXPECT_EQ(concat->numOperands(), 99u);
  EXPECT_EQ(concat->operandUses()[5].index(), 5u);
  concat->resizeOperands(3);
  EXPECT_EQ(c.x->useCount(), 2u + 2u);
  EXPECT_TRUE(verify(c.model).empty());
}

TEST(IR, EraseDeadNodeAndInitializers) {
  Chain c;
  c.add->erase();
  EXPECT_FALSE(c.w->hasUses());
  EXPECT_EQ(c.g->eraseInitializersIf([](Value *) { return true; }), 1u);
  EXPECT_TRUE(c.g->initializers().empty());
  EXPECT_TRUE(verify(c.model).empty());
}

TEST(IR, InitializersWithUsesAreKept) {
  Chain c;
  EXPECT_EQ(c.g->eraseInitializersIf([](Value *) { return true; }), 0u);
  EXPECT_EQ(c.g->initializers().size(), 1u);
}

TEST(IR, MoveBeforeAndAfter) {
  Chain c;
  c.add->moveBefore(c.relu);
  EXPECT_EQ(c.g->firstNode(), c.add);
  c.add->moveAfter(c.neg);
  EXPECT_EQ(c.g->lastNode(), c.add);
  EXPECT_TRUE(verify(c.model).empty());
}

TEST(IR, NameTableFreshNames) {
  Chain c;
  NameTable &names = c.model.names();
  EXPECT_EQ(names.fresh("y"), "y_1");
  EXPECT_EQ(names.fresh("y"), "y_2");
  EXPECT_EQ(names.fresh("fresh"), "fresh");
  EXPECT_EQ(names.fresh("fresh"), "fresh_1");
}

TEST(IR, AttributesAndDefaults) {
  Chain c;
  c.relu->setAttr(Attribute::makeInt("axis", 3));
  c.relu->setAttr(Attribute::makeInts("perm", {1, 0}));
  EXPECT_EQ(c.relu->attrInt("axis", 0), 3);
  EXPECT_EQ(c.relu->attrInt("missing", 7), 7);
  EXPECT_EQ(c.relu->attrInts("perm"), (std::vector<int64_t>{1, 0}));
  c.relu->setAttr(Attribute::makeInt("axis", 4)); // replaces
  EXPECT_EQ(c.relu->attributes().size(), 2u);
  EXPECT_TRUE(c.relu->removeAttr("axis"));
  EXPECT_FALSE(c.relu->hasAttr("axis"));
}

/// If(cond) with a then-branch that reads the outer value `x`.
struct WithSubgraph {
  Chain c;
  Node *ifNode;
  Graph *thenBranch;
  Node *inner;

  WithSubgraph() {
    Value *cond = c.g->addInput("cond", Type::tensor(DataType::Bool, Shape{}));
    ifNode = c.g->append(c.g->createNode("If", {cond}, {"z"}));
    auto body = std::make_unique<Graph>();
    body->name = "then";
    thenBranch = body.get();
    inner = body->append(body->createNode("Abs", {c.x}, {"abs_x"}));
    body->addOutput(inner->result(0));
    ifNode->setAttr(Attribute::makeGraph("then_branch", std::move(body)));
  }
};

TEST(IR, SubgraphCaptureIsARealUse) {
  WithSubgraph s;
  EXPECT_EQ(s.thenBranch->parentNode(), s.ifNode);
  EXPECT_EQ(s.thenBranch->parentGraph(), s.c.g);
  EXPECT_EQ(s.thenBranch->model(), &s.c.model);
  EXPECT_TRUE(s.thenBranch->isInScope(s.c.x));
  EXPECT_FALSE(s.c.g->isInScope(s.inner->result(0)));
  bool found = false;
  for (Use *u : s.c.x->uses())
    found |= u->owner() == s.inner;
  EXPECT_TRUE(found);
  EXPECT_TRUE(verify(s.c.model).empty());

  // Replacing the outer value reaches into the subgraph.
  s.c.x->replaceUsesWithIf(s.c.w, [](Use &u) { return u.owner() && u.owner()->is("Abs"); });
  EXPECT_EQ(s.inner->operand(0), s.c.w);
  int walked = 0;
  s.c.g->walk([&](Node *) { ++walked; });
  EXPECT_EQ(walked, 5);
}

TEST(IR, ErasingNodeWithSubgraphDropsCaptureUses) {
  WithSubgraph s;
  size_t before = s.c.x->useCount();
  s.ifNode->erase();
  EXPECT_EQ(s.c.x->useCount(), before - 1);
  EXPECT_TRUE(verify(s.c.model).empty());
}

//===--- The verifier catches each kind of broken invariant ---------------===//

TEST(Verifier, TopologicalOrder) {
  Chain c;
  c.neg->moveBefore(c.relu); // Neg now reads Relu's result before it is defined
  auto errors = verify(c.model);
  EXPECT_TRUE(hasErrorContaining(errors, "not defined before it")) << errors.size();
}

TEST(Verifier, OperandOutOfScope) {
  WithSubgraph s;
  // The outer graph reads a value defined inside the subgraph.
  s.c.neg->setOperand(0, s.inner->result(0));
  EXPECT_TRUE(hasErrorContaining(verify(s.c.model), "not defined before it in scope"));
}

TEST(Verifier, SiblingSubgraphValueIsOutOfScope) {
  WithSubgraph s;
  auto other = std::make_unique<Graph>();
  Node *n = other->append(other->createNode("Neg", {s.inner->result(0)}, {"bad"}));
  other->addOutput(n->result(0));
  s.ifNode->setAttr(Attribute::makeGraph("else_branch", std::move(other)));
  EXPECT_TRUE(hasErrorContaining(verify(s.c.model), "not defined before it in scope"));
  s.ifNode->attr("else_branch")->g->lastNode()->setOperand(0, s.c.x);
  EXPECT_TRUE(verify(s.c.model).empty());
}

TEST(Verifier, OuterValueDefinedAfterTheSubgraphOwner) {
  WithSubgraph s;
  // Make the subgraph read `dead`, which the outer graph defines before If...
  s.inner->setOperand(0, s.c.add->result(0));
  EXPECT_TRUE(verify(s.c.model).empty());
  // ...and then move its producer after the If.
  s.c.add->moveAfter(s.ifNode);
  EXPECT_TRUE(hasErrorContaining(verify(s.c.model), "not defined before it"));
}

TEST(Verifier, SingleDefinition) {
  Chain c;
  IRTestPeer::setResultNumber(c.relu->result(0), 3);
  EXPECT_TRUE(hasErrorContaining(verify(c.model), "is not defined by it"));
  IRTestPeer::setResultNumber(c.relu->result(0), 0);
  IRTestPeer::setDefiningNode(c.relu->result(0), c.neg);
  EXPECT_TRUE(hasErrorContaining(verify(c.model), "is not defined by it"));
  IRTestPeer::setDefiningNode(c.relu->result(0), c.relu);
  EXPECT_TRUE(verify(c.model).empty());
}

TEST(Verifier, UseListMissingAnOperand) {
  Chain c;
  Value *r = c.relu->result(0);
  Use &slot = c.neg->operandUse(0);
  IRTestPeer::unlinkUse(slot);                   // slot removed from the list...
  IRTestPeer::setUseValueWithoutLinking(slot, r); // ...but still reads r
  auto errors = verify(c.model);
  EXPECT_TRUE(hasErrorContaining(errors, "operand slots but")) << (errors.empty() ? "" : errors[0]);
  IRTestPeer::setUseValueWithoutLinking(slot, nullptr);
}

TEST(Verifier, UseWithWrongIndex) {
  Chain c;
  IRTestPeer::setUseIndex(c.add->operandUse(1), 0);
  auto errors = verify(c.model);
  EXPECT_TRUE(hasErrorContaining(errors, "wrong owner or index"));
  EXPECT_TRUE(hasErrorContaining(errors, "holds a use that is not its operand slot"));
  IRTestPeer::setUseIndex(c.add->operandUse(1), 1);
  EXPECT_TRUE(verify(c.model).empty());
}

TEST(Verifier, SubgraphParentPointer) {
  WithSubgraph s;
  s.thenBranch->setParentNode(s.c.relu);
  EXPECT_TRUE(hasErrorContaining(verify(s.c.model), "parent is another node"));
}

TEST(Verifier, DuplicateNames) {
  Chain c;
  c.add->result(0)->setName("r");
  EXPECT_TRUE(hasErrorContaining(verify(c.model), "defined twice"));
}

TEST(Verifier, GraphOutputWithoutValue) {
  Chain c;
  c.g->setOutput(0, nullptr);
  EXPECT_TRUE(hasErrorContaining(verify(c.model), "reads no value"));
  c.g->setOutput(0, c.neg->result(0));
  EXPECT_TRUE(verify(c.model).empty());
}

} // namespace
} // namespace onnxslim
