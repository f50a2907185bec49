// Buffer names for traps and checking reports (see buffer_names.hpp).
#include "buffer_names.hpp"

#include <fmt/format.h>

#include <iterator>

#include "host_arrays.hpp"
#include "session.hpp"

namespace ldmsim::athread {

std::string host_array_text(std::uintptr_t host) {
  const auto array = host_array_at(host);
  if (!array) return {};
  return fmt::format(", byte {} of host array '{}' ({} bytes)", host - array->start, array->name, array->bytes);
}

std::string ldm_array_name(const SlaveContext& ctx, LdmAddr offset) {
  const Session& s = session();
  if (offset >= ctx.tl_offset && offset - ctx.tl_offset < s.tl_size()) {
    // A __thread_local array: its initial image in the program's ldmsim_tl section carries the symbol.
    const auto image = reinterpret_cast<std::uintptr_t>(s.tl_begin) + (offset - ctx.tl_offset);
    if (const auto array = host_array_at(image)) {
      return fmt::format("'{}' (__thread_local, byte {} of {})", array->name, image - array->start, array->bytes);
    }
    return {};
  }
  const auto block = ctx.heap_blocks.upper_bound(offset);
  if (block != ctx.heap_blocks.begin() && offset < std::prev(block)->second) {
    return fmt::format("ldm_malloc'ed block [0x{:x}, 0x{:x})", std::prev(block)->first, std::prev(block)->second);
  }
  return {};
}

std::string active_ldm_name(int cg, int core, LdmAddr offset) {
  const SlaveContext* ctx = session().active;
  if (ctx == nullptr || ctx->core == nullptr || ctx->core->node_cg() != cg || ctx->core->id() != core) return {};
  return ldm_array_name(*ctx, offset);
}

std::string ldm_array_text(const SlaveContext& ctx, LdmAddr offset) {
  std::string name = ldm_array_name(ctx, offset);
  return name.empty() ? name : " (" + name + ")";
}

}  // namespace ldmsim::athread
