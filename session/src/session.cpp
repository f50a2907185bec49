// Session: loading (model.hpp, model_reader.hpp) and the machine a run gets.
#include "ldmsim/session/session.hpp"

#include "heap_retention.hpp"
#include "ldmsim/frontends/workload_json.hpp"
#include "ldmsim/graph/executor.hpp"
#include "ldmsim/sim/host_stopwatch.hpp"

namespace ldmsim {
namespace {

// What the import's helper commits of an ONNX run's machine: each core's first 64 KiB of local store (ResNet-18's
// cores touch 74 KiB on average; committing more did not pay for its memory, in small pages or huge ones) and the
// first 8 MiB of the first core group's memory, where the first ops' weights and activations go
// (docs/benchmarks.md).
constexpr std::size_t kPrefaultLdmBytes = std::size_t{64} << 10;
constexpr std::uint64_t kPrefaultMainBytes = std::uint64_t{8} << 20;

/// Whether the session's machine `warm` can run the next model on `arch`, reset: nothing but the session holds it
/// (a RunResult keeping it keeps its trace, and a run on another thread is using it).
bool reusable(const std::shared_ptr<Machine>& warm, const Arch& arch) {
  return warm && warm.use_count() == 1 && warm->arch() == arch;
}

}  // namespace

/// A machine made before the model it will run was read (during an ONNX import), for the next run on its arch.
struct Session::Spare {
  Arch arch;
  std::shared_ptr<Machine> machine;
};

Session::Session(RunConfig config, std::shared_ptr<const OperatorRegistry> registry)
    : config_(std::move(config)),
      registry_(registry ? std::move(registry)
                         : std::make_shared<const OperatorRegistry>(OperatorRegistry::builtin())) {}

Session::~Session() = default;

Arch Session::arch_for(const std::optional<std::string>& preferred) const {
  if (config_.custom_arch) return *config_.custom_arch;
  if (!config_.arch.empty()) return resolve_arch(config_.arch);
  return resolve_arch(preferred.value_or(kDefaultArch));
}

Model Session::load(const std::filesystem::path& file, const ModelReadOptions& options, std::size_t contexts) {
  const ModelReader& reader = model_reader_for(file);
  ModelReadOptions read_options = options;
  if (!config_.conv_algo.empty()) read_options.default_attrs["conv"] = {{"algo", config_.conv_algo}};
  // An ONNX model names no arch, so the machine it runs on can exist before the import: the import's helper
  // thread, idle once the heap is populated, commits the host memory the first launches touch meanwhile.
  if (reader.format() == "onnx" && contexts == 1 && !read_options.while_importing) {
    const Arch arch = arch_for(std::nullopt);
    const std::lock_guard lock(machines_mutex_);
    // Not when the session's machine will be reused: it is set up already.
    const bool reuse = reusable(warm_, arch);
    if (!reuse) {
      spare_ = std::make_unique<Spare>(Spare{arch, std::make_shared<Machine>(arch, config_.machine)});
      read_options.while_importing = [machine = spare_->machine](const std::atomic<bool>& stop) {
        machine->prefault_host_memory(kPrefaultLdmBytes, kPrefaultMainBytes, stop);
      };
    }
    // The import rounds the weights on as many host threads as the run will have.
    if (read_options.threads == 0) read_options.threads = (reuse ? warm_ : spare_->machine)->threads();
  }
  HostStopwatch clock;
  ReadModel read = reader.read(file, read_options, *registry_);
  Model model;
  model.origin_ = file.string();
  model.format_ = std::string(reader.format());
  if (reader.format() == "onnx") model.host_phases_["import_seconds"] = read.import_seconds;
  model.host_phases_["load_seconds"] = clock.lap() - read.import_seconds;
  return finish_load(std::move(model), std::move(read), contexts);
}

Model Session::load(const nlohmann::json& workload, const std::filesystem::path& base_dir, std::size_t contexts) {
  HostStopwatch clock;
  ReadModel read;
  WorkloadLoadOptions options;
  if (!config_.conv_algo.empty()) options.default_attrs["conv"] = {{"algo", config_.conv_algo}};
  options.files_read = &read.files_read;
  const std::string name = workload.is_object() && workload.contains("name") && workload["name"].is_string()
                               ? workload["name"].get<std::string>()
                               : std::string("workload");
  read.graph = workload_from_json(workload, "workload", base_dir, *registry_, name, options);
  Model model;
  model.format_ = "workload-json";
  model.host_phases_["load_seconds"] = clock.lap();
  return finish_load(std::move(model), std::move(read), contexts);
}

Model Session::finish_load(Model model, ReadModel read, std::size_t contexts) {
  HostStopwatch clock;
  model.notes_ = std::move(read.notes);
  model.files_read_ = std::move(read.files_read);
  model.contexts_ = contexts;
  model.loaded_.emplace(std::move(read.graph));
  model.arch_ = arch_for(model.loaded_->arch);
  if (contexts == 0) throw ConfigError("contexts must be at least 1 (the models that will share the machine)");
  const std::uint64_t ldm_share = ConcurrentMachine::ldm_share(model.arch_, contexts);  // refuses too many
  const std::string arch_source = config_.custom_arch     ? std::string()
                                  : !config_.arch.empty() ? config_.arch
                                                          : model.loaded_->arch.value_or(std::string());
  if (std::error_code error; !arch_source.empty() && std::filesystem::is_regular_file(arch_source, error)) {
    model.files_read_.emplace_back(arch_source);
  }
  model.staging_ = config_.staging          ? *config_.staging
                   : model.loaded_->staging ? *model.loaded_->staging
                                            : StagingPolicy::kMethod;
  if (config_.fusion) {
    Arch context = model.arch_;
    context.ldm_bytes = ldm_share;
    // Heads side by side pay only where the cost-aware placement may cut an attention by heads.
    const SplitOptions split = split_for(config_, model.format_);
    FusionOptions options;
    options.head_major = split.enabled && split.cost_aware;
    model.fused_.emplace(fuse(*model.loaded_, context, model.staging_, options));
    model.host_phases_["fusion_seconds"] = clock.lap();
  }
  model.plan_.emplace(plan_execution(model.graph(), model.staging_));
  check_runnable(model.graph(), *model.plan_, model.arch_);  // as `ldmsim plan` does, before anything is written
  return model;
}

std::shared_ptr<Machine> Session::take_machine(const Arch& arch) {
  const std::lock_guard lock(machines_mutex_);
  std::unique_ptr<Spare> spare = std::move(spare_);
  // A spare that a load on another thread is still prefaulting (its import helper holds it) stays with that load.
  if (spare && spare->machine.use_count() > 1) spare_ = std::move(spare);
  if (spare && spare->arch == arch) {
    warm_ = std::move(spare->machine);
  } else if (reusable(warm_, arch)) {
    warm_->reset();
  } else {
    warm_ = std::make_shared<Machine>(arch, config_.machine);
  }
  return warm_;
}

void Session::keep_heap() {
  const std::lock_guard lock(machines_mutex_);
  if (!kept_heap_) kept_heap_ = std::make_unique<HeapRetention>(kRunHeapKeepBytes);
}

}  // namespace ldmsim
