// `loraprobe inspect` end to end: exit codes (hazard 1, clean 0, bad input 2
// with a pinned one-line message, no nvdisasm 3), PTX compiled with a chosen
// ptxas, a folder walk, the cache across two processes, the ptxas matrix, and
// every --json document validated against configs/schema/inspect.schema.json.
// Each test gets its own cache folder (XDG_CACHE_HOME), never the user's.

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <csignal>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "inspect/shipped.hpp"
#include "kernels/kernel_sets.hpp"
#include "test_support.hpp"
#include "util/files.hpp"
#include "util/subprocess.hpp"

extern char** environ;

namespace lp::inspect {
namespace {

namespace fs = std::filesystem;
using test::fixture;
using test::fixture_path;
using test::k_clean_id;
using test::k_hazard_id;

/// Variants of the embedded set (ADD_INPUTS, the way vLLM runs the expand).
const std::string k_set_hazard = "expand-fp32-bf16-m64n128k32-w4s2-evenk-add-s1";
const std::string k_set_clean = "expand-fp32-bf16-m64n32k32-w4s2-evenk-add-s1";

/// Our environment with `changes` applied ("KEY=VALUE" sets, "KEY=" removes).
std::vector<std::string> environment_with(const std::vector<std::string>& changes) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string key = entry.substr(0, entry.find('='));
    const bool replaced = std::any_of(changes.begin(), changes.end(),
                                      [&](const std::string& c) { return c.substr(0, c.find('=')) == key; });
    if (!replaced) {
      env.push_back(entry);
    }
  }
  for (const std::string& c : changes) {
    if (c.back() != '=') {
      env.push_back(c);
    }
  }
  return env;
}

class InspectCli : public ::testing::Test {
 protected:
  TempDir m_scratch{"lp-inspect-cli-"};

  /// Runs loraprobe with a private cache folder.
  ProcessResult loraprobe(std::vector<std::string> args, const std::vector<std::string>& env_changes = {}) const {
    args.insert(args.begin(), LP_LORAPROBE);
    ProcessOptions options;
    options.timeout = std::chrono::seconds(300);
    std::vector<std::string> changes = {"XDG_CACHE_HOME=" + m_scratch.path() + "/cache"};
    changes.insert(changes.end(), env_changes.begin(), env_changes.end());
    options.environment = environment_with(changes);
    return run_process(args, options);
  }

  /// Writes `doc` and validates it with tests/inspect/validate_inspect.py.
  void expect_valid(const std::string& doc, const std::string& name) const {
    const std::string path = m_scratch.write(name + ".json", doc);
    ProcessOptions options;
    options.timeout = std::chrono::seconds(120);
    const ProcessResult v =
        run_process({LP_PYTHON, std::string(LP_SOURCE_DIR) + "/tests/inspect/validate_inspect.py",
                     std::string(LP_SOURCE_DIR) + "/configs/schema/inspect.schema.json", path},
                    options);
    EXPECT_TRUE(v.ok()) << v.out << v.err;
  }
};

