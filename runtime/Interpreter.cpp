//===- runtime/Interpreter.cpp - Executes IR graphs -----------------------===//
//
// Plans each graph once (value slots, operand sources, kernels, release
// points) and runs plans on frames. See Interpreter.h for the model.
//
// One fusion is planned: a Conv or BatchNormalization whose only reader is
// a Relu, or a Clip with constant bounds, asks its kernel to clamp the
// output while it is still in cache (KernelContext::OutputClamp); when the
// kernel does (float Conv, float inference BatchNormalization), the output
// becomes the activation's result and the activation step is skipped, else
// the activation runs as usual. Results are bit-identical.
//
// And a layout is planned (planChannelsLast): on AVX-512, a pointwise Conv
// that a depthwise one reads is asked to write its image channels last,
// and so is that depthwise Conv; the elementwise steps, GlobalAveragePool
// and the Convs after them read it as it is (Step::layout). Any other
// reader, and every graph output, gets a channels-first copy
// (arrangeChannelsLast), so the plan decides speed, never results; the
// kernels that take the layout give the bits of their channels-first forms.
//
//===----------------------------------------------------------------------===//
#include "runtime/Interpreter.h"
#include "runtime/ElementwiseChain.h"
#include "runtime/Gemm.h"
#include "runtime/Layout.h"
#include "runtime/ThreadPool.h"

#include "runtime/kernels/TensorHelpers.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <exception>
#include <functional>
#include <limits>
#include <new>
#include <optional>

namespace onnxslim::rt {

//===----------------------------------------------------------------------===//
// Plans and frames
//===----------------------------------------------------------------------===//

namespace {

/// Where a node operand (or graph output) comes from.
struct Operand {
  enum class Kind : uint8_t { Omitted, Local, Outer, Constant };
  Kind kind = Kind::Omitted;
  uint32_t slot = 0;                ///< Kind::Local
  const Value *value = nullptr;     ///< the IR value (all kinds but Omitted)
  const RtValue *constant = nullptr; ///< Kind::Constant
};

struct Step {
  const Node *node = nullptr;
  const KernelDef *kernel = nullptr;
  const Function *function = nullptr;
  int64_t opset = -1;
  std::vector<Operand> operands;
  std::vector<int64_t> results; ///< slot per result, -1 when omitted
  std::vector<uint32_t> release; ///< slots whose last use is this step
  /// A Conv whose only reader is the Add at step fuseAddStep, the other
  /// operand of which (fuseAddend) is computed before the Conv: its kernel
  /// is asked to add it, and if it does, that step does not run.
  int64_t fuseAddStep = -1;
  Operand fuseAddend;
  /// A Conv or BatchNormalization whose only reader (or whose fused Add's only reader) is the
  /// Relu/Clip at step fuseStep: its kernel is asked to apply fuseClamp,
  /// and if it does, that step does not run. The output goes straight into
  /// the result slot of the last fused step.
  int64_t fuseStep = -1;
  KernelContext::OutputClamp fuseClamp{0, 0};
  /// Bit i: operand i is a local value read for the last time here (its
  /// slot is in `release`), so the kernel may reuse its bytes.
  uint64_t lastUseMask = 0;
  /// Bit i: operand i is a constant of the plan (KernelContext::markConstant).
  uint64_t constantMask = 0;
  /// What the kernel keeps between runs (KernelContext::nodeState).
  mutable std::shared_ptr<void> state;
  /// The head of a fused elementwise chain (runtime/ElementwiseChain.h):
  /// when operand chainInput is a float tensor of rank >= chainMinRank, this
  /// step runs `chain` over it, writes the result of the last of chainSteps
  /// (the steps after this one), and those steps do not run.
  std::vector<ChainOp> chain;
  std::vector<int64_t> chainSteps;
  size_t chainInput = 0;
  size_t chainMinRank = 0;
  /// How this step reads channels-last values (RtValue::channelsLast):
  /// Plain steps get channels-first copies; Transparent ones (elementwise)
  /// compute on them as they are when every operand is channels last with
  /// the same dims, a single element, or (binary ops) one value per
  /// channel, and their result is channels last too; Aware kernels (Conv,
  /// GlobalAveragePool) read the layout themselves.
  enum class Layout : uint8_t { Plain, Transparent, Aware };
  Layout layout = Layout::Plain;
  /// A Conv asked to write its output channels last (planChannelsLast).
  bool writeLast = false;
};

/// "1x3x224x224, 64x3x7x7" for a node's inputs ("-" omitted, "seq" a sequence,
/// "1x96x7x7 (channels last)" a value held so, RtValue::channelsLast).
std::string shapeList(const std::vector<const RtValue *> &inputs) {
  std::string out;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (i)
      out += ", ";
    const RtValue *v = inputs[i];
    if (!v || v->kind == RtValue::Kind::None) {
      out += "-";
    } else if (!v->isTensor()) {
      out += v->kind == RtValue::Kind::Sequence ? "seq" : "opt";
    } else {
      const std::vector<int64_t> &dims = v->tensor->dims();
      if (dims.empty())
        out += "scalar";
      for (size_t d = 0; d < dims.size(); ++d)
        out += (d ? "x" : "") + std::to_string(dims[d]);
      if (v->channelsLast)
        out += " (channels last)";
    }
  }
  return out;
}

std::string valueLabel(const Value *v) {
  return v ? "'" + v->name() + "'" : std::string("<omitted>");
}

/// Given a node, Result: its value when it is a default-domain Constant
/// whose only attribute is a tensor `value` with data matching its shape
/// (what exporters write), else null.
const TensorPtr *planConstantValue(const Node &n) {
  if (!n.isDefaultDomain() || n.opType() != "Constant" || n.numResults() != 1 || !n.result(0) ||
      n.attributes().size() != 1)
    return nullptr;
  const Attribute &a = n.attributes().front();
  return a.name == "value" && a.t && a.t->isConsistent() ? &a.t : nullptr;
}

/// Given a constant's tensor, Result: the tensor the kernels read: itself
/// when its bytes are aligned for its element type, else an aligned copy
/// made once here. A model's raw_data lands at any offset of the file, and
/// kernels view misaligned bytes through a copy (ElemView), which would
/// otherwise be made on every run: all the weights of a network, each time.
TensorPtr alignedConstant(const TensorPtr &t) {
  const size_t size = t->dtype() == DataType::String ? 1 : elementSize(t->dtype());
  if (size <= 1 || reinterpret_cast<uintptr_t>(t->rawData()) % size == 0)
    return t;
  return std::make_shared<Tensor>(t->dtype(), t->dims(), Buffer::copyOf(t->rawData(), t->byteSize()));
}

} // namespace

struct GraphPlan {
  const Graph *graph = nullptr;
  std::unordered_map<const Value *, uint32_t> slotOf;
  std::unordered_map<const Value *, const RtValue *> constantOf;
  std::deque<RtValue> constants;
  uint32_t numSlots = 0;
  std::vector<std::pair<size_t, uint32_t>> inputSlots; ///< (graph input index, slot)
  /// Per input slot: its initializer when planned and that tensor as the
  /// kernels read it (alignedConstant); nulls when it had none.
  std::vector<std::pair<TensorPtr, TensorPtr>> inputDefaults;
  std::vector<Operand> outputs;
  std::vector<Step> steps;
  bool fuses = false; ///< some step has fuseStep set
  bool channelsLast = false; ///< some step has writeLast set
  /// Error found while planning (e.g. a sparse initializer that is malformed).
  std::string planError;
};

