// The simulated time of each collective, by the algorithm it stands for over the LogGP model (docs/athread.md "MPI"),
// in transfers T(k) = o + (k - 1) G + L + o over P ranks. Shared by the blocking calls and their non-blocking forms.
// Each is the calling rank's view: ranks that see different arguments (a root's counts, MPI_IN_PLACE) are combined
// by a max when the collective is timed.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "network_model.hpp"

namespace ldmsim::athread::mpi {

/// A collective's cost and the bytes it moves for the calling rank (for the stats).
struct CollectiveCost {
  Cycle cycles = 0;
  std::uint64_t bytes = 0;
};

int ranks_of(MPI_Comm comm);
int rank_in(MPI_Comm comm);

/// Dissemination barrier: ceil(log2 P) T(0).
CollectiveCost barrier_cost(const NetworkModel& model, MPI_Comm comm);
/// Binomial tree (bcast, reduce) or recursive doubling (scan, exscan): ceil(log2 P) T(k).
CollectiveCost tree_cost(const NetworkModel& model, MPI_Comm comm, std::uint64_t bytes);
/// Ring allreduce (reduce-scatter, then allgather): 2 (P - 1) T(ceil(k / P)).
CollectiveCost ring_allreduce_cost(const NetworkModel& model, MPI_Comm comm, std::uint64_t bytes);
/// (P - 1) steps of T(k): ring allgather, reduce-scatter by blocks, linear gather / scatter / alltoall.
CollectiveCost steps_cost(const NetworkModel& model, MPI_Comm comm, std::uint64_t bytes);
/// Linear at a root (gatherv, scatterv): the root's sum of T(k_i) over the other ranks' blocks; another rank T(own k).
CollectiveCost linear_v_cost(const NetworkModel& model, MPI_Comm comm, int root, const int counts[], MPI_Datatype type,
                             std::uint64_t own_bytes);
/// Ring with blocks of different sizes (allgatherv, reduce_scatter): every step moves every block, so each of the
/// P - 1 steps takes T(largest block).
CollectiveCost ring_v_cost(const NetworkModel& model, MPI_Comm comm, const int counts[], MPI_Datatype type);
/// Pairwise exchange (alltoallv): the sum of T(k_j) over the blocks this rank sends to the other ranks.
CollectiveCost pairwise_v_cost(const NetworkModel& model, MPI_Comm comm, const int counts[], MPI_Datatype type);

/// MPI_Gatherv / Igatherv from their arguments (linear_v_cost; MPI_IN_PLACE at the root: its own block).
CollectiveCost gatherv_cost(const NetworkModel& model, MPI_Comm comm, const void* sendbuf, int sendcount,
                            MPI_Datatype sendtype, const int recvcounts[], MPI_Datatype recvtype, int root);
/// MPI_Scatterv / Iscatterv from their arguments.
CollectiveCost scatterv_cost(const NetworkModel& model, MPI_Comm comm, const int sendcounts[], MPI_Datatype sendtype,
                             const void* recvbuf, int recvcount, MPI_Datatype recvtype, int root);
/// MPI_Alltoallv / Ialltoallv from their arguments (MPI_IN_PLACE: the receive counts describe both ways).
CollectiveCost alltoallv_cost(const NetworkModel& model, MPI_Comm comm, const void* sendbuf, const int sendcounts[],
                              MPI_Datatype sendtype, const int recvcounts[], MPI_Datatype recvtype);
/// MPI_Alltoallw / Ialltoallw: pairwise exchange as alltoallv, each block with its own type (MPI_IN_PLACE: the
/// receive counts and types describe both ways).
CollectiveCost alltoallw_cost(const NetworkModel& model, MPI_Comm comm, const void* sendbuf, const int sendcounts[],
                              const MPI_Datatype sendtypes[], const int recvcounts[], const MPI_Datatype recvtypes[]);

}  // namespace ldmsim::athread::mpi
