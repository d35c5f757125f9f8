//===- tools/RunCommands.h - `onnxslim run` and `onnxslim verify` -*- C++ -*-===//
//
// Two subcommands built on the library's interpreter (run, runProfiled,
// verify in onnxslim/onnxslim.h):
//
//   onnxslim run MODEL [--input NAME=FILE.pb ...] [--seed N] [--dim SYM=N]
//                      [--input-specs FILE[:NAME]] [--output-dir DIR] [--bench N]
//                      [--no-input-shape-check]
//     runs MODEL on the given inputs (TensorProto, SequenceProto or
//     OptionalProto files, read as the kind each input declares; FILE.pb
//     alone names its input by its own name field; others: seeded random
//     values that respect each input's dtype and shape) and writes every
//     output the same way, as DIR/<output name>.pb with the output's name
//     in the file. File names (valueFileNames(), as tools/oracle/oracle.js
//     names its files): bytes outside [A-Za-z0-9._-] become '_'; names
//     that would share a file so get their hash before ".pb", except one
//     that needed no change (a_b, a/b, a:b -> a_b.pb, a_b.3a8e75c1.pb,
//     a_b.08bd8540.pb). A bad input file is one error
//     line, exit status 1, and nothing is written. --bench N then runs it
//     N more times and prints "latency_ms: <median>" (one thread).
//
//   onnxslim verify A B [--samples N] [--seed N] [--dim SYM=N] [--rtol R]
//                       [--atol A] [--input-specs FILE[:NAME]]
//     runs both models on the same seeded inputs and prints, per output, the
//     max absolute and max relative difference over all samples; exits 0
//     only when every output is within |a - b| <= atol + rtol * |b|.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace onnxslim::tools {

/// Inputs shared by `run` and `verify`.
struct InputArgs {
  uint64_t seed = 0;
  std::vector<std::string> dims;   ///< SYM=N
  std::vector<std::string> inputs; ///< NAME=FILE.pb or FILE.pb (name from the file's name field)
  std::string inputSpecs;          ///< FILE[:NAME] (tests/models/models.json format)
};

struct RunArgs {
  std::string model;
  std::string outputDir = ".";
  InputArgs in;
  bool quiet = false;
  /// When > 0: run this many more times after the first and print the median latency.
  int benchRuns = 0;
  /// Print the time spent per op type (with --bench: over the timed runs).
  bool profile = false;
  /// When > 0: then print the this many nodes that took longest, with their input shapes.
  int profileNodes = 0;
  /// First optimize the model in memory with the default pipeline (no model
  /// check), as ONNX Runtime optimizes a model when it opens a session.
  bool optimize = false;
  /// Accept inputs whose shapes contradict the model's declared input shapes.
  bool noInputShapeCheck = false;
};

struct VerifyArgs {
  std::string modelA;
  std::string modelB;
  int samples = 1;
  /// Unset: the tolerance of each output's precision (docs/API.md, Tolerances).
  std::optional<double> rtol;
  std::optional<double> atol;
  InputArgs in;
  std::vector<std::string> inputShapes; ///< NAME:d0,d1,... (or NAME=...)
};

/// Given the arguments, Execute: `onnxslim run`, Result: the exit status.
int runModelCommand(const RunArgs &args);
/// Given the arguments, Execute: `onnxslim verify`, Result: the exit status.
int verifyModelsCommand(const VerifyArgs &args);

} // namespace onnxslim::tools
