// The probe: scripts/check/probe.py, embedded, run with the user's interpreter.

#include "stack/probe.hpp"

#include <filesystem>
#include <iterator>

#include <fmt/format.h>

#include "stack/python_tree.hpp"
#include "tools/tools.hpp"
#include "util/error.hpp"
#include "util/files.hpp"
#include "util/subprocess.hpp"

namespace lp::stack {

namespace fs = std::filesystem;

namespace {

/// The probe's answer is a few KiB; a larger one is no probe's.
constexpr std::size_t k_max_probe_output = std::size_t{1} << 20;

std::string canonical(const std::string& path) {
  std::error_code ec;
  const fs::path p = fs::weakly_canonical(path, ec);
  return ec ? fs::absolute(path).lexically_normal().string() : p.string();
}

/// Whether `path` is a ptxas loraprobe may run for the user's stack: one inside their
/// Triton's backends/nvidia/bin, or the file a ptxas variable of this very process names
/// (the interpreter inherited our environment, so its Triton read the same value).
bool is_stack_ptxas(const PythonStack& stack, const std::string& path) {
  const std::string real = canonical(path);
  if (stack.triton_dir) {
    const std::string bin = canonical((fs::path(*stack.triton_dir) / "backends" / "nvidia" / "bin").string());
    if (fs::path(real).parent_path().string() == bin) {
      return true;
    }
  }
  for (const char* knob : {"TRITON_PTXAS_PATH", "TRITON_PTXAS_BLACKWELL_PATH"}) {
    if (const char* value = std::getenv(knob); value != nullptr && *value != '\0' && canonical(value) == real) {
      return true;
    }
  }
  return false;
}

/// The ptxas at `path` run for its version and hashed, and allowed to run as a
/// `ptxas=PATH` compiler of this check; nullopt (with `why` set) when it is none.
std::optional<compile::PtxasInfo> describe(const PythonStack& stack, const std::string& path, std::string& why) {
  if (!is_stack_ptxas(stack, path)) {
    why = fmt::format("{}: neither in Triton's bin folder nor named by TRITON_PTXAS_PATH: not run", path);
    return std::nullopt;
  }
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    why = fmt::format("{}: no such file", path);
    return std::nullopt;
  }
  compile::PtxasInfo info = compile::describe_found_ptxas(path, path);
  if (info.version.empty()) {
    why = fmt::format("{}: `--version` printed no CUDA tool version: not a ptxas", path);
    return std::nullopt;
  }
  tools::allow_found_program(info.path);
  return info;
}

}  // namespace

std::string default_python() { return tools::python_interpreter(); }

std::string PythonStack::headline() const {
  std::string out;
  auto to = std::back_inserter(out);
  const auto version = [](const std::optional<std::string>& v) { return v.value_or("not installed"); };
  fmt::format_to(to, "vLLM {}, torch {}, Triton {}", version(vllm_version), version(torch_version),
                 version(triton_version));
  if (ptxas.sm90) {
    fmt::format_to(to, ", ptxas {} ({}, for sm_90)", ptxas.sm90->version,
                   ptxas.overridden ? fmt::format("{}", ptxas.knob) : std::string("Triton's"));
  }
  return out;
}

PythonStack probe_stack(const std::string& python) {
  ProcessOptions options;
  options.timeout = std::chrono::seconds(120);
  options.max_output = k_max_probe_output;
  ProcessResult r;
  try {
    // From an empty folder: nothing in the caller's working directory can shadow a package.
    const TempDir cwd("loraprobe-probe-");
    options.working_directory = cwd.path();
    r = run_process({python, "-c", std::string(tree_file("scripts/check/probe.py"))}, options);
  } catch (const Error& e) {
    throw EnvironmentError(fmt::format("the Python interpreter {} cannot be run ({}); give the one vLLM "
                                       "runs with --python PATH",
                                       python, e.what()));
  }
  if (r.out_truncated) {
    throw EnvironmentError(fmt::format("{} answered the probe with more than {} bytes: no probe's answer", python,
                                       k_max_probe_output));
  }
  if (!r.ok()) {
    const std::string err = r.err.substr(r.err.rfind('\n', r.err.size() > 1 ? r.err.size() - 2 : 0) + 1);
    throw EnvironmentError(fmt::format("the probe did not run under {} ({}{}{})", python, r.describe(),
                                       err.empty() ? "" : ": ", err.substr(0, 300)));
  }
  PythonStack stack;
  try {
    stack = stack_from_probe_json(r.out, fmt::format("the probe's answer under {}", python));
  } catch (const InputError& e) {
    // Something else printed on its stdout (a sitecustomize, a wrapper), or it is no Python.
    throw EnvironmentError(fmt::format("{} did not answer as the probe does: {}", python, e.what()));
  }
  stack.python = python;
  describe_stack_ptxas(stack);
  return stack;
}

void describe_stack_ptxas(PythonStack& stack) {
  std::string why;
  TritonPtxas& p = stack.ptxas;
  if (p.sm90_path) {
    p.sm90 = describe(stack, *p.sm90_path, why);
    if (!p.sm90 && p.error.empty()) {
      p.error = why;
    }
    // Overridden: the variable is set and Triton runs what it names (a path that is no
    // file is ignored by Triton, which then runs its own).
    const auto named = stack.env.find(p.knob);
    p.overridden = p.sm90 && named != stack.env.end() && canonical(named->second) == canonical(p.sm90->path);
  }
  if (p.bundled_path) {
    p.bundled = describe(stack, *p.bundled_path, why);
  }
  if (p.blackwell_path) {
    p.bundled_blackwell = describe(stack, *p.blackwell_path, why);
  }
}

}  // namespace lp::stack
