//===- tests/roundtrip/RoundTripUtil.h - Shared round-trip checks -*- C++ -*-===//
//
// Load a model file, check the IR, serialize it again and compare the result
// with the original field by field (MessageDifferencer, which also sees the
// presence of proto2 optional fields).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "schema/onnx.pb.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace onnxslim::testing {

/// The whole file, or an empty string.
std::string readFile(const std::string &path);

/// Outcome of one round trip.
struct RoundTripResult {
  bool ok = false;
  bool byteIdentical = false;
  std::string message; ///< Why it failed (load error, verifier errors, differences).
};

/// Given a model path, Execute: loadModel, verify, serializeModel, compare.
RoundTripResult roundTripFile(const std::string &path);

/// Given two serialized models, Result: empty when equal, else a report of the differences.
std::string compareModels(const std::string &expected, const std::string &actual);

/// A fresh directory under the system temp directory, removed with its contents.
class TempDir {
public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
  const std::string &path() const { return path_; }
  /// path()/name
  std::string file(const std::string &name) const { return path_ + "/" + name; }
  /// Names of the entries in the directory, sorted.
  std::vector<std::string> list() const;

private:
  std::string path_;
};

/// Given bytes and a path, Execute: writes them (plain, non-atomic; for test inputs).
void writeFile(const std::string &path, const std::string &bytes);

/// model.onnx files under `dir`/<suite>/<case>/, sorted.
std::vector<std::string> conformanceModels(const std::string &dir);

} // namespace onnxslim::testing
