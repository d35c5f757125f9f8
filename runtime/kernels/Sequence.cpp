//===- runtime/kernels/Sequence.cpp - Sequence and optional kernels -------===//
//
// Kernels over sequence values (SequenceEmpty, SequenceConstruct,
// SequenceAt, SequenceInsert, SequenceErase, SequenceLength,
// SplitToSequence, ConcatFromSequence, SequenceMap) and optional values
// (Optional, OptionalHasElement, OptionalGetElement). A sequence is an
// RtValue holding a vector of immutable tensors, so inserting or erasing
// copies pointers, never tensor data.
//
//===----------------------------------------------------------------------===//
#include "runtime/Interpreter.h"
#include "runtime/kernels/TensorHelpers.h"

#include <algorithm>

namespace onnxslim::rt {
namespace {

using namespace tops;

Status requireSequence(const KernelContext &ctx, size_t i, const RtValue *&out) {
  out = ctx.input(i);
  if (!out || out->kind != RtValue::Kind::Sequence)
    return Status::error("input " + std::to_string(i) + " must be a sequence");
  return Status::success();
}

/// Reads a scalar position and wraps it into [0, size) (or [0, size] when
/// `allowEnd`), else an error.
Status readPosition(const Tensor &t, int64_t size, bool allowEnd, int64_t &pos) {
  std::vector<int64_t> v;
  ONNXSLIM_RETURN_IF_ERROR(readInts(t, v, "position"));
  if (v.size() != 1)
    return Status::error("position must be a scalar");
  int64_t p = v[0], orig = v[0];
  if (p < 0)
    p += size;
  if (p < 0 || p > size || (p == size && !allowEnd))
    return Status::error("position " + std::to_string(orig) + " is out of range for a sequence of " +
                         std::to_string(size) + " tensors");
  pos = p;
  return Status::success();
}

RtValue makeSequence(std::vector<TensorPtr> items, DataType elem) {
  RtValue v = RtValue::fromSequence(std::move(items));
  v.elemType = Type::tensor(elem);
  return v;
}

DataType sequenceElemType(const RtValue &seq) {
  if (!seq.sequence.empty())
    return seq.sequence[0]->dtype();
  if (seq.elemType && seq.elemType->isTensor())
    return seq.elemType->elemType();
  if (seq.elemType && seq.elemType->kind() == Type::Kind::Sequence && seq.elemType->inner())
    return seq.elemType->inner()->elemType();
  return DataType::Float;
}

Status sequenceEmptyKernel(KernelContext &ctx) {
  auto dt = static_cast<DataType>(ctx.attrInt("dtype", static_cast<int64_t>(DataType::Float)));
  ctx.setOutput(0, makeSequence({}, dt));
  return Status::success();
}

Status sequenceConstructKernel(KernelContext &ctx) {
  std::vector<TensorPtr> items;
  for (size_t i = 0; i < ctx.numInputs(); ++i) {
    TensorPtr t = ctx.tensorPtr(i);
    if (!t)
      return ctx.error("input " + std::to_string(i) + " is missing or not a tensor");
    if (!items.empty() && t->dtype() != items[0]->dtype())
      return ctx.error("all tensors of a sequence must have one element type");
    items.push_back(std::move(t));
  }
  if (items.empty())
    return ctx.error("SequenceConstruct needs at least one input");
  DataType dt = items[0]->dtype();
  ctx.setOutput(0, makeSequence(std::move(items), dt));
  return Status::success();
}

Status sequenceAtKernel(KernelContext &ctx) {
  const RtValue *seq;
  const Tensor *posT;
  ONNXSLIM_RETURN_IF_ERROR(requireSequence(ctx, 0, seq));
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(1, posT));
  int64_t pos;
  ONNXSLIM_RETURN_IF_ERROR(readPosition(*posT, static_cast<int64_t>(seq->sequence.size()), false, pos));
  ctx.setOutput(0, seq->sequence[pos]);
  return Status::success();
}

Status sequenceInsertKernel(KernelContext &ctx) {
  const RtValue *seq;
  ONNXSLIM_RETURN_IF_ERROR(requireSequence(ctx, 0, seq));
  TensorPtr t = ctx.tensorPtr(1);
  if (!t)
    return ctx.error("input 1 must be a tensor");
  DataType dt = sequenceElemType(*seq);
  if (!seq->sequence.empty() && t->dtype() != dt)
    return ctx.error("cannot insert a " + dataTypeName(t->dtype()) + " tensor into a sequence of " +
                     dataTypeName(dt));
  auto n = static_cast<int64_t>(seq->sequence.size());
  int64_t pos = n;
  if (ctx.hasInput(2)) {
    const Tensor *posT;
    ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(2, posT));
    ONNXSLIM_RETURN_IF_ERROR(readPosition(*posT, n, true, pos));
  }
  std::vector<TensorPtr> items = seq->sequence;
  DataType outType = seq->sequence.empty() ? t->dtype() : dt;
  items.insert(items.begin() + pos, std::move(t));
  ctx.setOutput(0, makeSequence(std::move(items), outType));
  return Status::success();
}

