// The CLI's exit without teardown (see process_exit.hpp).
#include "process_exit.hpp"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <vector>

// Torn down where asked (cmake -DLDMSIM_CLI_TEARDOWN=ON; the debug and ubsan presets) and under a sanitizer.
#if defined(LDMSIM_EXIT_TEARS_DOWN)
#elif defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define LDMSIM_EXIT_TEARS_DOWN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define LDMSIM_EXIT_TEARS_DOWN 1
#endif
#endif

namespace ldmsim::cli {

namespace {
std::vector<std::shared_ptr<const void>>& kept() {
  static auto* objects = new std::vector<std::shared_ptr<const void>>();  // never destroyed: see the header
  return *objects;
}
}  // namespace

void keep_until_exit(std::shared_ptr<const void> object) {
  kept().push_back(std::move(object));
}

void exit_without_teardown(int code) {
#ifdef LDMSIM_EXIT_TEARS_DOWN
  for (auto it = kept().rbegin(); it != kept().rend(); ++it) it->reset();  // the last kept first, as a scope would
  kept().clear();
  std::exit(code);
#else
  spdlog::apply_all([](const std::shared_ptr<spdlog::logger>& logger) { logger->flush(); });
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  std::_Exit(code);
#endif
}

}  // namespace ldmsim::cli