struct Frame {
  const GraphPlan *plan = nullptr;
  std::vector<RtValue> slots;
  /// Per step: an activation already applied by the Conv before it (only
  /// sized when the plan fuses something).
  std::vector<uint8_t> applied;
};

namespace {

/// Pops the frame it pushed, however the scope is left.
class FrameGuard {
public:
  FrameGuard(std::vector<Frame *> &stack, Frame *f) : stack_(stack) { stack_.push_back(f); }
  ~FrameGuard() { stack_.pop_back(); }
  FrameGuard(const FrameGuard &) = delete;
  FrameGuard &operator=(const FrameGuard &) = delete;

private:
  std::vector<Frame *> &stack_;
};

/// Calls `fn` on every value a subgraph (recursively) reads: node operands
/// and graph outputs.
template <typename Fn> void forEachCapturedValue(const Graph &g, Fn &&fn) {
  for (Node *n : g.nodes()) {
    for (const Use &u : n->operandUses())
      if (u.get())
        fn(u.get());
    for (Graph *sub : n->subgraphs())
      forEachCapturedValue(*sub, fn);
  }
  for (const GraphOutput &o : g.outputSlots())
    if (o.use.get())
      fn(o.use.get());
}

/// Given a value and its operand, Result: its element and rank when it is a
/// one-element float32 constant (an initializer or a Constant node's value).
std::optional<std::pair<float, size_t>> floatScalar(const Value *v, const Operand &op) {
  const Tensor *t = nullptr;
  if (op.kind == Operand::Kind::Constant && op.constant->isTensor()) {
    t = op.constant->tensor.get();
  } else if (const Node *def = v ? v->definingNode() : nullptr;
             def && def->isDefaultDomain() && def->opType() == "Constant") {
    const Attribute *a = def->attr("value");
    if (a && a->kind == AttrKind::Tensor && a->t)
      t = a->t.get();
  }
  if (!t || t->dtype() != DataType::Float || t->numElements() != 1 || !t->isConsistent())
    return std::nullopt;
  float f;
  std::memcpy(&f, t->rawData(), sizeof f);
  return std::make_pair(f, t->dims().size());
}

/// The clamp that the activation `act` applies to its input 0, when `act`
/// is a default-domain Relu, or a Clip whose bounds are attributes (before
/// opset 11) or omitted or one-element float constants (floatScalar); none
/// otherwise.
std::optional<KernelContext::OutputClamp> activationClamp(const Node &act, int64_t opset,
                                                          const std::vector<Operand> &operands) {
  if (!act.isDefaultDomain())
    return std::nullopt;
  constexpr float kMax = std::numeric_limits<float>::max();
  if (act.opType() == "Relu")
    return KernelContext::OutputClamp{0.0f, std::numeric_limits<float>::infinity()};
  if (act.opType() != "Clip")
    return std::nullopt;
  if (opset < 11)
    return KernelContext::OutputClamp{act.attrFloat("min", -kMax), act.attrFloat("max", kMax)};
  KernelContext::OutputClamp c{-kMax, kMax};
  for (size_t i = 1; i < operands.size(); ++i) {
    const Operand &op = operands[i];
    if (op.kind == Operand::Kind::Omitted)
      continue;
    auto bound = i <= 2 ? floatScalar(op.value, op) : std::nullopt;
    if (!bound)
      return std::nullopt;
    (i == 1 ? c.lo : c.hi) = bound->first;
  }
  return c;
}

/// Given a step, the value the chain has computed so far (`running`) and the
/// chain's input x, Result: the step as a chain op on `running`, or nothing
/// when it cannot be one. `minRank` grows to the rank of a constant operand
/// (a constant of higher rank than x would broadcast the output).
std::optional<ChainOp> chainOpOf(const Step &st, const Value *running, const Value *x,
                                 size_t &minRank) {
  const Node &n = *st.node;
  if (!n.isDefaultDomain() || !st.kernel || st.function || n.numResults() != 1 ||
      !n.result(0) || st.results.empty() || st.results[0] < 0)
    return std::nullopt;
  const std::string &op = n.opType();
  ChainOp c;
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
    if (st.operands.size() != 2 || st.opset < 7)
      return std::nullopt;
    c.kind = op == "Add"   ? ChainOp::Kind::Add
             : op == "Sub" ? ChainOp::Kind::Sub
             : op == "Mul" ? ChainOp::Kind::Mul
                           : ChainOp::Kind::Div;
    size_t at = st.operands[0].value == running ? 0 : 1;
    if (st.operands[at].value != running)
      return std::nullopt;
    c.valueFirst = at == 0;
    const Operand &other = st.operands[1 - at];
    if (other.value == x) {
      c.otherIsInput = true;
    } else if (auto k = floatScalar(other.value, other)) {
      c.c = k->first;
      minRank = std::max(minRank, k->second);
    } else {
      return std::nullopt;
    }
    return c;
  }
  if (st.operands.empty() || st.operands[0].value != running)
    return std::nullopt;
  if ((op == "Sigmoid" || op == "Tanh" || (op == "Erf" && st.opset >= 9)) &&
      st.operands.size() == 1) {
    c.kind = op == "Sigmoid" ? ChainOp::Kind::Sigmoid
             : op == "Tanh"  ? ChainOp::Kind::Tanh
                             : ChainOp::Kind::Erf;
    return c;
  }
  // Relu is the clamp to [0, +inf): the same compare and select as ReluF.
  auto clamp = activationClamp(n, st.opset, st.operands);
  if (!clamp)
    return std::nullopt;
  c.kind = ChainOp::Kind::Clip;
  c.lo = clamp->lo;
  c.hi = clamp->hi;
  return c;
}

/// Given a plan whose steps are built, Execute: marks the float elementwise
/// chains it can fuse (see Step::chain): from a head step, each result read
/// by one step only, in this graph, not a graph output, and that step a
/// chain op on it; two ops at least.
void planElementwiseChains(const Graph &graph, GraphPlan &p,
                           const std::unordered_map<const Node *, size_t> &stepOf,
                           const std::vector<bool> &pinned) {
  std::vector<bool> taken(p.steps.size(), false);
  for (size_t h = 0; h < p.steps.size(); ++h) {
    Step &head = p.steps[h];
    if (taken[h] || head.operands.empty())
      continue;
    // The chain's input: the one operand that is not a scalar constant.
    const Value *x = nullptr;
    size_t xIndex = 0;
    for (size_t i = 0; i < head.operands.size() && i < 2; ++i) {
      const Operand &o = head.operands[i];
      if (o.kind == Operand::Kind::Omitted || floatScalar(o.value, o))
        continue;
      if (!x) {
        x = o.value;
        xIndex = i;
      } else if (o.value != x) {
        x = nullptr;
        break;
      }
    }
    if (!x)
      continue;
    size_t minRank = 0;
    std::vector<ChainOp> ops;
    std::vector<int64_t> followers;
    auto first = chainOpOf(head, x, x, minRank);
    if (!first)
      continue;
    ops.push_back(*first);
    size_t at = h;
    for (;;) {
      const Value *running = p.steps[at].node->result(0);
      uint32_t slot = static_cast<uint32_t>(p.steps[at].results[0]);
      if (!running->hasOneUse() || pinned[slot])
        break;
      const Node *reader = (*running->uses().begin())->owner();
      if (!reader || reader->graph() != &graph)
        break;
      auto it = stepOf.find(reader);
      if (it == stepOf.end() || it->second <= at || taken[it->second])
        break;
      size_t rank = minRank;
      auto next = chainOpOf(p.steps[it->second], running, x, rank);
      if (!next)
        break;
      minRank = rank;
      ops.push_back(*next);
      followers.push_back(static_cast<int64_t>(it->second));
      at = it->second;
    }
    if (followers.empty())
      continue;
    for (int64_t f : followers)
      taken[static_cast<size_t>(f)] = true;
    taken[h] = true;
    head.chain = std::move(ops);
    head.chainSteps = std::move(followers);
    head.chainInput = xIndex;
    head.chainMinRank = minRank;
    p.fuses = true;
  }
}

