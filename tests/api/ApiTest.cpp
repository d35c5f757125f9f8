//===- tests/api/ApiTest.cpp - The library API (include/onnxslim) ---------===//
//
// The public functions as a downstream compiler calls them, through the
// public headers only: reading and writing in both forms, from paths and
// bytes; optimize() with default and given pipelines, skipped passes, input
// shapes, invalid models and a custom pass; errors as values with nothing
// printed; run(), runProfiled() and verify(); validateModel(), parseDim(),
// checkInputSpecs(), listPasses(), the fusion name table and skipFusions;
// the data files. Then the promise the command line rests on:
// load + optimize + save with default options writes exactly the bytes
// `onnxslim IN OUT` writes, on every real model.
//
//===----------------------------------------------------------------------===//
#include "../cli/CliTestUtil.h"

#include <onnxslim/onnxslim.h>
#include <onnxslim/passes.h>

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace onnxslim {
namespace {

namespace fs = std::filesystem;
using clitest::readFile;
using clitest::writeFile;

/// x -> Identity -> Add(x, x) -> Identity -> y, at opset 17.
const char *kSmallModel = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[N, 4] x) => (float[N, 4] y) {
  a = Identity(x)
  b = Add(a, a)
  y = Identity(b)
}
)";

/// Transpose with a float `perm`: invalid against the ONNX spec.
const char *kInvalidModel = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 3] x) => (float[3, 2] y) {
  y = Transpose <perm = [1.0, 0.0]> (x)
}
)";

class ApiTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("onnxslim-api-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<Model> parse(const char *text) {
    Result<std::unique_ptr<Model>> m = loadFromBytes(text);
    EXPECT_TRUE(m) << m.error();
    return m ? std::move(*m) : nullptr;
  }

  fs::path dir_;
};

size_t count(const Model &m, const std::string &op) {
  ModelCounts c = countModel(m);
  auto it = c.opCounts.find(op);
  return it == c.opCounts.end() ? 0 : it->second;
}

//===--- Reading and writing ----------------------------------------------===//

TEST_F(ApiTest, ReadsTextAndBinaryFromPathsAndBytes) {
  std::unique_ptr<Model> text = parse(kSmallModel);
  ASSERT_TRUE(text);
  EXPECT_EQ(countModel(*text).nodes, 3u);

  Result<std::string> bytes = saveToBytes(*text);
  ASSERT_TRUE(bytes) << bytes.error();
  ASSERT_FALSE(bytes->empty());
  EXPECT_NE(bytes->front(), '<'); // binary by default
  Result<std::unique_ptr<Model>> binary = loadFromBytes(*bytes);
  ASSERT_TRUE(binary) << binary.error();
  EXPECT_EQ(countModel(**binary).nodes, 3u);

  writeFile(dir_ / "m.onnx", *bytes);
  writeFile(dir_ / "m.onnxtxt", kSmallModel);
  writeFile(dir_ / "m.noext", kSmallModel); // sniffed: starts with '<'
  for (const char *name : {"m.onnx", "m.onnxtxt", "m.noext"}) {
    Result<std::unique_ptr<Model>> m = load((dir_ / name).string());
    ASSERT_TRUE(m) << name << ": " << m.error();
    EXPECT_EQ(countModel(**m).nodes, 3u) << name;
  }
  // A text model forced to binary is not one.
  ReadOptions asBinary;
  asBinary.format = ModelFormat::Binary;
  EXPECT_FALSE(load((dir_ / "m.onnxtxt").string(), asBinary));
}

TEST_F(ApiTest, ReadErrorsNameTheFile) {
  Result<std::unique_ptr<Model>> missing = load((dir_ / "nope.onnx").string());
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().find("nope.onnx"), std::string::npos) << missing.error();

  ReadOptions named;
  named.name = "garbage.bin";
  Result<std::unique_ptr<Model>> garbage = loadFromBytes(std::string("\x0a\xff\xff\xff\xff\x0f", 6), named);
  ASSERT_FALSE(garbage);
  EXPECT_NE(garbage.error().find("garbage.bin"), std::string::npos) << garbage.error();

  // validate: refuses a model that breaks the spec, naming node and op.
  ReadOptions strict;
  strict.validate = true;
  Result<std::unique_ptr<Model>> invalid = loadFromBytes(kInvalidModel, strict);
  ASSERT_FALSE(invalid);
  EXPECT_NE(invalid.error().find("Transpose"), std::string::npos) << invalid.error();
  EXPECT_TRUE(loadFromBytes(kInvalidModel)); // without validate it reads
}

