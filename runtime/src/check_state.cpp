// The checker's bookkeeping: requests in flight, barrier epochs, the sweep for main-memory races and the reports
// grouped by site (see check_state.hpp).
#include "check_state.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <tuple>
#include <utility>

#include "code_site.hpp"

namespace ldmsim::detail {

namespace {
struct Block {
  DeviceAddr lo;
  DeviceAddr hi;
  std::uint32_t rec;
};

// Whether block [lo, hi) meets a block of request r (block k: [main + k * pitch, + block_bytes)).
bool block_meets(DeviceAddr lo, DeviceAddr hi, const DmaRequest& r) {
  if (hi <= r.main || lo >= r.main_end()) return false;
  if (!r.strided()) return true;
  const std::uint64_t pitch = r.block_pitch();
  const std::uint64_t bs = r.block_bytes();
  const std::uint64_t k_min = lo < r.main + bs ? 0 : (lo - r.main - bs) / pitch + 1;
  const std::uint64_t k_max = std::min((hi - r.main - 1) / pitch, r.block_count() - 1);
  return k_min <= k_max;
}

constexpr std::uint64_t kMaxExpandedBlocks = 1u << 16;  // more: the request's whole span stands for it

bool ldm_meets(const DmaRequest& r, LdmAddr lo, LdmAddr hi) {
  return r.ldm < hi && lo < r.ldm + r.length;
}

std::string_view verb(const DmaRequest& r) {
  return r.op == DmaOp::kGet ? "get" : "put";
}
}  // namespace

bool main_overlaps(const DmaRequest& a, const DmaRequest& b) {
  if (a.main_end() <= b.main || b.main_end() <= a.main) return false;
  const DmaRequest& fewer = a.block_count() <= b.block_count() ? a : b;
  const DmaRequest& other = &fewer == &a ? b : a;
  for (std::uint64_t k = 0; k < fewer.block_count(); ++k) {
    const DeviceAddr lo = fewer.main + k * fewer.block_pitch();
    if (block_meets(lo, lo + fewer.block_bytes(), other)) return true;
  }
  return false;
}

GroupCheck& CheckState::group(int cg, const Arch& arch, const MainMemory& memory) {
  auto& slot = groups[cg];
  if (!slot) slot = std::make_unique<GroupCheck>(checks, cg, arch, memory, namer, ldm_namer, device);
  return *slot;
}

GroupCheck::GroupCheck(CheckSet checks, int cg, const Arch& arch, const MainMemory& memory, const BufferNamer& namer,
                       const LdmNamer& ldm_namer, const DeviceInit& device)
    : checks_(checks), cg_(cg), arch_(arch), memory_(memory), namer_(namer), ldm_namer_(ldm_namer), device_(device) {
  for (std::uint32_t i = 0; i < arch.cores_per_group(); ++i) {
    cores_.push_back(std::make_unique<CoreCheckImpl>(*this, static_cast<int>(i)));
  }
  reset_clocks();
}

void GroupCheck::start_launch(const std::string& kernel, const std::vector<const std::byte*>& ldm,
                              std::vector<const Cycle*> clocks, std::uint64_t ldm_bytes, bool with_groups) {
  kernel_ = kernel;
  with_groups_ = with_groups && checks_.races;
  node_epoch_ = 0;
  launch_log_.clear();
  launch_puts_.clear();
  suspects_.clear();
  clocks_ = std::move(clocks);
  recs_.clear();
  reset_clocks();
  for (std::size_t i = 0; i < cores_.size(); ++i) cores_[i]->start_launch(ldm[i], ldm_bytes, checks_.init);
}

void GroupCheck::on_issue(int core, const DmaRequest& request, Cycle issue, Cycle end, std::uint64_t id,
                          std::uint64_t code_site) {
  CoreCheckImpl& c = *cores_[static_cast<std::size_t>(core)];
  const int row = core / static_cast<int>(arch_.cols);
  Rec rec;
  rec.core = core;
  rec.request = request;
  rec.issue = issue;
  rec.end = end;
  rec.id = id;
  rec.snapshot = static_cast<std::uint32_t>(clocks_vc_[static_cast<std::size_t>(core)].size() - 1);
  rec.site = std::exchange(c.next_site_, 0);
  rec.where = std::exchange(c.next_where_, nullptr);
  if (rec.where == nullptr && code_site != 0) {
    rec.site = code_site;
    rec.where = code_site_text;
  }
  rec.node_epoch = node_epoch_;
  if (with_groups_) launch_log_.push_back(rec);
  if (checks_.init && device_.tracking()) check_device_init(rec);
  if (checks_.races) {
    for (std::uint32_t index : c.open_) {
      const Rec& old = recs_[index];
      // With the program's waits unseen, `old` may well have been waited for: not known to be in flight.
      if (!c.waits_unseen_ && (request.op == DmaOp::kPut || old.request.op == DmaOp::kPut) &&
          main_overlaps(request, old.request)) {
        add("dma-race",
            fmt::format("same-core {} {}{} / {} {}{} on '{}'", old.request.api, verb(old.request), site_key(old),
                        request.api, verb(request), site_key(rec), buffer(request.main)),
            core, issue,
            fmt::format("core {} issued {} while its own {} on overlapping main memory is still in flight (not "
                        "waited for): the order in which they reach memory is not defined",
                        core, describe(rec), describe(old)));
      }
      // A get writes ldm; with the athread layer watching the program's accesses, before_issue reported it.
      const bool writes_ldm = request.op == DmaOp::kGet || old.request.op == DmaOp::kGet;
      if (!c.observes_ && writes_ldm &&
          ldm_meets(old.request, static_cast<LdmAddr>(request.ldm),
                    static_cast<LdmAddr>(request.ldm + request.length))) {
        add("ldm-race",
            fmt::format("{} {}{} over in-flight {} {}{}", request.api, verb(request), site_key(rec), old.request.api,
                        verb(old.request), site_key(old)),
            core, issue,
            fmt::format("core {} issued {} on ldm bytes that its {} still uses (it was not waited for)", core,
                        describe(rec), describe(old)));
      }
    }
    if (request.op == DmaOp::kPut && !c.observes_ && !c.waits_unseen_ && c.ldm_ != nullptr) {
      rec.source_hash = hash_source(rec);
      rec.hashed = true;
    }
  }
  if (checks_.init && !c.written_.empty() && request.op == DmaOp::kGet) {
    // A get defines the bytes it brings, in every receiving core's ldm.
    const int cols = static_cast<int>(arch_.cols);
    for (int r = 0; r < static_cast<int>(arch_.rows); ++r) {
      const bool receives = request.mode == DmaMode::kPe    ? r == row
                            : request.mode == DmaMode::kRow ? r == row
                                                            : ((request.row_mask >> r) & 1u) != 0;
      if (!receives) continue;
      for (int k = r * cols; k < (r + 1) * cols; ++k) {
        if (request.mode == DmaMode::kPe && k != core) continue;
        cores_[static_cast<std::size_t>(k)]->mark_written(static_cast<LdmAddr>(request.ldm), request.length);
      }
    }
  }
  c.open_.push_back(static_cast<std::uint32_t>(recs_.size()));
  recs_.push_back(std::move(rec));
}

void GroupCheck::close(std::uint32_t index, Cycle at, bool by_wait) {
  Rec& r = recs_[index];
  if (!r.open) return;
  r.open = false;
  const auto me = static_cast<std::size_t>(r.core);
  r.done = clocks_vc_[me].back()[me];
  if (by_wait && r.request.op == DmaOp::kPut && checks_.races) {
    const CoreCheckImpl& c = *cores_[static_cast<std::size_t>(r.core)];
    if (r.hashed && c.ldm_ != nullptr && hash_source(r) != r.source_hash) {
      add("put-source", fmt::format("{}{} source changed", r.request.api, site_key(r)), r.core, at,
          fmt::format("core {} changed the ldm source of {} before waiting for it (seen at its wait, cycle {}): the "
                      "bytes written to main memory are not defined",
                      r.core, describe(r), at));
    }
  }
}

void GroupCheck::check_device_init(const Rec& rec) {
  const DmaRequest& q = rec.request;
  std::vector<std::pair<DeviceAddr, DeviceAddr>> unwritten;
  std::vector<std::pair<DeviceAddr, DeviceAddr>> missing;
  for (std::uint64_t k = 0; k < q.block_count(); ++k) {
    const DeviceAddr lo = q.main + k * q.block_pitch();
    const DeviceAddr hi = lo + q.block_bytes();
    if (q.op == DmaOp::kPut) {
      launch_puts_.add(lo, hi);
      continue;
    }
    unwritten.clear();
    device_.unwritten(lo, hi, unwritten);
    for (const auto& [a, b] : unwritten) launch_puts_.subtract_from(a, b, missing);
  }
  if (!missing.empty()) suspects_.push_back({rec, std::move(missing)});
}

void finish_device_init(const std::vector<GroupCheck*>& groups, DeviceInit& device) {
  for (GroupCheck* g : groups) {
    for (GroupCheck::Suspect& s : g->suspects_) {
      // Other groups' puts of this launch: written, whatever their time (unordered ones are races).
      std::vector<std::pair<DeviceAddr, DeviceAddr>> left = std::move(s.unwritten);
      for (GroupCheck* other : groups) {
        if (other == g || other->launch_puts_.empty()) continue;
        std::vector<std::pair<DeviceAddr, DeviceAddr>> next;
        for (const auto& [a, b] : left) other->launch_puts_.subtract_from(a, b, next);
        left = std::move(next);
      }
      if (left.empty()) continue;
      std::uint64_t bytes = 0;
      for (const auto& [a, b] : left) bytes += b - a;
      const auto [lo, hi] = left.front();
      const Region* region = g->memory_.find_region(lo, 1);
      const std::string where = region != nullptr ? fmt::format(" (bytes {} to {} of its {})", lo - region->base,
                                                                hi - region->base, region->bytes)
                                                  : std::string();
      const GroupCheck::Rec& r = s.rec;
      g->add("uninit-device-read",
             fmt::format("{} get{} of '{}'", r.request.api, GroupCheck::site_key(r), g->buffer(lo)), r.core, r.issue,
             fmt::format("core {} {} reads main-memory bytes [0x{:x}, 0x{:x}) of '{}'{}{} that nothing wrote since "
                         "it was allocated (no host write or upload, no put before it)",
                         r.core, g->describe(r), lo, hi, g->buffer(lo), where,
                         bytes > hi - lo ? fmt::format(", {} such bytes in all", bytes) : std::string()));
    }
    g->suspects_.clear();
  }
  for (GroupCheck* g : groups) {
    for (const auto& [lo, hi] : g->launch_puts_.ranges()) device.mark(lo, hi);
    g->launch_puts_.clear();
  }
}

void GroupCheck::on_wait(int core, std::uint64_t id, Cycle at) {
  CoreCheckImpl& c = *cores_[static_cast<std::size_t>(core)];
  if (c.observes_) return;  // completion is what the program observes, not when the layer charges the wait
  auto it = std::find_if(c.open_.begin(), c.open_.end(), [&](std::uint32_t i) { return recs_[i].id == id; });
  if (it == c.open_.end()) return;
  close(*it, at, true);
  c.open_.erase(it);
}

void GroupCheck::on_wait_all(int core, Cycle at) {
  CoreCheckImpl& c = *cores_[static_cast<std::size_t>(core)];
  if (c.observes_) return;
  for (std::uint32_t i : c.open_) close(i, at, true);
  c.open_.clear();
}

void GroupCheck::on_barrier(Scope scope, int row, int col) {
  if (scope == Scope::kNode) ++node_epoch_;  // orders this group's requests against the other groups'
  if (scope != Scope::kRow && scope != Scope::kCol) {
    sweep();
    return;
  }
  const auto cols = static_cast<int>(arch_.cols);
  std::vector<std::size_t> members;
  for (std::size_t k = 0; k < cores_.size(); ++k) {
    if (scope == Scope::kRow ? static_cast<int>(k) / cols == row : static_cast<int>(k) % cols == col)
      members.push_back(k);
  }
  // Each member's own component moves past everything it did before the barrier, then all members learn all of it.
  std::vector<std::uint32_t> joined(cores_.size(), 0);
  for (std::size_t k : members) {
    const auto& vc = clocks_vc_[k].back();
    for (std::size_t i = 0; i < joined.size(); ++i) joined[i] = std::max(joined[i], i == k ? vc[i] + 1 : vc[i]);
  }
  for (std::size_t k : members) clocks_vc_[k].push_back(joined);
}

void GroupCheck::end_launch() {
  sweep();
  recs_.clear();
  for (auto& c : cores_) c->open_.clear();
}

void GroupCheck::reset_clocks() {
  clocks_vc_.assign(cores_.size(), {std::vector<std::uint32_t>(cores_.size(), 0)});
}

bool GroupCheck::ordered(const Rec& a, const Rec& b) const {
  const auto before = [this](const Rec& x, const Rec& y) {
    return x.done != ~0u &&
           clocks_vc_[static_cast<std::size_t>(y.core)][y.snapshot][static_cast<std::size_t>(x.core)] > x.done;
  };
  return before(a, b) || before(b, a);
}

// Every pair of requests of different cores in this epoch that overlap in main memory, at least one a put, and are
// not ordered by a row or column barrier, is a race whatever order the run gave them. Then the epoch's completed
// requests are forgotten (a group barrier orders them before everything after it).
void GroupCheck::sweep() {
  if (checks_.races && recs_.size() > 1) {
    std::vector<Block> writes;
    std::vector<Block> all;
    for (std::uint32_t i = 0; i < recs_.size(); ++i) {
      const DmaRequest& q = recs_[i].request;
      const bool expand = q.strided() && q.block_count() <= kMaxExpandedBlocks;
      const std::uint64_t n = expand ? q.block_count() : 1;
      for (std::uint64_t k = 0; k < n; ++k) {
        const DeviceAddr lo = q.main + k * q.block_pitch();
        const Block b{lo, expand ? lo + q.block_bytes() : q.main_end(), i};
        all.push_back(b);
        if (q.op == DmaOp::kPut) writes.push_back(b);
      }
    }
    if (!writes.empty()) {
      std::sort(writes.begin(), writes.end(),
                [](const Block& x, const Block& y) { return x.lo != y.lo ? x.lo < y.lo : x.rec < y.rec; });
      std::vector<DeviceAddr> reach(writes.size());  // the furthest end of writes[0..j]
      for (std::size_t j = 0; j < writes.size(); ++j) reach[j] = std::max(writes[j].hi, j ? reach[j - 1] : 0);
      std::vector<bool> reported(recs_.size(), false);
      for (const Block& b : all) {
        if (reported[b.rec]) continue;
        const Rec& rb = recs_[b.rec];
        auto end = std::lower_bound(writes.begin(), writes.end(), b.hi,
                                    [](const Block& w, DeviceAddr hi) { return w.lo < hi; });
        for (auto j = static_cast<std::ptrdiff_t>(end - writes.begin()) - 1; j >= 0; --j) {
          if (reach[static_cast<std::size_t>(j)] <= b.lo) break;
          const Block& w = writes[static_cast<std::size_t>(j)];
          const Rec& rw = recs_[w.rec];
          if (w.hi <= b.lo || rw.core == rb.core) continue;
          if (rb.request.op == DmaOp::kPut && w.rec > b.rec) continue;  // a put pair: reported from the later one
          if (!(rw.request.strided() || rb.request.strided()) || main_overlaps(rw.request, rb.request)) {
            if (ordered(rw, rb)) continue;
            const Rec& first = rw.issue <= rb.issue ? rw : rb;
            const Rec& second = &first == &rw ? rb : rw;
            add("dma-race",
                fmt::format("{} {}{} / {} {}{} on '{}'", first.request.api, verb(first.request), site_key(first),
                            second.request.api, verb(second.request), site_key(second), buffer(std::max(w.lo, b.lo))),
                second.core, second.issue,
                fmt::format("core {} {} and core {} {} overlap in main memory at 0x{:x} with no barrier between "
                            "them: the result depends on which reaches memory first",
                            first.core, describe(first), second.core, describe(second), std::max(w.lo, b.lo)));
            reported[b.rec] = true;
            break;
          }
        }
      }
    }
  }
  // Keep only requests still in flight; renumber the cores' open lists.
  std::vector<Rec> kept;
  for (auto& c : cores_) c->open_.clear();
  for (Rec& r : recs_) {
    if (!r.open) continue;
    cores_[static_cast<std::size_t>(r.core)]->open_.push_back(static_cast<std::uint32_t>(kept.size()));
    kept.push_back(std::move(r));
  }
  recs_ = std::move(kept);
  reset_clocks();  // the barrier ordered everything before it; what is still in flight is ordered by nothing yet
  for (Rec& r : recs_) r.snapshot = 0;
}

void sweep_across_groups(const std::vector<GroupCheck*>& groups) {
  struct Span {
    DeviceAddr lo;
    DeviceAddr hi;
    std::uint32_t group;
    std::uint32_t rec;
  };
  std::vector<Span> writes;
  std::vector<Span> all;
  for (std::uint32_t g = 0; g < groups.size(); ++g) {
    const auto& log = groups[g]->launch_log_;
    for (std::uint32_t i = 0; i < log.size(); ++i) {
      const DmaRequest& q = log[i].request;
      const bool expand = q.strided() && q.block_count() <= kMaxExpandedBlocks;
      const std::uint64_t n = expand ? q.block_count() : 1;
      for (std::uint64_t k = 0; k < n; ++k) {
        const DeviceAddr lo = q.main + k * q.block_pitch();
        const Span span{lo, expand ? lo + q.block_bytes() : q.main_end(), g, i};
        all.push_back(span);
        if (q.op == DmaOp::kPut) writes.push_back(span);
      }
    }
  }
  if (writes.empty()) return;
  const auto by_address = [](const Span& x, const Span& y) {
    return std::tie(x.lo, x.group, x.rec) < std::tie(y.lo, y.group, y.rec);
  };
  std::sort(writes.begin(), writes.end(), by_address);
  std::vector<DeviceAddr> reach(writes.size());  // the furthest end of writes[0..j]
  for (std::size_t j = 0; j < writes.size(); ++j) reach[j] = std::max(writes[j].hi, j ? reach[j - 1] : 0);
  std::vector<std::vector<bool>> reported(groups.size());
  for (std::size_t g = 0; g < groups.size(); ++g) reported[g].assign(groups[g]->launch_log_.size(), false);
  for (const Span& b : all) {
    if (reported[b.group][b.rec]) continue;
    const GroupCheck::Rec& rb = groups[b.group]->launch_log_[b.rec];
    auto end =
        std::lower_bound(writes.begin(), writes.end(), b.hi, [](const Span& w, DeviceAddr hi) { return w.lo < hi; });
    for (auto j = static_cast<std::ptrdiff_t>(end - writes.begin()) - 1; j >= 0; --j) {
      if (reach[static_cast<std::size_t>(j)] <= b.lo) break;
      const Span& w = writes[static_cast<std::size_t>(j)];
      if (w.hi <= b.lo || w.group == b.group) continue;
      const GroupCheck::Rec& rw = groups[w.group]->launch_log_[w.rec];
      if (rw.node_epoch != rb.node_epoch) continue;  // a node barrier between them orders them
      // A put pair is reported once, from the request of the later group.
      if (rb.request.op == DmaOp::kPut && std::tie(w.group, w.rec) > std::tie(b.group, b.rec)) continue;
      if ((rw.request.strided() || rb.request.strided()) && !main_overlaps(rw.request, rb.request)) continue;
      const bool w_first = std::tie(rw.issue, w.group, rw.core) <= std::tie(rb.issue, b.group, rb.core);
      const std::uint32_t first_group = w_first ? w.group : b.group;
      const std::uint32_t second_group = w_first ? b.group : w.group;
      const GroupCheck::Rec& first = w_first ? rw : rb;
      const GroupCheck::Rec& second = w_first ? rb : rw;
      GroupCheck& a = *groups[first_group];
      GroupCheck& z = *groups[second_group];
      const DeviceAddr at = std::max(w.lo, b.lo);
      z.add(
          "dma-race",
          fmt::format("groups {} {}{} / {} {}{} on '{}'", first.request.api, verb(first.request),
                      GroupCheck::site_key(first), second.request.api, verb(second.request),
                      GroupCheck::site_key(second), z.buffer(at)),
          second.core, second.issue,
          fmt::format("core group {} core {} {} and core group {} core {} {} overlap in main memory at 0x{:x} with no "
                      "node barrier between them (core groups share main memory): the result depends on which "
                      "reaches memory first",
                      a.cg_, first.core, a.describe(first), z.cg_, second.core, z.describe(second), at));
      reported[b.group][b.rec] = true;
      break;
    }
  }
}

void GroupCheck::add(std::string_view kind, const std::string& site, int core, Cycle cycle, std::string message) {
  std::string key = fmt::format("{}|{}|{}", kind, kernel_, site);
  auto [it, fresh] = sites_.try_emplace(std::move(key));
  CheckReport& r = it->second.first;
  if (fresh) {
    r = CheckReport{std::string(kind), kernel_, cg_, core, cycle, std::move(message), 1};
    return;
  }
  ++r.count;
  if (std::tie(cycle, core) < std::tie(r.cycle, r.core)) {
    r.cycle = cycle;
    r.core = core;
    r.message = std::move(message);
  }
}

std::string GroupCheck::buffer(DeviceAddr addr) const {
  if (namer_) {
    if (std::string name = namer_(addr); !name.empty()) return name;
  }
  const Region* region = memory_.find_region(addr, 1);
  if (region == nullptr) return fmt::format("0x{:x}", addr);
  if (!region->name.empty()) return region->name;
  return fmt::format("allocation at 0x{:x}", region->base);
}

std::string GroupCheck::ldm_bytes(int core, LdmAddr lo, LdmAddr hi) const {
  std::string name = ldm_namer_ ? ldm_namer_(cg_, core, lo) : std::string();
  return fmt::format("ldm bytes [0x{:x}, 0x{:x}){}", lo, hi, name.empty() ? "" : " of " + name);
}

std::string GroupCheck::describe(const Rec& r) const {
  const DmaRequest& q = r.request;
  std::string shape = q.strided() ? fmt::format(" in blocks of {} bytes, stride {}", q.bsize, q.stride) : "";
  std::string name = ldm_namer_ ? ldm_namer_(cg_, r.core, static_cast<LdmAddr>(q.ldm)) : std::string();
  return fmt::format(
      "{} ({} {}, {} bytes{}, main [0x{:x}, 0x{:x}) in '{}', ldm [0x{:x}, 0x{:x}){}, issued at cycle {}{}, "
      "done at {})",
      q.api, to_string(q.mode), verb(q), q.length, shape, q.main, q.main_end(), buffer(q.main), q.ldm, q.ldm + q.length,
      name.empty() ? "" : " in " + name, r.issue, r.where != nullptr ? " by " + r.where(r.site) : std::string(), r.end);
}

std::string GroupCheck::site_key(const Rec& r) {
  return r.where != nullptr ? fmt::format("@{:x}", r.site) : std::string();
}

std::uint64_t GroupCheck::hash_source(const Rec& r) const {
  const std::byte* p = cores_[static_cast<std::size_t>(r.core)]->ldm_ + r.request.ldm;
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (std::uint64_t i = 0; i < r.request.length; ++i) {
    h = (h ^ static_cast<std::uint64_t>(p[i])) * 1099511628211ull;
  }
  return h;
}

// ---- CoreCheckImpl ----

void CoreCheckImpl::start_launch(const std::byte* ldm, std::uint64_t ldm_bytes, bool track_init) {
  observes_ = false;
  waits_unseen_ = false;
  ldm_ = ldm;
  open_.clear();
  if (!track_init) {
    written_.clear();
    return;
  }
  written_.assign((ldm_bytes + 63) / 64, 0);
}

bool CoreCheckImpl::checks_init() const {
  return !written_.empty();
}

void CoreCheckImpl::mark_written(LdmAddr offset, std::uint64_t bytes) {
  if (written_.empty()) return;
  const std::uint64_t end = std::min<std::uint64_t>(offset + bytes, written_.size() * 64);
  for (std::uint64_t i = offset; i < end;) {
    if (i % 64 == 0 && i + 64 <= end) {  // a whole word at once: gets mark kilobytes
      written_[i / 64] = ~0ull;
      i += 64;
    } else {
      written_[i / 64] |= 1ull << (i % 64);
      ++i;
    }
  }
}

bool CoreCheckImpl::written(LdmAddr offset, std::uint64_t bytes) const {
  const std::uint64_t end = std::min<std::uint64_t>(offset + bytes, written_.size() * 64);
  for (std::uint64_t i = offset; i < end; ++i) {
    if (((written_[i / 64] >> (i % 64)) & 1u) == 0) return false;
  }
  return true;
}

void CoreCheckImpl::observed(std::uint64_t request_id) {
  auto it = std::find_if(open_.begin(), open_.end(), [&](std::uint32_t i) { return group_.recs_[i].id == request_id; });
  if (it == open_.end()) return;
  group_.close(*it, 0, false);
  open_.erase(it);
}

void CoreCheckImpl::ldm_access(LdmAddr offset, std::uint64_t bytes, bool write, bool init, std::uint64_t site,
                               SiteText where) {
  const auto hi = static_cast<LdmAddr>(offset + bytes);
  if (group_.checks_.races) {
    for (std::uint32_t index : open_) {
      GroupCheck::Rec& r = group_.recs_[index];
      if (r.access_reported || !ldm_meets(r.request, offset, hi) || (!write && r.request.op == DmaOp::kPut)) continue;
      r.access_reported = true;  // one report per request: a loop over the buffer is one occurrence
      if (r.request.op == DmaOp::kGet) {
        report("ldm-race", site,
               fmt::format("{} {} {} while {} into them is in flight (its reply was not waited for)", where(site),
                           write ? "writes" : "reads", group_.ldm_bytes(core_, offset, hi), group_.describe(r)));
      } else if (write) {
        report("put-source", site,
               fmt::format("{} writes {}, the source of {}, before the put was waited for", where(site),
                           group_.ldm_bytes(core_, offset, hi), group_.describe(r)));
      }
      break;
    }
  }
  if (written_.empty() || offset + bytes > written_.size() * 64) return;
  if (write) {
    mark_written(offset, bytes);
  } else if (init && !written(offset, bytes)) {
    report("uninit-read", site,
           fmt::format("{} reads {} that nothing wrote since the kernel started", where(site),
                       group_.ldm_bytes(core_, offset, hi)));
    mark_written(offset, bytes);  // reported once
  }
}

void CoreCheckImpl::before_issue(LdmAddr lo, LdmAddr hi, bool get, std::string_view api, std::uint64_t site,
                                 SiteText where) {
  if (!group_.checks_.races) return;
  for (std::uint32_t index : open_) {
    GroupCheck::Rec& r = group_.recs_[index];
    if (r.access_reported || !ldm_meets(r.request, lo, hi) || (!get && r.request.op == DmaOp::kPut)) continue;
    r.access_reported = true;
    report("ldm-race", site,
           fmt::format("{} issues {} {} on {} while {} on them is in flight (its reply was not waited for)",
                       where(site), api, get ? "get" : "put", group_.ldm_bytes(core_, lo, hi), group_.describe(r)));
    break;
  }
}

void CoreCheckImpl::report(std::string_view kind, std::uint64_t site, std::string message) {
  group_.add(kind, fmt::format("site {:x}", site), core_, *group_.clocks_[static_cast<std::size_t>(core_)],
             std::move(message));
}

}  // namespace ldmsim::detail