/// The forms of Conv that read and write channels-last values well.
enum class ConvForm : uint8_t { Other, Pointwise, Depthwise };

/// Given a Conv's weight operand, Result: its dims, from its tensor when a
/// constant, else from its declared shape when every dim is known; empty
/// otherwise.
std::vector<int64_t> weightDims(const Operand &w) {
  if (w.kind == Operand::Kind::Constant && w.constant->isTensor())
    return w.constant->tensor->dtype() == DataType::Float ? w.constant->tensor->dims()
                                                           : std::vector<int64_t>{};
  std::vector<int64_t> dims;
  if (!w.value || !w.value->type() || !w.value->type()->isTensor() || !w.value->type()->shape())
    return dims;
  for (const Dim &d : *w.value->type()->shape()) {
    if (!d.isValue())
      return {};
    dims.push_back(d.getValue());
  }
  return dims;
}

/// Given a step, Result: its ConvForm, from its 2-D weight [M, C/group,
/// kh, kw] and attributes: a 1x1 kernel of one group at unit strides
/// without padding, or one filter per channel of at most 7x7 taps.
ConvForm convForm(const Step &st) {
  const Node &n = *st.node;
  if (!n.isDefaultDomain() || n.opType() != "Conv" || !st.kernel || n.numResults() != 1 ||
      st.operands.size() < 2)
    return ConvForm::Other;
  const std::vector<int64_t> d = weightDims(st.operands[1]);
  if (d.size() != 4)
    return ConvForm::Other;
  const int64_t group = n.attrInt("group", 1);
  if (d[2] == 1 && d[3] == 1 && group == 1) {
    for (int64_t v : n.attrInts("strides"))
      if (v != 1)
        return ConvForm::Other;
    for (int64_t v : n.attrInts("pads"))
      if (v != 0)
        return ConvForm::Other;
    return ConvForm::Pointwise;
  }
  if (d[1] == 1 && group == d[0] && d[2] * d[3] <= 49)
    return ConvForm::Depthwise;
  return ConvForm::Other;
}

bool isBinaryElementwise(const std::string &op) {
  return op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Max" || op == "Min";
}

bool isUnaryElementwise(const std::string &op) {
  static const char *const kOps[] = {"Relu",     "LeakyRelu", "Clip", "Sigmoid", "HardSigmoid",
                                     "HardSwish", "Tanh",     "Elu",  "Selu",    "Celu",
                                     "Softplus", "Softsign",  "Exp",  "Neg",     "Abs",
                                     "Sqrt",     "Erf",       "Identity", "Mish", "Gelu"};
  for (const char *k : kOps)
    if (op == k)
      return true;
  return false;
}

/// Whether a value of static shape `dims` holds one value per channel of a
/// rank-r image (batch and channel dims free, the spatial ones 1).
bool perChannelShape(const Value *v, size_t r) {
  if (!v || !v->type() || !v->type()->isTensor() || !v->type()->shape())
    return false;
  const Shape &dims = *v->type()->shape();
  if (dims.size() > r)
    return false;
  const size_t lead = r - dims.size();
  for (size_t i = 0; i < dims.size(); ++i)
    if (lead + i >= 2 && !(dims[i].isValue() && dims[i].getValue() == 1))
      return false;
  return true;
}

/// Given a plan whose fusions are planned, Execute: asks the Convs whose
/// output is better held channels last to write it so (Step::writeLast),
/// and marks how each step reads such values (Step::layout). A pointwise
/// Conv writes channels last when a depthwise Conv reads its output (through
/// elementwise steps); a depthwise Conv does when its input will be
/// channels last. Every reader of such an output, through elementwise
/// steps, must be a Conv, a GlobalAveragePool or an elementwise step whose
/// other operand is a value of the same region or one per channel, in this
/// graph and not a graph output. (Whatever the plan, a reader that is not
/// planned for it gets a channels-first copy: this decides speed only.)
void planChannelsLast(const Graph &graph, GraphPlan &p,
                      const std::unordered_map<const Node *, size_t> &stepOf,
                      const std::vector<bool> &pinned) {
  if (!channelsLastAvailable())
    return;
  for (Step &st : p.steps) {
    const Node &n = *st.node;
    if (!n.isDefaultDomain() || !st.kernel || st.function)
      continue;
    const std::string &op = n.opType();
    if (op == "Conv" || op == "GlobalAveragePool")
      st.layout = Step::Layout::Aware;
    else if (isUnaryElementwise(op) || isBinaryElementwise(op))
      st.layout = Step::Layout::Transparent;
  }
  // The value a Conv step's output lands in (its fused clamp's result).
  auto landing = [&](const Step &st) {
    return st.fuseStep >= 0 ? p.steps[static_cast<size_t>(st.fuseStep)].node->result(0)
                            : st.node->result(0);
  };
  // Walks the readers of a Conv's output through elementwise steps: false
  // when one cannot take it channels last; `readByDepthwise` when a
  // depthwise Conv reads it. The other operand of a binary step must be in
  // the same region (x * sigmoid(x)), or of a shape that is one value per
  // channel or the same as this one (or unknown: at run time, a value that
  // is none of these makes a copy, so this only decides speed).
  auto readersTake = [&](const Value *out, bool &readByDepthwise) {
    std::vector<const Value *> work{out}, region{out};
    std::vector<std::pair<const Value *, const Value *>> pairs; // (region value, other operand)
    while (!work.empty()) {
      const Value *v = work.back();
      work.pop_back();
      auto s = p.slotOf.find(v);
      if (s == p.slotOf.end() || pinned[s->second] || !v->hasUses())
        return false;
      for (const Use *u : v->uses()) {
        const Node *r = u->owner();
        auto it = r && r->graph() == &graph ? stepOf.find(r) : stepOf.end();
        if (it == stepOf.end())
          return false;
        const Step &rs = p.steps[it->second];
        if (rs.layout == Step::Layout::Aware) {
          if (u->index() != 0)
            return false;
          readByDepthwise = readByDepthwise || convForm(rs) == ConvForm::Depthwise;
          continue;
        }
        if (rs.layout != Step::Layout::Transparent || r->numResults() != 1 || !r->result(0))
          return false;
        if (isBinaryElementwise(r->opType())) {
          if (rs.operands.size() != 2)
            return false;
          pairs.emplace_back(v, rs.operands[1 - u->index()].value);
        } else if (u->index() != 0) {
          return false;
        }
        const Value *next = r->result(0);
        if (std::find(region.begin(), region.end(), next) == region.end()) {
          region.push_back(next);
          work.push_back(next);
        }
      }
    }
    for (const auto &[v, other] : pairs) {
      if (!other || std::find(region.begin(), region.end(), other) != region.end())
        continue;
      const std::optional<Shape> vs = v->type() ? v->type()->shape() : std::nullopt;
      const std::optional<Shape> os = other->type() ? other->type()->shape() : std::nullopt;
      if (vs && os && *os != *vs && !perChannelShape(other, vs->size()))
        return false;
    }
    return true;
  };
  // Whether the value v comes from a Conv asked to write channels last,
  // through elementwise steps (at most `hops` of them).
  std::function<bool(const Value *, int)> fromLastConv = [&](const Value *v, int hops) {
    const Node *def = v ? v->definingNode() : nullptr;
    auto it = def && def->graph() == &graph ? stepOf.find(def) : stepOf.end();
    if (it == stepOf.end() || hops < 0)
      return false;
    const Step &ds = p.steps[it->second];
    if (def->opType() == "Conv" && def->isDefaultDomain())
      return ds.writeLast;
    if (ds.layout != Step::Layout::Transparent)
      return false;
    for (size_t i = 0; i < ds.operands.size() && i < 2; ++i)
      if (fromLastConv(ds.operands[i].value, hops - 1))
        return true;
    return false;
  };
  // First the pointwise Convs a depthwise one reads, then the depthwise
  // Convs whose input one of those writes.
  for (const ConvForm form : {ConvForm::Pointwise, ConvForm::Depthwise})
    for (Step &st : p.steps) {
      bool readByDepthwise = false;
      if (convForm(st) != form || st.fuseAddStep >= 0 ||
          !readersTake(landing(st), readByDepthwise))
        continue;
      if (form == ConvForm::Pointwise) {
        // The product's vectors run along its output channels: few of them
        // leave a panel of the GEMM mostly empty.
        const int64_t M = weightDims(st.operands[1])[0];
        const int64_t width = gemmPanelWidth<float>();
        st.writeLast = readByDepthwise && M * 4 >= (M + width - 1) / width * width * 3;
      } else {
        st.writeLast = fromLastConv(st.operands[0].value, 8);
      }
      p.channelsLast = p.channelsLast || st.writeLast;
    }
}