TEST_F(ApiTest, WritesBothFormsAtomicallyAndRefusesWhatCannotBe) {
  std::unique_ptr<Model> m = parse(kSmallModel);
  ASSERT_TRUE(m);
  ASSERT_TRUE(save(*m, (dir_ / "out.onnx").string()));
  ASSERT_TRUE(save(*m, (dir_ / "out.onnxtxt").string())); // Auto: text by extension
  EXPECT_EQ(readFile(dir_ / "out.onnxtxt").front(), '<');
  EXPECT_EQ(readFile(dir_ / "out.onnx"), *saveToBytes(*m));
  WriteOptions text;
  text.format = ModelFormat::Text;
  Result<std::string> textBytes = saveToBytes(*m, text);
  ASSERT_TRUE(textBytes);
  EXPECT_EQ(*textBytes, readFile(dir_ / "out.onnxtxt"));

  // A directory is refused; external data cannot go to bytes.
  Status dirStatus = save(*m, dir_.string());
  EXPECT_FALSE(dirStatus);
  EXPECT_NE(dirStatus.message().find(dir_.string()), std::string::npos) << dirStatus.message();
  WriteOptions external;
  external.externalData = true;
  EXPECT_FALSE(saveToBytes(*m, external));

  // validate refuses an invalid model and writes nothing.
  std::unique_ptr<Model> bad = parse(kInvalidModel);
  WriteOptions strict;
  strict.validate = true;
  EXPECT_FALSE(save(*bad, (dir_ / "bad.onnx").string(), strict));
  EXPECT_FALSE(fs::exists(dir_ / "bad.onnx"));
}

//===--- optimize() -------------------------------------------------------===//

TEST_F(ApiTest, DefaultPipelineRunsToAFixedPointAndReports) {
  std::unique_ptr<Model> m = parse(kSmallModel);
  OptimizeReport r = optimize(*m);
  ASSERT_TRUE(r.status) << r.status.message();
  EXPECT_TRUE(r.inputValid);
  EXPECT_EQ(r.before.nodes, 3u);
  EXPECT_EQ(r.after.nodes, 1u);
  EXPECT_EQ(count(*m, "Identity"), 0u);
  EXPECT_EQ(r.pipeline, defaultPipelineFor("onnx"));
  EXPECT_TRUE(r.converged);
  EXPECT_GE(r.rounds, 2u); // the round that changed something, then one that did not
  EXPECT_FALSE(r.passes.empty());
  bool counted = false;
  for (const PassReport &p : r.passes)
    for (const auto &[name, value] : p.counters)
      counted |= p.pass == "eliminate-identity-ops" && value == 2;
  EXPECT_TRUE(counted) << r.statisticsText;
  EXPECT_NE(r.timingText.find("Total"), std::string::npos);
  // The default model check ran (the model is tiny and runs in the interpreter).
  EXPECT_TRUE(r.modelChecked) << r.modelCheckSkipped;
  EXPECT_EQ(r.check.outputs, 1u);
}

TEST_F(ApiTest, GivenPipelineRunsOnceAndErrorsAreValues) {
  std::unique_ptr<Model> m = parse(kSmallModel);
  OptimizeOptions o;
  o.pipeline = "eliminate-identity-ops";
  OptimizeReport r = optimize(*m, o);
  ASSERT_TRUE(r.status) << r.status.message();
  EXPECT_EQ(r.rounds, 1u);
  EXPECT_FALSE(r.modelChecked); // a given pipeline checks only when asked
  EXPECT_EQ(count(*m, "Identity"), 0u);

  // Bad options: an error before the model is touched, from checkOptions too.
  std::unique_ptr<Model> untouched = parse(kSmallModel);
  for (auto edit : std::vector<std::function<void(OptimizeOptions &)>>{
           [](OptimizeOptions &x) { x.pipeline = "no-such-pass"; },
           [](OptimizeOptions &x) { x.target = "tensorrt"; },
           [](OptimizeOptions &x) { x.skipPasses = {"no-such-pass"}; },
           [](OptimizeOptions &x) { x.inputShapes = {"x"}; },
           [](OptimizeOptions &x) { x.pipeline = "fuse-conv-relu"; },
           [](OptimizeOptions &x) { x.floatType = "float64"; },
           [](OptimizeOptions &x) { x.skipOptimizations = {"folding"}; }}) {
    OptimizeOptions bad;
    edit(bad);
    Status checked = checkOptions(bad);
    EXPECT_FALSE(checked);
    OptimizeReport failed = optimize(*untouched, bad);
    EXPECT_FALSE(failed.status);
    EXPECT_EQ(failed.status.message(), checked.message());
    EXPECT_EQ(countModel(*untouched).nodes, 3u);
  }
}

