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
  addPass(registry, createSimplifyBatchedMatMulPass);
}

void registerFoldingPasses(PassRegistry &registry) {
  addPass(registry, createInferShapesPass);
  addPass(registry, createFoldConstantsPass);
  addPass(registry, createSimplifyShapeChainsPass);
  addPass(registry, createInlineConstantIfPass);
  addPass(registry, createSimplifyControlFlowPass);
  addPass(registry, createConvertFloatTypePass);
  addPass(registry, createConvertOpsetPass);
}

void registerFusionPasses(PassRegistry &registry) {
  addPass(registry, createFuseConvBatchNormPass);
  addPass(registry, createFuseMatMulAddPass);
  addPass(registry, createFuseConvAddPass);
  addPass(registry, createFuseConvMulPass);
  addPass(registry, createFusePadConvPass);
  addPass(registry, createFuseLayerNormPass);
  addPass(registry, createFuseRMSNormPass);
  addPass(registry, createFuseGeluPass);
  addPass(registry, createFuseRotaryEmbeddingPass);
  addPass(registry, createFuseAttentionPass);
  addPass(registry, createFuseConvReluPass);
}

std::string defaultPipeline() {
  // Infer shapes first so that every pass of the round sees the current
  // types; fold constants (Constant nodes become initializers), then shape
  // arithmetic, then Ifs whose condition became constant, Ifs that only
  // select between constants and Loop values carried twice. Merge constants
  // next so that CSE sees equal operands; remove no-op ops, the [B*H, M, K]
  // views around batched MatMuls (whose 4-D Transposes then compose with
  // the head split's) and Transposes before CSE so that it compares what
  // remains. The fusions come after folding (their weights and biases must
  // be constants by then): Pads into Convs first, then BatchNormalization
  // into the layer before it (which may leave a MatMul + Add), per-channel
  // Mul/Add into Conv weights/bias (Mul first: a decomposed BN is Mul then
  // Add), MatMul + Add into Gemm, then LayerNormalization (before
  // RMSNormalization, which would take its centred half), Gelu,
  // RotaryEmbedding (before Attention, whose head split it moves ahead of)
  // and Attention (MatMul + Add became Gemm only where 2-D, so the 4-D
  // attention MatMuls are intact); sweep dead nodes and then the
  // initializers they were the last to read.
  return "infer-shapes,"
         "fold-constants,"
         "simplify-shape-chains,"
         "inline-constant-if,"
         "simplify-control-flow,"
         "eliminate-duplicate-constants,"
         "eliminate-identity-ops,"
         "eliminate-nop-ops,"
         "simplify-batched-matmul,"
         "eliminate-redundant-transposes,"
         "fuse-pad-conv,"
         "fuse-conv-batchnorm,"
         "fuse-conv-mul,"
         "fuse-conv-add,"
         "fuse-matmul-add,"
         "fuse-layernorm,"
         "fuse-rmsnorm,"
         "fuse-gelu,"
         "fuse-rotary-embedding,"
         "fuse-attention,"
         "eliminate-common-subexpressions,"
         "eliminate-dead-nodes,"
         "eliminate-unused-initializers";
}

bool isKnownTarget(std::string_view target) { return target == "onnx" || target == "onnxruntime"; }

std::string targetPipeline(std::string_view target) {
  if (target == "onnxruntime")
    return defaultPipeline() + ",fuse-conv-relu";
  return defaultPipeline();
}

std::string_view requiredTarget(std::string_view passName) {
  return passName == "fuse-conv-relu" ? "onnxruntime" : "";
}

} // namespace onnxslim