Status sequenceEraseKernel(KernelContext &ctx) {
  const RtValue *seq;
  ONNXSLIM_RETURN_IF_ERROR(requireSequence(ctx, 0, seq));
  auto n = static_cast<int64_t>(seq->sequence.size());
  if (n == 0)
    return ctx.error("cannot erase from an empty sequence");
  int64_t pos = n - 1;
  if (ctx.hasInput(1)) {
    const Tensor *posT;
    ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(1, posT));
    ONNXSLIM_RETURN_IF_ERROR(readPosition(*posT, n, false, pos));
  }
  std::vector<TensorPtr> items = seq->sequence;
  items.erase(items.begin() + pos);
  ctx.setOutput(0, makeSequence(std::move(items), sequenceElemType(*seq)));
  return Status::success();
}

Status sequenceLengthKernel(KernelContext &ctx) {
  const RtValue *seq;
  ONNXSLIM_RETURN_IF_ERROR(requireSequence(ctx, 0, seq));
  ctx.setOutput(0, makeInt64({}, {static_cast<int64_t>(seq->sequence.size())}));
  return Status::success();
}

Status splitToSequenceKernel(KernelContext &ctx) {
  const Tensor *in;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, in));
  ONNXSLIM_RETURN_IF_ERROR(checkMovable(in->dtype()));
  int64_t axis;
  if (in->rank() == 0)
    return ctx.error("input must have rank >= 1");
  ONNXSLIM_RETURN_IF_ERROR(normalizeAxis(ctx.attrInt("axis", 0), in->rank(), axis));
  int64_t dim = in->dims()[axis];
  std::vector<int64_t> sizes;
  bool squeeze = false;
  if (ctx.hasInput(1)) {
    const Tensor *st;
    ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(1, st));
    std::vector<int64_t> v;
    ONNXSLIM_RETURN_IF_ERROR(readInts(*st, v, "split"));
    if (st->rank() == 0) {
      if (v.size() != 1 || v[0] <= 0)
        return ctx.error("split must be positive");
      for (int64_t b = 0; b < dim; b += v[0])
        sizes.push_back(std::min(v[0], dim - b));
    } else {
      int64_t sum = 0;
      for (int64_t s : v) {
        if (s < 0)
          return ctx.error("split has a negative size");
        sum += s;
      }
      if (sum != dim)
        return ctx.error("split " + dimsToString(v) + " does not add up to dim " + std::to_string(dim));
      sizes = v;
    }
  } else {
    sizes.assign(dim, 1);
    squeeze = ctx.attrInt("keepdims", 1) == 0;
  }
  std::vector<int64_t> strides = stridesOf(in->dims());
  std::vector<TensorPtr> items;
  int64_t begin = 0;
  for (int64_t s : sizes) {
    std::vector<int64_t> dims = in->dims();
    dims[axis] = s;
    TensorBuilder b(in->dtype(), dims);
    stridedCopy(*in, begin * strides[axis], dims, strides, b);
    TensorPtr t = b.finish();
    if (squeeze) {
      dims.erase(dims.begin() + axis);
      t = reshaped(t, dims);
    }
    items.push_back(std::move(t));
    begin += s;
  }
  ctx.setOutput(0, makeSequence(std::move(items), in->dtype()));
  return Status::success();
}