TEST_F(ApiTest, SkippedPassesAndShapeInferenceOptions) {
  std::unique_ptr<Model> m = parse(kSmallModel);
  OptimizeOptions o;
  o.skipPasses = {"eliminate-identity-ops"};
  OptimizeReport r = optimize(*m, o);
  ASSERT_TRUE(r.status) << r.status.message();
  EXPECT_EQ(r.pipeline.find("eliminate-identity-ops"), std::string::npos) << r.pipeline;
  EXPECT_EQ(count(*m, "Identity"), 2u);

  std::unique_ptr<Model> n = parse(kSmallModel);
  OptimizeOptions noInfer;
  noInfer.shapeInference = false;
  OptimizeReport r2 = optimize(*n, noInfer);
  ASSERT_TRUE(r2.status);
  EXPECT_EQ(r2.pipeline.find("infer-shapes"), std::string::npos) << r2.pipeline;

  std::unique_ptr<Model> s = parse(kSmallModel);
  OptimizeOptions shapes;
  shapes.inputShapes = {"x:2,4"};
  shapes.foldSizeLimit = 64;
  OptimizeReport r3 = optimize(*s, shapes);
  ASSERT_TRUE(r3.status) << r3.status.message();
  EXPECT_NE(r3.pipeline.find("fold-constants{size-limit=64}"), std::string::npos) << r3.pipeline;
  const Shape &x = *s->graph()->input(0)->type()->shape();
  ASSERT_EQ(x.size(), 2u);
  EXPECT_EQ(x[0].getValue(), 2);
}

TEST_F(ApiTest, InvalidInputIsRefusedUnlessAllowedAndNothingIsPrinted) {
  std::unique_ptr<Model> m = parse(kInvalidModel);
  OptimizeOptions o;
  o.modelName = "bad.onnx";
  ::testing::internal::CaptureStderr();
  ::testing::internal::CaptureStdout();
  OptimizeReport refused = optimize(*m, o);
  o.allowInvalid = true;
  o.inputShapes = {"nope:1"}; // a warning from shape inference
  OptimizeReport allowed = optimize(*m, o);
  std::string out = ::testing::internal::GetCapturedStdout();
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(out, "");
  EXPECT_EQ(err, "");

  EXPECT_FALSE(refused.status);
  EXPECT_FALSE(refused.inputValid);
  EXPECT_NE(refused.status.message().find("bad.onnx"), std::string::npos) << refused.status.message();
  EXPECT_NE(refused.status.message().find("Transpose"), std::string::npos) << refused.status.message();
  ASSERT_FALSE(refused.inputProblems.empty());

  // allowInvalid: optimized, with the input's problem among the warnings.
  EXPECT_FALSE(allowed.status) << "the input names no input 'nope': an error, not a warning";
  EXPECT_NE(allowed.status.message().find("nope"), std::string::npos) << allowed.status.message();
  o.inputShapes.clear();
  OptimizeReport again = optimize(*m, o);
  ASSERT_TRUE(again.status) << again.status.message();
  ASSERT_FALSE(again.warnings.empty());
  EXPECT_NE(again.warnings.front().find("optimized anyway"), std::string::npos) << again.warnings.front();
}

TEST_F(ApiTest, LogReceivesWhatTheInstrumentationPrints) {
  std::unique_ptr<Model> m = parse(kSmallModel);
  std::ostringstream log;
  OptimizeOptions o;
  o.pipeline = "eliminate-identity-ops";
  o.printIRAfterAll = true;
  o.log = &log;
  ASSERT_TRUE(optimize(*m, o).status);
  EXPECT_NE(log.str().find("eliminate-identity-ops"), std::string::npos) << log.str();
  EXPECT_NE(log.str().find("Add"), std::string::npos) << log.str();
}

/// A custom pass of a downstream compiler: renames every Add node to "sum_N".
class NameAddsPass : public Pass {
public:
  std::string_view name() const override { return "name-adds"; }
  std::string_view description() const override { return "Names every Add node sum_N"; }
  bool run(Model &model, PassContext &context) override {
    bool changed = false;
    size_t n = 0;
    model.graph()->walk([&](Node *node) {
      if (node->is("Add")) {
        node->setName("sum_" + std::to_string(n++));
        ++context.counter("named", "Add nodes named");
        changed = true;
      }
    });
    return changed;
  }
};

