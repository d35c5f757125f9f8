//===- tools/ModelIO.cpp - Load and save models in either form ------------===//
#include "tools/ModelIO.h"

#include "backend/Writer.h"
#include "frontend/Loader.h"
#include "frontend/TextParser.h"
#include "ir/Printer.h"

#include <fstream>
#include <sstream>
#include <sys/stat.h>

namespace onnxslim::tools {

namespace {
bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
} // namespace

bool looksLikeText(const std::string &path) {
  if (endsWith(path, ".txt") || endsWith(path, ".onnxtxt"))
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

std::unique_ptr<Model> loadAny(const std::string &path, std::string &error) {
  if (!looksLikeText(path))
    return loadModel(path, error);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = path + ": cannot open";
    return nullptr;
  }
  std::stringstream buf;
  buf << in.rdbuf();
  return parseModelText(buf.str(), error, path);
}

bool saveAny(const Model &model, const std::string &path, const SaveSettings &settings,
             std::string &error) {
  if (settings.emit == Emit::Text) {
    PrintOptions opts;
    opts.printLargeConstants = settings.printLargeConstants;
    std::string text = toText(model, opts);
    return writeFileAtomically(
        path,
        [&](std::ostream &os, std::string &) {
          os << text;
          return static_cast<bool>(os);
        },
        error);
  }
  SaveOptions opts;
  opts.externalData = settings.externalData;
  return saveModel(model, path, error, opts);
}

long long fileSize(const std::string &path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return -1;
  return static_cast<long long>(st.st_size);
}

} // namespace onnxslim::tools
