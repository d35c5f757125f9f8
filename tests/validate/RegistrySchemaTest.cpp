//===- tests/validate/RegistrySchemaTest.cpp - Kernels agree with the schemas ===//
//
// The interpreter's kernel registry and the op schema table must agree: every
// default-domain (and ai.onnx.ml, ai.onnx.preview.training) op the
// interpreter has a kernel for exists in the ONNX specification at every
// opset version the kernel is registered for. The registry cannot list its
// entries, so every op name the table knows is probed at every version.
//
//===----------------------------------------------------------------------===//
#include "ir/OpSchema.h"
#include "runtime/Kernel.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

using namespace onnxslim;

namespace {

/// Kernels registered for opset versions where the spec has no such op. They
/// are harmless (the validator refuses such models before the interpreter
/// sees them) but are runtime/ registration ranges to narrow; each must still
/// disagree, so an entry is removed when its range is fixed.
const std::map<std::string, std::string> kRegistryBeyondSpec = {
    {"Scatter", "Scatter-11 is a deprecation (use ScatterElements); the kernel is registered for 9..latest"},
    {"MeanVarianceNormalization", "the spec defines it from opset 9; the kernel is registered from opset 1"},
    {"GroupNormalization", "GroupNormalization-18 is deprecated in the spec (GroupNormalization-21 replaces it); "
                           "the kernel is registered from opset 18"},
};

/// Kernels of runtime-specific contrib ops, which the ONNX specification does
/// not define (emitted only for --target=onnxruntime).
const std::set<std::pair<std::string, std::string>> kContribKernels = {
    {"com.microsoft", "FusedConv"},
};

} // namespace

TEST(RegistrySchema, EveryKernelIsAnOpOfTheSpecAtItsVersions) {
  const rt::OpRegistry &registry = rt::OpRegistry::builtin();
  std::set<std::pair<std::string, std::string>> ops;
  for (const OpSchema &s : allOpSchemas())
    ops.emplace(std::string(s.domain), std::string(s.opType));
  size_t kernelsSeen = 0, versionsChecked = 0;
  std::set<const rt::KernelDef *> distinct;
  std::set<std::string> disagreeing;
  for (const auto &[domain, op] : ops) {
    int newest = domain.empty() ? maxKnownDefaultOpset() : 5;
    for (int v = 1; v <= newest; ++v) {
      const rt::KernelDef *k = registry.find(domain, op, v);
      if (!k)
        continue;
      ++versionsChecked;
      if (distinct.insert(k).second)
        ++kernelsSeen;
      if (lookupOpSchema(domain, op, v))
        continue;
      disagreeing.insert(op);
      if (domain.empty() && kRegistryBeyondSpec.count(op))
        continue;
      ADD_FAILURE()
          << "the interpreter has a kernel for " << (domain.empty() ? "" : domain + ".") << op << " at opset " << v
          << " (registered for " << k->sinceVersion << ".." << k->untilVersion
          << "), but the ONNX spec has no such op there";
    }
  }
  for (const auto &[op, why] : kRegistryBeyondSpec)
    EXPECT_TRUE(disagreeing.count(op)) << op << " now agrees with the spec: remove it from kRegistryBeyondSpec";
  // Every kernel was reached by the probe: a kernel under a name (or domain)
  // the schema table does not know would be missing here.
  EXPECT_GT(versionsChecked, 1000u);
  for (const auto &[domain, op] : kContribKernels) {
    EXPECT_TRUE(registry.knows(domain, op)) << domain << "." << op << " has no kernel: remove it from kContribKernels";
    EXPECT_EQ(lookupOpSchema(domain, op, 1), nullptr) << domain << "." << op << " is not an ONNX op";
    ++kernelsSeen;
  }
  EXPECT_EQ(kernelsSeen, registry.size())
      << "some kernels are registered under an op name or domain the ONNX schema table does not know";
  std::cout << kernelsSeen << " of " << registry.size() << " kernels matched to schemas over " << versionsChecked
            << " (op, opset) pairs\n";
}
