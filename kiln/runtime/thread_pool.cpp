#include "kiln/runtime/thread_pool.h"

#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>

namespace kiln {

namespace {

class ThreadPool {
 public:
  explicit ThreadPool(size_t threads) {
    for (size_t i = 0; i < threads; ++i) std::thread([this] { work(); }).detach();
  }

  void launch(std::function<void()> task) {
    {
      std::lock_guard lock(mutex_);
      tasks_.push_back(std::move(task));
    }
    ready_.notify_one();
  }

 private:
  void work() {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock lock(mutex_);
        ready_.wait(lock, [this] { return !tasks_.empty(); });
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      task();
    }
  }

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> tasks_;
};

size_t defaultThreads() {
  if (const char* env = std::getenv("KILN_NUM_INTEROP_THREADS")) {
    long n = std::strtol(env, nullptr, 10);
    if (n > 0) return static_cast<size_t>(n);
  }
  size_t hw = std::thread::hardware_concurrency();
  return hw < 2 ? 2 : hw;
}

ThreadPool& pool() {
  // Never destroyed: detached workers may still be waiting at exit.
  static ThreadPool* p = new ThreadPool(defaultThreads());
  return *p;
}

}  // namespace

void launchTask(std::function<void()> task) { pool().launch(std::move(task)); }

}  // namespace kiln
