//===- tests/transforms/CompareOutputs.cpp - Compare two output folders ---===//
//
// A helper of the ONNX Runtime end-to-end test: compares the TensorProto
// files (*.pb) that tools/oracle/oracle.js wrote for two models run on the
// same inputs. Every file of A must exist in B with the same dtype and dims
// and every element within |a - b| <= atol + rtol * |b| (runtime/Compare).
// Prints the max absolute and relative difference per output; the exit
// status is 0 only when all match.
//
// With --noise DIR_N (the same model run by ONNX Runtime without its graph
// optimizer), an output's absolute tolerance is raised to twice ORT's own
// optimized-vs-unoptimized difference on it: deep convolution stacks reach
// 1e-5..1e-2 differences from summation order alone, which ORT shows against
// itself, and a result no further from ORT than ORT is from itself is judged
// equal. The noise and the tolerance used are printed.
//
// With --scaled-atol F, an output's absolute tolerance is raised to F times
// its largest |element| in A (float16 results are judged against the scale
// of the output, as their precision is relative to the values around).
//
//   onnxslim_compare_outputs DIR_A DIR_B [--rtol R] [--atol A] [--noise DIR_N]
//                            [--scaled-atol F]
//
//===----------------------------------------------------------------------===//
#include "frontend/Loader.h"
#include "runtime/Compare.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

using namespace onnxslim;
namespace fs = std::filesystem;

int main(int argc, char **argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s DIR_A DIR_B [--rtol R] [--atol A]\n", argv[0]);
    return 2;
  }
  double rtol = 1e-6, atol = 0;
  std::string noiseDir;
  double scaledAtol = 0;
  for (int i = 3; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--rtol") == 0)
      rtol = std::atof(argv[i + 1]);
    else if (std::strcmp(argv[i], "--atol") == 0)
      atol = std::atof(argv[i + 1]);
    else if (std::strcmp(argv[i], "--scaled-atol") == 0)
      scaledAtol = std::atof(argv[i + 1]);
    else if (std::strcmp(argv[i], "--noise") == 0)
      noiseDir = argv[i + 1];
  }
  std::vector<fs::path> files;
  for (const auto &e : fs::directory_iterator(argv[1]))
    if (e.is_regular_file() && e.path().extension() == ".pb")
      files.push_back(e.path());
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    std::fprintf(stderr, "error: no outputs in %s\n", argv[1]);
    return 1;
  }
  bool ok = true;
  for (const fs::path &a : files) {
    fs::path b = fs::path(argv[2]) / a.filename();
    std::string error;
    TensorPtr ta = loadTensorFile(a.string(), error);
    TensorPtr tb = ta ? loadTensorFile(b.string(), error) : nullptr;
    if (!ta || !tb) {
      std::printf("  %s: %s\n", a.filename().c_str(), error.c_str());
      ok = false;
      continue;
    }
    double atolUsed = atol;
    std::string noiseNote;
    if (!noiseDir.empty()) {
      TensorPtr tn = loadTensorFile((fs::path(noiseDir) / a.filename()).string(), error);
      if (!tn) {
        std::printf("  %s: %s\n", a.filename().c_str(), error.c_str());
        ok = false;
        continue;
      }
      rt::Comparison noise = rt::compareTensors(*tn, *ta, 0, 0);
      atolUsed = std::max(atol, 2 * noise.maxAbsDiff);
      char buf[96];
      std::snprintf(buf, sizeof buf, " (ORT opt vs no-opt: %.3g; atol used %.3g)", noise.maxAbsDiff, atolUsed);
      noiseNote = buf;
    }
    if (scaledAtol > 0) {
      // max |a|: A against zeros of its type.
      Tensor zeros(ta->dtype(), ta->dims(), Buffer::fromString(std::string(ta->byteSize(), '\0')));
      double scale = rt::compareTensors(*ta, zeros, 0, 0).maxAbsDiff;
      atolUsed = std::max(atolUsed, scaledAtol * scale);
      char buf[96];
      std::snprintf(buf, sizeof buf, " (max |expected| %.3g; atol used %.3g)", scale, atolUsed);
      noiseNote += buf;
    }
    rt::Comparison c = rt::compareTensors(*tb, *ta, rtol, atolUsed);
    std::printf("  %s: max abs diff %.3g, max rel diff %.3g%s%s%s\n", a.filename().c_str(), c.maxAbsDiff,
                c.maxRelDiff, noiseNote.c_str(), c.ok ? "" : " MISMATCH: ", c.ok ? "" : c.message.c_str());
    ok &= c.ok;
  }
  return ok ? 0 : 1;
}
