// One-sided communication (docs/athread.md "MPI"): MPI_Put, MPI_Accumulate, MPI_Get and the fetching operations over
// the LogGP model, and the synchronisations that complete them. A put or accumulate of k bytes keeps the origin busy
// o + (k - 1) G and is done at the target T(k) after its start; a get keeps the origin busy o and is done when its
// request and the data have crossed, T(0) + T(k) after its start; a get-accumulate, fetch-and-op or
// compare-and-swap that sends k bytes and brings r back is busy o + (k - 1) G and done T(k) + T(r) after its start.
// MPI_Win_fence is a barrier that no rank enters before its own operations on the window are done; MPI_Win_unlock /
// unlock_all / flush / flush_all wait until they are. The request of MPI_Rput / Raccumulate completes when the
// origin's buffer is free, that of MPI_Rget / Rget_accumulate when the data is there. The data moves through the
// PMPI_ calls unchanged.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>

#include "collective_costs.hpp"
#include "control_clock.hpp"
#include "rank_state.hpp"

namespace ldmsim::athread::mpi {
namespace {

/// A window made by an intercepted call: the communicator it spans (its fences are collectives over it) and when
/// this rank's one-sided operations on it are done.
struct Window {
  MPI_Comm comm = MPI_COMM_NULL;
  Cycle done = 0;
};

class Windows {
 public:
  static Windows& get() {
    static Windows windows;
    return windows;
  }

  void add(MPI_Win win, MPI_Comm comm) {
    const std::lock_guard lock(mutex_);
    windows_[win] = Window{comm, 0};
  }

  void forget(MPI_Win win) {
    const std::lock_guard lock(mutex_);
    windows_.erase(win);
  }

  /// An operation on `win` that is done at `done`.
  void issued(MPI_Win win, Cycle done, const char* call) {
    const std::lock_guard lock(mutex_);
    Window& window = find(win, call);
    window.done = std::max(window.done, done);
  }

  /// The window's state; its operations count as completed from now on.
  Window complete(MPI_Win win, const char* call) {
    const std::lock_guard lock(mutex_);
    Window& window = find(win, call);
    const Window state = window;
    window.done = 0;
    return state;
  }

 private:
  Window& find(MPI_Win win, const char* call) {
    const auto it = windows_.find(win);
    if (it != windows_.end()) return it->second;
    std::fprintf(stderr,
                 "ldmsim mpi: rank %d: %s on a window that was not made by a call ldmsim intercepts "
                 "(MPI_Win_create, MPI_Win_allocate, MPI_Win_allocate_shared, MPI_Win_create_dynamic)\n",
                 RankState::get().rank(), call);
    PMPI_Abort(MPI_COMM_WORLD, 2);
    std::abort();  // PMPI_Abort does not return
  }

  std::mutex mutex_;
  std::map<MPI_Win, Window> windows_;
};

int made(int rc, MPI_Comm comm, const MPI_Win* win) {
  if (rc == MPI_SUCCESS && RankState::get().timed()) Windows::get().add(*win, comm);
  return rc;
}

/// A put or accumulate of `bytes` to `target`, started now; returns when the origin's buffer is free again.
Cycle time_put(const char* call, int target, std::uint64_t bytes, MPI_Win win) {
  RankState& rank = RankState::get();
  const Cycle begin = control_clock();
  const Cycle start = rank.next_send_start();
  const Cycle end = start + rank.model().send_busy(bytes);
  Windows::get().issued(win, start + rank.model().transfer(bytes), call);
  advance_control_clock(end);
  rank.record({call, begin, end, target, bytes, end, end});
  return end;
}

/// A get of `bytes` from `target`, started now: its request goes out, the data comes back. Returns when the data
/// is there.
Cycle time_get(const char* call, int target, std::uint64_t bytes, MPI_Win win) {
  RankState& rank = RankState::get();
  const Cycle begin = control_clock();
  const Cycle start = rank.next_send_start();
  const Cycle end = start + rank.model().overhead();
  const Cycle done = start + rank.model().transfer(0) + rank.model().transfer(bytes);
  Windows::get().issued(win, done, call);
  advance_control_clock(end);
  rank.record({call, begin, end, target, bytes, end, end});
  return done;
}

/// An operation that sends `sent` bytes and brings `returned` bytes back (get-accumulate, fetch-and-op,
/// compare-and-swap), started now: busy while its data goes out, done when the result has come back (returned).
Cycle time_fetch(const char* call, int target, std::uint64_t sent, std::uint64_t returned, MPI_Win win) {
  RankState& rank = RankState::get();
  const Cycle begin = control_clock();
  const Cycle start = rank.next_send_start();
  const Cycle end = start + rank.model().send_busy(sent);
  const Cycle done = start + rank.model().transfer(sent) + rank.model().transfer(returned);
  Windows::get().issued(win, done, call);
  advance_control_clock(end);
  rank.record({call, begin, end, target, sent + returned, end, end});
  return done;
}

/// A request-based operation's request: its wait or test moves the clock to `done`.
int requested(int rc, const MPI_Request* request, Cycle done) {
  if (rc == MPI_SUCCESS) RankState::get().add_local_completion(*request, done);
  return rc;
}

void complete_own(const char* call, int target, MPI_Win win) {
  RankState::get().wait_for_own(call, target, Windows::get().complete(win, call).done);
}

}  // namespace
}  // namespace ldmsim::athread::mpi

