// What the DMA engine reports for each request it finished (or trapped): the event, and the sink that takes it.
// The engine knows only this interface; the trace layer's recorder implements it.
#pragma once

#include <cstdint>

#include "ldmsim/dma/request.hpp"
#include "ldmsim/sim/types.hpp"

namespace ldmsim {

/// Outcome of a DMA request as recorded.
enum class DmaStatus : std::uint8_t { kOk = 0, kTrapped = 1, kLintWarning = 2 };

/// One DMA request, expanded (what readers see).
struct DmaEvent {
  Cycle issue = 0;  ///< cycle the request was issued (after the core's issue cost)
  Cycle start = 0;  ///< cycle its data started moving
  Cycle end = 0;    ///< completion cycle
  DeviceAddr main = 0;
  LdmAddr ldm = 0;
  std::uint32_t length = 0;
  std::uint32_t bsize = 0;
  std::uint32_t stride = 0;
  std::uint16_t core = 0;
  DmaOp op = DmaOp::kGet;
  DmaMode mode = DmaMode::kPe;
  DmaStatus status = DmaStatus::kOk;

  friend bool operator==(const DmaEvent&, const DmaEvent&) = default;
};

/// Where a DMA engine sends its events (the trace recorder of its core group).
class DmaEventSink {
 public:
  virtual ~DmaEventSink() = default;
  virtual void record(const DmaEvent& event) = 0;

 protected:
  DmaEventSink() = default;
  DmaEventSink(const DmaEventSink&) = default;
  DmaEventSink& operator=(const DmaEventSink&) = default;
  DmaEventSink(DmaEventSink&&) = default;
  DmaEventSink& operator=(DmaEventSink&&) = default;
};

}  // namespace ldmsim
