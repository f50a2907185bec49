// `--split auto|on|off`, `--split-rounding`, `--constant-packs` and `--place`, as `run` and `plan` take them
// (docs/splitting.md).
#include "commands.hpp"
#include "ldmsim/sim/fault.hpp"

namespace ldmsim::cli {

SplitOptions SplitFlags::options() const {
  SplitOptions options{split != "off",
                       parse_split_rounding(rounding).value_or(SplitRounding::kAlign),
                       packs == "on",
                       split == "auto",
                       {}};
  for (const std::string& pin : place) {
    const auto parsed = parse_pin(pin);  // the flag's check refused malformed ones
    if (!parsed) continue;
    const auto [at, added] = options.pinned.insert(*parsed);
    if (!added && at->second != parsed->second) {
      throw ConfigError("--place " + pin + ": op '" + parsed->first + "' is already placed " + at->second);
    }
  }
  return options;
}

void add_split_flags(CLI::App& cmd, SplitFlags& flags) {
  cmd.add_option("--split", flags.split,
                 "Split each op's tensors across the core groups' memories and run each piece on the group that "
                 "holds it (docs/splitting.md): auto (each op placed whole or split, whichever the arch's timing model "
                 "estimates cheaper over the whole graph), on (the splitting method's fixed rule) or off (every op on "
                 "every group, tensors in group 0's memory); default: auto for an ONNX model, off for a workload JSON")
      ->check(CLI::IsMember({"auto", "on", "off"}));
  cmd.add_option("--split-rounding", flags.rounding,
                 "How --split sizes pieces: align (boundaries on whole DMA transactions along a contiguous "
                 "dimension, else exact), exact (pieces differ by at most one index) or pad (pieces of whole "
                 "transactions, the dimension padded)")
      ->check(CLI::IsMember({"align", "exact", "pad"}))
      ->capture_default_str();
  cmd.add_option("--constant-packs", flags.packs,
                 "With --split on or auto: give each core one pack of the constants its piece reads (a marker area of "
                 "sizes and offsets, then the values), fetched by one DMA, where the op's kernel takes packs "
                 "(docs/splitting.md): on or off")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  cmd.add_option("--place", flags.place,
                 "With --split auto: fix op NAME's placement (repeatable): NAME=PLACEMENT, with the op's name and a "
                 "placement label as `ldmsim plan` lists them (whole, conv-h, whole on cg1, ...); the choice places "
                 "the other ops around it")
      ->check(
          [](const std::string& pin) {
            return parse_pin(pin) ? std::string() : "expected NAME=PLACEMENT (an op name and one of its placements)";
          },
          "NAME=PLACEMENT");
}

}  // namespace ldmsim::cli