TEST_F(InspectCli, ListChecksNeedsNoTools) {
  const ProcessResult r = loraprobe({"inspect", "--list-checks"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("id ", 0), 0U) << r.out;
  EXPECT_NE(r.out.find("\nwgmma-a-reg-reuse "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\ngdc-early-read "), std::string::npos) << r.out;
}

TEST_F(InspectCli, HelpShowsExamples) {
  const ProcessResult r = loraprobe({"inspect", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("Examples:"), std::string::npos);
  EXPECT_NE(r.out.find("--ptxas-matrix"), std::string::npos);
  EXPECT_NE(r.out.find("Exit codes:"), std::string::npos);
}

TEST_F(InspectCli, HazardousFilterExitsOne) {
  LP_REQUIRE_NVDISASM(tool);
  const ProcessResult r = loraprobe({"inspect", "--triton", "3.6.0", "--compiler", "prebuilt", "--filter",
                                     "id=" + k_set_hazard});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  // The loop body kernels/README.md shows: the next iteration's LDS.64 lands in
  // the A registers of the HGMMA at 0x2380, still in flight.
  EXPECT_NE(r.out.find(k_set_hazard + " prebuilt "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0x2200 LDS.64 R90, [R4+UR6+0x4400]  (HGMMA 0x2380 in flight, over the back-edge)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\ninspect: 1 cubin(s) (1 variant(s) x 1 compiler(s)): 1 with a hazard ("), std::string::npos)
      << r.out;
  // Triton 3.6's PTX writes the pending registers itself: the made_by column and the total say so.
  EXPECT_NE(r.out.find(k_set_hazard + " prebuilt        8     ptx "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 with a hazard (8 findings; made by the PTX: 1, by ptxas: 0), 0 clean"), std::string::npos)
      << r.out;
}

TEST_F(InspectCli, Triton38PtxIsCleanSoPtxasMadeTheHazard) {
  LP_REQUIRE_NVDISASM(tool);
  const std::string old_ptxas = LP_SOURCE_DIR "/.tools/ptxas/13.2.86/ptxas";
  const std::string new_ptxas = LP_SOURCE_DIR "/.tools/ptxas/13.3.73/ptxas";
  if (!fs::exists(old_ptxas) || !fs::exists(new_ptxas)) {
    GTEST_SKIP() << "skipped: ptxas 13.2.86 and 13.3.73 are not in .tools (scripts/install_tools.sh)";
  }
  const std::string ptx = LP_SOURCE_DIR "/tests/ptx/fixtures/triton-3.8.0-expand-fp32-bf16-m64n128k32-w4s2-evenk-add-s1.ptx";
  const ProcessResult r = loraprobe({"inspect", "--no-cache", ptx, "--ptxas", "13.2.86", "--ptxas", "13.3.73"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find(" ptxas=13.2.86        8   ptxas "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" ptxas=13.3.73        0       - "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 with a hazard (8 findings; made by the PTX: 0, by ptxas: 1), 1 clean"), std::string::npos)
      << r.out;
}

TEST_F(InspectCli, ACubinWithItsPtxBesideItSaysWhoMadeTheHazard) {
  LP_REQUIRE_NVDISASM(tool);
  // A Triton cache entry holds the .ptx next to the .cubin: both levels are checked.
  fs::create_directories(m_scratch.path() + "/cache/EF56/");
  (void)m_scratch.write("cache/EF56/_lora_expand_kernel.ptx", fixture(k_hazard_id + ".ptx"));
  (void)m_scratch.write("cache/EF56/_lora_expand_kernel.cubin", fixture(k_hazard_id + ".cubin"));
  (void)m_scratch.write("lonely.cubin", fixture(k_hazard_id + ".cubin"));
  const std::string cubin = m_scratch.path() + "/cache/EF56/_lora_expand_kernel.cubin";
  const std::string lonely = m_scratch.path() + "/lonely.cubin";
  const ProcessResult r = loraprobe({"inspect", "--json", cubin, m_scratch.path() + "/cache/EF56/_lora_expand_kernel.ptx",
                                     lonely});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(r.out);
  bool saw_cubin = false;
  for (const nlohmann::json& item : doc.at("items")) {
    if (item["name"] == cubin) {
      saw_cubin = true;
      EXPECT_EQ(item["attribution"], "ptx") << item.dump();
      EXPECT_EQ(item["ptx"]["finding_count"], 4) << item["ptx"].dump();
      EXPECT_EQ(item["ptx"]["functions"][0]["findings"][0]["check"], "wgmma-a-reg-reuse");
    } else if (item["name"] == lonely) {
      EXPECT_TRUE(item["attribution"].is_null()) << item.dump();  // no PTX to tell
      EXPECT_TRUE(item["ptx"].is_null());
    }
  }
  EXPECT_TRUE(saw_cubin) << r.out;
  expect_valid(r.out, "files");
  const ProcessResult table = loraprobe({"inspect", lonely});
  EXPECT_NE(table.out.find("without PTX to tell: 1"), std::string::npos) << table.out;
  // A file name is shown, never obeyed by the terminal.
  const std::string evil = m_scratch.write("evil\x1b[2J.cubin", fixture(k_hazard_id + ".cubin"));
  const ProcessResult shown = loraprobe({"inspect", evil});
  EXPECT_EQ(shown.out.find('\x1b'), std::string::npos) << shown.out;
  EXPECT_NE(shown.out.find("evil\\x1b[2J.cubin"), std::string::npos) << shown.out;
  // Named alone, a cubin with its PTX beside it (a repro bundle's kernel.cubin) is told too.
  const ProcessResult alone = loraprobe({"inspect", "--json", cubin});
  EXPECT_EQ(alone.exit_code, 1) << alone.err;
  const nlohmann::json one = nlohmann::json::parse(alone.out);
  ASSERT_EQ(one.at("items").size(), 1U);
  EXPECT_EQ(one["items"][0]["attribution"], "ptx") << one["items"][0].dump();
}

// Issue 53: a real PTX joined onto one line (one comment after its first "//") was
// dropped as "not PTX": the table said "?" and the JSON's ptx was null, hiding why.
TEST_F(InspectCli, APtxBesideThatDoesNotParseSaysWhy) {
  LP_REQUIRE_NVDISASM(tool);
  std::string joined = fixture(k_hazard_id + ".ptx");
  std::replace(joined.begin(), joined.end(), '\n', ' ');
  fs::create_directories(m_scratch.path() + "/joined");
  (void)m_scratch.write("joined/kernel.ptx", joined);
  (void)m_scratch.write("joined/kernel.cubin", fixture(k_hazard_id + ".cubin"));
  const std::string cubin = m_scratch.path() + "/joined/kernel.cubin";
  const ProcessResult json = loraprobe({"inspect", "--no-cache", "--json", cubin});
  EXPECT_EQ(json.exit_code, 1) << json.err;
  const nlohmann::json item = nlohmann::json::parse(json.out).at("items").at(0);
  EXPECT_TRUE(item["attribution"].is_null()) << item.dump();
  const std::string ptx = m_scratch.path() + "/joined/kernel.ptx";  // the error names the file that did not parse
  EXPECT_EQ(item["ptx"]["error"], ptx + ":0: no .entry or .func with a body: not PTX") << item["ptx"].dump();
  const ProcessResult table = loraprobe({"inspect", "--no-cache", cubin});
  EXPECT_NE(table.out.find("made_by ? for " + cubin + ": its PTX did not parse: " + ptx +
                           ":0: no .entry or .func with a body: not PTX\n"),
            std::string::npos)
      << table.out;
}

// Issue 53 defect 5: --amplify was accepted and ignored, so inspect answered for the
// images as built while a sweep with the same flags loads amplified ones.
// Issue 53 re-test: a hazardous cubin with an empty, junk or unrelated .ptx beside it
// was reported clean (exit 0): the PTX without wgmma let nvdisasm be skipped. Only a
// kernel-set variant's PTX is known to be its cubin's source.
TEST_F(InspectCli, AnUnrelatedPtxBesideACubinNeverSkipsItsDisassembly) {
  LP_REQUIRE_NVDISASM(tool);
  fs::create_directories(m_scratch.path() + "/beside");
  (void)m_scratch.write("beside/kernel.cubin", fixture(k_hazard_id + ".cubin"));
  const std::string cubin = m_scratch.path() + "/beside/kernel.cubin";
  for (const std::string& ptx : {std::string(), std::string("junk \x01\x02"),
                                std::string(".version 8.7\n.target sm_90a\n.address_size 64\n"
                                            ".visible .entry noop() {\n  ret;\n}\n")}) {
    (void)m_scratch.write("beside/kernel.ptx", ptx);
    const ProcessResult r = loraprobe({"inspect", "--no-cache", cubin});
    EXPECT_EQ(r.exit_code, 1) << ptx << "\n" << r.out << r.err;
    EXPECT_EQ(r.out.find("not disassembled"), std::string::npos) << r.out;
  }
}

TEST_F(InspectCli, AmplifyInspectsTheAmplifiedImagesASweepLoads) {
  LP_REQUIRE_NVDISASM(tool);
  const auto items = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"inspect", "--config", "seed-48590", "--triton", "3.6.0",
                                     "--compiler", "ptxas=toolkit", "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const ProcessResult r = loraprobe(args);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    expect_valid(r.out, "amplify");
    return nlohmann::json::parse(r.out).at("items");
  };
  const nlohmann::json plain = items({});
  const nlohmann::json amplified = items({"--amplify", "2"});
  ASSERT_EQ(plain.size(), 2U);
  ASSERT_EQ(amplified.size(), 2U);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_FALSE(plain[i].contains("amplify"));
    EXPECT_EQ(amplified[i]["amplify"], 2);
    EXPECT_EQ(amplified[i]["name"], plain[i]["name"].get<std::string>() + "|amplify=2");
    EXPECT_EQ(amplified[i]["variant"], plain[i]["variant"]);
    EXPECT_NE(amplified[i]["compile"]["cubin_sha256"], plain[i]["compile"]["cubin_sha256"])
        << amplified[i]["compile"].dump();
    // The pairs read shared memory only: the hazard (or its absence) is the variant's.
    EXPECT_EQ(amplified[i]["finding_count"], plain[i]["finding_count"]);
  }
  // The matrix is the default configs as built: a plan's flag there is refused, not ignored.
  const ProcessResult matrix = loraprobe({"inspect", "--ptxas-matrix", "--amplify", "2", "--triton", "3.6.0"});
  EXPECT_EQ(matrix.exit_code, 2) << matrix.out;
  EXPECT_EQ(matrix.err, "loraprobe: --ptxas-matrix compiles vLLM's default expand configs (or --filter) as built with "
                        "every ptxas; --config and the plan's flags (--amplify, --model, --tokens, ...) do not apply "
                        "to it\n");
}

TEST_F(InspectCli, CleanFilterExitsZero) {
  LP_REQUIRE_NVDISASM(tool);
  const ProcessResult r =
      loraprobe({"inspect", "--triton", "3.6.0", "--no-cache", "--compiler", "prebuilt", "--filter", "id=" + k_set_clean});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("0 with a hazard (0 findings), 1 clean, 0 error(s)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cache off"), std::string::npos) << r.out;
}

TEST_F(InspectCli, BadInputIsOneLineExitTwo) {
  ProcessResult r = loraprobe({"inspect", "/nonexistent/kernel.ptx"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "loraprobe: /nonexistent/kernel.ptx: cannot read: No such file or directory\n");
  EXPECT_TRUE(r.out.empty()) << r.out;

  const std::string junk = m_scratch.write("notes.txt", "hello");
  r = loraprobe({"inspect", junk});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "loraprobe: " + junk + ": not a PTX file or a cubin (no ELF header and no .version directive)\n");

  r = loraprobe({"inspect", "--filter", "op=expand", fixture_path(k_clean_id + ".cubin")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "loraprobe: --filter selects kernel-set variants; it does not apply to files\n");

  // Refused on a GPU machine too (the H200 said "needs a GPU" while it had one): the
  // message says inspect never runs the driver's JIT.
  r = loraprobe({"inspect", "--compiler", "driver"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("inspect does not run the driver's JIT"), std::string::npos) << r.err;

  r = loraprobe({"inspect", "--filter", "block_n=96"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("loraprobe: --filter block_n=96: no compiled variant of <embedded>/kernels/sets/triton-3.6.0, ", 0), 0U)
      << r.err;
}

TEST_F(InspectCli, NoNvdisasmExitsThree) {
  if (fs::exists("/usr/local/cuda/bin/nvdisasm")) {
    GTEST_SKIP() << "skipped: the CUDA toolkit's nvdisasm cannot be hidden from loraprobe here";
  }
  const ProcessResult r = loraprobe({"inspect", "--triton", "3.6.0", "--filter", "id=" + k_set_clean},
                                    {"LP_TOOLS_DIR=" + m_scratch.path() + "/no-tools", "CUDA_HOME=",
                                     "PATH=" + m_scratch.path() + "/no-bin"});
  if (r.exit_code == 0 || r.exit_code == 1) {
    GTEST_SKIP() << "skipped: an nvdisasm outside the project is still reachable";
  }
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("nvdisasm"), std::string::npos) << r.err;
}

TEST_F(InspectCli, PtxIsCompiledWithTheGivenPtxas) {
  LP_REQUIRE_NVDISASM(tool);
  LP_REQUIRE_SOME_PTXAS(ptxas);
  const ProcessResult r = loraprobe({"inspect", fixture_path(k_hazard_id + ".ptx"), "--ptxas", ptxas->path});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find(fixture_path(k_hazard_id + ".ptx") + " ptxas=" + ptxas->path), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("inspect: 1 cubin(s) (1 file(s)): 1 with a hazard"), std::string::npos) << r.out;
}

TEST_F(InspectCli, FolderWalkAndItsJsonValidate) {
  LP_REQUIRE_NVDISASM(tool);
  LP_REQUIRE_SOME_PTXAS(ptxas);
  // Laid out like a Triton cache: <hash>/<kernel>.{ptx,cubin,json,...}.
  fs::create_directories(m_scratch.path() + "/triton/AB12/");
  fs::create_directories(m_scratch.path() + "/triton/CD34/");
  (void)m_scratch.write("triton/AB12/_lora_expand_kernel.ptx", fixture(k_clean_id + ".ptx"));
  (void)m_scratch.write("triton/AB12/_lora_expand_kernel.json", "{\"name\": \"_lora_expand_kernel\"}");
  (void)m_scratch.write("triton/CD34/_lora_expand_kernel.cubin", fixture(k_hazard_id + ".cubin"));
  (void)m_scratch.write("triton/CD34/_lora_expand_kernel.ttgir", "#blocked = ...");
  const ProcessResult r = loraprobe({"inspect", "--json", "--ptxas", ptxas->path, m_scratch.path() + "/triton"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc.at("mode"), "files");
  ASSERT_EQ(doc.at("inputs").size(), 2U);
  ASSERT_EQ(doc.at("items").size(), 2U);
  EXPECT_EQ(doc["items"][0]["name"], m_scratch.path() + "/triton/AB12/_lora_expand_kernel.ptx");
  EXPECT_EQ(doc["items"][0]["compiler"], "ptxas=" + ptxas->path);
  EXPECT_EQ(doc["items"][0]["status"], "clean");
  EXPECT_EQ(doc["items"][1]["compiler"], "file");
  EXPECT_EQ(doc["items"][1]["status"], "hazard");
  expect_valid(r.out, "files");
}

TEST_F(InspectCli, AFolderScanRecordsBadFilesFollowsLinksAndSaysWhatItSkipped) {
  LP_REQUIRE_NVDISASM(tool);
  const std::string root = m_scratch.path() + "/scan";
  fs::create_directories(root + "/sub");
  (void)m_scratch.write("scan/good.cubin", fixture(k_hazard_id + ".cubin"));
  (void)m_scratch.write("scan/empty.cubin", "");  // zero bytes: an error row, not the end of the scan
  fs::create_symlink("/nonexistent/x.cubin", root + "/dangling.cubin");
  fs::create_symlink(root, root + "/sub/loop");  // a link back up: walked once
  fs::create_directories(m_scratch.path() + "/elsewhere");
  (void)m_scratch.write("elsewhere/linked.cubin", fixture(k_clean_id + ".cubin"));
  fs::create_directory_symlink(m_scratch.path() + "/elsewhere", root + "/linked-folder");  // followed
  const ProcessResult r = loraprobe({"inspect", root});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err, "inspect: " + root + ": skipped 1 dangling link(s) and 1 link(s) back to a folder already walked\n");
  EXPECT_NE(r.out.find("error: " + root + "/empty.cubin: not a cubin"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(root + "/linked-folder/linked.cubin"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("inspect: 3 cubin(s) (3 file(s)): 1 with a hazard"), std::string::npos) << r.out;
}

TEST_F(InspectCli, ABrokenCompilerIsAnErrorRowNamingTheUsersFile) {
  // A "ptxas" that says it is one and exits 0 without a cubin: the row names the file
  // and the compiler, never loraprobe's temporary folder.
  LP_REQUIRE_NVDISASM(tool);
  const std::string fake = m_scratch.write("fake-ptxas", "#!/bin/sh\necho 'Cuda compilation tools, release 13.0, V13.0.88'\n");
  fs::permissions(fake, fs::perms::owner_all);
  const std::string ptx = fixture_path(k_hazard_id + ".ptx");
  // JSON, not the table: the table shortens long errors, and how much shows depends on
  // where the checkout lies.
  const ProcessResult r = loraprobe({"inspect", "--json", ptx, "--ptxas", fake});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc.at("items").size(), 1U);
  EXPECT_EQ(doc["items"][0]["error"], "ptxas 13.0.88 (" + fake + ") wrote no cubin for " + ptx + " (exit 0)");
  EXPECT_EQ(r.out.find("loraprobe-ptxas-"), std::string::npos) << r.out;
  const ProcessResult echo = loraprobe({"inspect", ptx, "--ptxas", "/bin/echo"});
  EXPECT_EQ(echo.exit_code, 2);
  EXPECT_EQ(echo.err, "loraprobe: ptxas=/bin/echo: `/bin/echo --version` does not print a CUDA tool version: not a ptxas\n");
  // A version prefix is the newest installed version it names, and the label says which.
  if (fs::exists(LP_SOURCE_DIR "/.tools/ptxas/13.5.37/ptxas")) {
    const ProcessResult newest = loraprobe({"inspect", ptx, "--ptxas", "13"});
    EXPECT_NE(newest.out.find(" ptxas=13.5.37 "), std::string::npos) << newest.out;
  }
}

TEST_F(InspectCli, SigtermStopsTheRunKillsItsChildrenKeepsWhatFinishedAndExits143) {
  // A slow nvdisasm stands in for a long cold run: each call records its pid and sleeps.
  const std::string pids = m_scratch.path() + "/pids";
  const std::string tmp = m_scratch.path() + "/tmp";
  fs::create_directories(pids);
  fs::create_directories(tmp);
  const std::string slow = m_scratch.write(
      "slow-nvdisasm", "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'nvdisasm: Cuda compilation tools, release 13.5, "
                       "V13.5.37'; exit 0; fi\necho $$ > " + pids + "/$$\nexec sleep 60\n");
  fs::permissions(slow, fs::perms::owner_all);
  const std::string script = fmt::format(
      "XDG_CACHE_HOME='{0}/cache' TMPDIR='{1}' '{2}' inspect --triton 3.6.0 --compiler prebuilt --filter "
      "op=expand,input_dtype=fp32,weight_dtype=bf16 --nvdisasm '{3}' -j 2 > '{0}/out' 2> '{0}/err' & p=$!; "
      "sleep 3; kill -TERM $p; wait $p; echo $?",
      m_scratch.path(), tmp, LP_LORAPROBE, slow);
  ProcessOptions options;
  options.timeout = std::chrono::seconds(60);
  const ProcessResult r = run_process({"/bin/sh", "-c", script}, options);
  EXPECT_EQ(r.out, "143\n") << r.err;
  const std::string err = read_file(m_scratch.path() + "/err");
  EXPECT_NE(err.find("inspect: interrupted by SIGTERM after "), std::string::npos) << err;
  EXPECT_NE(err.find("their reports are in the cache"), std::string::npos) << err;
  const std::string out = read_file(m_scratch.path() + "/out");
  EXPECT_NE(out.find("not inspected: interrupted by SIGTERM"), std::string::npos) << out.substr(0, 2000);
  EXPECT_NE(out.find("\ninspect: "), std::string::npos) << out.substr(0, 2000);  // the summary line, partial
  // Every nvdisasm it started is gone (killed and reaped, not orphaned), and so are
  // loraprobe's temporary folders.
  std::size_t started = 0;
  for (const auto& entry : fs::directory_iterator(pids)) {
    ++started;
    const pid_t pid = std::stoi(entry.path().filename().string());
    EXPECT_NE(::kill(pid, 0), 0) << "nvdisasm " << pid << " is still running";
  }
  EXPECT_GT(started, 0U);
  EXPECT_TRUE(fs::is_empty(tmp)) << fs::directory_iterator(tmp)->path();
}

TEST_F(InspectCli, KernelSetJsonValidatesAndTheCacheServesTheSecondRun) {
  LP_REQUIRE_NVDISASM(tool);
  LP_REQUIRE_SOME_PTXAS(ptxas);
  // The disk cache alone: the results shipped with loraprobe would answer the prebuilt cubin.
  const std::vector<std::string> args = {"inspect", "--json", "--no-shipped-results", "--triton", "3.6.0",
                                         "--compiler", "prebuilt,ptxas=" + ptxas->path, "--filter",
                                         "id=" + k_set_hazard};
  const ProcessResult cold = loraprobe(args);
  EXPECT_EQ(cold.exit_code, 1) << cold.err;
  expect_valid(cold.out, "kernel-set");
  const ProcessResult warm = loraprobe(args);
  EXPECT_EQ(warm.exit_code, 1) << warm.err;
  expect_valid(warm.out, "kernel-set-cached");
  const nlohmann::json a = nlohmann::json::parse(cold.out);
  const nlohmann::json b = nlohmann::json::parse(warm.out);
  EXPECT_EQ(a.at("mode"), "kernel_set");
  EXPECT_EQ(a.at("cache").at("sass_misses"), 2);
  EXPECT_EQ(b.at("cache").at("sass_hits"), 2);
  // ptxas runs again (the cache is not trusted with what a PTX compiles to) and the
  // report of the cubin it made comes from the cache; --trust-cache skips the compile.
  EXPECT_EQ(b.at("cache").at("compile_hits"), 0);
  EXPECT_EQ(b.at("cache").at("rejected"), 0);
  std::vector<std::string> trusting = args;
  trusting.push_back("--trust-cache");
  const ProcessResult trusted = loraprobe(trusting);
  EXPECT_EQ(trusted.exit_code, 1) << trusted.err;
  EXPECT_EQ(nlohmann::json::parse(trusted.out).at("cache").at("compile_hits"), 1);
  ASSERT_EQ(b.at("items").size(), 2U);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_FALSE(a["items"][i]["cached"].get<bool>());
    EXPECT_TRUE(b["items"][i]["cached"].get<bool>());
    EXPECT_EQ(a["items"][i]["sass"], b["items"][i]["sass"]);
  }
}

TEST_F(InspectCli, TheShippedResultsAnswerACubinAndVerifyCacheReDerivesThem) {
  LP_REQUIRE_NVDISASM(tool);
  const std::vector<std::string> args = {"inspect", "--json", "--triton", "3.6.0", "--compiler", "prebuilt",
                                         "--filter", "id=" + k_set_hazard};
  const ProcessResult cold = loraprobe(args);
  EXPECT_EQ(cold.exit_code, 1) << cold.err;
  const nlohmann::json shipped = nlohmann::json::parse(cold.out);
  std::vector<std::string> without = args;
  without.push_back("--no-shipped-results");
  const ProcessResult fresh = loraprobe(without);
  EXPECT_EQ(fresh.exit_code, 1) << fresh.err;
  const nlohmann::json computed = nlohmann::json::parse(fresh.out);
  EXPECT_EQ(computed.at("cache").at("shipped_sass_hits"), 0);
  EXPECT_FALSE(computed.at("items").at(0).at("cached").get<bool>());
  if (ShippedResults::embedded()->header().nvdisasm.sha256 != tool->sha256) {
    GTEST_SKIP() << "skipped: nvdisasm " << tool->version << " is not the one the shipped results were made with";
  }
  EXPECT_EQ(shipped.at("cache").at("shipped_sass_hits"), 1);
  EXPECT_TRUE(shipped.at("items").at(0).at("cached").get<bool>());
  EXPECT_EQ(shipped.at("items").at(0).at("finding_count"), computed.at("items").at(0).at("finding_count"));
  std::vector<std::string> verify = args;
  verify.insert(verify.end(), {"--verify-cache", "1"});
  const nlohmann::json checked = nlohmann::json::parse(loraprobe(verify).out);
  EXPECT_EQ(checked.at("cache").at("verified"), 1);
  EXPECT_EQ(checked.at("cache").at("differences"), 0);
}

TEST_F(InspectCli, UpgradeGateExitCodesFollowTheStack) {
  // The CPU half of the upgrade gate: what a sweep of configs/upgrade-gate.json loads,
  // under the stack in question. Exit 1 on a hazard, 0 when the stack is fixed.
  LP_REQUIRE_NVDISASM(tool);
  const std::string gate = LP_SOURCE_DIR "/configs/upgrade-gate.json";
  auto run = [&](const std::string& triton, const std::string& compilers) {
    return loraprobe({"inspect", "--config", gate, "--triton", triton, "--compiler", compilers, "--hazards-only"});
  };
  const ProcessResult fixed = run("3.9.0", "prebuilt");  // Triton 3.9 and its bundled ptxas 13.4.59
  EXPECT_EQ(fixed.exit_code, 0) << fixed.out << fixed.err;
  EXPECT_NE(fixed.out.find(": 0 with a hazard (0 findings), "), std::string::npos) << fixed.out;
  // One Triton set under one compiler is still a question with an answer: the matrix and its sentence.
  EXPECT_NE(fixed.out.find("is my stack fixed?"), std::string::npos) << fixed.out;
  EXPECT_NE(fixed.out.find("\nFixed: Triton 3.9.0 with its own ptxas 13.4.59.\n"), std::string::npos) << fixed.out;
  const ProcessResult bundled38 = run("3.8.0", "prebuilt");  // its bundled CUDA 12.9 ptxas folds the copies
  EXPECT_EQ(bundled38.exit_code, 1) << bundled38.out << bundled38.err;
  EXPECT_NE(bundled38.out.find("made by the PTX: 0, by ptxas: "), std::string::npos) << bundled38.out;
  EXPECT_NE(bundled38.out.find("\n3.8.0 (own ptxas 12.9.86)  hazard (ptxas)\n"), std::string::npos) << bundled38.out;
  EXPECT_NE(bundled38.out.find("Hazardous: Triton 3.8.0 with its own ptxas 12.9.86, made by ptxas: ptxas >= 13.3 fixes "
                               "it (the PTX is clean, ptxas up to 13.2 re-creates the hazard).\n"),
            std::string::npos)
      << bundled38.out;
  const ProcessResult ptx36 = run("3.6.0", "prebuilt");
  EXPECT_EQ(ptx36.exit_code, 1) << ptx36.out << ptx36.err;
  EXPECT_NE(ptx36.out.find(", by ptxas: 0)"), std::string::npos) << ptx36.out;
  const std::string new_ptxas = LP_SOURCE_DIR "/.tools/ptxas/13.3.73/ptxas";
  if (!fs::exists(new_ptxas)) {
    GTEST_SKIP() << "skipped: no ptxas 13.3.73 in .tools (scripts/install_tools.sh)";
  }
  const ProcessResult fixed38 = run("3.8.0", "ptxas=" + new_ptxas);  // the fix: Triton >= 3.8 and ptxas >= 13.3
  EXPECT_EQ(fixed38.exit_code, 0) << fixed38.out << fixed38.err;
  EXPECT_NE(fixed38.out.find("\nFixed: Triton 3.8.0 with ptxas=" + new_ptxas + " (13.3.73).\n"), std::string::npos)
      << fixed38.out;
  const ProcessResult still36 = run("3.6.0", "ptxas=" + new_ptxas);  // no ptxas fixes 3.6's PTX
  EXPECT_EQ(still36.exit_code, 1) << still36.out << still36.err;
}

/// The kernel-set variant id a planned case loads (scripts/kernelgen's naming), from
/// its axes in `sweep --dry-run --json`.
std::string variant_id_of(const nlohmann::json& a) {
  const auto i = [&](const char* key) { return a.at(key).get<std::int64_t>(); };
  const std::string knobs = fmt::format("m{}n{}k{}-w{}s{}", i("block_m"), i("block_n"), i("block_k"), i("num_warps"),
                                        i("num_stages"));
  const std::string even = a.at("even_k").get<bool>() ? "evenk" : "maskk";
  const std::string w = a.at("weight_dtype");
  if (a.at("op") == "shrink") {
    return fmt::format("shrink-{}-{}-sk{}-g8-{}-s{}", w, knobs, i("split_k"), even, i("num_slices"));
  }
  std::string id = fmt::format("expand-{}-{}-{}-{}-{}-s{}", a.at("input_dtype").get<std::string>(), w, knobs, even,
                               a.at("add_inputs").get<bool>() ? "add" : "noadd", i("num_slices"));
  if (i("num_slices") > 1) {
    const std::vector<std::int64_t> hidden = a.at("hidden");
    id += std::adjacent_find(hidden.begin(), hidden.end(), std::not_equal_to<>()) == hidden.end() ? "-samestride"
                                                                                                    : "-perslice";
  }
  return id;
}

TEST_F(InspectCli, ThePlanFlagsAskTheStaticQuestionAsSweepPlansIt) {
  // One set of plan flags for both commands: inspect loads exactly the variants of the
  // cases sweep --dry-run plans with the same flags.
  LP_REQUIRE_NVDISASM(tool);
  const std::vector<std::string> flags = {"--model", "qwen3-8b", "--tokens", "256", "--rank", "64",
                                          "--triton", "3.6.0", "--compiler", "prebuilt"};
  std::vector<std::string> sweep_args = {"sweep", "--dry-run", "--json"};
  sweep_args.insert(sweep_args.end(), flags.begin(), flags.end());
  const ProcessResult planned = loraprobe(sweep_args);
  ASSERT_EQ(planned.exit_code, 0) << planned.err;
  std::set<std::string> want;
  const nlohmann::json plan = nlohmann::json::parse(planned.out);
  for (const nlohmann::json& c : plan.at("cases")) {
    want.insert(variant_id_of(c.at("axes")));
  }
  std::vector<std::string> inspect_args = {"inspect", "--json"};
  inspect_args.insert(inspect_args.end(), flags.begin(), flags.end());
  const ProcessResult inspected = loraprobe(inspect_args);
  ASSERT_LE(inspected.exit_code, 1) << inspected.err;  // 1: the fp32 expands at block_n 64 stages 2 are hazardous
  std::set<std::string> got;
  const nlohmann::json report = nlohmann::json::parse(inspected.out);
  for (const nlohmann::json& item : report.at("items")) {
    got.insert(item.at("name").get<std::string>());
  }
  // A model plan asks only for what vLLM launches, and the set has every such variant
  // (a planned variant the set lacked would be skipped by sweep and named on stderr by
  // inspect).
  const ProcessResult listed = loraprobe({"list", "--triton", "3.6.0", "--json"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  const nlohmann::json set = nlohmann::json::parse(listed.out);
  std::set<std::string> in_set;
  for (const nlohmann::json& v : set.at("variants")) {
    in_set.insert(v.at("id").get<std::string>());
  }
  std::set<std::string> want_in_set;
  for (const std::string& id : want) {
    if (in_set.count(id) > 0) {
      want_in_set.insert(id);
    }
  }
  EXPECT_GE(want.size(), 8U);  // fp32 and bf16 input, shrink, over qwen3-8b's four shapes
  EXPECT_EQ(want_in_set, want);
  EXPECT_EQ(got, want);
  // A MoE preset: the routed experts' fused-MoE kernel is inspected as vLLM's fast path
  // launches it (qwen3-30b-a3b: 128 experts, top-8; at 256 tokens the down projection's
  // grid of 158 M blocks x 2 adapter programs (vLLM's max_loras + 1) is past 1.5x the
  // SMs, so one program per block, 4 warps).
  const ProcessResult moe = loraprobe({"inspect", "--model", "qwen3-30b-a3b", "--tokens", "256", "--rank", "64",
                                       "--triton", "3.6.0", "--compiler", "prebuilt"});
  EXPECT_EQ(moe.err.find("not inspected"), std::string::npos) << moe.err;
  EXPECT_NE(moe.out.find("fusedmoe-bf16-r64-topk8-noroutedw-m64n128k128-w4s3-p1-evenk-add"), std::string::npos)
      << moe.out;
  EXPECT_NE(moe.out.find("fusedmoe-bf16-r64-topk1-routedw-m64n128k128-w4s3-p1-evenk-add"), std::string::npos)
      << moe.out;
  // Files and plan flags do not mix.
  const ProcessResult both = loraprobe({"inspect", "--model", "qwen3-8b", "some.ptx"});
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("take no files or --filter"), std::string::npos) << both.err;
}

TEST_F(InspectCli, APairingThatCannotCompileIsIncompatibleNotAnError) {
  // Triton 3.9.0's PTX is .version 9.4; the toolkit's ptxas 13.0 reads up to 9.0.
  LP_REQUIRE_NVDISASM(tool);
  if (!fs::exists("/usr/local/cuda/bin/ptxas")) {
    GTEST_SKIP() << "skipped: no CUDA toolkit ptxas";
  }
  const std::string filter = "--filter=op=expand,block_n=128,num_stages=2,input_dtype=fp32,num_slices=1,"
                             "add_inputs=true,even_k=true,block_m=64,block_k=32,num_warps=4,role=kernel,n_spec=divisible_by_16";
  const ProcessResult only = loraprobe({"inspect", "--triton", "3.9.0", filter, "--compiler", "ptxas=toolkit", "--json"});
  EXPECT_EQ(only.exit_code, 3) << only.err;  // nothing could be inspected: no gate passes on it
  // Which pairing, why, and how to go on, in one line on stderr (the JSON is on stdout).
  EXPECT_EQ(only.err.rfind("loraprobe: inspect: nothing was inspected, every pairing is incompatible: Triton 3.9.0 with "
                           "ptxas=toolkit (the PTX is .version 9.4; ptxas 13.0",
                           0),
            0U)
      << only.err;
  EXPECT_NE(only.err.find("); give a ptxas that reads that .version (--compiler ptxas=PATH of a newer one) or Triton's "
                          "own (--compiler prebuilt)\n"),
            std::string::npos)
      << only.err;
  EXPECT_EQ(std::count(only.err.begin(), only.err.end(), '\n'), 1) << only.err;
  expect_valid(only.out, "incompatible");
  const nlohmann::json doc = nlohmann::json::parse(only.out);
  ASSERT_EQ(doc.at("items").size(), 1U);
  EXPECT_EQ(doc["items"][0]["status"], "incompatible");
  EXPECT_EQ(doc["items"][0]["error"].get<std::string>().rfind("the PTX is .version 9.4; ptxas 13.0", 0), 0U)
      << doc["items"][0]["error"];
  EXPECT_EQ(doc["summary"]["incompatible"], 1);
  EXPECT_EQ(doc["summary"]["error"], 0);
  // Beside a compiler that reads it, it is counted and fails nothing.
  const std::string junit = m_scratch.path() + "/incompatible.xml";
  const ProcessResult both = loraprobe(
      {"inspect", "--triton", "3.9.0", filter, "--compiler", "prebuilt,ptxas=toolkit", "--junit", junit});
  EXPECT_EQ(both.exit_code, 0) << both.out << both.err;
  EXPECT_NE(both.out.find("0 error(s), 1 incompatible (the compiler cannot read the PTX; not failures)"),
            std::string::npos)
      << both.out;
  const std::string xml = read_file(junit);
  EXPECT_NE(xml.find("<skipped message=\"incompatible: the PTX is .version 9.4"), std::string::npos) << xml;
  EXPECT_EQ(xml.find("<error"), std::string::npos) << xml;
}

TEST_F(InspectCli, PtxasMatrixOfOneVersion) {
  LP_REQUIRE_NVDISASM(tool);
  LP_REQUIRE_SOME_PTXAS(ptxas);
  // A matrix folder laid out as scripts/install_tools.sh does, with one version.
  const std::string dir = m_scratch.path() + "/ptxas";
  fs::create_directories(dir + "/" + ptxas->version);
  fs::create_symlink(ptxas->path, dir + "/" + ptxas->version + "/ptxas");
  // One block per Triton set, each with its own bundled-ptxas column.
  const std::vector<std::string> args = {"inspect", "--ptxas-matrix=" + dir, "--triton", "3.6.0,3.8.0", "--filter",
                                         "id=" + k_set_hazard};
  const ProcessResult text = loraprobe(args);
  EXPECT_EQ(text.exit_code, 1) << text.err;
  EXPECT_NE(text.out.find("== Triton 3.6.0 ==\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("== Triton 3.8.0 ==\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("Triton 3.6.0, vLLM default expand (block_n 128, num_stages 2, fp32 input) [" + k_set_hazard +
                          "]: no ptxas gives clean SASS"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("multi-slice default expand (block_n 64, num_stages 2, fp32 input): not in this selection"),
            std::string::npos)
      << text.out;
  std::vector<std::string> json_args = args;
  json_args.emplace_back("--json");
  const ProcessResult json = loraprobe(json_args);
  EXPECT_EQ(json.exit_code, 1) << json.err;
  const nlohmann::json doc = nlohmann::json::parse(json.out);
  EXPECT_EQ(doc.at("mode"), "ptxas_matrix");
  ASSERT_EQ(doc.at("matrix").size(), 2U);
  EXPECT_EQ(doc["matrix"][0]["triton_version"], "3.6.0");
  EXPECT_EQ(doc["matrix"][1]["triton_version"], "3.8.0");
  for (const nlohmann::json& block : doc["matrix"]) {
    ASSERT_EQ(block.at("columns").size(), 2U);
    EXPECT_TRUE(block["first_clean"][0]["version"].is_null() || block["triton_version"] == "3.8.0");
  }
  // Triton 3.8's bundled ptxas is CUDA 12.9.86: its prebuilt column says so.
  const auto& columns38 = doc["matrix"][1]["columns"];
  EXPECT_TRUE(columns38[0]["version"] == "12.9.86" || columns38[1]["version"] == "12.9.86") << columns38.dump();
  expect_valid(json.out, "matrix");
  // With a 13.3 ptxas in the matrix, Triton 3.6's PTX-at-fault line names the set whose
  // PTX is clean there and the first ptxas that makes it clean SASS.
  const std::string new_ptxas = LP_SOURCE_DIR "/.tools/ptxas/13.3.73/ptxas";
  if (!fs::exists(new_ptxas)) {
    GTEST_SKIP() << "skipped: no ptxas 13.3.73 in .tools (scripts/install_tools.sh)";
  }
  std::vector<std::string> with_new = args;
  with_new.insert(with_new.end(), {"--ptxas", new_ptxas});
  const ProcessResult fixed = loraprobe(with_new);
  EXPECT_NE(fixed.out.find("Triton 3.8.0, vLLM default expand (block_n 128, num_stages 2, fp32 input) [" + k_set_hazard +
                           "]: first clean with ptxas 13.3.73 (and every later one); bundled ptxas 12.9.86 has the "
                           "hazard\n"),
            std::string::npos)
      << fixed.out;
  EXPECT_NE(fixed.out.find("so the fix belongs in Triton and no ptxas can be relied on (Triton 3.8.0's PTX is clean "
                           "here: first clean with ptxas 13.3.73)\n"),
            std::string::npos)
      << fixed.out;
}

TEST_F(InspectCli, ATritonCacheOfTheDualStreamExpandShowsItsEarlyReadAndProducedMovesIt) {
  // A Triton cache entry as vLLM's dual-stream expand leaves one (cubin, PTX and the
  // .ttir naming the parameters), made from the embedded Triton 3.6.0 variant.
  LP_REQUIRE_NVDISASM(tool);
  const kernels::KernelSets sets = kernels::KernelSets::load();
  const kernels::KernelSet& set = sets.at("3.6.0");
  // block_k 16: no wgmma finding, so the table's first finding is the early read.
  const kernels::Variant* v = set.find("expand-fp32-bf16-m64n128k16-w4s2-evenk-noadd-s1-gdc");
  ASSERT_NE(v, nullptr);
  const std::string dir = m_scratch.path() + "/triton-cache/EXPAND";
  fs::create_directories(dir);
  std::string ttir = "module {\n  tt.func public @_lora_expand_kernel(";
  for (const kernels::Param& p : v->params) {
    if (p.type != "global_scratch" && p.type != "profile_scratch") {
      ttir += fmt::format("{}%{}: i32 loc(\"{}\"(#loc))", p.index == 0 ? "" : ", ", p.name, p.name);
    }
  }
  ttir += ") attributes {noinline = false} {\n";
  std::ofstream(dir + "/_lora_expand_kernel.ttir") << ttir;
  std::ofstream(dir + "/_lora_expand_kernel.cubin", std::ios::binary) << set.contents(*v->cubin);
  std::ofstream(dir + "/_lora_expand_kernel.ptx", std::ios::binary) << set.contents(*v->ptx);

  // Which reads count: the embedded contract (input_ptr), then --produced lora_ptr.
  for (const std::string param : {"input_ptr", "lora_ptr"}) {
    // The cubin as it is ("file"), and its PTX compiled by the toolkit's ptxas.
    std::vector<std::string> args = {"inspect", m_scratch.path() + "/triton-cache", "--json"};
    if (param != "input_ptr") {
      args.insert(args.end(), {"--produced", param});
    }
    const ProcessResult r = loraprobe(args);
    ASSERT_EQ(r.exit_code, 1) << r.err;
    expect_valid(r.out, "early-read-" + param);
    const nlohmann::json doc = nlohmann::json::parse(r.out);
    const nlohmann::json& items = doc.at("items");
    const auto file = std::find_if(items.begin(), items.end(), [](const nlohmann::json& i) { return i.at("compiler") == "file"; });
    ASSERT_NE(file, items.end()) << r.out;
    const nlohmann::json& item = *file;
    ASSERT_GE(item.at("early_read_count").get<int>(), 1) << param;
    // Triton 3.6.0's PTX already loads before its wait: the PTX is at fault.
    EXPECT_EQ(item.at("early_read_attribution"), "ptx") << param;
    for (const nlohmann::json& k : item.at("sass").at("kernels")) {
      for (const nlohmann::json& e : k.at("early_reads")) {
        EXPECT_EQ(e.at("param"), param) << e.dump();
        EXPECT_EQ(e.at("wait").at("instruction"), "ACQBULK") << e.dump();
      }
    }
    EXPECT_GE(doc.at("summary").at("early_reads").get<int>(), item.at("early_read_count").get<int>());
  }
  const ProcessResult table = loraprobe({"inspect", m_scratch.path() + "/triton-cache"});
  EXPECT_NE(table.out.find(" with gdc-early-read ("), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("(reads input_ptr before ACQBULK 0x"), std::string::npos) << table.out;

  const ProcessResult no_files = loraprobe({"inspect", "--produced", "input_ptr"});
  EXPECT_EQ(no_files.exit_code, 2) << no_files.err;
  EXPECT_NE(no_files.err.find("--produced names the parameters of your own kernels"), std::string::npos)
      << no_files.err;
}

}  // namespace
}  // namespace lp::inspect
