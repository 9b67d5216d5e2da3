#include "compile/ptxas.hpp"

#include <fmt/format.h>

#include "util/error.hpp"
#include "util/files.hpp"
#include "util/subprocess.hpp"

namespace lp::compile {

std::vector<std::string> triton_ptxas_options() { return {"-lineinfo", "-v", "--gpu-name=sm_90a"}; }

PtxasOutput compile_with_ptxas(const PtxasInfo& ptxas, std::string_view ptx, const std::string& name,
                               std::chrono::milliseconds timeout) {
  const TempDir dir("loraprobe-ptxas-");
  const std::string input = dir.write("kernel.ptx", ptx);
  const std::string output = dir.path() + "/kernel.cubin";
  PtxasOutput out;
  out.argv = {ptxas.path};
  for (std::string& option : triton_ptxas_options()) {
    out.argv.push_back(std::move(option));
  }
  out.argv.push_back(input);
  out.argv.push_back("-o");
  out.argv.push_back(output);
  ProcessOptions options;
  options.timeout = timeout;
  options.max_output = 16 << 20;
  options.environment = clean_environment();
  // ptxas -lineinfo stats the sources that the PTX's .file directives name
  // (Triton writes relative paths) and records their modification times in
  // .debug_line: started in our folder, the cubin would depend on where
  // loraprobe runs. An empty folder makes it a function of PTX, ptxas and options.
  options.working_directory = dir.path();
  const auto start = std::chrono::steady_clock::now();
  const ProcessResult r = run_process(out.argv, options);
  out.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  out.log = r.err + r.out;
  if (!r.ok()) {
    throw Error(fmt::format("ptxas {} ({}) failed on {}: {}: {}", ptxas.version, ptxas.path, name, r.describe(),
                            out.log.substr(0, 4000)));
  }
  out.cubin = read_file(output, std::size_t{256} << 20);
  return out;
}

}  // namespace lp::compile
