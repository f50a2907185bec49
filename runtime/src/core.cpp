// The kernel-side Core API: DMA issue and wait, barriers, compute charges and the ldm allocator, each
// checked (inside the kernel, on the core's own fiber, launch not aborted) and placed in simulated time.
#include "ldmsim/runtime/core.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/fiber/context.hpp>
#include <boost/fiber/operations.hpp>
#include <cmath>

#include "code_site.hpp"
#include "group_run.hpp"
#include "ldmsim/sim/logging.hpp"
#include "scheduler.hpp"

namespace ldmsim {
namespace {

/// Inserts `text` before the message's hint (at its end when it has none).
void insert_before_hint(std::string& message, const std::string& text) {
  const std::size_t hint = message.find("; hint: ");
  message.insert(hint == std::string::npos ? message.size() : hint, text);
}

/// " [main memory: byte N of 'NAME' (B bytes)]": the allocation a request's main-memory side starts in (empty when
/// none or unnamed).
std::string main_buffer_text(const DmaRequest& request, const MainMemory& memory) {
  const Region* region = memory.find_region(request.main, 1);
  if (region == nullptr || region->name.empty()) return {};
  return fmt::format(" [main memory: byte {} of '{}' ({} bytes)]", request.main - region->base, region->name,
                     region->bytes);
}

/// A trap's message with the allocation its main-memory side starts in, before the hint (an out-of-bounds trap
/// already names the nearest region).
std::string name_main_buffer(const DmaViolation& v, const DmaRequest& request, const MainMemory& memory) {
  if (v.kind == FaultKind::kDmaOutOfBounds) return v.message;
  std::string message = v.message;
  insert_before_hint(message, main_buffer_text(request, memory));
  return message;
}

}  // namespace

Core::Core(detail::GroupRun& group, int cg, int node_cg, int id, int row, int col, std::byte* ldm_base,
           std::uint64_t ldm_bytes, CoreStats& stats)
    : group_(&group),
      cg_(cg),
      node_cg_(node_cg),
      id_(id),
      row_(row),
      col_(col),
      ldm_(this, ldm_base, ldm_bytes),
      stats_(&stats),
      group_state_(nullptr) {}  // the running thread's, set by GroupRun::start

Core::Storage Core::take_storage() {
  Storage storage{std::move(pending_), ldm_.allocator_.take_storage()};
  storage.pending.clear();
  pending_ = {};
  return storage;
}

void Core::adopt_storage(Storage storage) {
  storage.pending.clear();
  if (pending_.empty()) pending_ = std::move(storage.pending);
  ldm_.allocator_.adopt_storage(std::move(storage.ldm_blocks));
}

int Core::rows() const {
  return static_cast<int>(group_->arch().rows);
}
int Core::cols() const {
  return static_cast<int>(group_->arch().cols);
}
int Core::group_size() const {
  return static_cast<int>(group_->arch().cores_per_group());
}
const std::string& Core::kernel() const {
  return group_->kernel_name();
}
const Arch& Core::arch() const {
  return group_->arch();
}

std::size_t Core::dma_channels() const {
  return group_->dma_channels();
}

Ldm& Core::ldm() {
  enter("Core::ldm");
  return ldm_;
}

namespace {

/// Why Core::enter refuses a call (kept out of its fast path, which every API call takes).
[[noreturn, gnu::noinline, gnu::cold]] void refuse_entry(std::string_view api, bool in_kernel, bool on_own_stack,
                                                         CoreLocation core, Cycle cycle, const std::string& kernel) {
  if (!in_kernel) {
    throw Fault(FaultKind::kApiOutsideKernel, core, cycle, kernel,
                fmt::format("{} called on a core whose kernel is not running; hint: use the Core& only inside "
                            "the kernel it was passed to",
                            api));
  }
  if (!on_own_stack) {
    throw Fault(FaultKind::kApiOutsideKernel, core, cycle, kernel,
                fmt::format("{} called from outside this core's own kernel (another core or host thread); hint: "
                            "each kernel may use only the Core& it was given",
                            api));
  }
  throw detail::Aborted{};
}

}  // namespace

void Core::enter(std::string_view api) {
  const auto frame = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
  const bool on_own_stack = frame >= stack_low_ && frame < stack_high_;
  if (in_kernel_ && on_own_stack && !group_->aborted()) [[likely]] {
    return;
  }
  // In the order of the checks: outside the kernel, then off this core's stack, then an aborted launch.
  refuse_entry(api, in_kernel_, on_own_stack, {node_cg_, id_}, cycle_, group_->kernel_name());
}

void Core::sync_point() {
  order_->cycle = cycle_;
  order_->id = order_id_;
  // Yield only to an earlier core: Boost's yield() always switches away, even when this core is the earliest
  // (and, with no other core ready, to the control core, which would then report a false deadlock).
  if (order_->scheduler->earlier_ready(cycle_, order_->id)) boost::this_fiber::yield();
  if (group_->aborted()) throw detail::Aborted{};
}

void Core::trap(FaultKind kind, std::string message, std::optional<FaultField> field) {
  throw Fault(kind, {node_cg_, id_}, cycle_, group_->kernel_name(), std::move(message), std::move(field));
}

void Core::lint(const std::string& message) {
  ++stats_->lint_warnings;
  group_->record_warning(*this, std::string_view(message).substr(0, message.find(':')), {}, message);
}

DmaHandle Core::dma(const DmaRequest& request, std::source_location site) {
  enter(request.api);
  DmaEngine& engine = group_->engine();
  const Cycle issue_cost = engine.issue_cycles(request);
  cycle_ += issue_cost;
  stats_->busy_cycles += issue_cost;
  sync_point();
  DmaResult result = engine.execute(request, id_, cycle_, group_->ldm_window());
  if (result.trapped) {
    const DmaViolation& v = *result.violation;
    std::string message = name_main_buffer(v, request, group_->memory());
    if (const std::uint64_t code = detail::code_site_of(site); code != 0) {
      insert_before_hint(message, fmt::format(" [called from {}]", detail::code_site_text(code)));
    }
    trap(v.kind, std::move(message),
         v.field.empty() ? std::nullopt : std::optional<FaultField>(FaultField{v.field, v.value}));
  }
  if (result.violation) {
    ++stats_->lint_warnings;
    group_->record_warning(*this, request.api, result.violation->field, result.violation->message,
                           detail::code_site_of(site), main_buffer_text(request, group_->memory()));
  }
  ++stats_->dma_requests;
  (request.op == DmaOp::kGet ? stats_->dma_get_bytes : stats_->dma_put_bytes) += request.length;
  if (result.remote) stats_->dma_remote_bytes += request.length;
  const std::uint64_t id = next_request_id_++;
  // Room for a kernel's usual requests in flight at once, so the list does not regrow one by one every launch.
  if (pending_.capacity() == 0) pending_.reserve(8);
  pending_.push_back(Pending{id, result.timing.end, request});
  if (detail::GroupCheck* checks = group_->checks()) {
    checks->on_issue(id_, request, cycle_, result.timing.end, id, detail::code_site_of(site));
  }
  spdlog::logger& log = group_->dma_log();
  if (log.should_log(spdlog::level::trace)) {
    log.trace("[{} {}:{}] {} {} {} bytes main 0x{:x} ldm 0x{:x} -> done at {}", cycle_, node_cg_, id_,
              to_string(request.mode), to_string(request.op), request.length, request.main, request.ldm,
              result.timing.end);
  }
  return DmaHandle(this, id, result.timing.end);
}

void Core::ready_ldm_bytes(std::uint64_t ldm_offset, std::uint64_t bytes) {
  group_->engine().make_copies(id_, group_->ldm_window().offset + ldm_offset, bytes);
}

const std::byte* Core::readable_ldm_bytes(std::uint64_t ldm_offset, std::uint64_t bytes) {
  return group_->engine().readable(id_, group_->ldm_window().offset + ldm_offset, bytes);
}

void Core::forget_ldm(std::uint64_t ldm_offset, std::uint64_t bytes) {
  if (bytes != 0) group_->engine().free_ldm(id_, group_->ldm_window().offset + ldm_offset, bytes);
}

double Core::get_service_cycles(DeviceAddr src, std::size_t length, std::size_t bsize, std::size_t stride) const {
  return group_->engine().service_cycles(make(DmaOp::kGet, DmaMode::kPe, src, 0, length, bsize, stride, "estimate"));
}

void Core::wait(const DmaHandle& handle) {
  enter("Core::wait");
  if (handle.core_ != this) {
    trap(FaultKind::kInvalidArgument, "Core::wait: the handle belongs to another core (or is empty)");
  }
  auto it = std::find_if(pending_.begin(), pending_.end(), [&](const Pending& p) { return p.id == handle.id_; });
  if (it == pending_.end()) return;  // already waited
  const Cycle end = it->end;
  if (detail::GroupCheck* checks = group_->checks()) checks->on_wait(id_, handle.id_, cycle_);
  *it = std::move(pending_.back());  // order does not matter (check_exit finds the oldest by id)
  pending_.pop_back();
  stall_until(end, &CoreStats::dma_wait_cycles);
}

void Core::wait_all() {
  enter("Core::wait_all");
  Cycle end = cycle_;
  for (const auto& p : pending_) end = std::max(end, p.end);
  if (detail::GroupCheck* checks = group_->checks()) checks->on_wait_all(id_, cycle_);
  pending_.clear();
  stall_until(end, &CoreStats::dma_wait_cycles);
}

void Core::stall_until(Cycle cycle, Cycle CoreStats::*counter) {
  if (cycle <= cycle_) return;
  if (counter == &CoreStats::dma_wait_cycles) group_->dma_wait(*this, cycle);  // for the schedule picture
  if (holding_ && cycle - cycle_ <= 2 * static_cast<Cycle>(group_->arch().context_switch_cycles)) {
    group_->idle_core(*this, cycle);  // too short to be worth two switches: keep the core
  } else {
    release_core();
  }
  stats_->*counter += cycle - cycle_;
  cycle_ = cycle;
  resume();
}

void Core::release_core() {
  if (!holding_) return;
  holding_ = false;
  group_->release_core(*this);
}

void Core::resume() {
  if (physical_ == nullptr || holding_) return;
  sync_point();  // take the core in simulated-time order
  group_->take_core(*this);
  holding_ = true;
}

void Core::barrier(Scope scope) {
  enter("Core::barrier");
  sync_point();
  release_core();
  group_->barrier(*this, scope);
  resume();
}

void Core::reg_put(RegBus bus, int dst, const RegValue& value) {
  enter("Core::reg_put");
  sync_point();
  group_->reg_put(*this, bus, dst, value);  // releases the core if it blocks
  resume();
}

RegValue Core::reg_get(RegBus bus) {
  enter("Core::reg_get");
  sync_point();
  RegValue value = group_->reg_get(*this, bus);
  resume();
  return value;
}

Cycle Core::rma(const RmaRequest& request) {
  enter(request.api);
  sync_point();
  return group_->rma(*this, request);
}

std::vector<int> Core::rma_receivers(RmaScope scope, int peer) const {
  std::vector<int> ids;
  const int n_rows = rows(), n_cols = cols();
  switch (scope) {
    case RmaScope::kCore:
      ids.push_back(peer);
      break;
    case RmaScope::kRow:
      for (int c = 0; c < n_cols; ++c) ids.push_back(row_ * n_cols + c);
      break;
    case RmaScope::kCol:
      for (int r = 0; r < n_rows; ++r) ids.push_back(r * n_cols + col_);
      break;
    case RmaScope::kGroup:
      for (int k = 0; k < n_rows * n_cols; ++k) ids.push_back(k);
      break;
  }
  return ids;
}

void Core::block_until(const std::function<bool()>& ready, const std::string& what) {
  enter("Core::block_until");
  sync_point();
  group_->block_until(*this, ready, what);
  resume();
}

void Core::notify_waiters() {
  enter("Core::notify_waiters");
  group_->notify_waiters(cycle_);
}

void Core::wait_until(Cycle cycle) {
  enter("Core::wait_until");
  stall_until(cycle, &CoreStats::barrier_wait_cycles);
}

void Core::compute(Cost cost) {
  enter("Core::compute");
  const double per_cycle = group_->arch().flops_per_cycle;
  const auto flop_cycles = static_cast<Cycle>(std::ceil(static_cast<double>(cost.flops) / per_cycle));
  cycle_ += flop_cycles + cost.cycles;
  stats_->busy_cycles += flop_cycles + cost.cycles;
}

void Core::compute(const KernelWork& work) {
  enter("Core::compute");
  const Cycle cycles = group_->arch().compute.cycles(work);
  cycle_ += cycles;
  stats_->busy_cycles += cycles;
}

void Core::check_exit() {
  if (pending_.empty()) return;
  const DmaRequest& first = std::min_element(pending_.begin(), pending_.end(), [](const Pending& a, const Pending& b) {
                              return a.id < b.id;
                            })->request;
  trap(FaultKind::kPendingDmaAtExit,
       fmt::format("the kernel returned with {} DMA request(s) never waited for; the first: {} {} {} bytes, main "
                   "0x{:x}, ldm 0x{:x}; hint: wait() every handle (or call wait_all()) before returning",
                   pending_.size(), first.api, to_string(first.op), first.length, first.main, first.ldm));
}

LdmAddr Ldm::alloc_bytes(std::size_t bytes, std::size_t alignment) {
  core_->enter("Ldm::alloc");
  if (bytes == 0) core_->trap(FaultKind::kInvalidArgument, "Ldm::alloc: cannot allocate 0 bytes");
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
    core_->trap(FaultKind::kInvalidArgument, fmt::format("Ldm::alloc: alignment {} is not a power of two", alignment));
  }
  if (auto at = allocator_.allocate(bytes, alignment)) return *at;
  const LdmShortfall s = allocator_.shortfall(bytes);
  core_->trap(FaultKind::kLdmOverflow,
              fmt::format("Ldm::alloc of {} bytes does not fit the {}-byte local store: {} bytes free (largest "
                          "free block {}), high-water mark {} bytes; hint: use smaller tiles or free buffers first",
                          s.requested, allocator_.capacity(), s.free_bytes, s.largest_free, s.high_water),
              FaultField{"bytes", s.requested});
}

void Ldm::free_at(LdmAddr offset) {
  core_->enter("Ldm::free");
  core_->forget_ldm(offset, allocator_.size_of(offset));
  if (!allocator_.free(offset)) {
    core_->trap(FaultKind::kInvalidArgument,
                fmt::format("Ldm::free: ldm offset 0x{:x} is not a live allocation", offset));
  }
}

void Ldm::reset() {
  core_->enter("Ldm::reset");
  core_->forget_ldm(0, allocator_.capacity());
  allocator_.reset();
}

}  // namespace ldmsim
