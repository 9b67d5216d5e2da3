// The parts of lp_inspect that need no nvdisasm: finding the user's PTX and
// cubins (files by content, folders by name, pinned messages for bad input),
// version ordering, the matrix's default selection and its first-clean answer, and the
// line that says why a run of incompatible pairings inspected nothing.

#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "inspect/document.hpp"
#include "inspect/inputs.hpp"
#include "inspect/matrix.hpp"
#include "kernels/kernel_sets.hpp"
#include "test_support.hpp"
#include "util/error.hpp"
#include "util/files.hpp"

namespace lp::inspect {
namespace {

namespace fs = std::filesystem;
using test::fixture;
using test::k_clean_id;
using test::k_hazard_id;

std::string usage_error(const std::vector<std::string>& paths) {
  try {
    (void)collect_inputs(paths);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Inputs, ClassifiesByContent) {
  EXPECT_EQ(classify_input(fixture(k_hazard_id + ".cubin")), InputKind::cubin);
  EXPECT_EQ(classify_input(fixture(k_hazard_id + ".ptx")), InputKind::ptx);
  EXPECT_EQ(classify_input("//\n// comment\n/* block\n */\n.version 8.7\n.target sm_90a\n"), InputKind::ptx);
  EXPECT_EQ(classify_input(".versionx 8.7"), std::nullopt);
  EXPECT_EQ(classify_input(".target sm_90a\n.version 8.7\n"), std::nullopt);
  EXPECT_EQ(classify_input("{\"name\": \"kernel\"}"), std::nullopt);
  EXPECT_EQ(classify_input(""), std::nullopt);
}

TEST(Inputs, FolderWalkKeepsPtxAndCubinsOnly) {
  const TempDir dir("lp-inspect-inputs-");
  fs::create_directories(dir.path() + "/abc123/deeper");
  (void)dir.write("abc123/" + k_hazard_id + ".ptx", fixture(k_hazard_id + ".ptx"));
  (void)dir.write("abc123/deeper/" + k_clean_id + ".cubin", fixture(k_clean_id + ".cubin"));
  (void)dir.write("abc123/" + k_hazard_id + ".json", "{\"name\": \"_lora_expand_kernel\"}");
  (void)dir.write("abc123/kernel.ttir", "module {}");
  (void)dir.write("notes.txt", "not a kernel");
  const std::vector<InputFile> found = collect_inputs({dir.path()});
  ASSERT_EQ(found.size(), 2U);
  EXPECT_EQ(found[0].path, dir.path() + "/abc123/deeper/" + k_clean_id + ".cubin");
  EXPECT_EQ(found[0].kind, InputKind::cubin);
  EXPECT_EQ(found[1].path, dir.path() + "/abc123/" + k_hazard_id + ".ptx");
  EXPECT_EQ(found[1].kind, InputKind::ptx);
  EXPECT_EQ(found[1].contents, fixture(k_hazard_id + ".ptx"));
}

TEST(Inputs, NamedFileIsTakenByContentWhateverItsName) {
  const TempDir dir("lp-inspect-inputs-");
  const std::string path = dir.write("kernel.bin", fixture(k_clean_id + ".cubin"));
  const std::vector<InputFile> found = collect_inputs({path});
  ASSERT_EQ(found.size(), 1U);
  EXPECT_EQ(found[0].kind, InputKind::cubin);
}

TEST(Inputs, BadInputMessagesArePinned) {
  const TempDir dir("lp-inspect-inputs-");
  const std::string junk = dir.write("notes.txt", "hello");
  EXPECT_EQ(usage_error({junk}), junk + ": not a PTX file or a cubin (no ELF header and no .version directive)");
  EXPECT_EQ(usage_error({"/nonexistent/kernel.ptx"}), "/nonexistent/kernel.ptx: cannot read: No such file or directory");
  fs::create_directories(dir.path() + "/empty");
  (void)dir.write("empty/readme.md", "nothing to see");
  EXPECT_EQ(usage_error({dir.path() + "/empty"}), dir.path() + "/empty: no *.ptx or *.cubin files in this folder");
  fs::create_directories(dir.path() + "/sub");
  const std::string fake = dir.write("sub/fake.cubin", "");
  // Named on the command line, an empty file is refused; found in a folder, it is an
  // input like the others, and the inspection makes it an error row (issue 12).
  EXPECT_EQ(usage_error({fake}), fake + ": not a PTX file or a cubin (no ELF header and no .version directive)");
  const std::vector<InputFile> scanned = collect_inputs({dir.path() + "/sub"});
  ASSERT_EQ(scanned.size(), 1U);
  EXPECT_EQ(scanned[0].kind, InputKind::cubin);
  EXPECT_TRUE(scanned[0].contents.empty());
}

// Issue 53: a 1,500-deep tree took 42 s (34 s in the kernel: every folder's path was
// resolved again, component by component) and 100,000 empty .cubin files 482 MB. A
// folder is walked to a bounded depth and for a bounded number of inputs, and a link
// back up is still a loop walked once.
TEST(Inputs, AFolderWalkIsBoundedInDepthAndFiles) {
  const TempDir dir("lp-inspect-bounds-");
  std::string deep = dir.path() + "/deep";
  for (int level = 0; level < 70; ++level) {
    deep += "/d";
  }
  fs::create_directories(deep);
  (void)dir.write(deep.substr(dir.path().size() + 1) + "/k.cubin", "");
  const std::string message = usage_error({dir.path() + "/deep"});
  EXPECT_EQ(message.rfind(dir.path() + "/deep: folders nested deeper than 64 levels (at " + dir.path() + "/deep/d", 0),
            0U)
      << message;
  fs::create_directories(dir.path() + "/many/sub");
  for (int i = 0; i < 5; ++i) {
    (void)dir.write("many/sub/k" + std::to_string(i) + ".cubin", "");
  }
  fs::create_directory_symlink("..", dir.path() + "/many/sub/up");  // a loop
  try {
    (void)collect_inputs({dir.path() + "/many"}, InputLimits{64, 4});
    ADD_FAILURE() << "five inputs passed a limit of four";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), dir.path() + "/many: more than 4 *.ptx and *.cubin files; name a smaller folder "
                                                  "(a Triton cache entry, or a few of them)");
  }
  EXPECT_EQ(collect_inputs({dir.path() + "/many"}, InputLimits{64, 5}).size(), 5U);
  EXPECT_EQ(collect_inputs({dir.path() + "/many"}, InputLimits{2, 5}).size(), 5U);  // sub is 1 deep, up is the loop
  // The limit is over all the paths named: five and five more.
  EXPECT_THROW((void)collect_inputs({dir.path() + "/many", dir.path() + "/many/sub"}, InputLimits{64, 9}), UsageError);
}

TEST(Matrix, VersionsSortNumerically) {
  EXPECT_TRUE(version_less("12.8.93", "12.9.86"));
  EXPECT_TRUE(version_less("13.9.1", "13.10.2"));
  EXPECT_TRUE(version_less("13.1", "13.1.115"));
  EXPECT_FALSE(version_less("13.5.37", "13.5.37"));
  EXPECT_FALSE(version_less("13.0.88", "12.9.86"));
}

TEST(Matrix, DefaultSelectionComesFromTheEmbeddedSet) {
  const kernels::KernelSets sets = kernels::KernelSets::load();
  const kernels::KernelSet& set = sets.at("3.6.0");
  const std::vector<const kernels::Variant*> v = default_matrix_variants(set);
  ASSERT_EQ(v.size(), 22U);
  EXPECT_EQ(v[0]->id, "expand-fp32-bf16-m64n32k32-w4s1-evenk-add-s1");
  EXPECT_EQ(v[9]->id, "expand-fp32-bf16-m64n128k32-w4s2-evenk-add-s1");
  EXPECT_EQ(v[16]->id, "expand-fp32-bf16-m64n64k32-w4s2-evenk-add-s2-samestride");
  EXPECT_EQ(v[20]->id, "expand-fp32-bf16-m64n128k16-w4s2-evenk-add-s1");
  EXPECT_EQ(v[21]->role, "negative_control");
}

kernels::Variant variant(const std::string& id, int block_n, int slices) {
  kernels::Variant v;
  v.id = id;
  v.op = "expand";
  v.role = "kernel";
  v.status = "ok";
  v.axes = lp::AxisValues::from_json(nlohmann::json{{"input_dtype", "fp32"}, {"weight_dtype", "bf16"}, {"block_m", 64}, {"block_n", block_n},
            {"block_k", 32},        {"num_warps", 4},          {"num_stages", 2}, {"num_slices", slices},
            {"even_k", true},       {"add_inputs", true}});
  return v;
}

InspectResult result(const std::string& id, const std::string& compiler, std::size_t findings) {
  InspectResult r;
  r.name = id;
  r.variant = id;
  r.compiler = compiler;
  r.status = findings > 0 ? StaticOutcome::hazard : StaticOutcome::clean;
  r.finding_count = findings;
  sass::CubinReport report;
  report.cubin_sha256 = std::string(64, 'a');
  r.sass = std::make_shared<const sass::CubinReport>(std::move(report));
  return r;
}

TEST(Matrix, FirstCleanVersionAndRegressions) {
  const kernels::Variant single = variant("single", 128, 1);
  const kernels::Variant multi = variant("multi", 64, 2);
  const std::vector<MatrixColumn> columns = {{"ptxas=13.3", "13.3.73", "/p/13.3"},
                                             {"prebuilt", "12.8.93", "Triton"},
                                             {"ptxas=13.10", "13.10.1", "/p/13.10"},
                                             {"ptxas=12.8", "12.8.93", "/p/12.8"}};
  std::vector<InspectResult> results = {
      result("single", "prebuilt", 8),   result("single", "ptxas=12.8", 8), result("single", "ptxas=13.3", 0),
      result("single", "ptxas=13.10", 0), result("multi", "prebuilt", 0),  result("multi", "ptxas=12.8", 0),
      result("multi", "ptxas=13.3", 3),  result("multi", "ptxas=13.10", 0)};
  const PtxasMatrix m = build_matrix({&single, &multi}, columns, results, "3.8.0");
  ASSERT_EQ(m.columns.size(), 4U);
  EXPECT_EQ(m.columns[0].compiler, "prebuilt");  // 12.8.93, before the ptxas of the same version
  EXPECT_EQ(m.columns[1].compiler, "ptxas=12.8");
  EXPECT_EQ(m.columns[3].compiler, "ptxas=13.10");
  ASSERT_EQ(m.first_clean.size(), 3U);
  EXPECT_EQ(m.first_clean[0].version, "13.3.73");
  EXPECT_TRUE(m.first_clean[0].regressions.empty());
  EXPECT_EQ(m.first_clean[0].line,
            "Triton 3.8.0, vLLM default expand (block_n 128, num_stages 2, fp32 input) [single]: first clean with "
            "ptxas 13.3.73 (and every later one); bundled ptxas 12.8.93 has the hazard");
  EXPECT_EQ(m.first_clean[1].version, "12.8.93");
  EXPECT_EQ(m.first_clean[1].regressions, std::vector<std::string>{"13.3.73"});
  EXPECT_EQ(m.first_clean[1].line,
            "Triton 3.8.0, multi-slice default expand (block_n 64, num_stages 2, fp32 input) [multi]: first clean with "
            "ptxas 12.8.93 (hazard again with 13.3.73); bundled ptxas 12.8.93 is clean");
  EXPECT_EQ(m.first_clean[2].line, "vLLM default expand with block_k 16 (newer vLLM): not in this selection");
  EXPECT_EQ(m.to_json().at("triton_version"), "3.8.0");
  const std::string text = m.format();
  EXPECT_NE(text.find("<- vLLM default expand\n"), std::string::npos) << text;

  results[2] = result("single", "ptxas=13.3", 2);
  results[3].status = StaticOutcome::error;
  const PtxasMatrix none = build_matrix({&single}, columns, results, "3.8.0");
  EXPECT_EQ(none.first_clean[0].version, std::nullopt);
  EXPECT_EQ(none.first_clean[0].line,
            "Triton 3.8.0, vLLM default expand (block_n 128, num_stages 2, fp32 input) [single]: no ptxas gives clean "
            "SASS (tried 12.8.93 .. 13.10.1); bundled ptxas 12.8.93 has the hazard");
  // When the PTX check says the PTX breaks the rule, the line says where the fix belongs.
  for (std::size_t i : {0, 1, 2}) {
    results[i].attribution = "ptx";
  }
  const PtxasMatrix ptx = build_matrix({&single}, columns, results, "3.6.0");
  EXPECT_EQ(ptx.first_clean[0].line,
            "Triton 3.6.0, vLLM default expand (block_n 128, num_stages 2, fp32 input) [single]: no ptxas gives clean "
            "SASS (tried 12.8.93 .. 13.10.1): the PTX itself writes registers of pending wgmmas, so the fix belongs "
            "in Triton and no ptxas can be relied on");
  EXPECT_EQ(none.to_json().at("rows").at(0).at("cells").at(3).at("status"), "error");
}

/// An item the compiler could not read, as the Inspector records it.
InspectResult incompatible(const std::string& triton, const std::string& compiler, const std::string& reason) {
  InspectResult r;
  r.name = "expand";
  r.triton = triton;
  r.compiler = compiler;
  r.status = StaticOutcome::incompatible;
  r.error = reason + std::string(k_incompatible_note);
  return r;
}

TEST(Incompatible, ARunOfOnlyIncompatiblePairingsSaysWhichAndWhyInOneLine) {
  const std::string why = "the PTX is .version 9.4; ptxas 13.3.73 reads up to 9.3";
  // Every variant of one pairing: the pairing once, its reason, and how to go on.
  std::vector<InspectResult> results = {incompatible("3.9.0", "ptxas=13.3.73", why),
                                        incompatible("3.9.0", "ptxas=13.3.73", why)};
  EXPECT_EQ(all_incompatible_line(results),
            "inspect: nothing was inspected, every pairing is incompatible: Triton 3.9.0 with ptxas=13.3.73 (the PTX is "
            ".version 9.4; ptxas 13.3.73 reads up to 9.3); give a ptxas that reads that .version (--compiler "
            "ptxas=PATH of a newer one) or Triton's own (--compiler prebuilt)");
  // Two compilers: each named with its own reason; a compiler path from the flags stays on one line.
  results.push_back(
      incompatible("3.9.0", "ptxas=/opt/a\nb/ptxas", "the PTX is .version 9.4; ptxas 13.0.88 reads up to 9.0"));
  const std::string two = all_incompatible_line(results);
  EXPECT_EQ(two.find('\n'), std::string::npos) << two;
  EXPECT_NE(two.find("; Triton 3.9.0 with ptxas=/opt/a\\nb/ptxas (the PTX is .version 9.4; ptxas 13.0.88 reads up to "
                     "9.0); give a ptxas"),
            std::string::npos)
      << two;
  // A user's PTX has no Triton set, nor a Triton ptxas to fall back on.
  EXPECT_EQ(all_incompatible_line({incompatible("", "ptxas=toolkit", why)}),
            "inspect: nothing was inspected, every pairing is incompatible: your PTX with ptxas=toolkit (the PTX is "
            ".version 9.4; ptxas 13.3.73 reads up to 9.3); give a ptxas that reads that .version (--ptxas PATH of a "
            "newer one)");
  // One item inspected (or failed): the run has an answer, so no line; nor for no items.
  InspectResult clean = incompatible("3.9.0", "prebuilt", "");
  clean.status = StaticOutcome::clean;
  results.push_back(clean);
  EXPECT_EQ(all_incompatible_line(results), "");
  EXPECT_EQ(all_incompatible_line({}), "");
}

}  // namespace
}  // namespace lp::inspect
