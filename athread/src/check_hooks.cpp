// Checking mode in the athread layer (see check_hooks.hpp).
#include "check_hooks.hpp"

#include <dlfcn.h>
#include <fmt/format.h>
#include <link.h>

#include <algorithm>
#include <filesystem>

#include "code_lines.hpp"
#include "host_arrays.hpp"
#include "session.hpp"

namespace ldmsim::athread {

bool g_slave_accesses_reported = false;

void start_checks(SlaveContext& ctx) {
  ctx.check = core_check(*ctx.core);
  ctx.check_accesses = false;
  ctx.check_bounds = false;
  ctx.unobserved.clear();
  ctx.reply_words.clear();
  ctx.spin_word = 0;
  ctx.spin_loads = 0;
  if (ctx.check == nullptr) return;
  const Session& s = session();
  ctx.check_bounds = enabled_checks(*s.machine).bounds;
  // __thread_local data starts with its initial values, defined like any written byte.
  if (s.tl_size() != 0) ctx.check->mark_written(ctx.tl_offset, s.tl_size());
  if (g_slave_accesses_reported) {
    ctx.check->program_observes_completion();
    ctx.check_accesses = true;
  } else {
    ctx.check->program_waits_unseen();  // its reply spins are plain loads: completion is known at the charge only
  }
}

void observe_reply(SlaveContext& ctx, volatile void* reply) {
  std::erase_if(ctx.unobserved, [&](const std::pair<volatile void*, std::uint64_t>& u) {
    if (u.first != reply) return false;
    ctx.check->observed(u.second);
    return true;
  });
}

std::string describe_site(std::uint64_t pc) {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(pc), &info) == 0 || info.dli_fname == nullptr) {
    return "slave code (address unknown)";
  }
  std::string function = info.dli_sname != nullptr ? fmt::format(" in {}", info.dli_sname) : std::string();
  // The call's return address: one past the access (or the call into the layer).
  if (const std::optional<CodeLine> line = code_line(pc - 1)) {
    if (function.empty() && !line->function.empty()) function = fmt::format(" in {}", line->function);
    return fmt::format("slave code{} at {}:{}", function, line->file, line->line);
  }
  // No line information (built without -g): the place in the object, the same in every run.
  const std::string file = std::filesystem::path(info.dli_fname).filename().string();
  const auto offset = pc - reinterpret_cast<std::uintptr_t>(info.dli_fbase) - 1;
  return fmt::format("slave code{} at {}+0x{:x}", function, file, offset);
}

std::string host_array_name(DeviceAddr device) {
  const auto host = session().mirror.to_host(device);
  if (!host) return {};
  if (const std::optional<HostArray> array = host_array_at(*host)) return fmt::format("{} (host array)", array->name);
  Dl_info info{};
  ElfW(Sym)* symbol = nullptr;  // dladdr1 hands out a pointer to const data through void**
  if (dladdr1(reinterpret_cast<void*>(*host), &info, reinterpret_cast<void**>(&symbol), RTLD_DL_SYMENT) == 0 ||
      info.dli_sname == nullptr || symbol == nullptr) {
    return {};
  }
  const auto start = reinterpret_cast<std::uintptr_t>(info.dli_saddr);
  if (*host >= start + std::max<std::uint64_t>(symbol->st_size, 1)) {  // past the nearest array: not in one
    return fmt::format("host memory after {} (which ends at {:#x})", info.dli_sname, start + symbol->st_size);
  }
  return fmt::format("{} (host array)", info.dli_sname);
}

void check_host_bounds(SlaveContext& ctx, const DmaRequest& r, std::uintptr_t main_host, std::uintptr_t pc) {
  const std::optional<HostArray> array = host_array_at(main_host);
  if (!array) return;  // not in an array the symbol table lists: nothing known of its bounds
  const std::uint64_t extent = r.main_end() - r.main;
  if (main_host + extent <= array->end()) return;
  const std::uintptr_t last = main_host + extent - 1;
  const std::optional<HostArray> into = host_array_at(last);
  const std::string strided = r.strided() ? fmt::format(", blocks of {} bytes {} apart", r.bsize, r.block_pitch()) : "";
  ctx.check->report(
      "bounds", pc,
      fmt::format("{} {} ({} {}, {} bytes{}, host [{:#x}, {:#x})) starts in '{}' (host array [{:#x}, {:#x}), {} "
                  "bytes) and runs {} bytes past its end{}",
                  describe_site(pc), r.api, to_string(r.mode), to_string(r.op), r.length, strided, main_host,
                  main_host + extent, array->name, array->start, array->end(), array->bytes,
                  main_host + extent - array->end(),
                  into ? fmt::format(", into '{}'", into->name) : std::string(" (into memory no host array holds)")));
}

