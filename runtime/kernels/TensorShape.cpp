//===- runtime/kernels/TensorShape.cpp - Shape and layout kernels ---------===//
//
// Kernels that produce constants or move elements without arithmetic:
// Constant, ConstantOfShape, Shape, Size, Reshape, Flatten, Squeeze,
// Unsqueeze, Identity, Transpose, Expand, Tile, Concat, Split, Slice,
// DepthToSpace, SpaceToDepth, EyeLike, Trilu and Pad, in every opset version
// (attribute forms before inputs forms where the spec changed). Views that
// only change dims (Reshape, Flatten, Squeeze, Unsqueeze) share the input's
// bytes; the others are one strided copy.
//
//===----------------------------------------------------------------------===//
#include "runtime/Interpreter.h"
#include "runtime/ThreadPool.h"
#include "runtime/kernels/TensorHelpers.h"

#include <algorithm>
#include <cstring>
#include <numeric>

namespace onnxslim::rt {
namespace {

using namespace tops;

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

Status constantKernel(KernelContext &ctx) {
  const Node &n = ctx.node();
  const Attribute *a = nullptr;
  for (const char *name : {"value", "sparse_value", "value_float", "value_floats", "value_int",
                           "value_ints", "value_string", "value_strings"})
    if (const Attribute *x = n.attr(name)) {
      if (a)
        return ctx.error("Constant must have exactly one value attribute");
      a = x;
    }
  if (!a)
    return ctx.error("Constant has no value attribute");
  TensorPtr out;
  if (a->name == "value") {
    if (!a->t)
      return ctx.error("attribute 'value' holds no tensor");
    if (!a->t->isConsistent())
      return ctx.error("attribute 'value' has a data size that does not match its shape " +
                       dimsToString(a->t->dims()));
    out = a->t;
  } else if (a->name == "sparse_value") {
    if (!a->sparseTensor)
      return ctx.error("attribute 'sparse_value' holds no sparse tensor");
    ONNXSLIM_RETURN_IF_ERROR(densifySparse(*a->sparseTensor, out));
  } else if (a->name == "value_float") {
    out = Tensor::fromValues(DataType::Float, {}, std::vector<float>{a->f});
  } else if (a->name == "value_floats") {
    out = Tensor::fromValues(DataType::Float, {static_cast<int64_t>(a->floats.size())}, a->floats);
  } else if (a->name == "value_int") {
    out = Tensor::fromValues(DataType::Int64, {}, std::vector<int64_t>{a->i});
  } else if (a->name == "value_ints") {
    out = Tensor::fromValues(DataType::Int64, {static_cast<int64_t>(a->ints.size())}, a->ints);
  } else if (a->name == "value_string") {
    out = Tensor::fromStrings({}, {a->s});
  } else {
    out = Tensor::fromStrings({static_cast<int64_t>(a->strings.size())}, a->strings);
  }
  ctx.setOutput(0, out);
  return Status::success();
}

Status constantOfShapeKernel(KernelContext &ctx) {
  const Tensor *shape;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, shape));
  std::vector<int64_t> dims;
  ONNXSLIM_RETURN_IF_ERROR(readInts(*shape, dims, "shape"));
  if (shape->rank() > 1)
    return ctx.error("shape must be 1-D");
  TensorPtr value;
  if (const Attribute *a = ctx.attr("value")) {
    if (!a->t || a->t->numElements() != 1 || !a->t->isConsistent())
      return ctx.error("attribute 'value' must be a one-element tensor");
    value = a->t;
  } else {
    value = Tensor::fromValues(DataType::Float, {1}, std::vector<float>{0.0f});
  }
  ONNXSLIM_RETURN_IF_ERROR(checkMovable(value->dtype()));
  ONNXSLIM_RETURN_IF_ERROR(checkOutputSize(ctx, dims, value->dtype()));
  TensorBuilder b(value->dtype(), dims);
  size_t es = elementSize(value->dtype());
  if (es == 0) {
    std::fill(b.strings().begin(), b.strings().end(), value->strings()[0]);
  } else {
    bool zero = std::all_of(value->rawData(), value->rawData() + es, [](uint8_t c) { return c == 0; });
    if (!zero)
      for (int64_t i = 0; i < b.numElements(); ++i)
        std::memcpy(b.data() + i * es, value->rawData(), es);
  }
  ctx.setOutput(0, b.finish());
  return Status::success();
}

Status eyeLikeKernel(KernelContext &ctx) {
  const Tensor *in;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, in));
  if (in->rank() != 2)
    return ctx.error("EyeLike input must be 2-D, got rank " + std::to_string(in->rank()));
  auto dt = static_cast<DataType>(ctx.attrInt("dtype", static_cast<int64_t>(in->dtype())));
  int64_t k = ctx.attrInt("k", 0);
  TensorBuilder b(dt, in->dims());
  int64_t rows = in->dims()[0], cols = in->dims()[1];
  bool ok = visitNumeric(dt, [&]<typename T>() {
    T one = fromDouble<T>(1.0);
    for (int64_t i = 0; i < rows; ++i) {
      int64_t j = i + k;
      if (j >= 0 && j < cols)
        std::memcpy(b.data() + (i * cols + j) * sizeof(T), &one, sizeof(T));
    }
  });
  if (!ok)
    return ctx.error("unsupported output type " + dataTypeName(dt));
  ctx.setOutput(0, b.finish());
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Shape queries and views
//===----------------------------------------------------------------------===//

