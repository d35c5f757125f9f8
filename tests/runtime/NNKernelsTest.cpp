//===- tests/runtime/NNKernelsTest.cpp - GEMM engine and NN kernel tests --===//
//
// Checks the blocked GEMM engine against a naive product on random sizes
// (including the register-tile and cache-block edges) and every transpose
// combination; Conv, ConvTranspose and MatMul against naive references on
// random configurations (groups, depthwise, dilations, strides, pads,
// auto_pad, 1-D/2-D/3-D, broadcasting); a few pooling/normalization/RNN
// semantics; and malformed inputs, which must produce an error naming the
// node instead of a crash. Nodes run through the Interpreter on one-node
// models, as in a real model.
//
//===----------------------------------------------------------------------===//
#include "runtime/ElementwiseChain.h"
#include "runtime/Float16.h"
#include "runtime/Gemm.h"
#include "runtime/Interpreter.h"
#include "runtime/Kernel.h"
#include "runtime/ThreadPool.h"
#include "runtime/conv/Algorithms.h"
#include "runtime/conv/Kernels.h"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace onnxslim;
using namespace onnxslim::rt;

namespace {

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

TensorPtr floats(std::vector<int64_t> dims, const std::vector<float> &v) {
  return Tensor::fromValues<float>(DataType::Float, std::move(dims), v);
}
TensorPtr int64s(std::vector<int64_t> dims, const std::vector<int64_t> &v) {
  return Tensor::fromValues<int64_t>(DataType::Int64, std::move(dims), v);
}
std::vector<float> floatValues(const TensorPtr &t) {
  std::vector<float> out(static_cast<size_t>(t->numElements()));
  if (!out.empty())
    std::memcpy(out.data(), t->rawData(), out.size() * sizeof(float));
  return out;
}
std::vector<float> randomFloats(std::mt19937 &rng, int64_t n) {
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> v(static_cast<size_t>(n));
  for (float &x : v)
    x = d(rng);
  return v;
}

/// One attribute of a test node (Attribute itself is move-only).
struct Attr {
  std::string name;
  AttrKind kind;
  int64_t i = 0;
  float f = 0;
  std::string s;
  std::vector<int64_t> ints;
  Attribute make() const {
    switch (kind) {
    case AttrKind::Int: return Attribute::makeInt(name, i);
    case AttrKind::Float: return Attribute::makeFloat(name, f);
    case AttrKind::String: return Attribute::makeString(name, s);
    default: return Attribute::makeInts(name, ints);
    }
  }
};
Attr aInt(std::string n, int64_t v) { return Attr{std::move(n), AttrKind::Int, v, 0, "", {}}; }
Attr aFloat(std::string n, float v) { return Attr{std::move(n), AttrKind::Float, 0, v, "", {}}; }
Attr aStr(std::string n, std::string v) {
  return Attr{std::move(n), AttrKind::String, 0, 0, std::move(v), {}};
}
Attr aInts(std::string n, std::vector<int64_t> v) {
  return Attr{std::move(n), AttrKind::Ints, 0, 0, "", std::move(v)};
}

struct NodeRun {
  Status status;
  std::vector<TensorPtr> outputs;
  TensorPtr out(size_t i = 0) const { return i < outputs.size() ? outputs[i] : nullptr; }
};

/// Runs a one-node model named "nn_test_node" through the Interpreter.
NodeRun runNode(const std::string &op, int64_t opset, const std::vector<TensorPtr> &inputs,
                const std::vector<Attr> &attrs = {}, size_t numOutputs = 1) {
  Model model;
  model.opsetImport.push_back(OpsetId{"", opset, {}});
  auto graph = std::make_unique<Graph>();
  std::vector<Value *> operands;
  std::vector<RtValue> feeds;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]) {
      operands.push_back(nullptr);
      continue;
    }
    operands.push_back(graph->addInput("in" + std::to_string(i)));
    feeds.push_back(RtValue::fromTensor(inputs[i]));
  }
  std::vector<std::string> names;
  for (size_t i = 0; i < numOutputs; ++i)
    names.push_back("out" + std::to_string(i));
  Node *n = graph->append(graph->createNode(op, operands, names));
  n->setName("nn_test_node");
  for (const Attr &a : attrs)
    n->setAttr(a.make());
  for (size_t i = 0; i < numOutputs; ++i)
    graph->addOutput(n->result(i));
  model.setGraph(std::move(graph));
  NodeRun r;
  Interpreter interp(model);
  std::vector<RtValue> outs;
  r.status = interp.run(*model.graph(), feeds, outs);
  for (RtValue &v : outs)
    r.outputs.push_back(v.kind == RtValue::Kind::Tensor ? v.tensor : nullptr);
  return r;
}

void expectNear(const std::vector<float> &got, const std::vector<double> &want, double tol,
                const std::string &what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tol * (1 + std::abs(want[i]))) << what << " at " << i;
}

/// The error must name the node and must not be a crash.
void expectNodeError(const NodeRun &r, const std::string &fragment) {
  ASSERT_FALSE(r.status.ok()) << "expected an error containing '" << fragment << "'";
  EXPECT_NE(r.status.message().find("nn_test_node"), std::string::npos) << r.status.message();
  EXPECT_NE(r.status.message().find(fragment), std::string::npos) << r.status.message();
}

//===----------------------------------------------------------------------===//
// GEMM engine
//===----------------------------------------------------------------------===//

template <typename T>
void checkGemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, std::mt19937 &rng) {
  std::uniform_real_distribution<double> d(-1, 1);
  // Leading dimensions a bit larger than needed, to exercise strides.
  int64_t lda = (ta ? M : K) + 3, ldb = (tb ? K : N) + 1, ldc = N + 2;
  std::vector<T> A(static_cast<size_t>((ta ? K : M) * lda)), B(static_cast<size_t>((tb ? N : K) * ldb));
  std::vector<T> C(static_cast<size_t>(M * ldc));
  for (T &v : A)
    v = static_cast<T>(d(rng));
  for (T &v : B)
    v = static_cast<T>(d(rng));
  for (T &v : C)
    v = static_cast<T>(d(rng));
  T alpha = static_cast<T>(0.75), beta = static_cast<T>(-0.5);
  std::vector<double> want(static_cast<size_t>(M * N));
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k)
        s += double(ta ? A[k * lda + i] : A[i * lda + k]) * double(tb ? B[j * ldb + k] : B[k * ldb + j]);
      want[i * N + j] = alpha * s + beta * double(C[i * ldc + j]);
    }
  gemm(ta, tb, M, N, K, alpha, A.data(), lda, B.data(), ldb, beta, C.data(), ldc);
  double tol = std::is_same_v<T, float> ? 1e-5 * std::sqrt(double(K) + 1) : 1e-12;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j)
      ASSERT_NEAR(C[i * ldc + j], want[i * N + j], tol * (1 + std::abs(want[i * N + j])))
          << "M=" << M << " N=" << N << " K=" << K << " transA=" << ta << " transB=" << tb
          << " at (" << i << "," << j << ")";
  // Padding columns beyond N are untouched (checked loosely: finite).
}

/// Runs `body` once with every micro-kernel family this CPU supports.
template <typename Fn> void forEachEngine(Fn &&body) {
  std::string original = gemmEngineName();
  for (const char *engine : {"baseline", "avx2", "avx512"}) {
    if (!setGemmEngine(engine))
      continue;
    SCOPED_TRACE(std::string("GEMM engine ") + engine);
    body();
  }
  setGemmEngine(original.c_str());
}

TEST(GemmEngine, MatchesNaiveOnEdgeSizes) {
  forEachEngine([] {
    std::mt19937 rng(1);
    const int64_t sizes[] = {1, 3, 17, 63, 65, 129};
    for (int64_t M : sizes)
      for (int64_t N : sizes)
        for (int64_t K : {int64_t{1}, int64_t{17}, int64_t{129}})
          for (int t = 0; t < 4; ++t)
            checkGemm<float>(t & 1, t & 2, M, N, K, rng);
  });
}

TEST(GemmEngine, MatchesNaiveOnRandomSizes) {
  forEachEngine([] {
    std::mt19937 rng(2);
    std::uniform_int_distribution<int64_t> dim(1, 300);
    for (int iter = 0; iter < 40; ++iter) {
      int64_t M = dim(rng), N = dim(rng), K = dim(rng) + (iter % 5 == 0 ? 300 : 0);
      checkGemm<float>(iter & 1, iter & 2, M, N, K, rng);
    }
  });
}

TEST(GemmEngine, DoubleMatchesNaive) {
  forEachEngine([] {
    std::mt19937 rng(3);
    for (int64_t s : {1, 5, 13, 31, 70})
      for (int t = 0; t < 4; ++t)
        checkGemm<double>(t & 1, t & 2, s, s + 2, s + 7 + (s == 70 ? 300 : 0), rng);
  });
}

TEST(GemmEngine, UnknownEngineIsRejected) {
  std::string original = gemmEngineName();
  EXPECT_FALSE(setGemmEngine("sse9"));
  EXPECT_EQ(original, gemmEngineName());
  EXPECT_TRUE(setGemmEngine("baseline"));
  EXPECT_STREQ(gemmEngineName(), "baseline");
  EXPECT_TRUE(setGemmEngine(original.c_str()));
}

TEST(GemmEngine, BetaZeroIgnoresGarbageAndKZeroScales) {
  std::vector<float> A(6 * 7, 1.0f), B(7 * 9, 1.0f), C(6 * 9, std::nanf(""));
  sgemm(false, false, 6, 9, 7, 1.0f, A.data(), 7, B.data(), 9, 0.0f, C.data(), 9);
  for (float v : C)
    EXPECT_EQ(v, 7.0f);
  sgemm(false, false, 6, 9, 0, 1.0f, A.data(), 7, B.data(), 9, 2.0f, C.data(), 9);
  for (float v : C)
    EXPECT_EQ(v, 14.0f);
}

//===----------------------------------------------------------------------===//
// Convolution references
//===----------------------------------------------------------------------===//

struct ConvConfig {
  int64_t N, Cin, M, group;
  std::vector<int64_t> in, kernel, strides, dilations, pads; // pads: begins then ends
};

/// The output spatial dims of a configuration (explicit pads).
std::vector<int64_t> convOut(const ConvConfig &c) {
  std::vector<int64_t> out;
  size_t n = c.in.size();
  for (size_t i = 0; i < n; ++i)
    out.push_back((c.in[i] + c.pads[i] + c.pads[i + n] - ((c.kernel[i] - 1) * c.dilations[i] + 1)) /
                      c.strides[i] +
                  1);
  return out;
}

/// Direct definition of Conv over up to 3 spatial dims.
std::vector<double> naiveConv(const ConvConfig &c, const std::vector<float> &x,
                              const std::vector<float> &w, const std::vector<float> &b) {
  size_t n = c.in.size();
  auto pad3 = [n](const std::vector<int64_t> &v, int64_t fill, size_t off = 0) {
    std::vector<int64_t> r(3, fill);
    for (size_t i = 0; i < n; ++i)
      r[3 - n + i] = v[off + i];
    return r;
  };
  std::vector<int64_t> in = pad3(c.in, 1), k = pad3(c.kernel, 1), s = pad3(c.strides, 1),
                       d = pad3(c.dilations, 1), p = pad3(c.pads, 0), out = pad3(convOut(c), 1);
  int64_t Cg = c.Cin / c.group, Mg = c.M / c.group;
  int64_t inS = in[0] * in[1] * in[2], outS = out[0] * out[1] * out[2], kS = k[0] * k[1] * k[2];
  std::vector<double> y(static_cast<size_t>(c.N * c.M * outS));
  for (int64_t nn = 0; nn < c.N; ++nn)
    for (int64_t m = 0; m < c.M; ++m)
      for (int64_t oz = 0; oz < out[0]; ++oz)
        for (int64_t oy = 0; oy < out[1]; ++oy)
          for (int64_t ox = 0; ox < out[2]; ++ox) {
            double acc = b.empty() ? 0.0 : b[m];
            int64_t g = m / Mg;
            for (int64_t ci = 0; ci < Cg; ++ci)
              for (int64_t kz = 0; kz < k[0]; ++kz)
                for (int64_t ky = 0; ky < k[1]; ++ky)
                  for (int64_t kx = 0; kx < k[2]; ++kx) {
                    int64_t iz = oz * s[0] + kz * d[0] - p[0];
                    int64_t iy = oy * s[1] + ky * d[1] - p[1];
                    int64_t ix = ox * s[2] + kx * d[2] - p[2];
                    if (iz < 0 || iz >= in[0] || iy < 0 || iy >= in[1] || ix < 0 || ix >= in[2])
                      continue;
                    double xv = x[static_cast<size_t>((nn * c.Cin + g * Cg + ci) * inS +
                                                      (iz * in[1] + iy) * in[2] + ix)];
                    double wv = w[static_cast<size_t>((m * Cg + ci) * kS + (kz * k[1] + ky) * k[2] + kx)];
                    acc += xv * wv;
                  }
            y[static_cast<size_t>((nn * c.M + m) * outS + (oz * out[1] + oy) * out[2] + ox)] = acc;
          }
  return y;
}

void checkRandomConvs();

