//===- api/ModelFile.cpp - Reading and writing models -----------------------===//
//
// load(), loadFromBytes(), save(), saveToBytes() and validateModel() of
// onnxslim/onnxslim.h: the form (binary ONNX or textual syntax) is chosen
// by ModelFormat, Auto sniffing a file by its extension and its first
// non-blank byte; binary reading maps the file (frontend/Loader.h), text
// goes through the text parser; writing is atomic (backend/Writer.h);
// validation is the IR verifier's and the ONNX spec's (ir/Validate.h).
//
//===----------------------------------------------------------------------===//
#include "onnxslim/onnxslim.h"

#include "backend/Writer.h"
#include "frontend/Loader.h"
#include "frontend/TextParser.h"
#include "ir/Printer.h"
#include "ir/Validate.h"
#include "ir/Verifier.h"

#include <cctype>
#include <fstream>
#include <sstream>

namespace onnxslim {

std::string_view version() { return ONNXSLIM_VERSION; }

SupportedVersions supportedVersions() { return {kNewestIrVersion, kNewestDefaultOpset}; }

namespace {

bool endsWith(const std::string &s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool hasTextExtension(const std::string &path) { return endsWith(path, ".txt") || endsWith(path, ".onnxtxt"); }

/// Whether `bytes` start (after blanks) with '<', as every text model does
/// and no ModelProto can (its first field tag is never '<').
bool startsLikeText(std::string_view bytes) {
  for (char c : bytes)
    if (!std::isspace(static_cast<unsigned char>(c)))
      return c == '<';
  return false;
}

bool fileLooksLikeText(const std::string &path) {
  if (hasTextExtension(path))
    return true;
  if (endsWith(path, ".onnx"))
    return false;
  std::ifstream in(path, std::ios::binary);
  char c;
  while (in.get(c))
    if (!std::isspace(static_cast<unsigned char>(c)))
      return c == '<';
  return false;
}

/// The read model, or (with options.validate) the first reason it is invalid.
Result<std::unique_ptr<Model>> finish(std::unique_ptr<Model> model, const std::string &name,
                                      const std::string &error, const ReadOptions &options) {
  if (!model)
    return Status::error(error);
  if (options.validate) {
    std::vector<std::string> broken = verify(*model, 1);
    if (!broken.empty())
      return Status::error(name + ": invalid model: " + broken.front());
    ValidateOptions vo;
    vo.file = name;
    vo.maxDiagnostics = 1;
    std::vector<std::string> problems = validate(*model, vo);
    if (!problems.empty())
      return Status::error(problems.front());
  }
  return model;
}

} // namespace

Result<std::unique_ptr<Model>> load(const std::string &path, const ReadOptions &options) {
  std::string error;
  LoadOptions lo;
  lo.loadExternalData = options.loadExternalData;
  bool text = options.format == ModelFormat::Text || (options.format == ModelFormat::Auto && fileLooksLikeText(path));
  if (!text)
    return finish(loadModel(path, error, lo), path, error, options);
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Status::error(path + ": cannot open");
  std::stringstream buf;
  buf << in.rdbuf();
  return finish(parseModelText(buf.str(), error, path), path, error, options);
}

Result<std::unique_ptr<Model>> loadFromBytes(std::string bytes, const ReadOptions &options) {
  std::string error;
  bool text = options.format == ModelFormat::Text || (options.format == ModelFormat::Auto && startsLikeText(bytes));
  if (text)
    return finish(parseModelText(bytes, error, options.name), options.name, error, options);
  LoadOptions lo;
  lo.loadExternalData = options.loadExternalData;
  return finish(loadModelFromString(std::move(bytes), options.name, options.baseDir, error, lo), options.name,
                error, options);
}

namespace {

Status validateForWriting(const Model &model, const std::string &name) {
  ValidateOptions vo;
  vo.file = name;
  vo.forWriting = true;
  vo.maxDiagnostics = 1;
  std::vector<std::string> problems = validate(model, vo);
  if (!problems.empty())
    return Status::error(problems.front() + " [invalid model: nothing written]");
  return {};
}

std::string textOf(const Model &model, const WriteOptions &options) {
  PrintOptions po;
  po.printLargeConstants = options.printLargeConstants;
  return toText(model, po);
}

} // namespace

Status save(const Model &model, const std::string &path, const WriteOptions &options) {
  if (options.validate)
    if (Status s = validateForWriting(model, path); !s)
      return s;
  std::string error;
  bool text = options.format == ModelFormat::Text || (options.format == ModelFormat::Auto && hasTextExtension(path));
  if (text) {
    if (options.externalData)
      return Status::error(path + ": external data is for binary ONNX; the textual syntax holds every tensor");
    std::string body = textOf(model, options);
    bool ok = writeFileAtomically(
        path,
        [&](std::ostream &os, std::string &) {
          os << body;
          return static_cast<bool>(os);
        },
        error);
    return ok ? Status() : Status::error(error);
  }
  SaveOptions so;
  so.externalData = options.externalData;
  so.externalThreshold = options.externalDataThreshold;
  so.externalDataFile = options.externalDataFile;
  so.onNote = options.onNote;
  return saveModel(model, path, error, so) ? Status() : Status::error(error);
}

Result<std::string> saveToBytes(const Model &model, const WriteOptions &options) {
  if (options.validate)
    if (Status s = validateForWriting(model, "<bytes>"); !s)
      return s;
  if (options.externalData)
    return Status::error("<bytes>: external data needs a file (save() with a path, binary)");
  if (options.format == ModelFormat::Text)
    return textOf(model, options);
  std::string error;
  std::string bytes = serializeModel(model, error);
  if (!error.empty())
    return Status::error(error);
  return bytes;
}

std::vector<std::string> validateModel(const Model &model, const std::string &file) {
  std::vector<std::string> problems;
  for (const std::string &p : verify(model, 20))
    problems.push_back(file + ": IR invariant broken: " + p);
  ValidateOptions vo;
  vo.file = file;
  for (std::string &p : validate(model, vo))
    problems.push_back(std::move(p));
  return problems;
}

} // namespace onnxslim