Status shapeKernel(KernelContext &ctx) {
  const Tensor *in;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, in));
  int64_t rank = in->rank();
  int64_t start = 0, end = rank;
  if (ctx.opsetVersion() >= 15) {
    start = ctx.attrInt("start", 0);
    end = ctx.attrInt("end", rank);
    if (start < 0)
      start += rank;
    if (end < 0)
      end += rank;
    start = std::clamp<int64_t>(start, 0, rank);
    end = std::clamp<int64_t>(end, 0, rank);
  }
  std::vector<int64_t> dims;
  for (int64_t i = start; i < end; ++i)
    dims.push_back(in->dims()[i]);
  ctx.setOutput(0, makeInt64({static_cast<int64_t>(dims.size())}, dims));
  return Status::success();
}

Status sizeKernel(KernelContext &ctx) {
  const Tensor *in;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, in));
  int64_t count = 0;
  ONNXSLIM_RETURN_IF_ERROR(checkedNumElements(in->dims(), in->dtype(), count, SIZE_MAX));
  ctx.setOutput(0, makeInt64({}, {count}));
  return Status::success();
}

/// Checks that `dims` holds as many elements as `in` and sets it as output 0.
Status setView(KernelContext &ctx, std::vector<int64_t> dims) {
  TensorPtr in = ctx.tensorPtr(0);
  int64_t count = 0;
  ONNXSLIM_RETURN_IF_ERROR(checkedNumElements(dims, in->dtype(), count, SIZE_MAX));
  int64_t have = 0;
  ONNXSLIM_RETURN_IF_ERROR(checkedNumElements(in->dims(), in->dtype(), have, SIZE_MAX));
  if (count != have)
    return ctx.error("cannot reshape " + dimsToString(in->dims()) + " (" + std::to_string(have) +
                     " elements) to " + dimsToString(dims) + " (" + std::to_string(count) +
                     " elements)");
  ctx.setOutput(0, reshaped(in, std::move(dims)));
  return Status::success();
}

Status reshapeKernel(KernelContext &ctx) {
  const Tensor *in;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, in));
  std::vector<int64_t> target;
  if (ctx.opsetVersion() < 5) {
    target = ctx.attrInts("shape");
  } else {
    const Tensor *shape;
    ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(1, shape));
    if (shape->rank() != 1)
      return ctx.error("shape input must be 1-D");
    ONNXSLIM_RETURN_IF_ERROR(readInts(*shape, target, "shape"));
  }
  bool allowZero = ctx.opsetVersion() >= 14 && ctx.attrInt("allowzero", 0) != 0;
  int64_t inferAt = -1, known = 1;
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t &d = target[i];
    if (d == -1) {
      if (inferAt >= 0)
        return ctx.error("shape " + dimsToString(target) + " has more than one -1");
      inferAt = static_cast<int64_t>(i);
      continue;
    }
    if (d == 0 && !allowZero) {
      if (static_cast<int64_t>(i) >= in->rank())
        return ctx.error("shape " + dimsToString(target) + " copies dim " + std::to_string(i) +
                         " that the input " + dimsToString(in->dims()) + " does not have");
      d = in->dims()[i];
    }
    if (d < 0)
      return ctx.error("shape " + dimsToString(target) + " has a negative dim");
    if (d != 0 && known > INT64_MAX / d)
      return ctx.error("shape " + dimsToString(target) + " overflows");
    known *= d;
  }
  if (inferAt >= 0) {
    int64_t total = in->numElements();
    if (known == 0 || total % known != 0)
      return ctx.error("cannot infer the -1 of shape " + dimsToString(target) + " for input " +
                       dimsToString(in->dims()));
    target[inferAt] = total / known;
  }
  return setView(ctx, std::move(target));
}

Status flattenKernel(KernelContext &ctx) {
  const Tensor *in;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, in));
  int64_t rank = in->rank(), axis = ctx.attrInt("axis", 1);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis > rank)
    return ctx.error("axis " + std::to_string(ctx.attrInt("axis", 1)) + " out of range for rank " +
                     std::to_string(rank));
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i)
    (i < axis ? outer : inner) *= in->dims()[i];
  return setView(ctx, {outer, inner});
}

/// Axes from the attribute (before `inputSince`) or from input 1.
Status readAxes(KernelContext &ctx, int64_t inputSince, std::vector<int64_t> &axes, bool &given) {
  given = false;
  if (ctx.opsetVersion() < inputSince) {
    if (ctx.attr("axes")) {
      axes = ctx.attrInts("axes");
      given = true;
    }
    return Status::success();
  }
  if (ctx.hasInput(1)) {
    const Tensor *t;
    ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(1, t));
    if (t->rank() > 1)
      return ctx.error("axes must be 1-D");
    ONNXSLIM_RETURN_IF_ERROR(readInts(*t, axes, "axes"));
    given = true;
  }
  return Status::success();
}

