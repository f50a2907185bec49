// What an op's kernel expects to take before it runs (BoundOp::kernel_estimate): the blocking searches of the matrix
// engine's jobs priced so far, kept for the planner that asks (the cost-aware placement prices every piece of every
// placement it weighs, and a network's pieces repeat a few job shapes).
#pragma once

#include <cstdint>
#include <memory>

namespace ldmsim {

class Machine;

class KernelEstimates {
 public:
  /// Estimates of its own, kept as long as it is.
  KernelEstimates();
  /// The machine's own searches (its control core's, which its kernels look up when they launch): what the
  /// planner prices here, the kernels it places find searched, and the other way round. Valid while the machine is.
  explicit KernelEstimates(Machine& machine);
  ~KernelEstimates();
  KernelEstimates(const KernelEstimates&) = delete;
  KernelEstimates& operator=(const KernelEstimates&) = delete;

  /// Blocking searches run so far (a job priced before is looked up, not searched).
  std::uint64_t searches() const;

  /// Estimates for another host thread that share these searches' results: a job searched here or by another such
  /// view is looked up, one not yet searched is searched on tables of the view's own (a search's tables are one
  /// thread's at a time), and its result kept here, where a later ask or a kernel of this machine finds it. Threads
  /// that price at once each ask a view of their own. Valid while these estimates are.
  std::unique_ptr<KernelEstimates> for_another_thread();
  /// Adds the searches `view` (one of for_another_thread's) ran to searches(), once; another's: nothing.
  void absorb(KernelEstimates& view);

  struct Impl;  ///< the kernels' own: kernels/src/ops/matrix_multiply.cpp
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace ldmsim
