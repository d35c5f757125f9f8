//===- runtime/Kernel.h - Kernel interface and op registry -----*- C++ -*-===//
//
// The interpreter's contract with its kernels. A kernel is a function that
// reads a node's inputs and attributes through a KernelContext and sets its
// outputs, or returns an error Status naming the problem (the context adds
// the node's name and op type). Where the spec leaves the result undefined
// for the given inputs, the kernel still sets outputs and says so
// (KernelContext::noteUndefined), so that constant folding does not bake
// one runtime's choice into the model. Kernels never crash or read out of bounds on
// a malformed model: they check ranks, sizes and indices and return errors.
//
// Kernels are registered in an OpRegistry keyed by (domain, op type, opset
// version range), so every historical version of an op keeps the semantics of
// its spec version. Registration is explicit (no static initializers, which
// static-library linking would drop): each kernel file defines a
// `registerXxxKernels(OpRegistry &)` function listed in runtime/Kernels.cpp.
//
// This header is included by kernel files and by the interpreter only;
// xtensor/xsimd stay inside kernel .cpp files.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace onnxslim::rt {

//===----------------------------------------------------------------------===//
// Status
//===----------------------------------------------------------------------===//

class [[nodiscard]] Status {
public:
  Status() = default;
  static Status success() { return Status(); }
  static Status error(std::string message) {
    Status s;
    s.ok_ = false;
    s.message_ = std::move(message);
    return s;
  }
  /// The node ran, but the spec leaves its result undefined for these inputs
  /// (the message says why). Returned instead of the result only when the
  /// interpreter was asked to refuse such results (RunOptions::refuseUndefined,
  /// as constant folding does): the folder then declines the node.
  static Status undefined(std::string message) {
    Status s = error(std::move(message));
    s.undefined_ = true;
    return s;
  }
  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  /// Whether this is an undefined() status rather than an error.
  bool isUndefined() const { return undefined_; }
  const std::string &message() const { return message_; }
  /// The same status (error or undefined) with another message.
  Status withMessage(std::string message) const {
    Status s = *this;
    s.message_ = std::move(message);
    return s;
  }

private:
  bool ok_ = true;
  bool undefined_ = false;
  std::string message_;
};

#define ONNXSLIM_RETURN_IF_ERROR(expr)                                                             \
  do {                                                                                             \
    ::onnxslim::rt::Status _s = (expr);                                                            \
    if (!_s.ok())                                                                                  \
      return _s;                                                                                   \
  } while (0)

//===----------------------------------------------------------------------===//
// Runtime values
//===----------------------------------------------------------------------===//

/// A value flowing through the interpreter: a tensor, a sequence of tensors,
/// an optional (empty or holding a tensor/sequence), or nothing (an omitted
/// optional input). Tensors are the IR's immutable tensors, so initializers
/// are used in place (mmapped views, no copies).
struct RtValue {
  enum class Kind : uint8_t { None, Tensor, Sequence, Optional };
  Kind kind = Kind::None;
  TensorPtr tensor;                 ///< Kind::Tensor
  std::vector<TensorPtr> sequence;  ///< Kind::Sequence
  /// Kind::Optional: the held value, or null for an empty optional.
  std::shared_ptr<const RtValue> optional;
  /// For an empty sequence/optional, the element type it was declared with.
  std::optional<Type> elemType;
  /// Kind::Tensor of rank >= 3 whose bytes hold its elements channels last:
  /// dims stay [N, C, spatial...], element (n, c, p) is at (n * P + p) * C
  /// + c (P the spatial size). Only kernels the interpreter plans for it
  /// see such a value (runtime/Layout.h); every other reader gets a
  /// channels-first copy.
  bool channelsLast = false;

  static RtValue fromTensor(TensorPtr t) {
    RtValue v;
    v.kind = Kind::Tensor;
    v.tensor = std::move(t);
    return v;
  }
  static RtValue fromSequence(std::vector<TensorPtr> s) {
    RtValue v;
    v.kind = Kind::Sequence;
    v.sequence = std::move(s);
    return v;
  }
  bool isTensor() const { return kind == Kind::Tensor && tensor; }
};

