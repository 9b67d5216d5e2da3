// loraprobe env: the environment record a report carries, without running a sweep.
// Without a GPU it reports what it can and exits 0.

#include <iterator>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/validators.hpp"
#include "compile/toolchain.hpp"
#include "cuda/context.hpp"
#include "cuda/cublas.hpp"
#include "cuda/device_info.hpp"
#include "cuda/driver.hpp"
#include "kernels/kernel_sets.hpp"
#include "report/environment.hpp"
#include "sass/nvdisasm.hpp"
#include "sweep/report_builder.hpp"
#include "worker/worker.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"
#include "version.hpp"

namespace lp::cli {

namespace {

struct EnvOptions {
  bool json = false;
  bool allow_jit_cache = false;
  int device = 0;
};

nlohmann::json collect(const EnvOptions& o) {
  nlohmann::json env = {{"loraprobe", {{"version", k_version}, {"git_sha", k_git_sha}}},
                        {"host", report::host_record().to_json()},
                        {"toolkit", compile::toolkit_record()}};
  nlohmann::json compilers = nlohmann::json::array();
  for (const compile::PtxasInfo& p : compile::discover_ptxas()) {
    compilers.push_back(p.to_json());
  }
  env["ptxas"] = compilers;
  // Each part says why it is missing, and env goes on to the next.
  if (const std::string why = error_of([&] {
        const sass::Nvdisasm tool = sass::find_nvdisasm();
        env["nvdisasm"] = {
            {"path", tool.path}, {"origin", tool.origin}, {"version", tool.version}, {"sha256", tool.sha256}};
      });
      !why.empty()) {
    env["nvdisasm"] = {{"error", why}};
  }
  if (const std::string why = error_of([&] {
    env["kernel_sets"] = nlohmann::json::array();
    const kernels::KernelSets sets = kernels::KernelSets::load();
    for (const report::KernelSetRecord& set : sweep::kernel_sets_record(sets, sets.versions())) {
      env["kernel_sets"].push_back(set.to_json());  // as a report's environment.kernel_sets
    }
      });
      !why.empty()) {
    env["kernel_sets"] = {{"error", why}};
  }
  // cuBLAS is found without a GPU (a dlopen): say which file the reference would use.
  if (const std::string why = error_of([&] { env["cublas"] = {{"path", cublas_api().library}}; }); !why.empty()) {
    env["cublas"] = {{"error", why}};
  }
  // The GPU part: the same record a sweep's worker sends. This process may touch
  // CUDA: env runs no kernels, so a fault cannot hide behind it.
  if (const std::string why = error_of([&] {
    init_driver(o.allow_jit_cache);
    if (o.device < 0 || o.device >= device_count()) {
      throw EnvironmentError(fmt::format("no CUDA device {} ({} present)", o.device, device_count()));
    }
    // Free memory and the loading mode are read in a context, as a worker has one.
    PrimaryContext context(o.device);
    context.make_current();
    env["gpu"] = protocol::to_json(worker::gpu_record(o.device));
      });
      !why.empty()) {
    env["gpu"] = nullptr;
    env["no_gpu_reason"] = fmt::format("no CUDA device: {}", why);
  }
  return env;
}

/// The text form of env; paths and messages come from the machine, so the caller
/// escapes it for the terminal.
std::string env_text(const nlohmann::json& env) {
  std::string out;
  auto to = std::back_inserter(out);
  fmt::format_to(to, "loraprobe {} (git {})\n", env["loraprobe"]["version"].get<std::string>(),
             env["loraprobe"]["git_sha"].get<std::string>());
  const auto& host = env["host"];
  fmt::format_to(to, "host: {} ({} {}, {} cpus)\n", host["hostname"].get<std::string>(), host["os"].get<std::string>(),
             host["kernel"].get<std::string>(), host["cpus"].get<unsigned>());
  const auto& tk = env["toolkit"];
  fmt::format_to(to, "CUDA toolkit: {} at {}{} (built against CUDA {})\n",
             tk["version"].is_null() ? "none" : tk["version"].get<std::string>(),
             tk["root"].is_null() ? "-" : tk["root"].get<std::string>(),
             tk["origin"].is_null() ? "" : fmt::format(" (from {})", tk["origin"].get<std::string>()),
             tk["build_version"].get<std::string>());
  fmt::format_to(to, "ptxas binaries found: {}\n", env["ptxas"].size());
  for (const auto& p : env["ptxas"]) {
    fmt::format_to(to, "  {:<10} {:<10} {}\n", p["spec"].get<std::string>(),
               p["version"].is_null() ? "?" : p["version"].get<std::string>(), p["path"].get<std::string>());
  }
  if (env["nvdisasm"].contains("error")) {
    fmt::format_to(to, "nvdisasm: none ({})\n", env["nvdisasm"]["error"].get<std::string>());
  } else {
    fmt::format_to(to, "nvdisasm: {} {} ({})\n", env["nvdisasm"]["version"].get<std::string>(),
               env["nvdisasm"]["path"].get<std::string>(), env["nvdisasm"]["origin"].get<std::string>());
  }
  if (env["cublas"].contains("error")) {
    fmt::format_to(to, "cuBLAS: none ({})\n", env["cublas"]["error"].get<std::string>());
  } else {
    fmt::format_to(to, "cuBLAS: {}\n", env["cublas"]["path"].get<std::string>());
  }
  if (env["kernel_sets"].is_object()) {
    fmt::format_to(to, "kernel sets: {}\n", env["kernel_sets"]["error"].get<std::string>());
  } else {
    for (const auto& set : env["kernel_sets"]) {
      fmt::format_to(to, "kernel set: Triton {}, {} variants, bundled ptxas {}\n", set["triton_version"].get<std::string>(),
                 set["variants"].get<std::size_t>(), set["ptxas"].value("version", std::string("?")));
    }
  }
  if (env["gpu"].is_null()) {
    fmt::format_to(to, "GPU: {}\n", env["no_gpu_reason"].get<std::string>());
    return out;
  }
  const auto& g = env["gpu"];
  fmt::format_to(to, "GPU {}: {} (compute capability {}, {} SMs, {} MiB), {}\n", g["ordinal"].get<int>(), g["name"].get<std::string>(),
             g["compute_capability"].get<std::string>(), g["sm_count"].get<int>(),
             g["total_memory_bytes"].get<std::uint64_t>() >> 20, g["uuid"].get<std::string>());
  fmt::format_to(to, "driver {} (CUDA {}), built for CUDA {}, cuBLAS {}, JIT cache {}, module loading {}\n",
             g["driver_version"].get<std::string>(), g["driver_cuda_version"].get<std::string>(),
             g["runtime_version"].get<std::string>(), g["cublas_version"].get<std::string>(),
             g["jit_cache_disabled"].get<bool>() ? "disabled" : "allowed", g["module_loading"].get<std::string>());
  return out;
}

}  // namespace

Command add_env_command(CLI::App& app) {
  auto o = std::make_shared<EnvOptions>();
  CLI::App* sub = app.add_subcommand("env", "Print the environment record: toolkit, compilers, nvdisasm, GPU");
  sub->add_flag("--json", o->json, "Print JSON");
  sub->add_option("--device", o->device, "CUDA device ordinal")->check(CLI::Range(0, k_max_device));
  sub->footer("Examples:\n  loraprobe env\n  loraprobe env --json > env.json\nExits 0 with or without a GPU.");
  return {sub, [o] {
            const nlohmann::json env = collect(*o);
            if (o->json) {
              fmt::print("{}\n", env.dump(2));
            } else {
              fmt::print("{}", escape::terminal(env_text(env)));
            }
            return 0;
          }};
}

}  // namespace lp::cli
