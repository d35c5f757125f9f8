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
#include <string_view>
#include <vector>

namespace onnxslim {

class PassRegistry;

std::unique_ptr<Pass> createEliminateDeadNodesPass();
std::unique_ptr<Pass> createEliminateIdentityOpsPass();
std::unique_ptr<Pass> createEliminateUnusedInitializersPass();
std::unique_ptr<Pass> createEliminateDuplicateConstantsPass();
std::unique_ptr<Pass> createEliminateRedundantTransposesPass();
std::unique_ptr<Pass> createEliminateCommonSubexpressionsPass();
std::unique_ptr<Pass> createEliminateNopOpsPass();
std::unique_ptr<Pass> createSimplifyBatchedMatMulPass();
std::unique_ptr<Pass> createSimplifyControlFlowPass();
std::unique_ptr<Pass> createInferShapesPass();
std::unique_ptr<Pass> createFoldConstantsPass();
std::unique_ptr<Pass> createSimplifyShapeChainsPass();
std::unique_ptr<Pass> createInlineConstantIfPass();
std::unique_ptr<Pass> createFuseConvBatchNormPass();
std::unique_ptr<Pass> createFuseMatMulAddPass();
std::unique_ptr<Pass> createFuseConvAddPass();
std::unique_ptr<Pass> createFuseConvMulPass();
std::unique_ptr<Pass> createFusePadConvPass();
std::unique_ptr<Pass> createFuseLayerNormPass();
std::unique_ptr<Pass> createFuseRMSNormPass();
std::unique_ptr<Pass> createFuseAttentionPass();
std::unique_ptr<Pass> createFuseRotaryEmbeddingPass();
std::unique_ptr<Pass> createFuseGeluPass();
std::unique_ptr<Pass> createFuseConvReluPass();
std::unique_ptr<Pass> createConvertFloatTypePass();
/// Given the type to convert to ("float16" or "float32"), whether the main
/// graph's inputs and outputs keep their types, and nodes to keep as they
/// are, Result: convert-float-type{to=... keep-io-types=... keep-node=...}.
std::unique_ptr<Pass> createConvertFloatTypePass(std::string_view to, bool keepIOTypes,
                                                 const std::vector<std::string> &keepNodes);
std::unique_ptr<Pass> createConvertOpsetPass();

/// Given a registry, Execute: registers the cleanup passes (dead nodes,
/// identity, unused and duplicate constants, transposes, CSE, no-op ops).
void registerCleanupPasses(PassRegistry &registry);

/// Given a registry, Execute: registers shape inference and the folding
/// passes (infer-shapes, fold-constants, simplify-shape-chains,
/// inline-constant-if), and convert-float-type, which rewrites constants
/// too, and convert-opset (neither in a default pipeline: they change the
/// model's precision or opset).
void registerFoldingPasses(PassRegistry &registry);

/// Given a registry, Execute: registers the fusion passes (fuse-*), the
/// runtime-specific ones included (see requiredTarget()).
void registerFusionPasses(PassRegistry &registry);

// registerTestPasses() is declared with the registry (PassRegistry.h):
// the command line's --enable-test-passes uses the public headers only.

/// The default pipeline, as pipeline text: the passes safe for every
/// runtime, in the order the pass manager runs them to a fixed point.
std::string defaultPipeline();

/// The targets --target accepts: "onnx" (standard ONNX only, the default)
/// and "onnxruntime" (also ONNX Runtime's com.microsoft contrib ops).
bool isKnownTarget(std::string_view target);

/// Given a target, Result: the default pipeline for it: defaultPipeline()
/// followed by that target's runtime-specific passes.
std::string targetPipeline(std::string_view target);

/// Given a pass name, Result: the target whose runtime the pass emits ops
/// for ("onnxruntime" for fuse-conv-relu), or "" when it emits standard
/// ONNX only. Such a pass may run only when that target is selected.
std::string_view requiredTarget(std::string_view passName);

} // namespace onnxslim
