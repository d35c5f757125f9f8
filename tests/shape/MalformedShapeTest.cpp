//===- tests/shape/MalformedShapeTest.cpp - Odd models never crash --------===//
//
// Inference must survive any model: every conformance model is mutated
// (attributes dropped, operands dropped, input shapes replaced by wrong ranks
// and dims, constant data of the wrong size) and re-inferred. Nothing may
// crash or assert; malformed nodes get warnings. Run under the sanitizer
// build (-DONNXSLIM_SANITIZE=ON) to catch out-of-bounds reads too.
//
//===----------------------------------------------------------------------===//
#include "frontend/Loader.h"
#include "tests/shape/ShapeTestUtil.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <random>

namespace onnxslim::testing {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> conformanceModels() {
  std::vector<std::string> out;
  for (const char *suite : {"node", "pytorch-converted", "pytorch-operator", "simple"}) {
    fs::path dir = fs::path(ONNXSLIM_TESTDATA_DIR) / suite;
    if (!fs::is_directory(dir))
      continue;
    for (const auto &entry : fs::directory_iterator(dir))
      if (fs::exists(entry.path() / "model.onnx"))
        out.push_back((entry.path() / "model.onnx").string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

void forEachNode(Graph &g, const std::function<void(Node &)> &fn) {
  for (Node *n : g.nodes()) {
    fn(*n);
    for (Graph *sub : n->subgraphs())
      forEachNode(*sub, fn);
  }
}

void stripTypes(Graph &g) {
  forEachNode(g, [](Node &n) {
    for (Value *v : n.results())
      if (v)
        v->setType(std::nullopt);
  });
}

Shape randomShape(std::mt19937 &rng) {
  Shape s;
  size_t rank = rng() % 6;
  for (size_t i = 0; i < rank; ++i) {
    switch (rng() % 5) {
    case 0: s.push_back(Dim::unknown()); break;
    case 1: s.push_back(Dim::symbol("S" + std::to_string(rng() % 3))); break;
    case 2: s.push_back(Dim::value(0)); break;
    default: s.push_back(Dim::value(static_cast<int64_t>(rng() % 7))); break;
    }
  }
  return s;
}

TEST(MalformedShape, MutatedConformanceModelsNeverCrash) {
  std::vector<std::string> models = conformanceModels();
  if (models.empty())
    FAIL() << "no conformance data" << ": run scripts/setup.sh (installs libonnx-testdata)";
  // SHAPE_FUZZ_ROUNDS=N repeats the mutations N times with fresh randomness.
  int rounds = std::getenv("SHAPE_FUZZ_ROUNDS") ? std::atoi(std::getenv("SHAPE_FUZZ_ROUNDS")) : 1;
  std::mt19937 rng(12345);
  size_t runs = 0, warned = 0;
  for (const std::string &path : models) {
    for (int mutation = 0; mutation < 4 * std::max(rounds, 1); ++mutation) {
      std::string error;
      std::unique_ptr<Model> m = loadModel(path, error);
      ASSERT_TRUE(m) << error;
      Graph &g = *m->graph();
      stripTypes(g);
      switch (mutation % 4) {
      case 0: // no attributes (subgraph attributes kept so bodies still run)
        forEachNode(g, [](Node &n) {
          std::vector<std::string> names;
          for (const Attribute &a : n.attributes())
            if (a.subgraphs().empty())
              names.push_back(a.name);
          for (const std::string &name : names)
            n.removeAttr(name);
        });
        break;
      case 1: // random input shapes
        for (Value *in : g.inputs())
          if (in->type() && in->type()->isTensor())
            in->type()->shape() = randomShape(rng);
        break;
      case 2: // operands dropped
        forEachNode(g, [&](Node &n) {
          if (n.numOperands() > 0 && rng() % 2)
            n.setOperand(rng() % n.numOperands(), nullptr);
        });
        break;
      case 3: // random attribute values, random ranks
        forEachNode(g, [&](Node &n) {
          for (Attribute &a : n.attributes()) {
            if (a.kind == AttrKind::Int)
              a.i = static_cast<int64_t>(rng() % 9) - 4;
            else if (a.kind == AttrKind::Ints)
              for (int64_t &v : a.ints)
                v = static_cast<int64_t>(rng() % 9) - 4;
          }
        });
        for (Value *in : g.inputs())
          if (in->type() && in->type()->isTensor())
            in->type()->shape() = randomShape(rng);
        break;
      }
      ShapeInferenceOptions opts;
      opts.strict = mutation % 4 == 3;
      ShapeInferenceResult r = inferShapes(*m, opts);
      ++runs;
      warned += !r.warnings.empty();
    }
  }
  std::cout << runs << " mutated models inferred without a crash; " << warned << " gave warnings\n";
}

TEST(MalformedShape, GarbageConstantsAndOperands) {
  // Shape operands of the wrong dtype, rank or size; absurd sizes.
  auto r = infer(withOpset(17, R"(
    g (float[2, 3] x) => () <float[2] fshape = {2.5, 1}, int64[2, 2] matrix = {1, 2, 3, 6},
                             int64[1] huge = {9223372036854775807}, int64[2] neg = {-3, 2},
                             int64 zero = {0}> {
      a = Reshape(x, fshape)
      b = Reshape(x, matrix)
      c = ConstantOfShape(huge)
      d = ConstantOfShape(neg)
      e = Range(zero, huge, zero)
      f = Tile(x, matrix)
      g1 = Expand(x, huge)
      h = Gather(x, huge)
      i = Slice(x, huge, neg)
      j = Split(x, matrix)
      k = TopK(x, huge)
      l = OneHot(x, huge, x)
      m = Pad(x, huge)
      n = Resize(x, , fshape)
      o = Squeeze(x, neg)
      p = Unsqueeze(x, huge)
    })"));
  ASSERT_TRUE(r.model);
  EXPECT_FALSE(r.result.warnings.empty());
  EXPECT_TRUE(r.warned("(ConstantOfShape): negative dim -3")) << r.warnings();
  EXPECT_TRUE(r.warned("(Range): delta is 0")) << r.warnings();
}

TEST(MalformedShape, NodesWithoutOperandsOrResults) {
  auto r = infer(withOpset(17, R"(
    g () => () {
      a = Add()
      b = Concat()
      c = MatMul()
      d = Where()
      e = Conv()
      f = If()
      g1 = Loop()
      h = Scan()
      i = Einsum()
      j = LSTM()
      k = Sum()
      l = SequenceConstruct()
      m = Split()
      n = Gemm()
      o = Constant()
    })"));
  ASSERT_TRUE(r.model);
  EXPECT_TRUE(r.warned("(If): missing then_branch")) << r.warnings();
  EXPECT_TRUE(r.warned("(Constant): no value attribute")) << r.warnings();
}

} // namespace
} // namespace onnxslim::testing