Status squeezeKernel(KernelContext &ctx) {
  const Tensor *in;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, in));
  std::vector<int64_t> axes;
  bool given;
  ONNXSLIM_RETURN_IF_ERROR(readAxes(ctx, 13, axes, given));
  int64_t rank = in->rank();
  std::vector<bool> drop(rank, false);
  if (given) {
    for (int64_t a : axes) {
      int64_t ax;
      ONNXSLIM_RETURN_IF_ERROR(normalizeAxis(a, rank, ax));
      if (in->dims()[ax] != 1)
        return ctx.error("cannot squeeze axis " + std::to_string(a) + " of size " +
                         std::to_string(in->dims()[ax]) + " in " + dimsToString(in->dims()));
      drop[ax] = true;
    }
  } else {
    for (int64_t i = 0; i < rank; ++i)
      drop[i] = in->dims()[i] == 1;
  }
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < rank; ++i)
    if (!drop[i])
      dims.push_back(in->dims()[i]);
  return setView(ctx, std::move(dims));
}

Status unsqueezeKernel(KernelContext &ctx) {
  const Tensor *in;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, in));
  std::vector<int64_t> axes;
  bool given;
  ONNXSLIM_RETURN_IF_ERROR(readAxes(ctx, 13, axes, given));
  if (!given)
    return ctx.error("Unsqueeze needs axes");
  int64_t outRank = in->rank() + static_cast<int64_t>(axes.size());
  std::vector<bool> added(outRank, false);
  for (int64_t a : axes) {
    int64_t ax;
    ONNXSLIM_RETURN_IF_ERROR(normalizeAxis(a, outRank, ax));
    if (added[ax])
      return ctx.error("axis " + std::to_string(a) + " appears twice");
    added[ax] = true;
  }
  std::vector<int64_t> dims;
  size_t j = 0;
  for (int64_t i = 0; i < outRank; ++i)
    dims.push_back(added[i] ? 1 : in->dims()[j++]);
  return setView(ctx, std::move(dims));
}

Status identityKernel(KernelContext &ctx) {
  const RtValue *v = ctx.input(0);
  if (!v || v->kind == RtValue::Kind::None)
    return ctx.error("input 0 is missing");
  ctx.setOutput(0, *v);
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Transpose, Expand, Tile
//===----------------------------------------------------------------------===//

Status transposeKernel(KernelContext &ctx) {
  const Tensor *in;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, in));
  ONNXSLIM_RETURN_IF_ERROR(checkMovable(in->dtype()));
  int64_t rank = in->rank();
  std::vector<int64_t> perm = ctx.attrInts("perm");
  if (!ctx.attr("perm")) {
    perm.resize(rank);
    for (int64_t i = 0; i < rank; ++i)
      perm[i] = rank - 1 - i;
  }
  if (static_cast<int64_t>(perm.size()) != rank)
    return ctx.error("perm " + dimsToString(perm) + " does not match rank " + std::to_string(rank));
  std::vector<bool> seen(rank, false);
  for (int64_t &p : perm) {
    if (p < 0)
      p += rank;
    if (p < 0 || p >= rank || seen[p])
      return ctx.error("perm " + dimsToString(ctx.attrInts("perm")) + " is not a permutation");
    seen[p] = true;
  }
  std::vector<int64_t> strides = stridesOf(in->dims()), dims(rank), src(rank);
  for (int64_t i = 0; i < rank; ++i) {
    dims[i] = in->dims()[perm[i]];
    src[i] = strides[perm[i]];
  }
  // Not zeroed: stridedCopy writes every element.
  TensorBuilder b(in->dtype(), dims, TensorBuilder::Fill::Uninitialized);
  stridedCopy(*in, 0, dims, src, b);
  ctx.setOutput(0, b.finish());
  return Status::success();
}

Status expandKernel(KernelContext &ctx) {
  const Tensor *in, *shape;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, in));
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(1, shape));
  ONNXSLIM_RETURN_IF_ERROR(checkMovable(in->dtype()));
  std::vector<int64_t> target, dims;
  ONNXSLIM_RETURN_IF_ERROR(readInts(*shape, target, "shape"));
  if (shape->rank() != 1)
    return ctx.error("shape must be 1-D");
  for (int64_t d : target)
    if (d < 0)
      return ctx.error("shape " + dimsToString(target) + " has a negative dim");
  Status s = broadcastShapes({in->dims(), target}, dims);
  if (!s.ok())
    return s;
  ONNXSLIM_RETURN_IF_ERROR(checkOutputSize(ctx, dims, in->dtype()));
  // Not zeroed: stridedCopy writes every element.
  TensorBuilder b(in->dtype(), dims, TensorBuilder::Fill::Uninitialized);
  stridedCopy(*in, 0, dims, broadcastStrides(in->dims(), dims), b);
  ctx.setOutput(0, b.finish());
  return Status::success();
}

/// Repeats `in` reps[i] times along each axis i.
Status tileBy(KernelContext &ctx, const Tensor &in, const std::vector<int64_t> &reps) {
  ONNXSLIM_RETURN_IF_ERROR(checkMovable(in.dtype()));
  int64_t rank = in.rank();
  std::vector<int64_t> strides = stridesOf(in.dims()), idims, istrides, out;
  for (int64_t i = 0; i < rank; ++i) {
    if (reps[i] < 0)
      return ctx.error("repeats " + dimsToString(reps) + " has a negative entry");
    idims.push_back(reps[i]);
    istrides.push_back(0);
    idims.push_back(in.dims()[i]);
    istrides.push_back(strides[i]);
    out.push_back(reps[i] * in.dims()[i]);
  }
  ONNXSLIM_RETURN_IF_ERROR(checkOutputSize(ctx, out, in.dtype()));
  TensorBuilder b(in.dtype(), out);
  stridedCopy(in, 0, idims, istrides, b);
  ctx.setOutput(0, b.finish());
  return Status::success();
}

