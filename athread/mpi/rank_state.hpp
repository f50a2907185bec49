// One MPI rank's view of simulated time (docs/athread.md "MPI"): the network model, a shadow communicator per
// program communicator that carries each message's send time, the receives in flight, the MPI calls made (for the
// trace header and the summary line), and the host-time watchdog every blocking call waits under.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "network_model.hpp"

namespace ldmsim::athread::mpi {

/// What travels on the shadow communicator after each message: when its send started and its size.
struct Stamp {
  std::uint64_t send_cycle = 0;
  std::uint64_t bytes = 0;
};

/// A receive posted with MPI_Irecv whose completion (MPI_Wait / Test ...) applies the clock rule.
struct PendingReceive {
  MPI_Comm comm = MPI_COMM_NULL;
  int source = 0;
  int tag = 0;
};

/// A non-blocking collective in flight: its timing (the max of the entry clocks and costs) travels on the shadow
/// communicator beside the data, and its completion applies the collective's rule.
struct PendingCollective {
  std::string call;
  MPI_Request timing = MPI_REQUEST_NULL;
  std::uint64_t mine[2] = {0, 0};  // entry clock, cost
  std::uint64_t latest[2] = {0, 0};
  std::uint64_t bytes = 0;
};

/// A persistent request (MPI_Send_init / Recv_init and kin): what each MPI_Start starts.
struct PersistentRequest {
  const char* call = "";
  bool send = false;
  MPI_Comm comm = MPI_COMM_NULL;
  int peer = 0;
  int tag = 0;
  std::uint64_t bytes = 0;
};

/// One MPI call as the trace header records it.
struct CallRecord {
  std::string name;
  Cycle begin = 0;
  Cycle end = 0;
  int peer = -1;  // -1: a collective, or no single peer
  std::uint64_t bytes = 0;
  // The part of [begin, end) spent waiting for a message or for other ranks (empty: none; at end).
  Cycle wait_begin = 0;
  Cycle wait_end = 0;
};

class RankState {
 public:
  /// The process's state (made at MPI_Init).
  static RankState& get();

  /// After PMPI_Init: rank, size, model (exits with status 2 on a bad environment variable), shadow communicators of
  /// MPI_COMM_WORLD and MPI_COMM_SELF, and MPI mode in the athread session.
  void initialize();
  bool timed() const { return model_.timed; }
  const NetworkModel& model() const { return model_; }
  int rank() const { return rank_; }

  /// The shadow of `comm`; exits through the hang/abort path naming `call` when `comm` was not made by an
  /// intercepted call (its messages could not carry their send times).
  MPI_Comm shadow(MPI_Comm comm, const char* call);
  /// Makes the shadow of a communicator the program just created (collective over `comm`, as its creation was).
  void add_shadow(MPI_Comm comm);
  void free_shadow(MPI_Comm comm);

  /// Sender side of a message of `bytes` to `dest`: its send time (the control core's clock, no earlier than one gap
  /// after the previous send), the stamp sent on the shadow communicator, and the sender's busy time charged.
  void stamp_send(MPI_Comm comm, int dest, int tag, std::uint64_t bytes, const char* call);
  /// The start of a send (or one-sided put, get, accumulate) the control core begins now: no earlier than one gap
  /// after the rank's previous one.
  Cycle next_send_start();
  /// Receiver side, once the data of a receive has arrived (status names source and tag): receives its stamp and
  /// moves the clock to max(clock + o, send time + transfer time).
  void complete_receive(MPI_Comm comm, const MPI_Status& status, const char* call, Cycle begin);

  void add_pending(MPI_Request request, PendingReceive receive);
  /// The pending receive of `request`, removed; false when it is not one.
  bool take_pending(MPI_Request request, PendingReceive& out);
  /// Completes request `key` (its handle before the wait or test that completed it): a receive applies the
  /// receive rule, a non-blocking collective the collective's; anything else takes no simulated time.
  void complete(MPI_Request key, const MPI_Status& status, const char* call, Cycle begin);

  /// A request-based one-sided operation (MPI_Rput, Rget ...) started as `request`: the wait or test that completes
  /// it moves the clock to `done`.
  void add_local_completion(MPI_Request request, Cycle done);

  /// After a non-blocking collective started as `request`: its entry clock and cost start their max on the shadow.
  void start_collective(MPI_Comm comm, const char* call, Cycle cost, std::uint64_t bytes, MPI_Request request);

