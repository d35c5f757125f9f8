//===- bench/PipelineScaling.cpp - Default pipeline time per node ---------===//
//
// Generates graphs of about 10k, 50k and 200k nodes - a long chain with many
// Identity ops, dead branches, duplicate Constant nodes and initializers, no-op
// multiplications, cancelling Transpose pairs and common subexpressions - and
// runs the default pipeline to its fixed point on each. Prints the time per
// node for every size and the ratio of the largest to the smallest: a pass
// with quadratic behaviour shows as a ratio far above 1. Larger graphs also
// miss the caches more, so each size is also timed against a reference
// measured in the same run on the same graph: a minimal walk over every node
// and use list. Pipeline time / walk time must stay flat across sizes. Times
// are CPU times (the machine may be shared), the best of a few repetitions on
// freshly generated graphs.
//
//   bench_pipeline_scaling [--quick] [--timing] [--size=N]
//     --timing: per-pass report on stderr; --size: only that size
//
//===----------------------------------------------------------------------===//
#include "ir/IR.h"
#include "ir/Verifier.h"
#include "transforms/PassManager.h"
#include "transforms/Passes.h"

#include <algorithm>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>

using namespace onnxslim;

namespace {

Type floatType(std::vector<int64_t> dims) {
  Shape s;
  for (int64_t d : dims)
    s.push_back(Dim::value(d));
  return Type::tensor(DataType::Float, s);
}

/// One block of 16 nodes appended to the chain ending at `v`:
///   k  = Constant (one of 8 values: duplicates across blocks)
///   a  = Add(v, k); i1 = Identity(a); i2 = Identity(i1)
///   d1 = Exp(i2); d2 = Neg(d1); d3 = Add(d2, w)         (dead branch)
///   m  = Mul(i2, one)                                   (no-op)
///   t1 = Transpose(m); t2 = Transpose(t1)               (cancel)
///   s1 = Sigmoid(t2); s2 = Sigmoid(t2); c = Add(s1, s2) (CSE)
///   r  = Relu(c); i3 = Identity(r); v' = Tanh(i3)
Value *appendBlock(Graph &g, Value *v, Value *one, Value *w, size_t b) {
  auto add = [&](const char *op, std::vector<Value *> operands, const char *base) {
    Node *n = g.createNode(op, operands, {std::string(base) + std::to_string(b)});
    g.append(n);
    return n;
  };
  Node *k = add("Constant", {}, "k");
  float value = static_cast<float>(b % 8);
  k->setAttr(Attribute::makeTensor("value", Tensor::fromValues<float>(DataType::Float, {3}, {value, value, value})));
  Value *a = add("Add", {v, k->result(0)}, "a")->result(0);
  Value *i1 = add("Identity", {a}, "i1_")->result(0);
  Value *i2 = add("Identity", {i1}, "i2_")->result(0);
  Value *d1 = add("Exp", {i2}, "d1_")->result(0);
  Value *d2 = add("Neg", {d1}, "d2_")->result(0);
  add("Add", {d2, w}, "d3_");
  Value *m = add("Mul", {i2, one}, "m")->result(0);
  Node *t1 = add("Transpose", {m}, "t1_");
  t1->setAttr(Attribute::makeInts("perm", {1, 0}));
  Node *t2 = add("Transpose", {t1->result(0)}, "t2_");
  t2->setAttr(Attribute::makeInts("perm", {1, 0}));
  Value *s1 = add("Sigmoid", {t2->result(0)}, "s1_")->result(0);
  Value *s2 = add("Sigmoid", {t2->result(0)}, "s2_")->result(0);
  Value *c = add("Add", {s1, s2}, "c")->result(0);
  Value *r = add("Relu", {c}, "r")->result(0);
  Value *i3 = add("Identity", {r}, "i3_")->result(0);
  return add("Tanh", {i3}, "v")->result(0);
}

constexpr size_t kNodesPerBlock = 16;

std::unique_ptr<Model> makeModel(size_t targetNodes) {
  auto model = std::make_unique<Model>();
  model->irVersion = 8;
  model->opsetImport.push_back(OpsetId{"", 17, {}});
  model->setGraph(std::make_unique<Graph>());
  Graph &g = *model->graph();
  g.name = "scaling";
  Value *v = g.addInput("x", floatType({2, 3}));
  Value *one = g.addInitializer("one", Tensor::fromValues<float>(DataType::Float, {}, {1.0f}));
  size_t blocks = targetNodes / kNodesPerBlock;
  for (size_t b = 0; b < blocks; ++b) {
    // Duplicate initializers too: one per block, 4 distinct values.
    float value = static_cast<float>(b % 4);
    Value *w = g.addInitializer("w" + std::to_string(b),
                                Tensor::fromValues<float>(DataType::Float, {3}, {value, value, value}));
    v = appendBlock(g, v, one, w, b);
  }
  g.addOutput(v, floatType({2, 3}));
  return model;
}

struct Measurement {
  size_t nodesBefore = 0, nodesAfter = 0, initsBefore = 0, initsAfter = 0;
  unsigned rounds = 0;
  double seconds = 0;      ///< pipeline, CPU time of this process
  double walkSeconds = 0;  ///< reference: one walk touching every use, same graph
};

double cpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

/// The reference: the cheapest possible whole-graph pass, a walk that reads
/// every node's operands, their producers and the heads of their use lists
/// (what any pass does at least once). Its time per node shows what the memory hierarchy alone costs at
/// each size.
double referenceWalk(const Model &model, size_t &checksum) {
  double start = cpuSeconds();
  for (int rep = 0; rep < 4; ++rep)
    for (const Node *n : model.graph()->nodes())
      for (const Value *v : n->operands())
        if (v) {
          const Node *def = v->definingNode();
          checksum += v->hasOneUse() + v->name().size() + (def ? def->opType().size() : 0);
        }
  return (cpuSeconds() - start) / 4;
}

Measurement measure(size_t targetNodes, int reps, bool timing) {
  Measurement best;
  best.seconds = 1e30;
  PassRegistry registry = PassRegistry::withBuiltinPasses();
  for (int r = 0; r < reps; ++r) {
    std::unique_ptr<Model> model = makeModel(targetNodes);
    Measurement m;
    m.nodesBefore = model->graph()->numNodes();
    m.initsBefore = model->graph()->initializers().size();
    size_t checksum = 0;
    m.walkSeconds = referenceWalk(*model, checksum);
    if (checksum == 42)
      std::printf(" ");
    PassManager pm(registry);
    std::string error;
    if (!pm.parsePipeline(defaultPipeline(), error)) {
      std::fprintf(stderr, "error: %s\n", error.c_str());
      std::exit(1);
    }
    pm.setMaxRounds(10);
    double start = cpuSeconds();
    bool ok = pm.run(*model, error);
    m.seconds = cpuSeconds() - start;
    if (!ok || !verify(*model).empty()) {
      std::fprintf(stderr, "error: the pipeline failed or broke the IR: %s\n", error.c_str());
      std::exit(1);
    }
    m.nodesAfter = model->graph()->numNodes();
    m.initsAfter = model->graph()->initializers().size();
    m.rounds = pm.report().rounds;
    if (m.seconds < best.seconds)
      best = m;
    if (timing && r == reps - 1)
      pm.printTiming(std::cerr);
  }
  return best;
}

} // namespace

