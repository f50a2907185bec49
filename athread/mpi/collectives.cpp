// Collective MPI calls, timed by the algorithm they stand for over the LogGP model (docs/athread.md "MPI"):
// barrier by dissemination, broadcast and reduce by a binomial tree, allreduce by a ring (reduce-scatter then
// allgather), allgather by a ring, gather / scatter / alltoall linearly. The ranks' entry clocks are combined by a
// max first; every rank leaves at that max plus the algorithm's time. The data then moves by the PMPI_ call.
#include <mpi.h>

#include "rank_state.hpp"

namespace ldmsim::athread::mpi {
namespace {

int ranks_of(MPI_Comm comm) {
  int size = 1;
  PMPI_Comm_size(comm, &size);
  return size;
}

/// `steps` transfers of `bytes` each.
Cycle steps(std::uint64_t count, std::uint64_t bytes) {
  return count * RankState::get().model().transfer(bytes);
}

}  // namespace
}  // namespace ldmsim::athread::mpi

using ldmsim::athread::mpi::message_bytes;
using ldmsim::athread::mpi::ranks_of;
using ldmsim::athread::mpi::RankState;
using ldmsim::athread::mpi::steps;
using ldmsim::athread::mpi::tree_levels;

extern "C" {

int MPI_Barrier(MPI_Comm comm) {
  RankState& rank = RankState::get();
  if (!rank.timed()) return PMPI_Barrier(comm);
  // The max of the entry clocks already waits for every rank: that is the barrier.
  rank.time_collective(comm, "MPI_Barrier", steps(static_cast<std::uint64_t>(tree_levels(ranks_of(comm))), 0));
  return MPI_SUCCESS;
}

int MPI_Bcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  RankState& rank = RankState::get();
  if (rank.timed()) {
    const auto levels = static_cast<std::uint64_t>(tree_levels(ranks_of(comm)));
    rank.time_collective(comm, "MPI_Bcast", steps(levels, message_bytes(count, type)));
  }
  return PMPI_Bcast(buffer, count, type, root, comm);
}

int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm) {
  RankState& rank = RankState::get();
  if (rank.timed()) {
    const auto levels = static_cast<std::uint64_t>(tree_levels(ranks_of(comm)));
    rank.time_collective(comm, "MPI_Reduce", steps(levels, message_bytes(count, type)));
  }
  return PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
}

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  RankState& rank = RankState::get();
  if (rank.timed()) {
    const auto ranks = static_cast<std::uint64_t>(ranks_of(comm));
    const std::uint64_t bytes = message_bytes(count, type);
    // Ring: P - 1 steps of reduce-scatter and P - 1 of allgather, each moving a P-th of the data.
    const ldmsim::Cycle cost = ranks > 1 ? steps(2 * (ranks - 1), (bytes + ranks - 1) / ranks) : 0;
    rank.time_collective(comm, "MPI_Allreduce", cost);
  }
  return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
}

int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm) {
  RankState& rank = RankState::get();
  if (rank.timed()) {
    const auto ranks = static_cast<std::uint64_t>(ranks_of(comm));
    rank.time_collective(comm, "MPI_Allgather", steps(ranks - 1, message_bytes(recvcount, recvtype)));
  }
  return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
               MPI_Datatype recvtype, int root, MPI_Comm comm) {
  RankState& rank = RankState::get();
  if (rank.timed()) {
    const auto ranks = static_cast<std::uint64_t>(ranks_of(comm));
    const std::uint64_t bytes =
        sendbuf == MPI_IN_PLACE ? message_bytes(recvcount, recvtype) : message_bytes(sendcount, sendtype);
    rank.time_collective(comm, "MPI_Gather", steps(ranks - 1, bytes));
  }
  return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm) {
  RankState& rank = RankState::get();
  if (rank.timed()) {
    const auto ranks = static_cast<std::uint64_t>(ranks_of(comm));
    const std::uint64_t bytes =
        recvbuf == MPI_IN_PLACE ? message_bytes(sendcount, sendtype) : message_bytes(recvcount, recvtype);
    rank.time_collective(comm, "MPI_Scatter", steps(ranks - 1, bytes));
  }
  return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm) {
  RankState& rank = RankState::get();
  if (rank.timed()) {
    const auto ranks = static_cast<std::uint64_t>(ranks_of(comm));
    const std::uint64_t bytes =
        sendbuf == MPI_IN_PLACE ? message_bytes(recvcount, recvtype) : message_bytes(sendcount, sendtype);
    rank.time_collective(comm, "MPI_Alltoall", steps(ranks - 1, bytes));
  }
  return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

}  // extern "C"