std::vector<int64_t> concat(std::vector<int64_t> a, const std::vector<int64_t> &b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(ConvKernel, MatchesNaiveOnRandomConfigs) {
  forEachEngine([] { checkRandomConvs(); });
}

void checkRandomConvs() {
  std::mt19937 rng(4);
  std::uniform_int_distribution<int64_t> small(1, 3);
  for (int iter = 0; iter < 120; ++iter) {
    ConvConfig c;
    size_t rank = 1 + iter % 3;
    int64_t kind = iter % 4; // 0 dense, 1 grouped, 2 depthwise, 3 depthwise with multiplier
    c.N = small(rng) % 2 + 1;
    c.group = kind == 0 ? 1 : kind == 1 ? 2 : small(rng) + 1;
    c.Cin = kind == 1 ? 2 * small(rng) : kind == 0 ? small(rng) + 1 : c.group;
    c.M = kind == 3 ? 2 * c.group : kind == 2 ? c.group : c.group * small(rng);
    for (size_t i = 0; i < rank; ++i) {
      c.kernel.push_back(small(rng));
      c.strides.push_back(1 + small(rng) % 2);
      c.dilations.push_back(iter % 5 == 0 ? 2 : 1);
      c.in.push_back(rank == 3 ? 3 + small(rng) : 4 + small(rng) * 3);
    }
    for (size_t i = 0; i < 2 * rank; ++i)
      c.pads.push_back(small(rng) - 1);
    if (iter % 9 == 0) { // pointwise fast path
      c.kernel.assign(rank, 1);
      c.strides.assign(rank, 1);
      c.pads.assign(2 * rank, 0);
    }
    bool skip = false;
    for (int64_t o : convOut(c))
      skip = skip || o <= 0;
    if (skip)
      continue;
    std::vector<float> x = randomFloats(rng, c.N * c.Cin * [&] {
      int64_t p = 1;
      for (int64_t v : c.in)
        p *= v;
      return p;
    }());
    int64_t kS = 1;
    for (int64_t v : c.kernel)
      kS *= v;
    std::vector<float> w = randomFloats(rng, c.M * (c.Cin / c.group) * kS);
    std::vector<float> b = iter % 2 ? randomFloats(rng, c.M) : std::vector<float>{};
    std::vector<TensorPtr> inputs = {floats(concat({c.N, c.Cin}, c.in), x),
                                     floats(concat({c.M, c.Cin / c.group}, c.kernel), w)};
    if (!b.empty())
      inputs.push_back(floats({c.M}, b));
    NodeRun r = runNode("Conv", 11, inputs,
                        {aInt("group", c.group), aInts("strides", c.strides),
                         aInts("dilations", c.dilations), aInts("pads", c.pads)});
    ASSERT_TRUE(r.status.ok()) << r.status.message();
    EXPECT_EQ(r.out()->dims(), concat({c.N, c.M}, convOut(c)));
    expectNear(floatValues(r.out()), naiveConv(c, x, w, b), 1e-4,
               "conv iteration " + std::to_string(iter));
  }
}

/// The 3-D geometry of a 2-D configuration (a leading depth of one), as
/// the conv algorithms take it.
nn::Window::Dims3 dims3(const ConvConfig &c) {
  const std::vector<int64_t> out = convOut(c);
  nn::Window::Dims3 g;
  for (size_t i = 0; i < 3; ++i) {
    const bool lead = i == 0;
    g.in[i] = lead ? 1 : c.in[i - 1];
    g.kernel[i] = lead ? 1 : c.kernel[i - 1];
    g.strides[i] = lead ? 1 : c.strides[i - 1];
    g.dilations[i] = lead ? 1 : c.dilations[i - 1];
    g.padBegin[i] = lead ? 0 : c.pads[i - 1];
    g.padEnd[i] = lead ? 0 : c.pads[i + 1];
    g.out[i] = lead ? 1 : out[i - 1];
  }
  return g;
}

/// Runs every configuration (explicit pads, a bias) with each GEMM engine
/// and compares with naiveConv; `maxOutputs`, when positive, is what each
/// configuration's output positions are meant to stay within.
void checkConvConfigs(const std::vector<ConvConfig> &configs, uint32_t seed,
                      const std::string &label, int64_t maxOutputs = 0) {
  forEachEngine([&] {
    std::mt19937 rng(seed);
    for (size_t i = 0; i < configs.size(); ++i) {
      const ConvConfig &c = configs[i];
      int64_t inSize = 1, kS = 1, outSize = 1;
      for (size_t d = 0; d < c.in.size(); ++d) {
        inSize *= c.in[d];
        kS *= c.kernel[d];
      }
      for (int64_t o : convOut(c))
        outSize *= o;
      if (maxOutputs > 0) {
        ASSERT_LE(outSize, maxOutputs) << label << " config " << i;
      }
      std::vector<float> x = randomFloats(rng, c.N * c.Cin * inSize);
      std::vector<float> w = randomFloats(rng, c.M * (c.Cin / c.group) * kS);
      std::vector<float> b = randomFloats(rng, c.M);
      NodeRun r = runNode("Conv", 11,
                          {floats(concat({c.N, c.Cin}, c.in), x),
                           floats(concat({c.M, c.Cin / c.group}, c.kernel), w), floats({c.M}, b)},
                          {aInt("group", c.group), aInts("strides", c.strides),
                           aInts("dilations", c.dilations), aInts("pads", c.pads)});
      ASSERT_TRUE(r.status.ok()) << r.status.message();
      EXPECT_EQ(r.out()->dims(), concat({c.N, c.M}, convOut(c)));
      expectNear(floatValues(r.out()), naiveConv(c, x, w, b), 1e-4,
                 label + " config " + std::to_string(i));
    }
  });
}

/// Float 2-D convolutions whose taps mostly read padding take one product
/// per tap over the outputs it reads input for (convTapRegions): DeepLab's
/// ASPP (3x3 at dilation 12 on 14x14), a kernel as large as a small plane,
/// strides of 2, asymmetric pads, several images, output channels off the
/// GEMM's panel width; the same bits on one and three threads. Each
/// configuration is checked to take that path.
TEST(ConvKernel, TapRegionsMatchNaive) {
  const std::vector<ConvConfig> configs = {
      {1, 40, 24, 1, {14, 14}, {3, 3}, {1, 1}, {12, 12}, {12, 12, 12, 12}},
      {2, 9, 37, 1, {9, 11}, {3, 3}, {1, 1}, {6, 8}, {6, 8, 6, 8}},
      {1, 16, 20, 1, {6, 6}, {7, 7}, {1, 1}, {1, 1}, {6, 6, 6, 6}},
      {1, 12, 33, 1, {15, 13}, {3, 3}, {2, 2}, {9, 9}, {9, 7, 10, 9}},
      {1, 8, 17, 1, {5, 40}, {5, 3}, {1, 2}, {4, 20}, {8, 20, 8, 20}}};
  for (const ConvConfig &c : configs)
    EXPECT_TRUE(nn::tapRegionsFit(dims3(c), c.group))
        << shapeString(c.in) << " " << shapeString(c.kernel);
  checkConvConfigs(configs, 61, "tap regions");
  std::mt19937 rng(62);
  const ConvConfig &c = configs[0];
  std::vector<float> x = randomFloats(rng, c.Cin * 14 * 14), w = randomFloats(rng, c.M * c.Cin * 9);
  auto run = [&](int threads) {
    setThreadCount(threads);
    NodeRun r = runNode("Conv", 11, {floats({1, c.Cin, 14, 14}, x), floats({c.M, c.Cin, 3, 3}, w)},
                        {aInts("dilations", c.dilations), aInts("pads", c.pads)});
    EXPECT_TRUE(r.status.ok()) << r.status.message();
    return floatValues(r.out());
  };
  const std::vector<float> one = run(1), three = run(3);
  EXPECT_EQ(std::memcmp(one.data(), three.data(), one.size() * sizeof(float)), 0);
  setThreadCount(1);
}

/// 2-D float convolutions with 9 to 64 outputs per image, or strided (or
/// on rows the direct product covers poorly) with up to 1024, take the
/// transposed product over the column matrix
/// (convPositionRows): 3x3 at strides 1 and 2 (ResNet's last stage), 5x5,
/// 1x3 and 3x1, 7x7 on a plane as small as its taps (most taps read
/// padding), dilation, asymmetric pads, several images, output channels
/// off the panel width, planes whose last row panel holds one position
/// (49) or four (64), a stride of 8 (a tap's positions spread beyond the
/// loads that take them: gathered), strided planes of 182 and 1024
/// positions (cut by row panels of positions on several threads), and a
/// 1x7 kernel on 17-wide rows at unit strides (Inception's). The same bits
/// on one, two and three threads (the last five products are large enough
/// to be cut). Each configuration is checked to take that path, and
/// five near them not to.
TEST(ConvKernel, PositionRowsMatchNaive) {
  const std::vector<ConvConfig> configs = {
      {1, 64, 72, 1, {7, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
      {2, 48, 72, 1, {14, 14}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}},
      {1, 24, 65, 1, {8, 8}, {5, 5}, {1, 1}, {1, 1}, {2, 2, 2, 2}},
      {1, 32, 64, 1, {6, 9}, {1, 3}, {1, 1}, {1, 1}, {0, 1, 0, 1}},
      {1, 17, 96, 1, {9, 5}, {3, 1}, {1, 1}, {1, 1}, {1, 0, 1, 0}},
      {1, 16, 80, 1, {7, 7}, {7, 7}, {1, 1}, {1, 1}, {3, 3, 3, 3}},
      {1, 20, 70, 1, {11, 11}, {3, 3}, {1, 1}, {2, 2}, {0, 1, 1, 0}},
      {1, 16, 64, 1, {60, 60}, {3, 3}, {8, 8}, {1, 1}, {1, 1, 1, 1}},
      {1, 40, 65, 1, {3, 3}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
      {1, 128, 100, 1, {14, 14}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}},
      {2, 96, 160, 1, {8, 8}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
      {1, 32, 136, 1, {27, 28}, {3, 3}, {2, 2}, {1, 1}, {0, 1, 1, 0}},
      {2, 24, 128, 1, {64, 64}, {1, 1}, {2, 2}, {1, 1}, {0, 0, 0, 0}},
      {1, 40, 144, 1, {17, 17}, {1, 7}, {1, 1}, {1, 1}, {0, 3, 0, 3}}};
  for (const ConvConfig &c : configs) {
    const nn::Window::Dims3 g = dims3(c);
    EXPECT_TRUE(nn::positionRowsFit(g, c.Cin, c.M, c.group) && !nn::tapRegionsFit(g, c.group))
        << shapeString(c.in) << " " << shapeString(c.kernel);
  }
  // And those it leaves to the other algorithms: 32 output channels; 196
  // outputs of a 3x3 kernel at unit strides (Winograd's); a 7x7 kernel at
  // unit strides on 32-wide rows (the direct product's); strided with 64
  // output channels; two groups; a kernel whose plan would be too large
  // (60x60 taps on 64 outputs).
  const std::vector<ConvConfig> others = {
      {1, 64, 32, 1, {7, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
      {1, 64, 128, 1, {14, 14}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
      {1, 64, 128, 1, {32, 32}, {7, 7}, {1, 1}, {1, 1}, {3, 3, 3, 3}},
      {1, 64, 64, 1, {56, 56}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}},
      {1, 64, 128, 2, {7, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
      {1, 16, 64, 1, {67, 67}, {60, 60}, {1, 1}, {1, 1}, {0, 0, 0, 0}}};
  for (const ConvConfig &c : others)
    EXPECT_FALSE(nn::positionRowsFit(dims3(c), c.Cin, c.M, c.group))
        << shapeString(c.in) << " " << shapeString(c.kernel) << " to " << c.M;
  checkConvConfigs(configs, 63, "position rows", 1024);
  forEachEngine([&] {
    std::mt19937 rng(64);
    for (const ConvConfig &c : configs) {
      const int64_t inSize = c.in[0] * c.in[1], kS = c.kernel[0] * c.kernel[1];
      const std::vector<float> x = randomFloats(rng, c.N * c.Cin * inSize),
                               w = randomFloats(rng, c.M * c.Cin * kS);
      auto run = [&](int threads) {
        setThreadCount(threads);
        NodeRun r = runNode("Conv", 11,
                            {floats(concat({c.N, c.Cin}, c.in), x),
                             floats(concat({c.M, c.Cin}, c.kernel), w)},
                            {aInts("strides", c.strides), aInts("dilations", c.dilations),
                             aInts("pads", c.pads)});
        EXPECT_TRUE(r.status.ok()) << r.status.message();
        return floatValues(r.out());
      };
      const std::vector<float> one = run(1), two = run(2), three = run(3);
      EXPECT_EQ(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)), 0)
          << shapeString(c.in) << " " << shapeString(c.kernel);
      EXPECT_EQ(std::memcmp(one.data(), three.data(), one.size() * sizeof(float)), 0)
          << shapeString(c.in) << " " << shapeString(c.kernel);
    }
    setThreadCount(1);
  });
}

/// Unit-stride 1-D/2-D float convolutions take the direct product over
/// padded planes (convProductDirect): output channels off the tile height
/// (13, 25), rows narrower than a tile (several rows per tile) and wider
/// (tiles crossing a row end), dilation, asymmetric pads, 1-D, several
/// images and groups, planes large enough to be cut into bands of output
/// rows on one thread (the 7th and 8th; the 8th with a halo of eight
/// padded rows), rows cut into half tiles on every engine (64, 32 and 46
/// wide, 2-D and 1-D; at 46 the last half of a row is short and the last
/// tile has one half), and K deeper than one slice (240 channels x 9 taps)
/// with short halves, whose stores add to the first slice's.
TEST(ConvKernel, DirectPathMatchesNaive) {
  checkConvConfigs({{1, 40, 13, 1, {11, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
                    {2, 7, 25, 1, {37, 45}, {3, 3}, {1, 1}, {1, 1}, {1, 0, 2, 1}},
                    {1, 6, 12, 1, {20, 70}, {3, 5}, {1, 1}, {2, 1}, {2, 2, 2, 2}},
                    {1, 16, 24, 2, {33, 31}, {3, 3}, {1, 1}, {1, 2}, {1, 2, 1, 2}},
                    {2, 5, 9, 1, {100}, {7}, {1}, {1}, {3, 3}},
                    {1, 3, 30, 1, {5, 3}, {2, 2}, {1, 1}, {1, 1}, {0, 0, 0, 0}},
                    {1, 8, 14, 1, {258, 259}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
                    {1, 64, 20, 1, {30, 50}, {5, 3}, {1, 1}, {2, 1}, {4, 1, 4, 1}},
                    {1, 5, 14, 1, {9, 64}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
                    {2, 3, 26, 1, {4, 32}, {3, 5}, {1, 1}, {1, 1}, {1, 2, 1, 2}},
                    {1, 4, 7, 1, {64}, {3}, {1}, {1}, {1, 1}},
                    {1, 6, 15, 1, {9, 46}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
                    {1, 240, 13, 1, {5, 30}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}}},
                   41, "direct conv");
}

/// Strides of 2 take the direct product too when rows of half tiles waste
/// little (phase-split padded planes, output rows two padded rows apart):
/// mlsd's stem geometry, strides in one dim only, a dilated kernel, groups
/// and several images; 49 outputs a row runs direct on the 8- and 4-wide
/// halves of AVX2 and the baseline and through im2col on AVX-512.
TEST(ConvKernel, DirectPathStridedMatchesNaive) {
  checkConvConfigs({{1, 4, 32, 1, {21, 64}, {3, 3}, {2, 2}, {1, 1}, {0, 0, 1, 1}},
                    {1, 3, 13, 1, {9, 97}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}},
                    {2, 6, 10, 2, {12, 126}, {5, 3}, {1, 2}, {1, 1}, {2, 1, 2, 1}},
                    {1, 5, 7, 1, {17, 64}, {3, 3}, {2, 2}, {2, 2}, {2, 2, 2, 2}},
                    {1, 4, 9, 1, {11, 48}, {3, 3}, {2, 1}, {1, 1}, {1, 1, 1, 1}}},
                   43, "strided direct conv");
}

/// Depthwise rows with kernel taps in the padding rows skip those taps
/// (short planes, tall kernels): rows of a 2-row plane under a 5x5 kernel,
/// a stride-2 plane padded at its ends only (mlsd's layers; its column
/// phases are long enough for the vector gathers),
/// rows whose every tap is in the padding (bias alone), a channel
/// multiplier with strides and dilations, on every engine.
TEST(ConvKernel, DepthwiseRowsSkippingPaddingTapsMatchNaive) {
  forEachEngine([] {
    checkConvConfigs({{1, 8, 8, 8, {2, 96}, {5, 5}, {1, 1}, {1, 1}, {2, 2, 2, 2}},
                      {1, 6, 6, 6, {20, 71}, {3, 3}, {2, 2}, {1, 1}, {0, 0, 1, 1}},
                      {1, 4, 4, 4, {2, 70}, {3, 3}, {1, 1}, {1, 1}, {3, 1, 3, 1}},
                      {2, 3, 6, 3, {5, 80}, {3, 3}, {2, 1}, {2, 1}, {2, 1, 1, 1}}},
                     47, "depthwise conv");
  });
}

/// Depthwise rows of 3 taps at a column stride of 2 read straight from the
/// input rows (depthwiseStride2Row on AVX-512; the padded path on the other
/// engines): pads of 0, 1 and 2 on the left (the first 16 outputs then read
/// left of the row), rows whose last steps read past the row end or whose
/// last output's last tap is the row's last column (64 and 160 wide), fewer
/// than 16 outputs, an output width of 100 (a step of 64, then of 16),
/// kernel rows in the top and bottom padding (up to 7 rows), unit and
/// dilated row strides, and a channel multiplier; fused Relu on one.
TEST(ConvKernel, DepthwiseStride2RowsFromTheInputMatchNaive) {
  checkConvConfigs({{1, 4, 4, 4, {9, 160}, {3, 3}, {2, 2}, {1, 1}, {0, 0, 1, 1}},
                    {1, 3, 3, 3, {10, 33}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}},
                    {2, 2, 4, 2, {7, 200}, {5, 3}, {1, 2}, {2, 1}, {2, 1, 2, 1}},
                    {1, 2, 2, 2, {6, 140}, {3, 3}, {2, 2}, {1, 1}, {1, 2, 1, 2}},
                    {1, 2, 2, 2, {3, 7}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}},
                    {1, 2, 2, 2, {4, 130}, {7, 3}, {3, 2}, {1, 1}, {3, 1, 3, 1}},
                    {1, 5, 5, 5, {16, 128}, {3, 3}, {2, 2}, {1, 1}, {1, 0, 1, 0}},
                    {1, 3, 3, 3, {5, 64}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}},
                    {1, 2, 2, 2, {4, 160}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}}},
                   53, "stride-2 depthwise conv");
}

/// Unit-stride depthwise rows of 3 taps and at least 80 outputs, of inputs
/// of at least 64K elements, read straight from the input rows too
/// (depthwiseStride1Row on AVX-512): pads
/// of 0, 1 and 2 on the left, right pads past the row end (3), steps of 64
/// with and without checks, kernel rows in the padding (5 and 7 rows,
/// dilated, row stride 2), a channel multiplier, several images.
TEST(ConvKernel, DepthwiseStride1RowsFromTheInputMatchNaive) {
  // Inputs of at least kFromInputMinElements (64K) elements, and one
  // (2x130x260) under the old 512K bound.
  checkConvConfigs({{1, 3, 3, 3, {2200, 80}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
                    {1, 2, 2, 2, {2050, 130}, {3, 3}, {1, 1}, {1, 1}, {0, 0, 0, 0}},
                    {1, 2, 4, 2, {2700, 100}, {5, 3}, {1, 1}, {2, 1}, {4, 2, 4, 2}},
                    {2, 2, 2, 2, {1360, 97}, {3, 3}, {1, 1}, {1, 1}, {1, 0, 1, 3}},
                    {1, 2, 2, 2, {1320, 200}, {7, 3}, {2, 1}, {1, 1}, {3, 1, 3, 1}},
                    {1, 2, 2, 2, {130, 260}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}}},
                   59, "stride-1 depthwise conv");
}

/// 3x3 convolutions at unit strides with 16 or more channels in and out run
/// as Winograd F(2x2, 3x3) products (convWinograd): planes of odd and even
/// sizes (a last row or column of tiles half outside the output), pads of
/// 0, 1 and 2 (asymmetric), output channel counts off the direct product's
/// panels, several images, planes cut into several chunks of tile rows
/// (two rows of 37 tiles, 70 columns rounded up to whole column tiles), on
/// every engine (the transforms have an AVX-512 form and a portable one);
/// and just outside: 15 channels, 2x2 kernels, strides of 2 (the direct
/// product).
TEST(ConvKernel, WinogradMatchesNaive) {
  checkConvConfigs({{1, 16, 16, 1, {8, 8}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
                    {2, 17, 40, 1, {9, 13}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
                    {1, 33, 19, 1, {31, 50}, {3, 3}, {1, 1}, {1, 1}, {0, 2, 1, 0}},
                    {1, 16, 24, 1, {24, 74}, {3, 3}, {1, 1}, {1, 1}, {2, 2, 2, 2}},
                    {1, 20, 18, 1, {140, 70}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
                    {1, 15, 16, 1, {12, 12}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
                    {1, 16, 16, 1, {12, 12}, {2, 2}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
                    {1, 16, 16, 1, {13, 13}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}}},
                   71, "winograd conv");
}

/// Narrow 3x3 depthwise planes at unit strides are read straight from the
/// input several rows at a time (depthwiseNarrowRows on AVX-512; the padded
/// path on the other engines): output widths from 1 to 64 around the
/// 16-lane vectors (one to four a row), pads of 0 and 1 on the left and up
/// to 2 on the right (inputs of up to 66 columns: five vectors), top and
/// bottom pads of 0 to 2, heights of 1 to 11 (groups of rows and the rows
/// left over), a channel multiplier, several images.
TEST(ConvKernel, DepthwiseNarrowPlanesMatchNaive) {
  checkConvConfigs({{1, 3, 3, 3, {11, 1}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
                    {1, 3, 3, 3, {9, 5}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
                    {2, 4, 4, 4, {7, 16}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
                    {1, 4, 8, 4, {10, 17}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
                    {1, 5, 5, 5, {3, 32}, {3, 3}, {1, 1}, {1, 1}, {0, 1, 2, 1}},
                    {1, 5, 5, 5, {32, 32}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
                    {1, 3, 3, 3, {6, 33}, {3, 3}, {1, 1}, {1, 1}, {2, 0, 0, 2}},
                    {1, 3, 3, 3, {40, 40}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
                    {1, 3, 3, 3, {5, 49}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
                    {1, 2, 2, 2, {4, 64}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
                    {1, 2, 2, 2, {3, 66}, {3, 3}, {1, 1}, {1, 1}, {0, 0, 0, 0}},
                    {1, 2, 2, 2, {1, 63}, {3, 3}, {1, 1}, {1, 1}, {1, 0, 1, 2}}},
                   61, "narrow depthwise conv");
}

/// depthwiseNarrowRows computes each output as multiTapRow does over a
/// zero-padded copy of the plane (the same taps, in the same order, from
/// zero; then the bias, then the clamp): the same bits, for whole planes
/// and for bands of rows, widths of one to four vectors, left pads of 0
/// and 1.
TEST(ConvKernel, DepthwiseNarrowRowsAreTheSumsOfThePaddedPath) {
  if (!depthwiseRowsAvailable()) {
    // Only AVX-512 has the kernel; elsewhere it must decline.
    std::vector<float> plane(16), w(9), y(16);
    EXPECT_FALSE(
        depthwiseNarrowRows(0, 1, 16, 1, 16, 1, 1, plane.data(), w.data(), 0.0f, y.data()));
    return;
  }
  std::mt19937 rng(67);
  const StoreClamp clamp{-0.5f, 0.75f};
  for (int64_t ow : {1, 7, 16, 23, 32, 40, 47, 64})
    for (int64_t padLeft : {0, 1})
      for (int64_t oh : {1, 5, 12}) {
        const int64_t padTop = 1, ih = oh, iw = ow + 2 - 2 * padLeft;
        // Input columns iw: outputs ox read ox - padLeft + kx, the right
        // side padded by padLeft too.
        ASSERT_TRUE(depthwiseNarrowFits(ow, iw, padLeft)) << ow << " " << iw;
        std::vector<float> plane = randomFloats(rng, ih * iw), w = randomFloats(rng, 9);
        const float bias = randomFloats(rng, 1)[0];
        // The padded copy: rows -1 .. ih, columns -padLeft .. ow + 1 - padLeft.
        const int64_t pitch = ow + 2;
        std::vector<float> padded(static_cast<size_t>((ih + 2) * pitch), 0.0f);
        for (int64_t r = 0; r < ih; ++r)
          for (int64_t c = 0; c < iw; ++c)
            padded[static_cast<size_t>((r + 1) * pitch + c + padLeft)] = plane[r * iw + c];
        for (const StoreClamp *cl : {static_cast<const StoreClamp *>(nullptr), &clamp}) {
          std::vector<float> want(static_cast<size_t>(oh * ow));
          for (int64_t oy = 0; oy < oh; ++oy) {
            // Taps in rows of the padding are left out, as the padded path
            // leaves them out.
            const float *src[9];
            float wk[9];
            int live = 0;
            for (int64_t ky = 0; ky < 3; ++ky) {
              const int64_t iy = oy - padTop + ky;
              if (iy < 0 || iy >= ih)
                continue;
              for (int64_t kx = 0; kx < 3; ++kx) {
                src[live] = padded.data() + (iy + 1) * pitch + kx;
                wk[live++] = w[static_cast<size_t>(3 * ky + kx)];
              }
            }
            multiTapRow(ow, live, src, wk, bias, want.data() + oy * ow, cl);
          }
          for (int64_t split : {int64_t{0}, oh / 2}) {
            std::vector<float> got(static_cast<size_t>(oh * ow), -7.0f);
            ASSERT_TRUE(depthwiseNarrowRows(0, split, ow, ih, iw, padTop, padLeft, plane.data(),
                                            w.data(), bias, got.data(), cl));
            ASSERT_TRUE(depthwiseNarrowRows(split, oh, ow, ih, iw, padTop, padLeft, plane.data(),
                                            w.data(), bias, got.data() + split * ow, cl));
            EXPECT_EQ(std::memcmp(got.data(), want.data(), want.size() * sizeof(float)), 0)
                << "ow " << ow << " padLeft " << padLeft << " oh " << oh << " split " << split
                << (cl ? " clamped" : "");
          }
        }
      }
  // Outside the kernel's reach: rows of more than four vectors, inputs of
  // more than five, left pads of 2.
  EXPECT_FALSE(depthwiseNarrowFits(65, 67, 1));
  EXPECT_FALSE(depthwiseNarrowFits(64, 81, 0));
  EXPECT_FALSE(depthwiseNarrowFits(32, 36, 2));
}

/// One plane of a k x k depthwise convolution at stride s (both ways), as
/// the padded path computes it: the taps of the kernel rows inside the
/// plane, in order, as fused multiply-adds from zero (zeros left and right
/// of the rows), then the bias, then the clamp when given.
std::vector<float> depthwiseReference(int64_t k, const std::vector<float> &plane, int64_t ih,
                                      int64_t iw, const std::vector<float> &w, float bias,
                                      const StoreClamp *clamp, int64_t oh, int64_t ow, int64_t s,
                                      int64_t padTop, int64_t padLeft) {
  std::vector<float> out(static_cast<size_t>(oh * ow));
  for (int64_t oy = 0; oy < oh; ++oy)
    for (int64_t ox = 0; ox < ow; ++ox) {
      float acc = 0.0f;
      for (int64_t ky = 0; ky < k; ++ky) {
        const int64_t iy = s * oy - padTop + ky;
        if (iy < 0 || iy >= ih)
          continue; // a row of the padding: left out, as there
        for (int64_t kx = 0; kx < k; ++kx) {
          const int64_t ix = s * ox - padLeft + kx;
          const float v = ix >= 0 && ix < iw ? plane[static_cast<size_t>(iy * iw + ix)] : 0.0f;
          acc = std::fma(w[static_cast<size_t>(k * ky + kx)], v, acc);
        }
      }
      float v = acc + bias;
      if (clamp) {
        v = v < clamp->lo ? clamp->lo : v;
        v = v > clamp->hi ? clamp->hi : v;
      }
      out[static_cast<size_t>(oy * ow + ox)] = v;
    }
  return out;
}

/// depthwiseStride1Rows, depthwiseStride1Rows5 and depthwiseStride2Rows (a
/// band of a 3x3 or 5x5 plane a call) give the padded path's bits: at unit
/// strides rows of one to nine vectors and between, in strips of up to four
/// and groups of rows (heights leaving every remainder of a group), right
/// pads of 0 to 2 (3x3) and 0 to 4 (5x5); at strides of 2 widths of one to
/// seven vectors and between, inputs that end on the last tap's column or
/// one before it, top pads of 0 and 1; left pads of 0 and 1 (0 to 2 for
/// 5x5), with and without a clamp, each plane in two bands.
TEST(ConvKernel, DepthwisePlaneBandsAreTheSumsOfThePaddedPath) {
  if (!depthwiseRowsAvailable()) {
    std::vector<float> plane(64), w(9), y(64);
    EXPECT_FALSE(depthwiseStride1Rows(0, 1, 8, 8, 8, 1, 1, plane.data(), w.data(), 0.0f,
                                      y.data()));
    EXPECT_FALSE(depthwiseStride2Rows(0, 1, 4, 8, 8, 1, 1, plane.data(), w.data(), 0.0f,
                                      y.data()));
    std::vector<float> w5(25);
    EXPECT_FALSE(depthwiseStride1Rows5(0, 1, 8, 8, 8, 2, 2, plane.data(), w5.data(), 0.0f,
                                       y.data()));
    return;
  }
  std::mt19937 rng(83);
  const StoreClamp clamp{-0.5f, 0.75f};
  struct Case {
    int64_t k, s, oh, ow, ih, iw, padTop, padLeft;
  };
  std::vector<Case> cases;
  for (int64_t ow : {1, 7, 16, 23, 32, 40, 47, 64, 65, 80, 100, 112, 129, 144})
    for (int64_t padLeft : {0, 1})
      for (int64_t padRight : {0, 2})
        for (int64_t oh : {1, 5, 7, 10, 12}) {
          const int64_t iw = ow + 2 - padLeft - padRight;
          if (iw >= 1)
            cases.push_back({3, 1, oh, ow, oh, iw, 1, padLeft});
        }
  for (int64_t ow : {1, 14, 16, 28, 33, 56, 64, 70, 112})
    for (int64_t padLeft : {0, 1, 2})
      for (int64_t padRight : {0, 4})
        for (int64_t oh : {1, 5, 9, 14}) {
          const int64_t iw = ow + 4 - padLeft - padRight;
          if (iw >= 1)
            cases.push_back({5, 1, oh, ow, oh, iw, 2, padLeft});
        }
  for (int64_t ow : {1, 7, 16, 17, 28, 56, 64, 65, 100})
    for (int64_t padLeft : {0, 1})
      for (int64_t rightEdge : {0, 1})
        for (int64_t padTop : {0, 1})
          cases.push_back(
              {3, 2, 6, ow, 12 - padTop, 2 * ow - padLeft + rightEdge, padTop, padLeft});
  for (const Case &c : cases) {
    std::vector<float> plane = randomFloats(rng, c.ih * c.iw), w = randomFloats(rng, c.k * c.k);
    const float bias = randomFloats(rng, 1)[0];
    for (const StoreClamp *cl : {static_cast<const StoreClamp *>(nullptr), &clamp}) {
      const std::vector<float> want = depthwiseReference(c.k, plane, c.ih, c.iw, w, bias, cl,
                                                         c.oh, c.ow, c.s, c.padTop, c.padLeft);
      auto rows = c.k == 5 ? depthwiseStride1Rows5
                  : c.s == 1 ? depthwiseStride1Rows
                             : depthwiseStride2Rows;
      const int64_t split = c.oh / 2;
      std::vector<float> got(want.size(), -7.0f);
      ASSERT_TRUE(rows(0, split, c.ow, c.ih, c.iw, c.padTop, c.padLeft, plane.data(), w.data(),
                       bias, got.data(), cl));
      ASSERT_TRUE(rows(split, c.oh, c.ow, c.ih, c.iw, c.padTop, c.padLeft, plane.data(),
                       w.data(), bias, got.data() + split * c.ow, cl));
      EXPECT_EQ(std::memcmp(got.data(), want.data(), want.size() * sizeof(float)), 0)
          << c.k << "x" << c.k << " stride " << c.s << " ow " << c.ow << " padLeft " << c.padLeft << " iw " << c.iw
          << " oh " << c.oh << " padTop " << c.padTop << (cl ? " clamped" : "");
    }
  }
  // Left pads of 2 (3x3) and 3 (5x5) are the row kernels'.
  std::vector<float> plane(64), w(9), y(64);
  EXPECT_FALSE(
      depthwiseStride1Rows(0, 1, 8, 8, 8, 1, 2, plane.data(), w.data(), 0.0f, y.data()));
  EXPECT_FALSE(
      depthwiseStride2Rows(0, 1, 4, 8, 8, 1, 2, plane.data(), w.data(), 0.0f, y.data()));
  std::vector<float> w5(25);
  EXPECT_FALSE(
      depthwiseStride1Rows5(0, 1, 8, 8, 8, 2, 3, plane.data(), w5.data(), 0.0f, y.data()));
}

/// Depthwise convolutions with narrow output rows and no 3x3 row kernel run
/// sixteen channels at a time, channels last, on AVX-512 (depthwiseBlocked):
/// each output is the bits of the row kernels (the AVX2 family, which does
/// not take that path) and near the definition: channel counts off and on
/// the block (1, 15, 16, 17, 40), strides 1 to 3, dilations, asymmetric and
/// large pads, 3x3 to 7x7 and one-sided kernels, widths 1 to 30 (rows of 3,
/// 5 and 7 wide kernels at column strides 1 and 2 load each input pixel once
/// per kernel row), several images.
TEST(ConvKernel, DepthwiseChannelBlocksAreTheBitsOfTheRowKernels) {
  const std::vector<ConvConfig> configs = {
      {1, 16, 16, 16, {7, 7}, {5, 5}, {1, 1}, {1, 1}, {2, 2, 2, 2}},
      {1, 17, 17, 17, {14, 14}, {5, 5}, {2, 2}, {1, 1}, {1, 2, 2, 1}},
      {2, 15, 15, 15, {9, 13}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}},
      {1, 40, 40, 40, {14, 14}, {3, 3}, {2, 2}, {1, 1}, {0, 0, 1, 1}},
      {1, 1, 1, 1, {5, 3}, {3, 3}, {1, 1}, {2, 2}, {2, 2, 2, 2}},
      {1, 20, 20, 20, {12, 32}, {7, 7}, {1, 1}, {1, 1}, {3, 3, 3, 3}},
      {1, 18, 18, 18, {10, 11}, {3, 3}, {3, 3}, {2, 2}, {2, 0, 3, 4}},
      {1, 16, 16, 16, {6, 6}, {1, 3}, {1, 2}, {1, 1}, {0, 1, 0, 1}},
      {1, 33, 33, 33, {8, 1}, {3, 1}, {1, 1}, {1, 1}, {1, 0, 1, 0}},
      {2, 24, 24, 24, {17, 17}, {5, 5}, {2, 2}, {1, 1}, {2, 2, 2, 2}},
      {1, 19, 19, 19, {28, 30}, {5, 5}, {1, 1}, {1, 1}, {2, 2, 2, 2}},
      {1, 21, 21, 21, {56, 55}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}},
      {1, 16, 16, 16, {9, 40}, {5, 7}, {1, 2}, {1, 1}, {2, 3, 2, 3}},
      {2, 40, 40, 40, {7, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}}};
  std::string original = gemmEngineName();
  std::mt19937 rng(71);
  for (size_t i = 0; i < configs.size(); ++i) {
    const ConvConfig &c = configs[i];
    std::vector<float> x = randomFloats(rng, c.N * c.Cin * c.in[0] * c.in[1]);
    std::vector<float> w = randomFloats(rng, c.M * c.kernel[0] * c.kernel[1]);
    std::vector<float> b = randomFloats(rng, c.M);
    std::vector<std::vector<float>> outs;
    for (const char *engine : {"avx2", "avx512"}) {
      if (!setGemmEngine(engine))
        continue;
      NodeRun r = runNode("Conv", 11,
                          {floats(concat({c.N, c.Cin}, c.in), x),
                           floats(concat({c.M, 1}, c.kernel), w), floats({c.M}, b)},
                          {aInt("group", c.group), aInts("strides", c.strides),
                           aInts("dilations", c.dilations), aInts("pads", c.pads)});
      ASSERT_TRUE(r.status.ok()) << r.status.message();
      ASSERT_EQ(r.out()->dims(), concat({c.N, c.M}, convOut(c)));
      outs.push_back(floatValues(r.out()));
      expectNear(outs.back(), naiveConv(c, x, w, b), 1e-4,
                 std::string(engine) + " blocked depthwise config " + std::to_string(i));
    }
    if (outs.size() == 2) {
      ASSERT_EQ(outs[0].size(), outs[1].size());
      EXPECT_EQ(std::memcmp(outs[0].data(), outs[1].data(), outs[0].size() * sizeof(float)), 0)
          << "blocked depthwise config " << i << " differs from the row kernels";
    }
  }
  setGemmEngine(original.c_str());
  // Wide rows, unit-stride 3x3 kernels on rows of 9 outputs and more,
  // channel multipliers and 3-D windows stay on the row kernels.
  nn::Window::Dims3 g{};
  g.in = {1, 7, 7}, g.kernel = {1, 5, 5}, g.out = {1, 7, 7}, g.strides = {1, 1, 1},
  g.dilations = {1, 1, 1};
  if (gemmEngineIsAvx512()) {
    EXPECT_TRUE(nn::depthwiseBlockedFits(g, 8, 8, 8));
  }
  g.kernel = {1, 3, 3};
  g.out = {1, 7, 9}; // unit-stride 3x3 rows from 9 outputs on
  EXPECT_FALSE(nn::depthwiseBlockedFits(g, 8, 8, 8));
  g.out = {1, 7, 7};
  g.kernel = {1, 5, 5};
  EXPECT_FALSE(nn::depthwiseBlockedFits(g, 8, 16, 8));
  g.out = {1, 7, 257};
  EXPECT_FALSE(nn::depthwiseBlockedFits(g, 8, 8, 8));
  g.out = {2, 7, 7};
  EXPECT_FALSE(nn::depthwiseBlockedFits(g, 8, 8, 8));
}

/// Pointwise convolutions on planes of 9 to 64 positions with at least a
/// GEMM panel of output channels per group run as the transposed product
/// (pointwiseTransposed): 7x7 and 8x8 planes, a 3x3 plane (just above the
/// few-column path), output channels off the panel (33, 40), deep K, groups,
/// several images, and a strided 1x1 kernel gathered to a 7x7 plane; each
/// against the definition on every engine.
TEST(ConvKernel, PointwiseTransposedMatchesNaive) {
  EXPECT_TRUE(nn::pointwiseIsTransposed(64, 16, 49));
  EXPECT_FALSE(nn::pointwiseIsTransposed(64, 16, 8));   // few columns
  EXPECT_FALSE(nn::pointwiseIsTransposed(64, 16, 65));  // the direct product's tiles fill
  EXPECT_FALSE(nn::pointwiseIsTransposed(4, 16, 49));   // less than a panel of channels
  checkConvConfigs({{1, 64, 128, 1, {7, 7}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}},
                    {2, 40, 33, 1, {8, 8}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}},
                    {1, 300, 40, 1, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}},
                    {2, 64, 96, 2, {7, 7}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}},
                    {1, 24, 64, 1, {14, 14}, {1, 1}, {2, 2}, {1, 1}, {0, 0, 0, 0}},
                    // Reductions summed in two parts of K (pointwiseKParts).
                    {1, 960, 160, 1, {7, 7}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}},
                    {2, 577, 96, 1, {7, 7}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}}},
                   83, "transposed pointwise conv");
  EXPECT_EQ(nn::pointwiseKParts(160, 960, 49), 2);
  EXPECT_EQ(nn::pointwiseKParts(160, 319, 49), 1); // reduces less than twofold
}

/// Depthwise planes 64 to 255 wide and at least four kernels tall run as one
/// fused row of the padded pitch (kFuseWideWidth): unit and dilated rows,
/// a channel multiplier, asymmetric pads, against the naive definition on
/// every engine; and planes just outside (too short, too wide).
TEST(ConvKernel, DepthwiseWidePlanesAsOneRowMatchNaive) {
  checkConvConfigs({{1, 5, 5, 5, {40, 100}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
                    {1, 4, 8, 4, {30, 70}, {3, 3}, {1, 1}, {2, 2}, {2, 1, 2, 1}},
                    {2, 3, 3, 3, {24, 130}, {5, 5}, {1, 1}, {1, 1}, {2, 0, 2, 3}},
                    {1, 3, 3, 3, {11, 100}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
                    {1, 2, 2, 2, {20, 300}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}}},
                   53, "wide depthwise conv");
}

/// Pointwise convolutions that run as a direct product over the input
/// planes (fewer output than input channels, or at most 16 inputs): column
/// counts off the tile (a GEMM tail) and below one tile (the GEMM alone),
/// a plane cut into many pieces, K deeper than one slice, groups, several
/// images, an output count off the row tile; and an expansion (one GEMM);
/// a 14x14 plane, whose last 4 columns take a tile of one half (the kernel
/// that computes only its first half), with 37 outputs (a panel of one row).
TEST(ConvKernel, PointwiseDirectMatchesNaive) {
  checkConvConfigs({{1, 40, 24, 1, {15, 37}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}},
                    {2, 16, 40, 1, {9, 11}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}},
                    {1, 30, 13, 1, {5, 5}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}},
                    {1, 12, 7, 1, {96, 100}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}},
                    {1, 300, 20, 1, {6, 11}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}},
                    {2, 64, 26, 2, {7, 9}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}},
                    {1, 9, 14, 1, {200}, {1}, {1}, {1}, {0, 0}},
                    {1, 20, 50, 1, {12, 12}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}},
                    {1, 96, 37, 1, {14, 14}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}},
                    // Reductions summed in two parts of K (pointwiseKParts),
                    // K odd: parts of 150 and 151 channels.
                    {1, 384, 64, 1, {14, 14}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}},
                    {2, 301, 100, 1, {13, 17}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}},
                    // Two groups, each summed in two parts.
                    {1, 512, 128, 2, {14, 14}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}}},
                   43, "pointwise conv");
  EXPECT_EQ(nn::pointwiseKParts(64, 384, 196), 2);
  EXPECT_EQ(nn::pointwiseKParts(64, 384, 4096), 1); // a plane split by positions
  EXPECT_EQ(nn::pointwiseKParts(8, 64, 196), 1);    // not worth splitting
}

