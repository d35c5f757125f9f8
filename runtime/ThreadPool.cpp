//===- runtime/ThreadPool.cpp - The interpreter's worker threads ----------===//
//
// Workers wait for a job; a job is a task function and a count, cut into
// one contiguous range of indices per thread (the poster's first). Each
// thread runs its range from the front, then takes indices from the back of
// the others' ranges until none are left. So the same thread tends to run
// the same part of consecutive jobs cut the same way (a convolution's
// output rows, then the next one's): the data one task writes is read by
// the next job's task on that core, from its own caches (on the bench
// machine the two cores are in different core complexes, and a line
// written on one costs the other a trip across the fabric). One job at a
// time: a parallelFor posted while another runs (from a task, or from a
// second thread of the embedding program) runs its tasks inline.
//
// The hand-off takes no lock. One word (state_) holds the job's
// generation, a "writing" flag and how many workers are inside the job. A
// worker enters by incrementing the count with a compare-and-swap that
// fails if the generation moved or the flag is up, and leaves by
// decrementing it once its tasks are counted in finished_. The poster sets
// the flag when the count is zero (no worker is inside the last job: one
// that came late may still be finding its ranges empty), writes the job,
// then publishes the next generation with the flag down. It returns when
// finished_ reaches the count: a worker still inside can then take no
// index, so never calls the task. A job then costs a few cache-line
// transfers between the cores, not two lock round trips a side (figures:
// bench/conv_notes.md, "Threads on small planes, strided depthwise
// rows, max pooling").
//
// Waiting spins first: a worker polls for the next job for kSpinMicros
// before it sleeps on the condition variable, and the poster polls for the
// job's end before it sleeps. A model posts jobs a few hundred microseconds
// apart (one per convolution or large product); sleeping and being woken
// through the kernel for each costs tens of microseconds on a virtual
// machine, which on the bench machine made two threads slower than one.
// While a KeepWorkersSpinning scope is open (the interpreter holds one for
// a whole run), an awake worker polls without a deadline, as ONNX Runtime's
// do during a session run, and for kSpinMicros after the scope closes (so
// runs back to back keep it awake): the second core is busy, but only the
// first job waits for a wake-up. A run that posts no job wakes nobody.
// Only sleeping threads take the mutex: a thread counts itself in sleepers_
// or waiters_ before it checks its condition a last time under the mutex,
// and the other side reads those counts after changing the state it waits
// on (both sequentially consistent), so a wake-up is never lost.
//
//===----------------------------------------------------------------------===//
#include "runtime/ThreadPool.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace onnxslim::rt {

namespace {

/// How long a waiting thread polls before it sleeps.
constexpr int64_t kSpinMicros = 200;

/// Open KeepWorkersSpinning scopes: while there is one, idle workers poll
/// without a deadline. On a cache line of its own: spinning workers read it
/// all the time, and a neighbour written by the running thread (the pool's
/// mutex was one) would cost that thread a cross-core miss on every write.
alignas(64) std::atomic<int> spinScopes{0};

/// One polling step (a pause instruction where there is one).
inline void relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

/// Given a condition, Execute: polls it for up to kSpinMicros, Result:
/// whether it became true (false: the caller should block).
template <typename Cond> bool spinUntil(Cond cond) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(kSpinMicros);
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (cond())
        return true;
      relax();
    }
    auto now = std::chrono::steady_clock::now();
    if (spinScopes.load(std::memory_order_relaxed) > 0)
      deadline = now + std::chrono::microseconds(kSpinMicros);
    else if (now >= deadline)
      return cond();
  }
}

