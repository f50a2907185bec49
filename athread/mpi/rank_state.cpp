// The rank's simulated-time bookkeeping (rank_state.hpp). Lock order: the athread session's functions are never
// called while mutex_ is held (the session calls summary() / report() under its own lock).
#include "rank_state.hpp"

#include <fmt/format.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <stdexcept>

#include "control_clock.hpp"

namespace ldmsim::athread::mpi {

std::uint64_t message_bytes(int count, MPI_Datatype type) {
  int size = 0;
  PMPI_Type_size(type, &size);
  return count > 0 && size > 0 ? static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(size) : 0;
}

RankState& RankState::get() {
  static RankState state;
  return state;
}

void RankState::initialize() {
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  PMPI_Comm_size(MPI_COMM_WORLD, &size_);
  try {
    model_ = NetworkModel::from_environment(simulated_clock_hz());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ldmsim mpi: rank %d: %s\n", rank_, e.what());
    PMPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (model_.timed) {
    add_shadow(MPI_COMM_WORLD);
    add_shadow(MPI_COMM_SELF);
  }
  enable_mpi(rank_, size_,
             MpiReport{[this] { return summary(); }, [this] { return report(); }, [this] { return stats(); }});
}

MPI_Comm RankState::shadow(MPI_Comm comm, const char* call) {
  {
    const std::lock_guard lock(mutex_);
    if (const auto it = shadows_.find(comm); it != shadows_.end()) return it->second;
  }
  std::fprintf(stderr,
               "ldmsim mpi: rank %d: %s on a communicator that was not made by a call ldmsim intercepts "
               "(MPI_Comm_dup, MPI_Comm_split, MPI_Comm_split_type, MPI_Comm_create, MPI_Cart_create, MPI_Cart_sub): "
               "its messages cannot carry their send times\n",
               rank_, call);
  PMPI_Abort(MPI_COMM_WORLD, 2);
  std::abort();  // PMPI_Abort does not return
}

void RankState::add_shadow(MPI_Comm comm) {
  MPI_Comm twin = MPI_COMM_NULL;
  PMPI_Comm_dup(comm, &twin);
  const std::lock_guard lock(mutex_);
  shadows_[comm] = twin;
}

void RankState::free_shadow(MPI_Comm comm) {
  MPI_Comm twin = MPI_COMM_NULL;
  {
    const std::lock_guard lock(mutex_);
    const auto it = shadows_.find(comm);
    if (it == shadows_.end()) return;
    twin = it->second;
    shadows_.erase(it);
  }
  PMPI_Comm_free(&twin);
}

void RankState::stamp_send(MPI_Comm comm, int dest, int tag, std::uint64_t bytes, const char* call) {
  const MPI_Comm twin = shadow(comm, call);
  const Cycle now = control_clock();
  const Cycle start = next_send_start();
  {
    const std::lock_guard lock(mutex_);
    reap_sends();
    bytes_sent_ += bytes;
    stamps_in_flight_.emplace_back(MPI_REQUEST_NULL, Stamp{start, bytes});
    auto& [request, stamp] = stamps_in_flight_.back();
    PMPI_Isend(&stamp, 2, MPI_UINT64_T, dest, tag, twin, &request);
  }
  const Cycle end = start + model_.send_busy(bytes);
  advance_control_clock(end);
  record({call, now, end, dest, bytes, end, end});
}

Cycle RankState::next_send_start() {
  const Cycle now = control_clock();
  const std::lock_guard lock(mutex_);
  // One gap between the starts of two sends of this rank.
  const Cycle start = has_sent_ ? std::max(now, last_send_ + model_.gap()) : now;
  has_sent_ = true;
  last_send_ = start;
  return start;
}

void RankState::complete_receive(MPI_Comm comm, const MPI_Status& status, const char* call, Cycle begin) {
  const int source = status.MPI_SOURCE;
  int cancelled = 0;
  PMPI_Test_cancelled(&status, &cancelled);
  if (source == MPI_PROC_NULL || cancelled != 0) return;
  const MPI_Comm twin = shadow(comm, call);
  Stamp stamp;
  MPI_Request request = MPI_REQUEST_NULL;
  PMPI_Irecv(&stamp, 2, MPI_UINT64_T, source, status.MPI_TAG, twin, &request);
  wait(&request, MPI_STATUS_IGNORE,
       fmt::format("{} for the send time of the message from rank {} (tag {}), which arrived: was it sent by a call "
                   "ldmsim does not intercept (MPI_Send_init / MPI_Start, one-sided)?",
                   call, source, status.MPI_TAG));
  const Cycle now = control_clock();
  const Cycle ready = now + model_.overhead();
  const Cycle arrival = stamp.send_cycle + model_.transfer(stamp.bytes);
  const Cycle end = std::max(ready, arrival);
  {
    const std::lock_guard lock(mutex_);
    wait_cycles_ += end - ready;
    bytes_received_ += stamp.bytes;
  }
  advance_control_clock(end);
  record({call, begin, end, source, stamp.bytes, ready, end});
}

void RankState::add_pending(MPI_Request request, PendingReceive receive) {
  const std::lock_guard lock(mutex_);
  pending_[request] = receive;
}

bool RankState::take_pending(MPI_Request request, PendingReceive& out) {
  const std::lock_guard lock(mutex_);
  const auto it = pending_.find(request);
  if (it == pending_.end()) return false;
  out = it->second;
  pending_.erase(it);
  return true;
}

void RankState::add_local_completion(MPI_Request request, Cycle done) {
  const std::lock_guard lock(mutex_);
  pending_.erase(request);  // as in start_collective
  local_completions_[request] = done;
}

void RankState::complete(MPI_Request key, const MPI_Status& status, const char* call, Cycle begin) {
  PendingReceive receive;
  if (take_pending(key, receive)) {
    complete_receive(receive.comm, status, call, begin);
    return;
  }
  std::optional<Cycle> done;
  {
    const std::lock_guard lock(mutex_);
    if (const auto it = local_completions_.find(key); it != local_completions_.end()) {
      done = it->second;
      local_completions_.erase(it);
    }
  }
  if (done) {
    const Cycle now = control_clock();
    const Cycle end = std::max(now, *done);
    {
      const std::lock_guard lock(mutex_);
      wait_cycles_ += end - now;
    }
    advance_control_clock(end);
    record({call, begin, end, -1, 0, now, end});
    return;
  }
  std::unique_ptr<PendingCollective> collective;
  {
    const std::lock_guard lock(mutex_);
    const auto it = collectives_.find(key);
    if (it == collectives_.end()) return;
    collective = std::move(it->second);
    collectives_.erase(it);
  }
  wait(&collective->timing, MPI_STATUS_IGNORE,
       fmt::format("{} for the entry times of the other ranks in {}", call, collective->call));
  const Cycle now = control_clock();
  const Cycle end = std::max(now, collective->latest[0] + collective->latest[1]);
  {
    const std::lock_guard lock(mutex_);
    wait_cycles_ += end - now;
    collective_bytes_ += collective->bytes;
  }
  advance_control_clock(end);
  record({collective->call, begin, end, -1, collective->bytes, now, end});
}

void RankState::start_collective(MPI_Comm comm, const char* call, Cycle cost, std::uint64_t bytes,
                                 MPI_Request request) {
  const MPI_Comm twin = shadow(comm, call);
  auto collective = std::make_unique<PendingCollective>();
  collective->call = call;
  collective->mine[0] = collective->latest[0] = control_clock();
  collective->mine[1] = collective->latest[1] = cost;
  collective->bytes = bytes;
  PMPI_Iallreduce(collective->mine, collective->latest, 2, MPI_UINT64_T, MPI_MAX, twin, &collective->timing);
  const std::lock_guard lock(mutex_);
  // A request completed by a call not intercepted may have left this handle behind; a collective's timing buffers
  // must outlive its reduction, so an old one is kept until finish().
  pending_.erase(request);
  local_completions_.erase(request);
  if (auto& old = collectives_[request]; old) freed_collectives_.push_back(std::move(old));
  collectives_[request] = std::move(collective);
}

void RankState::add_persistent(MPI_Request request, PersistentRequest persistent) {
  const std::lock_guard lock(mutex_);
  pending_.erase(request);  // as in start_collective
  persistent_[request] = persistent;
}

void RankState::start_persistent(MPI_Request request) {
  PersistentRequest persistent;
  {
    const std::lock_guard lock(mutex_);
    const auto it = persistent_.find(request);
    if (it == persistent_.end()) return;
    persistent = it->second;
  }
  if (persistent.peer == MPI_PROC_NULL) return;
  if (persistent.send) {
    stamp_send(persistent.comm, persistent.peer, persistent.tag, persistent.bytes, persistent.call);
  } else {
    add_pending(request, {persistent.comm, persistent.peer, persistent.tag});
  }
}

void RankState::forget(MPI_Request request) {
  const std::lock_guard lock(mutex_);
  persistent_.erase(request);
  pending_.erase(request);
  local_completions_.erase(request);
  if (const auto it = collectives_.find(request); it != collectives_.end()) {
    freed_collectives_.push_back(std::move(it->second));
    collectives_.erase(it);
  }
}

void RankState::add_message(MPI_Message message, MPI_Comm comm) {
  const std::lock_guard lock(mutex_);
  messages_[message] = comm;
}

MPI_Comm RankState::take_message(MPI_Message message) {
  const std::lock_guard lock(mutex_);
  const auto it = messages_.find(message);
  if (it == messages_.end()) return MPI_COMM_NULL;
  const MPI_Comm comm = it->second;
  messages_.erase(it);
  return comm;
}

void RankState::wait_until(const std::function<bool()>& poll, const std::string& what) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  for (unsigned spins = 1;; ++spins) {
    if (poll()) return;
    if (spins % 64 != 0) continue;
    sched_yield();  // ranks are often oversubscribed on one host
    if (model_.watchdog_seconds > 0) {
      const double waited = std::chrono::duration<double>(Clock::now() - start).count();
      if (waited > model_.watchdog_seconds) report_hang(what, waited);
    }
  }
}

void RankState::wait(MPI_Request* request, MPI_Status* status, const std::string& what) {
  wait_until(
      [&] {
        int done = 0;
        PMPI_Test(request, &done, status);
        return done != 0;
      },
      what);
}

void RankState::time_collective(MPI_Comm comm, const char* call, Cycle cost, std::uint64_t bytes, Cycle ready) {
  const MPI_Comm twin = shadow(comm, call);
  const Cycle begin = control_clock();
  const std::uint64_t mine[2] = {std::max(begin, ready), cost};
  std::uint64_t latest[2] = {begin, cost};
  MPI_Request request = MPI_REQUEST_NULL;
  PMPI_Iallreduce(mine, latest, 2, MPI_UINT64_T, MPI_MAX, twin, &request);
  wait(&request, MPI_STATUS_IGNORE, fmt::format("{} (waiting for every rank of its communicator to enter it)", call));
  {
    const std::lock_guard lock(mutex_);
    wait_cycles_ += latest[0] - begin;
    collective_bytes_ += bytes;
  }
  const Cycle end = latest[0] + latest[1];
  advance_control_clock(end);
  record({call, begin, end, -1, bytes, begin, latest[0]});
}

void RankState::wait_for_own(const char* call, int peer, Cycle until) {
  const Cycle begin = control_clock();
  const Cycle end = std::max(begin, until);
  {
    const std::lock_guard lock(mutex_);
    wait_cycles_ += end - begin;
  }
  advance_control_clock(end);
  record({call, begin, end, peer, 0, begin, end});
}

void RankState::record(CallRecord call) {
  const std::lock_guard lock(mutex_);
  ++calls_made_;
  mpi_cycles_ += call.end - call.begin;
  PerCall& per = per_call_[call.name];
  ++per.calls;
  per.bytes += call.bytes;
  per.cycles += call.end - call.begin;
  if (calls_.size() < kMaxCallRecords) calls_.push_back(std::move(call));
}

void RankState::reap_sends() {
  while (!stamps_in_flight_.empty()) {
    int done = 0;
    PMPI_Test(&stamps_in_flight_.front().first, &done, MPI_STATUS_IGNORE);
    if (done == 0) return;
    stamps_in_flight_.pop_front();
  }
}

void RankState::finish() {
  std::vector<MPI_Comm> twins;
  {
    const std::lock_guard lock(mutex_);
    for (auto& [request, stamp] : stamps_in_flight_) PMPI_Wait(&request, MPI_STATUS_IGNORE);
    stamps_in_flight_.clear();
    // Non-blocking collectives whose completion the program never asked for (MPI_Request_free): their timing too.
    for (auto& [request, collective] : collectives_) PMPI_Wait(&collective->timing, MPI_STATUS_IGNORE);
    collectives_.clear();
    for (auto& collective : freed_collectives_) PMPI_Wait(&collective->timing, MPI_STATUS_IGNORE);
    freed_collectives_.clear();
    for (const auto& [comm, twin] : shadows_) twins.push_back(twin);
    shadows_.clear();
  }
  for (MPI_Comm& twin : twins) PMPI_Comm_free(&twin);
}

std::string RankState::summary() const {
  const std::lock_guard lock(mutex_);
  if (!model_.timed) return "MPI timing off";
  return fmt::format("MPI: {} calls, {} cycles in them ({} waiting)", calls_made_, mpi_cycles_, wait_cycles_);
}

namespace {

/// The network model's parameters as the trace header and the statistics file both give them.
nlohmann::json model_json(const NetworkModel& model) {
  return {{"overhead_ns", model.overhead_ns},
          {"latency_ns", model.latency_ns},
          {"gap_ns", model.gap_ns},
          {"ns_per_byte", model.ns_per_byte}};
}

}  // namespace

nlohmann::json RankState::report() const {
  const std::lock_guard lock(mutex_);
  nlohmann::json calls = nlohmann::json::array();
  for (const CallRecord& call : calls_) {
    calls.push_back({call.name, call.begin, call.end, call.peer, call.bytes, call.wait_begin, call.wait_end});
  }
  return {{"rank", rank_},
          {"size", size_},
          {"timed", model_.timed},
          {"model", model_json(model_)},
          {"calls_made", calls_made_},
          {"mpi_cycles", mpi_cycles_},
          {"wait_cycles", wait_cycles_},
          {"calls_columns", {"name", "begin", "end", "peer", "bytes", "wait_begin", "wait_end"}},
          {"calls", std::move(calls)},
          {"calls_not_listed", calls_made_ - calls_.size()}};
}

void RankState::set_makespan(Cycle cycles) {
  const std::lock_guard lock(mutex_);
  makespan_ = cycles;
}

nlohmann::json RankState::stats() const {
  const std::lock_guard lock(mutex_);
  nlohmann::json per_call = nlohmann::json::object();
  for (const auto& [name, per] : per_call_) {
    per_call[name] = {{"calls", per.calls}, {"bytes", per.bytes}, {"cycles", per.cycles}};
  }
  return {{"rank", rank_},
          {"size", size_},
          {"timed", model_.timed},
          {"model", model_json(model_)},
          {"makespan_cycles", makespan_ ? nlohmann::json(*makespan_) : nlohmann::json()},
          {"calls_made", calls_made_},
          {"mpi_cycles", mpi_cycles_},
          {"wait_cycles", wait_cycles_},
          {"bytes_sent", bytes_sent_},
          {"bytes_received", bytes_received_},
          {"collective_bytes", collective_bytes_},
          {"calls", std::move(per_call)}};
}

void RankState::report_hang(const std::string& what, double waited) {
  std::fprintf(stderr,
               "ldmsim mpi: rank %d of %d: no progress for %.0f s of host time (LDMSIM_MPI_WATCHDOG_SECONDS=%g) in %s, "
               "at simulated cycle %llu: a hang across ranks\n",
               rank_, size_, waited, model_.watchdog_seconds, what.c_str(),
               static_cast<unsigned long long>(control_clock()));
  std::fflush(stderr);
  write_outputs_before_abort("MPI hang");
  // The other ranks stuck in the same hang reach their own deadline about now: give them time to say where they wait.
  sleep(2);
  PMPI_Abort(MPI_COMM_WORLD, 3);
  std::abort();
}

}  // namespace ldmsim::athread::mpi
