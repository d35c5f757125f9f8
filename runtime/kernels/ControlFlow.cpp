//===- runtime/kernels/ControlFlow.cpp - If, Loop and Scan ----------------===//
//
// The control-flow kernels run their bodies through
// Interpreter::runSubgraph, which makes the values of the enclosing graphs
// visible to the body. Loop supports every termination form (trip count,
// condition, both, neither with an iteration cap), loop-carried values of any
// kind (tensors, sequences, optionals) and scan outputs stacked along a new
// leading axis. Scan supports opset 8 (leading batch axis, optional
// sequence_lens) and 9+ (per-input/output axes and directions).
//
//===----------------------------------------------------------------------===//
#include "runtime/Interpreter.h"
#include "runtime/kernels/TensorHelpers.h"

#include <algorithm>

namespace onnxslim::rt {
namespace {

using namespace tops;

const Graph *graphAttr(const KernelContext &ctx, const char *name) {
  const Attribute *a = ctx.attr(name);
  return a && a->g ? a->g.get() : nullptr;
}

Status needInterpreter(const KernelContext &ctx) {
  if (!ctx.interpreter())
    return Status::error("control flow needs an interpreter");
  return Status::success();
}

/// Reads a one-element bool (or numeric) tensor as a condition.
Status readCondition(const Tensor &t, bool &out) {
  if (t.numElements() != 1)
    return Status::error("condition must have exactly one element, got shape " +
                         dimsToString(t.dims()));
  double v;
  ONNXSLIM_RETURN_IF_ERROR(readScalar(t, v, "condition"));
  out = v != 0;
  return Status::success();
}

/// Stacks equal-shaped slices along a new axis `axis` (in [0, rank]);
/// reversed when `reverse`. `emptyDims`/`emptyType` describe a 0-slice result.
Status stackSlices(const std::vector<TensorPtr> &slices, int64_t axis, bool reverse,
                   const std::vector<int64_t> &emptyDims, DataType emptyType, TensorPtr &out) {
  if (slices.empty()) {
    std::vector<int64_t> dims = emptyDims;
    dims.insert(dims.begin() + std::min<int64_t>(axis, static_cast<int64_t>(dims.size())), 0);
    out = TensorBuilder(emptyType, dims).finish();
    return Status::success();
  }
  const Tensor &first = *slices[0];
  ONNXSLIM_RETURN_IF_ERROR(checkMovable(first.dtype()));
  int64_t rank = first.rank();
  if (axis < 0 || axis > rank)
    return Status::error("scan output axis " + std::to_string(axis) + " out of range");
  for (const TensorPtr &s : slices)
    if (s->dims() != first.dims() || s->dtype() != first.dtype())
      return Status::error("scan output slices differ in shape or type: " +
                           dimsToString(first.dims()) + " vs " + dimsToString(s->dims()));
  std::vector<int64_t> dims = first.dims();
  auto n = static_cast<int64_t>(slices.size());
  dims.insert(dims.begin() + axis, n);
  TensorBuilder b(first.dtype(), dims);
  std::vector<int64_t> outStrides = stridesOf(dims), sliceDstStrides;
  for (int64_t d = 0; d < rank + 1; ++d)
    if (d != axis)
      sliceDstStrides.push_back(outStrides[d]);
  for (int64_t i = 0; i < n; ++i) {
    const Tensor &s = *slices[reverse ? n - 1 - i : i];
    stridedCopy(s, 0, s.dims(), stridesOf(s.dims()), b, i * outStrides[axis], &sliceDstStrides);
  }
  out = b.finish();
  return Status::success();
}

/// Declared shape (static dims only) and element type of a graph output, for
/// stacking zero iterations.
void declaredSlice(const Graph &body, size_t output, std::vector<int64_t> &dims, DataType &dt) {
  dims.clear();
  dt = DataType::Float;
  const GraphOutput &o = body.outputSlots()[output];
  const std::optional<Type> &ty = o.type ? o.type : (o.use.get() ? o.use.get()->type() : o.type);
  if (!ty || !ty->isTensor())
    return;
  if (ty->elemType() != DataType::Undefined)
    dt = ty->elemType();
  if (ty->shape()) {
    for (const Dim &d : *ty->shape()) {
      if (!d.isValue()) {
        dims.clear();
        return;
      }
      dims.push_back(d.getValue());
    }
  }
}

//===----------------------------------------------------------------------===//
// If
//===----------------------------------------------------------------------===//

Status ifKernel(KernelContext &ctx) {
  ONNXSLIM_RETURN_IF_ERROR(needInterpreter(ctx));
  const Tensor *condT;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, condT));
  bool cond;
  ONNXSLIM_RETURN_IF_ERROR(readCondition(*condT, cond));
  const char *branchName = cond ? "then_branch" : "else_branch";
  const Graph *branch = graphAttr(ctx, branchName);
  if (!branch)
    return ctx.error(std::string("missing attribute '") + branchName + "'");
  if (branch->numOutputs() != ctx.numOutputs())
    return ctx.error(std::string(branchName) + " has " + std::to_string(branch->numOutputs()) +
                     " outputs but the node has " + std::to_string(ctx.numOutputs()));
  std::vector<RtValue> outs;
  ONNXSLIM_RETURN_IF_ERROR(ctx.interpreter()->runSubgraph(*branch, {}, outs));
  for (size_t i = 0; i < outs.size(); ++i)
    ctx.setOutput(i, std::move(outs[i]));
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Loop
//===----------------------------------------------------------------------===//

Status loopKernel(KernelContext &ctx) {
  ONNXSLIM_RETURN_IF_ERROR(needInterpreter(ctx));
  const Graph *body = graphAttr(ctx, "body");
  if (!body)
    return ctx.error("missing attribute 'body'");
  size_t numCarried = ctx.numInputs() >= 2 ? ctx.numInputs() - 2 : 0;
  if (body->inputs().size() != numCarried + 2)
    return ctx.error("body has " + std::to_string(body->inputs().size()) + " inputs, expected " +
                     std::to_string(numCarried + 2) + " (iteration, condition, " +
                     std::to_string(numCarried) + " carried)");
  if (body->numOutputs() < numCarried + 1)
    return ctx.error("body has " + std::to_string(body->numOutputs()) +
                     " outputs, expected at least " + std::to_string(numCarried + 1));
  size_t numScan = body->numOutputs() - 1 - numCarried;
  if (ctx.numOutputs() > numCarried + numScan)
    return ctx.error("node has " + std::to_string(ctx.numOutputs()) + " outputs but the body yields " +
                     std::to_string(numCarried) + " carried and " + std::to_string(numScan) +
                     " scan values");
  const int64_t cap = ctx.interpreter()->options().maxLoopIterations;
  bool haveTrip = ctx.hasInput(0), haveCond = ctx.hasInput(1);
  int64_t trip = 0;
  if (haveTrip) {
    const Tensor *t;
    ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, t));
    std::vector<int64_t> v;
    ONNXSLIM_RETURN_IF_ERROR(readInts(*t, v, "trip count M"));
    if (v.size() != 1)
      return ctx.error("trip count M must be a scalar");
    trip = v[0];
  }
  bool cond = true;
  if (haveCond) {
    const Tensor *c;
    ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(1, c));
    ONNXSLIM_RETURN_IF_ERROR(readCondition(*c, cond));
  }
  std::vector<RtValue> carried(numCarried);
  for (size_t i = 0; i < numCarried; ++i) {
    const RtValue *v = ctx.input(2 + i);
    if (!v || v->kind == RtValue::Kind::None)
      return ctx.error("loop-carried input " + std::to_string(i) + " is missing");
    carried[i] = *v;
  }
  std::vector<std::vector<TensorPtr>> scans(numScan);
  std::vector<RtValue> in(numCarried + 2), out;
  int64_t iter = 0;
  for (; (!haveTrip || iter < trip) && cond; ++iter) {
    if (iter >= cap)
      return ctx.error("Loop exceeded " + std::to_string(cap) + " iterations");
    in[0] = RtValue::fromTensor(makeInt64({}, {iter}));
    TensorBuilder cb(DataType::Bool, {});
    cb.data()[0] = cond ? 1 : 0;
    in[1] = RtValue::fromTensor(cb.finish());
    for (size_t i = 0; i < numCarried; ++i)
      in[2 + i] = std::move(carried[i]);
    ONNXSLIM_RETURN_IF_ERROR(ctx.interpreter()->runSubgraph(*body, in, out));
    if (out.size() != body->numOutputs())
      return ctx.error("body produced " + std::to_string(out.size()) + " outputs");
    if (haveCond) {
      if (!out[0].isTensor())
        return ctx.error("body condition output is not a tensor");
      ONNXSLIM_RETURN_IF_ERROR(readCondition(*out[0].tensor, cond));
    }
    for (size_t i = 0; i < numCarried; ++i)
      carried[i] = std::move(out[1 + i]);
    for (size_t k = 0; k < numScan; ++k) {
      RtValue &s = out[1 + numCarried + k];
      if (!s.isTensor())
        return ctx.error("scan output " + std::to_string(k) + " is not a tensor");
      scans[k].push_back(std::move(s.tensor));
    }
  }
  for (size_t i = 0; i < numCarried; ++i)
    ctx.setOutput(i, std::move(carried[i]));
  for (size_t k = 0; k < numScan; ++k) {
    if (!ctx.wantsOutput(numCarried + k))
      continue;
    std::vector<int64_t> dims;
    DataType dt;
    declaredSlice(*body, 1 + numCarried + k, dims, dt);
    TensorPtr stacked;
    ONNXSLIM_RETURN_IF_ERROR(stackSlices(scans[k], 0, false, dims, dt, stacked));
    ctx.setOutput(numCarried + k, stacked);
  }
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Scan
//===----------------------------------------------------------------------===//