std::string domainLabel(const std::string &domain) {
  return domain.empty() ? std::string("ai.onnx") : domain;
}

} // namespace

//===----------------------------------------------------------------------===//
// Interpreter
//===----------------------------------------------------------------------===//

Interpreter::Interpreter(const Model &model, const OpRegistry &registry, RunOptions options)
    : model_(model), registry_(registry), options_(options),
      deterministicOnly_(options.deterministicOnly) {
  for (const auto &fn : model_.functions) {
    if (!fn)
      continue;
    std::string dom = fn->domain == "ai.onnx" ? std::string() : fn->domain;
    functions_.emplace(dom + ":" + fn->name, fn.get());
    if (fn->body)
      functionBodies_.emplace(fn->body.get(), fn.get());
  }
}

Interpreter::~Interpreter() = default;

void Interpreter::clearPlans() { plans_.clear(); }

int64_t Interpreter::opsetVersionFor(const Node &node) const {
  const Graph *root = node.graph();
  while (root && root->parentGraph())
    root = root->parentGraph();
  auto it = functionBodies_.find(root);
  if (it != functionBodies_.end()) {
    auto norm = [](std::string_view d) { return d == "ai.onnx" ? std::string_view() : d; };
    for (const OpsetId &o : it->second->opsetImport)
      if (norm(o.domain) == norm(node.domain()))
        return o.version;
  }
  return model_.opsetVersion(node.domain());
}

std::string describeNode(const Node &node) {
  std::string out = "node ";
  if (!node.name().empty()) {
    out += "'" + node.name() + "'";
  } else {
    size_t index = 0;
    if (node.graph())
      for (Node *n : node.graph()->nodes()) {
        if (n == &node)
          break;
        ++index;
      }
    out += "#" + std::to_string(index);
  }
  out += " (" + node.opType() + ")";
  std::vector<std::string> path;
  for (const Graph *g = node.graph(); g && g->parentNode(); g = g->parentGraph()) {
    const Node *parent = g->parentNode();
    std::string attrName = "?";
    for (const Attribute &a : parent->attributes())
      for (Graph *sub : a.subgraphs())
        if (sub == g)
          attrName = a.name;
    std::string pname = parent->name().empty() ? std::string("<unnamed>") : parent->name();
    path.push_back(pname + "(" + parent->opType() + ")." + attrName);
  }
  if (!path.empty()) {
    out += " in subgraph ";
    for (size_t i = path.size(); i-- > 0;) {
      out += path[i];
      if (i)
        out += " > ";
    }
  }
  return out;
}

Status Interpreter::nodeError(const Node &node, const Status &inner) {
  if (errorHasPath_)
    return inner;
  errorHasPath_ = true;
  return inner.withMessage(describeNode(node) + ": " + inner.message());
}

