//===- examples/custom_pass/main.cpp - A pass of your own -----------------===//
//
//   custom_pass IN OUT
//
// Registers the pass `name-nodes` (every node, subgraphs included, is named
// "<OpType>_<N>", N counting in walk order) beside the built-in passes, runs
// the pipeline "name-nodes,eliminate-dead-nodes" on IN and saves OUT. Then
// reads OUT back and counts the nodes that carry such a name:
//
//   pipeline: name-nodes,eliminate-dead-nodes
//   name-nodes: nodes-named=42
//   saved: 42 nodes, 42 named
//
// On error prints the message to stderr and exits 1.
//
//===----------------------------------------------------------------------===//
#include <onnxslim/passes.h>

#include <cctype>
#include <cstdint>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>

namespace {

/// Whether `name` is "<opType>_<digits>".
bool isGeneratedName(const onnxslim::Node &node) {
  const std::string &name = node.name();
  const std::string prefix = node.opType() + "_";
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0)
    return false;
  for (size_t i = prefix.size(); i < name.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(name[i])))
      return false;
  return true;
}

/// Names every node "<OpType>_<N>": a whole-model pass, registered by name.
struct NameNodes : onnxslim::Pass {
  std::string_view name() const override { return "name-nodes"; }
  std::string_view description() const override { return "Names every node <OpType>_<N>"; }

  /// Given a model, Execute: renames every node of every graph, Result:
  /// whether a name changed.
  bool run(onnxslim::Model &model, onnxslim::PassContext &context) override {
    uint64_t &named = context.counter("nodes-named", "Nodes given a new name");
    size_t index = 0;
    bool changed = false;
    model.graph()->walk([&](onnxslim::Node *node) {
      std::string fresh = node->opType() + "_" + std::to_string(index++);
      if (node->name() != fresh) {
        node->setName(std::move(fresh));
        ++named;
        changed = true;
      }
    });
    return changed;
  }
};

} // namespace

int main(int argc, char **argv) {
  if (argc != 3) {
    std::cerr << "usage: custom_pass IN OUT\n";
    return 1;
  }
  onnxslim::PassRegistry registry = onnxslim::PassRegistry::withBuiltinPasses();
  if (!registry.add<NameNodes>()) {
    std::cerr << "cannot register name-nodes\n";
    return 1;
  }
  onnxslim::Result<std::unique_ptr<onnxslim::Model>> model = onnxslim::load(argv[1]);
  if (!model) {
    std::cerr << model.error() << "\n";
    return 1;
  }
  onnxslim::OptimizeOptions options;
  options.registry = &registry;
  options.pipeline = "name-nodes,eliminate-dead-nodes";
  onnxslim::OptimizeReport report = onnxslim::optimize(**model, options);
  if (!report.status) {
    std::cerr << report.status.message() << "\n";
    return 1;
  }
  if (onnxslim::Status saved = onnxslim::save(**model, argv[2]); !saved) {
    std::cerr << saved.message() << "\n";
    return 1;
  }
  std::cout << "pipeline: " << report.pipeline << "\n";
  for (const onnxslim::PassReport &pass : report.passes)
    for (const auto &[counter, value] : pass.counters)
      std::cout << pass.pass << ": " << counter << "=" << value << "\n";

  // The names survive writing and reading back.
  onnxslim::Result<std::unique_ptr<onnxslim::Model>> reread = onnxslim::load(argv[2]);
  if (!reread) {
    std::cerr << reread.error() << "\n";
    return 1;
  }
  size_t nodes = 0, named = 0;
  (*reread)->graph()->walk([&](onnxslim::Node *node) {
    ++nodes;
    named += isGeneratedName(*node);
  });
  std::cout << "saved: " << nodes << " nodes, " << named << " named\n";
  return 0;
}
