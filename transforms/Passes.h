//===- transforms/Passes.h - The built-in passes ---------------*- C++ -*-===//
//
// Factories for every built-in pass, the functions that register them, and
// the default pipeline. Each pass lives in its own file, whose top comment
// shows its rewrite (Before/After IR) and the conditions under which it
// applies.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "transforms/Pass.h"

#include <memory>
#include <string>

namespace onnxslim {

class PassRegistry;

std::unique_ptr<Pass> createEliminateDeadNodesPass();
std::unique_ptr<Pass> createEliminateIdentityOpsPass();
std::unique_ptr<Pass> createEliminateUnusedInitializersPass();
std::unique_ptr<Pass> createEliminateDuplicateConstantsPass();
std::unique_ptr<Pass> createEliminateRedundantTransposesPass();
std::unique_ptr<Pass> createEliminateCommonSubexpressionsPass();
std::unique_ptr<Pass> createEliminateNopOpsPass();

/// Given a registry, Execute: registers the cleanup passes (dead nodes,
/// identity, unused and duplicate constants, transposes, CSE, no-op ops).
void registerCleanupPasses(PassRegistry &registry);

/// Given a registry, Execute: registers the test-only passes (deliberately
/// wrong ones used to show --verify-each and --model-check-each at work).
void registerTestPasses(PassRegistry &registry);

/// The default pipeline, as pipeline text: the passes safe for every
/// runtime, in the order the pass manager runs them to a fixed point.
std::string defaultPipeline();

} // namespace onnxslim
