//===- bench/LoadSave.cpp - Model load+save against bare protobuf ---------===//
//
// Times, on one model file (argv[1], or the largest real model in the model
// cache), the median of N runs of:
//   (a) bare protobuf: read the file, ParseFromArray, SerializeToString,
//       write the bytes to a file;
//   (b) plain copy: read the file, write it;
//   (c) onnxslim: loadModel (mmap, zero-copy) + saveModel (streaming).
// Every path writes into the same temporary directory and fsyncs its output
// (saveModel always does, for its atomic rename), so the ratios compare like
// with like. Then the peak RSS of (c) and of (a), each measured alone in a
// fresh process (the binary re-executes itself), against the file size.
//
// Targets (from the issue): c/a <= 1.5, and peak RSS of (c) <= 1.5 x file
// size + 30 MB. With --check the exit status is 1 when a target is missed.
//
//===----------------------------------------------------------------------===//
#include "backend/Writer.h"
#include "frontend/Loader.h"
#include "schema/onnx.pb.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

std::string readAll(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes;
  in.seekg(0, std::ios::end);
  bytes.resize(static_cast<size_t>(in.tellg()));
  in.seekg(0);
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return bytes;
}

bool writeAll(const std::string &path, const std::string &bytes) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return false;
  const char *p = bytes.data();
  size_t n = bytes.size();
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w <= 0) {
      ::close(fd);
      return false;
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  bool ok = ::fsync(fd) == 0;
  return ::close(fd) == 0 && ok;
}

bool runProtobuf(const std::string &in, const std::string &out) {
  std::string bytes = readAll(in);
  onnxslim::onnx::ModelProto m;
  if (!m.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return false;
  std::string serialized;
  if (!m.SerializeToString(&serialized))
    return false;
  return writeAll(out, serialized);
}

bool runCopy(const std::string &in, const std::string &out) { return writeAll(out, readAll(in)); }

bool runOnnxslim(const std::string &in, const std::string &out) {
  std::string error;
  auto model = onnxslim::loadModel(in, error);
  if (!model || !onnxslim::saveModel(*model, out, error)) {
    std::cerr << "bench_load_save: " << error << "\n";
    return false;
  }
  return true;
}

/// CPU time (user + system) of this process so far, in ms.
double cpuMs() {
  struct rusage ru {};
  ::getrusage(RUSAGE_SELF, &ru);
  auto ms = [](const timeval &tv) { return static_cast<double>(tv.tv_sec) * 1e3 + static_cast<double>(tv.tv_usec) / 1e3; };
  return ms(ru.ru_utime) + ms(ru.ru_stime);
}

struct Timing {
  double wall = 0; ///< Median wall-clock time, ms.
  double cpu = 0;  ///< Median CPU time, ms (steadier on a loaded machine).
};

Timing median(const std::function<bool()> &fn, int runs) {
  std::vector<double> wall, cpu;
  for (int i = 0; i < runs; ++i) {
    double c0 = cpuMs();
    auto t0 = std::chrono::steady_clock::now();
    if (!fn()) {
      std::cerr << "bench_load_save: a run failed\n";
      std::exit(2);
    }
    wall.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    cpu.push_back(cpuMs() - c0);
  }
  std::sort(wall.begin(), wall.end());
  std::sort(cpu.begin(), cpu.end());
  return {wall[wall.size() / 2], cpu[cpu.size() / 2]};
}

long peakRssKb() {
  struct rusage ru {};
  ::getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss; // kilobytes on Linux
}

/// Runs this binary again as `--rss MODE in out` and reads the peak RSS it prints.
long childPeakRssKb(const std::string &mode, const std::string &in, const std::string &out) {
  int fds[2];
  if (::pipe(fds) != 0)
    return -1;
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fds[1], STDOUT_FILENO);
    ::close(fds[0]);
    ::close(fds[1]);
    ::execl("/proc/self/exe", "bench_load_save", "--rss", mode.c_str(), in.c_str(), out.c_str(),
            static_cast<char *>(nullptr));
    ::_exit(127);
  }
  ::close(fds[1]);
  std::string text;
  char buf[256];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0)
    text.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return -1;
  return std::strtol(text.c_str(), nullptr, 10);
}

