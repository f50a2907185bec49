// The checker's state (docs/checking.md): per machine the enabled checks and one GroupCheck per core group, each
// touched only by the host thread running its group. A GroupCheck keeps the DMA requests of the current barrier
// epoch and sweeps them for main-memory races at each group barrier and at the launch's end; per core it keeps the
// requests still in flight (ldm races, put sources) and, for code that reports its accesses, which ldm bytes
// were written.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "context_races.hpp"
#include "device_init.hpp"
#include "ldmsim/dma/request.hpp"
#include "ldmsim/runtime/check.hpp"
#include "ldmsim/runtime/check_names.hpp"
#include "ldmsim/runtime/core.hpp"
#include "ldmsim/sim/arch.hpp"
#include "ldmsim/sim/main_memory.hpp"

namespace ldmsim::detail {

class GroupCheck;

/// One core's part: requests in flight and the written-bytes map of its ldm.
class CoreCheckImpl final : public CoreCheck {
 public:
  CoreCheckImpl(GroupCheck& group, int core) : group_(group), core_(core) {}
  void program_observes_completion() override { observes_ = true; }
  void program_waits_unseen() override { waits_unseen_ = true; }
  void observed(std::uint64_t request_id) override;
  void ldm_access(LdmAddr offset, std::uint64_t bytes, bool write, bool init, std::uint64_t site,
                  SiteText where) override;
  void before_issue(LdmAddr lo, LdmAddr hi, bool get, std::string_view api, std::uint64_t site,
                    SiteText where) override;
  void mark_written(LdmAddr offset, std::uint64_t bytes) override;
  bool checks_init() const override;
  bool in_flight() const override { return !open_.empty(); }
  void report(std::string_view kind, std::uint64_t site, std::string message) override;
  /// The code issuing the next request (see set_issue_site).
  void set_issue_site(std::uint64_t site, SiteText where) {
    next_site_ = site;
    next_where_ = where;
  }

 private:
  friend class GroupCheck;
  void start_launch(const std::byte* ldm, std::uint64_t ldm_bytes, bool track_init);
  bool written(LdmAddr offset, std::uint64_t bytes) const;

  GroupCheck& group_;
  int core_;
  bool observes_ = false;               // completion is what the program observes (athread reply counters)
  bool waits_unseen_ = false;           // the program's waits are not seen: completion is known only late
  const std::byte* ldm_ = nullptr;      // host view of the core's ldm (its context's window)
  std::vector<std::uint32_t> open_;     // indices into GroupCheck::recs_ of requests in flight
  std::vector<std::uint64_t> written_;  // one bit per ldm byte; empty unless the init check is on
  std::uint64_t next_site_ = 0;         // the code issuing the next request (0: not known)
  SiteText next_where_ = nullptr;
};

/// One core group's checks during launches.
class GroupCheck {
 public:
  GroupCheck(CheckSet checks, int cg, const Arch& arch, const MainMemory& memory, const BufferNamer& namer,
             const LdmNamer& ldm_namer, const DeviceInit& device);

  const CheckSet& checks() const { return checks_; }
  CoreCheckImpl& core(int id) { return *cores_[static_cast<std::size_t>(id)]; }

  // ---- from the runtime, on the group's host thread ----
  /// A launch starts: `ldm` and `clocks` hold each core's ldm (host view) and clock. `with_groups`: other core groups
  /// (or other models' launches) run at the same time, so its requests are kept for sweep_across_groups (and
  /// ContextRaces).
  void start_launch(const std::string& kernel, const std::vector<const std::byte*>& ldm,
                    std::vector<const Cycle*> clocks, std::uint64_t ldm_bytes, bool with_groups);
  /// `code_site`: the kernel code that issued it (code_site.hpp; 0: not known); the core's layer's site
  /// (set_issue_site) takes precedence.
  void on_issue(int core, const DmaRequest& request, Cycle issue, Cycle end, std::uint64_t id,
                std::uint64_t code_site = 0);
  void on_wait(int core, std::uint64_t id, Cycle at);
  void on_wait_all(int core, Cycle at);
  /// A barrier of `scope` released; `row` / `col`: the releasing core's.
  void on_barrier(Scope scope, int row, int col);
  void end_launch();

  /// Reports of this group, by site key.
  struct Site {
    CheckReport first;
  };
  const std::unordered_map<std::string, Site>& sites() const { return sites_; }
  void clear_reports() { sites_.clear(); }

