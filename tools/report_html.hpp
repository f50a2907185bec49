// The self-contained HTML report of `ldmsim report`: the trace summary as embedded JSON plus inline CSS and
// JavaScript that draw SVG pictures (core-grid utilization heat maps, bandwidth over time, request sizes) and
// tables. No network access is needed to view it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace ldmsim::cli {

/// Renders the report page for a summary in to_json(TraceSummary) form. When the page's script has drawn
/// everything it adds an element with id "report-rendered" (what the headless-browser test waits for).
std::string render_report_html(const nlohmann::json& summary, const std::string& title);

}  // namespace ldmsim::cli
