// Inputs read as they lie (BoundOp::reads_any_layout): the rule the layout pass applies to a whole op's inputs and
// the split executor to its pieces', so that both read a copy in another op's layout under the same conditions.
#pragma once

#include <optional>

#include "ldmsim/kernels/padding.hpp"

namespace ldmsim {

/// `from` (a layout planned on another 4-D view of the same elements) on `view`, when one layout of `view` places
/// every element where `from` does with nested pitches (a row within a plane within a sample).
std::optional<Layout> on_view(const Layout& from, const Shape4& view);

/// The plan a reader that would want `own` reads the copy `lies` (the same tensor, or the same region of it) through,
/// when reading it as it lies saves a re-layout: an even total, and contiguous runs of at least 128 elements (or as
/// long as `own`'s). A re-layout's copy reads shorter runs (7x7 planes, one element per channel of a
/// squeeze-excitation vector) several at a time, which one request per run costs more than the re-layout saves.
std::optional<PaddingPlan> read_as_it_lies(const PaddingPlan& lies, const PaddingPlan& own);

}  // namespace ldmsim
