// Point-to-point MPI calls under the clock rule (docs/athread.md "MPI"): every send carries its send time on the
// communicator's shadow, every completed receive moves the rank's clock to max(clock + o, send time + transfer
// time). Blocking calls wait by PMPI_Test under the watchdog. With LDMSIM_MPI_TIMING=off each call is its PMPI_ twin.
#include <fmt/format.h>
#include <mpi.h>

#include <string>
#include <vector>

#include "control_clock.hpp"
#include "rank_state.hpp"

namespace ldmsim::athread::mpi {
namespace {

std::string peer_name(int peer) {
  if (peer == MPI_ANY_SOURCE) return "any rank";
  if (peer == MPI_PROC_NULL) return "MPI_PROC_NULL";
  return fmt::format("rank {}", peer);
}

std::string comm_name(MPI_Comm comm) {
  if (comm == MPI_COMM_WORLD) return "MPI_COMM_WORLD";
  int size = 0;
  PMPI_Comm_size(comm, &size);
  return fmt::format("a communicator of {} ranks", size);
}

}  // namespace

std::string describe(const char* call, const char* direction, int peer, int tag, MPI_Comm comm) {
  const std::string tag_text = tag == MPI_ANY_TAG ? "any tag" : fmt::format("tag {}", tag);
  return fmt::format("{} {} {} ({}) on {}", call, direction, peer_name(peer), tag_text, comm_name(comm));
}

namespace {

using BlockingSend = int (*)(const void*, int, MPI_Datatype, int, int, MPI_Comm);
using StartSend = int (*)(const void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request*);

int blocking_send(const char* call, BlockingSend blocking, StartSend start, const void* buf, int count,
                  MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  RankState& rank = RankState::get();
  if (!rank.timed()) return blocking(buf, count, type, dest, tag, comm);
  if (dest != MPI_PROC_NULL) rank.stamp_send(comm, dest, tag, message_bytes(count, type), call);
  MPI_Request request = MPI_REQUEST_NULL;
  const int rc = start(buf, count, type, dest, tag, comm, &request);
  if (rc != MPI_SUCCESS) return rc;
  rank.wait(&request, MPI_STATUS_IGNORE, describe(call, "to", dest, tag, comm));
  return MPI_SUCCESS;
}

int start_send(const char* call, StartSend start, const void* buf, int count, MPI_Datatype type, int dest, int tag,
               MPI_Comm comm, MPI_Request* request) {
  RankState& rank = RankState::get();
  if (rank.timed() && dest != MPI_PROC_NULL) rank.stamp_send(comm, dest, tag, message_bytes(count, type), call);
  const int rc = start(buf, count, type, dest, tag, comm, request);
  // A receive completed by a call that is not intercepted leaves its entry; MPI may reuse the handle for this send.
  PendingReceive stale;
  if (rc == MPI_SUCCESS && rank.timed()) rank.take_pending(*request, stale);
  return rc;
}

/// Completes a request of a wait or test (RankState::complete).
void complete(MPI_Request key, const MPI_Status& status, const char* call, Cycle begin) {
  RankState::get().complete(key, status, call, begin);
}

}  // namespace
}  // namespace ldmsim::athread::mpi

using ldmsim::athread::control_clock;
using ldmsim::athread::mpi::blocking_send;
using ldmsim::athread::mpi::complete;
using ldmsim::athread::mpi::describe;
using ldmsim::athread::mpi::RankState;
using ldmsim::athread::mpi::start_send;

extern "C" {

int MPI_Send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  return blocking_send("MPI_Send", PMPI_Send, PMPI_Isend, buf, count, type, dest, tag, comm);
}

int MPI_Ssend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  return blocking_send("MPI_Ssend", PMPI_Ssend, PMPI_Issend, buf, count, type, dest, tag, comm);
}

int MPI_Bsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  return blocking_send("MPI_Bsend", PMPI_Bsend, PMPI_Ibsend, buf, count, type, dest, tag, comm);
}

int MPI_Rsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  return blocking_send("MPI_Rsend", PMPI_Rsend, PMPI_Irsend, buf, count, type, dest, tag, comm);
}

int MPI_Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  return start_send("MPI_Isend", PMPI_Isend, buf, count, type, dest, tag, comm, request);
}

int MPI_Issend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  return start_send("MPI_Issend", PMPI_Issend, buf, count, type, dest, tag, comm, request);
}

int MPI_Ibsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  return start_send("MPI_Ibsend", PMPI_Ibsend, buf, count, type, dest, tag, comm, request);
}

int MPI_Irsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  return start_send("MPI_Irsend", PMPI_Irsend, buf, count, type, dest, tag, comm, request);
}

int MPI_Recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  RankState& rank = RankState::get();
  if (!rank.timed()) return PMPI_Recv(buf, count, type, source, tag, comm, status);
  const auto begin = control_clock();
  MPI_Request request = MPI_REQUEST_NULL;
  const int rc = PMPI_Irecv(buf, count, type, source, tag, comm, &request);
  if (rc != MPI_SUCCESS) return rc;
  MPI_Status local;
  MPI_Status* out = status == MPI_STATUS_IGNORE ? &local : status;
  rank.wait(&request, out, describe("MPI_Recv", "from", source, tag, comm));
  rank.complete_receive(comm, *out, "MPI_Recv", begin);
  return MPI_SUCCESS;
}

int MPI_Irecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request* request) {
  RankState& rank = RankState::get();
  const int rc = PMPI_Irecv(buf, count, type, source, tag, comm, request);
  if (rc == MPI_SUCCESS && rank.timed()) rank.add_pending(*request, {comm, source, tag});
  return rc;
}

