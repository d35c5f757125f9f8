//===- tests/transforms/FoldingTest.cpp - Folding and shape passes --------===//
//
// Unit tests of fold-constants, simplify-shape-chains, inline-constant-if
// and infer-shapes on small built graphs, and the real-model table: for
// each fetched model, nodes, Constant nodes, file size and constant bytes
// before -> after the default pipeline (plus the value_info the command
// line adds), with loose assertions: no Constant node left in a main graph,
// constant bytes never grow, and a second folding run changes nothing.
//
//===----------------------------------------------------------------------===//
#include "backend/Writer.h"
#include "frontend/Loader.h"
#include "ir/IR.h"
#include "ir/ShapeInference.h"
#include "ir/Verifier.h"
#include "transforms/PassManager.h"
#include "transforms/Passes.h"
#include "transforms/ShapeInferencePass.h"
#include "transforms/ValueUtils.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <sstream>
#include <unistd.h>

namespace onnxslim {
namespace {

namespace fs = std::filesystem;
using test::TestModel;

/// Runs `pipeline` once on `model`, Result: whether it succeeded; the
/// context's warnings go to `log`.
bool runPipeline(Model &model, const std::string &pipeline, std::ostream *log = nullptr,
                 PassManager **keep = nullptr) {
  static PassRegistry registry = PassRegistry::withBuiltinPasses();
  PassManagerOptions options;
  options.verifyEach = true;
  options.log = log;
  auto *pm = new PassManager(registry, options);
  if (log)
    pm->context().setDebugStream(*log);
  std::string error;
  // The default pipeline runs to a fixed point, as on the command line.
  if (pipeline == defaultPipeline())
    pm->setMaxRounds(10);
  bool ok = pm->parsePipeline(pipeline, error) && pm->run(model, error);
  EXPECT_TRUE(ok) << error;
  if (keep)
    *keep = pm;
  else
    delete pm;
  return ok;
}

TEST(FoldConstants, AddOfConstants) {
  TestModel m;
  Value *x = m.input("x", {3});
  Value *a = m.init("a", test::floats({3}, {1, 2, 3}));
  Node *c = m.node("Constant", {}, {"b"});
  c->setAttr(Attribute::makeTensor("value", test::floats({3}, {1, 2, 3})));
  Value *s = m.op("Add", {a, c->result(0)}, "s");
  m.output(m.op("Mul", {x, s}, "y"), {3});
  ASSERT_TRUE(runPipeline(m.model, "fold-constants,eliminate-dead-nodes,eliminate-unused-initializers"));
  EXPECT_TRUE(m.verifies());
  ASSERT_EQ(m.g->numNodes(), 1u);
  Value *folded = m.g->firstNode()->operand(1);
  EXPECT_EQ(folded->name(), "s");
  TensorPtr t = constantTensor(folded);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->at<float>(0), 2);
  EXPECT_EQ(t->at<float>(2), 6);
  EXPECT_EQ(m.g->initializers().size(), 1u);
}

TEST(FoldConstants, KernelErrorWarnsAndContinues) {
  TestModel m;
  Value *x = m.input("x", {3});
  Value *a = m.init("a", test::floats({6}, {1, 2, 3, 4, 5, 6}));
  Value *bad = m.init("bad", test::ints({1}, {4}));
  Node *r = m.node("Reshape", {a, bad}, {"r"});
  r->setName("bad_reshape");
  m.output(m.op("Add", {r->result(0), r->result(0)}, "y"), {4});
  Value *b = m.init("b", test::floats({3}, {1, 1, 1}));
  m.output(m.op("Add", {x, m.op("Neg", {b}, "n")}, "z"), {3});
  std::ostringstream log;
  ASSERT_TRUE(runPipeline(m.model, "fold-constants", &log));
  EXPECT_NE(log.str().find("not folding Reshape 'bad_reshape'"), std::string::npos) << log.str();
  size_t reshapes = 0, negs = 0;
  for (Node *n : m.g->nodes()) {
    reshapes += n->is("Reshape");
    negs += n->is("Neg");
  }
  EXPECT_EQ(reshapes, 1u);
  EXPECT_EQ(negs, 0u);
}

TEST(FoldConstants, SizeGuard) {
  TestModel m;
  Value *x = m.input("x", {512, 1024});
  Value *one = m.init("one", test::floats({}, {1}));
  Value *shape = m.init("shape", test::ints({2}, {512, 1024}));
  m.output(m.op("Add", {x, m.op("Expand", {one, shape}, "e")}, "y"), {512, 1024});
  ASSERT_TRUE(runPipeline(m.model, "fold-constants"));
  EXPECT_EQ(m.g->numNodes(), 2u);
  ASSERT_TRUE(runPipeline(m.model, "fold-constants{size-limit=2097152 generator-limit=2097152}"));
  EXPECT_EQ(m.g->numNodes(), 1u);
}

TEST(InlineConstantIf, ThenBranchWithCapture) {
  TestModel m;
  Value *x = m.input("x");
  Value *c = m.init("c", Tensor::fromValues<uint8_t>(DataType::Bool, {}, {1}));
  auto thenBody = std::make_unique<Graph>();
  Node *neg = thenBody->append(thenBody->createNode("Neg", {x}, {"t"}));
  thenBody->addOutput(neg->result(0), test::floatType({2}));
  auto elseBody = std::make_unique<Graph>();
  Node *abs = elseBody->append(elseBody->createNode("Abs", {x}, {"e"}));
  elseBody->addOutput(abs->result(0), test::floatType({2}));
  Node *ifNode = m.ifNode(c, std::move(thenBody), std::move(elseBody), "r");
  m.output(m.op("Relu", {ifNode->result(0)}, "y"));
  ASSERT_TRUE(runPipeline(m.model, "inline-constant-if"));
  EXPECT_TRUE(m.verifies());
  ASSERT_EQ(m.g->numNodes(), 2u);
  EXPECT_TRUE(m.g->firstNode()->is("Neg"));
  EXPECT_EQ(m.g->firstNode()->operand(0), x);
  EXPECT_EQ(m.g->lastNode()->operand(0), m.g->firstNode()->result(0));
}

TEST(SimplifyShapeChains, ShapeOfStaticValue) {
  TestModel m;
  Value *x = m.input("x", {2, 3, 4});
  Value *s = m.op("Shape", {x}, "s");
  Value *two = m.init("two", test::ints({}, {2}));
  Value *g = m.op("Gather", {s, two}, "g");
  m.g->addOutput(g, Type::tensor(DataType::Int64, Shape{}));
  ASSERT_TRUE(runPipeline(m.model, "simplify-shape-chains,eliminate-dead-nodes"));
  EXPECT_EQ(m.g->numNodes(), 0u);
  std::optional<std::vector<int64_t>> v = constantInts(m.g->output(0));
  ASSERT_TRUE(v);
  EXPECT_EQ(*v, std::vector<int64_t>{4});
  EXPECT_EQ(m.g->output(0)->name(), "g");
}

TEST(InferShapes, InputShapeFlag) {
  std::string name, error;
  Shape shape;
  ASSERT_TRUE(parseInputShapeFlag("input_ids:1,seq,?", name, shape, error));
  EXPECT_EQ(name, "input_ids");
  ASSERT_EQ(shape.size(), 3u);
  EXPECT_EQ(shape[0], Dim::value(1));
  EXPECT_EQ(shape[1], Dim::symbol("seq"));
  EXPECT_TRUE(shape[2].isUnknown());
  EXPECT_FALSE(parseInputShapeFlag("x", name, shape, error));
  EXPECT_FALSE(parseInputShapeFlag("x:1,,2", name, shape, error));
  EXPECT_FALSE(parseInputShapeFlag("x:1a", name, shape, error));

  TestModel m;
  m.output(m.op("Relu", {m.input("x", {2, 3})}, "y"), {2, 3});
  std::map<std::string, Shape> shapes{{"x", Shape{Dim::symbol("batch"), Dim::value(3)}}};
  ASSERT_TRUE(applyInputShapes(m.model, shapes, error)) << error;
  ASSERT_TRUE(runPipeline(m.model, "infer-shapes"));
  const Value *y = m.g->firstNode()->result(0);
  ASSERT_TRUE(y->type() && y->type()->shape());
  EXPECT_EQ((*y->type()->shape())[0], Dim::symbol("batch"));
  EXPECT_FALSE(applyInputShapes(m.model, {{"nope", Shape{}}}, error));
}

//===----------------------------------------------------------------------===//
// Real models
//===----------------------------------------------------------------------===//

struct Census {
  size_t nodes = 0;
  size_t constantNodes = 0;
  size_t constantBytes = 0;
  size_t ifs = 0;
  size_t shapes = 0;
};

void census(const Graph &g, Census &c) {
  for (const Value *v : g.initializers())
    if (v->initializer())
      c.constantBytes += v->initializer()->byteSize();
  for (const Node *n : g.nodes()) {
    ++c.nodes;
    if (n->is("Constant")) {
      ++c.constantNodes;
      if (TensorPtr t = constantNodeTensor(*n))
        c.constantBytes += t->byteSize();
    }
    c.ifs += n->is("If");
    c.shapes += n->is("Shape");
    for (const Graph *sg : n->subgraphs())
      census(*sg, c);
  }
}

size_t savedSize(const Model &model, const std::string &tag) {
  std::string path = (fs::temp_directory_path() /
                      ("onnxslim_folding_" + std::to_string(::getpid()) + "_" + tag + ".onnx")).string();
  std::string error;
  EXPECT_TRUE(saveModel(model, path, error)) << error;
  std::error_code ec;
  size_t size = fs::file_size(path, ec);
  fs::remove(path, ec);
  return ec ? 0 : size;
}

TEST(FoldingRealModels, Table) {
  fs::path cache(ONNXSLIM_MODEL_CACHE);
  const char *names[] = {"ppocr_det", "ppocr_rec", "ppocr_cls", "vad_legacy", "vad_v5",
                         "face_front", "face_back", "mlsd_tiny", "mlsd_large", "hello_deepa"};
  size_t found = 0;
  std::printf("%-11s %13s %11s %9s %21s %21s %9s\n", "model", "nodes", "Constant", "If", "file bytes",
              "constant bytes", "vi bytes");
  for (const char *name : names) {
    fs::path path = cache / (std::string(name) + ".onnx");
    if (!fs::exists(path))
      continue;
    ++found;
    SCOPED_TRACE(name);
    std::string error;
    std::unique_ptr<Model> model = loadModel(path.string(), error);
    ASSERT_TRUE(model) << error;
    Census before;
    census(*model->graph(), before);
    size_t fileBefore = fs::file_size(path);

    PassManager *pm = nullptr;
    ASSERT_TRUE(runPipeline(*model, defaultPipeline(), nullptr, &pm));
    std::unique_ptr<PassManager> owned(pm);
    Census after;
    census(*model->graph(), after);
    size_t withoutInfo = savedSize(*model, std::string(name) + "_a");
    inferAndRecordValueInfo(*model);
    size_t fileAfter = savedSize(*model, std::string(name) + "_b");
    EXPECT_TRUE(verify(*model).empty());

    // Loose checks: constants never grow, Constant nodes in the main graph
    // are gone, and folding again finds nothing more to fold.
    EXPECT_LE(after.constantBytes, before.constantBytes);
    for (const Node *n : model->graph()->nodes())
      EXPECT_FALSE(n->is("Constant")) << "a Constant node left in the main graph";
    PassManager *again = nullptr;
    ASSERT_TRUE(runPipeline(*model, "fold-constants", nullptr, &again));
    std::unique_ptr<PassManager> ownedAgain(again);
    for (const PassStatistics &ps : again->context().statistics())
      for (const StatisticCounter &c : ps.counters) {
        if (c.name == "folded-nodes" || c.name == "constant-nodes") {
          EXPECT_EQ(c.value, 0u) << "fold-constants still finds " << c.name;
        }
      }

    char nodes[32], consts[32], ifs[32], files[48], bytes[48];
    std::snprintf(nodes, sizeof nodes, "%zu->%zu", before.nodes, after.nodes);
    std::snprintf(consts, sizeof consts, "%zu->%zu", before.constantNodes, after.constantNodes);
    std::snprintf(ifs, sizeof ifs, "%zu->%zu", before.ifs, after.ifs);
    std::snprintf(files, sizeof files, "%zu->%zu", fileBefore, fileAfter);
    std::snprintf(bytes, sizeof bytes, "%zu->%zu", before.constantBytes, after.constantBytes);
    std::printf("%-11s %13s %11s %9s %21s %21s %9zu\n", name, nodes, consts, ifs, files, bytes,
                fileAfter - withoutInfo);
  }
  if (!found)
    GTEST_SKIP() << "no real models in " << cache << " (scripts/fetch-models.sh)";
}

} // namespace
} // namespace onnxslim
