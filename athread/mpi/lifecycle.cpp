// MPI_Init / MPI_Finalize / MPI_Abort, the communicators the program creates (each gets a shadow that carries send
// times) and MPI_Wtime (the rank's simulated time).
#include <mpi.h>

#include <cstdint>
#include <cstdlib>

#include "control_clock.hpp"
#include "rank_state.hpp"

using ldmsim::athread::mpi::RankState;

namespace {

/// After a call that created `*made` collectively over its parent: its shadow, made by the same ranks.
int with_shadow(int rc, MPI_Comm* made) {
  if (rc == MPI_SUCCESS && RankState::get().timed() && *made != MPI_COMM_NULL) RankState::get().add_shadow(*made);
  return rc;
}

}  // namespace

extern "C" {

int MPI_Init(int* argc, char*** argv) {
  const int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) RankState::get().initialize();
  return rc;
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) RankState::get().initialize();
  return rc;
}

int MPI_Finalize(void) {
  RankState& rank = RankState::get();
  if (rank.timed()) {
    // Every rank reaches MPI_Finalize, or the watchdog names the ones that do not; the latest clock is the makespan.
    const std::uint64_t mine = ldmsim::athread::current_cycles();
    std::uint64_t latest = mine;
    MPI_Request request = MPI_REQUEST_NULL;
    PMPI_Iallreduce(&mine, &latest, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD, &request);
    rank.wait(&request, MPI_STATUS_IGNORE, "MPI_Finalize (waiting for every rank to reach MPI_Finalize)");
    rank.set_makespan(latest);
    rank.finish();
  }
  const bool written = ldmsim::athread::write_outputs_at_finalize();
  const int rc = PMPI_Finalize();
  if (!written) std::exit(2);  // the summary line said why the trace is missing
  return rc;
}

int MPI_Abort(MPI_Comm comm, int errorcode) {
  ldmsim::athread::write_outputs_before_abort("MPI_Abort");
  return PMPI_Abort(comm, errorcode);
}

double MPI_Wtime(void) {
  RankState& rank = RankState::get();
  if (!rank.timed()) return PMPI_Wtime();
  return static_cast<double>(ldmsim::athread::control_clock()) / rank.model().clock_hz;
}

double MPI_Wtick(void) {
  RankState& rank = RankState::get();
  if (!rank.timed()) return PMPI_Wtick();
  return 1.0 / rank.model().clock_hz;
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  return with_shadow(PMPI_Comm_dup(comm, newcomm), newcomm);
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  return with_shadow(PMPI_Comm_split(comm, color, key, newcomm), newcomm);
}

int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm* newcomm) {
  return with_shadow(PMPI_Comm_split_type(comm, split_type, key, info, newcomm), newcomm);
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  return with_shadow(PMPI_Comm_create(comm, group, newcomm), newcomm);
}

int MPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[], int reorder, MPI_Comm* cart) {
  return with_shadow(PMPI_Cart_create(comm, ndims, dims, periods, reorder, cart), cart);
}

int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm) {
  return with_shadow(PMPI_Cart_sub(comm, remain_dims, newcomm), newcomm);
}

int MPI_Comm_free(MPI_Comm* comm) {
  if (RankState::get().timed()) RankState::get().free_shadow(*comm);
  return PMPI_Comm_free(comm);
}

}  // extern "C"
