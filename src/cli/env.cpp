// loraprobe env: the environment record a report carries, without running a sweep.
// Without a GPU it reports what it can and exits 0.

#include <iterator>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/gpu_probe.hpp"
#include "cli/validators.hpp"
#include "compile/toolchain.hpp"
#include "cuda/context.hpp"
#include "cuda/cublas.hpp"
#include "cuda/device_info.hpp"
#include "cuda/driver.hpp"
#include "kernels/kernel_sets.hpp"
#include "protocol/protocol.hpp"
#include "report/environment.hpp"
#include "sass/analyze.hpp"
#include "sass/nvdisasm.hpp"
#include "stack/probe.hpp"
#include "sweep/report_builder.hpp"
#include "worker/worker.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"
#include "version.hpp"

namespace lp::cli {

namespace {

struct EnvOptions {
  bool json = false;
  std::string python;  ///< --python: whose vLLM, torch and Triton; empty: stack::default_python()
  bool allow_jit_cache = false;
  int device = 0;
};

/// A kernel set as env shows it: its report record and its bundled ptxas's words.
struct EnvKernelSet {
  report::KernelSetRecord record;
  std::string ptxas_version;  ///< as the manifest records it; empty when it does not
};

/// What env found; each part that could not be found says why instead.
struct EnvRecord {
  report::HostRecord host;
  compile::ToolkitRecord toolkit;
  std::vector<compile::PtxasInfo> ptxas;
  std::optional<sass::Nvdisasm> nvdisasm;
  std::string nvdisasm_error;
  std::vector<EnvKernelSet> kernel_sets;
  std::string kernel_sets_error;
  std::string cublas_path;
  std::string cublas_error;
  std::optional<protocol::GpuRecord> gpu;
  std::string no_gpu_reason;
  std::optional<stack::PythonStack> python;  ///< the Python stack vLLM runs in (loraprobe check's probe)
  std::string python_error;
};

EnvRecord collect(const EnvOptions& o) {
  EnvRecord env;
  env.host = report::host_record();
  env.toolkit = compile::toolkit_record();
  env.ptxas = compile::discover_ptxas();
  // Each part says why it is missing, and env goes on to the next.
  env.nvdisasm_error = error_of([&] { env.nvdisasm = sass::find_nvdisasm(); });
  env.kernel_sets_error = error_of([&] {
    const kernels::KernelSets sets = kernels::KernelSets::load();
    for (const report::KernelSetRecord& set : sweep::kernel_sets_record(sets, sets.versions())) {
      env.kernel_sets.push_back({set, sets.at(set.triton_version).manifest().ptxas.version});
    }
  });
  if (!env.kernel_sets_error.empty()) {
    env.kernel_sets.clear();
  }
  env.python_error = error_of([&] {
    env.python = stack::probe_stack(o.python.empty() ? stack::default_python() : o.python);
  });
  // cuBLAS is found without a GPU (a dlopen): say which file the reference would use.
  env.cublas_error = error_of([&] { env.cublas_path = cublas_api().library; });
  // The GPU part: the same record a sweep's worker sends.
  env.gpu = probe_gpu(o.device, o.allow_jit_cache, env.no_gpu_reason);
  return env;
}

/// env --json: each part in its record's JSON form (a report's environment has the same).
JsonText env_json(const EnvRecord& env) {
  const auto error_record = [](const std::string& why) { return JsonText::object({{"error", JsonText::of_string(why)}}); };
  std::vector<JsonText> ptxas;
  for (const compile::PtxasInfo& p : env.ptxas) {
    ptxas.push_back(p.to_json_text());
  }
  std::vector<JsonText> sets;
  for (const EnvKernelSet& set : env.kernel_sets) {
    sets.push_back(set.record.to_json_text());  // as a report's environment.kernel_sets
  }
  std::vector<std::pair<std::string, JsonText>> members = {
      {"loraprobe", JsonText::object({{"version", JsonText::of_string(k_version)},
                                      {"git_sha", JsonText::of_string(k_git_sha)}})},
      {"host", env.host.to_json_text()},
      {"toolkit", env.toolkit.to_json_text()},
      {"ptxas", JsonText::array(ptxas)},
      {"nvdisasm", env.nvdisasm ? sass::to_json_text(*env.nvdisasm) : error_record(env.nvdisasm_error)},
      {"kernel_sets", env.kernel_sets_error.empty() ? JsonText::array(sets) : error_record(env.kernel_sets_error)},
      {"cublas", env.cublas_error.empty() ? JsonText::object({{"path", JsonText::of_string(env.cublas_path)}})
                                          : error_record(env.cublas_error)},
      {"gpu", env.gpu ? protocol::to_json_text(*env.gpu) : JsonText()},
      {"python_stack", env.python ? env.python->to_json_text() : error_record(env.python_error)}};
  if (!env.gpu) {
    members.emplace_back("no_gpu_reason", JsonText::of_string(env.no_gpu_reason));
  }
  return JsonText::object(members);
}

/// The text form of env; paths and messages come from the machine, so the caller
/// escapes it for the terminal.
std::string env_text(const EnvRecord& env) {
  std::string out;
  auto to = std::back_inserter(out);
  fmt::format_to(to, "loraprobe {} (git {})\n", k_version, k_git_sha);
  fmt::format_to(to, "host: {} ({} {}, {} cpus)\n", env.host.hostname, env.host.os, env.host.kernel, env.host.cpus);
  const compile::ToolkitRecord& tk = env.toolkit;
  fmt::format_to(to, "CUDA toolkit: {} at {}{} (built against CUDA {})\n", tk.version.value_or("none"),
                 tk.root.value_or("-"), tk.origin ? fmt::format(" (from {})", *tk.origin) : std::string(),
                 tk.build_version);
  fmt::format_to(to, "ptxas binaries found: {}\n", env.ptxas.size());
  for (const compile::PtxasInfo& p : env.ptxas) {
    fmt::format_to(to, "  {:<10} {:<10} {}\n", p.spec, p.version.empty() ? "?" : p.version, p.path);
  }
  if (!env.nvdisasm) {
    fmt::format_to(to, "nvdisasm: none ({})\n", env.nvdisasm_error);
  } else {
    fmt::format_to(to, "nvdisasm: {} {} ({})\n", env.nvdisasm->version, env.nvdisasm->path, env.nvdisasm->origin);
  }
  if (!env.cublas_error.empty()) {
    fmt::format_to(to, "cuBLAS: none ({})\n", env.cublas_error);
  } else {
    fmt::format_to(to, "cuBLAS: {}\n", env.cublas_path);
  }
  if (!env.kernel_sets_error.empty()) {
    fmt::format_to(to, "kernel sets: {}\n", env.kernel_sets_error);
  } else {
    for (const EnvKernelSet& set : env.kernel_sets) {
      fmt::format_to(to, "kernel set: Triton {}, {} variants, bundled ptxas {}\n", set.record.triton_version,
                     set.record.variants, set.ptxas_version.empty() ? "?" : set.ptxas_version);
    }
  }
  if (env.python) {
    const stack::PythonStack& p = *env.python;
    fmt::format_to(to, "Python stack ({}, Python {}): {}\n", p.executable, p.python_version, p.headline());
    fmt::format_to(to, "  ptxas Triton runs for sm_90: {}\n",
                   p.ptxas.sm90 ? fmt::format("{} {}{}", p.ptxas.sm90->version, p.ptxas.sm90->path,
                                              p.ptxas.overridden ? fmt::format(" (from {})", p.ptxas.knob) : "")
                                : fmt::format("unknown ({})", p.ptxas.error.empty() ? "no Triton" : p.ptxas.error));
    fmt::format_to(to, "  vLLM LoRA: ops {}; dual-stream (PDL) {}; tuned configs {}\n", p.vllm_ops_dir.value_or("-"),
                   p.use_gdc() ? "on" : "off", p.tuned_folder.value_or("vLLM's defaults"));
  } else {
    fmt::format_to(to, "Python stack: {}\n", env.python_error);
  }
  if (!env.gpu) {
    fmt::format_to(to, "GPU: {}\n", env.no_gpu_reason);
    return out;
  }
  const protocol::GpuRecord& g = *env.gpu;
  fmt::format_to(to, "GPU {}: {} (compute capability {}, {} SMs, {} MiB), {}\n", g.ordinal, g.name,
                 g.compute_capability, g.sm_count, g.total_memory_bytes >> 20, g.uuid);
  fmt::format_to(to, "driver {} (CUDA {}), built for CUDA {}, cuBLAS {}, JIT cache {}, module loading {}\n",
                 g.driver_version, g.driver_cuda_version, g.runtime_version, g.cublas_version,
                 g.jit_cache_disabled ? "disabled" : "allowed", g.module_loading);
  return out;
}

}  // namespace

Command add_env_command(CLI::App& app) {
  auto o = std::make_shared<EnvOptions>();
  CLI::App* sub = app.add_subcommand("env", "Print the environment record: toolkit, compilers, nvdisasm, GPU");
  sub->add_flag("--json", o->json, "Print JSON");
  sub->add_option("--device", o->device, "CUDA device ordinal")->check(CLI::Range(0, k_max_device));
  sub->add_option("--python", o->python,
                  "The interpreter whose vLLM, torch and Triton to report (default: the python3 beside loraprobe, "
                  "else the one on PATH)")
      ->check(non_empty());
  sub->footer("Examples:\n  loraprobe env\n  loraprobe env --json > env.json\nExits 0 with or without a GPU.");
  return {sub, [o] {
            const EnvRecord env = collect(*o);
            if (o->json) {
              fmt::print("{}\n", env_json(env).pretty());
            } else {
              fmt::print("{}", escape::terminal(env_text(env)));
            }
            return 0;
          }};
}

}  // namespace lp::cli
