//===- runtime/kernels/NNCommon.h - Shared helpers of the NN kernels -*- C++ -*-===//
//
// Private helpers of the neural-network kernel families (MatMul, Gemm, Conv,
// pooling, normalization, Resize, RNNs, quantization):
//
//  - FloatInput / FloatOutput: a float, double, float16 or bfloat16 tensor as
//    a contiguous array of its compute type (float for the 16-bit types,
//    converted once; the tensor's own bytes otherwise), and an output that
//    is computed in the compute type and rounded back on finish();
//  - dispatchFloatOp: runs a kernel template for the element type of input 0;
//  - Window: the sliding-window geometry of Conv/ConvTranspose/pooling
//    (kernel, strides, dilations, pads from `pads` or `auto_pad`, output
//    dims), computed once and validated so that loops never index outside.
//
// Spatial ranks 1 to 3 are handled by padding the geometry to three
// dimensions with unit sizes (Window::to3d).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/Kernel.h"
#include "runtime/kernels/Dispatch.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace onnxslim::rt::nn {

//===----------------------------------------------------------------------===//
// Float tensors in their compute type
//===----------------------------------------------------------------------===//

/// The elements of a float/double/float16/bfloat16 tensor as ComputeType<T>.
template <typename T> class FloatInput {
public:
  using C = ComputeType<T>;

  /// Given a tensor that must be of type T, Execute: views (or converts) its
  /// elements, Result: data() points at them; an error naming `what` otherwise.
  Status init(const Tensor &t, const std::string &what) {
    Status s = viewElements(t, view_);
    if (!s.ok())
      return Status::error(what + ": " + s.message());
    dims_ = t.dims();
    if constexpr (isHalfLike<T>) {
      converted_.resize(static_cast<size_t>(view_.size()));
      for (int64_t i = 0; i < view_.size(); ++i)
        converted_[static_cast<size_t>(i)] = view_[i].toFloat();
      ptr_ = converted_.data();
    } else {
      ptr_ = view_.data();
    }
    return Status::success();
  }
  const C *data() const { return ptr_; }
  int64_t size() const { return view_.size(); }
  const std::vector<int64_t> &dims() const { return dims_; }
  int64_t rank() const { return static_cast<int64_t>(dims_.size()); }
  C operator[](int64_t i) const { return ptr_[i]; }

private:
  ElemView<T> view_;
  std::vector<C> converted_;
  const C *ptr_ = nullptr;
  std::vector<int64_t> dims_;
};

/// An output tensor of element type T written in ComputeType<T>.
template <typename T> class FloatOutput {
public:
  using C = ComputeType<T>;

  /// Given dims, Execute: checks the size and allocates storage, zeroed
  /// unless `fill` is Uninitialized (for kernels that write every element).
  Status init(std::vector<int64_t> dims, TensorBuilder::Fill fill = TensorBuilder::Fill::Zeroed) {
    ONNXSLIM_RETURN_IF_ERROR(allocOutput(dataTypeOf<T>(), std::move(dims), builder_, fill));
    if constexpr (isHalfLike<T>)
      staging_.assign(static_cast<size_t>(builder_->numElements()), C(0));
    return Status::success();
  }
  C *data() {
    if constexpr (isHalfLike<T>)
      return staging_.data();
    else
      return builder_->template dataAs<T>();
  }
  int64_t size() const { return builder_->numElements(); }
  /// Rounds the staging values back (16-bit types) and freezes the tensor.
  TensorPtr finish() {
    if constexpr (isHalfLike<T>) {
      T *out = builder_->template dataAs<T>();
      for (size_t i = 0; i < staging_.size(); ++i)
        out[i] = T::fromFloat(staging_[i]);
    }
    return builder_->finish();
  }

private:
  std::optional<TensorBuilder> builder_;
  std::vector<C> staging_;
};

/// Given a kernel template `fn` taking a TypeTag, Execute: calls it with the
/// element type of input `index` when that is float/double/float16/bfloat16.
template <typename F> Status dispatchFloatOp(const KernelContext &ctx, size_t index, F &&fn) {
  const Tensor *t = nullptr;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(index, t));
  return dispatchType<FloatTypes>(t->dtype(), fn);
}

/// Reads an optional input `index` as FloatInput<T>; `present` says whether it exists.
template <typename T>
Status optionalFloatInput(const KernelContext &ctx, size_t index, const char *what,
                          FloatInput<T> &in, bool &present) {
  const Tensor *t = ctx.tensor(index);
  present = t != nullptr;
  return t ? in.init(*t, what) : Status::success();
}

/// Reads required input `index` as FloatInput<T>.
template <typename T>
Status requiredFloatInput(const KernelContext &ctx, size_t index, const char *what,
                          FloatInput<T> &in) {
  const Tensor *t = nullptr;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(index, t));
  return in.init(*t, what);
}

/// Product of dims[from, to).
inline int64_t product(const std::vector<int64_t> &dims, size_t from = 0,
                       size_t to = SIZE_MAX) {
  int64_t p = 1;
  for (size_t i = from; i < dims.size() && i < to; ++i)
    p *= dims[i];
  return p;
}

/// Reads an integer-valued attribute list, also accepting float lists (old
/// exporters), into `out`; returns false when the attribute is absent.
bool attrIntsOrFloats(const KernelContext &ctx, std::string_view name, std::vector<int64_t> &out);

//===----------------------------------------------------------------------===//
// Sliding windows
//===----------------------------------------------------------------------===//

