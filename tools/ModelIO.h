//===- tools/ModelIO.h - Load and save models in either form ---*- C++ -*-===//
//
// The command line reads binary ONNX or ONNX textual syntax (sniffed from the
// file) and writes either form, always atomically.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"

#include <memory>
#include <string>

namespace onnxslim::tools {

enum class Emit { Onnx, Text };

struct SaveSettings {
  Emit emit = Emit::Onnx;
  bool externalData = false;
  bool printLargeConstants = true; ///< text output: full constants, so it parses back
};

/// Whether `path` holds ONNX textual syntax rather than a protobuf (by
/// extension .txt/.onnxtxt, else by its first non-blank byte being '<').
bool looksLikeText(const std::string &path);

/// Given a path, Execute: loads binary or text, Result: the model or null with `error` set.
std::unique_ptr<Model> loadAny(const std::string &path, std::string &error);

/// Given a model and a path, Execute: writes it atomically in the chosen form.
bool saveAny(const Model &model, const std::string &path, const SaveSettings &settings,
             std::string &error);

/// File size in bytes, or -1.
long long fileSize(const std::string &path);

} // namespace onnxslim::tools