//===----------------------------------------------------------------------===//
// Writable tensors
//===----------------------------------------------------------------------===//

/// Allocates a zero-initialized, 64-byte aligned, writable tensor; finish()
/// freezes it into an immutable TensorPtr. Kernels write outputs through this.
class TensorBuilder {
public:
  /// Whether the elements start zeroed; kernels that overwrite every element
  /// pass Uninitialized to skip the extra pass over memory.
  enum class Fill : uint8_t { Zeroed, Uninitialized };
  TensorBuilder(DataType dtype, std::vector<int64_t> dims, Fill fill = Fill::Zeroed);
  /// For string tensors: the element vector to fill.
  std::vector<std::string> &strings() { return strings_; }
  uint8_t *data() { return data_; }
  template <typename T> T *dataAs() { return reinterpret_cast<T *>(data_); }
  size_t byteSize() const { return size_; }
  int64_t numElements() const { return numElements_; }
  TensorPtr finish();

private:
  std::shared_ptr<Tensor> tensor_;
  std::shared_ptr<uint8_t[]> storage_;
  uint8_t *data_ = nullptr;
  size_t size_ = 0;
  int64_t numElements_ = 0;
  std::vector<std::string> strings_;
};

/// Returns the product of dims, or an error for negative dims / overflow /
/// sizes beyond `limitBytes` (guards against malformed shapes).
Status checkedNumElements(const std::vector<int64_t> &dims, DataType dtype, int64_t &count,
                          size_t limitBytes = size_t{1} << 36);

//===----------------------------------------------------------------------===//
// KernelContext
//===----------------------------------------------------------------------===//

class Interpreter;

/// What a kernel sees: its node, its inputs, its outputs, and the interpreter
/// (for subgraph execution by If/Loop/Scan).
class KernelContext {
public:
  KernelContext(const Node &node, int64_t opsetVersion, std::vector<const RtValue *> inputs,
                Interpreter *interp)
      : node_(node), opset_(opsetVersion), inputs_(std::move(inputs)), interp_(interp),
        outputs_(node.numResults()) {}

  const Node &node() const { return node_; }
  /// The opset version of this node's domain imported by the model.
  int64_t opsetVersion() const { return opset_; }

  size_t numInputs() const { return inputs_.size(); }
  /// Input i, or null when it is omitted (or i is past the end).
  const RtValue *input(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }
  bool hasInput(size_t i) const { return input(i) && input(i)->kind != RtValue::Kind::None; }
  /// Input i as a tensor; null when omitted or not a tensor.
  const Tensor *tensor(size_t i) const {
    const RtValue *v = input(i);
    return v && v->kind == RtValue::Kind::Tensor ? v->tensor.get() : nullptr;
  }
  TensorPtr tensorPtr(size_t i) const {
    const RtValue *v = input(i);
    return v && v->kind == RtValue::Kind::Tensor ? v->tensor : nullptr;
  }
  /// Fetches required tensor input i or returns an error naming it.
  Status requireTensor(size_t i, const Tensor *&out) const;

  size_t numOutputs() const { return outputs_.size(); }
  /// Whether output i is requested (present in the node, not omitted).
  bool wantsOutput(size_t i) const { return i < node_.numResults() && node_.result(i); }
  void setOutput(size_t i, RtValue v) {
    if (i < outputs_.size())
      outputs_[i] = std::move(v);
  }
  void setOutput(size_t i, TensorPtr t) { setOutput(i, RtValue::fromTensor(std::move(t))); }
  std::vector<RtValue> &outputs() { return outputs_; }