/// gatherEvenFloats and maxEvenFloats (the column phases of stride-2
/// convolutions and poolings) against their definitions for every length
/// around the vector steps, on every engine; the source ends at the last
/// element read (a guard after it must not change anything).
TEST(ConvKernel, EvenColumnGathersMatchTheirDefinition) {
  forEachEngine([] {
    std::mt19937 rng(5);
    for (int64_t n = 1; n <= 70; ++n) {
      std::vector<float> src = randomFloats(rng, 2 * n - 1), y = randomFloats(rng, n + 1);
      const std::vector<float> old = y;
      std::vector<float> m = y;
      const float guard = y[static_cast<size_t>(n)];
      gatherEvenFloats(src.data(), n, y.data());
      maxEvenFloats(src.data(), n, m.data());
      for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
        ASSERT_EQ(y[i], src[2 * i]) << "n " << n;
        ASSERT_EQ(m[i], src[2 * i] > old[i] ? src[2 * i] : old[i]) << "n " << n;
      }
      EXPECT_EQ(y[static_cast<size_t>(n)], guard) << "n " << n;
      EXPECT_EQ(m[static_cast<size_t>(n)], guard) << "n " << n;
    }
  });
}

/// At most kFewColumns output positions per image: dot products of the
/// filters with the gathered receptive fields (convFewColumns): a 1-D frame
/// as in a VAD encoder, strided and padded 2-D maps, groups, a 3-D one.
TEST(ConvKernel, FewOutputPositionsMatchNaive) {
  checkConvConfigs({{1, 129, 128, 1, {3}, {3}, {1}, {1}, {1, 1}},
                    {1, 64, 30, 1, {2}, {3}, {2}, {1}, {1, 1}},
                    {2, 12, 20, 4, {5, 6}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 0, 1}},
                    {1, 1, 258, 1, {576}, {256}, {128}, {1}, {0, 0}},
                    {1, 6, 7, 1, {4, 4, 4}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {0, 0, 0, 0, 0, 0}}},
                   43, "few-positions conv", 8);
}

