// Checking mode (docs/checking.md): off by default; when enabled on a machine, its launches look for the bugs real
// kernels have (DMA races between and within cores, ldm used while a request is in flight, reads of never-written
// ldm) and collect reports grouped by site, without trapping and without changing any simulated result.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "ldmsim/sim/types.hpp"

namespace ldmsim {

class Machine;
class Core;

/// Which check classes run.
struct CheckSet {
  bool races = false;   ///< DMA-DMA overlaps in main memory and ldm, ldm used while a request is in flight
  bool init = false;    ///< reads of ldm / device bytes never written since the kernel started / their allocation
  bool bounds = false;  ///< accesses outside the allocation they started in
  bool any() const { return races || init || bounds; }
  friend bool operator==(const CheckSet&, const CheckSet&) = default;
};

/// Parses a comma-separated list of races, init, bounds, or all / off (empty = off). ConfigError names `source`
/// (e.g. "--check" or "LDMSIM_CHECK") and the word it does not know.
CheckSet parse_check_set(std::string_view text, std::string_view source);
/// "races,init,bounds", or "off".
std::string to_string(const CheckSet& checks);

/// One checking report: a site (one bug in the code) with the first occurrence and how often it happened.
struct CheckReport {
  std::string kind;  ///< dma-race, ldm-race, put-source, uninit-read, reply-reset
  std::string kernel;
  int cg = 0;  ///< node core group of the first occurrence
  int core = 0;
  Cycle cycle = 0;
  std::string message;  ///< the first occurrence: the DMA request(s), addresses and buffers involved
  std::uint64_t count = 1;
};

/// Names the main-memory buffer holding an address in reports; empty: the allocation's name (Machine::alloc's
/// AllocOptions::name) stands for it.
using BufferNamer = std::function<std::string(DeviceAddr)>;

/// Turns the checks on (or off with an empty set) for the machine's later launches (and its group views').
void enable_checks(Machine& machine, CheckSet checks);
/// The control core making the machine's next launches (the athread layer: the spawning host thread), named `label`
/// in reports ("host thread 1"). Launches of different control cores share main memory and no barrier: each is
/// checked against the others' launches so far, as models run together are (docs/checking.md). No effect unless
/// the races check is on; once called, every later launch belongs to some control core.
void set_launch_control(Machine& machine, std::uint32_t control, std::string label);
/// Names buffers in the machine's reports (the athread layer: host arrays by their symbol).
void set_check_buffer_namer(Machine& machine, BufferNamer namer);
/// Tells the init check that device bytes [addr, addr + bytes) hold defined data though nothing wrote them: memory
/// the allocator hands out zeroed and code deliberately relies on (staging's padding). No effect when it is off.
void mark_device_defined(Machine& machine, DeviceAddr addr, std::uint64_t bytes);
/// The checks the machine runs.
CheckSet enabled_checks(const Machine& machine);
/// Every report so far, one per site, in order of first occurrence (cycle, cg, core): the same for any thread count.
std::vector<CheckReport> check_reports(const Machine& machine);
/// Forgets the reports (a new run on the same machine).
void clear_check_reports(Machine& machine);
/// One line per report: "check KIND (N times): MESSAGE".
std::string format_check_report(const CheckReport& report);
/// The reports as stats.json's `check` array.
nlohmann::json check_reports_json(const std::vector<CheckReport>& reports);

/// Describes a code site for a report ("slave code at prog+0x1234"); called only when reporting.
using SiteText = std::string (*)(std::uint64_t site);

/// What code that sees a core's own ldm accesses tells the checker: the athread layer, whose slave code can be
/// built with every load and store reported (docs/checking.md). Used on the core's own fiber only.
class CoreCheck {
 public:
  virtual ~CoreCheck() = default;
  /// The program learns of completions itself (reply counters): from now on in this launch a request stays in
  /// flight, for the checks, until observed() says the program saw it complete, not until Core::wait.
  virtual void program_observes_completion() = 0;
  /// The program learns of completions itself but nothing sees it (athread code built without CHECK: its reply
  /// spins are plain loads): in this launch a request completes for the checks only when its layer charges its
  /// time, which can be long after the program waited, so the checks that hang on when the core's own request
  /// completed (its put's source changed before the wait, its later requests on the same main memory) are skipped.
  virtual void program_waits_unseen() = 0;
  /// The program saw request `request_id` (DmaHandle::id) complete.
  virtual void observed(std::uint64_t request_id) = 0;
  /// A load (write = false) or store of `bytes` ldm bytes at `offset` by the core; `site` identifies the code
  /// (reports are grouped by it), `where` describes it for the report. `init`: check the bytes were written.
  virtual void ldm_access(LdmAddr offset, std::uint64_t bytes, bool write, bool init, std::uint64_t site,
                          SiteText where) = 0;
  /// Before a request is issued on ldm bytes [lo, hi): reports requests still in flight on them (a get reusing
  /// a buffer before its previous request was waited for).
  virtual void before_issue(LdmAddr lo, LdmAddr hi, bool get, std::string_view api, std::uint64_t site,
                            SiteText where) = 0;
  /// Marks ldm bytes as written (data the program's own code did not write but that is defined).
  virtual void mark_written(LdmAddr offset, std::uint64_t bytes) = 0;
  /// Whether reads of never-written ldm are checked (the init class is on).
  virtual bool checks_init() const = 0;
  /// Whether any request of this core is still in flight for the checks.
  virtual bool in_flight() const = 0;
  /// A report of `kind` at `site` (grouped by kind and site).
  virtual void report(std::string_view kind, std::uint64_t site, std::string message) = 0;

 protected:
  CoreCheck() = default;
  CoreCheck(const CoreCheck&) = default;
  CoreCheck& operator=(const CoreCheck&) = default;
};

/// The calling core's checker, or null when its machine checks nothing.
CoreCheck* core_check(Core& core);

}  // namespace ldmsim