TEST_F(ApiTest, CustomPassRunsInAPipeline) {
  PassRegistry registry = PassRegistry::withBuiltinPasses();
  ASSERT_TRUE(registry.add<NameAddsPass>());
  std::unique_ptr<Model> m = parse(kSmallModel);
  OptimizeOptions o;
  o.registry = &registry;
  o.pipeline = "eliminate-identity-ops,name-adds,eliminate-dead-nodes";
  OptimizeReport r = optimize(*m, o);
  ASSERT_TRUE(r.status) << r.status.message();
  EXPECT_EQ(count(*m, "Identity"), 0u);
  bool named = false;
  m->graph()->walk([&](Node *node) { named |= node->name() == "sum_0"; });
  EXPECT_TRUE(named);
  ASSERT_EQ(r.passes.size(), 3u);
  EXPECT_EQ(r.passes[1].pass, "name-adds");
  ASSERT_EQ(r.passes[1].counters.size(), 1u);
  EXPECT_EQ(r.passes[1].counters[0], (std::pair<std::string, uint64_t>{"named", 1}));
  // Listed twice: each entry counts its own runs (1 Add named by each).
  std::unique_ptr<Model> twice = parse(kSmallModel);
  o.pipeline = "name-adds,eliminate-identity-ops,name-adds";
  r = optimize(*twice, o);
  ASSERT_TRUE(r.status) << r.status.message();
  ASSERT_EQ(r.passes.size(), 3u);
  for (size_t i : {0u, 2u}) {
    ASSERT_EQ(r.passes[i].counters.size(), 1u) << i;
    EXPECT_EQ(r.passes[i].counters[0], (std::pair<std::string, uint64_t>{"named", 1})) << i;
  }
  // Without the registry the name is unknown.
  OptimizeOptions builtinOnly;
  builtinOnly.pipeline = "name-adds";
  EXPECT_FALSE(checkOptions(builtinOnly));
}

//===--- run() and verify() -----------------------------------------------===//

TEST_F(ApiTest, RunComputesTheOutputsOfGivenAndSeededInputs) {
  std::unique_ptr<Model> m = parse(kSmallModel);
  std::map<std::string, RunValue> inputs;
  inputs["x"] = RunValue::fromTensor(Tensor::fromValues<float>(DataType::Float, {1, 4}, {1, 2, 3, -4}));
  auto out = run(*m, inputs);
  ASSERT_TRUE(out) << out.error();
  ASSERT_EQ(out->size(), 1u);
  EXPECT_EQ((*out)[0].first, "y");
  const RunValue &y = (*out)[0].second;
  ASSERT_EQ(y.kind, RunValue::Kind::Tensor);
  ASSERT_EQ(y.tensor->dims(), (std::vector<int64_t>{1, 4}));
  const float *v = y.tensor->dataAs<float>();
  EXPECT_EQ(std::vector<float>(v, v + 4), (std::vector<float>{2, 4, 6, -8}));

  RunConfig seeded;
  seeded.dims = {{"N", 3}};
  auto random = run(*m, {}, seeded);
  ASSERT_TRUE(random) << random.error();
  EXPECT_EQ((*random)[0].second.tensor->dims(), (std::vector<int64_t>{3, 4}));

  std::map<std::string, RunValue> wrong;
  wrong["nope"] = inputs["x"];
  auto refused = run(*m, wrong);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().find("'nope' is not an input"), std::string::npos) << refused.error();
}

TEST_F(ApiTest, VerifyComparesOutputsAndInterfaces) {
  std::unique_ptr<Model> a = parse(kSmallModel);
  std::unique_ptr<Model> b = parse(kSmallModel);
  ASSERT_TRUE(optimize(*b).status);
  VerifyOptions o;
  o.samples = 3;
  Result<VerifyReport> same = verify(*a, *b, o);
  ASSERT_TRUE(same) << same.error();
  EXPECT_TRUE(same->equivalent());
  ASSERT_EQ(same->outputs.size(), 1u);
  EXPECT_EQ(same->outputs[0].maxAbsDiff, 0.0);

  std::unique_ptr<Model> mul = parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[N, 4] x) => (float[N, 4] y) {
  y = Mul(x, x)
}
)");
  Result<VerifyReport> differ = verify(*a, *mul);
  ASSERT_TRUE(differ) << differ.error();
  EXPECT_FALSE(differ->equivalent());
  EXPECT_GT(differ->outputs[0].mismatches, 0);
  EXPECT_FALSE(differ->outputs[0].firstMismatch.empty());

  std::unique_ptr<Model> renamed = parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[N, 4] z) => (float[N, 4] y) {
  y = Add(z, z)
}
)");
  Result<VerifyReport> interface = verify(*a, *renamed);
  ASSERT_FALSE(interface);
  EXPECT_NE(interface.error().find("interfaces differ"), std::string::npos) << interface.error();
}

