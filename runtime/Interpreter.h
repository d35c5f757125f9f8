//===- runtime/Interpreter.h - Executes IR graphs --------------*- C++ -*-===//
//
// The interpreter runs a Graph of a Model: it looks up each node's kernel in
// an OpRegistry by (domain, op type, the model's opset import for that
// domain), feeds it the values of its operands and stores its results.
//
// Values live in per-graph frames indexed by slot numbers that are computed
// once per graph (a "plan", cached for the interpreter's lifetime, so Loop
// bodies are planned once). A value is released right after its last use,
// counting uses inside the subgraphs of a node as uses by that node, so a
// model runs with little more memory than its live set. Initializers and
// Constant nodes are used in place (the IR's tensors are immutable and
// shared), never copied; a Constant node holding a well-formed tensor
// `value` is not even run: the plan holds its value as it holds an
// initializer's (in subgraphs too, whose nodes run every iteration).
//
// Subgraphs (If/Loop/Scan bodies) run through runSubgraph() from inside a
// kernel: their frames are pushed on top of the caller's, and a value of an
// enclosing graph is read from the frame of the graph that defines it.
//
// A node whose (domain, op type) names a model-local function runs the
// function body (functions whose body refers to the caller's attributes are
// reported as unsupported).
//
// Every error names the node, its op type and the subgraph path:
//   node 'name' (OpType) in subgraph loop_1(Loop).body: message
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/BufferPool.h"
#include "runtime/Kernel.h"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace onnxslim::rt {

/// Knobs of one interpreter.
struct RunOptions {
  /// Refuse to run non-deterministic kernels (Random*, Multinomial...): the
  /// node fails with an error. Constant folding sets this.
  bool deterministicOnly = false;
  /// Largest tensor a node may produce, in bytes; bigger is an error.
  size_t memoryLimitBytes = size_t{1} << 36;
  /// run() checks graph inputs against their declared rank and fixed dims
  /// (element types are always checked).
  bool checkInputShapes = true;
  /// Upper bound on Loop iterations (a guard against runaway models).
  int64_t maxLoopIterations = int64_t{1} << 31;
  /// Accumulate the time spent in each op type (see Interpreter::profile()).
  bool profile = false;
  /// Accumulate the time spent in each node too (Interpreter::nodeProfile()).
  bool profileNodes = false;
  /// A node whose kernel notes that the spec leaves its result undefined
  /// for these inputs fails with Status::undefined() instead of returning
  /// that result. Constant folding sets this; `run` and `verify` do not.
  bool refuseUndefined = false;
  /// When set and true, the run stops before its next node with an error
  /// (the model check abandons a run it no longer needs).
  const std::atomic<bool> *cancel = nullptr;
};

/// Time spent in one op type while profiling. Control-flow ops include the
/// time of their bodies, whose nodes are also counted on their own.
struct OpProfile {
  int64_t calls = 0;
  double seconds = 0;
};

/// Time spent in one node while profiling its nodes, with the input
/// shapes of its first call ("1x64x128x128, 64x64x3x3").
struct NodeProfile {
  const Node *node = nullptr;
  std::string inputShapes;
  OpProfile time;
};

struct GraphPlan;
struct Frame;

class Interpreter {
public:
  /// Given a model (which must outlive the interpreter) and a registry,
  /// Result: an interpreter for the graphs of that model.
  explicit Interpreter(const Model &model, const OpRegistry &registry = OpRegistry::builtin(),
                       RunOptions options = {});
  ~Interpreter();
  Interpreter(const Interpreter &) = delete;
  Interpreter &operator=(const Interpreter &) = delete;

  /// Given a graph of the model and its inputs in graph-input order (an input
  /// backed by an initializer may be omitted, i.e. Kind::None or past the end
  /// of `inputs`, and then reads the initializer), Execute: runs every node,
  /// Result: `outputs` holds the graph outputs in order. Checks the inputs
  /// against the declared types (dtype, rank, fixed dims).
  Status run(const Graph &graph, const std::vector<RtValue> &inputs, std::vector<RtValue> &outputs);

  /// Like run() but for a subgraph executed by a kernel (If/Loop/Scan body):
  /// values of enclosing graphs are read from the frames of the running
  /// callers; the inputs are not checked against declared types.
  Status runSubgraph(const Graph &body, const std::vector<RtValue> &inputs,
                     std::vector<RtValue> &outputs);

