// Requests beyond a plain wait or test, under the clock rule (docs/athread.md "MPI"): MPI_Testany / Testsome /
// Waitsome (completions applied in array order), persistent requests (each MPI_Start stamps a send or makes a receive
// pending, as MPI_Isend / Irecv do) and matched probes (the receive of an MPI_Mrecv / Imrecv applies the receive rule).
#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "control_clock.hpp"
#include "rank_state.hpp"

namespace ldmsim::athread::mpi {
namespace {

/// Applies the completions a Testsome / Waitsome reported, in array order (deterministic whatever order the host
/// completed them in).
void complete_some(const std::vector<MPI_Request>& keys, int outcount, int indices[], MPI_Status statuses[],
                   const char* call, Cycle begin) {
  std::vector<std::pair<int, MPI_Status>> done;
  for (int i = 0; i < outcount; ++i) done.emplace_back(indices[i], statuses[i]);
  std::sort(done.begin(), done.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [index, status] : done) {
    RankState::get().complete(keys[static_cast<std::size_t>(index)], status, call, begin);
  }
}

using SendInit = int (*)(const void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request*);

int send_init(const char* call, SendInit init, const void* buf, int count, MPI_Datatype type, int dest, int tag,
              MPI_Comm comm, MPI_Request* request) {
  RankState& rank = RankState::get();
  const int rc = init(buf, count, type, dest, tag, comm, request);
  if (rc == MPI_SUCCESS && rank.timed()) {
    rank.shadow(comm, call);  // a communicator without a shadow stops here, not at the first MPI_Start
    rank.add_persistent(*request, {call, true, comm, dest, tag, message_bytes(count, type)});
  }
  return rc;
}

}  // namespace
}  // namespace ldmsim::athread::mpi

namespace m = ldmsim::athread::mpi;
using ldmsim::athread::control_clock;
using m::message_bytes;
using m::RankState;

extern "C" {

int MPI_Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  RankState& rank = RankState::get();
  if (!rank.timed()) return PMPI_Testany(count, requests, index, flag, status);
  const std::vector<MPI_Request> keys(requests, requests + count);
  const auto begin = control_clock();
  MPI_Status local;
  MPI_Status* out = status == MPI_STATUS_IGNORE ? &local : status;
  const int rc = PMPI_Testany(count, requests, index, flag, out);
  if (rc == MPI_SUCCESS && *flag != 0 && *index != MPI_UNDEFINED) {
    rank.complete(keys[static_cast<std::size_t>(*index)], *out, "MPI_Testany", begin);
  }
  return rc;
}

int MPI_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  RankState& rank = RankState::get();
  if (!rank.timed()) return PMPI_Testsome(incount, requests, outcount, indices, statuses);
  const std::vector<MPI_Request> keys(requests, requests + incount);
  std::vector<MPI_Status> local(static_cast<std::size_t>(std::max(incount, 1)));
  MPI_Status* out = statuses == MPI_STATUSES_IGNORE ? local.data() : statuses;
  const auto begin = control_clock();
  const int rc = PMPI_Testsome(incount, requests, outcount, indices, out);
  if (rc == MPI_SUCCESS && *outcount != MPI_UNDEFINED)
    m::complete_some(keys, *outcount, indices, out, "MPI_Testsome", begin);
  return rc;
}

int MPI_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  RankState& rank = RankState::get();
  if (!rank.timed()) return PMPI_Waitsome(incount, requests, outcount, indices, statuses);
  const std::vector<MPI_Request> keys(requests, requests + incount);
  std::vector<MPI_Status> local(static_cast<std::size_t>(std::max(incount, 1)));
  MPI_Status* out = statuses == MPI_STATUSES_IGNORE ? local.data() : statuses;
  const auto begin = control_clock();
  int rc = MPI_SUCCESS;
  rank.wait_until(
      [&] {
        rc = PMPI_Testsome(incount, requests, outcount, indices, out);
        return rc != MPI_SUCCESS || *outcount != 0;
      },
      fmt::format("MPI_Waitsome ({} requests)", incount));
  if (rc == MPI_SUCCESS && *outcount != MPI_UNDEFINED)
    m::complete_some(keys, *outcount, indices, out, "MPI_Waitsome", begin);
  return rc;
}

