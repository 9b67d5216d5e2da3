// The ptxas version matrix of issue 5, without a GPU: compile the committed PTX
// of our expand kernel (tests/sass/fixtures/*.ptx) with every ptxas that
// scripts/install_tools.sh put under .tools/ptxas/<version>/, disassemble, and
// run the hazard analysis. Prints the table (version x variant -> findings).
//
// By default only the slice CI runs: vLLM's default expand under the oldest and
// the newest installed ptxas. LP_PTXAS_MATRIX=full runs every PTX under every
// version; `loraprobe inspect --ptxas-matrix` is the tool for users.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sstream>

#include <unistd.h>
#include <nlohmann/json.hpp>

#include "support/nvdisasm.hpp"
#include "sass/analyze.hpp"
#include "util/error.hpp"
#include "util/files.hpp"
#include "util/subprocess.hpp"

namespace lp::sass {
namespace {

namespace fs = std::filesystem;

/// One PTX of the matrix and whether its SASS races.
struct MatrixRow {
  std::string id;
  std::string label;
  /// Observed with every ptxas from 12.8.93 to 13.5.37: they emit the same
  /// instructions for these PTX files, so the upstream report of a fix in 13.3
  /// does not reach Triton 3.6.0's PTX. A ptxas that changes this fails here on
  /// purpose: update this table and shared/DESIGN.md together.
  bool hazard;
};

const std::vector<MatrixRow> k_rows{
    {"expand-fp32-bf16-m64n128k32-w4s2-evenk-noadd-s1", "fp32 block_n 128 stages 2 (vLLM default)", true},
    {"expand-fp32-bf16-m64n128k32-w4s3-evenk-noadd-s1", "fp32 block_n 128 stages 3", true},
    {"expand-fp32-bf16-m64n64k32-w4s2-evenk-noadd-s1", "fp32 block_n 64 stages 2", true},
    {"expand-fp32-bf16-m64n64k32-w4s3-evenk-noadd-s1", "fp32 block_n 64 stages 3", true},
    // Multi-slice: Triton does not pipeline the wgmma here (both HGMMAs of a
    // trip form one group, retired by DEPBAR.LE 0 in the same trip).
    {"expand-fp32-bf16-m64n64k32-w4s2-evenk-add-s2-samestride", "fp32 block_n 64 stages 2, 2 slices (vLLM default)",
     false},
    {"expand-fp32-bf16-m64n32k32-w4s2-evenk-noadd-s1", "fp32 block_n 32 stages 2", false},
    {"expand-fp32-bf16-m64n128k32-w4s1-evenk-noadd-s1", "fp32 block_n 128 stages 1", false},
    {"expand-bf16-bf16-m64n128k32-w4s2-evenk-noadd-s1", "bf16 block_n 128 stages 2", false},
};

/// "13.10.2" sorts after "13.9.1".
bool version_less(const std::string& a, const std::string& b) {
  std::istringstream sa(a);
  std::istringstream sb(b);
  std::string pa;
  std::string pb;
  while (true) {
    const bool more_a = static_cast<bool>(std::getline(sa, pa, '.'));
    const bool more_b = static_cast<bool>(std::getline(sb, pb, '.'));
    if (!more_a || !more_b) {
      return !more_a && more_b;
    }
    if (pa != pb) {
      return std::stoi(pa) < std::stoi(pb);
    }
  }
}

/// version -> path of every installed ptxas.
std::vector<std::pair<std::string, std::string>> installed_ptxas() {
  std::vector<std::pair<std::string, std::string>> out;
  const fs::path root = fs::path(default_tools_dir()) / "ptxas";
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    const fs::path bin = entry.path() / "ptxas";
    if (fs::is_regular_file(bin, ec)) {
      out.emplace_back(entry.path().filename().string(), bin.string());
    }
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return version_less(a.first, b.first); });
  return out;
}

/// Compiles `ptx_path` for sm_90a with `ptxas` the way Triton does and returns the cubin.
std::string compile(const std::string& ptxas, const std::string& ptx_path, const fs::path& out) {
  ProcessOptions opts;
  opts.timeout = std::chrono::minutes(3);
  opts.environment = clean_environment();
  const ProcessResult r = run_process({ptxas, "--gpu-name=sm_90a", ptx_path, "-o", out.string()}, opts);
  if (!r.ok()) {
    throw lp::Error(ptxas + " " + ptx_path + ": " + r.describe() + ": " + r.err);
  }
  return read_file(out.string());
}

TEST(PtxasMatrix, HazardByVersionAndVariant) {
  const auto versions = installed_ptxas();
  if (versions.empty()) {
    GTEST_SKIP() << "skipped: no ptxas under " << default_tools_dir()
                 << "/ptxas (scripts/install_tools.sh ptxas installs them)";
  }
  LP_REQUIRE_NVDISASM(tool);
  const char* mode = std::getenv("LP_PTXAS_MATRIX");
  const bool full = mode != nullptr && std::string_view(mode) == "full";
  std::vector<std::pair<std::string, std::string>> chosen = versions;
  std::vector<MatrixRow> rows = k_rows;
  if (!full) {
    chosen = {versions.front()};
    if (versions.size() > 1) {
      chosen.push_back(versions.back());
    }
    rows = {k_rows.front()};
  }
  const fs::path scratch = fs::temp_directory_path() / ("loraprobe-ptxas-matrix-" + std::to_string(::getpid()));
  fs::create_directories(scratch);
  std::ostringstream table;
  table << "| ptxas |";
  for (const auto& row : rows) {
    table << " " << row.label << " |";
  }
  table << "\n|---|";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    table << "---|";
  }
  table << "\n";
  for (const auto& [version, ptxas] : chosen) {
    table << "| " << version << " |";
    for (const auto& row : rows) {
      SCOPED_TRACE(version + " " + row.id);
      const std::string ptx = std::string(LP_SOURCE_DIR) + "/tests/sass/fixtures/" + row.id + ".ptx";
      const std::string cubin = compile(ptxas, ptx, scratch / (row.id + "-" + version + ".cubin"));
      AnalysisOptions only_a;
      only_a.checks = {"wgmma-a-reg-reuse"};
      const CubinReport r = analyze_cubin(cubin, *tool, only_a, row.id + " (ptxas " + version + ")");
      ASSERT_EQ(r.kernels.size(), 1u);
      const KernelStats& s = r.kernels[0].stats;
      table << " " << (r.finding_count() > 0 ? "HAZARD " : "clean ") << r.finding_count() << " (in flight "
            << s.max_groups_in_flight << ") |";
      EXPECT_EQ(r.finding_count() > 0, row.hazard) << nlohmann::json(r.kernels[0].findings).dump(1);
    }
    table << "\n";
  }
  fs::remove_all(scratch);
  std::cout << "\nwgmma-a-reg-reuse findings by ptxas version (nvdisasm " << tool->version << "):\n"
            << table.str() << std::flush;
}

}  // namespace
}  // namespace lp::sass