TEST_F(ApiTest, RunProfiledTimesBenchRunsOpsAndNodes) {
  std::unique_ptr<Model> m = parse(kSmallModel);
  std::map<std::string, RunValue> inputs;
  inputs["x"] = RunValue::fromTensor(Tensor::fromValues<float>(DataType::Float, {1, 4}, {1, 2, 3, -4}));
  ProfileOptions profile;
  profile.benchRuns = 3;
  profile.opTimes = true;
  profile.nodeTimes = true;
  Result<RunReport> r = runProfiled(*m, inputs, {}, profile);
  ASSERT_TRUE(r) << r.error();
  ASSERT_EQ(r->outputs.size(), 1u);
  EXPECT_EQ(r->outputs[0].first, "y");
  EXPECT_EQ(r->outputs[0].second.tensor->at<float>(3), -8.0f);
  EXPECT_EQ(r->benchSeconds.size(), 3u);
  // The first run, two warm-ups and three timed runs.
  ASSERT_EQ(r->ops.size(), 2u);
  EXPECT_EQ(r->ops[0].op, "Add");
  EXPECT_EQ(r->ops[0].calls, 6);
  EXPECT_EQ(r->ops[1].op, "Identity");
  EXPECT_EQ(r->ops[1].calls, 12);
  ASSERT_EQ(r->nodes.size(), 3u);
  EXPECT_EQ(r->nodes[1].node, "");
  EXPECT_EQ(r->nodes[1].output, "b");
  EXPECT_EQ(r->nodes[1].op, "Add");
  EXPECT_EQ(r->nodes[1].inputShapes, "1x4, 1x4");
  EXPECT_EQ(r->nodes[1].calls, 6);

  // Nothing measured unless asked; a wrong shape is refused unless allowed.
  Result<RunReport> plain = runProfiled(*m, inputs);
  ASSERT_TRUE(plain) << plain.error();
  EXPECT_TRUE(plain->benchSeconds.empty() && plain->ops.empty() && plain->nodes.empty());
  std::map<std::string, RunValue> wide;
  wide["x"] = RunValue::fromTensor(Tensor::fromValues<float>(DataType::Float, {1, 5}, {1, 2, 3, 4, 5}));
  EXPECT_FALSE(runProfiled(*m, wide));
  RunConfig lax;
  lax.checkInputShapes = false;
  EXPECT_TRUE(runProfiled(*m, wide, lax));
}

//===--- Validation, dims, specs, passes, fusion names ---------------------===//

TEST_F(ApiTest, ValidateModelListsWhatCheckPrints) {
  EXPECT_TRUE(validateModel(*parse(kSmallModel), "small.onnxtxt").empty());
  std::vector<std::string> problems = validateModel(*parse(kInvalidModel), "bad.onnxtxt");
  ASSERT_FALSE(problems.empty());
  EXPECT_EQ(problems[0].rfind("bad.onnxtxt: ", 0), 0u) << problems[0];
  EXPECT_NE(problems[0].find("perm"), std::string::npos) << problems[0];
}

// Messages name options as the caller's surface spells them.
TEST_F(ApiTest, MessagesNameOptionsAsTheSurfaceSpellsThem) {
  std::unique_ptr<Model> m = parse(kSmallModel);
  OptimizeOptions o;
  o.inputShapes = {"images:1,4"};
  OptimizeReport r = optimize(*m, o);
  ASSERT_FALSE(r.status);
  EXPECT_NE(r.status.message().find("inputShapes: no input 'images' (inputs: x)"), std::string::npos)
      << r.status.message();
  o.surface = Surface::CommandLine;
  r = optimize(*m, o);
  EXPECT_NE(r.status.message().find("--input-shapes: no input 'images' (inputs: x)"), std::string::npos)
      << r.status.message();
  OptimizeOptions p;
  p.pipeline = "no-such-pass";
  Status s = checkOptions(p);
  EXPECT_NE(s.message().find("(see listPasses())"), std::string::npos) << s.message();
  p.surface = Surface::Python;
  s = checkOptions(p);
  EXPECT_NE(s.message().find("(see onnxslim.list_passes())"), std::string::npos) << s.message();
}