 private:
  friend class CoreCheckImpl;
  friend void sweep_across_groups(const std::vector<GroupCheck*>& groups);
  friend void finish_device_init(const std::vector<GroupCheck*>& groups, DeviceInit& device);
  friend class ContextRaces;
  struct Rec {
    int core = 0;
    DmaRequest request;
    Cycle issue = 0;
    Cycle end = 0;
    std::uint64_t id = 0;
    std::uint32_t snapshot = 0;     // the issuing core's vector clock at issue (index into clocks_[core])
    std::uint32_t done = ~0u;       // the issuing core's own clock component at completion (~0: in flight)
    std::uint64_t source_hash = 0;  // a put's ldm source at issue (checked at its wait)
    bool hashed = false;            // source_hash was taken (the wait compares it)
    bool open = true;
    bool access_reported = false;  // the core's own accesses to it were reported (once per request)
    std::uint64_t site = 0;        // the issuing code, when known (set_issue_site)
    SiteText where = nullptr;
    std::uint32_t node_epoch = 0;  // node barriers the group had passed at issue
  };
  void close(std::uint32_t index, Cycle at, bool by_wait);
  /// The init check of device memory at a request's issue: a put's blocks join launch_puts_; a get's blocks that no
  /// host write, earlier launch or earlier put of this group wrote make it a suspect.
  void check_device_init(const Rec& rec);
  void sweep();
  bool ordered(const Rec& a, const Rec& b) const;
  void add(std::string_view kind, const std::string& site, int core, Cycle cycle, std::string message);
  std::string describe(const Rec& r) const;
  /// "@SITE" of a request's issuing code for report keys; empty when not known.
  static std::string site_key(const Rec& r);
  std::string buffer(DeviceAddr addr) const;
  /// "ldm bytes [LO, HI)" of `core`, with the array's name when the namer knows it.
  std::string ldm_bytes(int core, LdmAddr lo, LdmAddr hi) const;
  std::uint64_t hash_source(const Rec& r) const;

  CheckSet checks_;
  int cg_;
  const Arch& arch_;
  const MainMemory& memory_;
  const BufferNamer& namer_;
  const LdmNamer& ldm_namer_;
  std::string kernel_;
  std::vector<std::unique_ptr<CoreCheckImpl>> cores_;
  std::vector<const Cycle*> clocks_;
  std::vector<Rec> recs_;  // this epoch's requests, plus earlier ones still in flight
  // Per core, its vector clock after each row / column barrier it passed since the last group barrier (the last is
  // the current one): a request completed at own component d happens before a request issued with a clock whose
  // component for that core exceeds d. Row then column barriers order every core, transitively.
  std::vector<std::vector<std::vector<std::uint32_t>>> clocks_vc_;
  void reset_clocks();
  std::unordered_map<std::string, Site> sites_;
  bool with_groups_ = false;
  std::uint32_t node_epoch_ = 0;
  std::vector<Rec> launch_log_;  // with_groups_: the launch's requests, for sweep_across_groups
  const DeviceInit& device_;     // written bytes of tracked allocations before this launch
  RangeSet launch_puts_;         // main memory this group's puts wrote in this launch
  struct Suspect {
    Rec rec;
    std::vector<std::pair<DeviceAddr, DeviceAddr>> unwritten;  // at issue
  };
  std::vector<Suspect> suspects_;  // gets of bytes not known to be written at their issue
};

/// After a launch of several core groups (on the control core, every group finished): reports pairs of requests of
/// different groups that overlap in main memory, at least one a put, with no node barrier between them (groups share
/// main memory; their own barriers order nothing across groups). Reports go to the group of the later request.
void sweep_across_groups(const std::vector<GroupCheck*>& groups);

/// After every launch (on the control core, every group finished): reports the suspect gets whose bytes no group's
/// put of the launch wrote either (other groups' puts count whatever their time: an unordered pair is a race the
/// sweeps report), then marks the launch's puts in `device`.
void finish_device_init(const std::vector<GroupCheck*>& groups, DeviceInit& device);

/// The machine's checks (a HostState of its control core, shared with its views).
struct CheckState {
  CheckSet checks;
  DeviceInit device;                                  // written bytes of allocations made while the init check is on
  BufferNamer namer;                                  // empty: allocation names
  LdmNamer ldm_namer;                                 // empty: ldm offsets only
  std::map<int, std::unique_ptr<GroupCheck>> groups;  // by node core group; made on the control core
  /// The control core whose launches follow (set_launch_control), and the races between control cores' launches.
  struct Control {
    std::uint32_t id = 0;
    std::string label;
  };
  std::optional<Control> control;
  ContextRaces control_races{"the host threads' spawns share no barrier (host synchronization is not seen)"};

  GroupCheck& group(int cg, const Arch& arch, const MainMemory& memory);
};

/// In each launch thread's HostState: the checks of the machine whose launch runs (null when none), so a core
/// finds its CoreCheck through Core::group_state.
struct CheckLink {
  CheckState* state = nullptr;
};

/// Whether main-memory ranges of two requests share a byte (block by block for strided ones).
bool main_overlaps(const DmaRequest& a, const DmaRequest& b);

}  // namespace ldmsim::detail