  /// Given a node and its input values (null = omitted), Execute: runs its
  /// kernel alone (for constant folding), Result: `outputs` has one entry per
  /// node result. Subgraphs of the node may only read values of enclosing
  /// graphs that are being run by this interpreter.
  Status runNode(const Node &node, const std::vector<const RtValue *> &inputs,
                 std::vector<RtValue> &outputs, bool deterministicOnly);

  /// Forgets the cached plans. Call it after changing a graph this
  /// interpreter has run (plans hold pointers into the graphs).
  void clearPlans();

  /// Nodes started since the interpreter was made (subgraph nodes included):
  /// how far a run that failed got (the model check's input search).
  uint64_t stepsStarted() const { return stepsStarted_; }

  /// Per op type ("Conv", "com.microsoft.FusedConv"), when options().profile is set.
  const std::map<std::string, OpProfile> &profile() const { return profile_; }
  /// Per node, in first-run order, when options().profileNodes is set.
  const std::vector<NodeProfile> &nodeProfile() const { return nodeProfile_; }

  const Model &model() const { return model_; }
  const OpRegistry &registry() const { return registry_; }
  const RunOptions &options() const { return options_; }
  /// The model's opset version for `domain`, or -1 when it imports none.
  int64_t opsetVersion(std::string_view domain) const { return model_.opsetVersion(domain); }
  /// The opset version for `node`: its function's import when it is inside a
  /// function body, else the model's; -1 when neither imports its domain.
  int64_t opsetVersionFor(const Node &node) const;

private:
  const GraphPlan &planFor(const Graph &graph);
  Status execute(const GraphPlan &plan, const std::vector<RtValue> &inputs,
                 std::vector<RtValue> &outputs);
  Status runStep(const GraphPlan &plan, size_t stepIndex, Frame &frame);
  /// Runs the fused elementwise chain headed by step `stepIndex` (see
  /// Step::chain); `ran` false when its input does not qualify (the steps
  /// then run one by one).
  Status runChain(const GraphPlan &plan, size_t stepIndex, Frame &frame, bool &ran);
  /// Adds the time since `start` to the profiles that options() asks for:
  /// under `opKey` per op, and per node (with `shapes` on its first call).
  void recordTime(const Node &node, const std::string &opKey, std::string shapes,
                  std::chrono::steady_clock::time_point start);
  Status callKernel(const Node &node, const KernelDef *kernel, int64_t opset,
                    std::vector<const RtValue *> inputs, std::vector<RtValue> &outputs,
                    bool deterministicOnly, const KernelContext::OutputClamp *clamp = nullptr,
                    bool *clamped = nullptr, uint64_t lastUseMask = 0,
                    const Tensor *addend = nullptr, bool *added = nullptr,
                    uint64_t constantMask = 0, std::shared_ptr<void> *state = nullptr,
                    bool writeLast = false);
  Status callFunction(const Node &node, const Function &fn,
                      const std::vector<const RtValue *> &inputs, std::vector<RtValue> &outputs);
  const RtValue *lookupOuter(const Value *v) const;
  Status nodeError(const Node &node, const Status &inner);
  Status checkInputs(const Graph &graph, const std::vector<RtValue> &inputs) const;

  /// Freed result blocks are reused while the interpreter lives (a
  /// session's arena): see runtime/BufferPool.h.
  BufferPoolScope bufferPool_;
  const Model &model_;
  const OpRegistry &registry_;
  RunOptions options_;
  std::unordered_map<const Graph *, std::unique_ptr<GraphPlan>> plans_;
  /// Frames of the graphs being run, innermost last.
  std::vector<Frame *> frames_;
  /// Set when a node error inside a subgraph has been formatted with its
  /// path, so the enclosing node passes it on unchanged.
  bool errorHasPath_ = false;
  /// Whether non-deterministic kernels are refused right now (the option, or
  /// a runNode call that asked for it, including the subgraphs it runs).
  bool deterministicOnly_ = false;
  std::map<std::string, OpProfile> profile_;
  uint64_t stepsStarted_ = 0;
  std::vector<NodeProfile> nodeProfile_;
  std::unordered_map<const Node *, size_t> nodeProfileIndex_;
  /// Model-local functions by "domain:name", and by body graph.
  std::unordered_map<std::string, const Function *> functions_;
  std::unordered_map<const Graph *, const Function *> functionBodies_;
};

/// Describes where `node` is: "node 'name' (Op)" plus " in subgraph
/// parent(Op).attr > ..." when it lives in a subgraph.
std::string describeNode(const Node &node);

} // namespace onnxslim::rt