  /// Attribute accessors with spec defaults.
  const Attribute *attr(std::string_view name) const { return node_.attr(name); }
  int64_t attrInt(std::string_view name, int64_t dflt) const { return node_.attrInt(name, dflt); }
  float attrFloat(std::string_view name, float dflt) const { return node_.attrFloat(name, dflt); }
  std::string attrString(std::string_view name, std::string dflt = "") const {
    return node_.attrString(name, std::move(dflt));
  }
  std::vector<int64_t> attrInts(std::string_view name, std::vector<int64_t> dflt = {}) const {
    return node_.attrInts(name, std::move(dflt));
  }

  /// An error Status; the interpreter prefixes the node's name and op type.
  static Status error(std::string message) { return Status::error(std::move(message)); }

  /// Given why, Execute: records that the spec leaves the result of this
  /// node undefined for its inputs (an out-of-range float -> int Cast...).
  /// The kernel still computes and sets its outputs (what `onnxslim run`
  /// shows, chosen to match ONNX Runtime on x86-64); constant folding does
  /// not fold such a node. The first reason is kept.
  void noteUndefined(std::string why) {
    if (undefinedReason_.empty())
      undefinedReason_ = std::move(why);
  }
  /// Why the result is undefined, or empty.
  const std::string &undefinedReason() const { return undefinedReason_; }

  Interpreter *interpreter() const { return interp_; }

  /// A clamp of output 0 that the interpreter asks this kernel to fuse (a
  /// float Conv whose only reader is a Relu or a Clip with constant bounds):
  /// y = x < lo ? lo : x, then y > hi ? hi : y, exactly as the Clip kernel
  /// computes it (NaN passes through). Only a float kernel that applies it
  /// while its output is still in cache takes it (takeOutputClamp); when
  /// none does, the interpreter runs the activation node itself.
  struct OutputClamp {
    float lo, hi;
  };
  void requestOutputClamp(OutputClamp c) { clamp_ = c; }
  /// The requested clamp, now marked as applied; null when none was
  /// requested, or when an addend was requested and not taken (the clamp
  /// comes after the addition).
  const OutputClamp *takeOutputClamp() {
    if (!clamp_ || (addend_ && !addendTaken_))
      return nullptr;
    clampTaken_ = true;
    return &*clamp_;
  }
  bool outputClampApplied() const { return clampTaken_; }

  /// A tensor that the interpreter asks this kernel to add to output 0
  /// before any clamp (a float Conv whose only reader is an Add of a value
  /// computed before it): y = x + z elementwise, as the Add kernel computes
  /// it. A kernel takes it (takeOutputAddend) only when z is float with
  /// exactly its output's dims; otherwise the Add runs as a node.
  void requestOutputAddend(const Tensor *z) { addend_ = z; }
  /// The requested addend when it is a float tensor of `dims`, now marked as
  /// applied; null otherwise.
  const Tensor *takeOutputAddend(const std::vector<int64_t> &dims) {
    if (!addend_ || addend_->dtype() != DataType::Float || addend_->dims() != dims ||
        !addend_->isConsistent())
      return nullptr;
    addendTaken_ = true;
    return addend_;
  }
  bool outputAddendApplied() const { return addendTaken_; }

  /// Whether input i is a tensor held channels last (RtValue::channelsLast).
  bool inputChannelsLast(size_t i) const {
    const RtValue *v = input(i);
    return v && v->isTensor() && v->channelsLast;
  }
  /// The interpreter asks this kernel (a Conv feeding a depthwise one) to
  /// write output 0 channels last; a kernel that does calls
  /// setOutputChannelsLast after setting it.
  void requestChannelsLastOutput() { lastRequested_ = true; }
  bool channelsLastRequested() const { return lastRequested_; }
  void setOutputChannelsLast() {
    if (!outputs_.empty())
      outputs_[0].channelsLast = true;
  }

