//===- runtime/ThreadPool.h - The interpreter's worker threads -*- C++ -*-===//
//
// One pool of worker threads for the kernels (GEMM, convolution). Its size
// is set by the embedding program (`onnxslim --threads N`, setThreadCount;
// 0 = the number of cores). It is 1 until then: on this project's bench
// machine (2 cores, AVX-512 GEMM) two threads made the real models' GEMM
// steps slower, not faster (memory-bound panels, serial B packing; see
// bench/interpreter_vs_ort.sh), so threads are opt-in until that is fixed.
//
// parallelFor(n, task) runs task(0) ... task(n-1), each exactly once, on the
// workers and the calling thread, and returns when all have finished.
// Results never depend on the thread count as long as every task writes its
// own outputs and computes them in a fixed order (no reduction is split
// across tasks): which thread runs a task changes nothing. A parallelFor
// called from inside a task runs its tasks inline, in order.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <functional>

namespace onnxslim::rt {

/// Given a count (0: the number of cores), Execute: sizes the pool used by
/// later parallelFor calls (the caller counts as one thread; 1 = none, the
/// default).
void setThreadCount(int threads);

/// The pool's size, the calling thread included (>= 1).
int threadCount();

/// Given n tasks, Execute: runs task(i) for every i in [0, n) across the
/// pool, Result: after all have returned. Tasks must not throw.
void parallelFor(int64_t n, const std::function<void(int64_t)> &task);

} // namespace onnxslim::rt
