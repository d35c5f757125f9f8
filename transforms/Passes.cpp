//===- transforms/Passes.cpp - Registration and the default pipeline ------===//
#include "transforms/Passes.h"

#include "transforms/PassRegistry.h"

namespace onnxslim {

namespace {
void addPass(PassRegistry &registry, std::unique_ptr<Pass> (*create)(), bool testOnly = false) {
  std::unique_ptr<Pass> probe = create();
  registry.add(PassInfo{std::string(probe->name()), std::string(probe->description()), create, testOnly});
}
} // namespace

void registerCleanupPasses(PassRegistry &registry) {
  addPass(registry, createEliminateDeadNodesPass);
  addPass(registry, createEliminateIdentityOpsPass);
  addPass(registry, createEliminateUnusedInitializersPass);
  addPass(registry, createEliminateDuplicateConstantsPass);
  addPass(registry, createEliminateRedundantTransposesPass);
  addPass(registry, createEliminateCommonSubexpressionsPass);
  addPass(registry, createEliminateNopOpsPass);
}

std::string defaultPipeline() {
  // Merge constants first so that CSE sees equal operands; remove no-op ops
  // and Transposes before CSE so that it compares what remains; sweep dead
  // nodes and then the initializers they were the last to read.
  return "eliminate-duplicate-constants,"
         "eliminate-identity-ops,"
         "eliminate-nop-ops,"
         "eliminate-redundant-transposes,"
         "eliminate-common-subexpressions,"
         "eliminate-dead-nodes,"
         "eliminate-unused-initializers";
}

} // namespace onnxslim