const GraphPlan &Interpreter::planFor(const Graph &graph) {
  auto it = plans_.find(&graph);
  if (it != plans_.end())
    return *it->second;
  auto plan = std::make_unique<GraphPlan>();
  GraphPlan &p = *plan;
  p.graph = &graph;

  // Slots: graph inputs (an initializer default may be overridden), then
  // node results. Pure initializers are constants of the plan.
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    Value *in = graph.input(i);
    if (!in || p.slotOf.count(in))
      continue;
    p.slotOf.emplace(in, p.numSlots);
    p.inputSlots.emplace_back(i, p.numSlots++);
    const TensorPtr &init = in->initializer();
    p.inputDefaults.emplace_back(init, init && init->isConsistent() ? alignedConstant(init) : nullptr);
  }
  for (Value *init : graph.initializers()) {
    if (!init || p.slotOf.count(init) || p.constantOf.count(init))
      continue;
    if (!init->initializer() || !init->initializer()->isConsistent()) {
      p.planError = "initializer '" + init->name() + "' has no data or a data size that does not match its shape";
      continue;
    }
    p.constants.push_back(RtValue::fromTensor(alignedConstant(init->initializer())));
    p.constantOf.emplace(init, &p.constants.back());
  }
  for (Value *sp : graph.sparseInitializers()) {
    if (!sp || p.slotOf.count(sp) || p.constantOf.count(sp) || !sp->sparseInitializer())
      continue;
    TensorPtr dense;
    Status s = densifySparse(*sp->sparseInitializer(), dense);
    if (!s.ok()) {
      p.planError = "sparse initializer '" + sp->name() + "': " + s.message();
      continue;
    }
    p.constants.push_back(RtValue::fromTensor(dense));
    p.constantOf.emplace(sp, &p.constants.back());
  }
  // A Constant node with a well-formed tensor `value` is a constant of the
  // plan like an initializer: it is not run (its other forms, malformed
  // ones and those of a model importing no default opset run as a step,
  // which gives their values and errors).
  for (Node *n : graph.nodes())
    if (const TensorPtr *t = planConstantValue(*n); t && opsetVersionFor(*n) >= 1) {
      p.constants.push_back(RtValue::fromTensor(alignedConstant(*t)));
      p.constantOf.emplace(n->result(0), &p.constants.back());
    }
  for (Node *n : graph.nodes())
    for (size_t r = 0; r < n->numResults(); ++r)
      if (Value *v = n->result(r); v && !p.constantOf.count(v))
        p.slotOf.emplace(v, p.numSlots++);

  auto resolve = [&](const Value *v) {
    Operand op;
    if (!v)
      return op;
    op.value = v;
    if (v->graph() == &graph) {
      if (auto s = p.slotOf.find(v); s != p.slotOf.end()) {
        op.kind = Operand::Kind::Local;
        op.slot = s->second;
        return op;
      }
      if (auto c = p.constantOf.find(v); c != p.constantOf.end()) {
        op.kind = Operand::Kind::Constant;
        op.constant = c->second;
        return op;
      }
    }
    op.kind = Operand::Kind::Outer;
    return op;
  };

  std::vector<int64_t> lastUse(p.numSlots, -1);
  std::vector<bool> pinned(p.numSlots, false);
  auto noteUse = [&](const Value *v, int64_t step) {
    if (!v || v->graph() != &graph)
      return;
    auto s = p.slotOf.find(v);
    if (s != p.slotOf.end())
      lastUse[s->second] = std::max(lastUse[s->second], step);
  };

  int64_t index = 0;
  for (Node *n : graph.nodes()) {
    if (n->numResults() == 1 && p.constantOf.count(n->result(0)))
      continue; // a Constant node's value (see above)
    Step st;
    st.node = n;
    st.opset = opsetVersionFor(*n);
    st.kernel = registry_.find(n->domain(), n->opType(), st.opset);
    if (!st.kernel) {
      std::string dom = n->domain() == "ai.onnx" ? std::string() : n->domain();
      if (auto f = functions_.find(dom + ":" + n->opType()); f != functions_.end())
        st.function = f->second;
    }
    for (const Use &u : n->operandUses()) {
      st.operands.push_back(resolve(u.get()));
      noteUse(u.get(), index);
    }
    for (Graph *sub : n->subgraphs())
      forEachCapturedValue(*sub, [&](const Value *v) { noteUse(v, index); });
    for (size_t r = 0; r < n->numResults(); ++r) {
      Value *v = n->result(r);
      st.results.push_back(v ? static_cast<int64_t>(p.slotOf.at(v)) : -1);
    }
    p.steps.push_back(std::move(st));
    ++index;
  }
  // Conv -> [Add of a value computed before it] -> [Relu/Clip]: the Conv
  // adds and clamps (see Step::fuseAddStep, Step::fuseStep) when each result
  // is read by the next of these steps only.
  std::unordered_map<const Node *, size_t> stepOf;
  for (size_t i = 0; i < p.steps.size(); ++i)
    stepOf.emplace(p.steps[i].node, i);
  // The step reading `v` (the result of step `from`) as its only use, as
  // operand `index` (any when -1), in this graph, with one result slot.
  auto soleReader = [&](const Value *v, size_t from, int index) -> Step * {
    if (!v || !v->hasOneUse())
      return nullptr;
    const Use &use = **v->uses().begin();
    const Node *reader = use.owner();
    if (!reader || reader->graph() != &graph || reader->numResults() != 1 ||
        (index >= 0 && use.index() != static_cast<size_t>(index)))
      return nullptr;
    auto it = stepOf.find(reader);
    if (it == stepOf.end() || it->second <= from)
      return nullptr;
    Step &rs = p.steps[it->second];
    return rs.kernel && !rs.results.empty() && rs.results[0] >= 0 ? &rs : nullptr;
  };
  for (size_t ci = 0; ci < p.steps.size(); ++ci) {
    Step &st = p.steps[ci];
    const Node &n = *st.node;
    const bool conv = n.opType() == "Conv";
    if ((!conv && n.opType() != "BatchNormalization") || !n.isDefaultDomain() || !st.kernel ||
        n.numResults() != 1)
      continue;
    const Value *out = n.result(0);
    size_t at = ci;
    if (Step *add = conv ? soleReader(out, ci, -1) : nullptr;
        add && add->node->isDefaultDomain() && add->node->opType() == "Add" &&
        add->operands.size() == 2) {
      const Operand &z = add->operands[add->operands[0].value == out ? 1 : 0];
      const Node *def = z.value ? z.value->definingNode() : nullptr;
      auto d = def ? stepOf.find(def) : stepOf.end();
      const bool before =
          z.kind == Operand::Kind::Constant || z.kind == Operand::Kind::Outer ||
          (z.kind == Operand::Kind::Local && (!def || (d != stepOf.end() && d->second < ci)));
      if (before && z.value != out) {
        st.fuseAddStep = add - p.steps.data();
        st.fuseAddend = z;
        p.fuses = true;
        out = add->node->result(0);
        at = static_cast<size_t>(st.fuseAddStep);
      }
    }
    if (Step *act = soleReader(out, at, 0))
      if (auto clamp = activationClamp(*act->node, act->opset, act->operands)) {
        st.fuseStep = act - p.steps.data();
        st.fuseClamp = *clamp;
        p.fuses = true;
      }
  }
  for (const GraphOutput &o : graph.outputSlots()) {
    p.outputs.push_back(resolve(o.use.get()));
    if (p.outputs.back().kind == Operand::Kind::Local)
      pinned[p.outputs.back().slot] = true;
  }
  planElementwiseChains(graph, p, stepOf, pinned);
  planChannelsLast(graph, p, stepOf, pinned);
  // Release each slot after its last use; a result nobody reads is released
  // right after the step that made it.
  for (size_t i = 0; i < p.steps.size(); ++i)
    for (int64_t slot : p.steps[i].results)
      if (slot >= 0 && lastUse[slot] < 0)
        lastUse[slot] = static_cast<int64_t>(i);
  for (uint32_t slot = 0; slot < p.numSlots; ++slot)
    if (!pinned[slot] && lastUse[slot] >= 0)
      p.steps[lastUse[slot]].release.push_back(slot);
  for (Step &st : p.steps)
    for (size_t i = 0; i < st.operands.size() && i < 64; ++i) {
      if (st.operands[i].kind == Operand::Kind::Local &&
          std::find(st.release.begin(), st.release.end(), st.operands[i].slot) != st.release.end())
        st.lastUseMask |= uint64_t{1} << i;
      if (st.operands[i].kind == Operand::Kind::Constant)
        st.constantMask |= uint64_t{1} << i;
    }

  const GraphPlan &ref = *plan;
  plans_.emplace(&graph, std::move(plan));
  return ref;
}

const RtValue *Interpreter::lookupOuter(const Value *v) const {
  const Graph *g = v->graph();
  for (size_t i = frames_.size(); i-- > 0;) {
    const Frame *f = frames_[i];
    if (f->plan->graph != g)
      continue;
    if (auto s = f->plan->slotOf.find(v); s != f->plan->slotOf.end()) {
      const RtValue &val = f->slots[s->second];
      return val.kind == RtValue::Kind::None ? nullptr : &val;
    }
    if (auto c = f->plan->constantOf.find(v); c != f->plan->constantOf.end())
      return c->second;
    return nullptr;
  }
  // Not running: an initializer of an enclosing graph is still readable.
  return nullptr;
}

