//===- api/FusionNames.cpp - OnnxSlim's fusion names, one table -----------===//
//
// OnnxSlim names its fusion patterns (FusionConvBN, FusionGemm...); users
// of its --skip-fusion-patterns and slim(skip_fusion_patterns=...) name
// them to us. This is the one table that says what each name is here: the
// pass doing that fusion and, where the pass does more than the name means,
// the pass option that skips only that fusion. The command line's
// --skip-fusion-patterns (its help and errors), optimize()'s skipFusions
// and the Python module's FUSION_PATTERNS all read it.
//
// OnnxSlim's patterns with no counterpart here are not listed (and are
// refused as unknown names).
//
//===----------------------------------------------------------------------===//
#include "api/FusionNames.h"

#include "transforms/PassRegistry.h"

#include <algorithm>

namespace onnxslim {

namespace {

const PassRegistry &builtinRegistry() {
  static const PassRegistry registry = PassRegistry::withBuiltinPasses();
  return registry;
}

bool isFusionPass(std::string_view name, const PassRegistry &registry) {
  return name.substr(0, 5) == "fuse-" && registry.lookup(name);
}

} // namespace

std::vector<FusionName> onnxslimFusionNames() {
  // In OnnxSlim's order; the command line's help and errors list them so.
  return {
      {"FusionConvBN", "fuse-conv-batchnorm", "skip=conv",
       "Conv + BatchNormalization (the pass also folds BN into ConvTranspose, Gemm and MatMul: those stay)"},
      {"FusionConvTransposeBN", "fuse-conv-batchnorm", "skip=conv-transpose", "ConvTranspose + BatchNormalization"},
      {"FusionConvAdd", "fuse-conv-add", "", "Conv/ConvTranspose + a per-channel constant Add (into the bias)"},
      {"FusionConvMul", "fuse-conv-mul", "", "Conv + a per-channel constant Mul (into the weights and bias)"},
      {"FusionGemm", "fuse-matmul-add", "", "2-D MatMul with constant weights + a constant bias Add into Gemm"},
      {"FusionGelu", "fuse-gelu", "", "a decomposed GELU (erf or tanh form) into Gelu"},
      {"FusionPadConv", "fuse-pad-conv", "",
       "a constant-zero Pad into the Conv after it (the pass also merges Pads into pools: skipped too)"},
  };
}

std::vector<OptimizationName> onnxslimOptimizationNames() {
  std::vector<std::string> fusions;
  for (const PassInfo *p : builtinRegistry().passes())
    if (isFusionPass(p->name, builtinRegistry()))
      fusions.push_back(p->name);
  return {
      {"constant_folding", {"fold-constants"}},
      {"graph_fusion", fusions},
      {"dead_node_elimination", {"eliminate-dead-nodes"}},
      {"subexpression_elimination", {"eliminate-common-subexpressions"}},
      {"weight_tying", {"eliminate-duplicate-constants"}},
  };
}

Result<std::vector<std::string>> resolveOptimizationSkips(const std::vector<std::string> &names) {
  std::vector<std::string> passes;
  std::vector<OptimizationName> table = onnxslimOptimizationNames();
  for (const std::string &name : names) {
    auto it = std::find_if(table.begin(), table.end(), [&](const OptimizationName &o) { return o.name == name; });
    if (it == table.end()) {
      std::string known;
      for (const OptimizationName &o : table)
        known += (known.empty() ? "" : ", ") + o.name;
      return Status::error("{option:skipOptimizations}: unknown optimization '" + name + "' (OnnxSlim's names: " +
                           known + ")");
    }
    passes.insert(passes.end(), it->passes.begin(), it->passes.end());
  }
  return passes;
}

std::string fusionPassName(std::string_view name) {
  for (const FusionName &f : onnxslimFusionNames())
    if (name == f.name)
      return f.pass;
  if (isFusionPass(name, builtinRegistry()))
    return std::string(name);
  return {};
}

std::string unknownFusionMessage(std::string_view name) {
  std::string names;
  for (const FusionName &f : onnxslimFusionNames())
    names += (names.empty() ? "" : ", ") + f.name;
  return "unknown fusion '" + std::string(name) + "' (fuse-* pass names as {option:listPasses} lists, or OnnxSlim's: " +
         names + ")";
}

Result<FusionSkips> resolveFusionSkips(const std::vector<std::string> &names, const PassRegistry &registry) {
  FusionSkips skips;
  for (const std::string &name : names) {
    std::vector<FusionName> table = onnxslimFusionNames();
    auto it = std::find_if(table.begin(), table.end(), [&](const FusionName &f) { return f.name == name; });
    if (it == table.end() && !isFusionPass(name, registry))
      return Status::error("{option:skipFusions}: " + unknownFusionMessage(name));
    std::string pass = it == table.end() ? name : it->pass;
    if (it == table.end() || it->skipOption.empty())
      skips.passes.push_back(pass);
    else if (std::vector<std::string> &options = skips.options[pass];
             std::find(options.begin(), options.end(), it->skipOption) == options.end())
      options.push_back(it->skipOption);
  }
  return skips;
}

} // namespace onnxslim