TEST(ConvKernel, AutoPadSameMatchesExplicitPads) {
  std::mt19937 rng(5);
  std::vector<float> x = randomFloats(rng, 2 * 7 * 8), w = randomFloats(rng, 3 * 2 * 9);
  // SAME_UPPER with stride 2 on 7x8: out 4x4, total pads 2 and 1 -> [1,0,1,1].
  NodeRun same = runNode("Conv", 11, {floats({1, 2, 7, 8}, x), floats({3, 2, 3, 3}, w)},
                         {aStr("auto_pad", "SAME_UPPER"), aInts("strides", {2, 2})});
  NodeRun expl = runNode("Conv", 11, {floats({1, 2, 7, 8}, x), floats({3, 2, 3, 3}, w)},
                         {aInts("pads", {1, 0, 1, 1}), aInts("strides", {2, 2})});
  ASSERT_TRUE(same.status.ok() && expl.status.ok());
  EXPECT_EQ(same.out()->dims(), (std::vector<int64_t>{1, 3, 4, 4}));
  EXPECT_EQ(floatValues(same.out()), floatValues(expl.out()));
}

TEST(ConvKernel, Float16ComputesInFloat) {
  std::mt19937 rng(6);
  std::vector<float> x = randomFloats(rng, 3 * 6 * 6), w = randomFloats(rng, 4 * 3 * 9);
  auto toHalf = [](std::vector<int64_t> dims, const std::vector<float> &v) {
    std::vector<uint16_t> bits;
    for (float f : v)
      bits.push_back(floatToHalfBits(f));
    return Tensor::fromValues<uint16_t>(DataType::Float16, std::move(dims), bits);
  };
  std::vector<float> xr, wr; // values as rounded to half
  for (float f : x)
    xr.push_back(halfBitsToFloat(floatToHalfBits(f)));
  for (float f : w)
    wr.push_back(halfBitsToFloat(floatToHalfBits(f)));
  NodeRun h = runNode("Conv", 11, {toHalf({1, 3, 6, 6}, x), toHalf({4, 3, 3, 3}, w)});
  ASSERT_TRUE(h.status.ok()) << h.status.message();
  ASSERT_EQ(h.out()->dtype(), DataType::Float16);
  ConvConfig c{1, 3, 4, 1, {6, 6}, {3, 3}, {1, 1}, {1, 1}, {0, 0, 0, 0}};
  std::vector<double> want = naiveConv(c, xr, wr, {});
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(halfBitsToFloat(h.out()->at<uint16_t>(i)), want[i], 2e-3 * (1 + std::abs(want[i])));
}

TEST(ConvTransposeKernel, MatchesScatterDefinition) {
  std::mt19937 rng(7);
  for (int iter = 0; iter < 30; ++iter) {
    int64_t group = iter % 3 == 0 ? 2 : 1, Cin = 2 * group, Mg = 1 + iter % 3;
    int64_t H = 3 + iter % 4, W = 2 + iter % 5, kh = 1 + iter % 3, kw = 2;
    int64_t sh = 1 + iter % 2, sw = 1 + (iter / 2) % 3, dh = 1 + (iter % 4 == 0);
    int64_t pt = iter % 2, pl = 0, pb = (iter / 3) % 2, pr = iter % 2, oph = sh > 1 ? iter % sh : 0;
    std::vector<float> x = randomFloats(rng, Cin * H * W), w = randomFloats(rng, Cin * Mg * kh * kw);
    int64_t M = Mg * group;
    int64_t OH = sh * (H - 1) + oph + (kh - 1) * dh + 1 - pt - pb;
    int64_t OW = sw * (W - 1) + (kw - 1) + 1 - pl - pr;
    std::vector<double> want(static_cast<size_t>(M * OH * OW), 0.0);
    for (int64_t c = 0; c < Cin; ++c) {
      int64_t g = c / (Cin / group);
      for (int64_t m = 0; m < Mg; ++m)
        for (int64_t i = 0; i < H; ++i)
          for (int64_t j = 0; j < W; ++j)
            for (int64_t a = 0; a < kh; ++a)
              for (int64_t b = 0; b < kw; ++b) {
                int64_t oy = i * sh + a * dh - pt, ox = j * sw + b - pl;
                if (oy < 0 || oy >= OH || ox < 0 || ox >= OW)
                  continue;
                want[static_cast<size_t>(((g * Mg + m) * OH + oy) * OW + ox)] +=
                    double(x[static_cast<size_t>((c * H + i) * W + j)]) *
                    w[static_cast<size_t>(((c * Mg + m) * kh + a) * kw + b)];
              }
    }
    NodeRun r = runNode("ConvTranspose", 11,
                        {floats({1, Cin, H, W}, x), floats({Cin, Mg, kh, kw}, w)},
                        {aInt("group", group), aInts("strides", {sh, sw}), aInts("dilations", {dh, 1}),
                         aInts("pads", {pt, pl, pb, pr}), aInts("output_padding", {oph, 0})});
    ASSERT_TRUE(r.status.ok()) << r.status.message();
    ASSERT_EQ(r.out()->dims(), (std::vector<int64_t>{1, M, OH, OW}));
    expectNear(floatValues(r.out()), want, 1e-4, "convtranspose iteration " + std::to_string(iter));
  }
}

//===----------------------------------------------------------------------===//
// MatMul, Gemm
//===----------------------------------------------------------------------===//

/// Products the GEMM splits by columns (448, 384 and 640 columns: three,
/// three and five parts of 128 or more, cut to a whole number per thread)
/// give the same bits on one, two and three threads.
TEST(MatMulKernel, ColumnSplitProductsGiveTheSameBitsOnEveryThreadCount) {
  std::mt19937 rng(10);
  for (const auto &[M, K, N] : {std::tuple<int64_t, int64_t, int64_t>{64, 2048, 448},
                                {197, 768, 384},
                                {50, 300, 640}}) {
    const std::vector<float> x = randomFloats(rng, M * K), y = randomFloats(rng, K * N);
    std::vector<std::vector<float>> outs;
    for (int threads : {1, 2, 3}) {
      setThreadCount(threads);
      if (threads > 1) {
        EXPECT_TRUE(gemmSplitsColumns(M, N, K)) << M << "x" << K << "x" << N;
      }
      NodeRun r = runNode("MatMul", 13, {floats({M, K}, x), floats({K, N}, y)});
      ASSERT_TRUE(r.status.ok()) << r.status.message();
      outs.push_back(floatValues(r.out()));
    }
    setThreadCount(1);
    for (size_t i = 1; i < outs.size(); ++i)
      EXPECT_EQ(std::memcmp(outs[0].data(), outs[i].data(), outs[0].size() * sizeof(float)), 0)
          << M << "x" << K << "x" << N << " on " << (i + 1) << " threads";
  }
}

/// Batched products run a batch entry per task when each is too small to
/// split (attention's heads of 199 x 16) or the entries share evenly among
/// the threads (ViT-B's 12 heads of 197 x 64 on two and three threads),
/// else split one by one (5 such heads): the same bits on one, two and
/// three threads.
TEST(MatMulKernel, BatchedProductsGiveTheSameBitsOnEveryThreadCount) {
  std::mt19937 rng(9);
  for (const auto &[a, b] : {std::pair<std::vector<int64_t>, std::vector<int64_t>>{{1, 4, 199, 16}, {1, 4, 16, 199}},
                             {{1, 4, 199, 199}, {1, 4, 199, 16}},
                             {{3, 8, 33, 40}, {3, 8, 40, 65}},
                             {{1, 12, 197, 64}, {1, 12, 64, 197}},
                             {{1, 5, 197, 64}, {1, 5, 64, 197}}}) {
    const std::vector<float> x = randomFloats(rng, a[0] * a[1] * a[2] * a[3]),
                             y = randomFloats(rng, b[0] * b[1] * b[2] * b[3]);
    std::vector<std::vector<float>> outs;
    for (int threads : {1, 2, 3}) {
      setThreadCount(threads);
      NodeRun r = runNode("MatMul", 13, {floats(a, x), floats(b, y)});
      ASSERT_TRUE(r.status.ok()) << r.status.message();
      outs.push_back(floatValues(r.out()));
    }
    setThreadCount(1);
    for (size_t i = 1; i < outs.size(); ++i) {
      ASSERT_EQ(outs[0].size(), outs[i].size());
      EXPECT_EQ(std::memcmp(outs[0].data(), outs[i].data(), outs[0].size() * sizeof(float)), 0)
          << shapeString(a) << " x " << shapeString(b) << " on " << (i + 1) << " threads";
    }
  }
}

TEST(MatMulKernel, BroadcastAndVectorPromotion) {
  std::mt19937 rng(8);
  struct Case {
    std::vector<int64_t> a, b, out;
  };
  const Case cases[] = {
      {{2, 1, 3, 4}, {5, 4, 6}, {2, 5, 3, 6}}, {{4}, {4}, {}},        {{4}, {2, 4, 3}, {2, 3}},
      {{2, 3, 4}, {4}, {2, 3}},                {{7, 65}, {65, 17}, {7, 17}}, {{3, 1, 4}, {1, 4, 2}, {3, 1, 2}},
  };
  for (const Case &c : cases) {
    auto numel = [](const std::vector<int64_t> &d) {
      int64_t p = 1;
      for (int64_t v : d)
        p *= v;
      return p;
    };
    std::vector<float> a = randomFloats(rng, numel(c.a)), b = randomFloats(rng, numel(c.b));
    NodeRun r = runNode("MatMul", 13, {floats(c.a, a), floats(c.b, b)});
    ASSERT_TRUE(r.status.ok()) << r.status.message();
    ASSERT_EQ(r.out()->dims(), c.out);
    // Reference via explicit promotion and broadcast.
    std::vector<int64_t> A = c.a, B = c.b;
    if (A.size() == 1)
      A.insert(A.begin(), 1);
    if (B.size() == 1)
      B = {B[0], 1};
    int64_t M = A[A.size() - 2], K = A.back(), N = B.back();
    size_t rank = std::max(A.size(), B.size());
    A.insert(A.begin(), rank - A.size(), 1);
    B.insert(B.begin(), rank - B.size(), 1);
    std::vector<int64_t> batch;
    for (size_t i = 0; i + 2 < rank; ++i)
      batch.push_back(std::max(A[i], B[i]));
    int64_t nb = numel(batch);
    std::vector<double> want;
    for (int64_t t = 0; t < nb; ++t) {
      int64_t ai = 0, bi = 0, rem = t;
      std::vector<int64_t> idx(batch.size());
      for (size_t i = batch.size(); i-- > 0;) {
        idx[i] = rem % batch[i];
        rem /= batch[i];
      }
      for (size_t i = 0; i < batch.size(); ++i) {
        ai = ai * A[i] + (A[i] == 1 ? 0 : idx[i]);
        bi = bi * B[i] + (B[i] == 1 ? 0 : idx[i]);
      }
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
          double s = 0;
          for (int64_t k = 0; k < K; ++k)
            s += double(a[static_cast<size_t>(ai * M * K + i * K + k)]) *
                 b[static_cast<size_t>(bi * K * N + k * N + j)];
          want.push_back(s);
        }
    }
    expectNear(floatValues(r.out()), want, 1e-5, "matmul");
  }
}