Status concatFromSequenceKernel(KernelContext &ctx) {
  const RtValue *seq;
  ONNXSLIM_RETURN_IF_ERROR(requireSequence(ctx, 0, seq));
  if (seq->sequence.empty())
    return ctx.error("cannot concatenate an empty sequence");
  if (!ctx.attr("axis"))
    return ctx.error("missing attribute 'axis'");
  bool newAxis = ctx.attrInt("new_axis", 0) != 0;
  const Tensor &first = *seq->sequence[0];
  ONNXSLIM_RETURN_IF_ERROR(checkMovable(first.dtype()));
  int64_t rank = first.rank(), axis;
  ONNXSLIM_RETURN_IF_ERROR(normalizeAxis(ctx.attrInt("axis", 0), newAxis ? rank + 1 : rank, axis));
  std::vector<int64_t> dims = first.dims();
  if (newAxis)
    dims.insert(dims.begin() + axis, 0);
  else
    dims[axis] = 0;
  for (const TensorPtr &t : seq->sequence) {
    bool fits = t->dtype() == first.dtype() && t->rank() == rank;
    for (int64_t d = 0; fits && d < rank; ++d)
      fits = (!newAxis && d == axis) || t->dims()[d] == first.dims()[d];
    if (!fits)
      return ctx.error("sequence tensors " + dimsToString(first.dims()) + " and " +
                       dimsToString(t->dims()) + " cannot be concatenated");
    dims[axis] += newAxis ? 1 : t->dims()[axis];
  }
  ONNXSLIM_RETURN_IF_ERROR(checkOutputSize(ctx, dims, first.dtype()));
  TensorBuilder b(first.dtype(), dims);
  std::vector<int64_t> outStrides = stridesOf(dims), dst = outStrides;
  if (newAxis)
    dst.erase(dst.begin() + axis);
  int64_t offset = 0;
  for (const TensorPtr &t : seq->sequence) {
    stridedCopy(*t, 0, t->dims(), stridesOf(t->dims()), b, offset * outStrides[axis], &dst);
    offset += newAxis ? 1 : t->dims()[axis];
  }
  ctx.setOutput(0, b.finish());
  return Status::success();
}

