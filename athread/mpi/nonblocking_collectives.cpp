// Non-blocking collectives (docs/athread.md "MPI"): the call starts the data's PMPI_I<collective> and, on the shadow
// communicator, the max of the ranks' entry clocks and costs; the wait or test that completes the request moves the
// clock to max(clock, latest entry + cost), so computing between the start and the wait overlaps the collective.
// The costs are the blocking forms' (collective_costs.hpp).
#include <mpi.h>

#include "collective_costs.hpp"
#include "rank_state.hpp"

namespace ldmsim::athread::mpi {
namespace {

int started(int rc, MPI_Comm comm, const char* call, CollectiveCost cost, const MPI_Request* request) {
  if (rc == MPI_SUCCESS) RankState::get().start_collective(comm, call, cost.cycles, cost.bytes, *request);
  return rc;
}

}  // namespace
}  // namespace ldmsim::athread::mpi

namespace m = ldmsim::athread::mpi;
using m::message_bytes;
using m::RankState;

extern "C" {

int MPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  RankState& rank = RankState::get();
  const int rc = PMPI_Ibarrier(comm, request);
  if (!rank.timed()) return rc;
  return m::started(rc, comm, "MPI_Ibarrier", m::barrier_cost(rank.model(), comm), request);
}

int MPI_Ibcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request* request) {
  RankState& rank = RankState::get();
  const int rc = PMPI_Ibcast(buffer, count, type, root, comm, request);
  if (!rank.timed()) return rc;
  return m::started(rc, comm, "MPI_Ibcast", m::tree_cost(rank.model(), comm, message_bytes(count, type)), request);
}

int MPI_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm,
                MPI_Request* request) {
  RankState& rank = RankState::get();
  const int rc = PMPI_Ireduce(sendbuf, recvbuf, count, type, op, root, comm, request);
  if (!rank.timed()) return rc;
  return m::started(rc, comm, "MPI_Ireduce", m::tree_cost(rank.model(), comm, message_bytes(count, type)), request);
}

int MPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                   MPI_Request* request) {
  RankState& rank = RankState::get();
  const int rc = PMPI_Iallreduce(sendbuf, recvbuf, count, type, op, comm, request);
  if (!rank.timed()) return rc;
  return m::started(rc, comm, "MPI_Iallreduce", m::ring_allreduce_cost(rank.model(), comm, message_bytes(count, type)),
                    request);
}

int MPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                   MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  RankState& rank = RankState::get();
  const int rc = PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
  if (!rank.timed()) return rc;
  return m::started(rc, comm, "MPI_Iallgather", m::steps_cost(rank.model(), comm, message_bytes(recvcount, recvtype)),
                    request);
}

int MPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  RankState& rank = RankState::get();
  const int rc = PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
  if (!rank.timed()) return rc;
  const std::uint64_t bytes =
      sendbuf == MPI_IN_PLACE ? message_bytes(recvcount, recvtype) : message_bytes(sendcount, sendtype);
  return m::started(rc, comm, "MPI_Ialltoall", m::steps_cost(rank.model(), comm, bytes), request);
}

int MPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  RankState& rank = RankState::get();
  const int rc = PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
  if (!rank.timed()) return rc;
  const std::uint64_t bytes =
      sendbuf == MPI_IN_PLACE ? message_bytes(recvcount, recvtype) : message_bytes(sendcount, sendtype);
  return m::started(rc, comm, "MPI_Igather", m::steps_cost(rank.model(), comm, bytes), request);
}

int MPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  RankState& rank = RankState::get();
  const int rc = PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
  if (!rank.timed()) return rc;
  const std::uint64_t bytes =
      recvbuf == MPI_IN_PLACE ? message_bytes(sendcount, sendtype) : message_bytes(recvcount, recvtype);
  return m::started(rc, comm, "MPI_Iscatter", m::steps_cost(rank.model(), comm, bytes), request);
}

}  // extern "C"