TEST(GemmKernel, BroadcastBiasAndTransposes) {
  std::vector<float> a = {1, 2, 3, 4, 5, 6}; // A^T is 3x2 when transA
  std::vector<float> b = {1, 0, 0, 1, 1, 1}; // B is 3x2
  NodeRun r = runNode("Gemm", 13, {floats({2, 3}, a), floats({3, 2}, b), floats({1, 2}, {10, 20})},
                      {aFloat("alpha", 2.0f), aFloat("beta", 0.5f)});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  // A*B = [[4,5],[10,11]] -> 2*AB + 0.5*[10,20].
  EXPECT_EQ(floatValues(r.out()), (std::vector<float>{13, 20, 25, 32}));
  NodeRun t = runNode("Gemm", 6, {floats({3, 2}, a), floats({2, 3}, b), floats({1}, {1})},
                      {aInt("transA", 1), aInt("transB", 1), aInt("broadcast", 1)});
  ASSERT_TRUE(t.status.ok()) << t.status.message();
  EXPECT_EQ(t.out()->dims(), (std::vector<int64_t>{2, 2}));
}

//===----------------------------------------------------------------------===//
// Pooling, normalization, RNN semantics
//===----------------------------------------------------------------------===//

/// MaxPool at stride 2 without Indices takes the row-wise loop (16 outputs
/// a step with AVX-512, masked at the row's end); with Indices, the
/// per-output loop. Both give the same maxima on every engine, for rows of
/// every length up to past two vector steps, padded or not, with -inf and
/// ties in the input; and a pooling large enough to split its rows over
/// threads gives the same bits on one and two.
TEST(PoolKernels, StrideTwoMaxPoolMatchesPerOutputLoop) {
  std::mt19937 rng(17);
  forEachEngine([&] {
    for (int64_t w = 1; w <= 70; w += (w < 36 ? 1 : 17))
      for (int64_t k : {2, 3})
        for (int64_t pad : {0, 1}) {
          std::vector<float> x = randomFloats(rng, 2 * 5 * w);
          x[static_cast<size_t>(w / 2)] = -std::numeric_limits<float>::infinity();
          x[static_cast<size_t>(w - 1)] = x[0];
          std::vector<Attr> attrs = {aInts("kernel_shape", {k, k}), aInts("strides", {2, 2}),
                                     aInts("pads", {pad, pad, pad, pad})};
          if (k > w + 2 * pad)
            continue; // kernel wider than the padded row: an error
          NodeRun rowwise = runNode("MaxPool", 12, {floats({1, 2, 5, w}, x)}, attrs);
          NodeRun perOutput = runNode("MaxPool", 12, {floats({1, 2, 5, w}, x)}, attrs, 2);
          ASSERT_TRUE(rowwise.status.ok() && perOutput.status.ok()) << rowwise.status.message();
          EXPECT_EQ(floatValues(rowwise.out()), floatValues(perOutput.out(0)))
              << "width " << w << ", kernel " << k << ", pad " << pad << " (" << gemmEngineName()
              << ")";
        }
  });
  std::vector<float> big = randomFloats(rng, 24 * 128 * 128);
  auto pool = [&](int threads) {
    setThreadCount(threads);
    NodeRun r = runNode("MaxPool", 12, {floats({1, 24, 128, 128}, big)},
                        {aInts("kernel_shape", {2, 2}), aInts("strides", {2, 2})});
    EXPECT_TRUE(r.status.ok()) << r.status.message();
    return floatValues(r.out());
  };
  std::vector<float> one = pool(1), two = pool(2);
  EXPECT_EQ(one, two);
  EXPECT_EQ(one[0], std::max({big[0], big[1], big[128], big[129]}));
  setThreadCount(1);
}

/// On AVX-512, 2-D float max pooling runs sixteen planes at a time,
/// channels last (maxPoolBlocked): the row-wise loop's comparisons (from
/// -infinity, a tap taken where it is greater) in the same tap order, so
/// its bits, NaN (never taken), -inf and zeros of both signs (the first of
/// equal values kept) included; and the per-output loop's maxima where no
/// window holds a NaN (that loop takes a window's first tap whatever it
/// is). Plane counts off and on the block, strides 1 to 3, dilations,
/// asymmetric pads, ceil_mode, several images.
TEST(PoolKernels, ChannelBlocksAreTheBitsOfTheRowwiseLoop) {
  struct Case {
    int64_t n, c, h, w, k, s, d;
    std::vector<int64_t> pads;
    int64_t ceil;
  };
  const Case cases[] = {{1, 17, 9, 11, 3, 2, 1, {1, 1, 1, 1}, 0},
                        {2, 40, 13, 13, 3, 1, 1, {1, 1, 1, 1}, 0},
                        {1, 16, 14, 14, 2, 2, 1, {0, 0, 0, 0}, 0},
                        {1, 3, 7, 7, 3, 2, 2, {2, 1, 2, 0}, 0},
                        {1, 20, 27, 27, 3, 2, 1, {0, 0, 0, 0}, 1},
                        {2, 5, 10, 12, 5, 3, 1, {2, 2, 2, 2}, 1}};
  std::mt19937 rng(29);
  const std::string original = gemmEngineName();
  for (const Case &c : cases)
    for (bool nan : {false, true}) {
      std::vector<float> x = randomFloats(rng, c.n * c.c * c.h * c.w);
      for (size_t i = 0; i < x.size(); i += 7)
        x[i] = nan && i % 3 == 0 ? std::nanf("") : i % 2 ? -0.0f : 0.0f;
      for (size_t i = 3; i < x.size(); i += 29)
        x[i] = -std::numeric_limits<float>::infinity();
      std::vector<Attr> attrs = {aInts("kernel_shape", {c.k, c.k}), aInts("strides", {c.s, c.s}),
                                 aInts("dilations", {c.d, c.d}), aInts("pads", c.pads),
                                 aInt("ceil_mode", c.ceil)};
      auto run = [&](const char *engine, int outputs) {
        EXPECT_TRUE(setGemmEngine(engine) || std::string(engine) == "avx512");
        NodeRun r = runNode("MaxPool", 12, {floats({c.n, c.c, c.h, c.w}, x)}, attrs, outputs);
        EXPECT_TRUE(r.status.ok()) << r.status.message();
        return floatValues(r.out(0));
      };
      const std::vector<float> blocked = run("avx512", 1), rowwise = run("baseline", 1);
      const std::vector<float> perOutput = run("baseline", 2);
      ASSERT_EQ(blocked.size(), rowwise.size());
      EXPECT_EQ(std::memcmp(blocked.data(), rowwise.data(), blocked.size() * sizeof(float)), 0)
          << c.c << " planes of " << c.h << "x" << c.w << ", kernel " << c.k << ", stride " << c.s
          << (nan ? ", NaN" : "");
      if (!nan) {
        EXPECT_EQ(std::memcmp(blocked.data(), perOutput.data(), blocked.size() * sizeof(float)),
                  0)
            << c.c << " planes of " << c.h << "x" << c.w << " against the per-output loop";
      }
    }
  setGemmEngine(original.c_str());
}

/// On AVX-512, 2-D (and 1-D) float max pooling at a column stride of 1 or
/// 2 on rows of 32 outputs and more (16 for 3-wide windows at stride 2,
/// whose first pass reads the input rows directly: pads of 0 and 1), or
/// with windows of 25 taps and more, runs as two passes (maxPoolSeparable: the rows' maxima over the
/// window's columns, then over its rows): the row-wise loop's bits, NaN
/// (never taken), -inf and zeros of both signs (the first of equal values
/// kept) included, and the per-output loop's maxima where no window holds
/// a NaN. Row strides 1 to 3, dilations, asymmetric pads, ceil_mode with
/// windows past the input, YOLO's SPP windows, several images; and the
/// same bits on one and two threads.
TEST(PoolKernels, SeparablePassesAreTheBitsOfTheRowwiseLoop) {
  struct Case {
    std::vector<int64_t> dims, kernel, strides, dilations, pads;
    int64_t ceil;
  };
  const Case cases[] = {{{1, 24, 111, 111}, {3, 3}, {2, 2}, {1, 1}, {0, 0, 0, 0}, 1},
                        {{2, 2, 37, 70}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, 0},
                        {{1, 2, 20, 20}, {13, 13}, {1, 1}, {1, 1}, {6, 6, 6, 6}, 0},
                        {{1, 3, 20, 23}, {5, 5}, {1, 1}, {1, 1}, {2, 2, 2, 2}, 0},
                        {{1, 2, 41, 67}, {3, 2}, {3, 1}, {2, 1}, {2, 0, 1, 1}, 1},
                        {{1, 2, 17, 80}, {2, 3}, {1, 2}, {1, 2}, {0, 1, 1, 0}, 1},
                        {{2, 3, 100}, {7}, {2}, {1}, {3, 3}, 0},
                        {{1, 1, 9, 67}, {3, 3}, {2, 2}, {1, 1}, {0, 0, 2, 2}, 1},
                        {{1, 3, 55, 55}, {3, 3}, {2, 2}, {1, 1}, {0, 0, 0, 0}, 1},
                        {{1, 2, 33, 40}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, 0}};
  std::mt19937 rng(31);
  const std::string original = gemmEngineName();
  if (!setGemmEngine("avx512")) {
    setGemmEngine(original.c_str());
    GTEST_SKIP() << "this CPU has no AVX-512: max pooling keeps its row-wise loop";
  }
  for (const Case &c : cases)
    for (bool nan : {false, true}) {
      int64_t n = 1;
      for (int64_t d : c.dims)
        n *= d;
      std::vector<float> x = randomFloats(rng, n);
      for (size_t i = 0; i < x.size(); i += 7)
        x[i] = nan && i % 3 == 0 ? std::nanf("") : i % 2 ? -0.0f : 0.0f;
      for (size_t i = 3; i < x.size(); i += 29)
        x[i] = -std::numeric_limits<float>::infinity();
      std::vector<Attr> attrs = {aInts("kernel_shape", c.kernel), aInts("strides", c.strides),
                                 aInts("dilations", c.dilations), aInts("pads", c.pads),
                                 aInt("ceil_mode", c.ceil)};
      auto run = [&](const char *engine, int outputs, int threads) {
        EXPECT_TRUE(setGemmEngine(engine));
        setThreadCount(threads);
        NodeRun r = runNode("MaxPool", 12, {floats(c.dims, x)}, attrs, outputs);
        EXPECT_TRUE(r.status.ok()) << r.status.message();
        return floatValues(r.out(0));
      };
      const std::vector<float> separable = run("avx512", 1, 1), rowwise = run("baseline", 1, 1);
      const std::vector<float> split = run("avx512", 1, 2), perOutput = run("baseline", 2, 1);
      ASSERT_EQ(separable.size(), rowwise.size());
      const std::string what = "dims " + shapeString(c.dims) + ", kernel " +
                               shapeString(c.kernel) + (nan ? ", NaN" : "");
      EXPECT_EQ(std::memcmp(separable.data(), rowwise.data(), rowwise.size() * sizeof(float)), 0)
          << what;
      EXPECT_EQ(std::memcmp(separable.data(), split.data(), split.size() * sizeof(float)), 0)
          << what << " on two threads";
      if (!nan) {
        EXPECT_EQ(std::memcmp(separable.data(), perOutput.data(), perOutput.size() * sizeof(float)),
                  0)
            << what << " against the per-output loop";
      }
    }
  setThreadCount(1);
  setGemmEngine(original.c_str());
}

/// On AVX-512, 2-D (and 1-D) float average pooling at a column stride of 1
/// or 2 sums 16 outputs of a row at a time over zero-padded rows
/// (averagePoolPlane): the row-wise loop's bits (each sum from zero in
/// (ky, kx) order, the padding adding +0), NaN and infinities included,
/// with and without count_include_pad, row strides 1 to 3, dilations
/// (opset 19), asymmetric pads, ceil_mode with windows past the input,
/// several images; and the same bits on one and two threads.
TEST(PoolKernels, AveragePoolRowsAreTheBitsOfTheRowwiseLoop) {
  struct Case {
    std::vector<int64_t> dims, kernel, strides, dilations, pads;
    int64_t ceil;
  };
  const Case cases[] = {{{1, 24, 111, 111}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 0},
                        {{2, 5, 17, 17}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 0},
                        {{1, 3, 35, 70}, {3, 3}, {2, 2}, {1, 1}, {1, 0, 1, 2}, 1},
                        {{1, 2, 20, 23}, {5, 5}, {3, 1}, {1, 2}, {4, 4, 4, 4}, 0},
                        {{1, 2, 41, 67}, {2, 3}, {1, 2}, {2, 1}, {0, 1, 1, 0}, 1},
                        {{2, 3, 100}, {7}, {2}, {1}, {3, 3}, 1}};
  std::mt19937 rng(37);
  const std::string original = gemmEngineName();
  if (!setGemmEngine("avx512")) {
    setGemmEngine(original.c_str());
    GTEST_SKIP() << "this CPU has no AVX-512: average pooling keeps its row-wise loop";
  }
  for (const Case &c : cases)
    for (int64_t includePad : {0, 1})
      for (bool specials : {false, true}) {
        int64_t n = 1;
        for (int64_t d : c.dims)
          n *= d;
        std::vector<float> x = randomFloats(rng, n);
        if (specials)
          for (size_t i = 0; i < x.size(); i += 97)
            x[i] = i % 3 == 0   ? std::nanf("")
                   : i % 3 == 1 ? std::numeric_limits<float>::infinity()
                                : -0.0f;
        std::vector<Attr> attrs = {aInts("kernel_shape", c.kernel), aInts("strides", c.strides),
                                   aInts("dilations", c.dilations), aInts("pads", c.pads),
                                   aInt("ceil_mode", c.ceil), aInt("count_include_pad", includePad)};
        auto run = [&](const char *engine, int threads) {
          EXPECT_TRUE(setGemmEngine(engine));
          setThreadCount(threads);
          NodeRun r = runNode("AveragePool", 19, {floats(c.dims, x)}, attrs);
          EXPECT_TRUE(r.status.ok()) << r.status.message();
          return floatValues(r.out());
        };
        const std::vector<float> rows = run("avx512", 1), rowwise = run("baseline", 1);
        const std::vector<float> split = run("avx512", 2);
        ASSERT_EQ(rows.size(), rowwise.size());
        const std::string what = "dims " + shapeString(c.dims) + ", kernel " +
                                 shapeString(c.kernel) + (includePad ? ", pads counted" : "") +
                                 (specials ? ", NaN and inf" : "");
        EXPECT_EQ(std::memcmp(rows.data(), rowwise.data(), rows.size() * sizeof(float)), 0)
            << what;
        EXPECT_EQ(std::memcmp(rows.data(), split.data(), rows.size() * sizeof(float)), 0)
            << what << " on two threads";
      }
  setThreadCount(1);
  setGemmEngine(original.c_str());
}

