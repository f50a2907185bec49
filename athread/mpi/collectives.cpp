// Blocking collective MPI calls, timed by the algorithm they stand for over the LogGP model (collective_costs.hpp,
// docs/athread.md "MPI"). The ranks' entry clocks are combined by a max first; every rank leaves at that max plus
// the algorithm's time. The data then moves by the PMPI_ call.
#include <mpi.h>

#include "collective_costs.hpp"
#include "rank_state.hpp"

namespace ldmsim::athread::mpi {
namespace {

void timed(MPI_Comm comm, const char* call, CollectiveCost cost) {
  RankState::get().time_collective(comm, call, cost.cycles, cost.bytes);
}

/// The bytes of a rank's block: the receive side's when the send buffer is MPI_IN_PLACE.
std::uint64_t block_bytes(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int recvcount,
                          MPI_Datatype recvtype) {
  return sendbuf == MPI_IN_PLACE ? message_bytes(recvcount, recvtype) : message_bytes(sendcount, sendtype);
}

}  // namespace
}  // namespace ldmsim::athread::mpi

namespace m = ldmsim::athread::mpi;
using m::message_bytes;
using m::RankState;

extern "C" {

int MPI_Barrier(MPI_Comm comm) {
  RankState& rank = RankState::get();
  if (!rank.timed()) return PMPI_Barrier(comm);
  // The max of the entry clocks already waits for every rank: that is the barrier.
  m::timed(comm, "MPI_Barrier", m::barrier_cost(rank.model(), comm));
  return MPI_SUCCESS;
}

int MPI_Bcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  RankState& rank = RankState::get();
  if (rank.timed()) m::timed(comm, "MPI_Bcast", m::tree_cost(rank.model(), comm, message_bytes(count, type)));
  return PMPI_Bcast(buffer, count, type, root, comm);
}

int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm) {
  RankState& rank = RankState::get();
  if (rank.timed()) m::timed(comm, "MPI_Reduce", m::tree_cost(rank.model(), comm, message_bytes(count, type)));
  return PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
}

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  RankState& rank = RankState::get();
  if (rank.timed()) {
    m::timed(comm, "MPI_Allreduce", m::ring_allreduce_cost(rank.model(), comm, message_bytes(count, type)));
  }
  return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
}

int MPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  RankState& rank = RankState::get();
  if (rank.timed()) m::timed(comm, "MPI_Scan", m::tree_cost(rank.model(), comm, message_bytes(count, type)));
  return PMPI_Scan(sendbuf, recvbuf, count, type, op, comm);
}

int MPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  RankState& rank = RankState::get();
  if (rank.timed()) m::timed(comm, "MPI_Exscan", m::tree_cost(rank.model(), comm, message_bytes(count, type)));
  return PMPI_Exscan(sendbuf, recvbuf, count, type, op, comm);
}

int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm) {
  RankState& rank = RankState::get();
  if (rank.timed())
    m::timed(comm, "MPI_Allgather", m::steps_cost(rank.model(), comm, message_bytes(recvcount, recvtype)));
  return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
               MPI_Datatype recvtype, int root, MPI_Comm comm) {
  RankState& rank = RankState::get();
  if (rank.timed()) {
    const std::uint64_t bytes = m::block_bytes(sendbuf, sendcount, sendtype, recvcount, recvtype);
    m::timed(comm, "MPI_Gather", m::steps_cost(rank.model(), comm, bytes));
  }
  return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm) {
  RankState& rank = RankState::get();
  if (rank.timed()) {
    const std::uint64_t bytes =
        recvbuf == MPI_IN_PLACE ? message_bytes(sendcount, sendtype) : message_bytes(recvcount, recvtype);
    m::timed(comm, "MPI_Scatter", m::steps_cost(rank.model(), comm, bytes));
  }
  return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm) {
  RankState& rank = RankState::get();
  if (rank.timed()) {
    const std::uint64_t bytes = m::block_bytes(sendbuf, sendcount, sendtype, recvcount, recvtype);
    m::timed(comm, "MPI_Alltoall", m::steps_cost(rank.model(), comm, bytes));
  }
  return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int MPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm) {
  RankState& rank = RankState::get();
  if (rank.timed()) {
    m::timed(comm, "MPI_Gatherv",
             m::gatherv_cost(rank.model(), comm, sendbuf, sendcount, sendtype, recvcounts, recvtype, root));
  }
  return PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm);
}

int MPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  RankState& rank = RankState::get();
  if (rank.timed()) {
    m::timed(comm, "MPI_Scatterv",
             m::scatterv_cost(rank.model(), comm, sendcounts, sendtype, recvbuf, recvcount, recvtype, root));
  }
  return PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

int MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                   const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  RankState& rank = RankState::get();
  if (rank.timed()) m::timed(comm, "MPI_Allgatherv", m::ring_v_cost(rank.model(), comm, recvcounts, recvtype));
  return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
}

int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                  void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  RankState& rank = RankState::get();
  if (rank.timed()) {
    m::timed(comm, "MPI_Alltoallv",
             m::alltoallv_cost(rank.model(), comm, sendbuf, sendcounts, sendtype, recvcounts, recvtype));
  }
  return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
}

int MPI_Alltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[],
                  void* recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[],
                  MPI_Comm comm) {
  RankState& rank = RankState::get();
  if (rank.timed()) {
    m::timed(comm, "MPI_Alltoallw",
             m::alltoallw_cost(rank.model(), comm, sendbuf, sendcounts, sendtypes, recvcounts, recvtypes));
  }
  return PMPI_Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm);
}

int MPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype type, MPI_Op op,
                       MPI_Comm comm) {
  RankState& rank = RankState::get();
  if (rank.timed()) m::timed(comm, "MPI_Reduce_scatter", m::ring_v_cost(rank.model(), comm, recvcounts, type));
  return PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm);
}

int MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type, MPI_Op op,
                             MPI_Comm comm) {
  RankState& rank = RankState::get();
  if (rank.timed()) {
    m::timed(comm, "MPI_Reduce_scatter_block", m::steps_cost(rank.model(), comm, message_bytes(recvcount, type)));
  }
  return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm);
}

}  // extern "C"