/// The geometry of a sliding-window op over `rank` spatial dims.
struct Window {
  size_t rank = 0;
  std::vector<int64_t> in;        ///< input spatial dims
  std::vector<int64_t> kernel;    ///< kernel spatial dims
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> padBegin;
  std::vector<int64_t> padEnd;
  std::vector<int64_t> out;       ///< output spatial dims

  int64_t inSize() const { return product(in); }
  int64_t outSize() const { return product(out); }
  int64_t kernelSize() const { return product(kernel); }

  /// The same geometry with leading unit dims so that rank() == 3.
  struct Dims3 {
    std::array<int64_t, 3> in, kernel, strides, dilations, padBegin, padEnd, out;
  };
  Dims3 to3d() const;
};

/// Options of computeWindow.
struct WindowOptions {
  bool ceilMode = false;     ///< pooling ceil_mode
  bool allowDilations = true;
  /// When true, a window that starts inside the end padding is dropped in
  /// ceil mode (pooling semantics).
  bool poolingCeilAdjust = true;
};

/// Given input spatial dims and kernel spatial dims, Execute: reads strides,
/// dilations, pads and auto_pad from the node and computes output dims,
/// Result: `w` is valid (positive sizes, windows that fit), or an error.
Status computeWindow(const KernelContext &ctx, const std::vector<int64_t> &inSpatial,
                     const std::vector<int64_t> &kernel, const WindowOptions &opts, Window &w);

} // namespace onnxslim::rt::nn

namespace onnxslim::rt::nn {

//===----------------------------------------------------------------------===//
// Batched matrix products (MatMul, MatMulInteger, QLinearMatMul)
//===----------------------------------------------------------------------===//

/// The shape bookkeeping of a numpy-style matmul: 1-D operands are promoted
/// (and the promoted dims dropped from the output), batch dims broadcast.
/// Matrix `b` of the batch reads A matrix aIndex[b] and B matrix bIndex[b].
struct MatMulPlan {
  int64_t M = 0, N = 0, K = 0;
  std::vector<int64_t> outDims;
  std::vector<int64_t> aIndex, bIndex;
  /// True when B is one matrix shared by every batch: A's matrices are then
  /// one (batch*M) x K matrix and the product is a single GEMM.
  bool foldBatch = false;
  int64_t batches() const { return static_cast<int64_t>(aIndex.size()); }
};

/// Given a product's constant B (input `input` of the node: op(B) is K x N,
/// B row-major with row stride ldb, transposed when transB) and the rows of
/// its A, Result: op(B) packed for the GEMM engine (Gemm.h, packBPanels),
/// kept in the node's state and packed again only when the input or the
/// engine changes; null when the product should take B as it is: B is
/// not a constant input, the node runs alone (no state), the product is
/// not a blocked one (sgemmBlocked), or this is the node's first run (a
/// model run once, as a check runs it, keeps no second copy of its
/// weights). Multiply with gemmPackedB(..., sliceColumns = N): the same
/// bits as sgemm on B.
const float *keptPackedB(KernelContext &ctx, size_t input, bool transA, bool transB, int64_t M, int64_t K,
                         int64_t N, const float *B, int64_t ldb);

/// Given the dims of A and B, Execute: checks K and the batch broadcast,
/// Result: `plan` (empty index lists when the output is empty).
Status planMatMul(const std::vector<int64_t> &a, const std::vector<int64_t> &b, MatMulPlan &plan);

} // namespace onnxslim::rt::nn

namespace onnxslim::rt::nn {

//===----------------------------------------------------------------------===//
// Convolution engine (runtime/kernels/Conv.cpp chooses among runtime/conv/;
// instantiated for float, double)
//===----------------------------------------------------------------------===//

/// Filters packed for a direct convolution product (runtime/conv/Common.h).
struct PackedFilters;

/// Given X [N, Cin, in...], W [M, Cin/group, kernel...], an optional bias [M]
/// and a validated window, Execute: Y [N, M, out...] = conv(X, W) + bias
/// (im2col + GEMM, a direct loop for depthwise, plain GEMM for 1x1),
/// Result: y (dense, any prior contents overwritten) holds the result. With
/// `addend` (the output's dims), every output then gets its element added
/// (a fused Add); with `clamp`, every output is then clamped as the Clip
/// kernel does; both block by block while it is still in cache where the
/// path allows (see KernelContext::OutputClamp and takeOutputAddend).
///
/// With `kept` (float only), filters packed for a direct product are kept
/// there and reused by later calls with the same w, geometry and engine:
/// the caller passes it only while w is a constant (the Conv kernel, from
/// its node state, when W is an initializer).
template <typename C>
void convForward(const C *x, const C *w, const C *bias, C *y, int64_t N, int64_t Cin, int64_t M,
                 int64_t group, const Window &win,
                 const KernelContext::OutputClamp *clamp = nullptr, const C *addend = nullptr,
                 PackedFilters *kept = nullptr);

/// A new, empty PackedFilters, owned by the caller (a node state).
std::shared_ptr<void> makePackedFilters();

/// Given X [N, Cin, in...], W [Cin, M/group, kernel...] and an optional bias
/// [M], and a window whose `in` is the *output* image and `out` the input
/// grid, Execute: Y = conv_transpose(X, W) + bias, Result: y overwritten.
template <typename C>
void convTransposeForward(const C *x, const C *w, const C *bias, C *y, int64_t N, int64_t Cin,
                          int64_t M, int64_t group, const Window &win);

} // namespace onnxslim::rt::nn