/// Slice t of `in` along `axis` (that axis removed).
TensorPtr sliceAt(const Tensor &in, int64_t axis, int64_t t) {
  std::vector<int64_t> strides = stridesOf(in.dims()), dims, src;
  for (int64_t d = 0; d < in.rank(); ++d)
    if (d != axis) {
      dims.push_back(in.dims()[d]);
      src.push_back(strides[d]);
    }
  TensorBuilder b(in.dtype(), dims);
  stridedCopy(in, t * strides[axis], dims, src, b);
  return b.finish();
}

struct ScanSpec {
  std::vector<int64_t> inAxes, inDirs, outAxes, outDirs;
};

/// One scan over `length` steps: states in/out, scan inputs sliced per step,
/// scan outputs stacked.
Status runScan(KernelContext &ctx, const Graph &body, std::vector<RtValue> states,
               const std::vector<const Tensor *> &scanIns, const ScanSpec &spec, int64_t length,
               std::vector<RtValue> &finalStates, std::vector<TensorPtr> &scanOuts) {
  size_t numState = states.size(), numIn = scanIns.size();
  size_t numOut = body.numOutputs() - numState;
  std::vector<std::vector<TensorPtr>> slices(numOut);
  std::vector<RtValue> in(numState + numIn), out;
  for (int64_t t = 0; t < length; ++t) {
    for (size_t i = 0; i < numState; ++i)
      in[i] = std::move(states[i]);
    for (size_t j = 0; j < numIn; ++j) {
      int64_t step = spec.inDirs[j] ? length - 1 - t : t;
      in[numState + j] = RtValue::fromTensor(sliceAt(*scanIns[j], spec.inAxes[j], step));
    }
    ONNXSLIM_RETURN_IF_ERROR(ctx.interpreter()->runSubgraph(body, in, out));
    if (out.size() != body.numOutputs())
      return ctx.error("body produced " + std::to_string(out.size()) + " outputs");
    for (size_t i = 0; i < numState; ++i)
      states[i] = std::move(out[i]);
    for (size_t k = 0; k < numOut; ++k) {
      if (!out[numState + k].isTensor())
        return ctx.error("scan output " + std::to_string(k) + " is not a tensor");
      slices[k].push_back(out[numState + k].tensor);
    }
  }
  finalStates = std::move(states);
  scanOuts.assign(numOut, nullptr);
  for (size_t k = 0; k < numOut; ++k) {
    std::vector<int64_t> dims;
    DataType dt;
    declaredSlice(body, numState + k, dims, dt);
    int64_t rank = slices[k].empty() ? static_cast<int64_t>(dims.size()) : slices[k][0]->rank();
    int64_t axis;
    ONNXSLIM_RETURN_IF_ERROR(normalizeAxis(spec.outAxes[k], rank + 1, axis, "scan_output_axes"));
    ONNXSLIM_RETURN_IF_ERROR(stackSlices(slices[k], axis, spec.outDirs[k] != 0, dims, dt, scanOuts[k]));
  }
  return Status::success();
}

