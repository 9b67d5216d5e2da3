#include "compile/ptxas.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "util/error.hpp"
#include "util/files.hpp"
#include "util/subprocess.hpp"

namespace lp::compile {

std::vector<std::string> triton_ptxas_options() { return {"-lineinfo", "-v", "--gpu-name=sm_90a"}; }

PtxasOutput compile_with_ptxas(const PtxasInfo& ptxas, std::string_view ptx, const std::string& name,
                               const std::vector<std::string>& ptxas_options, std::chrono::milliseconds timeout) {
  const TempDir dir("loraprobe-ptxas-");
  const std::string input = dir.write("kernel.ptx", ptx);
  const std::string output = dir.path() + "/kernel.cubin";
  PtxasOutput out;
  out.argv = {ptxas.path};
  for (const std::string& option : ptxas_options) {
    out.argv.push_back(option);
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
    // Name the user's input, not our temporary copy of it.
    std::string log = out.log;
    for (std::size_t at = log.find(input); at != std::string::npos; at = log.find(input, at)) {
      log.replace(at, input.size(), name + ".ptx");
    }
    // A PTX ISA newer than this ptxas takes (Triton 3.9 writes .version 9.4; ptxas 13.0
    // takes up to 9.0) is refused, never rewritten: say so first.
    std::string why;
    std::string incompatible;
    if (const std::size_t at = log.find("Unsupported .version "); at != std::string::npos) {
      const std::size_t end = log.find_first_of(";\n", at);
      const std::string version = log.substr(at + 21, end == std::string::npos ? std::string::npos : end - at - 21);
      const std::size_t cur = log.find("current version is '", at);
      const std::string current =
          cur == std::string::npos ? std::string("?") : log.substr(cur + 20, log.find('\'', cur + 20) - cur - 20);
      why = fmt::format("the PTX is .version {}, newer than ptxas {} accepts (up to {}); a newer ptxas is needed "
                        "(loraprobe never rewrites the PTX). ",
                        version, ptxas.version, current);
      incompatible = fmt::format("the PTX is .version {}; ptxas {} reads up to {}", version, ptxas.version, current);
    }
    const std::string what = fmt::format("ptxas {} ({}) failed on {}: {}{}: {}", ptxas.version, ptxas.path, name, why,
                                         r.describe(), log.substr(0, 4000));
    if (!incompatible.empty() && r.exit_code > 0) {
      throw IncompatiblePtx(what, incompatible);
    }
    throw Error(what);
  }
  // A "ptxas" that exits 0 without writing a cubin (/bin/true) is an error of this
  // compile, named by the user's input and the compiler, not by our temporary path.
  std::error_code ec;
  if (!std::filesystem::is_regular_file(output, ec) || std::filesystem::file_size(output, ec) == 0) {
    throw Error(fmt::format("ptxas {} ({}) wrote no cubin for {} (exit 0)", ptxas.version.empty() ? "?" : ptxas.version,
                            ptxas.path, name));
  }
  out.cubin = read_file(output, std::size_t{256} << 20);
  return out;
}

}  // namespace lp::compile
