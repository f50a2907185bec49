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

int MPI_Iscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
              MPI_Request* request) {
  RankState& rank = RankState::get();
  const int rc = PMPI_Iscan(sendbuf, recvbuf, count, type, op, comm, request);
  if (!rank.timed()) return rc;
  return m::started(rc, comm, "MPI_Iscan", m::tree_cost(rank.model(), comm, message_bytes(count, type)), request);
}

int MPI_Iexscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                MPI_Request* request) {
  RankState& rank = RankState::get();
  const int rc = PMPI_Iexscan(sendbuf, recvbuf, count, type, op, comm, request);
  if (!rank.timed()) return rc;
  return m::started(rc, comm, "MPI_Iexscan", m::tree_cost(rank.model(), comm, message_bytes(count, type)), request);
}

int MPI_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                 const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  RankState& rank = RankState::get();
  const int rc =
      PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, request);
  if (!rank.timed()) return rc;
  return m::started(rc, comm, "MPI_Igatherv",
                    m::gatherv_cost(rank.model(), comm, sendbuf, sendcount, sendtype, recvcounts, recvtype, root),
                    request);
}

int MPI_Iscatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  RankState& rank = RankState::get();
  const int rc =
      PMPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
  if (!rank.timed()) return rc;
  return m::started(rc, comm, "MPI_Iscatterv",
                    m::scatterv_cost(rank.model(), comm, sendcounts, sendtype, recvbuf, recvcount, recvtype, root),
                    request);
}

int MPI_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                    const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  RankState& rank = RankState::get();
  const int rc = PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request);
  if (!rank.timed()) return rc;
  return m::started(rc, comm, "MPI_Iallgatherv", m::ring_v_cost(rank.model(), comm, recvcounts, recvtype), request);
}

int MPI_Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                   void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                   MPI_Request* request) {
  RankState& rank = RankState::get();
  const int rc =
      PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, request);
  if (!rank.timed()) return rc;
  return m::started(rc, comm, "MPI_Ialltoallv",
                    m::alltoallv_cost(rank.model(), comm, sendbuf, sendcounts, sendtype, recvcounts, recvtype),
                    request);
}

int MPI_Ialltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[],
                   void* recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[],
                   MPI_Comm comm, MPI_Request* request) {
  RankState& rank = RankState::get();
  const int rc =
      PMPI_Ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, request);
  if (!rank.timed()) return rc;
  return m::started(rc, comm, "MPI_Ialltoallw",
                    m::alltoallw_cost(rank.model(), comm, sendbuf, sendcounts, sendtypes, recvcounts, recvtypes),
                    request);
}

int MPI_Ireduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype type, MPI_Op op,
                        MPI_Comm comm, MPI_Request* request) {
  RankState& rank = RankState::get();
  const int rc = PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm, request);
  if (!rank.timed()) return rc;
  return m::started(rc, comm, "MPI_Ireduce_scatter", m::ring_v_cost(rank.model(), comm, recvcounts, type), request);
}

int MPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type, MPI_Op op,
                              MPI_Comm comm, MPI_Request* request) {
  RankState& rank = RankState::get();
  const int rc = PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm, request);
  if (!rank.timed()) return rc;
  return m::started(rc, comm, "MPI_Ireduce_scatter_block",
                    m::steps_cost(rank.model(), comm, message_bytes(recvcount, type)), request);
}

}  // extern "C"
