// The static results shipped with the binary (src/inspect/shipped.hpp): a results file
// is read strictly, a shipped hit is used and counted (a compile record saves its
// ptxas run), an edited entry is a miss, --verify-cache re-derives shipped hits, and
// the embedded file matches this binary's analysis and kernel sets.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "inspect/cache.hpp"
#include "inspect/inspector.hpp"
#include "inspect/shipped.hpp"
#include "kernels/kernel_sets.hpp"
#include "test_support.hpp"
#include "util/error.hpp"
#include "util/files.hpp"
#include "util/sha256.hpp"

namespace lp::inspect {
namespace {

namespace fs = std::filesystem;
using test::fixture;
using test::k_hazard_id;
using test::cubin_item;
using test::forge_compile;
using test::hazard_ptx_item;
using test::options;

/// Every entry of a cache folder, as a results file's text (the script's layout).
std::string results_text_of(const std::string& root) {
  std::vector<std::string> lines;
  for (const char* kind : {"ptxas", "sass"}) {
    if (!fs::exists(fs::path(root) / kind)) {
      continue;
    }
    for (const auto& e : fs::recursive_directory_iterator(fs::path(root) / kind)) {
      if (e.is_regular_file()) {
        lines.push_back(read_file(e.path().string()));
      }
    }
  }
  std::string text = nlohmann::json{{"format", 1},
                                    {"analysis_fingerprint", "test"},
                                    {"nvdisasm", {{"version", "test"}, {"sha256", "test"}}},
                                    {"ptxas", nlohmann::json::array()},
                                    {"entries", lines.size()}}
                         .dump() +
                     "\n";
  for (const std::string& line : lines) {
    text += line + "\n";
  }
  return text;
}

TEST(Shipped, AResultsFileIsReadStrictly) {
  const std::string header =
      R"({"format":1,"analysis_fingerprint":"f","nvdisasm":{"version":"13.5.37","sha256":"s"},"ptxas":[],"entries":0})";
  EXPECT_EQ(ShippedResults::parse(header + "\n", "t").size(), 0U);
  EXPECT_EQ(ShippedResults::parse(header + "\n", "t").header().nvdisasm.version, "13.5.37");
  const auto refused = [](const std::string& text, const std::string& says) {
    try {
      (void)ShippedResults::parse(text, "results.jsonl");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const std::runtime_error& e) {  // the header's InputError, an entry's lp::Error
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  refused("", "results.jsonl: empty");
  refused(R"({"format":2})", "results.jsonl: line 1:/format: not a results header of format 1");
  refused(R"({"format":1,"entries":0})", "results.jsonl: line 1: missing \"analysis_fingerprint\"");
  refused(header.substr(0, header.find("\"ptxas\"")) + R"("ptxas":{},"entries":0})", "line 1:/ptxas: expected a list, got an object");
  refused(header + "\n{\"kind\":\"sass\"}\n", "line 2: an entry needs a kind (sass or ptxas) and a key");
  refused(header + "\n{\"key\":\"k\",\"kind\":\"other\"}\n", "line 2: an entry needs a kind");
  std::string counted = header;
  counted.replace(counted.find("\"entries\":0"), 11, "\"entries\":3");
  refused(counted + "\n", "results.jsonl: 0 entries, the header says 3");
}

TEST(Shipped, AShippedReportIsUsedAndAnEditedOneIsAMiss) {
  LP_REQUIRE_NVDISASM(tool);
  const TempDir made("lp-shipped-");
  const InspectResult fresh = Inspector(options(*tool, 1, made.path())).inspect(cubin_item(k_hazard_id));
  ASSERT_EQ(fresh.status, StaticOutcome::hazard) << fresh.error;
  const std::string text = results_text_of(made.path());

  InspectorOptions o = options(*tool);
  o.shipped = std::make_shared<const ShippedResults>(ShippedResults::parse(text, "t"));
  const Inspector shipped(o);
  const InspectResult hit = shipped.inspect(cubin_item(k_hazard_id));
  EXPECT_TRUE(hit.cached);
  EXPECT_EQ(hit.status, StaticOutcome::hazard);
  EXPECT_EQ(hit.finding_count, fresh.finding_count);
  EXPECT_EQ(shipped.cache_stats().shipped_sass_hits, 1U);
  ASSERT_TRUE(hit.sass);
  EXPECT_EQ(hit.sass->disassembler.path, tool->path);  // this machine's, not the maker's

  // An entry edited to no findings no longer hashes to its payload_sha256: a miss.
  const std::string findings = fmt::format("\"finding_count\":{}", fresh.finding_count);
  std::string edited = text;
  ASSERT_NE(edited.find(findings), std::string::npos);
  edited.replace(edited.find(findings), findings.size(), "\"finding_count\":0");
  o.shipped = std::make_shared<const ShippedResults>(ShippedResults::parse(edited, "t"));
  const Inspector refusing(o);
  const InspectResult redone = refusing.inspect(cubin_item(k_hazard_id));
  EXPECT_FALSE(redone.cached);
  EXPECT_EQ(redone.status, StaticOutcome::hazard);
  EXPECT_EQ(refusing.cache_stats().shipped_sass_hits, 0U);
}

TEST(Shipped, AShippedCompileSavesPtxasAndVerifyCacheRunsItAgain) {
  LP_REQUIRE_NVDISASM(tool);
  LP_REQUIRE_SOME_PTXAS(ptxas);
  const TempDir made("lp-shipped-");
  ASSERT_EQ(Inspector(options(*tool, 1, made.path())).inspect(hazard_ptx_item(*ptxas)).status, StaticOutcome::hazard);
  InspectorOptions o = options(*tool);
  o.shipped = std::make_shared<const ShippedResults>(ShippedResults::parse(results_text_of(made.path()), "t"));
  ASSERT_TRUE(o.verify_compile_hits);  // the disk cache's records are not trusted; shipped ones are
  const Inspector shipped(o);
  const InspectResult hit = shipped.inspect(hazard_ptx_item(*ptxas));
  EXPECT_EQ(hit.status, StaticOutcome::hazard);
  ASSERT_TRUE(hit.compile);
  EXPECT_TRUE(hit.compile->cached);
  EXPECT_EQ(shipped.cache_stats().shipped_compile_hits, 1U);
  EXPECT_EQ(shipped.cache_stats().shipped_sass_hits, 1U);

  o.verify_sample = 1;  // --verify-cache 1: ptxas runs, and the cubin it made is compared
  const Inspector checked(o);
  const InspectResult rechecked = checked.inspect(hazard_ptx_item(*ptxas));
  EXPECT_FALSE(rechecked.compile->cached);
  EXPECT_EQ(checked.cache_stats().verified, 1U);
  EXPECT_EQ(checked.cache_stats().differences, 0U);
}

TEST(Shipped, AForgedShippedCompileIsCaughtByVerifyCacheAndBlamedOnTheShippedResults) {
  LP_REQUIRE_NVDISASM(tool);
  LP_REQUIRE_SOME_PTXAS(ptxas);
  // A results file whose record says the hazardous PTX compiles to the clean cubin.
  const TempDir made("lp-shipped-");
  const InspectItem clean = cubin_item(test::k_clean_id);
  (void)Inspector(options(*tool, 1, made.path())).inspect_all({hazard_ptx_item(*ptxas), clean});
  const InspectItem hazard = hazard_ptx_item(*ptxas);
  ASSERT_FALSE(forge_compile(made.path(), hazard, sha256_hex(clean.cubin)));
  InspectorOptions o = options(*tool);
  o.shipped = std::make_shared<const ShippedResults>(ShippedResults::parse(results_text_of(made.path()), "t"));
  EXPECT_EQ(Inspector(o).inspect(hazard).status, StaticOutcome::clean);  // trusted, as the binary is
  o.verify_sample = 1;
  const Inspector checked(o);
  EXPECT_EQ(checked.inspect(hazard).status, StaticOutcome::hazard);  // the fresh result is the one used
  const CacheStats stats = checked.cache_stats();
  EXPECT_EQ(stats.differences, 1U);
  EXPECT_EQ(stats.shipped_differences, 1U);
  EXPECT_NE(stats.first_difference.find("the shipped results say its PTX compiles to cubin sha256"), std::string::npos)
      << stats.first_difference;
}

/// Every embedded variant under `compiler` (prebuilt, or PTX for `ptxas`).
std::vector<InspectItem> embedded_items(const kernels::KernelSets& sets, const std::optional<compile::PtxasInfo>& ptxas) {
  std::vector<InspectItem> items;
  for (const kernels::KernelSet& set : sets.all()) {
    for (const kernels::Variant& v : set.variants()) {
      if (!v.ok()) {
        continue;
      }
      auto ptx = std::make_shared<const std::string>(set.contents(*v.ptx));
      if (ptxas) {
        items.push_back({v.id, v.id, "ptxas=toolkit", {}, PtxInput{ptx, *ptxas, set.manifest().ptxas_options}, nullptr,
                         set.triton(), v.produced_ordinals(), {}});
      } else {
        items.push_back({v.id, v.id, "prebuilt", set.contents(*v.cubin), std::nullopt, std::move(ptx), set.triton(),
                         v.produced_ordinals(), {}});
      }
    }
  }
  return items;
}

constexpr const char* k_regenerate = "; run python3 scripts/gen_inspected.py and rebuild";

/// The nvdisasm version scripts/install_tools.sh pins: the one the shipped results must
/// be made with (a new pin with old results would leave every CI run skipping them).
std::string pinned_nvdisasm_version() {
  const std::string script = read_file(std::string(LP_SOURCE_DIR) + "/scripts/install_tools.sh");
  std::smatch m;
  return std::regex_search(script, m, std::regex(R"re(nvdisasm_version="([0-9.]+)")re")) ? m[1].str() : std::string();
}

/// Derives again, with nvdisasm and ptxas, one item of each kind the shipped results
/// answered (per set: each op's prebuilt report with and without findings and early
/// reads, and one toolkit compile), and returns what the comparison found: what is
/// shipped must be what this analysis says, not only carry its fingerprint (an analysis
/// changed without a k_analysis_version bump).
CacheStats rederive_a_sample(const std::vector<InspectItem>& items, const std::vector<InspectResult>& results,
                             const sass::Nvdisasm& tool, const std::shared_ptr<const ShippedResults>& shipped) {
  std::map<std::string, const InspectItem*> sample;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const InspectResult& r = results[i];
    const std::string op = r.name.substr(0, r.name.find('-'));
    if (r.compiler == "prebuilt" && r.sass) {
      sample.emplace(fmt::format("{}|{}|{}|{}", r.triton, op, r.finding_count > 0, r.early_read_count > 0), &items[i]);
    } else if (r.compiler != "prebuilt" && r.compile && r.compile->cached && r.sass) {
      sample.emplace(fmt::format("{}|toolkit", r.triton), &items[i]);
    }
  }
  std::vector<InspectItem> resampled;
  for (const auto& [kind, item] : sample) {
    resampled.push_back(*item);
  }
  InspectorOptions v = options(tool);
  v.jobs = 0;
  v.shipped = shipped;
  v.verify_sample = 2 * resampled.size();  // a toolkit item's compile, then its report
  const Inspector verifier(v);
  (void)verifier.inspect_all(resampled);
  CacheStats stats = verifier.cache_stats();
  EXPECT_GE(stats.verified, resampled.size());  // a toolkit item re-derives its compile and its report
  EXPECT_GT(resampled.size(), 20U);
  return stats;
}

TEST(Shipped, TheEmbeddedResultsAnswerEveryEmbeddedVariant) {
  LP_REQUIRE_NVDISASM(tool);
  const std::shared_ptr<const ShippedResults> shipped = ShippedResults::embedded();
  ASSERT_GT(shipped->size(), 0U) << "this binary has no kernels/" << k_shipped_results_path << k_regenerate;
  ASSERT_EQ(shipped->header().analysis_fingerprint, analysis_fingerprint({}))
      << "the analysis changed since the shipped results were made" << k_regenerate;
  ASSERT_EQ(shipped->header().nvdisasm.version, pinned_nvdisasm_version())
      << "scripts/install_tools.sh pins another nvdisasm than the shipped results were made with" << k_regenerate;
  if (shipped->header().nvdisasm.sha256 != tool->sha256) {
    GTEST_SKIP() << "skipped: nvdisasm " << tool->version << " at " << tool->path << " is not the "
                 << shipped->header().nvdisasm.version << " the shipped results were made with";
  }
  std::optional<compile::PtxasInfo> toolkit;
  try {
    toolkit = compile::resolve_ptxas("toolkit");
  } catch (const EnvironmentError&) {
  }
  const auto& made_with = shipped->header().ptxas;
  const bool same_ptxas = toolkit && std::any_of(made_with.begin(), made_with.end(), [&](const ShippedTool& t) {
                            return t.sha256 == toolkit->sha256;
                          });
  // One inspector for both compilers: each PTX is checked once, whichever asks first.
  const kernels::KernelSets sets = kernels::KernelSets::load();
  std::vector<InspectItem> items = embedded_items(sets, std::nullopt);
  if (same_ptxas) {
    std::vector<InspectItem> compiled = embedded_items(sets, toolkit);
    items.insert(items.end(), std::make_move_iterator(compiled.begin()), std::make_move_iterator(compiled.end()));
  }
  const TempDir cache("lp-shipped-");  // a disk cache only to count the misses
  InspectorOptions o = options(*tool, 1, cache.path());
  o.jobs = 0;
  o.shipped = shipped;
  const Inspector inspector(o);
  const std::vector<InspectResult> results = inspector.inspect_all(items);
  for (const InspectResult& r : results) {
    if (r.compiler == "prebuilt") {
      EXPECT_TRUE(r.cached || !r.skipped.empty()) << r.triton << " " << r.name << k_regenerate;
    } else if (r.status != StaticOutcome::incompatible) {
      // Triton 3.9.0's PTX 9.4 under ptxas 13.0 is refused before ptxas runs: nothing to ship.
      EXPECT_TRUE(r.compile && r.compile->cached) << r.triton << " " << r.name << k_regenerate;
    }
  }
  const CacheStats stats = inspector.cache_stats();
  EXPECT_EQ(stats.sass_misses, 0U);
  EXPECT_EQ(stats.shipped_sass_hits, stats.sass_hits);
  EXPECT_GT(stats.shipped_sass_hits, 2000U);
  const CacheStats rederived = rederive_a_sample(items, results, *tool, shipped);
  EXPECT_EQ(rederived.differences, 0U) << rederived.first_difference << k_regenerate;
  if (!same_ptxas) {
    GTEST_SKIP() << "skipped (the prebuilt part passed): the toolkit's ptxas is not one the results were made with";
  }
  // One record per distinct PTX (sets share some), every one of them shipped.
  EXPECT_EQ(stats.shipped_compile_hits, stats.compile_hits);
  EXPECT_GT(stats.shipped_compile_hits, 2000U);
}

}  // namespace
}  // namespace lp::inspect