Status Interpreter::callKernel(const Node &node, const KernelDef *kernel, int64_t opset,
                               std::vector<const RtValue *> inputs, std::vector<RtValue> &outputs,
                               bool deterministicOnly, const KernelContext::OutputClamp *clamp,
                               bool *clamped, uint64_t lastUseMask, const Tensor *addend,
                               bool *added, uint64_t constantMask,
                               std::shared_ptr<void> *state, bool writeLast) {
  if (!kernel) {
    std::string msg = "unsupported op " + domainLabel(node.domain()) + "." + node.opType() +
                      " version " + std::to_string(opset);
    if (opset < 0)
      msg += " (the model imports no opset for domain '" + node.domain() + "')";
    else if (registry_.knows(node.domain(), node.opType()))
      msg += " (kernels exist for other versions)";
    return Status::error(msg);
  }
  if (deterministicOnly && !kernel->deterministic)
    return Status::error("non-deterministic op not run (deterministic kernels only)");
  KernelContext ctx(node, opset, std::move(inputs), this);
  if (clamp)
    ctx.requestOutputClamp(*clamp);
  if (addend)
    ctx.requestOutputAddend(addend);
  if (writeLast)
    ctx.requestChannelsLastOutput();
  ctx.markLastUses(lastUseMask);
  ctx.markConstants(constantMask);
  ctx.setNodeState(state);
  Status s;
  try {
    s = kernel->fn(ctx);
  } catch (const std::bad_alloc &) {
    return Status::error("out of memory");
  } catch (const std::exception &e) {
    return Status::error(std::string("kernel failed: ") + e.what());
  }
  if (!s.ok())
    return s;
  if (options_.refuseUndefined && !ctx.undefinedReason().empty())
    return Status::undefined("the result is undefined by the ONNX spec: " + ctx.undefinedReason());
  std::vector<RtValue> &outs = ctx.outputs();
  for (size_t i = 0; i < node.numResults(); ++i) {
    if (!node.result(i))
      continue;
    const RtValue &v = outs[i];
    if (v.kind == RtValue::Kind::None || (v.kind == RtValue::Kind::Tensor && !v.tensor))
      return Status::error("kernel did not set output " + std::to_string(i) + " (" +
                           valueLabel(node.result(i)) + ")");
    if (v.kind == RtValue::Kind::Tensor && v.tensor->byteSize() > options_.memoryLimitBytes)
      return Status::error("output " + std::to_string(i) + " of " +
                           std::to_string(v.tensor->byteSize()) +
                           " bytes exceeds the memory limit");
  }
  outputs = std::move(outs);
  if (clamped)
    *clamped = ctx.outputClampApplied();
  if (added)
    *added = ctx.outputAddendApplied();
  return Status::success();
}

Status Interpreter::callFunction(const Node &node, const Function &fn,
                                 const std::vector<const RtValue *> &inputs,
                                 std::vector<RtValue> &outputs) {
  if (!fn.body)
    return Status::error("function " + domainLabel(fn.domain) + "." + fn.name + " has no body");
  bool refersToAttributes = false;
  fn.body->walk([&](Node *n) {
    for (const Attribute &a : n->attributes())
      if (!a.refAttrName.empty())
        refersToAttributes = true;
  });
  if (refersToAttributes)
    return Status::error("unsupported op " + domainLabel(node.domain()) + "." + node.opType() +
                         ": function bodies that refer to the caller's attributes are not supported");
  std::vector<RtValue> in(fn.body->inputs().size());
  for (size_t i = 0; i < in.size() && i < inputs.size(); ++i)
    if (inputs[i])
      in[i] = *inputs[i];
  std::vector<RtValue> out;
  Status s = execute(planFor(*fn.body), in, out);
  if (!s.ok()) {
    errorHasPath_ = true;
    return Status::error(describeNode(node) + " (function body): " + s.message());
  }
  outputs.assign(node.numResults(), RtValue());
  for (size_t i = 0; i < node.numResults() && i < out.size(); ++i)
    outputs[i] = std::move(out[i]);
  for (size_t i = 0; i < node.numResults(); ++i)
    if (node.result(i) && outputs[i].kind == RtValue::Kind::None)
      return Status::error("function body did not produce output " + std::to_string(i));
  return Status::success();
}

namespace {

/// Given the dims of a channels-last value and of another operand of an
/// elementwise step, Result: whether the operand holds one value per
/// channel (its dims, aligned to the right, 1 at every spatial position).
bool perChannelDims(const std::vector<int64_t> &image, const std::vector<int64_t> &d) {
  if (d.size() > image.size())
    return false;
  const size_t lead = image.size() - d.size();
  for (size_t i = 0; i < d.size(); ++i)
    if (lead + i >= 2 && d[i] != 1)
      return false;
  return true;
}

/// Dims [N, C, spatial...] as the channels-last bytes read: [N, spatial..., C].
std::vector<int64_t> channelsLastDims(std::vector<int64_t> d) {
  if (d.size() >= 2)
    std::rotate(d.begin() + 1, d.begin() + 2, d.end());
  return d;
}

/// What arrangeChannelsLast made of a step's channels-last operands: none
/// are left (copies replaced them, or the kernel reads them itself), the
/// step computes on them as they are (its result is channels last), or on
/// views of them as [N, spatial..., C] (its result is too, and gets back
/// its dims [N, C, spatial...]).
enum class LastResult : uint8_t { None, AsIs, Permuted };

/// Given a step and its operands' values, Execute: arranges the
/// channels-last ones as the step reads them (Step::layout), keeping the
/// copies and views it makes in `arranged` (reserved: its elements do not
/// move), Result: which arrangement.
LastResult arrangeChannelsLast(const Step &st, std::vector<const RtValue *> &inputs,
                               std::vector<RtValue> &arranged) {
  const std::vector<int64_t> *image = nullptr;
  for (const RtValue *v : inputs)
    if (v && v->isTensor() && v->channelsLast) {
      image = &v->tensor->dims();
      break;
    }
  if (!image)
    return LastResult::None;
  arranged.reserve(inputs.size());
  if (st.layout == Step::Layout::Aware) {
    // The kernel reads its image (operand 0) in either layout.
    for (size_t i = 1; i < inputs.size(); ++i)
      if (inputs[i] && inputs[i]->isTensor() && inputs[i]->channelsLast) {
        arranged.push_back(channelsFirstCopy(*inputs[i]));
        inputs[i] = &arranged.back();
      }
    return LastResult::None;
  }
  // Whether the step computes on the bytes as they are, or with the
  // per-channel operand at `perChannel` seen channels last too.
  bool asIs = st.layout == Step::Layout::Transparent;
  size_t perChannel = inputs.size();
  const bool binary = isBinaryElementwise(st.node->opType()) && inputs.size() == 2;
  for (size_t i = 0; asIs && i < inputs.size(); ++i) {
    const RtValue *v = inputs[i];
    if (!v)
      continue;
    if (!v->isTensor()) {
      asIs = false;
    } else if (v->channelsLast) {
      asIs = v->tensor->dims() == *image;
    } else if (v->tensor->numElements() <= 1 && v->tensor->dims().size() <= image->size()) {
      continue;
    } else if (binary && perChannel == inputs.size() &&
               perChannelDims(*image, v->tensor->dims())) {
      perChannel = i;
    } else {
      asIs = false;
    }
  }
  if (asIs && perChannel == inputs.size())
    return LastResult::AsIs;
  if (asIs) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      const RtValue *v = inputs[i];
      if (!v || !v->isTensor() || (!v->channelsLast && i != perChannel))
        continue;
      std::vector<int64_t> d = v->tensor->dims();
      if (!v->channelsLast)
        d.insert(d.begin(), image->size() - d.size(), 1);
      arranged.push_back(RtValue::fromTensor(withDims(v->tensor, channelsLastDims(std::move(d)))));
      inputs[i] = &arranged.back();
    }
    return LastResult::Permuted;
  }
  for (const RtValue *&v : inputs)
    if (v && v->isTensor() && v->channelsLast) {
      arranged.push_back(channelsFirstCopy(*v));
      v = &arranged.back();
    }
  return LastResult::None;
}

} // namespace

