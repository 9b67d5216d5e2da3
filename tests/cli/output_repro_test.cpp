// End-to-end checks of the loraprobe binary's outputs: --output FORMAT=PATH from the one
// format registry, and repro bundles of a report's case (plain and amplified).

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "support/cli.hpp"
#include "util/files.hpp"
#include "util/sha256.hpp"
#include "version.hpp"

namespace lp {
namespace {

using test_support::loraprobe;
using test_support::scratch;

// Issue 54: every format from one registry, --output FORMAT=PATH on sweep, inspect,
// merge and report, the old flags short for it.
TEST(Cli, OutputWritesEachFormatTheRegistryKnows) {
  namespace fs = std::filesystem;
  const std::string seed = LP_SOURCE_DIR "/tests/report/fixtures/seed-h200-3.0.0.json";
  const std::string dir = scratch().path() + "/output-good";
  fs::create_directories(dir);
  ProcessResult r = loraprobe({"report", seed, "--output", "md=" + dir + "/r.md", "--output", "html=" + dir + "/r.html",
                               "--output", "junit=" + dir + "/r.xml", "--output", "summary=" + dir + "/r.txt",
                               "--output", "json=" + dir + "/r.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "") << "with only --output, nothing goes to stdout";
  // Each file is what report --format writes for it.
  for (const auto& [format, file] : std::vector<std::pair<std::string, std::string>>{
           {"md", "r.md"}, {"html", "r.html"}, {"junit", "r.xml"}, {"summary", "r.txt"}, {"json", "r.json"}}) {
    const ProcessResult same = loraprobe({"report", seed, "--format", format});
    ASSERT_EQ(same.exit_code, 0) << same.err;
    EXPECT_EQ(read_file(dir + "/" + file, 1 << 24), same.out) << format;
  }
  // --format (or --out) still writes its own besides --output's.
  r = loraprobe({"report", seed, "--format", "junit", "--output", "md=" + dir + "/again.md"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("<testsuites"), std::string::npos);
  EXPECT_EQ(read_file(dir + "/again.md", 1 << 24), read_file(dir + "/r.md", 1 << 24));
}

TEST(Cli, OutputRefusesAnUnknownFormatADuplicateAndAnEmptyPath) {
  namespace fs = std::filesystem;
  const std::string seed = LP_SOURCE_DIR "/tests/report/fixtures/seed-h200-3.0.0.json";
  const std::string dir = scratch().path() + "/output-bad";
  fs::create_directories(dir);
  const std::string x = dir + "/x";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"report", seed, "--output", "xml=" + x},
       "--output xml=" + x + ": unknown format \"xml\" (formats: summary, md, html, junit, json)\n"},
      {{"sweep", "--dry-run", "--output", "pdf=" + x},
       "--output pdf=" + x + ": unknown format \"pdf\" (formats: summary, md, html, junit, json)\n"},
      {{"inspect", "--output", "pdf=" + x},
       "--output pdf=" + x + ": unknown format \"pdf\" (formats: summary, md, html, junit, json)\n"},
      {{"merge", seed, "-o", dir + "/m.json", "--output", "pdf=" + x},
       "--output pdf=" + x + ": unknown format \"pdf\" (formats: summary, md, html, junit, json)\n"},
      {{"report", seed, "--output", "md"}, "--output md: expected FORMAT=PATH (formats: summary, md, html, junit, json)\n"},
      {{"inspect", "--output", "json=" + x},
       "--output json=" + x + ": the JSON report is made from a sweep report; inspect writes its JSON with --json\n"},
      {{"report", seed, "--output", "md="}, "--output md=: the path is empty\n"},
      {{"report", seed, "--output", "md=" + x, "--output", "html=" + x},
       "--output: " + x + " is given twice (md and html): one file holds one format\n"},
      {{"sweep", "--dry-run", "--junit", x, "--output", "junit=" + x},
       "--output: " + x + " is given twice (junit and junit): one file holds one format\n"},
  };
  for (const auto& [args, message] : cases) {
    const ProcessResult r = loraprobe(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << " " << args.back() << ": " << r.err;
    EXPECT_EQ(r.err, "loraprobe: " + message) << args[0];
    EXPECT_EQ(r.out, "");
  }
  EXPECT_FALSE(fs::exists(x));
  EXPECT_FALSE(fs::exists(dir + "/m.json")) << "merge checks its outputs before it writes";
}

TEST(Cli, ReproBundlesACaseOfAReportWithoutAGpu) {
  const std::string report = LP_SOURCE_DIR "/tests/report/fixtures/seed-h200-3.0.0.json";
  const std::string dir = scratch().path() + "/repro-bundle";
  std::filesystem::remove_all(dir);
  ProcessResult r = loraprobe({"repro", report, "9efe288f6599", "--out", dir});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The PTX and cubin are the set's own. The set was regenerated after the report was
  // made (the kernels' source lines moved when USE_GDC came in: the same code, other
  // line info), so the bundle says its cubin is not the one the report says ran, and
  // why: the bundled ptxas is the same binary, so the kernel set's PTX differs (issue
  // 53: it used to blame the ptxas).
  // The bundled cubin is the embedded set's, whose hash moves whenever the set is
  // regenerated with other line info: the note names it as bundled.
  const std::string cubin = read_file(dir + "/kernel.cubin", 1 << 20);
  EXPECT_EQ(r.out, "repro: " + dir + ": kernel.ptx, kernel.cubin, kernel.sass, ptxas.txt, case.json, "
                   "case-record.json, README.md\nrepro: note: kernel.cubin (sha256 " + sha256_hex(cubin).substr(0, 12) +
                   ") is not the cubin that ran (sha256 46b919d07e58): the same prebuilt (sha256 c960a4f238b1) and "
                   "options, so the PTX differs: Triton 3.6.0's kernel set here (loraprobe " + std::string(k_version) +
                   ", git " + k_git_sha + ") is not the one the sweep loaded (loraprobe 0.1.0, git 0a1d13111582)\n");
  EXPECT_EQ(cubin.substr(1, 3), "ELF");
  EXPECT_NE(read_file(dir + "/kernel.ptx", 1 << 20).find("wgmma.mma_async"), std::string::npos);
  // The SASS marks the race: 8 overwriting instructions, the in-flight HGMMA.
  const std::string sass = read_file(dir + "/kernel.sass", 1 << 22);
  std::size_t writes = 0;
  for (std::size_t at = sass.find("of the HGMMA at 0x2380 while it is in flight"); at != std::string::npos;
       at = sass.find("of the HGMMA at 0x2380 while it is in flight", at + 1)) {
    ++writes;
  }
  EXPECT_EQ(writes, 8U);
  EXPECT_NE(sass.find(">>      /*2380*/  HGMMA.64x128x16.F32.BF16 R24, R88, gdesc[UR8], R24, gsb0 ;    // the HGMMA"),
            std::string::npos);
  EXPECT_EQ(read_file(dir + "/ptxas.txt", 4096).rfind("command: ptxas -lineinfo -v --gpu-name=sm_90a kernel.ptx -o "
                                                       "kernel.cubin\n",
                                                       0),
            0U);
  const std::string readme = read_file(dir + "/README.md", 1 << 16);
  EXPECT_NE(readme.find("loraprobe sweep --config configs/seed-48590.json --case 9efe288f6599 --out repro.json"),
            std::string::npos);
  EXPECT_NE(readme.find("## For a bug report to Triton"), std::string::npos);
  EXPECT_NE(readme.find("the fix belongs in the PTX Triton generates"), std::string::npos);
  // case.json plans exactly that case: same id, so the same inputs.
  r = loraprobe({"sweep", "--config", dir + "/case.json", "--dry-run", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json plan = nlohmann::json::parse(r.out);
  ASSERT_EQ(plan["cases"].size(), 1U);
  EXPECT_EQ(plan["cases"][0]["id"], "9efe288f6599");
  // And --case picks it out of the whole plan, with its index there.
  r = loraprobe({"sweep", "--config", LP_SOURCE_DIR "/configs/seed-48590.json", "--case", "9efe288f6599,f3c98be7fd13",
                 "--dry-run", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json picked = nlohmann::json::parse(r.out);
  ASSERT_EQ(picked["cases"].size(), 2U);
  EXPECT_EQ(picked["cases"][0]["index"], 0);
  EXPECT_EQ(picked["cases"][1]["index"], 10);
  r = loraprobe({"sweep", "--config", LP_SOURCE_DIR "/configs/seed-48590.json", "--case", "0123456789ab", "--dry-run"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "loraprobe: --case 0123456789ab: not a case of this plan (80 cases; sweep --dry-run --json lists "
                   "their ids)\n");
  // A case the report does not have.
  r = loraprobe({"repro", report, "0123456789ab", "--out", dir + "-none"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "loraprobe: " + report + ": no case 0123456789ab (80 cases; every id: loraprobe report " + report +
                       " --format json --detail full)\n");
}

TEST(Cli, ReproOfAnAmplifiedCaseBundlesTheAmplifiedPtxAndItsCubin) {
  // The seed report with its first case amplified by 2 pairs, as a sweep --amplify 2 records it.
  nlohmann::json report = nlohmann::json::parse(read_file(LP_SOURCE_DIR "/tests/report/fixtures/seed-h200-3.0.0.json"));
  report["cases"][0]["axes"]["amplify"] = 2;
  const std::string path = scratch().path() + "/amplified-report.json";
  write_file_atomic(path, report.dump());
  const std::string dir = scratch().path() + "/repro-amplified";
  std::filesystem::remove_all(dir);
  ProcessResult r = loraprobe({"repro", path, "9efe288f6599", "--out", dir});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string ptx = read_file(dir + "/kernel.ptx", 1 << 20);
  EXPECT_NE(ptx.find("// loraprobe amplify: 2 dependent wgmma pair(s)"), std::string::npos);
  EXPECT_EQ(read_file(dir + "/kernel.cubin", 1 << 20).substr(1, 3), "ELF");
  const nlohmann::json config = nlohmann::json::parse(read_file(dir + "/case.json", 1 << 16));
  EXPECT_EQ(config["axes"]["amplify"], nlohmann::json::array({2})) << config.dump();
  r = loraprobe({"sweep", "--config", dir + "/case.json", "--dry-run", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json plan = nlohmann::json::parse(r.out);
  ASSERT_EQ(plan["cases"].size(), 1U);
  EXPECT_EQ(plan["cases"][0]["axes"]["amplify"], 2);
}

}  // namespace
}  // namespace lp
