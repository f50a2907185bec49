// Private: per-host-thread caches that outlive their thread. Every launch starts new host threads, and a cache that
// is thread_local would start cold on each (its buffers allocated afresh, and first touches of fresh memory cost
// more than the work they serve). A thread instead takes an instance from a process-wide pool on first use and
// gives it back when it exits, so the next launch's threads find it warm.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

namespace ldmsim::ops {

/// This host thread's instance of T (default-constructed the first time the pool is empty). Callers must not
/// depend on what an instance held before (a cache keyed by never-reused ids, a scratch buffer).
template <typename T>
T& thread_cache() {
  struct Pool {
    std::mutex mutex;
    std::vector<std::unique_ptr<T>> idle;
  };
  static Pool pool;  // constructed before any holder (a holder takes from it first), so destroyed after them
  struct Holder {
    std::unique_ptr<T> item;
    Holder() {
      const std::lock_guard lock(pool.mutex);
      if (pool.idle.empty()) {
        item = std::make_unique<T>();
      } else {
        item = std::move(pool.idle.back());
        pool.idle.pop_back();
      }
    }
    ~Holder() {
      const std::lock_guard lock(pool.mutex);
      pool.idle.push_back(std::move(item));
    }
    Holder(const Holder&) = delete;
    Holder& operator=(const Holder&) = delete;
  };
  thread_local Holder holder;
  return *holder.item;
}

}  // namespace ldmsim::ops