Status tileKernel(KernelContext &ctx) {
  const Tensor *in, *rep;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, in));
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(1, rep));
  std::vector<int64_t> reps;
  ONNXSLIM_RETURN_IF_ERROR(readInts(*rep, reps, "repeats"));
  if (ctx.opsetVersion() < 6) {
    const Tensor *axisT;
    ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(2, axisT));
    std::vector<int64_t> axisV;
    ONNXSLIM_RETURN_IF_ERROR(readInts(*axisT, axisV, "axis"));
    if (reps.size() != 1 || axisV.size() != 1)
      return ctx.error("tiles and axis must be scalars");
    int64_t axis;
    ONNXSLIM_RETURN_IF_ERROR(normalizeAxis(axisV[0], in->rank(), axis));
    std::vector<int64_t> all(in->rank(), 1);
    all[axis] = reps[0];
    return tileBy(ctx, *in, all);
  }
  if (static_cast<int64_t>(reps.size()) != in->rank())
    return ctx.error("repeats " + dimsToString(reps) + " does not match input rank " +
                     std::to_string(in->rank()));
  return tileBy(ctx, *in, reps);
}

//===----------------------------------------------------------------------===//
// Concat, Split, Slice
//===----------------------------------------------------------------------===//

/// Concat of fixed-size elements along `axis` into `b` (of dims `dims`):
/// output row o (of the dims before the axis) is input 0's row o, then
/// input 1's, ... each one contiguous run. The output's elements are cut
/// into spans (parallelSpans: one per thread for tensors larger than a
/// last-level cache, whose single-threaded copy was bound by one core's
/// bandwidth: mlsd_large's 33 MB Concat took 1.7x ORT's time on two
/// threads), each copied run piece by run piece.
void concatRuns(const std::vector<const Tensor *> &ins, int64_t axis,
                const std::vector<int64_t> &dims, TensorBuilder &b) {
  const size_t es = elementSize(ins[0]->dtype());
  int64_t inner = 1;
  for (size_t d = static_cast<size_t>(axis) + 1; d < dims.size(); ++d)
    inner *= dims[d];
  std::vector<int64_t> runs, starts; // per input: run length, start within a row
  int64_t row = 0;
  for (const Tensor *t : ins) {
    starts.push_back(row);
    runs.push_back(t->dims()[axis] * inner);
    row += runs.back();
  }
  int64_t total = 1;
  for (int64_t d : dims)
    total *= d;
  if (total == 0 || row == 0)
    return;
  uint8_t *out = b.data();
  parallelSpans(total, 16, [&](int64_t begin, int64_t end) {
    size_t i = 0;
    for (int64_t p = begin; p < end;) {
      const int64_t o = p / row, q = p % row;
      if (q < starts[i]) // a new row
        i = 0;
      while (q >= starts[i] + runs[i]) // the input whose run holds q
        ++i;
      const int64_t n = std::min(end - p, starts[i] + runs[i] - q);
      std::memcpy(out + static_cast<size_t>(p) * es,
                  ins[i]->rawData() + static_cast<size_t>(o * runs[i] + q - starts[i]) * es,
                  static_cast<size_t>(n) * es);
      p += n;
    }
  });
}

Status concatKernel(KernelContext &ctx) {
  std::vector<const Tensor *> ins;
  for (size_t i = 0; i < ctx.numInputs(); ++i) {
    const Tensor *t;
    ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(i, t));
    ins.push_back(t);
  }
  if (ins.empty())
    return ctx.error("Concat needs at least one input");
  const Tensor &first = *ins[0];
  ONNXSLIM_RETURN_IF_ERROR(checkMovable(first.dtype()));
  int64_t rank = first.rank();
  if (rank == 0)
    return ctx.error("Concat inputs must have rank >= 1");
  if (ctx.opsetVersion() >= 4 && !ctx.attr("axis"))
    return ctx.error("Concat needs attribute 'axis'");
  int64_t axis;
  ONNXSLIM_RETURN_IF_ERROR(normalizeAxis(ctx.attrInt("axis", 1), rank, axis));
  std::vector<int64_t> dims = first.dims();
  dims[axis] = 0;
  for (size_t i = 0; i < ins.size(); ++i) {
    const Tensor &t = *ins[i];
    if (t.dtype() != first.dtype())
      return ctx.error("input " + std::to_string(i) + " has element type " +
                       dataTypeName(t.dtype()) + ", input 0 has " + dataTypeName(first.dtype()));
    if (t.rank() != rank)
      return ctx.error("input " + std::to_string(i) + " has shape " + dimsToString(t.dims()) +
                       ", incompatible with input 0 " + dimsToString(first.dims()));
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis && t.dims()[d] != first.dims()[d])
        return ctx.error("input " + std::to_string(i) + " has shape " + dimsToString(t.dims()) +
                         ", incompatible with input 0 " + dimsToString(first.dims()) +
                         " outside axis " + std::to_string(axis));
    dims[axis] += t.dims()[axis];
  }
  ONNXSLIM_RETURN_IF_ERROR(checkOutputSize(ctx, dims, first.dtype()));
  // Not zeroed: every element is copied.
  TensorBuilder b(first.dtype(), dims, TensorBuilder::Fill::Uninitialized);
  if (first.dtype() == DataType::String) {
    const std::vector<int64_t> outStrides = stridesOf(dims);
    int64_t offset = 0;
    for (const Tensor *t : ins) {
      stridedCopy(*t, 0, t->dims(), stridesOf(t->dims()), b, offset * outStrides[axis],
                  &outStrides);
      offset += t->dims()[axis];
    }
  } else
    concatRuns(ins, axis, dims, b);
  ctx.setOutput(0, b.finish());
  return Status::success();
}