class Pool {
public:
  explicit Pool(int threads) : ranges_(static_cast<size_t>(threads)) {
    for (int i = 1; i < threads; ++i)
      workers_.emplace_back([this, i] { work(i); });
  }
  ~Pool() {
    stop_.store(true);
    {
      std::lock_guard<std::mutex> lock(mutex_);
    }
    wake_.notify_all();
    for (std::thread &t : workers_)
      t.join();
  }
  Pool(const Pool &) = delete;
  Pool &operator=(const Pool &) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  /// Given n tasks, Execute: runs them on the pool (inline when the pool is
  /// busy or has no workers).
  void run(int64_t n, const std::function<void(int64_t)> &task) {
    if (workers_.empty() || n == 1 || busy_.exchange(true, std::memory_order_acquire)) {
      for (int64_t i = 0; i < n; ++i)
        task(i);
      return;
    }
    // Take the job fields: wait until no worker is inside the last job (a
    // late one may still be looking at its empty ranges), and close the
    // door behind it.
    uint64_t s = state_.load();
    for (;;) {
      if (activeOf(s) == 0) {
        if (state_.compare_exchange_weak(s, s | kWriting))
          break;
        continue;
      }
      waitFor([&] { return activeOf(state_.load()) == 0; });
      s = state_.load();
    }
    task_ = &task;
    count_ = n;
    const int64_t slots = static_cast<int64_t>(ranges_.size());
    for (int64_t sl = 0; sl < slots; ++sl)
      ranges_[static_cast<size_t>(sl)].span.store(Range::pack(n * sl / slots, n * (sl + 1) / slots),
                                                 std::memory_order_relaxed);
    finished_.store(0, std::memory_order_relaxed);
    // Publish: a new generation, the door open, nobody inside.
    state_.store((s & ~kWriting & ~kActiveMask) + kGeneration);
    if (sleepers_.load() > 0) {
      std::lock_guard<std::mutex> lock(mutex_);
      wake_.notify_all();
    }
    int64_t mine = claim(0);
    finished_.fetch_add(mine);
    waitFor([&] { return finished_.load() == count_; });
    busy_.store(false, std::memory_order_release);
  }

private:
  /// state_: generation << 17 | kWriting | active workers.
  static constexpr uint64_t kActiveMask = (uint64_t{1} << 16) - 1;
  static constexpr uint64_t kWriting = uint64_t{1} << 16;
  static constexpr uint64_t kGeneration = uint64_t{1} << 17;
  static uint64_t activeOf(uint64_t s) { return s & kActiveMask; }
  static uint64_t generationOf(uint64_t s) { return s >> 17; }

  /// Given a condition the workers make true, Execute: polls it, then
  /// sleeps on done_ until it holds.
  template <typename Cond> void waitFor(Cond cond) {
    if (spinUntil(cond))
      return;
    std::unique_lock<std::mutex> lock(mutex_);
    waiters_.fetch_add(1);
    done_.wait(lock, cond);
    waiters_.fetch_sub(1);
  }

  /// One thread's share of a job's indices, [begin, end) packed in one
  /// word: the owner takes from the front, others from the back.
  struct alignas(64) Range {
    std::atomic<uint64_t> span{0};
    static uint64_t pack(int64_t begin, int64_t end) {
      return static_cast<uint64_t>(begin) | static_cast<uint64_t>(end) << 32;
    }
    /// Result: the index taken from the front (back), or -1 when empty.
    int64_t take(bool front) {
      uint64_t v = span.load();
      for (;;) {
        const int64_t b = static_cast<int64_t>(v & 0xffffffffu), e = static_cast<int64_t>(v >> 32);
        if (b >= e)
          return -1;
        if (span.compare_exchange_weak(v, front ? pack(b + 1, e) : pack(b, e - 1)))
          return front ? b : e - 1;
      }
    }
  };

  /// Runs the tasks of slot's range, then those left in the other ranges;
  /// Result: how many.
  int64_t claim(int slot) {
    int64_t ran = 0;
    const int slots = static_cast<int>(ranges_.size());
    for (int d = 0; d < slots; ++d) {
      Range &r = ranges_[static_cast<size_t>((slot + d) % slots)];
      for (int64_t i = r.take(d == 0); i >= 0; i = r.take(d == 0)) {
        (*task_)(i);
        ++ran;
      }
    }
    return ran;
  }

