//===- tests/transforms/DriverTest.cpp - Patterns, rewriter, greedy driver ===//
//
// The greedy driver on patterns written for the test: convergence and the
// number of sweeps, the iteration cap and the per-sweep rewrite cap, the
// pattern contract (false = IR untouched, checked with ir/Equivalence against
// a copy; a pattern breaking it fails the pass), erased nodes leaving the
// worklist, producers revisited after an erase, recursion into bodies, and
// --debug-only output.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

#include "ir/Equivalence.h"
#include "transforms/Clone.h"
#include "transforms/GreedyPatternRewriteDriver.h"

#include <sstream>

namespace onnxslim {
namespace {

using namespace test;

/// Identity(x) -> x, for values that are not graph outputs.
class BypassIdentity : public Pattern {
public:
  BypassIdentity() : Pattern("Identity", "bypass-identity") {}
  bool matchAndRewrite(Node *node, Rewriter &rewriter) const override {
    if (node->result(0)->isGraphOutput())
      return rewriter.notifyMatchFailure(node, "graph output");
    rewriter.replaceAllUsesWith(node->result(0), node->operand(0));
    rewriter.eraseNode(node);
    return true;
  }
};

/// Erases any node whose results are all unused (and not graph outputs).
class EraseUnused : public Pattern {
public:
  EraseUnused() : Pattern("", "erase-unused") {}
  bool matchAndRewrite(Node *node, Rewriter &rewriter) const override {
    if (!node->resultsUnused())
      return rewriter.notifyMatchFailure(node, "a result is used");
    rewriter.eraseNode(node);
    return true;
  }
};

/// Always declines, with a reason.
class Decline : public Pattern {
public:
  Decline() : Pattern("", "decline") {}
  bool matchAndRewrite(Node *node, Rewriter &rewriter) const override {
    return rewriter.notifyMatchFailure(node, "never applies");
  }
};

/// Renames its root's result every time: never converges, and (renames do
/// not queue anything) it makes one change per node per sweep.
class RenameForever : public Pattern {
public:
  RenameForever() : Pattern("Relu", "rename-forever") {}
  bool matchAndRewrite(Node *node, Rewriter &rewriter) const override {
    rewriter.renameValue(node->result(0), node->result(0)->name() + "x");
    return true;
  }
};

/// Flips an attribute in place: the node is queued again at once.
class Oscillate : public Pattern {
public:
  Oscillate() : Pattern("Relu", "oscillate") {}
  bool matchAndRewrite(Node *node, Rewriter &rewriter) const override {
    int64_t v = node->attrInt("flip", 0);
    rewriter.modifyNodeInPlace(node, [&] { node->setAttr(Attribute::makeInt("flip", 1 - v)); });
    return true;
  }
};

/// Breaks the contract: changes the IR, then returns false.
class LiesAboutFailure : public Pattern {
public:
  LiesAboutFailure() : Pattern("Neg", "lies-about-failure") {}
  bool matchAndRewrite(Node *node, Rewriter &rewriter) const override {
    rewriter.renameValue(node->result(0), "renamed");
    return false;
  }
};

/// Breaks the contract: returns true without changing anything.
class LiesAboutSuccess : public Pattern {
public:
  LiesAboutSuccess() : Pattern("Neg", "lies-about-success") {}
  bool matchAndRewrite(Node *, Rewriter &) const override { return true; }
};

/// x -> Identity x n -> Neg -> y.
TestModel identityChain(int n) {
  TestModel m;
  Value *v = m.input("x");
  for (int i = 0; i < n; ++i)
    v = m.op("Identity", {v}, "i" + std::to_string(i));
  m.output(m.op("Neg", {v}, "y"));
  return m;
}

TEST(GreedyDriver, ConvergesInTwoSweepsOnALongChain) {
  TestModel m = identityChain(2000);
  PatternSet patterns;
  patterns.add<BypassIdentity>();
  PassContext ctx;
  GreedyRewriteResult r = applyPatternsGreedily(m.model, patterns, ctx);
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(r.converged);
  EXPECT_EQ(r.iterations, 2u); // one sweep that rewrites, one that confirms
  EXPECT_EQ(r.numRewrites, 2000u);
  EXPECT_EQ(m.g->numNodes(), 1u);
  EXPECT_EQ(m.g->firstNode()->operand(0), m.g->input(0));
  EXPECT_EQ(counterValue(ctx, "", "bypass-identity"), 2000u);
  EXPECT_TRUE(m.verifies());
}

TEST(GreedyDriver, LogsEveryRewriteAndHonoursTheLogsLimitAndBlocks) {
  // Every success is logged, in order, with its root.
  TestModel m = identityChain(5);
  PatternSet patterns;
  patterns.add<BypassIdentity>();
  PassContext ctx;
  applyPatternsGreedily(m.model, patterns, ctx);
  const std::vector<RewriteRecord> &all = ctx.rewriteLog().records();
  ASSERT_EQ(all.size(), 5u);
  EXPECT_EQ(all[0].pattern, "bypass-identity");
  EXPECT_FALSE(all[0].exact);
  EXPECT_EQ(ctx.rewriteLog().inexactCount(), 5u);

  // A limit of 2: two rewrites, the rest left as they were.
  TestModel limited = identityChain(5);
  PassContext two;
  two.rewriteLog().setLimit(2);
  applyPatternsGreedily(limited.model, patterns, two);
  EXPECT_EQ(two.rewriteLog().size(), 2u);
  EXPECT_EQ(limited.g->numNodes(), 4u);
  EXPECT_EQ(two.rewriteLog().records()[1].key, all[1].key);

  // A blocked (pattern, root): every other root is rewritten.
  TestModel blocked = identityChain(5);
  PassContext skip;
  skip.rewriteLog().block(all[2]);
  applyPatternsGreedily(blocked.model, patterns, skip);
  EXPECT_EQ(skip.rewriteLog().size(), 4u);
  EXPECT_EQ(blocked.g->numNodes(), 2u);
  for (const RewriteRecord &r : skip.rewriteLog().records())
    EXPECT_NE(r.key, all[2].key);
  EXPECT_TRUE(blocked.verifies());
}

TEST(GreedyDriver, NothingToDoConvergesInOneSweep) {
  TestModel m = identityChain(0);
  PatternSet patterns;
  patterns.add<BypassIdentity>();
  PassContext ctx;
  GreedyRewriteResult r = applyPatternsGreedily(m.model, patterns, ctx);
  EXPECT_FALSE(r.changed);
  EXPECT_TRUE(r.converged);
  EXPECT_EQ(r.iterations, 1u);
}

TEST(GreedyDriver, ReportsTheIterationCap) {
  TestModel m;
  m.output(m.op("Relu", {m.input("x")}, "r"));
  PatternSet patterns;
  patterns.add<RenameForever>();
  PassContext ctx;
  GreedyRewriteConfig config;
  config.maxIterations = 4;
  GreedyRewriteResult r = applyPatternsGreedily(m.model, patterns, ctx, config);
  EXPECT_TRUE(r.changed);
  EXPECT_FALSE(r.converged);
  EXPECT_EQ(r.iterations, 4u);
  EXPECT_EQ(r.numRewrites, 4u);
}

TEST(GreedyDriver, ReportsTheRewriteCapOfOneSweep) {
  TestModel m;
  m.output(m.op("Relu", {m.input("x")}, "r"));
  PatternSet patterns;
  patterns.add<Oscillate>();
  PassContext ctx;
  GreedyRewriteConfig config;
  config.maxRewritesPerIteration = 50;
  GreedyRewriteResult r = applyPatternsGreedily(m.model, patterns, ctx, config);
  EXPECT_FALSE(r.converged);
  EXPECT_EQ(r.iterations, 1u);
  EXPECT_EQ(r.numRewrites, 51u);
  EXPECT_TRUE(m.verifies());
}

TEST(GreedyDriver, DecliningPatternLeavesTheIRUnchanged) {
  TestModel m = identityChain(3);
  std::unique_ptr<Model> before = cloneModel(m.model);
  ASSERT_TRUE(before);
  ASSERT_FALSE(firstDifference(*before, m.model)) << "the copy differs from the original";
  PatternSet patterns;
  patterns.add<Decline>();
  PassContext ctx;
  std::ostringstream debug;
  ctx.setDebugStream(debug);
  ctx.enableDebug({"decline"});
  GreedyRewriteResult r = applyPatternsGreedily(m.model, patterns, ctx);
  EXPECT_FALSE(r.changed);
  EXPECT_TRUE(r.converged);
  std::optional<std::string> diff = firstDifference(*before, m.model);
  EXPECT_FALSE(diff) << *diff;
  EXPECT_NE(debug.str().find("decline: Identity (-> i0): declined: never applies"), std::string::npos)
      << debug.str();
}

TEST(GreedyDriver, PatternReturningFalseAfterAChangeFailsThePass) {
  TestModel m = identityChain(0);
  PatternSet patterns;
  patterns.add<LiesAboutFailure>();
  PassContext ctx;
  applyPatternsGreedily(m.model, patterns, ctx);
  ASSERT_TRUE(ctx.failed());
  EXPECT_NE(ctx.failureMessage().find("'lies-about-failure' returned false but changed the IR"), std::string::npos);
}

TEST(GreedyDriver, PatternReturningTrueWithoutAChangeFailsThePass) {
  TestModel m = identityChain(0);
  PatternSet patterns;
  patterns.add<LiesAboutSuccess>();
  PassContext ctx;
  GreedyRewriteResult r = applyPatternsGreedily(m.model, patterns, ctx);
  ASSERT_TRUE(ctx.failed());
  EXPECT_FALSE(r.converged);
  EXPECT_NE(ctx.failureMessage().find("returned true without changing the IR"), std::string::npos);
}

TEST(GreedyDriver, ErasingRevisitsProducersInOneSweep) {
  // x -> a -> b -> c, with c unused: erasing c makes b dead, then a.
  TestModel m;
  Value *x = m.input("x");
  Value *a = m.op("Relu", {x}, "a");
  Value *b = m.op("Neg", {a}, "b");
  m.op("Exp", {b}, "c");
  m.output(m.op("Abs", {x}, "y"));
  PatternSet patterns;
  patterns.add<EraseUnused>();
  PassContext ctx;
  GreedyRewriteResult r = applyPatternsGreedily(m.model, patterns, ctx);
  EXPECT_TRUE(r.converged);
  EXPECT_EQ(r.iterations, 2u);
  EXPECT_EQ(r.numRewrites, 3u);
  EXPECT_EQ(m.g->numNodes(), 1u);
  EXPECT_TRUE(m.verifies());
}

/// On the first Relu: erases every Exp node of the graph (queued after it).
class EraseExpsOnce : public Pattern {
public:
  EraseExpsOnce() : Pattern("Relu", "erase-exps") {}
  bool matchAndRewrite(Node *node, Rewriter &rewriter) const override {
    std::vector<Node *> doomed;
    for (Node *n : node->graph()->nodes())
      if (n->opType() == "Exp")
        doomed.push_back(n);
    if (doomed.empty())
      return rewriter.notifyMatchFailure(node, "no Exp left");
    for (Node *n : doomed)
      rewriter.eraseNode(n);
    return true;
  }
};

/// Counts how often an Exp root is visited.
class CountExpVisits : public Pattern {
public:
  explicit CountExpVisits(int &visits) : Pattern("Exp", "count-exp"), visits_(visits) {}
  bool matchAndRewrite(Node *, Rewriter &) const override {
    ++visits_;
    return false;
  }

private:
  int &visits_;
};

TEST(GreedyDriver, ErasedNodesLeaveTheWorklist) {
  TestModel m;
  Value *x = m.input("x");
  m.output(m.op("Relu", {x}, "r"));
  for (int i = 0; i < 100; ++i)
    m.op("Exp", {x}, "e" + std::to_string(i));
  int visits = 0;
  PatternSet patterns;
  patterns.add<EraseExpsOnce>();
  patterns.add(std::make_unique<CountExpVisits>(visits));
  PassContext ctx;
  GreedyRewriteResult r = applyPatternsGreedily(m.model, patterns, ctx);
  EXPECT_TRUE(r.converged);
  EXPECT_EQ(visits, 0); // every Exp was erased before its turn and never touched
  EXPECT_EQ(m.g->numNodes(), 1u);
  EXPECT_TRUE(m.verifies());
}

TEST(GreedyDriver, RecursesIntoBodiesOnlyWhenAsked) {
  for (bool recurse : {true, false}) {
    TestModel m;
    Value *x = m.input("x");
    Value *c = m.g->addInput("c", Type::tensor(DataType::Bool, Shape{}));
    std::unique_ptr<Graph> thenBody = body("then"), elseBody = body("else");
    Node *id = thenBody->append(thenBody->createNode("Identity", {x}, {"ti"}));
    Node *neg = thenBody->append(thenBody->createNode("Neg", {id->result(0)}, {"to"}));
    thenBody->addOutput(neg->result(0), floatType({2}));
    Node *abs = elseBody->append(elseBody->createNode("Abs", {x}, {"eo"}));
    elseBody->addOutput(abs->result(0), floatType({2}));
    m.output(m.ifNode(c, std::move(thenBody), std::move(elseBody), "y")->result(0));

    PatternSet patterns;
    patterns.add<BypassIdentity>();
    PassContext ctx;
    GreedyRewriteConfig config;
    config.recurseIntoSubgraphs = recurse;
    GreedyRewriteResult r = applyPatternsGreedily(m.model, patterns, ctx, config);
    EXPECT_EQ(r.changed, recurse);
    EXPECT_EQ(neg->operand(0) == x, recurse);
    EXPECT_TRUE(m.verifies());
  }
}

TEST(PatternSet, RootedPatternsComeBeforeCatchAllOnes) {
  PatternSet patterns;
  patterns.add<Decline>();
  patterns.add<BypassIdentity>();
  TestModel m;
  Node *id = m.node("Identity", {m.input("x")}, {"i"});
  Node *neg = m.node("Neg", {id->result(0)}, {"n"});
  const std::vector<const Pattern *> &forId = patterns.patternsFor(*id);
  ASSERT_EQ(forId.size(), 2u);
  EXPECT_EQ(forId[0]->name(), "bypass-identity");
  EXPECT_EQ(forId[1]->name(), "decline");
  ASSERT_EQ(patterns.patternsFor(*neg).size(), 1u);
  // A pattern rooted in the default domain does not match a custom op of the same name.
  Node *custom = m.node("Identity", {m.g->input(0)}, {"ci"}, nullptr, "com.example");
  EXPECT_FALSE(forId[0]->matchesRoot(*custom));
  EXPECT_TRUE(forId[0]->matchesRoot(*id));
}

TEST(Rewriter, CountsChangesAndKeepsNamesFresh) {
  TestModel m;
  Value *x = m.input("x");
  Node *relu = m.node("Relu", {x}, {"r"});
  m.output(relu->result(0));
  PassContext ctx;
  Rewriter rewriter(ctx);
  EXPECT_EQ(rewriter.changeCount(), 0u);
  Node *neg = rewriter.createNodeBefore(relu, "Neg", {x}, {"r"});
  EXPECT_NE(neg->result(0)->name(), "r"); // "r" is taken: a fresh name
  EXPECT_EQ(rewriter.changeCount(), 1u);
  rewriter.setOperand(relu, 0, neg->result(0));
  EXPECT_EQ(rewriter.changeCount(), 2u);
  rewriter.setOperand(relu, 0, neg->result(0)); // no-op
  EXPECT_EQ(rewriter.changeCount(), 2u);
  EXPECT_EQ(rewriter.replaceNodeUsesWith(relu->result(0), x), 0u); // only a graph-output use
  EXPECT_EQ(m.g->output(0), relu->result(0));
  EXPECT_TRUE(m.verifies());
}

} // namespace
} // namespace onnxslim
