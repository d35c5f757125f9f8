//===- bench/KernelBench.cpp - GEMM engine throughput vs a naive loop -----===//
//
// Measures the GFLOP/s of rt::sgemm (and rt::dgemm) against a naive triple
// loop in the same process, on square shapes and on convolution-like shapes,
// for every micro-kernel family the CPU supports (baseline xsimd, AVX2+FMA,
// AVX-512F), and prints the ratio. Every timing is the best of several
// repetitions. Results are checked against the naive product so a fast wrong
// kernel shows.
//
//   KernelBench [--quick]
//
//===----------------------------------------------------------------------===//
#include "runtime/Gemm.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace onnxslim;

namespace {

/// C = A * B, the textbook i-j-k loop (row-major, no transposes).
template <typename T>
void naiveGemm(int64_t M, int64_t N, int64_t K, const T *A, const T *B, T *C) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      T sum = 0;
      for (int64_t k = 0; k < K; ++k)
        sum += A[i * K + k] * B[k * N + j];
      C[i * N + j] = sum;
    }
}

/// Seconds taken by the fastest of `reps` calls of `fn` (at least 0.2 s total).
template <typename Fn> double bestSeconds(Fn &&fn, int reps) {
  double best = 1e30;
  auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < reps || std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                                             start)
                                      .count() < 0.2;
       ++r) {
    auto t0 = std::chrono::steady_clock::now();
    fn();
    auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
    if (r > 50)
      break;
  }
  return best;
}

const char *const kEngines[] = {"baseline", "avx2", "avx512"};

template <typename T> void report(const char *type, int64_t M, int64_t N, int64_t K) {
  std::mt19937 rng(42);
  std::uniform_real_distribution<T> dist(-1, 1);
  std::vector<T> A(M * K), B(K * N), C(M * N), R(M * N);
  for (auto &v : A)
    v = dist(rng);
  for (auto &v : B)
    v = dist(rng);
  double flops = 2.0 * M * N * K;
  double tNaive = bestSeconds([&] { naiveGemm(M, N, K, A.data(), B.data(), R.data()); }, 2);
  double naive = flops / tNaive * 1e-9;
  for (const char *engine : kEngines) {
    if (!rt::setGemmEngine(engine))
      continue;
    double tFast = bestSeconds(
        [&] {
          rt::gemm(false, false, M, N, K, T(1), A.data(), K, B.data(), N, T(0), C.data(), N);
        },
        5);
    double err = 0;
    for (int64_t i = 0; i < M * N; ++i)
      err = std::max(err, std::abs(double(C[i]) - double(R[i])) / (1.0 + std::abs(double(R[i]))));
    double fast = flops / tFast * 1e-9;
    std::printf("%-5s %-8s M=%-5lld N=%-5lld K=%-5lld  gemm %7.2f GFLOP/s  naive %6.2f GFLOP/s  "
                "ratio %6.1fx  maxrelerr %.1e\n",
                type, engine, static_cast<long long>(M), static_cast<long long>(N),
                static_cast<long long>(K), fast, naive, fast / naive, err);
  }
}

} // namespace

int main(int argc, char **argv) {
  bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  std::printf("Single-threaded GEMM vs naive i-j-k triple loop (best of several runs)\n");
  std::vector<int64_t> squares = quick ? std::vector<int64_t>{256} : std::vector<int64_t>{256, 512, 1024};
  for (int64_t n : squares)
    report<float>("sgemm", n, n, n);
  report<float>("sgemm", 64, 3136, 576);    // 3x3 conv, 64->64 channels, 56x56
  report<float>("sgemm", 197, 3072, 768);   // a ViT-B MLP's first product (197 tokens)
  report<float>("sgemm", 1280, 49, 320);    // 1x1 conv, 320->1280 channels, 7x7
  if (!quick) {
    report<float>("sgemm", 128, 784, 1152); // 3x3 conv, 128->128 channels, 28x28
    report<float>("sgemm", 32, 12544, 27);  // first 3x3 conv on RGB, 112x112
    for (int64_t n : squares)
      report<double>("dgemm", n, n, n);
  }
  return 0;
}