Status Interpreter::runStep(const GraphPlan &plan, size_t stepIndex, Frame &frame) {
  if (options_.cancel && options_.cancel->load(std::memory_order_relaxed))
    return Status::error("the run was cancelled");
  ++stepsStarted_;
  const Step &st = plan.steps[stepIndex];
  const Node &node = *st.node;
  if (!frame.applied.empty() && frame.applied[stepIndex]) {
    // The Conv before it already wrote this activation's result.
    frame.applied[stepIndex] = 0;
    for (uint32_t slot : st.release)
      frame.slots[slot] = RtValue();
    return Status::success();
  }
  if (!st.chain.empty()) {
    bool ran = false;
    ONNXSLIM_RETURN_IF_ERROR(runChain(plan, stepIndex, frame, ran));
    if (ran)
      return Status::success();
  }
  // The value an operand reads: null when omitted, not computed yet (a
  // local) or not in scope (an outer value).
  auto valueOf = [&](const Operand &op) -> const RtValue * {
    switch (op.kind) {
    case Operand::Kind::Omitted:
      return nullptr;
    case Operand::Kind::Constant:
      return op.constant;
    case Operand::Kind::Local:
      return frame.slots[op.slot].kind == RtValue::Kind::None ? nullptr : &frame.slots[op.slot];
    case Operand::Kind::Outer:
      return lookupOuter(op.value);
    }
    return nullptr;
  };
  std::vector<const RtValue *> inputs(st.operands.size(), nullptr);
  for (size_t i = 0; i < st.operands.size(); ++i) {
    const Operand &op = st.operands[i];
    inputs[i] = valueOf(op);
    if (!inputs[i] && op.kind != Operand::Kind::Omitted)
      return nodeError(node, Status::error("input " + std::to_string(i) + " (" +
                                           valueLabel(op.value) +
                                           (op.kind == Operand::Kind::Local
                                                ? ") is used before it is computed"
                                                : ") is not available in this scope")));
  }
  std::vector<RtValue> outputs;
  errorHasPath_ = false;
  const bool timed = options_.profile || options_.profileNodes;
  std::string shapes;
  if (options_.profileNodes && !nodeProfileIndex_.count(&node))
    shapes = shapeList(inputs);
  // The addend of a fused Add, when it is there (its step may still run).
  const Tensor *addend = nullptr;
  if (const RtValue *v = st.fuseAddStep >= 0 ? valueOf(st.fuseAddend) : nullptr;
      v && v->isTensor() && !v->channelsLast)
    addend = v->tensor.get();
  // Channels-last operands (RtValue::channelsLast): as this step reads them.
  std::vector<RtValue> arranged;
  LastResult lastResult = LastResult::None;
  if (plan.channelsLast)
    lastResult = arrangeChannelsLast(st, inputs, arranged);
  auto start = timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
  bool clamped = false, added = false;
  Status s = st.function && !st.kernel
                 ? callFunction(node, *st.function, inputs, outputs)
                 : callKernel(node, st.kernel, st.opset, std::move(inputs), outputs,
                              deterministicOnly_, st.fuseStep >= 0 ? &st.fuseClamp : nullptr,
                              &clamped, st.lastUseMask, addend, &added, st.constantMask,
                              &st.state, st.writeLast);
  if (timed)
    recordTime(node,
               node.isDefaultDomain() ? node.opType() : node.domain() + "." + node.opType(),
               std::move(shapes), start);
  if (!s.ok())
    return nodeError(node, s);
  if (lastResult != LastResult::None && !outputs.empty() && outputs[0].isTensor()) {
    if (lastResult == LastResult::Permuted) {
      // [N, spatial..., C] back to the dims [N, C, spatial...].
      std::vector<int64_t> d = outputs[0].tensor->dims();
      std::rotate(d.begin() + 1, d.end() - 1, d.end());
      outputs[0].tensor = withDims(outputs[0].tensor, std::move(d));
    }
    outputs[0].channelsLast = true;
  }
  if (added || clamped) {
    // The output is the last fused step's: its result slot takes it.
    if (added)
      frame.applied[st.fuseAddStep] = 1;
    if (clamped)
      frame.applied[st.fuseStep] = 1;
    frame.slots[plan.steps[clamped ? st.fuseStep : st.fuseAddStep].results[0]] =
        std::move(outputs[0]);
    outputs.clear();
  }
  for (size_t r = 0; r < st.results.size() && r < outputs.size(); ++r)
    if (st.results[r] >= 0)
      frame.slots[st.results[r]] = std::move(outputs[r]);
  for (uint32_t slot : st.release)
    frame.slots[slot] = RtValue();
  return Status::success();
}

Status Interpreter::runChain(const GraphPlan &plan, size_t stepIndex, Frame &frame, bool &ran) {
  const Step &st = plan.steps[stepIndex];
  const Operand &in = st.operands[st.chainInput];
  const RtValue *x = nullptr;
  if (in.kind == Operand::Kind::Local)
    x = &frame.slots[in.slot];
  else if (in.kind == Operand::Kind::Outer)
    x = lookupOuter(in.value);
  else if (in.kind == Operand::Kind::Constant)
    x = in.constant;
  if (!x || !x->isTensor() || x->tensor->dtype() != DataType::Float ||
      x->tensor->dims().size() < st.chainMinRank || !x->tensor->isConsistent())
    return Status::success(); // the steps run one by one
  const bool timed = options_.profile || options_.profileNodes;
  auto start = timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
  const Tensor &t = *x->tensor;
  int64_t count = 0;
  ONNXSLIM_RETURN_IF_ERROR(checkedNumElements(t.dims(), DataType::Float, count,
                                              options_.memoryLimitBytes));
  TensorBuilder out(DataType::Float, t.dims(), TensorBuilder::Fill::Uninitialized);
  runElementwiseChain(st.chain, t.dataAs<float>(), out.dataAs<float>(), count);
  const Step &last = plan.steps[static_cast<size_t>(st.chainSteps.back())];
  frame.slots[last.results[0]] = RtValue::fromTensor(out.finish());
  frame.slots[last.results[0]].channelsLast = x->channelsLast;
  for (int64_t f : st.chainSteps)
    frame.applied[static_cast<size_t>(f)] = 1;
  for (uint32_t slot : st.release)
    frame.slots[slot] = RtValue();
  if (timed)
    recordTime(*st.node, "(fused elementwise chain)",
               "chain of " + std::to_string(st.chain.size()) + " ops", start);
  ran = true;
  return Status::success();
}

