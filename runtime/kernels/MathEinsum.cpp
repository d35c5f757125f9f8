//===- runtime/kernels/MathEinsum.cpp - Einsum ----------------------------===//
//
// Einsum with explicit ("ij,jk->ik") or implicit ("ij,jk") output, ellipsis
// ("...ij,...jk->...ik", broadcast numpy-style), repeated labels within an
// operand (diagonals: "ii->i", "bii->bi") and size-1 broadcasting.
//
// Two float/double operands without diagonals or broadcasting are lowered
// to batched GEMM: labels are classified as batch (in both inputs and the
// output), M (first input and output), N (second input and output) and K
// (both inputs, summed); the inputs are permuted to [batch, M, K] and
// [batch, K, N], multiplied with the blocked GEMM engine, and the result is
// permuted to the output order. Everything else runs a general loop over the
// output labels and the summed labels, with per-operand strides (a repeated
// label's stride is the sum of its dims' strides).
//
//===----------------------------------------------------------------------===//
#include "runtime/Gemm.h"
#include "runtime/kernels/Dispatch.h"

#include <cctype>

namespace onnxslim::rt {
namespace {

constexpr int kLetters = 52;
constexpr int kEllipsis = -1;

int labelId(char c) { return std::isupper(static_cast<unsigned char>(c)) ? c - 'A' : 26 + (c - 'a'); }

/// Splits one subscript term into label ids (kEllipsis for "...").
Status parseTerm(std::string_view term, std::vector<int> &labels) {
  labels.clear();
  bool seenEllipsis = false;
  for (size_t i = 0; i < term.size(); ++i) {
    char c = term[i];
    if (std::isalpha(static_cast<unsigned char>(c))) {
      labels.push_back(labelId(c));
    } else if (c == '.' && term.substr(i, 3) == "..." && !seenEllipsis) {
      labels.push_back(kEllipsis);
      seenEllipsis = true;
      i += 2;
    } else {
      return Status::error("invalid einsum subscript '" + std::string(term) + "'");
    }
  }
  return Status::success();
}

struct EinsumPlan {
  std::vector<int64_t> sizes;                 ///< per label id
  std::vector<std::vector<int64_t>> strides;  ///< [operand][label]
  std::vector<std::vector<int>> opLabels;     ///< [operand] label per dim
  std::vector<int> outLabels, sumLabels;
  std::vector<int64_t> outDims;
  bool diagonal = false;  ///< an operand repeats a label
  bool broadcast = false; ///< some dim of size 1 broadcasts
};

Status planEinsum(const std::string &equation, const std::vector<const Tensor *> &ins,
                  EinsumPlan &p) {
  std::string eq;
  for (char c : equation)
    if (!std::isspace(static_cast<unsigned char>(c)))
      eq += c;
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  size_t start = 0;
  for (;;) {
    size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  if (terms.size() != ins.size())
    return Status::error("equation '" + equation + "' has " + std::to_string(terms.size()) +
                         " operands but the node has " + std::to_string(ins.size()) + " inputs");
  size_t n = ins.size();
  // Expand ellipses: operand dims get label ids, ellipsis dims kLetters + k.
  std::vector<std::vector<int>> raw(n);
  int64_t ell = 0;
  for (size_t i = 0; i < n; ++i) {
    ONNXSLIM_RETURN_IF_ERROR(parseTerm(terms[i], raw[i]));
    int64_t letters = 0;
    bool hasEll = false;
    for (int l : raw[i]) {
      if (l == kEllipsis)
        hasEll = true;
      else
        ++letters;
    }
    int64_t extra = ins[i]->rank() - letters;
    if (extra < 0 || (!hasEll && extra != 0))
      return Status::error("operand " + std::to_string(i) + " of rank " +
                           std::to_string(ins[i]->rank()) + " does not match subscript '" +
                           terms[i] + "'");
    ell = std::max(ell, extra);
  }
  int numLabels = kLetters + static_cast<int>(ell);
  p.sizes.assign(static_cast<size_t>(numLabels), -1);
  p.opLabels.assign(n, {});
  std::vector<int> occurrences(static_cast<size_t>(numLabels), 0);
  for (size_t i = 0; i < n; ++i) {
    int64_t letters = 0;
    for (int l : raw[i])
      letters += l != kEllipsis;
    int64_t extra = ins[i]->rank() - letters;
    std::vector<int> seen;
    for (int l : raw[i]) {
      if (l == kEllipsis) {
        for (int64_t k = 0; k < extra; ++k)
          p.opLabels[i].push_back(kLetters + static_cast<int>(ell - extra + k));
      } else {
        p.opLabels[i].push_back(l);
      }
    }
    for (size_t d = 0; d < p.opLabels[i].size(); ++d) {
      int l = p.opLabels[i][d];
      if (std::find(seen.begin(), seen.end(), l) != seen.end())
        p.diagonal = true;
      else
        seen.push_back(l);
      ++occurrences[static_cast<size_t>(l)];
      int64_t s = ins[i]->dims()[d];
      int64_t &size = p.sizes[static_cast<size_t>(l)];
      if (size == -1 || size == 1)
        size = s;
      else if (s != size && s != 1)
        return Status::error("einsum dimension mismatch for a label: " + std::to_string(size) +
                             " vs " + std::to_string(s));
    }
  }
  // Output labels.
  p.outLabels.clear();
  if (arrow != std::string::npos) {
    std::vector<int> outRaw;
    ONNXSLIM_RETURN_IF_ERROR(parseTerm(std::string_view(eq).substr(arrow + 2), outRaw));
    for (int l : outRaw) {
      if (l == kEllipsis) {
        for (int64_t k = 0; k < ell; ++k)
          p.outLabels.push_back(kLetters + static_cast<int>(k));
        continue;
      }
      if (p.sizes[static_cast<size_t>(l)] < 0)
        return Status::error("output label of '" + equation + "' does not appear in the inputs");
      if (std::find(p.outLabels.begin(), p.outLabels.end(), l) != p.outLabels.end())
        return Status::error("output label repeated in '" + equation + "'");
      p.outLabels.push_back(l);
    }
  } else {
    for (int64_t k = 0; k < ell; ++k)
      p.outLabels.push_back(kLetters + static_cast<int>(k));
    for (int l = 0; l < kLetters; ++l)
      if (occurrences[static_cast<size_t>(l)] == 1)
        p.outLabels.push_back(l);
  }
  p.sumLabels.clear();
  for (int l = 0; l < numLabels; ++l)
    if (p.sizes[static_cast<size_t>(l)] >= 0 &&
        std::find(p.outLabels.begin(), p.outLabels.end(), l) == p.outLabels.end())
      p.sumLabels.push_back(l);
  p.outDims.clear();
  for (int l : p.outLabels)
    p.outDims.push_back(p.sizes[static_cast<size_t>(l)]);
  // Strides per operand and label.
  p.strides.assign(n, std::vector<int64_t>(static_cast<size_t>(numLabels), 0));
  for (size_t i = 0; i < n; ++i) {
    int64_t stride = 1;
    for (size_t d = p.opLabels[i].size(); d-- > 0;) {
      int l = p.opLabels[i][d];
      int64_t s = ins[i]->dims()[d];
      if (s == p.sizes[static_cast<size_t>(l)])
        p.strides[i][static_cast<size_t>(l)] += stride;
      else
        p.broadcast = true;
      stride *= s;
    }
  }
  return Status::success();
}

/// Copies src into dst laid out in `order` (row-major over those labels).
template <typename C>
void permuteCopy(const C *src, const std::vector<int64_t> &strides, const std::vector<int> &order,
                 const std::vector<int64_t> &sizes, C *dst) {
  size_t r = order.size();
  int64_t total = 1;
  for (int l : order)
    total *= sizes[static_cast<size_t>(l)];
  if (total == 0)
    return;
  std::vector<int64_t> idx(r, 0);
  int64_t off = 0;
  for (int64_t i = 0; i < total; ++i) {
    dst[i] = src[off];
    for (size_t d = r; d-- > 0;) {
      int l = order[d];
      int64_t st = strides[static_cast<size_t>(l)];
      if (++idx[d] < sizes[static_cast<size_t>(l)]) {
        off += st;
        break;
      }
      off -= st * (sizes[static_cast<size_t>(l)] - 1);
      idx[d] = 0;
    }
  }
}

/// Two float/double operands as batched GEMM; false when not applicable.
template <typename C>
bool einsumGemm(const EinsumPlan &p, const C *a, const C *b, C *out) {
  if (p.opLabels.size() != 2 || p.diagonal || p.broadcast)
    return false;
  std::vector<int> batch, ms, ns, ks;
  auto in = [](const std::vector<int> &v, int l) {
    return std::find(v.begin(), v.end(), l) != v.end();
  };
  for (size_t l = 0; l < p.sizes.size(); ++l) {
    if (p.sizes[l] < 0)
      continue;
    int id = static_cast<int>(l);
    bool inA = in(p.opLabels[0], id), inB = in(p.opLabels[1], id), inO = in(p.outLabels, id);
    if (inA && inB && inO)
      batch.push_back(id);
    else if (inA && inO)
      ms.push_back(id);
    else if (inB && inO)
      ns.push_back(id);
    else if (inA && inB)
      ks.push_back(id);
    else
      return false; // summed over one operand only
  }
  auto prod = [&](const std::vector<int> &v) {
    int64_t r = 1;
    for (int l : v)
      r *= p.sizes[static_cast<size_t>(l)];
    return r;
  };
  int64_t B = prod(batch), M = prod(ms), N = prod(ns), K = prod(ks);
  std::vector<int> orderA = batch, orderB = batch, orderC = batch;
  orderA.insert(orderA.end(), ms.begin(), ms.end());
  orderA.insert(orderA.end(), ks.begin(), ks.end());
  orderB.insert(orderB.end(), ks.begin(), ks.end());
  orderB.insert(orderB.end(), ns.begin(), ns.end());
  orderC.insert(orderC.end(), ms.begin(), ms.end());
  orderC.insert(orderC.end(), ns.begin(), ns.end());
  std::vector<C> pa(static_cast<size_t>(B * M * K)), pb(static_cast<size_t>(B * K * N)),
      pc(static_cast<size_t>(B * M * N));
  permuteCopy(a, p.strides[0], orderA, p.sizes, pa.data());
  permuteCopy(b, p.strides[1], orderB, p.sizes, pb.data());
  for (int64_t i = 0; i < B; ++i) {
    if (K == 0)
      std::fill(pc.begin() + i * M * N, pc.begin() + (i + 1) * M * N, C(0));
    else if (M > 0 && N > 0)
      gemm(false, false, M, N, K, C(1), pa.data() + i * M * K, K, pb.data() + i * K * N, N, C(0),
           pc.data() + i * M * N, N);
  }
  // pc is laid out in orderC; gather it into the output order.
  std::vector<int64_t> cStrides(p.sizes.size(), 0);
  int64_t stride = 1;
  for (size_t d = orderC.size(); d-- > 0;) {
    cStrides[static_cast<size_t>(orderC[d])] = stride;
    stride *= p.sizes[static_cast<size_t>(orderC[d])];
  }
  permuteCopy(static_cast<const C *>(pc.data()), cStrides, p.outLabels, p.sizes, out);
  return true;
}

/// The general loop: out[o] = sum over summed labels of the operands' product.
template <typename C, typename A>
void einsumGeneral(const EinsumPlan &p, const std::vector<const C *> &ops, C *out) {
  size_t n = ops.size();
  int64_t outTotal = 1, sumTotal = 1;
  for (int l : p.outLabels)
    outTotal *= p.sizes[static_cast<size_t>(l)];
  for (int l : p.sumLabels)
    sumTotal *= p.sizes[static_cast<size_t>(l)];
  if (outTotal == 0)
    return;
  auto stride = [&](size_t op, int l) { return p.strides[op][static_cast<size_t>(l)]; };
  std::vector<int64_t> oidx(p.outLabels.size(), 0), base(n, 0), sidx(p.sumLabels.size(), 0),
      off(n, 0);
  for (int64_t o = 0; o < outTotal; ++o) {
    A acc = A(0);
    if (sumTotal > 0) {
      std::fill(sidx.begin(), sidx.end(), 0);
      off = base;
      for (int64_t s = 0; s < sumTotal; ++s) {
        A term = A(1);
        for (size_t i = 0; i < n; ++i)
          term = wrapMul(term, static_cast<A>(ops[i][off[i]]));
        acc = wrapAdd(acc, term);
        for (size_t d = sidx.size(); d-- > 0;) {
          int l = p.sumLabels[d];
          if (++sidx[d] < p.sizes[static_cast<size_t>(l)]) {
            for (size_t i = 0; i < n; ++i)
              off[i] += stride(i, l);
            break;
          }
          for (size_t i = 0; i < n; ++i)
            off[i] -= stride(i, l) * (p.sizes[static_cast<size_t>(l)] - 1);
          sidx[d] = 0;
        }
      }
    }
    out[o] = static_cast<C>(acc);
    for (size_t d = oidx.size(); d-- > 0;) {
      int l = p.outLabels[d];
      if (++oidx[d] < p.sizes[static_cast<size_t>(l)]) {
        for (size_t i = 0; i < n; ++i)
          base[i] += stride(i, l);
        break;
      }
      for (size_t i = 0; i < n; ++i)
        base[i] -= stride(i, l) * (p.sizes[static_cast<size_t>(l)] - 1);
      oidx[d] = 0;
    }
  }
}

Status einsumKernel(KernelContext &ctx) {
  size_t n = ctx.numInputs();
  if (n == 0)
    return ctx.error("expects at least one input");
  std::vector<const Tensor *> ins(n);
  for (size_t i = 0; i < n; ++i) {
    ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(i, ins[i]));
    if (ins[i]->dtype() != ins[0]->dtype())
      return ctx.error("input element types differ");
  }
  const Attribute *eq = ctx.attr("equation");
  if (!eq || eq->kind != AttrKind::String)
    return ctx.error("missing attribute 'equation'");
  EinsumPlan p;
  ONNXSLIM_RETURN_IF_ERROR(planEinsum(eq->s, ins, p));
  int64_t work = 1;
  for (int64_t s : p.sizes)
    if (s > 0)
      work = work > (int64_t{1} << 40) / s ? (int64_t{1} << 40) : work * s;
  TensorPtr out;
  ONNXSLIM_RETURN_IF_ERROR(dispatchType<NumericTypes>(ins[0]->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    std::vector<ComputeView<T>> views(n);
    std::vector<const C *> ptrs(n);
    for (size_t i = 0; i < n; ++i) {
      ONNXSLIM_RETURN_IF_ERROR(viewCompute(*ins[i], views[i]));
      ptrs[i] = views[i].data();
    }
    ComputeOutput<T> o;
    ONNXSLIM_RETURN_IF_ERROR(o.init(p.outDims));
    bool done = false;
    if constexpr (std::is_floating_point_v<C>)
      done = n == 2 && einsumGemm(p, ptrs[0], ptrs[1], o.data());
    if (!done) {
      if (work >= (int64_t{1} << 40))
        return Status::error("einsum too large for the general loop");
      using A = std::conditional_t<std::is_floating_point_v<C>, double, C>;
      einsumGeneral<C, A>(p, ptrs, o.data());
    }
    out = o.finish();
    return Status::success();
  }));
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

} // namespace

void registerMathEinsumKernels(OpRegistry &r) { r.add("Einsum", 12, kLatestOpset, einsumKernel); }

} // namespace onnxslim::rt
