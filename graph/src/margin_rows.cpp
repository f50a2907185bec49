// Margin rows (split.hpp, docs/splitting.md): when a producer's rows can be written straight into its consumer's
// buffer, leaving room for the halo, so that only the halo moves between groups.
#include "ldmsim/graph/split.hpp"

namespace ldmsim {

bool margin_rows(const Graph& graph, std::size_t t, const TensorRegion& held, const TensorRegion& need) {
  const TensorNode& node = graph.tensor(t);
  // Rows of NCHW only: the piece is then a box of the consumer's buffer at that buffer's pitches. Even rows keep
  // every row of the box and of the margins on whole 4-byte words.
  constexpr std::size_t kRows = 2;
  if (held.whole || need.whole || held.axis != kRows || need.axis != kRows || node.shape.rank() != 4) return false;
  if (node.shape[3] % 2 != 0) return false;
  if (need.begin > held.begin || held.end > need.end) return false;
  if (need.begin == held.begin && need.end == held.end) return false;  // read in place as it is
  // One reader: another would read the piece at the consumer's pitches, which its kernel did not ask for. Conv
  // kernels on both sides: they write a box of a larger buffer and read any plane pitch.
  if (node.consumers.size() != 1 || !node.producer) return false;
  return graph.ops()[*node.producer].type == "conv" && graph.ops()[node.consumers.front()].type == "conv";
}

}  // namespace ldmsim