/// At unit stride the row-wise loop combines a tap's outputs in SIMD
/// batches (combineRow): MaxPool gives the per-output loop's maxima (with
/// -inf and ties in the input, rows from one element to past several
/// batches, padded or not), and AveragePool the average of each window's
/// taps inside the input.
TEST(PoolKernels, UnitStrideRowsMatchPerOutputLoop) {
  std::mt19937 rng(23);
  for (int64_t w = 1; w <= 70; w += (w < 20 ? 1 : 7))
    for (int64_t k : {1, 2, 3})
      for (int64_t pad : {0, 1}) {
        if (k > w + 2 * pad || pad >= k)
          continue; // kernel wider than the padded row, or a pad as wide as it: errors
        std::vector<float> x = randomFloats(rng, 2 * 4 * w);
        x[static_cast<size_t>(w / 2)] = -std::numeric_limits<float>::infinity();
        x[static_cast<size_t>(w - 1)] = x[0];
        const std::vector<int64_t> pads = {pad, pad, pad, pad};
        std::vector<Attr> attrs = {aInts("kernel_shape", {k, k}), aInts("pads", pads)};
        NodeRun rowwise = runNode("MaxPool", 12, {floats({1, 2, 4, w}, x)}, attrs);
        NodeRun perOutput = runNode("MaxPool", 12, {floats({1, 2, 4, w}, x)}, attrs, 2);
        ASSERT_TRUE(rowwise.status.ok() && perOutput.status.ok()) << rowwise.status.message();
        EXPECT_EQ(floatValues(rowwise.out()), floatValues(perOutput.out(0)))
            << "MaxPool width " << w << ", kernel " << k << ", pad " << pad;
        NodeRun avg = runNode("AveragePool", 11, {floats({1, 2, 4, w}, x)}, attrs);
        ASSERT_TRUE(avg.status.ok()) << avg.status.message();
        const std::vector<float> av = floatValues(avg.out());
        const int64_t oh = 4 + 2 * pad - k + 1, ow = w + 2 * pad - k + 1;
        ASSERT_EQ(av.size(), static_cast<size_t>(2 * oh * ow));
        for (int64_t p = 0; p < 2; ++p)
          for (int64_t oy = 0; oy < oh; ++oy)
            for (int64_t ox = 0; ox < ow; ++ox) {
              double sum = 0;
              int count = 0;
              for (int64_t ky = 0; ky < k; ++ky)
                for (int64_t kx = 0; kx < k; ++kx) {
                  const int64_t iy = oy + ky - pad, ix = ox + kx - pad;
                  if (iy < 0 || iy >= 4 || ix < 0 || ix >= w)
                    continue;
                  sum += x[static_cast<size_t>((p * 4 + iy) * w + ix)];
                  ++count;
                }
              const float a = av[static_cast<size_t>((p * oh + oy) * ow + ox)];
              if (std::isinf(sum))
                EXPECT_EQ(a, static_cast<float>(sum / count)) << "AveragePool width " << w;
              else
                EXPECT_NEAR(a, sum / count, 1e-5)
                    << "AveragePool width " << w << ", kernel " << k << ", pad " << pad << " at "
                    << oy << "," << ox;
            }
      }
}

/// GlobalAveragePool sums each plane in double in one fixed order
/// (sumFloats): the same bits on every engine, within a float's rounding of
/// the exact mean, for planes shorter than one group of 32 lanes, on and
/// off the group, and long ones (with a large offset, where a float sum
/// would lose digits); and on one and two threads, when its planes go
/// across them.
TEST(PoolKernels, GlobalAverageIsTheSameOnEveryEngine) {
  std::mt19937 rng(23);
  const std::string original = gemmEngineName();
  for (int64_t plane : {1, 7, 31, 32, 33, 100, 12544}) {
    std::vector<float> x = randomFloats(rng, 3 * plane);
    for (float &v : x)
      v += 1000.0f;
    std::vector<std::vector<float>> outs;
    for (const char *engine : {"baseline", "avx2", "avx512"}) {
      if (!setGemmEngine(engine))
        continue;
      NodeRun r = runNode("GlobalAveragePool", 1, {floats({1, 3, plane, 1}, x)}, {});
      ASSERT_TRUE(r.status.ok()) << r.status.message();
      ASSERT_EQ(r.out()->dims(), (std::vector<int64_t>{1, 3, 1, 1}));
      outs.push_back(floatValues(r.out()));
    }
    setGemmEngine(original.c_str());
    for (size_t e = 1; e < outs.size(); ++e)
      EXPECT_EQ(std::memcmp(outs[0].data(), outs[e].data(), 3 * sizeof(float)), 0)
          << "plane " << plane << " engine " << e;
    for (int64_t c = 0; c < 3; ++c) {
      long double sum = 0;
      for (int64_t i = 0; i < plane; ++i)
        sum += x[static_cast<size_t>(c * plane + i)];
      const double mean = static_cast<double>(sum / plane);
      EXPECT_NEAR(outs[0][static_cast<size_t>(c)], mean, 1e-7 * std::abs(mean))
          << "plane " << plane << " channel " << c;
    }
  }
  // Large enough for the planes to go across the threads: the same bits.
  std::vector<float> big = randomFloats(rng, 64 * 12544);
  auto pool = [&](int threads) {
    setThreadCount(threads);
    NodeRun r = runNode("GlobalAveragePool", 1, {floats({1, 64, 112, 112}, big)}, {});
    EXPECT_TRUE(r.status.ok()) << r.status.message();
    return floatValues(r.out());
  };
  const std::vector<float> one = pool(1), two = pool(2);
  EXPECT_EQ(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)), 0);
  // Many small planes (sixteen at a time, the blocks across the threads):
  // the same bits on one and three threads.
  std::vector<float> many = randomFloats(rng, 6001 * 49);
  std::vector<std::vector<float>> small;
  for (int threads : {1, 3}) {
    setThreadCount(threads);
    NodeRun r = runNode("GlobalAveragePool", 1, {floats({1, 6001, 7, 7}, many)}, {});
    ASSERT_TRUE(r.status.ok()) << r.status.message();
    small.push_back(floatValues(r.out()));
  }
  EXPECT_EQ(std::memcmp(small[0].data(), small[1].data(), small[0].size() * sizeof(float)), 0);
  for (int64_t c : {0, 4000, 6000}) {
    const double ref = sumFloats(many.data() + c * 49, 49) / 49.0;
    EXPECT_EQ(small[0][static_cast<size_t>(c)], static_cast<float>(ref)) << "plane " << c;
  }
  setThreadCount(1);
}

/// Linear and cubic image resizes take blendLastTwo (its second pass
/// vectorized with AVX-512: inputs permuted out of one load when upsampling,
/// gathered when downsampling, masked at the row's end). Every engine gives
/// the same bits as the scalar baseline, one and two threads the same bits,
/// and the linear values are the half-pixel formula's.
TEST(ResizeKernel, ImageBlendIsTheSameOnEveryEngineAndThreadCount) {
  std::mt19937 rng(19);
  struct Case {
    int64_t planes, h, w;
    float sy, sx;
    const char *mode;
  };
  const Case cases[] = {{3, 5, 1, 2.0f, 2.0f, "linear"},    {2, 7, 9, 2.0f, 2.0f, "linear"},
                        {1, 4, 19, 1.0f, 3.5f, "linear"},   {2, 6, 37, 0.6f, 0.6f, "linear"},
                        {1, 5, 23, 2.0f, 1.7f, "cubic"},    {64, 40, 40, 2.0f, 2.0f, "linear"}};
  for (const Case &c : cases) {
    std::vector<float> x = randomFloats(rng, c.planes * c.h * c.w);
    auto resize = [&](const char *engine, int threads) {
      EXPECT_TRUE(setGemmEngine(engine) || std::string(engine) != "baseline");
      setThreadCount(threads);
      NodeRun r = runNode("Resize", 13,
                          {floats({1, c.planes, c.h, c.w}, x), nullptr,
                           floats({4}, {1, 1, c.sy, c.sx})},
                          {aStr("mode", c.mode)});
      EXPECT_TRUE(r.status.ok()) << r.status.message();
      return floatValues(r.out());
    };
    const std::string original = gemmEngineName();
    std::vector<float> base = resize("baseline", 1);
    for (const char *engine : {"avx2", "avx512"}) {
      if (!setGemmEngine(engine))
        continue;
      for (int threads : {1, 2})
        EXPECT_EQ(resize(engine, threads), base)
            << c.mode << " " << c.h << "x" << c.w << " by " << c.sy << "x" << c.sx << ", "
            << engine << ", " << threads << " threads";
    }
    setGemmEngine(original.c_str());
    setThreadCount(1);
    if (std::string(c.mode) != "linear")
      continue;
    // half_pixel: source s = (o + 0.5) / scale - 0.5, clamped to the input.
    const int64_t oh = static_cast<int64_t>(c.h * c.sy), ow = static_cast<int64_t>(c.w * c.sx);
    ASSERT_EQ(base.size(), static_cast<size_t>(c.planes * oh * ow));
    auto taps = [](int64_t o, float scale, int64_t in, int64_t &i0, int64_t &i1, double &f) {
      double s = std::clamp((o + 0.5) / scale - 0.5, 0.0, static_cast<double>(in - 1));
      i0 = static_cast<int64_t>(std::floor(s));
      i1 = std::min(i0 + 1, in - 1);
      f = s - static_cast<double>(i0);
    };
    for (int64_t p = 0; p < c.planes; ++p)
      for (int64_t oy = 0; oy < oh; ++oy)
        for (int64_t ox = 0; ox < ow; ++ox) {
          int64_t y0, y1, x0, x1;
          double fy, fx;
          taps(oy, c.sy, c.h, y0, y1, fy);
          taps(ox, c.sx, c.w, x0, x1, fx);
          auto at = [&](int64_t yy, int64_t xx) {
            return static_cast<double>(x[static_cast<size_t>((p * c.h + yy) * c.w + xx)]);
          };
          double want = (1 - fy) * ((1 - fx) * at(y0, x0) + fx * at(y0, x1)) +
                        fy * ((1 - fx) * at(y1, x0) + fx * at(y1, x1));
          ASSERT_NEAR(base[static_cast<size_t>((p * oh + oy) * ow + ox)], want, 1e-5)
              << c.h << "x" << c.w << " at plane " << p << " (" << oy << ", " << ox << ")";
        }
  }
}

TEST(PoolKernels, MaxPoolIndicesAndAveragePadding) {
  std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  NodeRun m = runNode("MaxPool", 12, {floats({1, 1, 4, 4}, x)},
                      {aInts("kernel_shape", {2, 2}), aInts("strides", {2, 2}),
                       aInt("storage_order", 1)},
                      2);
  ASSERT_TRUE(m.status.ok()) << m.status.message();
  EXPECT_EQ(floatValues(m.out(0)), (std::vector<float>{6, 8, 14, 16}));
  std::vector<int64_t> idx(4);
  std::memcpy(idx.data(), m.out(1)->rawData(), 32);
  EXPECT_EQ(idx, (std::vector<int64_t>{5, 13, 7, 15})); // column-major: w * H + h
  NodeRun inc = runNode("AveragePool", 11, {floats({1, 1, 4, 4}, x)},
                        {aInts("kernel_shape", {3, 3}), aInts("pads", {1, 1, 1, 1}),
                         aInt("count_include_pad", 1)});
  NodeRun exc = runNode("AveragePool", 11, {floats({1, 1, 4, 4}, x)},
                        {aInts("kernel_shape", {3, 3}), aInts("pads", {1, 1, 1, 1})});
  ASSERT_TRUE(inc.status.ok() && exc.status.ok());
  EXPECT_FLOAT_EQ(floatValues(inc.out())[0], (1 + 2 + 5 + 6) / 9.0f);
  EXPECT_FLOAT_EQ(floatValues(exc.out())[0], (1 + 2 + 5 + 6) / 4.0f);
}

