//===- runtime/kernels/NNCommon.cpp - Shared helpers of the NN kernels ----===//
//
// Sliding-window geometry shared by Conv, ConvTranspose and the pooling ops:
// reads strides, dilations, pads and auto_pad, checks them against the input,
// and computes the output dims (see NNCommon.h); keeps a product's constant
// weights packed for the GEMM engine in its node's state (keptPackedB).
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/NNCommon.h"

#include "runtime/Gemm.h"
#include "runtime/Simd.h"

namespace onnxslim::rt::nn {

bool attrIntsOrFloats(const KernelContext &ctx, std::string_view name, std::vector<int64_t> &out) {
  const Attribute *a = ctx.attr(name);
  if (!a)
    return false;
  if (a->kind == AttrKind::Ints) {
    out = a->ints;
    return true;
  }
  if (a->kind == AttrKind::Floats) {
    out.clear();
    for (float f : a->floats)
      out.push_back(static_cast<int64_t>(f));
    return true;
  }
  return false;
}

Window::Dims3 Window::to3d() const {
  Dims3 d;
  size_t lead = 3 - rank;
  for (size_t i = 0; i < 3; ++i) {
    bool real = i >= lead;
    size_t j = real ? i - lead : 0;
    d.in[i] = real ? in[j] : 1;
    d.kernel[i] = real ? kernel[j] : 1;
    d.strides[i] = real ? strides[j] : 1;
    d.dilations[i] = real ? dilations[j] : 1;
    d.padBegin[i] = real ? padBegin[j] : 0;
    d.padEnd[i] = real ? padEnd[j] : 0;
    d.out[i] = real ? out[j] : 1;
  }
  return d;
}

namespace {

std::string listString(const std::vector<int64_t> &v) { return shapeString(v); }

/// Reads an ints attribute of exactly `n` entries, or fills `dflt`.
Status readSpatialAttr(const KernelContext &ctx, const char *name, size_t n, int64_t dflt,
                       std::vector<int64_t> &out) {
  std::vector<int64_t> v;
  if (!attrIntsOrFloats(ctx, name, v) || v.empty()) {
    out.assign(n, dflt);
    return Status::success();
  }
  if (v.size() != n)
    return Status::error(std::string(name) + " has " + std::to_string(v.size()) +
                         " entries, expected " + std::to_string(n));
  out = std::move(v);
  return Status::success();
}

} // namespace

Status computeWindow(const KernelContext &ctx, const std::vector<int64_t> &inSpatial,
                     const std::vector<int64_t> &kernel, const WindowOptions &opts, Window &w) {
  size_t n = inSpatial.size();
  if (n == 0)
    return Status::error("expected at least one spatial dimension");
  if (n > 3)
    return Status::error("only 1-D, 2-D and 3-D windows are supported, got " +
                         std::to_string(n) + " spatial dimensions");
  if (kernel.size() != n)
    return Status::error("kernel has " + std::to_string(kernel.size()) +
                         " spatial dimensions, input has " + std::to_string(n));
  w.rank = n;
  w.in = inSpatial;
  w.kernel = kernel;
  ONNXSLIM_RETURN_IF_ERROR(readSpatialAttr(ctx, "strides", n, 1, w.strides));
  ONNXSLIM_RETURN_IF_ERROR(readSpatialAttr(ctx, "dilations", n, 1, w.dilations));
  if (!opts.allowDilations)
    w.dilations.assign(n, 1);
  std::vector<int64_t> pads;
  ONNXSLIM_RETURN_IF_ERROR(readSpatialAttr(ctx, "pads", 2 * n, 0, pads));
  for (size_t i = 0; i < n; ++i) {
    if (w.kernel[i] <= 0)
      return Status::error("kernel shape " + listString(w.kernel) + " must be positive");
    if (w.strides[i] <= 0)
      return Status::error("strides " + listString(w.strides) + " must be positive");
    if (w.dilations[i] <= 0)
      return Status::error("dilations " + listString(w.dilations) + " must be positive");
    if (pads[i] < 0 || pads[i + n] < 0)
      return Status::error("pads " + listString(pads) + " must not be negative");
    if (w.in[i] < 0 || w.in[i] > (int64_t{1} << 40))
      return Status::error("input dimension " + std::to_string(w.in[i]) + " is out of range");
    if (w.kernel[i] > (int64_t{1} << 32) || w.strides[i] > (int64_t{1} << 32) ||
        w.dilations[i] > (int64_t{1} << 32) || pads[i] > (int64_t{1} << 32) ||
        pads[i + n] > (int64_t{1} << 32))
      return Status::error("window attributes are out of range");
  }
  std::string autoPad = ctx.attrString("auto_pad", "NOTSET");
  w.padBegin.assign(n, 0);
  w.padEnd.assign(n, 0);
  w.out.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    int64_t effK = (w.kernel[i] - 1) * w.dilations[i] + 1;
    int64_t s = w.strides[i];
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      int64_t out = (w.in[i] + s - 1) / s;
      int64_t total = std::max<int64_t>(0, (out - 1) * s + effK - w.in[i]);
      if (autoPad == "SAME_UPPER") {
        w.padBegin[i] = total / 2;
        w.padEnd[i] = total - total / 2;
      } else {
        w.padBegin[i] = total - total / 2;
        w.padEnd[i] = total / 2;
      }
      w.out[i] = out;
    } else if (autoPad == "VALID" || autoPad == "NOTSET" || autoPad.empty()) {
      if (autoPad != "VALID") {
        w.padBegin[i] = pads[i];
        w.padEnd[i] = pads[i + n];
      }
      int64_t span = w.in[i] + w.padBegin[i] + w.padEnd[i] - effK;
      if (span < 0)
        return Status::error("kernel " + listString(w.kernel) + " (dilations " +
                             listString(w.dilations) + ") is larger than the padded input " +
                             listString(w.in));
      int64_t out = opts.ceilMode ? (span + s - 1) / s + 1 : span / s + 1;
      // In ceil mode the last window must start inside the input or the
      // leading padding (otherwise it would cover only end padding).
      if (opts.ceilMode && opts.poolingCeilAdjust && (out - 1) * s >= w.in[i] + w.padBegin[i])
        --out;
      w.out[i] = out;
    } else {
      return Status::error("unknown auto_pad value '" + autoPad + "'");
    }
  }
  int64_t count = 0;
  ONNXSLIM_RETURN_IF_ERROR(checkedNumElements(w.out, DataType::Float, count));
  ONNXSLIM_RETURN_IF_ERROR(checkedNumElements(w.in, DataType::Float, count));
  return Status::success();
}

} // namespace onnxslim::rt::nn

