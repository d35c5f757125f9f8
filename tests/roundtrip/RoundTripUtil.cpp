//===- tests/roundtrip/RoundTripUtil.cpp - Shared round-trip checks -------===//
#include "tests/roundtrip/RoundTripUtil.h"

#include "backend/Writer.h"
#include "frontend/Loader.h"
#include "ir/Verifier.h"

#include <google/protobuf/util/message_differencer.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <stdlib.h>

namespace onnxslim::testing {

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TempDir::TempDir() {
  std::string templ = (std::filesystem::temp_directory_path() / "onnxslim-test-XXXXXX").string();
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()))
    path_ = buf.data();
}

TempDir::~TempDir() {
  std::error_code ec;
  if (!path_.empty())
    std::filesystem::remove_all(path_, ec);
}

std::vector<std::string> TempDir::list() const {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto &e : std::filesystem::directory_iterator(path_, ec))
    out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

void writeFile(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string compareModels(const std::string &expected, const std::string &actual) {
  onnx::ModelProto a, b;
  if (!a.ParseFromString(expected))
    return "the original does not parse as a ModelProto";
  if (!b.ParseFromString(actual))
    return "the output does not parse as a ModelProto";
  google::protobuf::util::MessageDifferencer diff;
  std::string report;
  diff.ReportDifferencesToString(&report);
  if (diff.Compare(a, b))
    return {};
  if (report.size() > 4000)
    report = report.substr(0, 4000) + "...";
  return report.empty() ? "messages differ" : report;
}

RoundTripResult roundTripFile(const std::string &path) {
  RoundTripResult r;
  std::string error;
  auto model = loadModel(path, error);
  if (!model) {
    r.message = "load failed: " + error;
    return r;
  }
  auto problems = verify(*model);
  if (!problems.empty()) {
    r.message = "verifier: " + problems.front();
    return r;
  }
  std::string out = serializeModel(*model, error);
  if (out.empty()) {
    r.message = "serialize failed: " + error;
    return r;
  }
  std::string original = readFile(path);
  r.message = compareModels(original, out);
  r.ok = r.message.empty();
  r.byteIdentical = original == out;
  return r;
}

std::vector<std::string> conformanceModels(const std::string &dir) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  for (const char *suite : {"node", "pytorch-converted", "pytorch-operator", "simple"}) {
    fs::path root = fs::path(dir) / suite;
    std::error_code ec;
    if (!fs::is_directory(root, ec))
      continue;
    for (const auto &entry : fs::directory_iterator(root, ec)) {
      fs::path model = entry.path() / "model.onnx";
      if (fs::is_regular_file(model, ec))
        out.push_back(model.string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

} // namespace onnxslim::testing