namespace m = ldmsim::athread::mpi;
using m::message_bytes;
using m::RankState;

extern "C" {

int MPI_Win_create(void* base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  return m::made(PMPI_Win_create(base, size, disp_unit, info, comm, win), comm, win);
}

int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr, MPI_Win* win) {
  return m::made(PMPI_Win_allocate(size, disp_unit, info, comm, baseptr, win), comm, win);
}

int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr, MPI_Win* win) {
  return m::made(PMPI_Win_allocate_shared(size, disp_unit, info, comm, baseptr, win), comm, win);
}

int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  return m::made(PMPI_Win_create_dynamic(info, comm, win), comm, win);
}

int MPI_Win_free(MPI_Win* win) {
  m::Windows::get().forget(*win);
  return PMPI_Win_free(win);
}

int MPI_Put(const void* origin_addr, int origin_count, MPI_Datatype origin_type, int target_rank, MPI_Aint target_disp,
            int target_count, MPI_Datatype target_type, MPI_Win win) {
  if (RankState::get().timed()) m::time_put("MPI_Put", target_rank, message_bytes(origin_count, origin_type), win);
  return PMPI_Put(origin_addr, origin_count, origin_type, target_rank, target_disp, target_count, target_type, win);
}

int MPI_Accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_type, int target_rank,
                   MPI_Aint target_disp, int target_count, MPI_Datatype target_type, MPI_Op op, MPI_Win win) {
  if (RankState::get().timed()) {
    m::time_put("MPI_Accumulate", target_rank, message_bytes(origin_count, origin_type), win);
  }
  return PMPI_Accumulate(origin_addr, origin_count, origin_type, target_rank, target_disp, target_count, target_type,
                         op, win);
}

int MPI_Get(void* origin_addr, int origin_count, MPI_Datatype origin_type, int target_rank, MPI_Aint target_disp,
            int target_count, MPI_Datatype target_type, MPI_Win win) {
  if (RankState::get().timed()) m::time_get("MPI_Get", target_rank, message_bytes(origin_count, origin_type), win);
  return PMPI_Get(origin_addr, origin_count, origin_type, target_rank, target_disp, target_count, target_type, win);
}

int MPI_Get_accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_type, void* result_addr,
                       int result_count, MPI_Datatype result_type, int target_rank, MPI_Aint target_disp,
                       int target_count, MPI_Datatype target_type, MPI_Op op, MPI_Win win) {
  if (RankState::get().timed()) {
    m::time_fetch("MPI_Get_accumulate", target_rank, message_bytes(origin_count, origin_type),
                  message_bytes(result_count, result_type), win);
  }
  return PMPI_Get_accumulate(origin_addr, origin_count, origin_type, result_addr, result_count, result_type,
                             target_rank, target_disp, target_count, target_type, op, win);
}

int MPI_Fetch_and_op(const void* origin_addr, void* result_addr, MPI_Datatype type, int target_rank,
                     MPI_Aint target_disp, MPI_Op op, MPI_Win win) {
  if (RankState::get().timed()) {
    const std::uint64_t bytes = message_bytes(1, type);
    m::time_fetch("MPI_Fetch_and_op", target_rank, bytes, bytes, win);
  }
  return PMPI_Fetch_and_op(origin_addr, result_addr, type, target_rank, target_disp, op, win);
}

