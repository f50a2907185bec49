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

CollectiveCost pairwise_v_cost(const NetworkModel& model, MPI_Comm comm, const int counts[], MPI_Datatype type) {
  const int ranks = ranks_of(comm);
  const int me = rank_in(comm);
  CollectiveCost cost;
  for (int j = 0; j < ranks; ++j) {
    const std::uint64_t bytes = message_bytes(counts[j], type);
    cost.bytes += bytes;
    if (j != me) cost.cycles += model.transfer(bytes);
  }
  return cost;
}

}  // namespace ldmsim::athread::mpi
