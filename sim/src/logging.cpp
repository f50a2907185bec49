// Logging set-up: "ldmsim.<component>" loggers on a colored stderr sink, kept in spdlog's registry so that
// SPDLOG_LEVEL (spdlog::cfg::load_env_levels) and spdlog::get see them. Default level: warn. Every line's text is
// made terminal-safe on its way to the sink: log lines quote names from user files (ops, kernels, tensors, faults).
#include "ldmsim/sim/logging.hpp"

#include <spdlog/cfg/env.h>
#include <spdlog/sinks/sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>

#include "ldmsim/sim/utf8.hpp"

namespace ldmsim {
namespace {

/// Hands every line to `inner` with its text as printed text is (valid_utf8, then terminal_safe); the pattern
/// and formatter are the inner sink's.
class TerminalSafeSink final : public spdlog::sinks::sink {
 public:
  explicit TerminalSafeSink(std::shared_ptr<spdlog::sinks::sink> inner) : inner_(std::move(inner)) {}

  void log(const spdlog::details::log_msg& msg) override {
    const std::string text = terminal_safe(valid_utf8(std::string_view(msg.payload.data(), msg.payload.size())));
    spdlog::details::log_msg safe = msg;
    safe.payload = text;
    inner_->log(safe);
  }
  void flush() override { inner_->flush(); }
  void set_pattern(const std::string& pattern) override { inner_->set_pattern(pattern); }
  void set_formatter(std::unique_ptr<spdlog::formatter> formatter) override {
    inner_->set_formatter(std::move(formatter));
  }

 private:
  std::shared_ptr<spdlog::sinks::sink> inner_;
};

constexpr std::string_view kPrefix = "ldmsim.";
constexpr auto kDefaultLevel = spdlog::level::warn;

/// The little state of our own: creation is serialized so a logger is never seen before its pattern and level
/// are set, and the level given to set_log_level is kept for loggers created later.
struct LoggingState {
  std::mutex mutex;
  bool env_loaded = false;
  std::optional<spdlog::level::level_enum> level;
};

LoggingState& state() {
  static LoggingState instance;
  return instance;
}

std::string trim(std::string text) {
  const char* spaces = " \n\r\t";
  text.erase(text.find_last_not_of(spaces) + 1);
  text.erase(0, text.find_first_not_of(spaces));
  return text;
}

/// Whether SPDLOG_LEVEL sets a global level or names `logger_name` (spdlog's "level,name=level,..." syntax), in
/// which case spdlog's registry already gave the logger its level; otherwise ldmsim's default applies.
bool env_sets_level_of(const std::string& logger_name) {
  const char* env = std::getenv("SPDLOG_LEVEL");
  if (env == nullptr) return false;
  std::istringstream entries{std::string{env}};
  std::string entry;
  while (std::getline(entries, entry, ',')) {
    const auto eq = entry.find('=');
    if (eq == std::string::npos) {
      if (!trim(entry).empty()) return true;
    } else if (trim(entry.substr(0, eq)) == logger_name) {
      return true;
    }
  }
  return false;
}

/// Creates and registers a logger; the caller holds the state's mutex.
std::shared_ptr<spdlog::logger> create(LoggingState& st, const std::string& name) {
  if (!st.env_loaded) {
    spdlog::cfg::load_env_levels();
    st.env_loaded = true;
  }
  auto log = std::make_shared<spdlog::logger>(
      name, std::make_shared<TerminalSafeSink>(std::make_shared<spdlog::sinks::stderr_color_sink_mt>()));
  try {
    spdlog::initialize_logger(log);                        // registry formatter, SPDLOG_LEVEL level, registration
    if (!spdlog::get(name)) spdlog::register_logger(log);  // automatic registration was turned off
  } catch (const spdlog::spdlog_ex&) {
    if (auto existing = spdlog::get(name)) return existing;  // registered under our name by someone else
    throw;
  }
  log->set_pattern("[%l] %n: %v");
  if (st.level) {
    log->set_level(*st.level);
  } else if (!env_sets_level_of(name)) {
    log->set_level(kDefaultLevel);
  }
  return log;
}

}  // namespace

std::shared_ptr<spdlog::logger> logger(std::string_view component) {
  std::string name{kPrefix};
  name += component;
  LoggingState& st = state();
  const std::lock_guard lock(st.mutex);
  if (auto existing = spdlog::get(name)) return existing;
  return create(st, name);
}

void set_log_level(spdlog::level::level_enum level) {
  LoggingState& st = state();
  const std::lock_guard lock(st.mutex);
  st.level = level;
  spdlog::apply_all([level](const std::shared_ptr<spdlog::logger>& log) {
    if (log->name().starts_with(kPrefix)) log->set_level(level);
  });
}

}  // namespace ldmsim