  /// Marks input i as read for the last time by this node (the interpreter
  /// releases its slot after this step).
  void markLastUse(size_t i) {
    if (i < 64)
      lastUse_ |= uint64_t{1} << i;
  }
  /// markLastUse for every input i whose bit i is set in `mask`.
  void markLastUses(uint64_t mask) { lastUse_ |= mask; }
  /// Input i when its bytes may be overwritten by this node's output: this
  /// is its last reader, nothing else holds the tensor or shares its bytes
  /// (no view, no graph input, no constant), and it has `dtype` and `dims`.
  /// The kernel then writes its output into those bytes (each element read
  /// before it is written) and returns a tensor over them; null otherwise.
  const Tensor *reusableInput(size_t i, DataType dtype, const std::vector<int64_t> &dims) const {
    if (i >= 64 || !(lastUse_ >> i & 1))
      return nullptr;
    const RtValue *v = input(i);
    if (!v || !v->isTensor() || v->tensor.use_count() != 1)
      return nullptr;
    const Tensor &t = *v->tensor;
    if (t.dtype() != dtype || t.dims() != dims || !t.buffer().soleOwner() || !t.isConsistent())
      return nullptr;
    return &t;
  }

  /// Marks input i as a constant of the running plan (an initializer of the
  /// graph being run): the same tensor, with the same contents, on every run
  /// until the interpreter's plans are cleared.
  void markConstant(size_t i) {
    if (i < 64)
      constant_ |= uint64_t{1} << i;
  }
  /// markConstant for every input i whose bit i is set in `mask`.
  void markConstants(uint64_t mask) { constant_ |= mask; }
  bool isConstantInput(size_t i) const { return i < 64 && (constant_ >> i & 1); }

  /// State this kernel keeps for this node from one run of the interpreter
  /// to the next (a constant weight repacked for its product), or null when
  /// the node runs alone (constant folding). The slot lives as long as the
  /// interpreter's plan of the node's graph and starts empty. What the
  /// kernel keeps there may only be derived from constant inputs
  /// (isConstantInput) and attributes, and the kernel checks on every call
  /// that it was derived from the inputs it has now.
  std::shared_ptr<void> *nodeState() const { return state_; }
  void setNodeState(std::shared_ptr<void> *slot) { state_ = slot; }

private:
  const Node &node_;
  int64_t opset_;
  std::vector<const RtValue *> inputs_;
  Interpreter *interp_;
  std::vector<RtValue> outputs_;
  std::string undefinedReason_;
  std::optional<OutputClamp> clamp_;
  bool clampTaken_ = false;
  const Tensor *addend_ = nullptr;
  bool addendTaken_ = false;
  bool lastRequested_ = false;
  uint64_t lastUse_ = 0;
  uint64_t constant_ = 0;
  std::shared_ptr<void> *state_ = nullptr;
};

//===----------------------------------------------------------------------===//
// Registry
//===----------------------------------------------------------------------===//

using KernelFn = Status (*)(KernelContext &);

struct KernelDef {
  std::string domain;   ///< "" for the default ONNX domain
  std::string opType;
  int64_t sinceVersion; ///< first opset version this kernel implements
  int64_t untilVersion; ///< last opset version (inclusive)
  KernelFn fn;
  bool deterministic = true; ///< false for Random*, Multinomial, ...
};

constexpr int64_t kLatestOpset = 1000;

class OpRegistry {
public:
  /// The registry with every built-in kernel (built on first use).
  static const OpRegistry &builtin();

  /// Given a kernel, Execute: adds it; overlapping ranges for one op are a bug.
  void add(KernelDef def);
  /// Convenience: add(domain "", op, [since, until]).
  void add(std::string op, int64_t since, int64_t until, KernelFn fn, bool deterministic = true) {
    add(KernelDef{"", std::move(op), since, until, fn, deterministic});
  }
  /// The kernel for (domain, op) at `opsetVersion`, or null.
  const KernelDef *find(std::string_view domain, std::string_view opType, int64_t opsetVersion) const;
  /// Whether any version of (domain, op) is registered.
  bool knows(std::string_view domain, std::string_view opType) const;
  size_t size() const;

private:
  std::unordered_map<std::string, std::vector<KernelDef>> kernels_; // key: domain + ":" + op
};

/// Registers every built-in kernel family (runtime/Kernels.cpp).
void registerBuiltinKernels(OpRegistry &registry);

} // namespace onnxslim::rt