/// Sets output i to in[..., begin_i : begin_i + size_i, ...] along `axis`.
Status emitSplits(KernelContext &ctx, const Tensor &in, int64_t axis,
                  const std::vector<int64_t> &sizes) {
  ONNXSLIM_RETURN_IF_ERROR(checkMovable(in.dtype()));
  std::vector<int64_t> strides = stridesOf(in.dims());
  int64_t begin = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    std::vector<int64_t> dims = in.dims();
    dims[axis] = sizes[i];
    // Not zeroed: stridedCopy writes every element.
    TensorBuilder b(in.dtype(), dims, TensorBuilder::Fill::Uninitialized);
    stridedCopy(in, begin * strides[axis], dims, strides, b);
    ctx.setOutput(i, b.finish());
    begin += sizes[i];
  }
  return Status::success();
}

Status splitKernel(KernelContext &ctx) {
  const Tensor *in;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, in));
  int64_t axis;
  ONNXSLIM_RETURN_IF_ERROR(normalizeAxis(ctx.attrInt("axis", 0), in->rank(), axis));
  int64_t version = ctx.opsetVersion(), dim = in->dims()[axis];
  size_t outputs = ctx.numOutputs();
  std::vector<int64_t> sizes;
  bool given = false;
  if ((version < 2 || version >= 13) && ctx.hasInput(1)) {
    const Tensor *t;
    ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(1, t));
    ONNXSLIM_RETURN_IF_ERROR(readInts(*t, sizes, "split"));
    given = true;
  } else if (version < 13 && ctx.attr("split")) {
    sizes = ctx.attrInts("split");
    given = true;
  }
  if (given) {
    int64_t sum = 0;
    for (int64_t s : sizes) {
      if (s < 0)
        return ctx.error("split " + dimsToString(sizes) + " has a negative size");
      sum += s;
    }
    if (sum != dim)
      return ctx.error("split " + dimsToString(sizes) + " does not add up to dim " +
                       std::to_string(dim) + " of axis " + std::to_string(axis));
    if (sizes.size() != outputs)
      return ctx.error("split has " + std::to_string(sizes.size()) + " entries but the node has " +
                       std::to_string(outputs) + " outputs");
    return emitSplits(ctx, *in, axis, sizes);
  }
  if (version >= 18) {
    int64_t n = ctx.attrInt("num_outputs", 0);
    if (!ctx.attr("num_outputs"))
      return ctx.error("Split needs either the split input or attribute 'num_outputs'");
    if (n <= 0 || static_cast<size_t>(n) != outputs)
      return ctx.error("num_outputs " + std::to_string(n) + " does not match the " +
                       std::to_string(outputs) + " outputs of the node");
    int64_t chunk = (dim + n - 1) / n;
    for (int64_t i = 0; i < n; ++i)
      sizes.push_back(std::max<int64_t>(0, std::min(chunk, dim - i * chunk)));
    return emitSplits(ctx, *in, axis, sizes);
  }
  if (outputs == 0 || dim % static_cast<int64_t>(outputs) != 0)
    return ctx.error("dim " + std::to_string(dim) + " of axis " + std::to_string(axis) +
                     " cannot be split evenly into " + std::to_string(outputs) + " outputs");
  sizes.assign(outputs, dim / static_cast<int64_t>(outputs));
  return emitSplits(ctx, *in, axis, sizes);
}

/// Clamps one slice (start, end, step) on a dim; returns the output length.
int64_t clampSlice(int64_t dim, int64_t &start, int64_t end, int64_t step) {
  if (start < 0)
    start = start < -dim ? 0 : start + dim;
  if (end < 0)
    end = end < -dim ? -1 : end + dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    return end > start ? 1 + (end - start - 1) / step : 0;
  }
  start = std::clamp<int64_t>(start, 0, dim - 1);
  end = std::clamp<int64_t>(end, -1, dim - 1);
  if (start <= end || dim == 0)
    return 0;
  // Divide as unsigned: step may be INT64_MIN.
  uint64_t span = static_cast<uint64_t>(start - end);
  uint64_t mag = step == INT64_MIN ? uint64_t{1} << 63 : static_cast<uint64_t>(-step);
  return static_cast<int64_t>((span + mag - 1) / mag);
}

