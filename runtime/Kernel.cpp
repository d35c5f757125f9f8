//===- runtime/Kernel.cpp - Kernel interface and op registry --------------===//
#include "runtime/Kernel.h"

#include "runtime/BufferPool.h"

#include <algorithm>

namespace onnxslim::rt {

TensorBuilder::TensorBuilder(DataType dtype, std::vector<int64_t> dims, Fill fill) {
  numElements_ = 1;
  for (int64_t d : dims)
    numElements_ *= d < 0 ? 0 : d;
  tensor_ = std::make_shared<Tensor>(dtype, std::move(dims), Buffer());
  if (dtype == DataType::String) {
    strings_.resize(static_cast<size_t>(numElements_));
    return;
  }
  size_ = storageSize(dtype, numElements_);
  // 64-byte aligned, zeroed block; one extra cache line keeps SIMD tails in
  // bounds. Large blocks are recycled (runtime/BufferPool.h).
  size_t padded = (size_ + 127) & ~size_t{63};
  storage_ = allocateBlock(padded);
  size_t from = fill == Fill::Zeroed ? 0 : size_; // the padding is always zeroed
  std::memset(storage_.get() + from, 0, padded - from);
  data_ = storage_.get();
}

TensorPtr TensorBuilder::finish() {
  if (tensor_->dtype() == DataType::String)
    tensor_->setStrings(std::move(strings_));
  else
    tensor_->setBuffer(Buffer(data_, size_, storage_));
  TensorPtr out = std::move(tensor_);
  tensor_.reset();
  return out;
}

Status checkedNumElements(const std::vector<int64_t> &dims, DataType dtype, int64_t &count,
                          size_t limitBytes) {
  count = 1;
  for (int64_t d : dims) {
    if (d < 0)
      return Status::error("negative dimension " + std::to_string(d));
    if (d != 0 && count > INT64_MAX / d)
      return Status::error("tensor size overflows");
    count *= d;
  }
  unsigned bits = elementBits(dtype);
  size_t perElement = bits ? (bits + 7) / 8 : 8;
  if (count > 0 && static_cast<size_t>(count) > limitBytes / perElement)
    return Status::error("tensor of " + std::to_string(count) + " elements exceeds the size limit");
  return Status::success();
}

Status KernelContext::requireTensor(size_t i, const Tensor *&out) const {
  out = tensor(i);
  if (!out)
    return error("input " + std::to_string(i) + " is missing or not a tensor");
  return Status::success();
}

namespace {
std::string key(std::string_view domain, std::string_view op) {
  if (domain == "ai.onnx")
    domain = "";
  std::string k(domain);
  k += ':';
  k += op;
  return k;
}
} // namespace

void OpRegistry::add(KernelDef def) {
  auto &list = kernels_[key(def.domain, def.opType)];
  list.push_back(std::move(def));
  std::sort(list.begin(), list.end(),
            [](const KernelDef &a, const KernelDef &b) { return a.sinceVersion < b.sinceVersion; });
}

const KernelDef *OpRegistry::find(std::string_view domain, std::string_view opType,
                                  int64_t opsetVersion) const {
  auto it = kernels_.find(key(domain, opType));
  if (it == kernels_.end())
    return nullptr;
  for (const KernelDef &k : it->second)
    if (opsetVersion >= k.sinceVersion && opsetVersion <= k.untilVersion)
      return &k;
  return nullptr;
}

bool OpRegistry::knows(std::string_view domain, std::string_view opType) const {
  return kernels_.count(key(domain, opType)) != 0;
}

size_t OpRegistry::size() const {
  size_t n = 0;
  for (const auto &[k, list] : kernels_)
    n += list.size();
  return n;
}

const OpRegistry &OpRegistry::builtin() {
  static const OpRegistry registry = [] {
    OpRegistry r;
    registerBuiltinKernels(r);
    return r;
  }();
  return registry;
}

} // namespace onnxslim::rt
