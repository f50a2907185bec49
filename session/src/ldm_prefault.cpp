// The local store an ONNX run's machine commits while the model is read (see ldm_prefault.hpp).
#include "ldm_prefault.hpp"

#include <algorithm>
#include <fstream>
#include <string>

namespace ldmsim {

std::size_t ldm_prefault_bytes(std::uintmax_t model_bytes, std::uint64_t ldm_bytes, bool huge_pages) {
  if (huge_pages && model_bytes >= kWholeStoreModelBytes) return static_cast<std::size_t>(ldm_bytes);
  return static_cast<std::size_t>(std::min<std::uint64_t>(kLdmPrefaultBytes, ldm_bytes));
}

bool huge_pages_on_request() {
  static const bool granted = [] {
    std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");  // e.g. "always [madvise] never"
    std::string policy;
    return std::getline(in, policy) &&
           (policy.find("[always]") != std::string::npos || policy.find("[madvise]") != std::string::npos);
  }();
  return granted;
}

}  // namespace ldmsim
