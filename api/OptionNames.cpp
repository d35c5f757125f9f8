//===- api/OptionNames.cpp - An option's name on each surface -------------===//
#include "api/OptionNames.h"

namespace onnxslim {

namespace {

struct Spelling {
  const char *cpp, *commandLine, *python;
};

// One row per option a library message can name.
constexpr Spelling kSpellings[] = {
    {"inputShapes", "--input-shapes", "input_shapes"},
    {"inputs", "--inputs", "inputs"},
    {"outputs", "--outputs", "outputs"},
    {"dropOutputs", "--unused-output", "drop_outputs"},
    {"skipPasses", "--skip-passes", "skip_passes"},
    {"skipFusions", "--skip-fusion-patterns", "skip_fusion_patterns"},
    {"skipOptimizations", "--skip-optimizations", "skip_optimizations"},
    {"floatType", "--dtype", "dtype"},
    {"target", "--target", "target"},
    {"targetOpset", "--target-opset", "target_opset"},
    {"allowDecline", "--allow-decline", "allow_decline"},
    {"checkInputs", "--model-check-inputs", "model_check_inputs"},
    {"printIR", "--print-ir-before/--print-ir-after", "print_ir"},
    {"debugOnly", "--debug-only", "debug_only"},
    {"listPasses", "--list-passes", "onnxslim.list_passes()"},
};

} // namespace

std::string optionName(std::string_view cppName, Surface surface) {
  for (const Spelling &s : kSpellings)
    if (cppName == s.cpp) {
      if (surface == Surface::CommandLine)
        return s.commandLine;
      if (surface == Surface::Python)
        return s.python;
      return cppName == "listPasses" ? "listPasses()" : std::string(cppName);
    }
  return std::string(cppName);
}

std::string resolveOptionMarkers(std::string message, Surface surface) {
  static constexpr std::string_view kMarker = "{option:";
  for (size_t at = message.find(kMarker); at != std::string::npos; at = message.find(kMarker, at)) {
    size_t end = message.find('}', at);
    if (end == std::string::npos)
      break;
    std::string name = optionName(std::string_view(message).substr(at + kMarker.size(), end - at - kMarker.size()),
                                  surface);
    message.replace(at, end + 1 - at, name);
    at += name.size();
  }
  return message;
}

Status resolveOptionMarkers(Status status, Surface surface) {
  return status ? status : Status::error(resolveOptionMarkers(status.message(), surface));
}

} // namespace onnxslim