// OnnxSlim's optimization names leave out the passes that do them here.
TEST_F(ApiTest, SkipOptimizationsByOnnxSlimsNames) {
  std::unique_ptr<Model> m = parse(kSmallModel);
  OptimizeOptions o;
  o.skipOptimizations = {"constant_folding", "graph_fusion"};
  OptimizeReport r = optimize(*m, o);
  ASSERT_TRUE(r.status) << r.status.message();
  EXPECT_EQ(r.pipeline.find("fold-constants"), std::string::npos) << r.pipeline;
  EXPECT_EQ(r.pipeline.find("fuse-"), std::string::npos) << r.pipeline;
  std::vector<OptimizationName> names = onnxslimOptimizationNames();
  ASSERT_EQ(names.size(), 5u);
  EXPECT_EQ(names[0].name, "constant_folding");
  EXPECT_EQ(names[0].passes, std::vector<std::string>{"fold-constants"});
}

// The float type takes the command line's (and OnnxSlim's) names too.
TEST_F(ApiTest, FloatTypeTakesBothSpellings) {
  for (const char *name : {"fp16", "float16"}) {
    std::unique_ptr<Model> m = parse(kSmallModel);
    OptimizeOptions o;
    o.floatType = name;
    EXPECT_TRUE(checkOptions(o)) << name;
    OptimizeReport r = optimize(*m, o);
    ASSERT_TRUE(r.status) << name << ": " << r.status.message();
    bool anyFloat16 = false;
    m->graph()->walk([&](Node *n) {
      for (Value *v : n->results())
        anyFloat16 |= v && v->type() && v->type()->elemType() == DataType::Float16;
    });
    EXPECT_TRUE(anyFloat16) << name << ": nothing was converted to float16";
  }
  OptimizeOptions bad;
  bad.floatType = "half";
  Status s = checkOptions(bad);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("fp16"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("bf16"), std::string::npos) << s.message();
}

// bfloat16 too ("bf16", "bfloat16"), from opset 13: below, an error that
// names the opset and the option that converts it.
TEST_F(ApiTest, FloatTypeBFloat16) {
  for (const char *name : {"bf16", "bfloat16"}) {
    std::unique_ptr<Model> m = parse(kSmallModel);
    OptimizeOptions o;
    o.floatType = name;
    EXPECT_TRUE(checkOptions(o)) << name;
    OptimizeReport r = optimize(*m, o);
    ASSERT_TRUE(r.status) << name << ": " << r.status.message();
    EXPECT_TRUE(r.float16Compared) << name << ": the fallback did not compare";
    bool anyBFloat16 = false;
    m->graph()->walk([&](Node *n) {
      for (Value *v : n->results())
        anyBFloat16 |= v && v->type() && v->type()->elemType() == DataType::BFloat16;
    });
    EXPECT_TRUE(anyBFloat16) << name << ": nothing was converted to bfloat16";
  }
  std::unique_ptr<Model> old = parse(R"(<ir_version: 7, opset_import: ["" : 12]>
g (float[4] x) => (float[4] y) {
  y = Add(x, x)
}
)");
  OptimizeOptions o;
  o.floatType = "bf16";
  OptimizeReport r = optimize(*old, o);
  ASSERT_FALSE(r.status);
  EXPECT_NE(r.status.message().find("needs opset 13 or later; the model imports opset 12"), std::string::npos)
      << r.status.message();
  EXPECT_NE(r.status.message().find("targetOpset 13"), std::string::npos) << r.status.message();
  o.targetOpset = 13;
  OptimizeReport converted = optimize(*old, o);
  EXPECT_TRUE(converted.status) << converted.status.message();
}

TEST_F(ApiTest, ParseDimAndCheckInputSpecs) {
  std::map<std::string, int64_t> dims;
  EXPECT_TRUE(parseDim("N=3", dims));
  EXPECT_EQ(dims["N"], 3);
  EXPECT_TRUE(parseDim("batch:4", dims)); // ':' as on the command line's NAME:VALUE options
  EXPECT_EQ(dims["batch"], 4);
  Status bad = parseDim("N", dims);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.message().find("expected SYMBOL=N"), std::string::npos) << bad.message();

  std::string missing = (dir_ / "nope.json").string();
  Status none = checkInputSpecs(missing, "m");
  ASSERT_FALSE(none);
  EXPECT_EQ(none.message(), missing + ": cannot open");
  writeFile(dir_ / "specs.json", R"({"models": [{"name": "m", "inputs": [{"name": "x", "shape": [2, 4]}]}]})");
  EXPECT_TRUE(checkInputSpecs((dir_ / "specs.json").string(), "m"));
}

