//===- tests/transforms/PassManagerTest.cpp - Pipelines, registry, stats --===//
//
// The pass registry (kebab-case names, duplicates, test-only passes), the
// textual pipeline (parse, print back, options, errors), the fixed-point
// loop, statistics and timing reports, --verify-each stopping at a broken
// pass, and --model-check-each rolling back a deliberately wrong pass (the
// runtime's interpreter compares outputs), after which the model equals the
// input model structurally (ir/Equivalence).
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

#include "ir/Equivalence.h"
#include "transforms/Clone.h"
#include "transforms/PassManager.h"
#include "transforms/Passes.h"

#include <sstream>

namespace onnxslim {
namespace {

using namespace test;

TEST(PassRegistry, BuiltinPassesAreKebabCaseAndSorted) {
  PassRegistry registry = PassRegistry::withBuiltinPasses();
  std::vector<const PassInfo *> passes = registry.passes();
  ASSERT_GE(passes.size(), 7u); // the cleanup passes and those of later issues
  for (size_t i = 0; i < passes.size(); ++i) {
    EXPECT_TRUE(isKebabCase(passes[i]->name)) << passes[i]->name;
    EXPECT_FALSE(passes[i]->description.empty());
    EXPECT_FALSE(passes[i]->testOnly);
    EXPECT_EQ(passes[i]->create()->name(), passes[i]->name);
    if (i) {
      EXPECT_LT(passes[i - 1]->name, passes[i]->name);
    }
  }
  EXPECT_TRUE(registry.lookup("eliminate-dead-nodes"));
  EXPECT_FALSE(registry.lookup("test-break-ir"));
}

TEST(PassRegistry, RejectsDuplicatesAndBadNames) {
  PassRegistry registry = PassRegistry::withBuiltinPasses();
  EXPECT_FALSE(registry.add(PassInfo{"eliminate-dead-nodes", "again", createEliminateDeadNodesPass, false}));
  EXPECT_FALSE(registry.add(PassInfo{"Bad_Name", "x", createEliminateDeadNodesPass, false}));
  EXPECT_FALSE(registry.add(PassInfo{"double--dash", "x", createEliminateDeadNodesPass, false}));
  EXPECT_FALSE(registry.add(PassInfo{"-leading", "x", createEliminateDeadNodesPass, false}));
  EXPECT_TRUE(registry.add(PassInfo{"my-pass-2", "x", createEliminateDeadNodesPass, true}));
  registerTestPasses(registry);
  EXPECT_TRUE(registry.lookup("test-negate-first-output"));
  EXPECT_TRUE(registry.lookup("test-negate-first-output")->testOnly);
}

TEST(Pipeline, PrintsBackTheSameText) {
  PassRegistry registry = PassRegistry::withBuiltinPasses();
  for (std::string text : {std::string(""), std::string("eliminate-dead-nodes"), defaultPipeline(),
                           std::string("eliminate-identity-ops,eliminate-unused-initializers{include-inputs=true},"
                                       "eliminate-identity-ops")}) {
    PassManager pm(registry);
    std::string error;
    ASSERT_TRUE(pm.parsePipeline(text, error)) << error;
    EXPECT_EQ(pm.pipelineText(), text);
    PassManager again(registry);
    ASSERT_TRUE(again.parsePipeline(pm.pipelineText(), error)) << error;
    EXPECT_EQ(again.pipelineText(), text);
  }
}

TEST(Pipeline, ToleratesSpacesAndDefaultOptions) {
  PassRegistry registry = PassRegistry::withBuiltinPasses();
  PassManager pm(registry);
  std::string error;
  ASSERT_TRUE(pm.parsePipeline(" eliminate-dead-nodes , eliminate-unused-initializers{include-inputs=false} ", error))
      << error;
  EXPECT_EQ(pm.size(), 2u);
  EXPECT_EQ(pm.pipelineText(), "eliminate-dead-nodes,eliminate-unused-initializers");
}

TEST(Pipeline, ReportsErrors) {
  PassRegistry registry = PassRegistry::withBuiltinPasses();
  struct Case {
    const char *text;
    const char *message;
  } cases[] = {
      {"eliminate-dead-nodes,frobnicate", "unknown pass 'frobnicate'"},
      {"eliminate-dead-nodes,,eliminate-dead-nodes", "empty pass name"},
      {"eliminate-dead-nodes,", "empty pass name"},
      {"eliminate-dead-nodes{x=1}", "has no option 'x'"},
      {"eliminate-unused-initializers{include-inputs=maybe}", "takes true or false"},
      {"eliminate-unused-initializers{include-inputs}", "expected key=value"},
      {"eliminate-dead-nodes{", "unbalanced '{'"},
      {"eliminate-dead-nodes}", "unbalanced '}'"},
      {"eliminate-dead-nodes{}x", "text after the options"},
  };
  for (const Case &c : cases) {
    PassManager pm(registry);
    std::string error;
    EXPECT_FALSE(pm.parsePipeline(c.text, error)) << c.text;
    EXPECT_NE(error.find(c.message), std::string::npos) << c.text << " -> " << error;
    EXPECT_EQ(pm.size(), 0u) << "a failed parse must leave the pipeline unchanged";
  }
}

/// y = Transpose(Transpose(Relu(x))): the transposes cancel into an
/// Identity (y is a graph output); the next round renames Relu's result.
TestModel needsTwoRounds() {
  TestModel m;
  Value *r = m.op("Relu", {m.input("x", {2, 3})}, "r");
  Node *t1 = m.node("Transpose", {r}, {"t1"});
  t1->setAttr(Attribute::makeInts("perm", {1, 0}));
  Node *t2 = m.node("Transpose", {t1->result(0)}, {"y"});
  t2->setAttr(Attribute::makeInts("perm", {1, 0}));
  m.output(t2->result(0), {2, 3});
  return m;
}

TEST(PassManager, RunsToAFixedPoint) {
  PassRegistry registry = PassRegistry::withBuiltinPasses();
  TestModel m = needsTwoRounds();
  PassManager pm(registry);
  std::string error;
  ASSERT_TRUE(pm.parsePipeline(defaultPipeline(), error));
  pm.setMaxRounds(10);
  ASSERT_TRUE(pm.run(m.model, error)) << error;
  EXPECT_EQ(pm.report().rounds, 3u); // transposes, then identity, then nothing
  EXPECT_TRUE(pm.report().converged);
  EXPECT_TRUE(pm.report().changed);
  ASSERT_EQ(m.g->numNodes(), 1u);
  EXPECT_EQ(m.g->firstNode()->opType(), "Relu");
  EXPECT_EQ(m.g->output(0)->name(), "y");
  EXPECT_TRUE(m.verifies());
}

TEST(PassManager, SingleRoundStopsEarly) {
  PassRegistry registry = PassRegistry::withBuiltinPasses();
  TestModel m = needsTwoRounds();
  PassManager pm(registry);
  pm.setMaxRounds(1); // a single run of the pipeline (the default is the fixed point)
  std::string error;
  ASSERT_TRUE(pm.parsePipeline(defaultPipeline(), error));
  ASSERT_TRUE(pm.run(m.model, error)) << error;
  EXPECT_EQ(pm.report().rounds, 1u);
  EXPECT_EQ(m.g->numNodes(), 2u); // Relu + the Identity keeping the output name
}

TEST(PassManager, DefaultsToTheCommandLinesFixedPoint) {
  PassRegistry registry = PassRegistry::withBuiltinPasses();
  TestModel m = needsTwoRounds();
  PassManager pm(registry); // no setMaxRounds: what `onnxslim IN OUT` runs
  std::string error;
  ASSERT_TRUE(pm.parsePipeline(defaultPipeline(), error));
  ASSERT_TRUE(pm.run(m.model, error)) << error;
  EXPECT_GE(pm.report().rounds, 2u);
  EXPECT_TRUE(pm.report().converged);
  EXPECT_EQ(m.g->numNodes(), 1u);
}

TEST(PassManager, EmptyPipelineChangesNothing) {
  PassRegistry registry = PassRegistry::withBuiltinPasses();
  TestModel m = needsTwoRounds();
  std::unique_ptr<Model> before = cloneModel(m.model);
  PassManager pm(registry);
  std::string error;
  ASSERT_TRUE(pm.parsePipeline("", error));
  ASSERT_TRUE(pm.run(m.model, error));
  EXPECT_FALSE(pm.report().changed);
  EXPECT_FALSE(firstDifference(*before, m.model));
}

TEST(PassManager, StatisticsAndTimingReports) {
  PassRegistry registry = PassRegistry::withBuiltinPasses();
  TestModel m = needsTwoRounds();
  m.op("Exp", {m.g->input(0)}, "dead1");
  PassManager pm(registry);
  std::string error;
  ASSERT_TRUE(pm.parsePipeline(defaultPipeline(), error));
  pm.setMaxRounds(10);
  ASSERT_TRUE(pm.run(m.model, error)) << error;
  EXPECT_EQ(counterValue(pm.context(), "eliminate-dead-nodes", "dead-nodes"), 1u);
  EXPECT_EQ(counterValue(pm.context(), "eliminate-redundant-transposes", "compose-transposes"), 1u);
  EXPECT_EQ(counterValue(pm.context(), "eliminate-identity-ops", "eliminate-identity"), 1u);
  std::ostringstream stats, timing;
  pm.printStatistics(stats);
  pm.printTiming(timing);
  EXPECT_NE(stats.str().find("eliminate-dead-nodes\n  (S) 1 dead-nodes - Nodes whose results reach no graph output"),
            std::string::npos)
      << stats.str();
  EXPECT_NE(timing.str().find("Total Execution Time"), std::string::npos);
  EXPECT_NE(timing.str().find("eliminate-common-subexpressions"), std::string::npos);
  EXPECT_NE(timing.str().find("(3 rounds)"), std::string::npos) << timing.str();
}

TEST(PassManager, PrintsIRAroundSelectedPasses) {
  PassRegistry registry = PassRegistry::withBuiltinPasses();
  TestModel m = needsTwoRounds();
  std::ostringstream log;
  PassManagerOptions options;
  options.printIRBefore = {"eliminate-redundant-transposes"};
  options.printIRAfterChange = true;
  options.log = &log;
  PassManager pm(registry, options);
  std::string error;
  ASSERT_TRUE(pm.parsePipeline("eliminate-dead-nodes,eliminate-redundant-transposes", error));
  ASSERT_TRUE(pm.run(m.model, error)) << error;
  std::string text = log.str();
  EXPECT_NE(text.find("# *** IR Dump Before eliminate-redundant-transposes ***\n"), std::string::npos);
  EXPECT_NE(text.find("# *** IR Dump After eliminate-redundant-transposes ***\n"), std::string::npos);
  EXPECT_EQ(text.find("After eliminate-dead-nodes"), std::string::npos); // it changed nothing
  EXPECT_NE(text.find("y = Identity(r)"), std::string::npos) << text;
}

TEST(PassManager, VerifyEachNamesTheBrokenPass) {
  PassRegistry registry = PassRegistry::withBuiltinPasses();
  registerTestPasses(registry);
  TestModel m = needsTwoRounds();
  PassManagerOptions options;
  options.verifyEach = true;
  PassManager pm(registry, options);
  std::string error;
  ASSERT_TRUE(pm.parsePipeline("eliminate-dead-nodes,test-break-ir,eliminate-identity-ops", error));
  EXPECT_FALSE(pm.run(m.model, error));
  EXPECT_NE(error.find("IR verifier failed after pass 'test-break-ir'"), std::string::npos) << error;
}

/// A pass that reports a contract violation.
class FailingPass : public Pass {
public:
  std::string_view name() const override { return "test-fails"; }
  std::string_view description() const override { return "fails"; }
  bool run(Model &, PassContext &context) override {
    context.signalPassFailure("on purpose");
    return false;
  }
};

TEST(PassManager, PassFailureStopsTheRun) {
  PassRegistry registry;
  ASSERT_TRUE(registry.add<FailingPass>(true));
  TestModel m = needsTwoRounds();
  PassManager pm(registry);
  pm.setMaxRounds(1); // a single run of the pipeline (the default is the fixed point)
  std::string error;
  ASSERT_TRUE(pm.parsePipeline("test-fails", error));
  EXPECT_FALSE(pm.run(m.model, error));
  EXPECT_EQ(error, "pass 'test-fails' failed: on purpose");
}

TEST(PassManager, ModelCheckEachRollsBackAWrongPass) {
  PassRegistry registry = PassRegistry::withBuiltinPasses();
  registerTestPasses(registry);
  // x -> Identity -> Relu -> Exp(dead) ; y = Neg(relu)
  TestModel m;
  Value *i = m.op("Identity", {m.input("x", {2, 3})}, "i");
  Value *r = m.op("Relu", {i}, "r");
  m.op("Exp", {r}, "dead");
  m.output(m.op("Neg", {r}, "y"), {2, 3});

  std::ostringstream log;
  PassManagerOptions options;
  options.modelCheckEach = true;
  options.verifyEach = true;
  options.log = &log;
  PassManager pm(registry, options);
  pm.setMaxRounds(1); // a single run of the pipeline (the default is the fixed point)
  pm.setOutputChecker(createRuntimeOutputChecker());
  std::string error;
  ASSERT_TRUE(pm.parsePipeline("eliminate-identity-ops,test-negate-first-output,eliminate-dead-nodes", error));

  // What the model should be: the same pipeline without the wrong pass.
  std::unique_ptr<Model> expected = cloneModel(m.model);
  {
    PassManager reference(registry);
    ASSERT_TRUE(reference.parsePipeline("eliminate-identity-ops,eliminate-dead-nodes", error));
    ASSERT_TRUE(reference.run(*expected, error)) << error;
  }

  ASSERT_TRUE(pm.run(m.model, error)) << error;
  ASSERT_EQ(pm.report().rolledBack.size(), 1u);
  EXPECT_EQ(pm.report().rolledBack[0].rfind("test-negate-first-output: ", 0), 0u);
  EXPECT_NE(log.str().find("pass 'test-negate-first-output' changed the model's outputs; rolled back"),
            std::string::npos)
      << log.str();
  EXPECT_NE(log.str().find("output 'y': max abs diff"), std::string::npos) << log.str();
  std::optional<std::string> diff = firstDifference(*expected, m.model);
  EXPECT_FALSE(diff) << *diff;
  // The rollback installed a copy of the graph: m.g is stale now.
  EXPECT_EQ(m.model.graph()->numNodes(), 2u); // the rest of the pipeline still ran
  EXPECT_TRUE(m.verifies());
}

TEST(PassManager, ModelCheckRefusesAWrongResult) {
  PassRegistry registry = PassRegistry::withBuiltinPasses();
  registerTestPasses(registry);
  TestModel m;
  m.output(m.op("Relu", {m.input("x", {4})}, "y"), {4});
  PassManagerOptions options;
  options.modelCheck = true;
  options.undoFaultyRewrites = false;
  PassManager pm(registry, options);
  pm.setMaxRounds(1); // a single run of the pipeline (the default is the fixed point)
  pm.setOutputChecker(createRuntimeOutputChecker());
  std::string error;
  ASSERT_TRUE(pm.parsePipeline("test-negate-first-output", error));
  EXPECT_FALSE(pm.run(m.model, error));
  EXPECT_NE(error.find("model check failed"), std::string::npos) << error;
  EXPECT_NE(error.find("output 'y'"), std::string::npos) << error;
}

TEST(PassManager, ModelCheckUndoesTheRewriteAtFault) {
  PassRegistry registry = PassRegistry::withBuiltinPasses();
  registerTestPasses(registry);
  TestModel m;
  Value *i = m.op("Identity", {m.input("x", {4})}, "i");
  m.output(m.op("Relu", {i}, "y"), {4});
  std::ostringstream log;
  PassManagerOptions options;
  options.modelCheck = true;
  options.log = &log;
  PassManager pm(registry, options);
  pm.setMaxRounds(1);
  pm.setOutputChecker(createRuntimeOutputChecker());
  std::string error;
  ASSERT_TRUE(pm.parsePipeline("test-negate-first-output,eliminate-identity-ops", error));
  ASSERT_TRUE(pm.run(m.model, error)) << error;
  // The negation is undone, the Identity removal is kept.
  ASSERT_EQ(pm.report().undone.size(), 1u);
  EXPECT_EQ(pm.report().undone[0].rewrite.pass, "test-negate-first-output");
  EXPECT_NE(pm.report().undone[0].difference.find("output 'y'"), std::string::npos);
  EXPECT_TRUE(pm.report().modelChecked);
  EXPECT_EQ(pm.report().rewrites, 1u);
  ASSERT_EQ(m.model.graph()->numNodes(), 1u);
  EXPECT_EQ(m.model.graph()->firstNode()->opType(), "Relu");
  EXPECT_NE(log.str().find("undone"), std::string::npos);
}

TEST(PassManager, ModelCheckProvesExactRewritesWithoutRunning) {
  PassRegistry registry = PassRegistry::withBuiltinPasses();
  TestModel m;
  Value *i = m.op("Identity", {m.input("x", {4})}, "i");
  m.output(m.op("Relu", {i}, "y"), {4});
  PassManagerOptions options;
  options.modelCheck = true;
  PassManager pm(registry, options);
  pm.setOutputChecker(createRuntimeOutputChecker());
  std::string error;
  ASSERT_TRUE(pm.parsePipeline("eliminate-identity-ops,eliminate-dead-nodes", error));
  ASSERT_TRUE(pm.run(m.model, error)) << error;
  EXPECT_TRUE(pm.report().provedStructurally);
  EXPECT_EQ(pm.report().rewrites, pm.report().exactRewrites);
  EXPECT_GE(pm.report().rewrites, 1u);
}

TEST(PassManager, ModelCheckWithoutAChecker) {
  PassRegistry registry = PassRegistry::withBuiltinPasses();
  TestModel m = needsTwoRounds();
  PassManagerOptions options;
  options.modelCheck = true;
  PassManager pm(registry, options);
  std::string error;
  EXPECT_FALSE(pm.run(m.model, error));
  EXPECT_NE(error.find("needs the runtime"), std::string::npos);
}

TEST(Clone, CopiesAreStructurallyEqual) {
  TestModel m = needsTwoRounds();
  Value *c = m.g->addInput("c", Type::tensor(DataType::Bool, Shape{}));
  std::unique_ptr<Graph> thenBody = body("then"), elseBody = body("else");
  Node *n = thenBody->append(thenBody->createNode("Neg", {m.g->input(0)}, {"tn"}));
  thenBody->addOutput(n->result(0), floatType({2, 3}));
  elseBody->addOutput(m.g->input(0), floatType({2, 3}));
  m.output(m.ifNode(c, std::move(thenBody), std::move(elseBody), "z")->result(0), {2, 3});
  m.init("w", floats({2}, {1, 2}));
  m.g->name = "cloned";
  m.model.docString = "doc";
  std::unique_ptr<Model> copy = cloneModel(m.model);
  ASSERT_TRUE(copy);
  std::optional<std::string> diff = firstDifference(m.model, *copy);
  EXPECT_FALSE(diff) << *diff;
  EXPECT_TRUE(verify(*copy).empty());
  EXPECT_TRUE(copy->names().contains("tn"));
}

} // namespace
} // namespace onnxslim