TEST(NormKernels, BatchNormSpatialZeroAndLayerNormStash) {
  // BatchNormalization-6 with spatial=0: parameters per element of X.shape[1:].
  NodeRun bn = runNode("BatchNormalization", 6,
                       {floats({2, 2, 1}, {1, 2, 3, 4}), floats({2, 1}, {1, 2}),
                        floats({2, 1}, {0, 1}), floats({2, 1}, {1, 2}), floats({2, 1}, {1, 4})},
                       {aInt("spatial", 0), aFloat("epsilon", 0.0f)});
  ASSERT_TRUE(bn.status.ok()) << bn.status.message();
  EXPECT_EQ(floatValues(bn.out()), (std::vector<float>{0, 1, 2, 3}));
  NodeRun ln = runNode("LayerNormalization", 17,
                       {floats({2, 2}, {1, 3, 2, 2}), floats({2}, {1, 1})},
                       {aFloat("epsilon", 0.0f)}, 3);
  ASSERT_TRUE(ln.status.ok()) << ln.status.message();
  EXPECT_EQ(floatValues(ln.out(0))[0], -1.0f);
  EXPECT_EQ(ln.out(1)->dims(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(floatValues(ln.out(1)), (std::vector<float>{2, 2}));
}

TEST(RnnKernels, LayoutOneMatchesLayoutZero) {
  std::mt19937 rng(9);
  int64_t S = 3, Bn = 2, I = 4, H = 5;
  std::vector<float> x = randomFloats(rng, S * Bn * I), w = randomFloats(rng, 2 * 4 * H * I),
                     r = randomFloats(rng, 2 * 4 * H * H), b = randomFloats(rng, 2 * 8 * H);
  std::vector<float> xt(x.size());
  for (int64_t t = 0; t < S; ++t)
    for (int64_t bb = 0; bb < Bn; ++bb)
      for (int64_t i = 0; i < I; ++i)
        xt[static_cast<size_t>((bb * S + t) * I + i)] = x[static_cast<size_t>((t * Bn + bb) * I + i)];
  auto common = std::vector<Attr>{aStr("direction", "bidirectional"), aInt("hidden_size", H)};
  NodeRun l0 = runNode("LSTM", 14,
                       {floats({S, Bn, I}, x), floats({2, 4 * H, I}, w), floats({2, 4 * H, H}, r),
                        floats({2, 8 * H}, b), int64s({Bn}, {3, 2})},
                       common, 3);
  auto attrs1 = common;
  attrs1.push_back(aInt("layout", 1));
  NodeRun l1 = runNode("LSTM", 14,
                       {floats({Bn, S, I}, xt), floats({2, 4 * H, I}, w), floats({2, 4 * H, H}, r),
                        floats({2, 8 * H}, b), int64s({Bn}, {3, 2})},
                       attrs1, 3);
  ASSERT_TRUE(l0.status.ok()) << l0.status.message();
  ASSERT_TRUE(l1.status.ok()) << l1.status.message();
  // Y: [S, 2, B, H] vs [B, S, 2, H].
  std::vector<float> y0 = floatValues(l0.out(0)), y1 = floatValues(l1.out(0));
  for (int64_t t = 0; t < S; ++t)
    for (int64_t d = 0; d < 2; ++d)
      for (int64_t bb = 0; bb < Bn; ++bb)
        for (int64_t h = 0; h < H; ++h)
          EXPECT_FLOAT_EQ(y0[static_cast<size_t>(((t * 2 + d) * Bn + bb) * H + h)],
                          y1[static_cast<size_t>(((bb * S + t) * 2 + d) * H + h)]);
  // Batch row 1 has length 2: Y at t = 2 is zero.
  for (int64_t h = 0; h < H; ++h)
    EXPECT_EQ(y0[static_cast<size_t>(((2 * 2 + 0) * Bn + 1) * H + h)], 0.0f);
}

//===----------------------------------------------------------------------===//
// Malformed inputs: errors naming the node, never a crash
//===----------------------------------------------------------------------===//

TEST(NNKernelErrors, ConvRejectsBadShapesAndAttributes) {
  TensorPtr x = floats({1, 3, 5, 5}, std::vector<float>(75, 1.0f));
  TensorPtr w = floats({4, 2, 3, 3}, std::vector<float>(72, 1.0f));
  expectNodeError(runNode("Conv", 11, {x, w}), "channel mismatch");
  TensorPtr w3 = floats({4, 3, 7, 7}, std::vector<float>(4 * 3 * 49, 1.0f));
  expectNodeError(runNode("Conv", 11, {x, w3}), "larger than the padded input");
  TensorPtr wOk = floats({4, 3, 3, 3}, std::vector<float>(108, 1.0f));
  expectNodeError(runNode("Conv", 11, {x, wOk}, {aInts("pads", {1, 1, 1})}), "pads");
  expectNodeError(runNode("Conv", 11, {x, wOk}, {aInts("pads", {-1, 0, 0, 0})}), "negative");
  expectNodeError(runNode("Conv", 11, {x, wOk}, {aInts("strides", {0, 1})}), "strides");
  expectNodeError(runNode("Conv", 11, {x, wOk, floats({3}, {1, 2, 3})}), "bias");
  expectNodeError(runNode("Conv", 11, {x, wOk}, {aInt("group", 0)}), "group");
  expectNodeError(runNode("Conv", 11, {x, wOk}, {aStr("auto_pad", "SAME_MIDDLE")}), "auto_pad");
  expectNodeError(runNode("Conv", 11, {floats({3, 5}, std::vector<float>(15)), wOk}), "rank");
  TensorPtr wT = floats({3, 4, 3, 3}, std::vector<float>(108, 1.0f));
  expectNodeError(runNode("ConvTranspose", 11, {x, wT}, {aInts("pads", {9, 9, 9, 9})}), "pads");
  expectNodeError(runNode("ConvTranspose", 11, {x, wOk}), "channel mismatch");
}

TEST(NNKernelErrors, OtherKernelsRejectMalformedInputs) {
  TensorPtr m23 = floats({2, 3}, std::vector<float>(6, 1.0f));
  expectNodeError(runNode("MatMul", 13, {m23, m23}), "inner dimensions");
  expectNodeError(runNode("Gemm", 13, {m23, m23}), "inner dimensions");
  expectNodeError(runNode("Gemm", 13, {m23, floats({3, 3}, std::vector<float>(9)),
                                       floats({4}, std::vector<float>(4))}),
                  "broadcast");
  TensorPtr img = floats({1, 1, 4, 4}, std::vector<float>(16, 1.0f));
  expectNodeError(runNode("MaxPool", 12, {img}), "kernel_shape");
  expectNodeError(runNode("MaxPool", 12, {img}, {aInts("kernel_shape", {9, 9})}), "larger");
  expectNodeError(runNode("MaxUnpool", 11, {floats({1, 1, 1, 1}, {1}), int64s({1, 1, 1, 1}, {99})},
                          {aInts("kernel_shape", {2, 2})}),
                  "outside");
  expectNodeError(runNode("Resize", 13, {img, nullptr, floats({4}, {1, 1, -2, 2})}), "scales");
  expectNodeError(runNode("Resize", 13, {img, nullptr, floats({2}, {2, 2})}), "scales");
  expectNodeError(runNode("BatchNormalization", 15,
                          {img, floats({2}, {1, 1}), floats({1}, {0}), floats({1}, {0}),
                           floats({1}, {1})}),
                  "scale");
  expectNodeError(runNode("RoiAlign", 16,
                          {img, floats({1, 4}, {0, 0, 1, 1}), int64s({1}, {3})}),
                  "batch index");
  expectNodeError(runNode("LSTM", 14,
                          {floats({2, 1, 3}, std::vector<float>(6)),
                           floats({1, 6, 3}, std::vector<float>(18)),
                           floats({1, 8, 2}, std::vector<float>(16))},
                          {aInt("hidden_size", 2)}),
                  "W has shape");
  expectNodeError(runNode("GRU", 14,
                          {floats({2, 1, 3}, std::vector<float>(6)),
                           floats({1, 6, 3}, std::vector<float>(18)),
                           floats({1, 6, 2}, std::vector<float>(12)), nullptr,
                           int64s({1}, {5})},
                          {aInt("hidden_size", 2)}),
                  "sequence_lens");
  expectNodeError(runNode("NonMaxSuppression", 11,
                          {floats({1, 2, 4}, std::vector<float>(8)),
                           floats({1, 1, 3}, std::vector<float>(3))}),
                  "do not match");
}

} // namespace

//===----------------------------------------------------------------------===//
// Threads: the same bits for every thread count
//===----------------------------------------------------------------------===//

TEST(ThreadPool, RunsEveryTaskOnceAndNestsInline) {
  for (int threads : {1, 2, 3, 8}) {
    setThreadCount(threads);
    EXPECT_EQ(threadCount(), threads);
    std::vector<std::atomic<int>> runs(1000);
    parallelFor(1000, [&](int64_t i) {
      runs[static_cast<size_t>(i)]++;
      parallelFor(3, [&](int64_t) { runs[static_cast<size_t>(i)] += 10; }); // inline
    });
    for (size_t i = 0; i < runs.size(); ++i)
      ASSERT_EQ(runs[i].load(), 31) << "task " << i << " with " << threads << " threads";
    parallelFor(0, [](int64_t) { FAIL() << "no task for n = 0"; });
    // Many short jobs, some with fewer tasks than threads (empty shares):
    // every task once, whoever takes it from whose share.
    for (int64_t n = 1; n <= 40; ++n) {
      std::vector<std::atomic<int>> once(static_cast<size_t>(n));
      parallelFor(n, [&](int64_t i) { once[static_cast<size_t>(i)]++; });
      for (size_t i = 0; i < once.size(); ++i)
        ASSERT_EQ(once[i].load(), 1)
            << "task " << i << " of " << n << ", " << threads << " threads";
    }
  }
  setThreadCount(0);
  EXPECT_GE(threadCount(), 1);
  setThreadCount(1); // the default
}

// The hand-off between the poster and the workers (no lock on the way in or
// out of a job): jobs back to back, with spinning workers and with workers
// that fell asleep between them, and jobs posted by two program threads at
// once (one of them runs its tasks inline). Every task runs exactly once,
// and a job returns only after all of its tasks have.
TEST(ThreadPool, HandsOffJobsWithAndWithoutSleepingWorkers) {
  for (int threads : {2, 4}) {
    setThreadCount(threads);
    for (bool spinning : {true, false}) {
      std::unique_ptr<KeepWorkersSpinning> keep;
      if (spinning)
        keep = std::make_unique<KeepWorkersSpinning>();
      std::mt19937 rng(static_cast<unsigned>(threads));
      for (int job = 0; job < 3000; ++job) {
        const int64_t n = 1 + static_cast<int64_t>(rng() % 9);
        std::vector<std::atomic<int>> once(static_cast<size_t>(n));
        std::atomic<int64_t> done{0};
        parallelFor(n, [&](int64_t i) {
          once[static_cast<size_t>(i)]++;
          done++;
        });
        ASSERT_EQ(done.load(), n) << "job " << job << " returned before its tasks finished";
        for (size_t i = 0; i < once.size(); ++i)
          ASSERT_EQ(once[i].load(), 1) << "task " << i << " of job " << job;
        // Past the workers' spin (200 us) now and then: they sleep, and the
        // next job wakes them.
        if (!spinning && job % 300 == 0)
          std::this_thread::sleep_for(std::chrono::microseconds(500));
      }
    }
    // Two posters: each job's tasks run once, whoever runs them.
    std::vector<std::atomic<int>> counts(2 * 64);
    auto post = [&](int who) {
      for (int job = 0; job < 500; ++job)
        parallelFor(64, [&](int64_t i) { counts[static_cast<size_t>(who * 64 + i)]++; });
    };
    std::thread other(post, 1);
    post(0);
    other.join();
    for (size_t i = 0; i < counts.size(); ++i)
      ASSERT_EQ(counts[i].load(), 500) << "task " << i % 64 << " of poster " << i / 64;
  }
  setThreadCount(1);
}

TEST(ThreadPool, ParallelSpansCoverEachIndexOnceOnAlignedBoundaries) {
  for (int threads : {1, 2, 3, 7}) {
    setThreadCount(threads);
    for (int64_t n : {int64_t{0}, int64_t{5}, kParallelMinElements - 1, kParallelMinElements + 13}) {
      std::vector<std::atomic<int>> seen(static_cast<size_t>(n));
      std::atomic<int> spans{0};
      parallelSpans(n, 16, [&](int64_t begin, int64_t end) {
        EXPECT_LT(begin, end);
        EXPECT_EQ(begin % 16, 0) << "span start " << begin << " with " << threads << " threads";
        ++spans;
        for (int64_t i = begin; i < end; ++i)
          seen[static_cast<size_t>(i)]++;
      });
      for (size_t i = 0; i < seen.size(); ++i)
        ASSERT_EQ(seen[i].load(), 1) << "index " << i << " of " << n;
      // Below the threshold, one span on the calling thread.
      EXPECT_EQ(spans.load(), n == 0 ? 0 : n < kParallelMinElements ? 1 : threads);
    }
  }
  setThreadCount(1);
}

TEST(ThreadPool, LargeElementwiseAndBatchNormAreBitIdenticalAcrossThreadCounts) {
  // Past kParallelMinElements: a broadcast Add split by runs, a scalar Add
  // split inside its single run, a Relu (simdMap) and a BatchNormalization.
  std::mt19937 rng(5);
  const int64_t H = 2048, W = 2048;
  std::vector<float> x = randomFloats(rng, 2 * H * W), row = randomFloats(rng, 2 * W),
                     scalar = randomFloats(rng, 1), p = randomFloats(rng, 2);
  std::vector<float> var = {0.5f, 2.0f};
  auto runAll = [&](int threads) {
    setThreadCount(threads);
    std::vector<std::vector<float>> out;
    NodeRun add = runNode("Add", 14, {floats({1, 2, H, W}, x), floats({1, 2, 1, W}, row)});
    NodeRun addScalar = runNode("Add", 14, {floats({2 * H * W}, x), floats({}, scalar)});
    NodeRun relu = runNode("Relu", 14, {floats({2 * H * W}, x)});
    NodeRun bn = runNode("BatchNormalization", 15,
                         {floats({1, 2, H, W}, x), floats({2}, p), floats({2}, p), floats({2}, p),
                          floats({2}, var)});
    for (NodeRun *r : {&add, &addScalar, &relu, &bn}) {
      EXPECT_TRUE(r->status.ok()) << r->status.message();
      out.push_back(floatValues(r->out()));
    }
    return out;
  };
  std::vector<std::vector<float>> one = runAll(1);
  std::vector<std::vector<float>> two = runAll(2);
  ASSERT_EQ(one.size(), two.size());
  for (size_t i = 0; i < one.size(); ++i) {
    ASSERT_EQ(one[i].size(), two[i].size());
    EXPECT_EQ(std::memcmp(one[i].data(), two[i].data(), one[i].size() * sizeof(float)), 0)
        << "result " << i << " differs between 1 and 2 threads";
  }
  // The broadcast Add really added the row (not only the same bits twice).
  EXPECT_EQ(one[0][static_cast<size_t>(H * W + 3)], x[static_cast<size_t>(H * W + 3)] + row[W + 3]);
  setThreadCount(1);
}

/// Concat past kParallelMinElements is copied in one span per thread, each
/// span crossing runs of several inputs (one of them empty) and rows: every
/// element lands where the definition puts it, on 1, 2 and 3 threads; a
/// small Concat of int64 along the last axis too.
TEST(ThreadPool, LargeConcatPutsEveryElementInPlace) {
  const int64_t R = 3, H = 500, W = 1000; // rows before the axis, then 2 + 0 + 3 planes
  std::vector<float> a(static_cast<size_t>(R * 2 * H * W)), b(static_cast<size_t>(R * 3 * H * W));
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = static_cast<float>(i % 8191);
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = -static_cast<float>(i % 4093) - 1.0f;
  for (int threads : {1, 2, 3}) {
    setThreadCount(threads);
    NodeRun r = runNode("Concat", 13,
                        {floats({R, 2, H, W}, a), floats({R, 0, H, W}, {}), floats({R, 3, H, W}, b)},
                        {aInt("axis", 1)});
    ASSERT_TRUE(r.status.ok()) << r.status.message();
    ASSERT_EQ(r.out()->dims(), (std::vector<int64_t>{R, 5, H, W}));
    std::vector<float> y = floatValues(r.out());
    const int64_t plane = H * W;
    size_t wrong = 0;
    for (int64_t o = 0; o < R; ++o)
      for (int64_t c = 0; c < 5; ++c)
        for (int64_t j = 0; j < plane; ++j) {
          const float want = c < 2 ? a[static_cast<size_t>((o * 2 + c) * plane + j)]
                                   : b[static_cast<size_t>((o * 3 + c - 2) * plane + j)];
          wrong += y[static_cast<size_t>((o * 5 + c) * plane + j)] != want;
        }
    EXPECT_EQ(wrong, 0u) << "on " << threads << " threads";
  }
  setThreadCount(1);
  NodeRun small = runNode("Concat", 13, {int64s({2, 2}, {1, 2, 3, 4}), int64s({2, 1}, {5, 6})},
                          {aInt("axis", -1)});
  ASSERT_TRUE(small.status.ok()) << small.status.message();
  std::vector<int64_t> v(6);
  ASSERT_EQ(small.out()->numElements(), 6);
  std::memcpy(v.data(), small.out()->rawData(), sizeof(int64_t) * v.size());
  EXPECT_EQ(v, (std::vector<int64_t>{1, 2, 5, 3, 4, 6}));
}

TEST(ThreadPool, GemmAndConvAreBitIdenticalAcrossThreadCounts) {
  std::mt19937 rng(11);
  // GEMM above the parallel threshold, edges included (M, N not multiples
  // of the tiles), transposed and not.
  const int64_t M = 301, N = 517, K = 263;
  std::vector<float> A = randomFloats(rng, M * K), B = randomFloats(rng, K * N), bias = randomFloats(rng, M);
  // A dense convolution (the direct product: one band of output rows on
  // one thread, one per task on several).
  std::vector<float> x = randomFloats(rng, 2 * 32 * 40 * 40), dense = randomFloats(rng, 48 * 32 * 9);
  // Depthwise convolutions above the split threshold: tall planes split in
  // bands of output rows, short ones one plane per task.
  std::vector<float> xd = randomFloats(rng, 2 * 48 * 64 * 64), dw = randomFloats(rng, 48 * 9);
  std::vector<float> xs = randomFloats(rng, 2 * 512 * 8 * 8), ds = randomFloats(rng, 512 * 9);
  // Narrow planes (below kChannelSplitPlane) split by channels: a depthwise
  // layer, and a pointwise reduction (direct product) and expansion (GEMM)
  // by blocks of output channels.
  std::vector<float> xn = randomFloats(rng, 2 * 96 * 32 * 32), dn = randomFloats(rng, 96 * 9);
  std::vector<float> wr = randomFloats(rng, 24 * 96), wx = randomFloats(rng, 576 * 96);
  // Pointwise convolutions as direct products: a large plane cut into
  // column pieces (with a GEMM tail), and a small plane cut into row blocks.
  std::vector<float> xp = randomFloats(rng, 2 * 64 * 45 * 47), wp = randomFloats(rng, 40 * 64);
  std::vector<float> xq = randomFloats(rng, 256 * 6 * 7), wq = randomFloats(rng, 200 * 256);
  // A pointwise expansion through the GEMM over a narrow plane: three
  // column pieces, its output channels cut into blocks too.
  std::vector<float> xe = randomFloats(rng, 64 * 20 * 20), we = randomFloats(rng, 384 * 64),
                     be = randomFloats(rng, 384);
  // A projection whose three panels of output channels do not share evenly
  // between two threads (cut by positions as well), and a stride-2
  // depthwise layer of 339K multiply-adds (split from a sixteenth of the
  // products' threshold).
  std::vector<float> xj = randomFloats(rng, 192 * 28 * 28), wj = randomFloats(rng, 32 * 192),
                     dj = randomFloats(rng, 192 * 9);
  // A pointwise product on 7x7 as positions by channels, whose five panels
  // of output channels are cut into rows as well.
  std::vector<float> xt = randomFloats(rng, 320 * 7 * 7), wt = randomFloats(rng, 160 * 320);
  // A Winograd 3x3 layer on 14x14 planes with 32 output channels (as
  // DenseNet's): on threads, each image's transform, products and outputs
  // in phases cut across them.
  std::vector<float> xw = randomFloats(rng, 2 * 64 * 14 * 14), ww = randomFloats(rng, 32 * 64 * 9),
                     bw = randomFloats(rng, 32);
  // A projection that reduces channels sixfold on 14x14 (mobilenet_v2's
  // 384 -> 64), with a bias: on threads, by parts of K, each summed on its
  // own thread and added up afterwards (pointwiseKParts).
  std::vector<float> xk = randomFloats(rng, 2 * 384 * 14 * 14), wk = randomFloats(rng, 64 * 384),
                     bk = randomFloats(rng, 64);
  // A Winograd layer with more output channels than tiles (SqueezeNet's
  // 48 -> 192 on 13x13): on threads, one block of output channels each.
  std::vector<float> xb = randomFloats(rng, 2 * 48 * 13 * 13), wb = randomFloats(rng, 192 * 48 * 9),
                     bb = randomFloats(rng, 192);
  auto runAll = [&](int threads) {
    setThreadCount(threads);
    std::vector<std::vector<float>> out;
    for (bool ta : {false, true}) {
      std::vector<float> C(static_cast<size_t>(M * N));
      sgemm(ta, !ta, M, N, K, 0.5f, A.data(), ta ? M : K, B.data(), !ta ? K : N, 0.0f, C.data(), N,
            bias.data());
      out.push_back(C);
    }
    NodeRun depthwise = runNode("Conv", 11, {floats({2, 48, 64, 64}, xd), floats({48, 1, 3, 3}, dw)},
                                {aInt("group", 48), aInts("pads", {1, 1, 1, 1})});
    NodeRun shortPlanes =
        runNode("Conv", 11, {floats({2, 512, 8, 8}, xs), floats({512, 1, 3, 3}, ds)},
                {aInt("group", 512), aInts("pads", {1, 1, 1, 1})});
    NodeRun full = runNode("Conv", 11, {floats({2, 32, 40, 40}, x), floats({48, 32, 3, 3}, dense)},
                           {aInts("pads", {1, 1, 1, 1})});
    NodeRun wide =
        runNode("Conv", 11, {floats({2, 64, 45, 47}, xp), floats({40, 64, 1, 1}, wp)}, {});
    NodeRun narrow =
        runNode("Conv", 11, {floats({1, 256, 6, 7}, xq), floats({200, 256, 1, 1}, wq)}, {});
    NodeRun expand = runNode("Conv", 11,
                             {floats({1, 64, 20, 20}, xe), floats({384, 64, 1, 1}, we),
                              floats({384}, be)},
                             {});
    NodeRun project =
        runNode("Conv", 11, {floats({1, 192, 28, 28}, xj), floats({32, 192, 1, 1}, wj)}, {});
    NodeRun stridedDepthwise =
        runNode("Conv", 11, {floats({1, 192, 28, 28}, xj), floats({192, 1, 3, 3}, dj)},
                {aInt("group", 192), aInts("pads", {1, 1, 1, 1}), aInts("strides", {2, 2})});
    NodeRun fivePanels =
        runNode("Conv", 11, {floats({1, 320, 7, 7}, xt), floats({160, 320, 1, 1}, wt)}, {});
    NodeRun winogradPhases = runNode(
        "Conv", 11, {floats({2, 64, 14, 14}, xw), floats({32, 64, 3, 3}, ww), floats({32}, bw)},
        {aInts("pads", {1, 1, 1, 1})});
    NodeRun narrowDepthwise =
        runNode("Conv", 11, {floats({2, 96, 32, 32}, xn), floats({96, 1, 3, 3}, dn)},
                {aInt("group", 96), aInts("pads", {1, 1, 1, 1})});
    NodeRun reduce =
        runNode("Conv", 11, {floats({2, 96, 32, 32}, xn), floats({24, 96, 1, 1}, wr)}, {});
    NodeRun widen =
        runNode("Conv", 11, {floats({2, 96, 32, 32}, xn), floats({576, 96, 1, 1}, wx)}, {});
    NodeRun byParts = runNode(
        "Conv", 11, {floats({2, 384, 14, 14}, xk), floats({64, 384, 1, 1}, wk), floats({64}, bk)},
        {});
    EXPECT_TRUE(byParts.status.ok());
    out.push_back(floatValues(byParts.out()));
    // The same in two groups of 192 -> 32: parts in the tasks of each group.
    NodeRun groupsByParts = runNode(
        "Conv", 11,
        {floats({2, 384, 14, 14}, xk),
         floats({64, 192, 1, 1}, std::vector<float>(wk.begin(), wk.begin() + 64 * 192)),
         floats({64}, bk)},
        {aInt("group", 2)});
    EXPECT_TRUE(groupsByParts.status.ok());
    out.push_back(floatValues(groupsByParts.out()));
    NodeRun winogradBlocks = runNode(
        "Conv", 11, {floats({2, 48, 13, 13}, xb), floats({192, 48, 3, 3}, wb), floats({192}, bb)},
        {aInts("pads", {1, 1, 1, 1})});
    EXPECT_TRUE(winogradBlocks.status.ok());
    out.push_back(floatValues(winogradBlocks.out()));
    EXPECT_TRUE(depthwise.status.ok() && shortPlanes.status.ok() && full.status.ok() &&
                wide.status.ok() && narrow.status.ok() && expand.status.ok() &&
                narrowDepthwise.status.ok() && reduce.status.ok() && widen.status.ok() &&
                project.status.ok() && stridedDepthwise.status.ok() && fivePanels.status.ok() &&
                winogradPhases.status.ok());
    out.push_back(floatValues(winogradPhases.out()));
    out.push_back(floatValues(fivePanels.out()));
    out.push_back(floatValues(project.out()));
    out.push_back(floatValues(stridedDepthwise.out()));
    out.push_back(floatValues(narrowDepthwise.out()));
    out.push_back(floatValues(reduce.out()));
    out.push_back(floatValues(widen.out()));
    out.push_back(floatValues(expand.out()));
    out.push_back(floatValues(wide.out()));
    out.push_back(floatValues(narrow.out()));
    out.push_back(floatValues(depthwise.out()));
    out.push_back(floatValues(shortPlanes.out()));
    out.push_back(floatValues(full.out()));
    return out;
  };
  std::vector<std::vector<float>> one = runAll(1);
  for (int threads : {2, 3, 7}) {
    std::vector<std::vector<float>> many = runAll(threads);
    ASSERT_EQ(many.size(), one.size());
    for (size_t i = 0; i < one.size(); ++i)
      EXPECT_EQ(std::memcmp(many[i].data(), one[i].data(), one[i].size() * sizeof(float)), 0)
          << "result " << i << " differs between 1 and " << threads << " threads";
  }
  setThreadCount(1); // the default
}

/// Float LayerNormalization rows (layerNormRow: vectorized double sums,
/// rows across the threads from kLayerNormParallelElements): the same bits
/// on one thread and three, and within float rounding of a long-double
/// reference (mean and variance of values far from zero, so that a float
/// sum would lose digits), for row lengths off the 16 and 32 lanes, with
/// and without a bias.
TEST(NormKernels, LayerNormRowsMatchALongDoubleReferenceOnEveryThreadCount) {
  std::mt19937 rng(43);
  const std::string original = gemmEngineName();
  for (int64_t D : {1, 7, 16, 33, 64, 100, 768}) {
    const int64_t rows = D >= 64 ? 300 : 5;
    std::vector<float> x = randomFloats(rng, rows * D), scale = randomFloats(rng, D), bias = randomFloats(rng, D);
    for (float &v : x)
      v = 100.0f + 3.0f * v;
    for (bool withBias : {false, true})
      for (const char *engine : {"baseline", "avx512"}) {
        if (!setGemmEngine(engine))
          continue;
        std::vector<TensorPtr> in = {floats({rows, D}, x), floats({D}, scale)};
        if (withBias)
          in.push_back(floats({D}, bias));
        std::vector<std::vector<float>> outs;
        for (int threads : {1, 3}) {
          setThreadCount(threads);
          NodeRun r = runNode("LayerNormalization", 17, in, {});
          ASSERT_TRUE(r.status.ok()) << r.status.message();
          outs.push_back(floatValues(r.out()));
        }
        setThreadCount(1);
        ASSERT_EQ(outs[0].size(), static_cast<size_t>(rows * D));
        EXPECT_EQ(std::memcmp(outs[0].data(), outs[1].data(), outs[0].size() * sizeof(float)), 0)
            << "D " << D << " " << engine << ": three threads differ from one";
        for (int64_t r = 0; r < rows; ++r) {
          long double sum = 0, sq = 0;
          for (int64_t i = 0; i < D; ++i)
            sum += x[static_cast<size_t>(r * D + i)];
          const long double mean = sum / D;
          for (int64_t i = 0; i < D; ++i) {
            long double d = x[static_cast<size_t>(r * D + i)] - mean;
            sq += d * d;
          }
          const long double inv = 1.0L / std::sqrt(sq / D + 1e-5L);
          for (int64_t i = 0; i < D; ++i) {
            long double want = (x[static_cast<size_t>(r * D + i)] - mean) * inv * scale[static_cast<size_t>(i)] +
                               (withBias ? bias[static_cast<size_t>(i)] : 0.0f);
            ASSERT_NEAR(outs[0][static_cast<size_t>(r * D + i)], static_cast<double>(want), 2e-5)
                << "D " << D << " row " << r << " element " << i << " " << engine;
          }
        }
      }
    setGemmEngine(original.c_str());
  }
}

/// Float InstanceNormalization (LayerNormalization's row over each plane,
/// with the channel's scale and bias): within float rounding of a
/// long-double reference on planes far from zero, off the 16 and 32 lanes,
/// and the same bits on one and three threads (planes across the threads
/// from 128K elements).
TEST(NormKernels, InstanceNormPlanesMatchALongDoubleReferenceOnEveryThreadCount) {
  std::mt19937 rng(47);
  for (auto [N, C, P] : {std::array<int64_t, 3>{1, 32, 799}, std::array<int64_t, 3>{2, 3, 5},
                         std::array<int64_t, 3>{1, 64, 4096}}) {
    std::vector<float> x = randomFloats(rng, N * C * P), scale = randomFloats(rng, C),
                       bias = randomFloats(rng, C);
    for (float &v : x)
      v = 50.0f + 2.0f * v;
    std::vector<std::vector<float>> outs;
    for (int threads : {1, 3}) {
      setThreadCount(threads);
      NodeRun r = runNode("InstanceNormalization", 6,
                          {floats({N, C, P}, x), floats({C}, scale), floats({C}, bias)}, {});
      ASSERT_TRUE(r.status.ok()) << r.status.message();
      outs.push_back(floatValues(r.out()));
    }
    setThreadCount(1);
    ASSERT_EQ(outs[0].size(), static_cast<size_t>(N * C * P));
    EXPECT_EQ(std::memcmp(outs[0].data(), outs[1].data(), outs[0].size() * sizeof(float)), 0)
        << "C " << C << " P " << P << ": three threads differ from one";
    for (int64_t plane = 0; plane < N * C; ++plane) {
      const float *xp = x.data() + plane * P;
      long double sum = 0, sq = 0;
      for (int64_t i = 0; i < P; ++i)
        sum += xp[i];
      const long double mean = sum / P;
      for (int64_t i = 0; i < P; ++i)
        sq += (xp[i] - mean) * (xp[i] - mean);
      const long double inv = 1.0L / std::sqrt(sq / P + 1e-5L);
      const size_t c = static_cast<size_t>(plane % C);
      for (int64_t i = 0; i < P; ++i) {
        const long double want = (xp[i] - mean) * inv * scale[c] + bias[c];
        ASSERT_NEAR(outs[0][static_cast<size_t>(plane * P + i)], static_cast<double>(want), 2e-5)
            << "C " << C << " P " << P << " plane " << plane << " element " << i;
      }
    }
  }
}

/// Where without the broadcast walk (the condition of the output's dims, X
/// and Y each of them or one element: whereFlat) gives the walk's bytes:
/// the same Where with the condition one rank lower takes the walk. Element
/// sizes 1, 2, 4 and 8, a scalar on either side or both, and condition
/// Binary elementwise ops on operands of one shape, or with one operand a
/// single element of no higher rank, skip the broadcast plan (runFlat):
/// each output is the op on its two elements, bit for bit as a scalar loop
/// computes it (float Add/Sub/Mul/Div, int32 Add/Mul, bool-out Greater,
/// with NaN and signed zeros), with the output's dims the larger operand's;
/// a single element of higher rank still broadcasts through the plan
/// ([1,1,1] with [5] gives [1,1,5]); and a tensor large enough to be cut
/// across the threads gives the same bits on one and three.
TEST(BinaryKernel, FlatOperandsGiveTheScalarLoopsBits) {
  std::mt19937 rng(83);
  std::vector<float> a = randomFloats(rng, 2 * 3 * 37), b = randomFloats(rng, 2 * 3 * 37);
  a[5] = std::nanf("");
  b[7] = std::nanf("");
  a[9] = -0.0f;
  b[9] = 0.0f;
  b[11] = 0.0f; // a division by zero
  const float k = 0.75f;
  struct Case {
    const char *op;
    float (*f)(float, float);
  };
  const Case cases[] = {{"Add", [](float x, float y) { return x + y; }},
                        {"Sub", [](float x, float y) { return x - y; }},
                        {"Mul", [](float x, float y) { return x * y; }},
                        {"Div", [](float x, float y) { return x / y; }}};
  auto bits = [](const std::vector<float> &v) {
    std::vector<uint32_t> u(v.size());
    std::memcpy(u.data(), v.data(), v.size() * sizeof(float));
    return u;
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.op);
    std::vector<float> same(a.size()), byScalar(a.size()), scalarBy(a.size());
    for (size_t i = 0; i < a.size(); ++i) {
      same[i] = c.f(a[i], b[i]);
      byScalar[i] = c.f(a[i], k);
      scalarBy[i] = c.f(k, b[i]);
    }
    NodeRun r1 = runNode(c.op, 14, {floats({2, 3, 37}, a), floats({2, 3, 37}, b)});
    NodeRun r2 = runNode(c.op, 14, {floats({2, 3, 37}, a), floats({1, 1}, {k})});
    NodeRun r3 = runNode(c.op, 14, {floats({}, {k}), floats({2, 3, 37}, b)});
    ASSERT_TRUE(r1.status.ok() && r2.status.ok() && r3.status.ok());
    EXPECT_EQ(bits(floatValues(r1.out())), bits(same));
    EXPECT_EQ(bits(floatValues(r2.out())), bits(byScalar));
    EXPECT_EQ(bits(floatValues(r3.out())), bits(scalarBy));
    EXPECT_EQ(r2.out()->dims(), (std::vector<int64_t>{2, 3, 37}));
    EXPECT_EQ(r3.out()->dims(), (std::vector<int64_t>{2, 3, 37}));
  }
  // int32 and a bool output.
  std::vector<int32_t> ia(50), ib(50);
  for (int i = 0; i < 50; ++i) {
    ia[static_cast<size_t>(i)] = i * 7919 - 100000;
    ib[static_cast<size_t>(i)] = 3 - i;
  }
  auto ints = [](std::vector<int64_t> dims, const std::vector<int32_t> &v) {
    return Tensor::fromValues<int32_t>(DataType::Int32, std::move(dims), v);
  };
  NodeRun add = runNode("Add", 14, {ints({5, 10}, ia), ints({5, 10}, ib)});
  NodeRun mul = runNode("Mul", 14, {ints({5, 10}, ia), ints({1}, {-3})});
  NodeRun gt = runNode("Greater", 13, {floats({2, 3, 37}, a), floats({1}, {0.0f})});
  ASSERT_TRUE(add.status.ok() && mul.status.ok() && gt.status.ok());
  for (size_t i = 0; i < 50; ++i) {
    EXPECT_EQ(add.out()->dataAs<int32_t>()[i], ia[i] + ib[i]);
    EXPECT_EQ(mul.out()->dataAs<int32_t>()[i], ia[i] * -3);
  }
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_EQ(gt.out()->dataAs<bool>()[i], a[i] > 0.0f) << i;
  // A single element of higher rank broadcasts the other's dims up.
  NodeRun up = runNode("Add", 14, {floats({1, 1, 1}, {k}), floats({5}, {1, 2, 3, 4, 5})});
  ASSERT_TRUE(up.status.ok());
  EXPECT_EQ(up.out()->dims(), (std::vector<int64_t>{1, 1, 5}));
  EXPECT_EQ(floatValues(up.out()), (std::vector<float>{1.75f, 2.75f, 3.75f, 4.75f, 5.75f}));
  // Cut across the threads (parallelSpans splits from 8M elements).
  const int64_t big = (int64_t{1} << 23) + 37;
  std::vector<float> x = randomFloats(rng, big), y = randomFloats(rng, big);
  auto run = [&](int threads) {
    setThreadCount(threads);
    NodeRun r = runNode("Div", 14, {floats({big}, x), floats({big}, y)});
    EXPECT_TRUE(r.status.ok());
    return bits(floatValues(r.out()));
  };
  const std::vector<uint32_t> one = run(1), three = run(3);
  EXPECT_EQ(one, three);
  EXPECT_EQ(one[big - 1], bits({x[static_cast<size_t>(big - 1)] / y[static_cast<size_t>(big - 1)]})[0]);
  setThreadCount(1);
}

