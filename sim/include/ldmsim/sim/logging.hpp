// Logging set-up: one named spdlog logger per component ("sim", "dma", "runtime", "tools", "placement"); the level
// comes from SPDLOG_LEVEL (spdlog's env syntax) and can be overridden by the CLI's -v / -q.
#pragma once

#include <spdlog/logger.h>

#include <memory>
#include <string_view>

namespace ldmsim {

/// The logger for a component, created on first use (stderr sink). Thread-safe.
std::shared_ptr<spdlog::logger> logger(std::string_view component);
/// Sets the level of every ldmsim logger, now and for loggers created later.
void set_log_level(spdlog::level::level_enum level);

}  // namespace ldmsim