TEST_F(ApiTest, PassesAndTheFusionNameTable) {
  std::vector<PassDescription> passes = listPasses();
  ASSERT_FALSE(passes.empty());
  EXPECT_TRUE(std::is_sorted(passes.begin(), passes.end(), [](auto &a, auto &b) { return a.name < b.name; }));
  auto has = [](const std::vector<PassDescription> &list, std::string_view name) {
    return std::any_of(list.begin(), list.end(), [&](auto &p) { return p.name == name && !p.description.empty(); });
  };
  EXPECT_TRUE(has(passes, "fuse-conv-batchnorm"));
  EXPECT_FALSE(has(passes, "test-negate-first-output"));
  PassRegistry withTests = PassRegistry::withBuiltinPasses();
  registerTestPasses(withTests);
  EXPECT_TRUE(has(listPasses(&withTests), "test-negate-first-output"));

  std::vector<FusionName> names = onnxslimFusionNames();
  ASSERT_EQ(names.size(), 7u);
  EXPECT_EQ(names[0].name, "FusionConvBN");
  EXPECT_EQ(names[0].skipOption, "skip=conv");
  EXPECT_EQ(names[1].name, "FusionConvTransposeBN");
  EXPECT_EQ(names[1].skipOption, "skip=conv-transpose");
  for (const FusionName &f : names) {
    EXPECT_EQ(fusionPassName(f.name), f.pass);
    EXPECT_TRUE(has(passes, f.pass)) << f.pass;
    EXPECT_FALSE(f.covers.empty()) << f.name;
  }
  EXPECT_EQ(fusionPassName("fuse-gelu"), "fuse-gelu");
  EXPECT_EQ(fusionPassName("FusionNope"), "");

  // OnnxSlim's name skips only its part of the pass.
  const char *kBatchNorms = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[1,1,3,3] x) => (float[1,2,3,3] y, float[1,2,3,3] z)
<float[2,1,1,1] w = {1, 2}, float[1,2,1,1] wt = {1, 2}, float[2] s = {2, 6}, float[2] bb = {0.5, 1}, float[2] m = {1, 2}, float[2] v = {4, 9}> {
  yc = Conv(x, w)
  y = BatchNormalization(yc, s, bb, m, v)
  zt = ConvTranspose(x, wt)
  z = BatchNormalization(zt, s, bb, m, v)
}
)";
  std::unique_ptr<Model> m = parse(kBatchNorms);
  OptimizeOptions o;
  o.skipFusions = {"FusionConvTransposeBN"};
  OptimizeReport r = optimize(*m, o);
  ASSERT_TRUE(r.status) << r.status.message();
  EXPECT_NE(r.pipeline.find("fuse-conv-batchnorm{skip=conv-transpose}"), std::string::npos) << r.pipeline;
  EXPECT_EQ(r.after.opCounts["BatchNormalization"], 1u);
  o.skipFusions = {"FusionNope"};
  Status unknown = checkOptions(o);
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.message().find("unknown fusion 'FusionNope'"), std::string::npos) << unknown.message();
}

//===--- Data files --------------------------------------------------------===//

TEST_F(ApiTest, DataFilesReadAndWriteValues) {
  std::unique_ptr<Model> m = parse(kSmallModel);
  std::map<std::string, RunValue> inputs;
  inputs["x"] = RunValue::fromTensor(Tensor::fromValues<float>(DataType::Float, {1, 4}, {1, 2, 3, -4}));
  auto out = run(*m, inputs);
  ASSERT_TRUE(out) << out.error();

  // An output written as run --output-dir does, read back as the input.
  Result<std::string> bytes = serializeValue((*out)[0].second, "y");
  ASSERT_TRUE(bytes) << bytes.error();
  std::string file = (dir_ / valueFileNames({"y"})[0]).string();
  ASSERT_TRUE(onnxslim::writeFile(file, *bytes));
  Result<std::pair<std::string, RunValue>> x = readInputFile(*m, file, "x");
  ASSERT_TRUE(x) << x.error();
  EXPECT_EQ(x->first, "x");
  EXPECT_EQ(x->second.tensor->at<float>(3), -8.0f);
  Result<std::pair<std::string, RunValue>> named = readInputFile(*m, file); // the file's name: 'y'
  ASSERT_FALSE(named);
  EXPECT_NE(named.error().find("'y' is not an input of the model"), std::string::npos) << named.error();
  Result<TensorPtr> t = readTensorFile(file);
  ASSERT_TRUE(t) << t.error();
  EXPECT_EQ((*t)->dims(), (std::vector<int64_t>{1, 4}));

  // .npy: a float32 [2] array.
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  header += std::string(64 - (10 + header.size() + 1) % 64, ' ') + "\n";
  std::string npy = std::string("\x93NUMPY\x01\x00", 8) + char(header.size() & 0xff) + char(header.size() >> 8) + header;
  const float values[2] = {1.5f, -2.0f};
  npy.append(reinterpret_cast<const char *>(values), sizeof values);
  writeFile(dir_ / "v.npy", npy);
  Result<TensorPtr> v = readTensorFile((dir_ / "v.npy").string());
  ASSERT_TRUE(v) << v.error();
  EXPECT_EQ((*v)->at<float>(1), -2.0f);
  EXPECT_FALSE(readTensorFile((dir_ / "missing.npy").string()));

  // File names shared by several values, as the oracle names them.
  EXPECT_EQ(valueFileNames({"a_b", "a/b", "logits:0"}),
            (std::vector<std::string>{"a_b.pb", "a_b.3a8e75c1.pb", "logits_0.pb"}));
  // An empty optional keeps its element type; a missing value is an error.
  RunValue empty;
  empty.kind = RunValue::Kind::Optional;
  empty.elemType = Type::tensor(DataType::Float);
  EXPECT_TRUE(serializeValue(empty, "o"));
  Result<std::string> nothing = serializeValue(RunValue(), "n");
  ASSERT_FALSE(nothing);
  EXPECT_EQ(nothing.error(), "'n' has no value");
  EXPECT_FALSE(onnxslim::writeFile(dir_.string(), "a directory"));
}

