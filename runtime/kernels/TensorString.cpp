//===- runtime/kernels/TensorString.cpp - Text kernels --------------------===//
//
// Kernels over text: StringNormalizer (stop-word removal and case change on
// [C] or [1, C] string tensors; ASCII case mapping, the locale attribute is
// not interpreted) and TfIdfVectorizer (n-gram counts over int or string
// tokens with skips, in TF, IDF or TFIDF mode).
//
//===----------------------------------------------------------------------===//
#include "runtime/Interpreter.h"
#include "runtime/kernels/TensorHelpers.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

namespace onnxslim::rt {
namespace {

using namespace tops;

std::string asciiLower(std::string s) {
  for (char &c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
std::string asciiUpper(std::string s) {
  for (char &c : s)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

Status stringNormalizerKernel(KernelContext &ctx) {
  const Tensor *x;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, x));
  if (x->dtype() != DataType::String || !x->isConsistent())
    return ctx.error("input must be a string tensor");
  bool twoDim = x->rank() == 2;
  if (!(x->rank() == 1 || (twoDim && x->dims()[0] == 1)))
    return ctx.error("input must have shape [C] or [1, C], got " + dimsToString(x->dims()));
  std::string action = ctx.attrString("case_change_action", "NONE");
  if (action != "NONE" && action != "LOWER" && action != "UPPER")
    return ctx.error("unknown case_change_action '" + action + "'");
  bool caseSensitive = ctx.attrInt("is_case_sensitive", 0) != 0;
  std::set<std::string> stop;
  if (const Attribute *a = ctx.attr("stopwords"))
    for (const std::string &w : a->strings)
      stop.insert(caseSensitive ? w : asciiLower(w));
  std::vector<std::string> kept;
  for (const std::string &s : x->strings()) {
    if (stop.count(caseSensitive ? s : asciiLower(s)))
      continue;
    kept.push_back(action == "LOWER" ? asciiLower(s) : action == "UPPER" ? asciiUpper(s) : s);
  }
  if (kept.empty())
    kept.push_back("");
  auto n = static_cast<int64_t>(kept.size());
  std::vector<int64_t> dims = twoDim ? std::vector<int64_t>{1, n} : std::vector<int64_t>{n};
  ctx.setOutput(0, Tensor::fromStrings(dims, std::move(kept)));
  return Status::success();
}

/// One row's tokens, as ints or strings.
template <typename Tok>
void countNgrams(const std::vector<Tok> &row, const std::map<std::vector<Tok>, int64_t> &pool,
                 int64_t minN, int64_t maxN, int64_t maxSkip, std::vector<int64_t> &counts) {
  auto len = static_cast<int64_t>(row.size());
  std::vector<Tok> gram;
  for (int64_t n = std::max<int64_t>(minN, 1); n <= maxN; ++n) {
    int64_t skips = n == 1 ? 0 : maxSkip;
    for (int64_t d = 1; d <= skips + 1; ++d)
      for (int64_t i = 0; i + d * (n - 1) < len; ++i) {
        gram.clear();
        for (int64_t k = 0; k < n; ++k)
          gram.push_back(row[i + d * k]);
        auto it = pool.find(gram);
        if (it != pool.end())
          ++counts[it->second];
      }
  }
}

Status tfIdfKernel(KernelContext &ctx) {
  const Tensor *x;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, x));
  if (!x->isConsistent() || x->rank() < 1 || x->rank() > 2)
    return ctx.error("input must be a 1-D or 2-D tensor");
  int64_t minN = ctx.attrInt("min_gram_length", 0), maxN = ctx.attrInt("max_gram_length", 0);
  int64_t maxSkip = ctx.attrInt("max_skip_count", 0);
  std::string mode = ctx.attrString("mode", "");
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF")
    return ctx.error("unknown mode '" + mode + "'");
  if (minN < 1 || maxN < minN || maxSkip < 0)
    return ctx.error("invalid gram lengths or skip count");
  std::vector<int64_t> starts = ctx.attrInts("ngram_counts"), indexes = ctx.attrInts("ngram_indexes");
  std::vector<float> weights;
  if (const Attribute *w = ctx.attr("weights"))
    weights = w->floats;
  const Attribute *poolInts = ctx.attr("pool_int64s"), *poolStrings = ctx.attr("pool_strings");
  bool strings = poolStrings && !poolStrings->strings.empty();
  if (!strings && !poolInts)
    return ctx.error("needs pool_int64s or pool_strings");
  auto poolSize = static_cast<int64_t>(strings ? poolStrings->strings.size() : poolInts->ints.size());
  int64_t width = 0;
  for (int64_t ix : indexes) {
    if (ix < 0)
      return ctx.error("negative ngram index");
    width = std::max(width, ix + 1);
  }
  // Pool entries: section k (grams of k+1 tokens) spans [starts[k], starts[k+1]).
  std::map<std::vector<int64_t>, int64_t> intPool;
  std::map<std::vector<std::string>, int64_t> strPool;
  int64_t ordinal = 0;
  for (size_t k = 0; k < starts.size(); ++k) {
    int64_t n = static_cast<int64_t>(k) + 1;
    int64_t b = starts[k], e = k + 1 < starts.size() ? starts[k + 1] : poolSize;
    if (b < 0 || e > poolSize || b > e || (e - b) % n != 0)
      return ctx.error("ngram_counts do not fit the pool");
    for (int64_t p = b; p < e; p += n, ++ordinal) {
      if (ordinal >= static_cast<int64_t>(indexes.size()))
        return ctx.error("ngram_indexes has fewer entries than the pool has n-grams");
      if (strings)
        strPool.emplace(std::vector<std::string>(poolStrings->strings.begin() + p,
                                                 poolStrings->strings.begin() + p + n),
                        ordinal);
      else
        intPool.emplace(std::vector<int64_t>(poolInts->ints.begin() + p, poolInts->ints.begin() + p + n),
                        ordinal);
    }
  }
  int64_t rows = x->rank() == 2 ? x->dims()[0] : 1, cols = x->dims().back();
  std::vector<int64_t> values;
  if (strings) {
    if (x->dtype() != DataType::String)
      return ctx.error("a string pool needs a string input");
  } else {
    ONNXSLIM_RETURN_IF_ERROR(readInts(*x, values, "input"));
  }
  std::vector<int64_t> dims = x->rank() == 2 ? std::vector<int64_t>{rows, width}
                                             : std::vector<int64_t>{width};
  TensorBuilder b(DataType::Float, dims);
  float *out = b.dataAs<float>();
  std::vector<int64_t> counts(ordinal);
  for (int64_t r = 0; r < rows; ++r) {
    std::fill(counts.begin(), counts.end(), 0);
    if (strings) {
      std::vector<std::string> row(x->strings().begin() + r * cols, x->strings().begin() + (r + 1) * cols);
      countNgrams(row, strPool, minN, maxN, maxSkip, counts);
    } else {
      std::vector<int64_t> row(values.begin() + r * cols, values.begin() + (r + 1) * cols);
      countNgrams(row, intPool, minN, maxN, maxSkip, counts);
    }
    for (int64_t g = 0; g < ordinal; ++g) {
      if (!counts[g])
        continue;
      float w = g < static_cast<int64_t>(weights.size()) ? weights[g] : 1.0f;
      float v = mode == "TF" ? static_cast<float>(counts[g])
                : mode == "IDF" ? w
                                : static_cast<float>(counts[g]) * w;
      out[r * width + indexes[g]] = v;
    }
  }
  ctx.setOutput(0, b.finish());
  return Status::success();
}

} // namespace

void registerTensorStringKernels(OpRegistry &r) {
  r.add("StringNormalizer", 10, kLatestOpset, stringNormalizerKernel);
  r.add("TfIdfVectorizer", 9, kLatestOpset, tfIdfKernel);
}

} // namespace onnxslim::rt