Status sliceKernel(KernelContext &ctx) {
  const Tensor *in;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, in));
  ONNXSLIM_RETURN_IF_ERROR(checkMovable(in->dtype()));
  std::vector<int64_t> starts, ends, axes, steps;
  bool haveAxes = false;
  if (ctx.opsetVersion() < 10) {
    starts = ctx.attrInts("starts");
    ends = ctx.attrInts("ends");
    if (ctx.attr("axes")) {
      axes = ctx.attrInts("axes");
      haveAxes = true;
    }
  } else {
    const Tensor *t;
    ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(1, t));
    ONNXSLIM_RETURN_IF_ERROR(readInts(*t, starts, "starts"));
    ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(2, t));
    ONNXSLIM_RETURN_IF_ERROR(readInts(*t, ends, "ends"));
    if (ctx.hasInput(3)) {
      ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(3, t));
      ONNXSLIM_RETURN_IF_ERROR(readInts(*t, axes, "axes"));
      haveAxes = true;
    }
    if (ctx.hasInput(4)) {
      ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(4, t));
      ONNXSLIM_RETURN_IF_ERROR(readInts(*t, steps, "steps"));
    }
  }
  int64_t rank = in->rank();
  if (starts.size() != ends.size())
    return ctx.error("starts and ends have different lengths");
  if (!haveAxes) {
    axes.resize(starts.size());
    std::iota(axes.begin(), axes.end(), 0);
  }
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size())
    return ctx.error("starts, ends, axes and steps must have the same length");
  std::vector<int64_t> dims = in->dims(), strides = stridesOf(in->dims()), src = strides;
  std::vector<bool> seen(rank, false);
  int64_t offset = 0;
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t ax;
    ONNXSLIM_RETURN_IF_ERROR(normalizeAxis(axes[i], rank, ax));
    if (seen[ax])
      return ctx.error("axis " + std::to_string(axes[i]) + " appears twice");
    seen[ax] = true;
    if (steps[i] == 0)
      return ctx.error("slice step cannot be 0");
    int64_t start = starts[i];
    dims[ax] = clampSlice(in->dims()[ax], start, ends[i], steps[i]);
    if (dims[ax] > 0) {
      offset += start * strides[ax];
      src[ax] = strides[ax] * steps[i];
    }
  }
  // Not zeroed: stridedCopy writes every element.
  TensorBuilder b(in->dtype(), dims, TensorBuilder::Fill::Uninitialized);
  stridedCopy(*in, offset, dims, src, b);
  ctx.setOutput(0, b.finish());
  return Status::success();
}

//===----------------------------------------------------------------------===//
// DepthToSpace, SpaceToDepth
//===----------------------------------------------------------------------===//

/// Writes reshape(in, view) transposed by perm, reshaped to outDims.
Status permuteView(KernelContext &ctx, const Tensor &in, const std::vector<int64_t> &view,
                   const std::vector<int64_t> &perm, const std::vector<int64_t> &outDims) {
  ONNXSLIM_RETURN_IF_ERROR(checkMovable(in.dtype()));
  std::vector<int64_t> vs = stridesOf(view), dims, src;
  for (int64_t p : perm) {
    dims.push_back(view[p]);
    src.push_back(vs[p]);
  }
  TensorBuilder b(in.dtype(), outDims);
  stridedCopy(in, 0, dims, src, b);
  ctx.setOutput(0, b.finish());
  return Status::success();
}

Status depthToSpaceKernel(KernelContext &ctx) {
  const Tensor *in;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, in));
  if (in->rank() != 4)
    return ctx.error("input must be 4-D, got " + dimsToString(in->dims()));
  int64_t bs = ctx.attrInt("blocksize", 0);
  int64_t n = in->dims()[0], c = in->dims()[1], h = in->dims()[2], w = in->dims()[3];
  if (bs <= 0 || c % (bs * bs) != 0)
    return ctx.error("blocksize " + std::to_string(bs) + " does not divide channels " +
                     std::to_string(c));
  int64_t oc = c / (bs * bs);
  std::vector<int64_t> out = {n, oc, h * bs, w * bs};
  if (ctx.opsetVersion() >= 11 && ctx.attrString("mode", "DCR") == "CRD")
    return permuteView(ctx, *in, {n, oc, bs, bs, h, w}, {0, 1, 4, 2, 5, 3}, out);
  return permuteView(ctx, *in, {n, bs, bs, oc, h, w}, {0, 3, 4, 1, 5, 2}, out);
}

Status spaceToDepthKernel(KernelContext &ctx) {
  const Tensor *in;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, in));
  if (in->rank() != 4)
    return ctx.error("input must be 4-D, got " + dimsToString(in->dims()));
  int64_t bs = ctx.attrInt("blocksize", 0);
  int64_t n = in->dims()[0], c = in->dims()[1], h = in->dims()[2], w = in->dims()[3];
  if (bs <= 0 || h % bs != 0 || w % bs != 0)
    return ctx.error("blocksize " + std::to_string(bs) + " does not divide the spatial dims");
  return permuteView(ctx, *in, {n, c, h / bs, bs, w / bs, bs}, {0, 3, 5, 1, 2, 4},
                     {n, c * bs * bs, h / bs, w / bs});
}

//===----------------------------------------------------------------------===//
// Trilu, Pad
//===----------------------------------------------------------------------===//

Status triluKernel(KernelContext &ctx) {
  const Tensor *in;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, in));
  ONNXSLIM_RETURN_IF_ERROR(checkMovable(in->dtype()));
  if (in->rank() < 2)
    return ctx.error("input must have rank >= 2");
  int64_t k = 0;
  if (ctx.hasInput(1)) {
    const Tensor *kt;
    ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(1, kt));
    std::vector<int64_t> kv;
    ONNXSLIM_RETURN_IF_ERROR(readInts(*kt, kv, "k"));
    if (kv.size() != 1)
      return ctx.error("k must be a scalar");
    k = kv[0];
  }
  bool upper = ctx.attrInt("upper", 1) != 0;
  int64_t rows = in->dims()[in->rank() - 2], cols = in->dims()[in->rank() - 1];
  TensorBuilder b(in->dtype(), in->dims());
  size_t es = elementSize(in->dtype());
  int64_t total = in->numElements();
  for (int64_t base = 0; base < total; base += rows * cols)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        int64_t d = j - i;
        bool keep = upper ? d >= k : d <= k;
        if (keep)
          copyElement(*in, base + i * cols + j, b, base + i * cols + j, es);
      }
  ctx.setOutput(0, b.finish());
  return Status::success();
}

