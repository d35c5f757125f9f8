//===- transforms/PassRegistry.h - Passes by name --------------*- C++ -*-===//
//
// Maps each kebab-case pass name to a one-line description and a factory.
// Registration is explicit: registerCleanupPasses() and its siblings (see
// transforms/Passes.h) add the built-in passes to a registry the caller owns,
// so nothing depends on static initializers (which a static library drops)
// and tests can register test-only passes in their own registry.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Pass.h"

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace onnxslim {

struct PassInfo {
  std::string name;
  std::string description;
  std::function<std::unique_ptr<Pass>()> create;
  /// Test-only passes are listed by --list-passes only when enabled.
  bool testOnly = false;
};

class PassRegistry {
public:
  /// Given a pass description, Execute: registers it, Result: false (and no
  /// change) when the name is taken or is not kebab-case.
  bool add(PassInfo info);
  /// Registers a pass type whose name() and description() describe it.
  template <typename P> bool add(bool testOnly = false) {
    P probe;
    return add(PassInfo{std::string(probe.name()), std::string(probe.description()),
                        [] { return std::make_unique<P>(); }, testOnly});
  }
  /// The pass registered under `name`, or null.
  const PassInfo *lookup(std::string_view name) const;
  /// Every registered pass, sorted by name.
  std::vector<const PassInfo *> passes() const;

  /// A registry holding every built-in pass (not the test-only ones).
  static PassRegistry withBuiltinPasses();

private:
  std::vector<PassInfo> passes_;
};

/// Whether `name` is kebab-case: [a-z0-9]+ joined by single '-'.
bool isKebabCase(std::string_view name);

/// Given a registry, Execute: registers the test-only passes (testOnly):
/// deliberately wrong ones (test-negate-first-output, a miscompiling
/// pattern...) that show --verify-each, --model-check-each and the model
/// check's undoing of a faulty rewrite at work; never in a pipeline of
/// their own accord.
void registerTestPasses(PassRegistry &registry);

} // namespace onnxslim