int MPI_Compare_and_swap(const void* origin_addr, const void* compare_addr, void* result_addr, MPI_Datatype type,
                         int target_rank, MPI_Aint target_disp, MPI_Win win) {
  if (RankState::get().timed()) {
    const std::uint64_t bytes = message_bytes(1, type);
    m::time_fetch("MPI_Compare_and_swap", target_rank, 2 * bytes, bytes, win);
  }
  return PMPI_Compare_and_swap(origin_addr, compare_addr, result_addr, type, target_rank, target_disp, win);
}

int MPI_Rput(const void* origin_addr, int origin_count, MPI_Datatype origin_type, int target_rank, MPI_Aint target_disp,
             int target_count, MPI_Datatype target_type, MPI_Win win, MPI_Request* request) {
  const int rc = PMPI_Rput(origin_addr, origin_count, origin_type, target_rank, target_disp, target_count, target_type,
                           win, request);
  if (!RankState::get().timed()) return rc;
  return m::requested(rc, request, m::time_put("MPI_Rput", target_rank, message_bytes(origin_count, origin_type), win));
}

int MPI_Raccumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_type, int target_rank,
                    MPI_Aint target_disp, int target_count, MPI_Datatype target_type, MPI_Op op, MPI_Win win,
                    MPI_Request* request) {
  const int rc = PMPI_Raccumulate(origin_addr, origin_count, origin_type, target_rank, target_disp, target_count,
                                  target_type, op, win, request);
  if (!RankState::get().timed()) return rc;
  return m::requested(rc, request,
                      m::time_put("MPI_Raccumulate", target_rank, message_bytes(origin_count, origin_type), win));
}

int MPI_Rget(void* origin_addr, int origin_count, MPI_Datatype origin_type, int target_rank, MPI_Aint target_disp,
             int target_count, MPI_Datatype target_type, MPI_Win win, MPI_Request* request) {
  const int rc = PMPI_Rget(origin_addr, origin_count, origin_type, target_rank, target_disp, target_count, target_type,
                           win, request);
  if (!RankState::get().timed()) return rc;
  return m::requested(rc, request, m::time_get("MPI_Rget", target_rank, message_bytes(origin_count, origin_type), win));
}

int MPI_Rget_accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_type, void* result_addr,
                        int result_count, MPI_Datatype result_type, int target_rank, MPI_Aint target_disp,
                        int target_count, MPI_Datatype target_type, MPI_Op op, MPI_Win win, MPI_Request* request) {
  const int rc = PMPI_Rget_accumulate(origin_addr, origin_count, origin_type, result_addr, result_count, result_type,
                                      target_rank, target_disp, target_count, target_type, op, win, request);
  if (!RankState::get().timed()) return rc;
  return m::requested(rc, request,
                      m::time_fetch("MPI_Rget_accumulate", target_rank, message_bytes(origin_count, origin_type),
                                    message_bytes(result_count, result_type), win));
}

int MPI_Win_fence(int assert_flags, MPI_Win win) {
  RankState& rank = RankState::get();
  if (rank.timed()) {
    const m::Window window = m::Windows::get().complete(win, "MPI_Win_fence");
    rank.time_collective(window.comm, "MPI_Win_fence", m::barrier_cost(rank.model(), window.comm).cycles, 0,
                         window.done);
  }
  return PMPI_Win_fence(assert_flags, win);
}

int MPI_Win_unlock(int target_rank, MPI_Win win) {
  if (RankState::get().timed()) m::complete_own("MPI_Win_unlock", target_rank, win);
  return PMPI_Win_unlock(target_rank, win);
}

int MPI_Win_unlock_all(MPI_Win win) {
  if (RankState::get().timed()) m::complete_own("MPI_Win_unlock_all", -1, win);
  return PMPI_Win_unlock_all(win);
}

int MPI_Win_flush(int target_rank, MPI_Win win) {
  if (RankState::get().timed()) m::complete_own("MPI_Win_flush", target_rank, win);
  return PMPI_Win_flush(target_rank, win);
}

int MPI_Win_flush_all(MPI_Win win) {
  if (RankState::get().timed()) m::complete_own("MPI_Win_flush_all", -1, win);
  return PMPI_Win_flush_all(win);
}

}  // extern "C"