/// Maps output coordinate o on an axis of size `dim` with `before` padding to
/// a source coordinate, or -1 for a constant-filled position.
int64_t padSource(int64_t o, int64_t dim, int64_t before, int mode) {
  int64_t i = o - before;
  if (i >= 0 && i < dim)
    return i;
  switch (mode) {
  case 0: // constant
    return -1;
  case 1: // reflect
  {
    if (dim == 1)
      return 0;
    int64_t period = 2 * (dim - 1);
    int64_t m = ((i % period) + period) % period;
    return m < dim ? m : period - m;
  }
  case 2: // edge
    return i < 0 ? 0 : dim - 1;
  default: // wrap
    return ((i % dim) + dim) % dim;
  }
}

Status padKernel(KernelContext &ctx) {
  const Tensor *in;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, in));
  ONNXSLIM_RETURN_IF_ERROR(checkMovable(in->dtype()));
  int64_t version = ctx.opsetVersion(), rank = in->rank();
  std::vector<int64_t> pads;
  std::vector<uint8_t> fill(std::max<size_t>(elementSize(in->dtype()), 1), 0);
  std::string fillString;
  double fillValue = 0;
  bool fillFromValue = false;
  if (version < 11) {
    pads = ctx.attrInts(version < 2 ? "paddings" : "pads");
    fillValue = ctx.attrFloat("value", 0.0f);
    fillFromValue = true;
  } else {
    const Tensor *p;
    ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(1, p));
    ONNXSLIM_RETURN_IF_ERROR(readInts(*p, pads, "pads"));
    if (ctx.hasInput(2)) {
      const Tensor *cv;
      ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(2, cv));
      if (cv->dtype() != in->dtype() || cv->numElements() != 1 || !cv->isConsistent())
        return ctx.error("constant_value must be a one-element tensor of the data's type");
      if (cv->dtype() == DataType::String)
        fillString = cv->strings()[0];
      else
        std::memcpy(fill.data(), cv->rawData(), elementSize(cv->dtype()));
    }
    if (version >= 18 && ctx.hasInput(3)) {
      const Tensor *at;
      ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(3, at));
      std::vector<int64_t> axes;
      ONNXSLIM_RETURN_IF_ERROR(readInts(*at, axes, "axes"));
      if (pads.size() != 2 * axes.size())
        return ctx.error("pads must have twice as many entries as axes");
      std::vector<int64_t> full(2 * rank, 0);
      std::vector<bool> seen(rank, false);
      for (size_t i = 0; i < axes.size(); ++i) {
        int64_t ax;
        ONNXSLIM_RETURN_IF_ERROR(normalizeAxis(axes[i], rank, ax));
        if (seen[ax])
          return ctx.error("axis " + std::to_string(axes[i]) + " appears twice");
        seen[ax] = true;
        full[ax] = pads[i];
        full[ax + rank] = pads[i + axes.size()];
      }
      pads = std::move(full);
    }
  }
  if (static_cast<int64_t>(pads.size()) != 2 * rank)
    return ctx.error("pads " + dimsToString(pads) + " must have 2 * rank = " +
                     std::to_string(2 * rank) + " entries");
  if (fillFromValue && in->dtype() != DataType::String)
    visitNumeric(in->dtype(), [&]<typename T>() {
      T v = fromDouble<T>(fillValue);
      std::memcpy(fill.data(), &v, sizeof(T));
    });
  std::string modeName = ctx.attrString("mode", "constant");
  int mode;
  if (modeName == "constant")
    mode = 0;
  else if (modeName == "reflect")
    mode = 1;
  else if (modeName == "edge")
    mode = 2;
  else if (modeName == "wrap" && version >= 19)
    mode = 3;
  else
    return ctx.error("unknown pad mode '" + modeName + "'");
  std::vector<int64_t> dims(rank);
  for (int64_t i = 0; i < rank; ++i) {
    dims[i] = in->dims()[i] + pads[i] + pads[i + rank];
    if (dims[i] < 0)
      return ctx.error("pads " + dimsToString(pads) + " remove more than dim " +
                       std::to_string(i) + " of " + dimsToString(in->dims()));
    if (mode != 0 && in->dims()[i] == 0 && dims[i] > 0)
      return ctx.error("cannot pad an empty axis in mode '" + modeName + "'");
  }
  ONNXSLIM_RETURN_IF_ERROR(checkOutputSize(ctx, dims, in->dtype()));
  size_t es = elementSize(in->dtype());
  bool zeroFill =
      es != 0 && std::all_of(fill.begin(), fill.begin() + es, [](uint8_t c) { return c == 0; });
  // Zero padding of a numeric tensor writes only the border (below), not
  // the whole output before the copy.
  const bool borderOnly = mode == 0 && zeroFill && rank > 0;
  TensorBuilder b(in->dtype(), dims,
                  borderOnly ? TensorBuilder::Fill::Uninitialized : TensorBuilder::Fill::Zeroed);
  int64_t total = b.numElements();
  if (total == 0) {
    ctx.setOutput(0, b.finish());
    return Status::success();
  }
  std::vector<int64_t> strides = stridesOf(in->dims()), outStrides = stridesOf(dims);
  if (mode == 0) {
    // Fill, then copy the (possibly cropped) input into the interior.
    if (es == 0)
      std::fill(b.strings().begin(), b.strings().end(), fillString);
    else if (!zeroFill)
      for (int64_t i = 0; i < total; ++i)
        std::memcpy(b.data() + i * es, fill.data(), es);
    std::vector<int64_t> len(rank), at(rank);
    int64_t srcOff = 0, dstOff = 0;
    for (int64_t a = 0; a < rank; ++a) {
      int64_t srcStart = std::max<int64_t>(0, -pads[a]), dstStart = std::max<int64_t>(0, pads[a]);
      len[a] = std::max<int64_t>(0, std::min(in->dims()[a] - srcStart, dims[a] - dstStart));
      at[a] = dstStart;
      srcOff += srcStart * strides[a];
      dstOff += dstStart * outStrides[a];
    }
    stridedCopy(*in, srcOff, len, strides, b, dstOff, &outStrides);
    if (borderOnly) {
      // Zero what the copy left: whole rows (last axis) outside the copied
      // box, and the two ends of the rows inside it.
      const int64_t last = rank - 1, width = dims[last];
      const size_t rowBytes = static_cast<size_t>(width) * es;
      const int64_t lo = std::min(at[last], width), hi = std::min(at[last] + len[last], width);
      std::vector<int64_t> counter(static_cast<size_t>(last), 0);
      for (int64_t row = 0; row * width < total; ++row) {
        uint8_t *p = b.data() + static_cast<size_t>(row) * rowBytes;
        bool inside = len[last] > 0;
        for (int64_t a = 0; a < last && inside; ++a)
          inside = counter[a] >= at[a] && counter[a] < at[a] + len[a];
        if (!inside) {
          std::memset(p, 0, rowBytes);
        } else {
          std::memset(p, 0, static_cast<size_t>(lo) * es);
          std::memset(p + static_cast<size_t>(hi) * es, 0, static_cast<size_t>(width - hi) * es);
        }
        for (int64_t a = last - 1; a >= 0; --a) {
          if (++counter[a] < dims[a])
            break;
          counter[a] = 0;
        }
      }
    }
    ctx.setOutput(0, b.finish());
    return Status::success();
  }
  // Edge/reflect/wrap: per-axis source maps; rows of the last axis gather
  // through the last map.
  std::vector<std::vector<int64_t>> maps(rank);
  for (int64_t a = 0; a < rank; ++a)
    for (int64_t o = 0; o < dims[a]; ++o)
      maps[a].push_back(padSource(o, in->dims()[a], pads[a], mode));
  int64_t last = rank - 1, width = rank ? dims[last] : 1;
  std::vector<int64_t> counter(rank, 0);
  for (int64_t row = 0; row < total; row += width) {
    int64_t src = 0;
    for (int64_t a = 0; a < last; ++a)
      src += maps[a][counter[a]] * strides[a];
    if (rank == 0) {
      copyElement(*in, 0, b, 0, es);
      break;
    }
    const std::vector<int64_t> &m = maps[last];
    for (int64_t j = 0; j < width; ++j)
      copyElement(*in, src + m[j], b, row + j, es);
    for (int64_t a = last - 1; a >= 0; --a) {
      if (++counter[a] < dims[a])
        break;
      counter[a] = 0;
    }
  }
  ctx.setOutput(0, b.finish());
  return Status::success();
}

} // namespace