  void work(int slot) {
    uint64_t seen = 0; // the generation of the last job entered
    auto posted = [&] {
      uint64_t s = state_.load();
      return stop_.load() || (generationOf(s) != seen && !(s & kWriting));
    };
    for (;;) {
      if (!spinUntil(posted)) {
        std::unique_lock<std::mutex> lock(mutex_);
        sleepers_.fetch_add(1);
        wake_.wait(lock, posted);
        sleepers_.fetch_sub(1);
      }
      if (stop_.load())
        return;
      // Enter the job unless the poster has closed the door meanwhile.
      uint64_t s = state_.load();
      bool entered = false;
      while (generationOf(s) != seen && !(s & kWriting))
        if ((entered = state_.compare_exchange_weak(s, s + 1)))
          break;
      if (!entered)
        continue;
      seen = generationOf(s);
      int64_t ran = claim(slot);
      if (ran > 0)
        finished_.fetch_add(ran);
      state_.fetch_sub(1);
      if (waiters_.load() > 0) {
        std::lock_guard<std::mutex> lock(mutex_);
        done_.notify_all();
      }
    }
  }

  std::vector<std::thread> workers_;
  std::vector<Range> ranges_; ///< per thread (0: the poster), set with the job
  /// Held by the thread whose job runs.
  alignas(64) std::atomic<bool> busy_{false};
  /// What idle workers poll: the job's generation, whether the poster is
  /// writing the fields below, and how many workers are inside the job.
  alignas(64) std::atomic<uint64_t> state_{0};
  std::atomic<bool> stop_{false};
  /// The job, written by the poster while the door is closed.
  alignas(64) const std::function<void(int64_t)> *task_ = nullptr;
  int64_t count_ = 0;
  std::atomic<int64_t> finished_{0}; ///< tasks of the job that have returned
  /// Sleeping threads: only these take the mutex.
  alignas(64) std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::atomic<int> sleepers_{0}; ///< workers blocked on wake_
  std::atomic<int> waiters_{0};  ///< posters blocked on done_
};

int coreCount() {
  unsigned n = std::thread::hardware_concurrency();
  return n ? static_cast<int>(n) : 1;
}

std::mutex &poolMutex() {
  static std::mutex m;
  return m;
}

std::shared_ptr<Pool> &poolSlot() {
  static std::shared_ptr<Pool> pool;
  return pool;
}

/// The pool's size (threadCount), kept beside the pool so that asking for
/// it takes no lock: kernels ask on every call.
alignas(64) std::atomic<int> poolSize{1};

std::shared_ptr<Pool> currentPool() {
  std::lock_guard<std::mutex> lock(poolMutex());
  std::shared_ptr<Pool> &slot = poolSlot();
  if (!slot)
    slot = std::make_shared<Pool>(1); // until setThreadCount (see ThreadPool.h)
  return slot;
}

/// Set in pool tasks: a nested parallelFor runs inline.
thread_local bool insideTask = false;

} // namespace

void setThreadCount(int threads) {
  int n = threads > 0 ? threads : coreCount();
  std::lock_guard<std::mutex> lock(poolMutex());
  std::shared_ptr<Pool> &slot = poolSlot();
  if (!slot || slot->size() != n)
    slot = std::make_shared<Pool>(n);
  poolSize.store(n);
}

int threadCount() { return poolSize.load(std::memory_order_relaxed); }

bool insideParallelTask() { return insideTask; }

bool worthSplitting(int64_t multiplyAdds, int64_t elementsMoved) {
  return multiplyAdds >= kParallelMinMultiplyAdds &&
         multiplyAdds >= kParallelMinIntensity * elementsMoved && !insideTask &&
         threadCount() > 1;
}

KeepWorkersSpinning::KeepWorkersSpinning() : active_(threadCount() > 1) {
  if (active_)
    spinScopes.fetch_add(1);
}

KeepWorkersSpinning::~KeepWorkersSpinning() {
  if (active_)
    spinScopes.fetch_sub(1);
}

void parallelFor(int64_t n, const std::function<void(int64_t)> &task) {
  if (n <= 0)
    return;
  if (insideTask) {
    for (int64_t i = 0; i < n; ++i)
      task(i);
    return;
  }
  // Ranges hold 32-bit indices: a (never seen) larger count runs in batches.
  constexpr int64_t kBatch = int64_t{1} << 31;
  for (int64_t base = 0; base < n; base += kBatch) {
    std::function<void(int64_t)> marked = [&task, base](int64_t i) {
      bool outer = insideTask;
      insideTask = true;
      task(base + i);
      insideTask = outer;
    };
    currentPool()->run(std::min(kBatch, n - base), marked);
  }
}

} // namespace onnxslim::rt
