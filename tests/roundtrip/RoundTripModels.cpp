//===- tests/roundtrip/RoundTripModels.cpp - The real models ---------------===//
//
// The real models of tests/models/models.json (fetched by
// scripts/fetch-models.sh) must load, verify, and come back equal field by
// field, both serialized in memory and saved to a file; their initializers
// must be views into the mapped file, not copies.
//
//===----------------------------------------------------------------------===//
#include "tests/roundtrip/RoundTripUtil.h"

#include "backend/Writer.h"
#include "frontend/Loader.h"

#include <filesystem>
#include <functional>
#include <iostream>
#include <regex>

using namespace onnxslim;
using namespace onnxslim::testing;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> modelFiles() {
  std::string list = readFile(std::string(ONNXSLIM_SOURCE_DIR) + "/tests/models/models.json");
  std::vector<std::string> files;
  std::regex re("\"file\"\\s*:\\s*\"([^\"]+)\"");
  for (auto it = std::sregex_iterator(list.begin(), list.end(), re); it != std::sregex_iterator(); ++it)
    files.push_back((*it)[1]);
  return files;
}

} // namespace

TEST(RoundTripModels, EveryModel) {
  auto files = modelFiles();
  ASSERT_FALSE(files.empty()) << "tests/models/models.json lists no model";
  fs::path cache = ONNXSLIM_MODEL_CACHE;
  fs::path tmp = fs::temp_directory_path() / ("onnxslim-roundtrip-" + std::to_string(::getpid()));
  fs::create_directories(tmp);
  size_t ok = 0, identical = 0;
  for (const std::string &file : files) {
    std::string path = (cache / file).string();
    if (!fs::exists(path)) {
      ADD_FAILURE() << path << " is missing: run scripts/fetch-models.sh";
      continue;
    }
    SCOPED_TRACE(path);
    RoundTripResult r = roundTripFile(path);
    EXPECT_TRUE(r.ok) << r.message;
    identical += r.byteIdentical;

    // Through a file, and check the weights are views into the mapping.
    std::string error;
    auto model = loadModel(path, error);
    ASSERT_TRUE(model) << error;
    // Every raw tensor, initializer or Constant, in any subgraph, is a view.
    size_t rawTensors = 0, copied = 0;
    auto check = [&](const TensorPtr &t) {
      if (!t || t->encoding != TensorEncoding::Raw || t->byteSize() == 0)
        return;
      ++rawTensors;
      copied += !t->buffer().isMapped();
    };
    std::function<void(const Graph &)> walkGraph = [&](const Graph &g) {
      for (const Value *v : g.initializers())
        check(v->initializer());
      for (const Node *n : g.nodes())
        for (const Attribute &a : n->attributes()) {
          check(a.t);
          for (const TensorPtr &t : a.tensors)
            check(t);
          for (const Graph *sg : a.subgraphs())
            walkGraph(*sg);
        }
    };
    walkGraph(*model->graph());
    EXPECT_GT(rawTensors, 0u);
    EXPECT_EQ(copied, 0u) << copied << " of " << rawTensors << " raw tensors were copied";
    std::string out = (tmp / file).string();
    ASSERT_TRUE(saveModel(*model, out, error)) << error;
    std::string diff = compareModels(readFile(path), readFile(out));
    EXPECT_TRUE(diff.empty()) << diff;
    if (r.ok && diff.empty())
      ++ok;
  }
  fs::remove_all(tmp);
  std::cout << ok << " real models round-tripped (of " << files.size() << "; " << identical
            << " byte-identical)\n";
  EXPECT_EQ(ok, files.size());
}
