//===- tests/cli/CliTestUtil.h - Running the onnxslim binary in tests -*- C++ -*-===//
//
// What the command-line tests share: reading and writing whole files, and
// running the onnxslim binary (ONNXSLIM_BINARY, defined by the test's
// CMakeLists) with its standard output and error captured.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace onnxslim::clitest {

inline std::string readFile(const std::filesystem::path &p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void writeFile(const std::filesystem::path &p, const std::string &bytes) {
  std::ofstream out(p, std::ios::binary);
  out << bytes;
}

struct RunResult {
  int exitCode; ///< -1 when the process did not exit normally (a signal)
  std::string out;
  std::string err;
};

/// Given arguments (shell words) and a scratch directory, Execute: runs
/// `onnxslim ARGS`, Result: its exit code, standard output and error.
inline RunResult runOnnxslim(const std::string &args, const std::filesystem::path &dir) {
  std::filesystem::path outFile = dir / "stdout.txt", errFile = dir / "stderr.txt";
  std::string cmd = std::string(ONNXSLIM_BINARY) + " " + args + " >" + outFile.string() + " 2>" + errFile.string();
  int status = std::system(cmd.c_str());
  RunResult r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, readFile(outFile), readFile(errFile)};
  std::filesystem::remove(outFile);
  std::filesystem::remove(errFile);
  return r;
}

} // namespace onnxslim::clitest