int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  RankState& rank = RankState::get();
  if (!rank.timed()) return PMPI_Wait(request, status);
  const MPI_Request key = *request;
  const auto begin = control_clock();
  MPI_Status local;
  MPI_Status* out = status == MPI_STATUS_IGNORE ? &local : status;
  rank.wait(request, out, "MPI_Wait");
  complete(key, *out, "MPI_Wait", begin);
  return MPI_SUCCESS;
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  RankState& rank = RankState::get();
  if (!rank.timed()) return PMPI_Waitall(count, requests, statuses);
  // In array order: deterministic whatever order the messages arrive in on the host.
  for (int i = 0; i < count; ++i) {
    const MPI_Request key = requests[i];
    const auto begin = control_clock();
    MPI_Status local;
    MPI_Status* out = statuses == MPI_STATUSES_IGNORE ? &local : &statuses[i];
    rank.wait(&requests[i], out, fmt::format("MPI_Waitall (request {} of {})", i, count));
    complete(key, *out, "MPI_Waitall", begin);
  }
  return MPI_SUCCESS;
}

int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  RankState& rank = RankState::get();
  if (!rank.timed()) return PMPI_Waitany(count, requests, index, status);
  const std::vector<MPI_Request> keys(requests, requests + count);
  const auto begin = control_clock();
  MPI_Status local;
  MPI_Status* out = status == MPI_STATUS_IGNORE ? &local : status;
  rank.wait_until(
      [&] {
        int done = 0;
        PMPI_Testany(count, requests, index, &done, out);
        return done != 0;
      },
      fmt::format("MPI_Waitany ({} requests)", count));
  if (*index != MPI_UNDEFINED) complete(keys[static_cast<std::size_t>(*index)], *out, "MPI_Waitany", begin);
  return MPI_SUCCESS;
}

int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  RankState& rank = RankState::get();
  if (!rank.timed()) return PMPI_Test(request, flag, status);
  const MPI_Request key = *request;
  const auto begin = control_clock();
  MPI_Status local;
  MPI_Status* out = status == MPI_STATUS_IGNORE ? &local : status;
  const int rc = PMPI_Test(request, flag, out);
  if (rc == MPI_SUCCESS && *flag != 0) complete(key, *out, "MPI_Test", begin);
  return rc;
}

int MPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  RankState& rank = RankState::get();
  if (!rank.timed()) return PMPI_Testall(count, requests, flag, statuses);
  const std::vector<MPI_Request> keys(requests, requests + count);
  std::vector<MPI_Status> local(static_cast<std::size_t>(count));
  MPI_Status* out = statuses == MPI_STATUSES_IGNORE ? local.data() : statuses;
  const auto begin = control_clock();
  const int rc = PMPI_Testall(count, requests, flag, out);
  if (rc == MPI_SUCCESS && *flag != 0) {
    for (int i = 0; i < count; ++i) complete(keys[static_cast<std::size_t>(i)], out[i], "MPI_Testall", begin);
  }
  return rc;
}

int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  RankState& rank = RankState::get();
  if (!rank.timed()) {
    return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag,
                         comm, status);
  }
  const auto begin = control_clock();
  MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  int rc = PMPI_Irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, &requests[1]);
  if (rc != MPI_SUCCESS) return rc;
  if (dest != MPI_PROC_NULL)
    rank.stamp_send(comm, dest, sendtag, ldmsim::athread::mpi::message_bytes(sendcount, sendtype), "MPI_Sendrecv");
  rc = PMPI_Isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, &requests[0]);
  if (rc != MPI_SUCCESS) return rc;
  MPI_Status local;
  MPI_Status* out = status == MPI_STATUS_IGNORE ? &local : status;
  rank.wait(&requests[0], MPI_STATUS_IGNORE, describe("MPI_Sendrecv", "sending to", dest, sendtag, comm));
  rank.wait(&requests[1], out, describe("MPI_Sendrecv", "receiving from", source, recvtag, comm));
  rank.complete_receive(comm, *out, "MPI_Sendrecv", begin);
  return MPI_SUCCESS;
}

int MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype type, int dest, int sendtag, int source, int recvtag,
                         MPI_Comm comm, MPI_Status* status) {
  RankState& rank = RankState::get();
  if (!rank.timed()) return PMPI_Sendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm, status);
  const auto begin = control_clock();
  if (dest != MPI_PROC_NULL) {
    rank.stamp_send(comm, dest, sendtag, ldmsim::athread::mpi::message_bytes(count, type), "MPI_Sendrecv_replace");
  }
  MPI_Status local;
  MPI_Status* out = status == MPI_STATUS_IGNORE ? &local : status;
  // Blocking in PMPI (one buffer for both directions): not under the watchdog.
  const int rc = PMPI_Sendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm, out);
  if (rc != MPI_SUCCESS) return rc;
  rank.complete_receive(comm, *out, "MPI_Sendrecv_replace", begin);
  return MPI_SUCCESS;
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  RankState& rank = RankState::get();
  if (!rank.timed()) return PMPI_Probe(source, tag, comm, status);
  // No simulated time: the receive that follows applies the clock rule.
  rank.wait_until(
      [&] {
        int found = 0;
        PMPI_Iprobe(source, tag, comm, &found, status);
        return found != 0;
      },
      describe("MPI_Probe", "for", source, tag, comm));
  return MPI_SUCCESS;
}

}  // extern "C"