Status sequenceMapKernel(KernelContext &ctx) {
  const Attribute *a = ctx.attr("body");
  if (!a || !a->g)
    return ctx.error("missing attribute 'body'");
  if (!ctx.interpreter())
    return ctx.error("SequenceMap needs an interpreter");
  const Graph &body = *a->g;
  const RtValue *seq;
  ONNXSLIM_RETURN_IF_ERROR(requireSequence(ctx, 0, seq));
  size_t n = seq->sequence.size();
  if (body.inputs().size() != ctx.numInputs())
    return ctx.error("body has " + std::to_string(body.inputs().size()) + " inputs, the node " +
                     std::to_string(ctx.numInputs()));
  for (size_t i = 1; i < ctx.numInputs(); ++i) {
    const RtValue *v = ctx.input(i);
    if (!v || (v->kind != RtValue::Kind::Sequence && !v->isTensor()))
      return ctx.error("input " + std::to_string(i) + " must be a tensor or a sequence");
    if (v->kind == RtValue::Kind::Sequence && v->sequence.size() != n)
      return ctx.error("input sequence " + std::to_string(i) + " has a different length");
  }
  std::vector<std::vector<TensorPtr>> results(body.numOutputs());
  std::vector<RtValue> in(ctx.numInputs()), out;
  for (size_t k = 0; k < n; ++k) {
    in[0] = RtValue::fromTensor(seq->sequence[k]);
    for (size_t i = 1; i < ctx.numInputs(); ++i) {
      const RtValue *v = ctx.input(i);
      in[i] = v->kind == RtValue::Kind::Sequence ? RtValue::fromTensor(v->sequence[k]) : *v;
    }
    ONNXSLIM_RETURN_IF_ERROR(ctx.interpreter()->runSubgraph(body, in, out));
    for (size_t j = 0; j < out.size() && j < results.size(); ++j) {
      if (!out[j].isTensor())
        return ctx.error("body output " + std::to_string(j) + " is not a tensor");
      results[j].push_back(out[j].tensor);
    }
  }
  for (size_t j = 0; j < results.size() && j < ctx.numOutputs(); ++j) {
    DataType dt = DataType::Float;
    if (!results[j].empty())
      dt = results[j][0]->dtype();
    else if (const auto &ty = body.outputSlots()[j].type; ty && ty->isTensor())
      dt = ty->elemType();
    ctx.setOutput(j, makeSequence(std::move(results[j]), dt));
  }
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Optionals
//===----------------------------------------------------------------------===//

Status optionalKernel(KernelContext &ctx) {
  RtValue v;
  v.kind = RtValue::Kind::Optional;
  if (ctx.hasInput(0)) {
    v.optional = std::make_shared<const RtValue>(*ctx.input(0));
  } else {
    const Attribute *a = ctx.attr("type");
    if (!a || !a->tp)
      return ctx.error("an empty Optional needs attribute 'type'");
    v.elemType = *a->tp;
  }
  ctx.setOutput(0, std::move(v));
  return Status::success();
}

Status optionalHasElementKernel(KernelContext &ctx) {
  bool has = false;
  if (const RtValue *v = ctx.input(0)) {
    if (v->kind == RtValue::Kind::Optional)
      has = v->optional != nullptr;
    else
      has = v->kind != RtValue::Kind::None;
  }
  TensorBuilder b(DataType::Bool, {});
  b.data()[0] = has ? 1 : 0;
  ctx.setOutput(0, b.finish());
  return Status::success();
}

Status optionalGetElementKernel(KernelContext &ctx) {
  const RtValue *v = ctx.input(0);
  if (!v || v->kind == RtValue::Kind::None)
    return ctx.error("input 0 is missing");
  if (v->kind != RtValue::Kind::Optional) {
    ctx.setOutput(0, *v);
    return Status::success();
  }
  if (!v->optional)
    return ctx.error("the optional is empty");
  ctx.setOutput(0, *v->optional);
  return Status::success();
}

} // namespace

void registerSequenceKernels(OpRegistry &r) {
  r.add("SequenceEmpty", 11, kLatestOpset, sequenceEmptyKernel);
  r.add("SequenceConstruct", 11, kLatestOpset, sequenceConstructKernel);
  r.add("SequenceAt", 11, kLatestOpset, sequenceAtKernel);
  r.add("SequenceInsert", 11, kLatestOpset, sequenceInsertKernel);
  r.add("SequenceErase", 11, kLatestOpset, sequenceEraseKernel);
  r.add("SequenceLength", 11, kLatestOpset, sequenceLengthKernel);
  r.add("SplitToSequence", 11, kLatestOpset, splitToSequenceKernel);
  r.add("ConcatFromSequence", 11, kLatestOpset, concatFromSequenceKernel);
  r.add("SequenceMap", 17, kLatestOpset, sequenceMapKernel);
  r.add("Optional", 15, kLatestOpset, optionalKernel);
  r.add("OptionalHasElement", 15, kLatestOpset, optionalHasElementKernel);
  r.add("OptionalGetElement", 15, kLatestOpset, optionalGetElementKernel);
}

} // namespace onnxslim::rt
