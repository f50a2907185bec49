// Collective costs over the LogGP model (collective_costs.hpp).
#include "collective_costs.hpp"

#include <algorithm>

#include "rank_state.hpp"

namespace ldmsim::athread::mpi {

int ranks_of(MPI_Comm comm) {
  int size = 1;
  PMPI_Comm_size(comm, &size);
  return size;
}

int rank_in(MPI_Comm comm) {
  int rank = 0;
  PMPI_Comm_rank(comm, &rank);
  return rank;
}

CollectiveCost barrier_cost(const NetworkModel& model, MPI_Comm comm) {
  return {static_cast<Cycle>(tree_levels(ranks_of(comm))) * model.transfer(0), 0};
}

CollectiveCost tree_cost(const NetworkModel& model, MPI_Comm comm, std::uint64_t bytes) {
  return {static_cast<Cycle>(tree_levels(ranks_of(comm))) * model.transfer(bytes), bytes};
}

CollectiveCost ring_allreduce_cost(const NetworkModel& model, MPI_Comm comm, std::uint64_t bytes) {
  const auto ranks = static_cast<std::uint64_t>(ranks_of(comm));
  if (ranks <= 1) return {0, bytes};
  return {2 * (ranks - 1) * model.transfer((bytes + ranks - 1) / ranks), bytes};
}

CollectiveCost steps_cost(const NetworkModel& model, MPI_Comm comm, std::uint64_t bytes) {
  const auto ranks = static_cast<std::uint64_t>(ranks_of(comm));
  return {(ranks - 1) * model.transfer(bytes), bytes};
}

CollectiveCost linear_v_cost(const NetworkModel& model, MPI_Comm comm, int root, const int counts[], MPI_Datatype type,
                             std::uint64_t own_bytes) {
  if (rank_in(comm) != root || counts == nullptr)
    return {ranks_of(comm) > 1 ? model.transfer(own_bytes) : 0, own_bytes};
  CollectiveCost cost;
  for (int i = 0; i < ranks_of(comm); ++i) {
    const std::uint64_t bytes = message_bytes(counts[i], type);
    cost.bytes += bytes;
    if (i != root) cost.cycles += model.transfer(bytes);
  }
  return cost;
}

CollectiveCost ring_v_cost(const NetworkModel& model, MPI_Comm comm, const int counts[], MPI_Datatype type) {
  const int ranks = ranks_of(comm);
  std::uint64_t largest = 0;
  std::uint64_t total = 0;
  for (int i = 0; i < ranks; ++i) {
    const std::uint64_t bytes = message_bytes(counts[i], type);
    largest = std::max(largest, bytes);
    total += bytes;
  }
  return {static_cast<Cycle>(ranks - 1) * model.transfer(largest), total};
}

namespace {

/// Pairwise exchange: the sum of T(bytes_to(j)) over the other ranks j.
template <typename BytesTo>
CollectiveCost pairwise_cost(const NetworkModel& model, MPI_Comm comm, BytesTo bytes_to) {
  const int ranks = ranks_of(comm);
  const int me = rank_in(comm);
  CollectiveCost cost;
  for (int j = 0; j < ranks; ++j) {
    const std::uint64_t bytes = bytes_to(j);
    cost.bytes += bytes;
    if (j != me) cost.cycles += model.transfer(bytes);
  }
  return cost;
}

}  // namespace

CollectiveCost pairwise_v_cost(const NetworkModel& model, MPI_Comm comm, const int counts[], MPI_Datatype type) {
  return pairwise_cost(model, comm, [&](int j) { return message_bytes(counts[j], type); });
}

CollectiveCost gatherv_cost(const NetworkModel& model, MPI_Comm comm, const void* sendbuf, int sendcount,
                            MPI_Datatype sendtype, const int recvcounts[], MPI_Datatype recvtype, int root) {
  const bool at_root = rank_in(comm) == root;
  const std::uint64_t own = sendbuf == MPI_IN_PLACE ? message_bytes(at_root ? recvcounts[root] : 0, recvtype)
                                                    : message_bytes(sendcount, sendtype);
  return linear_v_cost(model, comm, root, at_root ? recvcounts : nullptr, recvtype, own);
}

CollectiveCost scatterv_cost(const NetworkModel& model, MPI_Comm comm, const int sendcounts[], MPI_Datatype sendtype,
                             const void* recvbuf, int recvcount, MPI_Datatype recvtype, int root) {
  const bool at_root = rank_in(comm) == root;
  const std::uint64_t own = recvbuf == MPI_IN_PLACE ? message_bytes(at_root ? sendcounts[root] : 0, sendtype)
                                                    : message_bytes(recvcount, recvtype);
  return linear_v_cost(model, comm, root, at_root ? sendcounts : nullptr, sendtype, own);
}

CollectiveCost alltoallv_cost(const NetworkModel& model, MPI_Comm comm, const void* sendbuf, const int sendcounts[],
                              MPI_Datatype sendtype, const int recvcounts[], MPI_Datatype recvtype) {
  const bool in_place = sendbuf == MPI_IN_PLACE;
  return pairwise_v_cost(model, comm, in_place ? recvcounts : sendcounts, in_place ? recvtype : sendtype);
}

CollectiveCost alltoallw_cost(const NetworkModel& model, MPI_Comm comm, const void* sendbuf, const int sendcounts[],
                              const MPI_Datatype sendtypes[], const int recvcounts[], const MPI_Datatype recvtypes[]) {
  const bool in_place = sendbuf == MPI_IN_PLACE;
  const int* counts = in_place ? recvcounts : sendcounts;
  const MPI_Datatype* types = in_place ? recvtypes : sendtypes;
  return pairwise_cost(model, comm, [&](int j) { return message_bytes(counts[j], types[j]); });
}

}  // namespace ldmsim::athread::mpi
