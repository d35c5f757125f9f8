//===- runtime/ThreadPool.h - The interpreter's worker threads -*- C++ -*-===//
//
// One pool of worker threads for the kernels (GEMM, convolution, large
// elementwise loops). Its size is set by the embedding program (setThreadCount;
// 0 = the number of cores); it is 1 until then, so a library user's cores are
// taken only when asked. The command line sizes it with --threads N, one per
// core by default. Kernels split only work that pays for the hand-off
// (worthSplitting, parallelSpans): on the bench machine (2 cores, AVX-512)
// small or memory-bound operations ran slower split.
//
// parallelFor(n, task) runs task(0) ... task(n-1), each exactly once, on the
// workers and the calling thread, and returns when all have finished. Each
// thread starts on its own contiguous share of the indices (the caller's
// first), so jobs cut the same way give each core the same part of the
// data; a thread done with its share takes indices left in the others'.
// Results never depend on the thread count as long as every task writes its
// own outputs and computes them in a fixed order (no reduction is split
// across tasks): which thread runs a task changes nothing. A parallelFor
// called from inside a task runs its tasks inline, in order.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <algorithm>
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

/// parallelFor(n, task) when `split`, else task(0) ... task(n-1) in order
/// on the calling thread (work not worth the hand-off).
template <typename F> void parallelForIf(bool split, int64_t n, F &&task) {
  if (split && n > 1)
    parallelFor(n, task);
  else
    for (int64_t i = 0; i < n; ++i)
      task(i);
}

/// While one lives (and the pool has workers), idle workers poll for the
/// next job instead of sleeping after a short spin: a program about to post
/// many jobs in a row (the interpreter, for one run) holds one.
class KeepWorkersSpinning {
public:
  KeepWorkersSpinning();
  ~KeepWorkersSpinning();
  KeepWorkersSpinning(const KeepWorkersSpinning &) = delete;
  KeepWorkersSpinning &operator=(const KeepWorkersSpinning &) = delete;

private:
  bool active_;
};

/// Whether the calling thread runs a parallelFor task (its own parallelFor
/// calls then run inline): kernels use it to skip splitting work for threads.
bool insideParallelTask();

/// Elements of an elementwise loop below which parallelSpans stays on one
/// thread (64K: 256 KB of floats, about ten microseconds of copying). With
/// threads, an elementwise node's input is most often the output of a
/// convolution or product split across the cores, half of it in each
/// core's caches: left on one thread, the node reads that half from the
/// other core, and ran slower than on one thread (figures:
/// bench/conv_notes.md, "Work left on one core on two threads").
constexpr int64_t kParallelMinElements = int64_t{1} << 16;

/// Elements of a loop of transcendental functions (exp, sigmoid, tanh, erf,
/// GELU: a few dozen operations an element, compute-bound) below which
/// parallelSpans stays on one thread: as kParallelMinElements (their input
/// is as often split across the cores, and at 64K elements the work, about
/// 25 microseconds, outweighs the hand-off; from fewer, some models ran
/// slower).
constexpr int64_t kParallelMinTranscendentalElements = int64_t{1} << 16;

/// Multiply-adds of a product or convolution below which it stays on one
/// thread (about 10-20 microseconds of work: below that, the job's hand-off
/// and the caches the worker must warm cost about what the split saves).
/// Measured with spinning workers, alternating runs on two cores: from 8M
/// multiply-adds and 32 per element down to these, ppocr_det ran 0.79-0.89x
/// and mlsd_tiny 0.95-0.97x as long with two threads, the small models
/// (vad, face_front, ppocr_cls) within noise.
constexpr int64_t kParallelMinMultiplyAdds = int64_t{1} << 21;

/// Multiply-adds per element read or written below which a product or
/// convolution stays on one thread, for the same reason: a 1x1 convolution
/// over 4 channels or a 3x3 depthwise one (about 5 per element) is bound by
/// moving its operands, not by arithmetic.
constexpr int64_t kParallelMinIntensity = 8;

/// Given the multiply-adds of a product or convolution and the elements it
/// reads and writes, Result: whether splitting it across threads pays
/// (enough work, enough arithmetic per element, a pool, not in a task).
bool worthSplitting(int64_t multiplyAdds, int64_t elementsMoved);

/// Given a range [0, n), Execute: calls span(begin, end) over consecutive
/// pieces that cover it, one per thread when the pool has several and n is
/// at least minElements (kParallelMinElements unless the loop's work an
/// element says otherwise; outside a task), else once over all of it.
/// Piece boundaries are multiples of `align` (a SIMD width), so every
/// element goes through the same code path whatever the thread count.
template <typename F>
void parallelSpans(int64_t n, int64_t align, F &&span,
                   int64_t minElements = kParallelMinElements) {
  int threads = n >= minElements && !insideParallelTask() ? threadCount() : 1;
  if (threads <= 1) {
    if (n > 0)
      span(int64_t{0}, n);
    return;
  }
  const int64_t blocks = (n + align - 1) / align;
  parallelFor(threads, [&](int64_t t) {
    int64_t b = blocks * t / threads * align, e = std::min(n, blocks * (t + 1) / threads * align);
    if (b < e)
      span(b, e);
  });
}


/// Given `rows` output rows and at most `maxBands` bands worth cutting them
/// into, Execute: calls band(r0, r1) over consecutive row ranges covering
/// [0, rows): at most four per thread on the pool when that leaves two or
/// more (outside a task), else once over all of them. Kernels that cut
/// their output rows this way (across all planes) keep each core on the
/// rows the convolutions before them wrote there.
template <typename F> void parallelRowBands(int64_t rows, int64_t maxBands, F &&band) {
  const int threads = threadCount();
  const int64_t bands = std::min<int64_t>({int64_t{4} * threads, maxBands, rows});
  if (threads > 1 && bands >= 2 && !insideParallelTask())
    parallelFor(bands, [&](int64_t b) { band(rows * b / bands, rows * (b + 1) / bands); });
  else if (rows > 0)
    band(int64_t{0}, rows);
}

} // namespace onnxslim::rt