int MPI_Send_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                  MPI_Request* request) {
  return m::send_init("MPI_Send_init", PMPI_Send_init, buf, count, type, dest, tag, comm, request);
}

int MPI_Ssend_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                   MPI_Request* request) {
  return m::send_init("MPI_Ssend_init", PMPI_Ssend_init, buf, count, type, dest, tag, comm, request);
}

int MPI_Bsend_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                   MPI_Request* request) {
  return m::send_init("MPI_Bsend_init", PMPI_Bsend_init, buf, count, type, dest, tag, comm, request);
}

int MPI_Rsend_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                   MPI_Request* request) {
  return m::send_init("MPI_Rsend_init", PMPI_Rsend_init, buf, count, type, dest, tag, comm, request);
}

int MPI_Recv_init(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request* request) {
  RankState& rank = RankState::get();
  const int rc = PMPI_Recv_init(buf, count, type, source, tag, comm, request);
  if (rc == MPI_SUCCESS && rank.timed()) {
    rank.shadow(comm, "MPI_Recv_init");
    rank.add_persistent(*request, {"MPI_Recv_init", false, comm, source, tag, message_bytes(count, type)});
  }
  return rc;
}

int MPI_Start(MPI_Request* request) {
  RankState& rank = RankState::get();
  if (rank.timed()) rank.start_persistent(*request);
  return PMPI_Start(request);
}

int MPI_Startall(int count, MPI_Request requests[]) {
  RankState& rank = RankState::get();
  // In array order, as MPI_Start one by one: the sends' gaps follow the array.
  if (rank.timed()) {
    for (int i = 0; i < count; ++i) rank.start_persistent(requests[i]);
  }
  return PMPI_Startall(count, requests);
}

int MPI_Request_free(MPI_Request* request) {
  RankState& rank = RankState::get();
  if (rank.timed()) rank.forget(*request);
  return PMPI_Request_free(request);
}

int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  RankState& rank = RankState::get();
  if (!rank.timed()) return PMPI_Mprobe(source, tag, comm, message, status);
  // No simulated time, as MPI_Probe: the MPI_Mrecv that follows applies the receive rule.
  int rc = MPI_SUCCESS;
  rank.wait_until(
      [&] {
        int found = 0;
        rc = PMPI_Improbe(source, tag, comm, &found, message, status);
        return rc != MPI_SUCCESS || found != 0;
      },
      m::describe("MPI_Mprobe", "for", source, tag, comm));
  if (rc == MPI_SUCCESS) rank.add_message(*message, comm);
  return rc;
}

int MPI_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status) {
  RankState& rank = RankState::get();
  const int rc = PMPI_Improbe(source, tag, comm, flag, message, status);
  if (rc == MPI_SUCCESS && *flag != 0 && rank.timed()) rank.add_message(*message, comm);
  return rc;
}

int MPI_Mrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message, MPI_Status* status) {
  RankState& rank = RankState::get();
  if (!rank.timed()) return PMPI_Mrecv(buf, count, type, message, status);
  const MPI_Comm comm = rank.take_message(*message);
  const auto begin = control_clock();
  MPI_Request request = MPI_REQUEST_NULL;
  const int rc = PMPI_Imrecv(buf, count, type, message, &request);
  if (rc != MPI_SUCCESS) return rc;
  MPI_Status local;
  MPI_Status* out = status == MPI_STATUS_IGNORE ? &local : status;
  rank.wait(&request, out, "MPI_Mrecv");
  if (comm != MPI_COMM_NULL) rank.complete_receive(comm, *out, "MPI_Mrecv", begin);
  return MPI_SUCCESS;
}

int MPI_Imrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message, MPI_Request* request) {
  RankState& rank = RankState::get();
  if (!rank.timed()) return PMPI_Imrecv(buf, count, type, message, request);
  const MPI_Comm comm = rank.take_message(*message);
  const int rc = PMPI_Imrecv(buf, count, type, message, request);
  if (rc == MPI_SUCCESS && comm != MPI_COMM_NULL) rank.add_pending(*request, {comm, MPI_ANY_SOURCE, MPI_ANY_TAG});
  return rc;
}

}  // extern "C"
