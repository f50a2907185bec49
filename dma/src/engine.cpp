// DMA engine: validation, timing, data movement and trace recording for one core group.
#include "ldmsim/dma/engine.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace ldmsim {

DmaEngine::DmaEngine(const Arch& arch, int cg, MainMemory& memory, DmaEventSink* events, std::byte* ldm_base,
                     bool lint_alignment, bool move_data)
    : arch_(arch),
      cg_(cg),
      memory_(memory),
      events_(events),
      ldm_base_(ldm_base),
      lint_alignment_(lint_alignment),
      move_data_(move_data),
      model_(make_timing_model(arch)),
      copies_(ldm_base, arch.ldm_bytes, arch.cores_per_group()) {}

DmaResult DmaEngine::execute(const DmaRequest& request, int core, Cycle issue, LdmWindow window) {
  DmaResult result;
  auto violation = validate_fields(request, arch_, window.bytes);
  if (violation && violation->lintable() && lint_alignment_) {
    result.violation = std::move(violation);  // a warning: keep checking everything else
    violation = validate_shape(request, arch_, window.bytes);
  }
  if (!violation) violation = validate_main_range(request, memory_);
  if (!violation) violation = validate_replica_write(request, memory_);
  if (violation) {
    result.violation = std::move(violation);
    result.trapped = true;
    result.timing = {issue, issue};
    record(request, core, issue, result.timing, DmaStatus::kTrapped);
    return result;
  }
  // A constant replicated in every group's memory is read from this group's copy (the trace shows that address).
  if (memory_.has_replicas()) {
    if (const auto copy = memory_.replica_of(request.main, request.main_end() - request.main, cg_);
        copy && *copy != request.main) {
      DmaRequest local = request;
      local.main = *copy;
      return execute_checked(local, core, issue, window, std::move(result));
    }
  }
  return execute_checked(request, core, issue, window, std::move(result));
}

DmaResult DmaEngine::execute_checked(const DmaRequest& request, int core, Cycle issue, LdmWindow window,
                                     DmaResult result) {
  result.timing = model_->schedule(request, issue, core);
  // Another group's memory (arch dma.remote): once the local engine is done, the bytes cross the group's link
  // to the other groups, one request after another in arrival order (the group's share of the network), then
  // the network's latency. The range check above put the address inside a live region, so inside a window.
  if (MainMemory::window_of(request.main, memory_.bytes_per_cg()) != static_cast<std::uint64_t>(cg_)) {
    result.remote = true;
    const DmaRemoteArch& r = arch_.dma.remote;
    const double transfer = r.bytes_per_cycle > 0 ? static_cast<double>(request.length) / r.bytes_per_cycle : 0.0;
    const double start = std::max(static_cast<double>(result.timing.end), remote_link_free_);
    remote_link_free_ = start + transfer;
    result.timing.end = static_cast<Cycle>(std::ceil(start + transfer + r.latency_cycles));
  }
  if (move_data_) move(request, core, window.offset);
  record(request, core, issue, result.timing, result.violation ? DmaStatus::kLintWarning : DmaStatus::kOk);
  return result;
}

void DmaEngine::move(const DmaRequest& request, int core, std::uint64_t window_offset) {
  const std::uint64_t block = request.block_bytes();
  const std::uint64_t blocks = request.block_count();
  const std::uint64_t pitch = request.block_pitch();
  const std::uint64_t ldm = window_offset + request.ldm;
  std::byte* first = ldm_of(core) + ldm;
  if (request.op == DmaOp::kPut) {
    copies_.before_read(core, ldm, ldm + request.length);
    for (std::uint64_t i = 0; i < blocks; ++i) {
      memory_.write(request.main + i * pitch, std::span<const std::byte>(first + i * block, block));
    }
    return;
  }
  // A get lands in the issuing core first; BCAST and ROW then replicate the bytes to the other receivers.
  int receivers_first = core;
  if (request.mode != DmaMode::kPe) {
    const int cols = static_cast<int>(arch_.cols);
    const int row = core / cols;
    receivers_first = request.mode == DmaMode::kRow ? row * cols : -1;
    if (request.mode == DmaMode::kBcast) {
      for (std::uint32_t r = 0; r < arch_.rows; ++r) {
        if ((request.row_mask >> r) & 1u) {
          receivers_first = static_cast<int>(r) * cols;
          break;
        }
      }
    }
    first = ldm_of(receivers_first) + ldm;
  }
  const std::uint64_t end = ldm + request.length;
  // Every core of the receiving rows but the first receiver (a row's cores are numbered consecutively).
  const int cols = static_cast<int>(arch_.cols);
  const int rows = static_cast<int>(arch_.rows);
  const auto for_other_receivers = [&](auto&& each) {
    if (request.mode == DmaMode::kPe) return;
    for (int r = receivers_first / cols; r < rows; ++r) {
      const bool receives =
          request.mode == DmaMode::kRow ? r == receivers_first / cols : ((request.row_mask >> r) & 1u) != 0;
      if (!receives) continue;
      for (int c = r * cols; c < (r + 1) * cols; ++c) {
        if (c != receivers_first) each(c);
      }
    }
  };
  // Every receiver's range is written: the copies owed there are settled first (and those the first receiver's
  // range still owes others made), so that the range owes and is owed nothing.
  const bool defer = request.replicate_on_read && copies_.can_defer();
  std::uint64_t others = 0;
  if (defer || !copies_.empty()) for_other_receivers([&](int c) { others |= std::uint64_t{1} << c; });
  if (!copies_.empty()) copies_.before_write(others | (std::uint64_t{1} << receivers_first), ldm, end);
  for (std::uint64_t i = 0; i < blocks; ++i) {
    memory_.read(request.main + i * pitch, std::span<std::byte>(first + i * block, block));
  }
  if (defer) {
    copies_.owe(others, receivers_first, ldm, end);
  } else {
    for_other_receivers([&](int c) { std::memcpy(ldm_of(c) + ldm, first, request.length); });
  }
}

void DmaEngine::record(const DmaRequest& request, int core, Cycle issue, DmaTiming timing, DmaStatus status) {
  if (events_ == nullptr) return;
  DmaEvent event;
  event.issue = issue;
  event.start = timing.start;
  event.end = timing.end;
  // Valid requests always fit the packed trace fields; a trapped one may carry any value, so saturate.
  auto fit = [](std::uint64_t v, unsigned bits) { return std::min<std::uint64_t>(v, (1ull << bits) - 1); };
  event.main = fit(request.main, 48);
  event.ldm = static_cast<LdmAddr>(fit(request.ldm, 24));
  event.length = static_cast<std::uint32_t>(fit(request.length, 32));
  event.bsize = static_cast<std::uint32_t>(fit(request.bsize, 32));
  event.stride = static_cast<std::uint32_t>(fit(request.stride, 32));
  event.core = static_cast<std::uint16_t>(core);
  event.op = request.op;
  event.mode = request.mode;
  event.status = status;
  events_->record(event);
}

}  // namespace ldmsim