void Interpreter::recordTime(const Node &node, const std::string &opKey, std::string shapes,
                             std::chrono::steady_clock::time_point start) {
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (options_.profile) {
    OpProfile &p = profile_[opKey];
    ++p.calls;
    p.seconds += seconds;
  }
  if (options_.profileNodes) {
    auto [it, added] = nodeProfileIndex_.try_emplace(&node, nodeProfile_.size());
    if (added)
      nodeProfile_.push_back({&node, std::move(shapes), {}});
    OpProfile &p = nodeProfile_[it->second].time;
    ++p.calls;
    p.seconds += seconds;
  }
}

Status Interpreter::execute(const GraphPlan &plan, const std::vector<RtValue> &inputs,
                            std::vector<RtValue> &outputs) {
  if (!plan.planError.empty())
    return Status::error("graph '" + plan.graph->name + "': " + plan.planError);
  Frame frame;
  frame.plan = &plan;
  frame.slots.resize(plan.numSlots);
  if (plan.fuses)
    frame.applied.assign(plan.steps.size(), 0);
  const Graph &graph = *plan.graph;
  for (size_t k = 0; k < plan.inputSlots.size(); ++k) {
    const auto [i, slotIndex] = plan.inputSlots[k];
    RtValue &slot = frame.slots[slotIndex];
    if (i < inputs.size() && inputs[i].kind != RtValue::Kind::None)
      slot = inputs[i];
    else if (const TensorPtr &init = graph.input(i)->initializer()) {
      if (!init->isConsistent())
        return Status::error("initializer '" + graph.input(i)->name() +
                             "' has a data size that does not match its shape");
      const auto &[planned, aligned] = plan.inputDefaults[k];
      slot = RtValue::fromTensor(init == planned ? aligned : init);
    }
  }
  FrameGuard guard(frames_, &frame);
  for (size_t i = 0; i < plan.steps.size(); ++i)
    ONNXSLIM_RETURN_IF_ERROR(runStep(plan, i, frame));
  outputs.clear();
  outputs.reserve(plan.outputs.size());
  for (size_t i = 0; i < plan.outputs.size(); ++i) {
    const Operand &op = plan.outputs[i];
    const RtValue *v = nullptr;
    switch (op.kind) {
    case Operand::Kind::Omitted:
      break;
    case Operand::Kind::Constant:
      v = op.constant;
      break;
    case Operand::Kind::Local:
      v = frame.slots[op.slot].kind == RtValue::Kind::None ? nullptr : &frame.slots[op.slot];
      break;
    case Operand::Kind::Outer:
      v = lookupOuter(op.value);
      break;
    }
    if (!v) {
      errorHasPath_ = true;
      std::string where = graph.parentNode() ? describeNode(*graph.parentNode()) + ": subgraph '" +
                                                   graph.name + "'"
                                             : "graph '" + graph.name + "'";
      return Status::error(where + ": output " + std::to_string(i) + " (" +
                           valueLabel(op.value) + ") was not computed");
    }
    outputs.push_back(v->isTensor() && v->channelsLast ? channelsFirstCopy(*v) : *v);
  }
  return Status::success();
}

Status Interpreter::checkInputs(const Graph &graph, const std::vector<RtValue> &inputs) const {
  if (inputs.size() > graph.inputs().size())
    return Status::error("graph '" + graph.name + "' has " + std::to_string(graph.inputs().size()) +
                         " inputs but " + std::to_string(inputs.size()) + " were given");
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    const Value *in = graph.input(i);
    const RtValue *given = i < inputs.size() ? &inputs[i] : nullptr;
    std::string label = "graph input " + std::to_string(i) + " ('" + in->name() + "')";
    if (!given || given->kind == RtValue::Kind::None) {
      if (!in->initializer())
        return Status::error(label + " is missing");
      continue;
    }
    const std::optional<Type> &ty = in->type();
    if (!ty)
      continue;
    if (ty->kind() == Type::Kind::Tensor) {
      if (given->kind != RtValue::Kind::Tensor || !given->tensor)
        return Status::error(label + " must be a tensor");
      const Tensor &t = *given->tensor;
      if (ty->hasElemType && ty->elemType() != DataType::Undefined && ty->elemType() != t.dtype())
        return Status::error(label + " has element type " + dataTypeName(t.dtype()) +
                             " but the graph declares " + dataTypeName(ty->elemType()));
      if (ty->shape() && options_.checkInputShapes) {
        const Shape &shape = *ty->shape();
        if (static_cast<int64_t>(shape.size()) != t.rank())
          return Status::error(label + " has rank " + std::to_string(t.rank()) +
                               " but the graph declares rank " + std::to_string(shape.size()));
        for (size_t d = 0; d < shape.size(); ++d)
          if (shape[d].isValue() && shape[d].getValue() != t.dims()[d])
            return Status::error(label + " has dim " + std::to_string(d) + " = " +
                                 std::to_string(t.dims()[d]) + " but the graph declares " +
                                 std::to_string(shape[d].getValue()));
      }
      if (!t.isConsistent())
        return Status::error(label + " has a data size that does not match its shape");
    } else if (ty->kind() == Type::Kind::Sequence && given->kind != RtValue::Kind::Sequence) {
      return Status::error(label + " must be a sequence");
    } else if (ty->kind() == Type::Kind::Optional && given->kind != RtValue::Kind::Optional &&
               given->kind != RtValue::Kind::Tensor && given->kind != RtValue::Kind::Sequence) {
      return Status::error(label + " must be an optional");
    }
  }
  return Status::success();
}

Status Interpreter::run(const Graph &graph, const std::vector<RtValue> &inputs,
                        std::vector<RtValue> &outputs) {
  errorHasPath_ = false;
  ONNXSLIM_RETURN_IF_ERROR(checkInputs(graph, inputs));
  // The kernels post their parallel jobs a few hundred microseconds apart.
  KeepWorkersSpinning spinning;
  return execute(planFor(graph), inputs, outputs);
}

Status Interpreter::runSubgraph(const Graph &body, const std::vector<RtValue> &inputs,
                                std::vector<RtValue> &outputs) {
  if (inputs.size() > body.inputs().size())
    return Status::error("subgraph '" + body.name + "' has " + std::to_string(body.inputs().size()) +
                         " inputs but " + std::to_string(inputs.size()) + " were given");
  return execute(planFor(body), inputs, outputs);
}

Status Interpreter::runNode(const Node &node, const std::vector<const RtValue *> &inputs,
                            std::vector<RtValue> &outputs, bool deterministicOnly) {
  errorHasPath_ = false;
  struct Restore {
    bool &flag;
    bool saved;
    ~Restore() { flag = saved; }
  } restore{deterministicOnly_, deterministicOnly_};
  deterministicOnly_ = deterministicOnly || options_.deterministicOnly;
  int64_t opset = opsetVersionFor(node);
  const KernelDef *kernel = registry_.find(node.domain(), node.opType(), opset);
  Status s;
  if (!kernel) {
    std::string dom = node.domain() == "ai.onnx" ? std::string() : node.domain();
    if (auto f = functions_.find(dom + ":" + node.opType()); f != functions_.end()) {
      if (deterministicOnly)
        s = Status::error("function calls are not folded");
      else
        s = callFunction(node, *f->second, inputs, outputs);
      return s.ok() ? s : nodeError(node, s);
    }
  }
  s = callKernel(node, kernel, opset, inputs, outputs, deterministicOnly_);
  return s.ok() ? s : nodeError(node, s);
}

} // namespace onnxslim::rt
