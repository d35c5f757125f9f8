//===- transforms/Pass.cpp - Passes, their context and statistics ---------===//
#include "transforms/Pass.h"

#include "transforms/PatternMatch.h"

#include <iostream>

namespace onnxslim {

PassContext::PassContext() : debug_(&std::cerr) {}

bool PassContext::beginRewrite(std::string_view step, const Node &root, bool exact) {
  std::string key = rewriteKey(root);
  if (!rewrites_.allows(step, key))
    return false;
  rewrites_.record(RewriteRecord{currentPass_, std::string(step), nodeLabel(root), std::move(key), round_, exact});
  return true;
}

void PassContext::setCurrentPass(std::string_view pass, size_t entry) {
  currentPass_ = std::string(pass);
  currentEntry_ = entry;
  currentStats_ = SIZE_MAX;
  for (size_t i = 0; i < stats_.size(); ++i)
    if (stats_[i].pass == pass && stats_[i].entry == entry)
      currentStats_ = i;
}

uint64_t &PassContext::counter(std::string_view name, std::string_view description) {
  if (currentStats_ == SIZE_MAX) {
    stats_.push_back(PassStatistics{currentPass_, {}, currentEntry_});
    currentStats_ = stats_.size() - 1;
  }
  std::vector<StatisticCounter> &counters = stats_[currentStats_].counters;
  for (StatisticCounter &c : counters)
    if (c.name == name) {
      if (c.description.empty())
        c.description = std::string(description);
      return c.value;
    }
  counters.push_back(StatisticCounter{std::string(name), std::string(description), 0});
  return counters.back().value;
}

void PassContext::enableDebug(const std::vector<std::string> &names) {
  for (const std::string &n : names) {
    if (n == "all")
      debugAll_ = true;
    else if (!n.empty())
      debugNames_.insert(n);
  }
}

bool PassContext::isDebugEnabled(std::string_view name) const {
  if (debugAll_)
    return true;
  if (debugNames_.empty())
    return false;
  return debugNames_.count(currentPass_) != 0 || (!name.empty() && debugNames_.count(name) != 0);
}

void PassContext::warn(std::string_view message) {
  std::string line = currentPass_.empty() ? std::string(message) : "[" + currentPass_ + "] " + std::string(message);
  *debug_ << "onnxslim: warning: " << line << "\n";
  warnings_.push_back(std::move(line));
}

void PassContext::signalPassFailure(std::string message) {
  if (failure_.empty())
    failure_ = std::move(message);
}

Pass::~Pass() = default;

bool Pass::setOption(std::string_view key, std::string_view, std::string &error) {
  error = "pass '" + std::string(name()) + "' has no option '" + std::string(key) + "'";
  return false;
}

} // namespace onnxslim