int main(int argc, char **argv) {
  bool quick = false, timing = false;
  size_t only = 0;
  for (int i = 1; i < argc; ++i) {
    quick |= std::strcmp(argv[i], "--quick") == 0;
    timing |= std::strcmp(argv[i], "--timing") == 0;
    if (std::strncmp(argv[i], "--size=", 7) == 0)
      only = std::strtoull(argv[i] + 7, nullptr, 10);
  }
  const size_t sizes[] = {10000, 50000, 200000};
  std::printf("Default pipeline (%s), best of %d runs per size, CPU time\n", defaultPipeline().c_str(),
              quick ? 1 : 3);
  std::printf("%8s %8s %7s %7s %6s %10s %12s %14s %10s\n", "nodes", "after", "inits", "after", "rounds",
              "time (ms)", "us per node", "walk ns/node", "vs walk");
  double firstPerNode = 0, lastPerNode = 0, firstRatio = 0, lastRatio = 0;
  for (size_t n : sizes) {
    if (only && n != only)
      continue;
    Measurement m = measure(n, quick ? 1 : 3, timing);
    double nodes = static_cast<double>(m.nodesBefore);
    double perNode = 1e6 * m.seconds / nodes;
    double walkPerNode = 1e9 * m.walkSeconds / nodes;
    double ratio = m.seconds / m.walkSeconds;
    if (!firstPerNode) {
      firstPerNode = perNode;
      firstRatio = ratio;
    }
    lastPerNode = perNode;
    lastRatio = ratio;
    std::printf("%8zu %8zu %7zu %7zu %6u %10.1f %12.3f %14.1f %10.0f\n", m.nodesBefore, m.nodesAfter,
                m.initsBefore, m.initsAfter, m.rounds, 1e3 * m.seconds, perNode, walkPerNode, ratio);
  }
  std::printf("time per node, 200k vs 10k: %.2fx; relative to the reference walk: %.2fx (1.00 = linear)\n",
              lastPerNode / firstPerNode, lastRatio / firstRatio);
  return 0;
}