namespace onnxslim::rt::nn {

namespace {

/// A node's constant B packed for the GEMM engine (keptPackedB).
struct PackedWeights {
  const float *source = nullptr;
  int64_t K = 0, N = 0, ldb = 0;
  bool transB = false;
  std::string engine;
  simd::AlignedVector<float> data; ///< empty until the second run with these weights
};

} // namespace

const float *keptPackedB(KernelContext &ctx, size_t input, bool transA, bool transB, int64_t M, int64_t K,
                         int64_t N, const float *B, int64_t ldb) {
  std::shared_ptr<void> *state = ctx.nodeState();
  if (!state || !ctx.isConstantInput(input) || !sgemmBlocked(transA, M, N) || K <= 0)
    return nullptr;
  if (!*state)
    *state = std::make_shared<PackedWeights>();
  auto &kept = *static_cast<PackedWeights *>(state->get());
  const char *engine = gemmEngineName();
  if (kept.source == B && kept.K == K && kept.N == N && kept.ldb == ldb && kept.transB == transB &&
      kept.engine == engine && !kept.data.empty())
    return kept.data.data();
  // The first run with these weights takes B as it is.
  if (kept.source != B || kept.K != K || kept.N != N || kept.ldb != ldb || kept.transB != transB) {
    kept = PackedWeights{B, K, N, ldb, transB, engine, {}};
    return nullptr;
  }
  const int64_t width = gemmPanelWidth<float>();
  kept.data.assign(static_cast<size_t>((N + width - 1) / width * K * width), 0.0f);
  packBPanels(transB, K, N, B, ldb, kept.data.data());
  kept.engine = engine;
  return kept.data.data();
}

Status planMatMul(const std::vector<int64_t> &aDims, const std::vector<int64_t> &bDims,
                  MatMulPlan &plan) {
  if (aDims.empty() || bDims.empty())
    return Status::error("MatMul operands must have rank >= 1, got " + shapeString(aDims) +
                         " and " + shapeString(bDims));
  std::vector<int64_t> a = aDims, b = bDims;
  bool aVec = a.size() == 1, bVec = b.size() == 1;
  if (aVec)
    a.insert(a.begin(), 1);
  if (bVec)
    b.push_back(1);
  plan.M = a[a.size() - 2];
  plan.K = a.back();
  plan.N = b.back();
  if (b[b.size() - 2] != plan.K)
    return Status::error("inner dimensions do not match: " + shapeString(aDims) + " x " +
                         shapeString(bDims));
  std::vector<int64_t> aBatch(a.begin(), a.end() - 2), bBatch(b.begin(), b.end() - 2);
  std::vector<int64_t> batch;
  ONNXSLIM_RETURN_IF_ERROR(broadcastShapes({aBatch, bBatch}, batch));
  plan.outDims = batch;
  if (!aVec)
    plan.outDims.push_back(plan.M);
  if (!bVec)
    plan.outDims.push_back(plan.N);
  int64_t count = 0;
  ONNXSLIM_RETURN_IF_ERROR(checkedNumElements(plan.outDims, DataType::Float, count));
  plan.aIndex.clear();
  plan.bIndex.clear();
  plan.foldBatch = product(bBatch) == 1;
  if (count == 0)
    return Status::success();
  // Matrix strides of A and B over the broadcast batch dims (0 where broadcast).
  size_t r = batch.size();
  std::vector<int64_t> aStride(r, 0), bStride(r, 0);
  int64_t as = 1, bs = 1;
  for (size_t d = r; d-- > 0;) {
    size_t ao = d + aBatch.size(), bo = d + bBatch.size();
    if (ao >= r) {
      int64_t dim = aBatch[ao - r];
      aStride[d] = dim == 1 ? 0 : as;
      as *= dim;
    }
    if (bo >= r) {
      int64_t dim = bBatch[bo - r];
      bStride[d] = dim == 1 ? 0 : bs;
      bs *= dim;
    }
  }
  int64_t total = product(batch);
  plan.aIndex.resize(static_cast<size_t>(total));
  plan.bIndex.resize(static_cast<size_t>(total));
  std::vector<int64_t> idx(r, 0);
  int64_t ai = 0, bi = 0;
  for (int64_t t = 0; t < total; ++t) {
    plan.aIndex[static_cast<size_t>(t)] = ai;
    plan.bIndex[static_cast<size_t>(t)] = bi;
    for (size_t d = r; d-- > 0;) {
      if (++idx[d] < batch[d]) {
        ai += aStride[d];
        bi += bStride[d];
        break;
      }
      ai -= aStride[d] * (batch[d] - 1);
      bi -= bStride[d] * (batch[d] - 1);
      idx[d] = 0;
    }
  }
  return Status::success();
}

} // namespace onnxslim::rt::nn