std::string largestCachedModel() {
  std::string best;
  uintmax_t bestSize = 0;
  std::error_code ec;
  for (const auto &e : fs::directory_iterator(ONNXSLIM_MODEL_CACHE, ec))
    if (e.path().extension() == ".onnx" && e.file_size(ec) > bestSize) {
      bestSize = e.file_size(ec);
      best = e.path().string();
    }
  return best;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 4 && args[0] == "--rss") {
    bool ok = args[1] == "onnxslim" ? runOnnxslim(args[2], args[3]) : runProtobuf(args[2], args[3]);
    std::printf("%ld\n", peakRssKb());
    return ok ? 0 : 1;
  }
  bool check = false;
  int runs = 9;
  std::string model;
  for (const std::string &a : args) {
    if (a == "--check")
      check = true;
    else if (a.rfind("--runs=", 0) == 0)
      runs = std::max(1, std::atoi(a.c_str() + 7));
    else
      model = a;
  }
  if (model.empty())
    model = largestCachedModel();
  if (model.empty()) {
    std::cerr << "bench_load_save: no model given and none in " << ONNXSLIM_MODEL_CACHE
              << " (run scripts/fetch-models.sh)\n";
    return 2;
  }
  std::string tmpl = (fs::temp_directory_path() / "onnxslim-bench-XXXXXX").string();
  std::vector<char> dirBuf(tmpl.begin(), tmpl.end());
  dirBuf.push_back('\0');
  if (!::mkdtemp(dirBuf.data())) {
    std::perror("bench_load_save: mkdtemp");
    return 2;
  }
  std::string dir = dirBuf.data();
  std::string outA = dir + "/a.onnx", outB = dir + "/b.onnx", outC = dir + "/c.onnx";
  double fileMb = static_cast<double>(fs::file_size(model)) / (1 << 20);

  // Warm the page cache once, then time the three paths.
  runCopy(model, outB);
  Timing a = median([&] { return runProtobuf(model, outA); }, runs);
  Timing b = median([&] { return runCopy(model, outB); }, runs);
  Timing c = median([&] { return runOnnxslim(model, outC); }, runs);
  // Breakdown of (c): parse into the IR, serialize in memory.
  Timing load = median([&] {
    std::string error;
    return onnxslim::loadModel(model, error) != nullptr;
  }, runs);
  std::string loadError;
  auto loaded = onnxslim::loadModel(model, loadError);
  Timing serialize = median([&] { return !onnxslim::serializeModel(*loaded).empty(); }, runs);
  loaded.reset();
  long rssC = childPeakRssKb("onnxslim", model, outC);
  long rssA = childPeakRssKb("protobuf", model, outA);
  fs::remove_all(dir);

  double limitMb = 1.5 * fileMb + 30;
  double rssCMb = static_cast<double>(rssC) / 1024, rssAMb = static_cast<double>(rssA) / 1024;
  bool timeOk = c.wall <= 1.5 * a.wall, rssOk = rssC > 0 && rssCMb <= limitMb;
  std::printf("model: %s (%.2f MB), median of %d runs (wall / CPU)\n", model.c_str(), fileMb, runs);
  std::printf("  (a) protobuf parse+serialize+write  %8.2f / %8.2f ms\n", a.wall, a.cpu);
  std::printf("  (b) read+write file                 %8.2f / %8.2f ms\n", b.wall, b.cpu);
  std::printf("  (c) onnxslim loadModel+saveModel    %8.2f / %8.2f ms\n", c.wall, c.cpu);
  std::printf("      loadModel alone %.2f / %.2f ms, serializeModel (in memory) alone %.2f / %.2f ms\n",
              load.wall, load.cpu, serialize.wall, serialize.cpu);
  std::printf("  ratio c/a = %.2f wall (target <= 1.5: %s), %.2f CPU; c/b = %.2f wall\n", c.wall / a.wall,
              timeOk ? "ok" : "MISSED", c.cpu / a.cpu, c.wall / b.wall);
  std::printf("  peak RSS (c) %.1f MB = %.2f x file size (target <= %.1f MB: %s); (a) %.1f MB\n", rssCMb,
              rssCMb / fileMb, limitMb, rssOk ? "ok" : "MISSED", rssAMb);
  return check && !(timeOk && rssOk) ? 1 : 0;
}
