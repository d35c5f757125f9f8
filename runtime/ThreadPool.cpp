//===- runtime/ThreadPool.cpp - The interpreter's worker threads ----------===//
//
// Workers sleep on a condition variable until a job is posted; a job is a
// task function, a count and an atomic cursor from which every thread
// (workers and the poster) claims the next index until none are left. The
// poster waits until every claimed task has finished and every worker has
// left the job (so the next job's fields are never read half-set, and no
// stale index is claimed against them). One job at a time: a
// parallelFor posted while another runs (from a task, or from a second
// thread of the embedding program) runs its tasks inline.
//
//===----------------------------------------------------------------------===//
#include "runtime/ThreadPool.h"

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace onnxslim::rt {

namespace {

class Pool {
public:
  explicit Pool(int threads) {
    for (int i = 1; i < threads; ++i)
      workers_.emplace_back([this] { work(); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
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
    std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
    if (!busy.owns_lock() || workers_.empty() || n == 1) {
      for (int64_t i = 0; i < n; ++i)
        task(i);
      return;
    }
    {
      // No worker is inside claim() (a late one may still be leaving the
      // last job): the job fields are ours to set.
      std::unique_lock<std::mutex> lock(mutex_);
      done_.wait(lock, [&] { return active_ == 0; });
      task_ = &task;
      count_ = n;
      next_.store(0);
      finished_ = 0;
      ++generation_;
    }
    wake_.notify_all();
    int64_t mine = claim();
    std::unique_lock<std::mutex> lock(mutex_);
    finished_ += mine;
    done_.wait(lock, [&] { return finished_ == count_ && active_ == 0; });
    task_ = nullptr;
  }

private:
  /// Runs tasks from the cursor until none are left; Result: how many.
  int64_t claim() {
    int64_t ran = 0;
    for (int64_t i = next_.fetch_add(1); i < count_; i = next_.fetch_add(1)) {
      (*task_)(i);
      ++ran;
    }
    return ran;
  }

  void work() {
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_)
        return;
      seen = generation_;
      ++active_;
      lock.unlock();
      int64_t ran = claim();
      lock.lock();
      finished_ += ran;
      --active_;
      done_.notify_all();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex busy_;  ///< held by the thread whose job runs
  std::mutex mutex_; ///< guards the job fields below
  std::condition_variable wake_, done_;
  const std::function<void(int64_t)> *task_ = nullptr;
  int64_t count_ = 0;
  std::atomic<int64_t> next_{0};
  int64_t finished_ = 0;
  int active_ = 0; ///< workers inside claim()
  uint64_t generation_ = 0;
  bool stop_ = false;
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
}

int threadCount() { return currentPool()->size(); }

void parallelFor(int64_t n, const std::function<void(int64_t)> &task) {
  if (n <= 0)
    return;
  if (insideTask) {
    for (int64_t i = 0; i < n; ++i)
      task(i);
    return;
  }
  std::function<void(int64_t)> marked = [&task](int64_t i) {
    bool outer = insideTask;
    insideTask = true;
    task(i);
    insideTask = outer;
  };
  currentPool()->run(n, marked);
}

} // namespace onnxslim::rt
