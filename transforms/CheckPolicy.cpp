//===- transforms/CheckPolicy.cpp - When and how the model is checked -----===//
//
// The decisions of CheckPolicy.h; the comparisons themselves are
// ModelCheck.cpp's runtime-backed checker.
//
//===----------------------------------------------------------------------===//
#include "transforms/CheckPolicy.h"

#include "transforms/PassManager.h"

#include <algorithm>

namespace onnxslim {

CheckPolicy::CheckPolicy(CheckRequest request) : request_(std::move(request)) {}

bool CheckPolicy::automatic() const { return !request_.pipelineGiven && request_.mode == CheckMode::Auto; }

bool CheckPolicy::required() const {
  return request_.mode == CheckMode::Require || request_.mode == CheckMode::EachPass;
}

ModelCheckOptions CheckPolicy::checkOptions() const {
  ModelCheckOptions check = request_.inputs;
  // Dims the caller did not size are tried at 32, 64, 512 and then 1 (the
  // leading, batch dim stays 1): a 1x1 image exercises little and a
  // pooling window may not fit it. The report says which were used.
  check.preferredDims = {32, 64, 512};
  check.samples = std::max(1, check.samples);
  return check;
}

void CheckPolicy::configure(PassManagerOptions &options) const {
  options.modelCheck = request_.mode == CheckMode::Require;
  options.modelCheckEach = request_.mode == CheckMode::EachPass;
}

void CheckPolicy::attach(PassManager &pm) const {
  if (automatic() || required())
    pm.setOutputChecker(createRuntimeOutputChecker(checkOptions()));
}

std::string CheckPolicy::decide(const Model &model, PassManager &pm) {
  if (!automatic())
    return "";
  // The default check runs the models when that is cheap and possible; a
  // model it cannot run is still proven when every rewrite is exact by
  // construction, and otherwise the report says why it was skipped.
  unrunnable_ = modelCheckUnsupportedReason(model, request_.budgetBytes);
  pm.setModelCheck(true, /*bestEffort=*/true);
  pm.setModelRunUnavailable(unrunnable_);
  return "";
}

bool CheckPolicy::comparesFloat16() const {
  return required() || (request_.mode == CheckMode::Auto && unrunnable_.empty());
}

std::unique_ptr<OutputChecker> CheckPolicy::conversionChecker() const {
  return required() ? createRuntimeOutputChecker(checkOptions()) : nullptr;
}

std::string CheckPolicy::skippedReason(const PassManagerReport &run) const {
  return automatic() ? run.modelCheckSkipped : "";
}

} // namespace onnxslim