/// bytes other than 0 and 1 (true).
TEST(WhereKernel, FlatPathGivesTheBroadcastWalksBytes) {
  std::mt19937 rng(47);
  const int64_t n = 37;
  std::vector<uint8_t> c(static_cast<size_t>(n));
  for (size_t i = 0; i < c.size(); ++i)
    c[i] = static_cast<uint8_t>(i % 3 == 0 ? 0 : i % 3 == 1 ? 1 : 0x41);
  auto bytes = [&](DataType t, size_t es, int64_t count) {
    std::vector<uint8_t> v(static_cast<size_t>(count) * es);
    for (uint8_t &b : v)
      b = static_cast<uint8_t>(rng());
    return Tensor::fromValues<uint8_t>(t, {}, v);
  };
  struct Case {
    DataType type;
    size_t es;
  };
  for (Case k : {Case{DataType::UInt8, 1}, Case{DataType::Float16, 2}, Case{DataType::Float, 4},
                 Case{DataType::Int64, 8}})
    for (int scalars = 0; scalars < 4; ++scalars) {
      const bool xScalar = scalars & 1, yScalar = scalars & 2;
      auto make = [&](bool scalar) {
        TensorPtr raw = bytes(k.type, k.es, scalar ? 1 : n);
        std::vector<uint8_t> v(raw->rawData(), raw->rawData() + raw->byteSize());
        return Tensor::fromValues<uint8_t>(k.type, scalar ? std::vector<int64_t>{} : std::vector<int64_t>{1, n}, v);
      };
      TensorPtr x = make(xScalar), y = make(yScalar);
      NodeRun flat = runNode("Where", 16, {Tensor::fromValues<uint8_t>(DataType::Bool, {1, n}, c), x, y});
      NodeRun walk = runNode("Where", 16, {Tensor::fromValues<uint8_t>(DataType::Bool, {n}, c), x, y});
      ASSERT_TRUE(flat.status.ok()) << flat.status.message();
      ASSERT_TRUE(walk.status.ok()) << walk.status.message();
      ASSERT_EQ(flat.out()->dims(), (std::vector<int64_t>{1, n}));
      ASSERT_EQ(flat.out()->byteSize(), static_cast<size_t>(n) * k.es);
      EXPECT_EQ(std::memcmp(flat.out()->rawData(), walk.out()->rawData(), flat.out()->byteSize()), 0)
          << dataTypeName(k.type) << " scalars " << scalars;
      // And the values are the selection itself.
      for (int64_t i = 0; i < n; ++i) {
        const TensorPtr &from = c[static_cast<size_t>(i)] ? x : y;
        const int64_t at = from->numElements() == 1 ? 0 : i;
        EXPECT_EQ(std::memcmp(flat.out()->rawData() + i * k.es, from->rawData() + at * k.es, k.es), 0)
            << dataTypeName(k.type) << " element " << i;
      }
    }
}