void registerTensorShapeKernels(OpRegistry &r) {
  r.add("Constant", 1, kLatestOpset, constantKernel);
  r.add("ConstantOfShape", 9, kLatestOpset, constantOfShapeKernel);
  r.add("EyeLike", 9, kLatestOpset, eyeLikeKernel);
  r.add("Shape", 1, kLatestOpset, shapeKernel);
  r.add("Size", 1, kLatestOpset, sizeKernel);
  r.add("Reshape", 1, kLatestOpset, reshapeKernel);
  r.add("Flatten", 1, kLatestOpset, flattenKernel);
  r.add("Squeeze", 1, kLatestOpset, squeezeKernel);
  r.add("Unsqueeze", 1, kLatestOpset, unsqueezeKernel);
  r.add("Identity", 1, kLatestOpset, identityKernel);
  r.add("Transpose", 1, kLatestOpset, transposeKernel);
  r.add("Expand", 8, kLatestOpset, expandKernel);
  r.add("Tile", 1, kLatestOpset, tileKernel);
  r.add("Concat", 1, kLatestOpset, concatKernel);
  r.add("Split", 1, kLatestOpset, splitKernel);
  r.add("Slice", 1, kLatestOpset, sliceKernel);
  r.add("DepthToSpace", 1, kLatestOpset, depthToSpaceKernel);
  r.add("SpaceToDepth", 1, kLatestOpset, spaceToDepthKernel);
  r.add("Trilu", 14, kLatestOpset, triluKernel);
  r.add("Pad", 1, kLatestOpset, padKernel);
}

} // namespace onnxslim::rt
