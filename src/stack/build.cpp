// Building the user's kernels with their Triton; the embedded Python tree.

#include "stack/build.hpp"

#include <chrono>
#include <filesystem>

#include <fmt/format.h>

#include "stack/python_tree.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"
#include "util/files.hpp"
#include "util/subprocess.hpp"

namespace lp::stack {

namespace fs = std::filesystem;

std::string_view tree_file(std::string_view path) {
  for (const TreeFile& f : python_tree()) {
    if (f.path == path) {
      return f.text;
    }
  }
  throw Error(fmt::format("{}: not embedded in this build", path));
}

void write_python_tree(const std::string& dir) {
  for (const TreeFile& f : python_tree()) {
    const fs::path path = fs::path(dir) / std::string(f.path);
    fs::create_directories(path.parent_path());
    write_file_atomic(path.string(), std::string(f.text));
  }
}

namespace {

/// The last `lines` lines of `text`, for a message.
std::string tail_lines(const std::string& text, int lines) {
  std::size_t at = text.size();
  while (lines-- > 0 && at > 0) {
    const std::size_t nl = text.rfind('\n', at - 1);
    at = nl == std::string::npos ? 0 : nl;
  }
  const std::size_t start = at == 0 ? 0 : at + 1;
  return text.substr(start);
}

}  // namespace

BuildOutcome build_kernels(const BuildRequest& request) {
  const TempDir tree("loraprobe-check-tree-");
  write_python_tree(tree.path());
  const std::string ids = tree.write("ids.txt", fmt::format("{}\n", fmt::join(request.ids, "\n")));
  std::vector<std::string> argv = {request.python,  tree.path() + "/scripts/gen_kernels.py",
                                   "--stack",       "--ids",
                                   ids,             "--out",
                                   request.out_dir, "-j",
                                   std::to_string(std::max(1U, request.jobs))};
  if (request.vllm_ops_dir) {
    argv.insert(argv.end(), {"--vllm-ops", *request.vllm_ops_dir});
  }
  ProcessOptions options;
  // Triton compiles a variant in seconds; a thousand variants on two cores is an hour.
  options.timeout = std::chrono::minutes(90);
  options.max_output = std::size_t{64} << 10;
  options.working_directory = tree.path();
  const auto start = std::chrono::steady_clock::now();
  const ProcessResult r = run_process(argv, options);
  BuildOutcome out;
  out.dir = request.out_dir;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out.log = r.err;
  if (!r.ok()) {
    // The generator's last line says why (an exception's message); the lines before it where.
    const std::string tail = tail_lines(r.err, 12);
    std::string last = tail_lines(tail.substr(0, tail.find_last_not_of("\n \t") + 1), 1);
    // The tail goes to stderr as the generator wrote it (escaped); the error is one line.
    fmt::print(stderr, "{}", escape::terminal(tail));
    throw EnvironmentError(fmt::format("building the kernels with the Triton of {} failed ({}): {}", request.python,
                                       r.describe(), last.empty() ? "it printed nothing" : last));
  }
  return out;
}

}  // namespace lp::stack