/// Reads an ints attribute of `count` entries (default all zeros).
Status intsAttr(KernelContext &ctx, const char *name, size_t count, std::vector<int64_t> &out) {
  if (!ctx.attr(name)) {
    out.assign(count, 0);
    return Status::success();
  }
  out = ctx.attrInts(name);
  if (out.size() != count)
    return ctx.error(std::string("attribute '") + name + "' has " + std::to_string(out.size()) +
                     " entries, expected " + std::to_string(count));
  return Status::success();
}

Status scanKernel(KernelContext &ctx) {
  ONNXSLIM_RETURN_IF_ERROR(needInterpreter(ctx));
  const Graph *body = graphAttr(ctx, "body");
  if (!body)
    return ctx.error("missing attribute 'body'");
  int64_t numIn = ctx.attrInt("num_scan_inputs", -1);
  bool v8 = ctx.opsetVersion() < 9;
  size_t first = v8 ? 1 : 0; // opset 8: input 0 is sequence_lens
  if (numIn < 1 || static_cast<size_t>(numIn) + first > ctx.numInputs())
    return ctx.error("num_scan_inputs " + std::to_string(numIn) + " does not fit the " +
                     std::to_string(ctx.numInputs()) + " inputs");
  size_t numState = ctx.numInputs() - first - static_cast<size_t>(numIn);
  if (body->inputs().size() != numState + static_cast<size_t>(numIn) ||
      body->numOutputs() < numState)
    return ctx.error("body has " + std::to_string(body->inputs().size()) + " inputs and " +
                     std::to_string(body->numOutputs()) + " outputs; expected " +
                     std::to_string(numState + numIn) + " inputs and at least " +
                     std::to_string(numState) + " outputs");
  size_t numOut = body->numOutputs() - numState;
  if (ctx.numOutputs() > numState + numOut)
    return ctx.error("node has more outputs than the body yields");
  std::vector<RtValue> states(numState);
  for (size_t i = 0; i < numState; ++i) {
    const RtValue *v = ctx.input(first + i);
    if (!v || v->kind == RtValue::Kind::None)
      return ctx.error("initial state " + std::to_string(i) + " is missing");
    states[i] = *v;
  }
  std::vector<const Tensor *> scanIns(numIn);
  for (int64_t j = 0; j < numIn; ++j)
    ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(first + numState + j, scanIns[j]));
  ScanSpec spec;
  if (!v8) {
    ONNXSLIM_RETURN_IF_ERROR(intsAttr(ctx, "scan_input_axes", numIn, spec.inAxes));
    ONNXSLIM_RETURN_IF_ERROR(intsAttr(ctx, "scan_input_directions", numIn, spec.inDirs));
    ONNXSLIM_RETURN_IF_ERROR(intsAttr(ctx, "scan_output_axes", numOut, spec.outAxes));
    ONNXSLIM_RETURN_IF_ERROR(intsAttr(ctx, "scan_output_directions", numOut, spec.outDirs));
    int64_t length = -1;
    for (int64_t j = 0; j < numIn; ++j) {
      int64_t ax;
      ONNXSLIM_RETURN_IF_ERROR(normalizeAxis(spec.inAxes[j], scanIns[j]->rank(), ax, "scan_input_axes"));
      ONNXSLIM_RETURN_IF_ERROR(checkMovable(scanIns[j]->dtype()));
      spec.inAxes[j] = ax;
      int64_t len = scanIns[j]->dims()[ax];
      if (length >= 0 && len != length)
        return ctx.error("scan inputs have different lengths " + std::to_string(length) + " and " +
                         std::to_string(len));
      length = len;
    }
    std::vector<RtValue> finals;
    std::vector<TensorPtr> outs;
    ONNXSLIM_RETURN_IF_ERROR(runScan(ctx, *body, std::move(states), scanIns, spec, length, finals, outs));
    for (size_t i = 0; i < numState; ++i)
      ctx.setOutput(i, std::move(finals[i]));
    for (size_t k = 0; k < numOut; ++k)
      ctx.setOutput(numState + k, outs[k]);
    return Status::success();
  }
  // Opset 8: every state and scan input has a leading batch axis; the scan
  // axis is 1 (axis 0 of each batch entry).
  ONNXSLIM_RETURN_IF_ERROR(intsAttr(ctx, "directions", numIn, spec.inDirs));
  spec.inAxes.assign(numIn, 0);
  spec.outAxes.assign(numOut, 0);
  spec.outDirs.assign(numOut, 0);
  int64_t batch = -1, maxLen = -1;
  for (int64_t j = 0; j < numIn; ++j) {
    ONNXSLIM_RETURN_IF_ERROR(checkMovable(scanIns[j]->dtype()));
    if (scanIns[j]->rank() < 2)
      return ctx.error("scan inputs need a batch and a sequence axis");
    if ((batch >= 0 && scanIns[j]->dims()[0] != batch) ||
        (maxLen >= 0 && scanIns[j]->dims()[1] != maxLen))
      return ctx.error("scan inputs have different batch or sequence sizes");
    batch = scanIns[j]->dims()[0];
    maxLen = scanIns[j]->dims()[1];
  }
  std::vector<int64_t> lens(batch, maxLen);
  if (ctx.hasInput(0)) {
    const Tensor *lt;
    ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, lt));
    ONNXSLIM_RETURN_IF_ERROR(readInts(*lt, lens, "sequence_lens"));
    if (static_cast<int64_t>(lens.size()) != batch)
      return ctx.error("sequence_lens must have one entry per batch");
    for (int64_t l : lens)
      if (l < 0 || l > maxLen)
        return ctx.error("sequence length " + std::to_string(l) + " out of range");
  }
  for (size_t i = 0; i < numState; ++i)
    if (!states[i].isTensor() || states[i].tensor->rank() < 1 || states[i].tensor->dims()[0] != batch)
      return ctx.error("state " + std::to_string(i) + " must be a tensor with the batch axis");
  std::vector<std::vector<TensorPtr>> finalsPerState(numState), outsPerOutput(numOut);
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<RtValue> st(numState);
    for (size_t i = 0; i < numState; ++i)
      st[i] = RtValue::fromTensor(sliceAt(*states[i].tensor, 0, b));
    std::vector<TensorPtr> batchIns(numIn);
    std::vector<const Tensor *> ptrs(numIn);
    for (int64_t j = 0; j < numIn; ++j) {
      TensorPtr full = sliceAt(*scanIns[j], 0, b);
      if (lens[b] < maxLen) { // keep the first lens[b] steps
        std::vector<int64_t> dims = full->dims();
        dims[0] = lens[b];
        TensorBuilder tb(full->dtype(), dims);
        stridedCopy(*full, 0, dims, stridesOf(full->dims()), tb);
        full = tb.finish();
      }
      batchIns[j] = full;
      ptrs[j] = full.get();
    }
    std::vector<RtValue> finals;
    std::vector<TensorPtr> outs;
    ONNXSLIM_RETURN_IF_ERROR(runScan(ctx, *body, std::move(st), ptrs, spec, lens[b], finals, outs));
    for (size_t i = 0; i < numState; ++i) {
      if (!finals[i].isTensor())
        return ctx.error("state " + std::to_string(i) + " is not a tensor");
      finalsPerState[i].push_back(finals[i].tensor);
    }
    for (size_t k = 0; k < numOut; ++k) {
      TensorPtr o = outs[k];
      if (lens[b] < maxLen) { // pad the missing steps with zeros
        std::vector<int64_t> dims = o->dims();
        dims[0] = maxLen;
        TensorBuilder tb(o->dtype(), dims);
        stridedCopy(*o, 0, o->dims(), stridesOf(o->dims()), tb);
        o = tb.finish();
      }
      outsPerOutput[k].push_back(o);
    }
  }
  for (size_t i = 0; i < numState; ++i) {
    TensorPtr t;
    ONNXSLIM_RETURN_IF_ERROR(stackSlices(finalsPerState[i], 0, false, {}, DataType::Float, t));
    ctx.setOutput(i, t);
  }
  for (size_t k = 0; k < numOut; ++k) {
    TensorPtr t;
    ONNXSLIM_RETURN_IF_ERROR(stackSlices(outsPerOutput[k], 0, false, {}, DataType::Float, t));
    ctx.setOutput(numState + k, t);
  }
  return Status::success();
}

} // namespace

void registerControlFlowKernels(OpRegistry &r) {
  r.add("If", 1, kLatestOpset, ifKernel);
  r.add("Loop", 1, kLatestOpset, loopKernel);
  r.add("Scan", 8, kLatestOpset, scanKernel);
}

} // namespace onnxslim::rt