namespace {
// Where host address `at` lies in the core's ldm; false when it is not ldm (main memory, host globals).
bool ldm_offset(const SlaveContext& ctx, std::uintptr_t at, std::size_t size, LdmAddr& offset, bool& heap) {
  const auto ldm = reinterpret_cast<std::uintptr_t>(ctx.ldm);
  if (at >= ldm && at + size <= ldm + ctx.ldm_bytes) {
    offset = static_cast<LdmAddr>(at - ldm);
    heap = true;
    return true;
  }
  heap = false;
  const Session& s = session();
  const auto tl = reinterpret_cast<std::uintptr_t>(s.tl_begin);
  if (at >= tl && at + size <= tl + s.tl_size()) {
    offset = static_cast<LdmAddr>(ctx.tl_offset + (at - tl));
    return true;
  }
  if (at < ctx.stack_top && ctx.stack_top - at <= s.fiber_stack_bytes) {
    const std::uintptr_t depth = ctx.stack_top - at;
    if (depth > ctx.stack_hi || size > depth) return false;
    offset = static_cast<LdmAddr>(ctx.stack_hi - depth);
    return offset >= ctx.stack_lo || ctx.stack_shared;
  }
  return false;
}
}  // namespace

namespace {
// A reply counter by its symbol ('get_reply'), or where it lies.
std::string reply_counter_name(std::uintptr_t reply) {
  Dl_info info{};
  const bool named = dladdr(reinterpret_cast<void*>(reply), &info) != 0 && info.dli_sname != nullptr;
  return named ? fmt::format("'{}'", info.dli_sname) : std::string("on the slave stack");
}

// A load of reply word `word` with nothing in flight on it: nothing but an athread call (which resets the run, see
// current()) or a store of the core's own can change it, so a long enough run of such loads is a spin that never
// ends (it waits for a count the requests issued on the counter cannot reach): trapped as the deadlock it is.
void note_spin(SlaveContext& ctx, std::uintptr_t word, std::uintptr_t pc) {
  constexpr std::uint64_t kEndlessSpin = 1u << 20;  // loads in a row; a spin that can end needs one
  if (word != ctx.spin_word) {
    ctx.spin_word = word;
    ctx.spin_loads = 0;
  }
  if (++ctx.spin_loads < kEndlessSpin) return;
  trap(ctx, FaultKind::kDeadlock,
       fmt::format("{} spins on reply counter {} (now {}) with no request counted on it in flight and no athread call "
                   "in the loop ({} loads in a row): it waits for a count that the requests issued on it cannot "
                   "reach; this loop would hang on hardware",
                   describe_site(pc), reply_counter_name(word), *reinterpret_cast<volatile int*>(word), kEndlessSpin));
}
}  // namespace

void check_access(std::uintptr_t addr, std::size_t size, bool write, std::uintptr_t pc) {
  SlaveContext* ctx = session().active;
  if (ctx == nullptr || !ctx->check_accesses) return;
  bool counted = false;  // the access touched a reply counter with a request in flight on it
  if (!ctx->unobserved.empty()) {
    for (const auto& [reply, id] : ctx->unobserved) {
      const auto r = reinterpret_cast<std::uintptr_t>(const_cast<void*>(reply));
      if (r == 0 || addr + size <= r || r + sizeof(int) <= addr) continue;
      counted = true;
      if (write) {
        ctx->check->report("reply-reset", pc,
                           fmt::format("{} writes reply counter {} while a request counted on it is still in flight "
                                       "(not waited for): the count it will reach is not the one the code expects",
                                       describe_site(pc), reply_counter_name(r)));
      } else {
        observe_reply(*ctx, reply);  // spinning on the counter: the program sees the completions
      }
      break;
    }
  }
  if (counted) {
    ctx->spin_word = 0;
  } else if (!ctx->reply_words.empty()) {
    for (const std::uintptr_t word : ctx->reply_words) {
      if (addr + size <= word || word + sizeof(int) <= addr) continue;
      if (write) {
        ctx->spin_word = 0;  // the program changes the counter itself
      } else {
        note_spin(*ctx, word, pc);
      }
      break;
    }
  }
  if (!ctx->check->in_flight() && !ctx->check->checks_init()) return;
  LdmAddr offset = 0;
  bool heap = false;
  if (!ldm_offset(*ctx, addr, size, offset, heap)) return;
  ctx->check->ldm_access(offset, size, write, heap, pc, describe_site);
}

}  // namespace ldmsim::athread
