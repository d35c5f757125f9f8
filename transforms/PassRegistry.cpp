//===- transforms/PassRegistry.cpp - Passes by name -----------------------===//
#include "transforms/PassRegistry.h"

#include "transforms/Passes.h"

#include <algorithm>

namespace onnxslim {

bool isKebabCase(std::string_view name) {
  if (name.empty() || name.front() == '-' || name.back() == '-')
    return false;
  char prev = 0;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
    if (!ok || (c == '-' && prev == '-'))
      return false;
    prev = c;
  }
  return true;
}

bool PassRegistry::add(PassInfo info) {
  if (!isKebabCase(info.name) || lookup(info.name) || !info.create)
    return false;
  passes_.push_back(std::move(info));
  return true;
}

const PassInfo *PassRegistry::lookup(std::string_view name) const {
  for (const PassInfo &p : passes_)
    if (p.name == name)
      return &p;
  return nullptr;
}

std::vector<const PassInfo *> PassRegistry::passes() const {
  std::vector<const PassInfo *> out;
  for (const PassInfo &p : passes_)
    out.push_back(&p);
  std::sort(out.begin(), out.end(), [](const PassInfo *a, const PassInfo *b) { return a->name < b->name; });
  return out;
}

PassRegistry PassRegistry::withBuiltinPasses() {
  PassRegistry registry;
  registerCleanupPasses(registry);
  registerFoldingPasses(registry);
  registerFusionPasses(registry);
  return registry;
}

} // namespace onnxslim