//===--- The command line's result, byte for byte -------------------------===//

std::vector<fs::path> realModels() {
  std::vector<fs::path> models;
  if (fs::is_directory(ONNXSLIM_MODEL_CACHE))
    for (const fs::directory_entry &e : fs::directory_iterator(ONNXSLIM_MODEL_CACHE))
      if (e.path().extension() == ".onnx")
        models.push_back(e.path());
  std::sort(models.begin(), models.end());
  return models;
}

TEST_F(ApiTest, DefaultOptionsWriteExactlyWhatTheCommandLineWrites) {
  std::vector<fs::path> models = realModels();
  ASSERT_GE(models.size(), 10u) << "the real models are missing from " << ONNXSLIM_MODEL_CACHE
                                << ": run scripts/fetch-models.sh";
  for (const fs::path &model : models) {
    SCOPED_TRACE(model.filename().string());
    fs::path viaApi = dir_ / "api.onnx", viaCli = dir_ / "cli.onnx";
    Result<std::unique_ptr<Model>> m = load(model.string());
    ASSERT_TRUE(m) << m.error();
    OptimizeReport r = optimize(**m);
    ASSERT_TRUE(r.status) << r.status.message();
    ASSERT_TRUE(save(**m, viaApi.string()));
    clitest::RunResult cli = clitest::runOnnxslim(model.string() + " " + viaCli.string() + " -q", dir_);
    ASSERT_EQ(cli.exitCode, 0) << cli.err;
    std::string a = readFile(viaApi), b = readFile(viaCli);
    EXPECT_FALSE(a.empty());
    EXPECT_TRUE(a == b) << "API wrote " << a.size() << " bytes, the CLI " << b.size();
  }
}

TEST_F(ApiTest, APassManagerOnTheDefaultPipelineMatchesOptimize) {
  std::vector<fs::path> models = realModels();
  ASSERT_FALSE(models.empty()) << "run scripts/fetch-models.sh";
  for (const char *name : {"ppocr_det.onnx", "vad_v5.onnx"}) {
    SCOPED_TRACE(name);
    fs::path path = fs::path(ONNXSLIM_MODEL_CACHE) / name;
    Result<std::unique_ptr<Model>> a = load(path.string()), b = load(path.string());
    ASSERT_TRUE(a && b) << "run scripts/fetch-models.sh";
    OptimizeOptions noCheck;
    noCheck.modelCheck = ModelCheckMode::Off;
    ASSERT_TRUE(optimize(**a, noCheck).status);
    // A consumer driving the pass manager itself, with its defaults.
    PassRegistry registry = PassRegistry::withBuiltinPasses();
    PassManager pm(registry);
    std::string error;
    ASSERT_TRUE(pm.parsePipeline(defaultPipelineFor("onnx"), error)) << error;
    ASSERT_TRUE(pm.run(**b, error)) << error;
    EXPECT_GT(pm.report().rounds, 1u);
    EXPECT_EQ(countModel(**a).nodes, countModel(**b).nodes);
    EXPECT_EQ(countModel(**a).opCounts, countModel(**b).opCounts);
  }
}

} // namespace
} // namespace onnxslim