  void add_persistent(MPI_Request request, PersistentRequest persistent);
  /// MPI_Start of `request`: a persistent send stamps its send time, a persistent receive becomes pending.
  void start_persistent(MPI_Request request);
  /// MPI_Request_free: forgets whatever `request` was.
  void forget(MPI_Request request);

  /// The communicator of a message a matched probe returned (MPI_Mrecv / Imrecv do not name one).
  void add_message(MPI_Message message, MPI_Comm comm);
  MPI_Comm take_message(MPI_Message message);

  /// Calls `poll` until it returns true, under the watchdog; `what` describes the wait for the hang report.
  void wait_until(const std::function<bool()>& poll, const std::string& what);
  /// Waits for `request` (PMPI_Test under the watchdog).
  void wait(MPI_Request* request, MPI_Status* status, const std::string& what);
  /// A collective's timing: the entry clocks and the costs of `comm`'s ranks combined by a max (under the watchdog;
  /// ranks may see different sizes, as MPI_IN_PLACE or insignificant arguments make them), every rank leaving at the
  /// latest entry plus the cost.
  /// `bytes`: the rank's payload (for the stats).
  /// `ready`: the rank enters no earlier than it (MPI_Win_fence: when its one-sided operations complete).
  void time_collective(MPI_Comm comm, const char* call, Cycle cost, std::uint64_t bytes = 0, Cycle ready = 0);
  /// A call that waits for nothing but this rank's own operations to complete at `until`: the clock moves there
  /// (waiting, when it is later than now) and the call is recorded.
  void wait_for_own(const char* call, int peer, Cycle until);

  void record(CallRecord call);
  /// The latest rank's clock at MPI_Finalize (the run's makespan).
  void set_makespan(Cycle cycles);
  /// Completes the stamps still in flight and frees the shadows (MPI_Finalize, before PMPI_Finalize).
  void finish();

  std::string summary() const;
  nlohmann::json report() const;
  /// The "mpi" section of the stats file: totals, bytes, and calls, cycles and bytes per MPI function.
  nlohmann::json stats() const;

 private:
  [[noreturn]] void report_hang(const std::string& what, double waited);
  void reap_sends();

  NetworkModel model_;
  int rank_ = 0;
  int size_ = 1;
  mutable std::mutex mutex_;
  std::map<MPI_Comm, MPI_Comm> shadows_;
  std::map<MPI_Request, PendingReceive> pending_;
  std::map<MPI_Request, std::unique_ptr<PendingCollective>> collectives_;  // unique_ptr: the buffers must not move
  std::map<MPI_Request, PersistentRequest> persistent_;
  std::map<MPI_Request, Cycle> local_completions_;  // request-based one-sided operations: when each is done
  std::map<MPI_Message, MPI_Comm> messages_;
  std::vector<std::unique_ptr<PendingCollective>> freed_collectives_;  // MPI_Request_free'd: timed out at finish
  // Stamps sent with PMPI_Isend, kept until complete (a deque: the buffers must not move).
  std::deque<std::pair<MPI_Request, Stamp>> stamps_in_flight_;
  bool has_sent_ = false;
  Cycle last_send_ = 0;
  std::vector<CallRecord> calls_;
  std::uint64_t calls_made_ = 0;
  Cycle mpi_cycles_ = 0;   // simulated time spent in MPI calls
  Cycle wait_cycles_ = 0;  // of which waiting for messages or for other ranks
  std::uint64_t bytes_sent_ = 0;
  std::uint64_t bytes_received_ = 0;
  std::uint64_t collective_bytes_ = 0;
  struct PerCall {
    std::uint64_t calls = 0;
    std::uint64_t bytes = 0;
    Cycle cycles = 0;
  };
  std::map<std::string, PerCall> per_call_;
  std::optional<Cycle> makespan_;
};

/// "MPI_Recv from rank 1 (tag 7) on MPI_COMM_WORLD", for the hang report.
std::string describe(const char* call, const char* direction, int peer, int tag, MPI_Comm comm);
/// The payload size of `count` elements of `type`.
std::uint64_t message_bytes(int count, MPI_Datatype type);
/// Call records kept for the trace header (later calls are counted, not listed).
inline constexpr std::size_t kMaxCallRecords = 100000;

}  // namespace ldmsim::athread::mpi
