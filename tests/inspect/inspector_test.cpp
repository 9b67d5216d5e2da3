// lp_inspect's Inspector on real cubins and PTX of our expand kernel: results,
// the on-disk cache (a hit gives the same JSON), one compile and one nvdisasm per
// distinct input, errors recorded per item, order kept under parallelism.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <tuple>

#include <nlohmann/json.hpp>

#include "inspect/cache.hpp"
#include "inspect/inspector.hpp"
#include "kernels/kernel_sets.hpp"
#include "support/scoped_env.hpp"
#include "test_support.hpp"
#include "util/files.hpp"
#include "util/sha256.hpp"

namespace lp::inspect {
namespace {

namespace fs = std::filesystem;
using test_support::ScopedEnv;
using test::fixture;
using test::k_clean_id;
using test::k_hazard_id;
using test::cubin_item;
using test::forge_compile;
using test::hazard_ptx_item;
using test::options;

/// The report without its wall-clock figures, which differ between two analyses.
nlohmann::json without_timings(nlohmann::json sass) {
  sass.erase("analysis_ms");
  sass.erase("disassemble_ms");
  return sass;
}

TEST(Inspector, FindsTheHazardAndNotInTheSerialisedLoop) {
  LP_REQUIRE_NVDISASM(tool);
  const Inspector inspector(options(*tool, 2));
  const std::vector<InspectResult> r = inspector.inspect_all({cubin_item(k_hazard_id), cubin_item(k_clean_id)});
  ASSERT_EQ(r.size(), 2U);
  EXPECT_EQ(r[0].name, k_hazard_id);
  EXPECT_EQ(r[0].status, StaticOutcome::hazard) << r[0].error;
  EXPECT_GT(r[0].finding_count, 0U);
  EXPECT_EQ(r[0].sass->finding_count(), r[0].finding_count);
  EXPECT_EQ(r[0].sass->cubin_sha256, sha256_hex(fixture(k_hazard_id + ".cubin")));
  EXPECT_FALSE(r[0].compile.has_value());
  EXPECT_FALSE(r[0].cached);
  EXPECT_EQ(r[1].name, k_clean_id);
  EXPECT_EQ(r[1].status, StaticOutcome::clean) << r[1].error;
  EXPECT_EQ(r[1].finding_count, 0U);
  const nlohmann::json j = r[0].to_json();
  EXPECT_EQ(j.at("status"), "hazard");
  EXPECT_EQ(j.at("variant"), k_hazard_id);
  EXPECT_TRUE(j.at("error").is_null());
}

TEST(Inspector, CacheHitReturnsTheSameJson) {
  LP_REQUIRE_NVDISASM(tool);
  const TempDir cache("lp-inspect-cache-");
  const InspectItem item = cubin_item(k_hazard_id);
  InspectResult cold;
  {
    const Inspector inspector(options(*tool, 1, cache.path()));
    cold = inspector.inspect(item);
    EXPECT_FALSE(cold.cached);
    EXPECT_EQ(inspector.cache_stats().sass_misses, 1U);
  }
  const std::string key =
      sass_cache_key(sha256_hex(item.cubin), tool->sha256, analysis_fingerprint(sass::AnalysisOptions{}));
  EXPECT_TRUE(fs::is_regular_file(ResultCache(cache.path()).path_of("sass", key)));

  const Inspector again(options(*tool, 1, cache.path()));
  const InspectResult hit = again.inspect(item);
  EXPECT_TRUE(hit.cached);
  EXPECT_EQ(again.cache_stats().sass_hits, 1U);
  EXPECT_EQ(hit.status, cold.status);
  EXPECT_EQ(hit.finding_count, cold.finding_count);
  EXPECT_EQ(nlohmann::json(*hit.sass), nlohmann::json(*cold.sass));
  EXPECT_EQ(nlohmann::json(*hit.sass).dump(), nlohmann::json(*cold.sass).dump());  // byte for byte, timings included

  // A fresh analysis without the cache agrees with both except for wall-clock figures.
  const Inspector uncached(options(*tool));
  EXPECT_EQ(without_timings(*uncached.inspect(item).sass), without_timings(*hit.sass));
}

TEST(Inspector, CacheKeyFollowsTheChecksAndSurvivesACorruptEntry) {
  LP_REQUIRE_NVDISASM(tool);
  const TempDir cache("lp-inspect-cache-");
  const InspectItem item = cubin_item(k_hazard_id);
  const Inspector all(options(*tool, 1, cache.path()));
  (void)all.inspect(item);
  // Another check selection is another analysis: a miss, not the report of all checks.
  const Inspector only_a(options(*tool, 1, cache.path(), {"wgmma-a-reg-reuse"}));
  EXPECT_FALSE(only_a.inspect(item).cached);
  EXPECT_NE(only_a.fingerprint(), all.fingerprint());

  const std::string path = ResultCache(cache.path()).path_of(
      "sass", sass_cache_key(sha256_hex(item.cubin), tool->sha256, all.fingerprint()));
  std::ofstream(path, std::ios::trunc) << "{ not json";
  const Inspector after(options(*tool, 1, cache.path()));
  const InspectResult r = after.inspect(item);
  EXPECT_FALSE(r.cached);
  EXPECT_EQ(r.status, StaticOutcome::hazard);
  EXPECT_EQ(after.cache_stats().rejected, 1U);  // there, not whole: a miss, rewritten
  EXPECT_TRUE(ResultCache(cache.path())
                  .load_report(sass_cache_key(sha256_hex(item.cubin), tool->sha256, all.fingerprint()),
                               sha256_hex(item.cubin))
                  .payload.has_value());
}

TEST(Inspector, PtxIsCompiledOnceAndACachedCompileSkipsPtxas) {
  LP_REQUIRE_NVDISASM(tool);
  LP_REQUIRE_SOME_PTXAS(ptxas);
  const TempDir cache("lp-inspect-cache-");
  const InspectItem a = hazard_ptx_item(*ptxas);
  InspectItem b = a;
  b.compiler = "ptxas=same-binary-other-label";
  {
    const Inspector inspector(options(*tool, 2, cache.path()));
    const std::vector<InspectResult> r = inspector.inspect_all({a, b});
    ASSERT_EQ(r.size(), 2U);
    EXPECT_EQ(r[0].status, StaticOutcome::hazard) << r[0].error;
    EXPECT_EQ(r[1].status, StaticOutcome::hazard) << r[1].error;
    EXPECT_EQ(r[1].compiler, "ptxas=same-binary-other-label");
    EXPECT_EQ(inspector.cache_stats().compile_misses, 1U);  // one ptxas run for both items
    EXPECT_EQ(inspector.cache_stats().sass_misses, 1U);
    ASSERT_TRUE(r[0].compile && r[0].compile->compiled);
    EXPECT_FALSE(r[0].compile->cached);
    EXPECT_EQ(r[0].compile->ptxas.sha256, ptxas->sha256);
    EXPECT_EQ(r[0].compile->compiled->cubin_sha256, r[0].sass->cubin_sha256);
    EXPECT_NE(r[0].compile->compiled->log.find("registers"), std::string::npos);
  }
  // By default the cache is not trusted with what the PTX compiles to: ptxas runs
  // again, and the report is the cached one of the cubin it really made.
  {
    const Inspector verified(options(*tool, 1, cache.path()));
    const InspectResult hit = verified.inspect(a);
    EXPECT_TRUE(hit.cached);
    EXPECT_FALSE(hit.compile->cached);
    EXPECT_EQ(verified.cache_stats().compile_hits, 0U);
    EXPECT_EQ(hit.status, StaticOutcome::hazard);
  }
  InspectorOptions trusting = options(*tool, 1, cache.path());
  trusting.verify_compile_hits = false;  // inspect --trust-cache
  const Inspector again(trusting);
  const InspectResult hit = again.inspect(a);
  EXPECT_TRUE(hit.cached);
  EXPECT_TRUE(hit.compile->cached);
  EXPECT_EQ(again.cache_stats().compile_hits, 1U);
  EXPECT_EQ(again.cache_stats().compile_misses, 0U);
  EXPECT_EQ(hit.status, StaticOutcome::hazard);
}

// Issue 53: a forged compile record under --trust-cache turned a hazardous PTX clean,
// and --verify-cache did not run that ptxas again. Now it does, and says so.
TEST(Inspector, VerifyCacheRunsTheTrustedPtxasAgain) {
  LP_REQUIRE_NVDISASM(tool);
  LP_REQUIRE_SOME_PTXAS(ptxas);
  const TempDir cache("lp-inspect-cache-");
  const InspectItem a = hazard_ptx_item(*ptxas);
  // The clean cubin's report is in the cache, and the hazardous PTX's compile record is
  // rewritten to name that cubin: what someone with write access to the cache can do.
  (void)Inspector(options(*tool, 1, cache.path())).inspect_all({a, cubin_item(k_clean_id)});
  const std::string clean_sha = sha256_hex(fixture(k_clean_id + ".cubin"));
  ASSERT_FALSE(forge_compile(cache.path(), a, clean_sha));
  InspectorOptions trusting = options(*tool, 1, cache.path());
  trusting.verify_compile_hits = false;  // inspect --trust-cache: the forgery is believed
  EXPECT_EQ(Inspector(trusting).inspect(a).status, StaticOutcome::clean);
  trusting.verify_sample = 1;  // --verify-cache 1: ptxas runs again, the fresh cubin is used
  const Inspector checked(trusting);
  const InspectResult r = checked.inspect(a);
  EXPECT_EQ(r.status, StaticOutcome::hazard);
  EXPECT_EQ(checked.cache_stats().verified, 1U);
  EXPECT_EQ(checked.cache_stats().differences, 1U);
  EXPECT_NE(checked.cache_stats().first_difference.find("the cache says its PTX compiles to cubin sha256 " +
                                                        clean_sha.substr(0, 12) + ", ptxas made "),
            std::string::npos)
      << checked.cache_stats().first_difference;
}

/// The sass/ entry of the hazardous fixture cubin, as JSON, and where it lies.
struct Entry {
  std::string path;
  nlohmann::json json;
};

Entry hazard_entry(const sass::Nvdisasm& tool, const std::string& root) {
  const Inspector first(options(tool, 1, root));
  (void)first.inspect(cubin_item(k_hazard_id));
  Entry e;
  e.path = ResultCache(root).path_of(
      "sass", sass_cache_key(sha256_hex(fixture(k_hazard_id + ".cubin")), tool.sha256, first.fingerprint()));
  e.json = nlohmann::json::parse(read_file(e.path));
  return e;
}

void write_entry(const Entry& e, const std::string& text) { std::ofstream(e.path, std::ios::trunc) << text; }

// issue 29, row 6: an entry edited to kernels=[], finding_count=0 made a hazardous
// cubin report clean (exit 0 instead of 1). Every edit below is now a rejected
// entry: a miss, analysed again, rewritten.
TEST(Cache, AnEditedEntryIsAMissNotAnAuthority) {
  LP_REQUIRE_NVDISASM(tool);
  const TempDir cache("lp-inspect-cache-");
  const Entry original = hazard_entry(*tool, cache.path());
  ASSERT_GT(original.json.at("payload").at("finding_count").get<int>(), 0);
  std::vector<std::pair<std::string, std::string>> edits;
  {
    nlohmann::json e = original.json;  // the issue's edit, payload hash left alone
    e["payload"]["kernels"] = nlohmann::json::array();
    e["payload"]["finding_count"] = 0;
    edits.emplace_back("cleared, old hash", e.dump());
  }
  {
    nlohmann::json e = original.json;  // the count alone, hash recomputed: the typed reader sees it
    e["payload"]["finding_count"] = 0;
    e["payload_sha256"] = sha256_hex(e["payload"].dump());
    edits.emplace_back("count disagrees with findings", e.dump());
  }
  {
    nlohmann::json e = original.json;
    e["payload"]["kernels"] = "none";  // a wrong type (exit 4 before)
    e["payload_sha256"] = sha256_hex(e["payload"].dump());
    edits.emplace_back("wrong type", e.dump());
  }
  {
    nlohmann::json e = original.json;
    e["payload"]["extra"] = true;
    e["payload_sha256"] = sha256_hex(e["payload"].dump());
    edits.emplace_back("extra key", e.dump());
  }
  // Values of the right JSON type that are no address or register (std::invalid_argument
  // escaped the reader before: exit 4, not a miss).
  for (const auto& [what, path, value] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"address not hex", "/address", "0xZZ"},
           {"address without 0x", "/address", "1234"},
           {"wgmma address past 64 bits", "/wgmma/address", "0x1ffffffffffffffff"},
           {"register not a number", "/registers/0", "Rx"},
           {"register without its number", "/registers/0", "R"},
           {"register too large", "/registers/0", "R9999"}}) {
    nlohmann::json e = original.json;
    nlohmann::json& finding = e["payload"]["kernels"][0]["findings"][0];
    finding[nlohmann::json::json_pointer(path)] = value;
    e["payload_sha256"] = sha256_hex(e["payload"].dump());
    edits.emplace_back(what, e.dump());
  }
  edits.emplace_back("bare payload (format 1)", original.json.at("payload").dump());
  edits.emplace_back("nested 100000 deep (SIGSEGV before)", std::string(100000, '[') + std::string(100000, ']'));
  edits.emplace_back("not an object", "[1, 2]");
  for (const auto& [what, text] : edits) {
    write_entry(original, text);
    const Inspector after(options(*tool, 1, cache.path()));
    const InspectResult r = after.inspect(cubin_item(k_hazard_id));
    EXPECT_FALSE(r.cached) << what;
    EXPECT_EQ(r.status, StaticOutcome::hazard) << what;
    EXPECT_EQ(after.cache_stats().rejected, 1U) << what;
    // Rewritten whole: the next run hits it.
    const Inspector next(options(*tool, 1, cache.path()));
    EXPECT_TRUE(next.inspect(cubin_item(k_hazard_id)).cached) << what;
  }
}

// An entry forged whole (envelope, hashes and shape right, findings removed) passes
// every check a cache can make of itself; re-analysis (--verify-cache) catches it.
TEST(Cache, VerifyCacheCatchesAForgedButWholeEntry) {
  LP_REQUIRE_NVDISASM(tool);
  const TempDir cache("lp-inspect-cache-");
  const Entry original = hazard_entry(*tool, cache.path());
  nlohmann::json forged = original.json;
  for (nlohmann::json& k : forged["payload"]["kernels"]) {
    k["findings"] = nlohmann::json::array();
  }
  forged["payload"]["finding_count"] = 0;
  forged["payload_sha256"] = sha256_hex(forged["payload"].dump());
  write_entry(original, forged.dump());
  {
    const Inspector trusting(options(*tool, 1, cache.path()));
    const InspectResult r = trusting.inspect(cubin_item(k_hazard_id));
    EXPECT_TRUE(r.cached);
    EXPECT_EQ(r.status, StaticOutcome::clean);  // why the folder must be writable only by you
  }
  InspectorOptions o = options(*tool, 1, cache.path());
  o.verify_sample = 16;
  const Inspector verifying(o);
  const InspectResult r = verifying.inspect(cubin_item(k_hazard_id));
  EXPECT_FALSE(r.cached);
  EXPECT_EQ(r.status, StaticOutcome::hazard);  // the fresh analysis is what is used
  EXPECT_EQ(verifying.cache_stats().verified, 1U);
  EXPECT_EQ(verifying.cache_stats().differences, 1U);
  EXPECT_NE(verifying.cache_stats().first_difference.find("the cache says 0 finding(s)"), std::string::npos)
      << verifying.cache_stats().first_difference;
}

TEST(Inspector, ErrorsAreRecordedPerItemAndOrderIsKept) {
  LP_REQUIRE_NVDISASM(tool);
  const Inspector inspector(options(*tool, 3));
  std::vector<InspectItem> items = {cubin_item(k_clean_id),
                                    {"junk", std::nullopt, "file", "not an ELF file", {}, nullptr, "", {}, {}},
                                    cubin_item(k_hazard_id), cubin_item(k_clean_id, "again")};
  std::size_t calls = 0;
  const std::vector<InspectResult> r = inspector.inspect_all(items);
  ASSERT_EQ(r.size(), 4U);
  for (std::size_t i = 0; i < items.size(); ++i) {
    EXPECT_EQ(r[i].name, items[i].name);
    EXPECT_EQ(r[i].compiler, items[i].compiler);
    calls += r[i].ms > 0 ? 1 : 0;
  }
  EXPECT_EQ(r[1].status, StaticOutcome::error);
  EXPECT_EQ(r[1].error, "junk: not a cubin (no ELF header)");
  EXPECT_EQ(r[1].sass, nullptr);
  EXPECT_EQ(r[0].status, StaticOutcome::clean);
  EXPECT_EQ(r[2].status, StaticOutcome::hazard);
  EXPECT_EQ(r[3].sass, r[0].sass);  // the same bytes are analysed once: one report, shared
  EXPECT_EQ(calls, 3U);
}

TEST(Inspector, ACubinWhosePtxHasNoWgmmaIsCleanWithoutNvdisasm) {
  // A fake nvdisasm that fails: the skipped item never runs it, the full one does.
  sass::Nvdisasm broken;
  broken.path = "/bin/false";
  broken.version = "none";
  broken.sha256 = "0";
  const auto no_wgmma = std::make_shared<const std::string>(".version 8.7\n.target sm_90a\n// mma.sync only\n");
  InspectItem item{k_hazard_id, k_hazard_id, "prebuilt", fixture(k_hazard_id + ".cubin"), std::nullopt, no_wgmma, "",
                   {}, {}};
  const InspectResult skipped = Inspector(options(broken)).inspect_all({item}).front();
  EXPECT_EQ(skipped.status, StaticOutcome::clean);
  EXPECT_EQ(skipped.finding_count, 0U);
  EXPECT_EQ(skipped.sass, nullptr);
  EXPECT_EQ(skipped.skipped,
            "the PTX has no wgmma.mma_async and no griddepcontrol.wait, so the SASS has nothing any check looks at");
  EXPECT_EQ(skipped.to_json()["skipped"], skipped.skipped);
  InspectorOptions full = options(broken);
  full.skip_without_wgmma = false;
  const InspectResult analysed = Inspector(full).inspect_all({item}).front();
  EXPECT_EQ(analysed.status, StaticOutcome::error) << "the broken nvdisasm must have run";
  EXPECT_TRUE(analysed.skipped.empty());
  // A PTX that mentions wgmma.mma_async (even in a comment) is analysed: the safe side.
  item.source_ptx = std::make_shared<const std::string>("// wgmma.mma_async\n");
  EXPECT_EQ(Inspector(options(broken)).inspect_all({item}).front().status, StaticOutcome::error);
}

TEST(Inspector, SkippingIsSoundOverEveryEmbeddedSet) {
  // Every prebuilt cubin whose PTX has neither wgmma.mma_async nor griddepcontrol.wait,
  // disassembled and analysed in full with its produced parameters: none has a finding of
  // either kind, so the skip changes no answer (about 400 cubins, about a minute).
  LP_REQUIRE_NVDISASM(tool);
  const kernels::KernelSets sets = kernels::KernelSets::load();
  std::vector<InspectItem> items;
  for (const kernels::KernelSet& set : sets.all()) {
    for (const kernels::Variant& v : set.variants()) {
      if (!v.ok()) {
        continue;
      }
      auto ptx = std::make_shared<const std::string>(set.contents(*v.ptx));
      if (ptx->find("wgmma.mma_async") == std::string::npos && ptx->find("griddepcontrol.wait") == std::string::npos) {
        items.push_back({v.id, v.id, "prebuilt", set.contents(*v.cubin), std::nullopt, std::move(ptx), set.triton(),
                         v.produced_ordinals(), {}});
      }
    }
  }
  ASSERT_GE(items.size(), 300U);  // shrinks and the block_m 16/32 expands of four sets
  InspectorOptions full = options(*tool, 0);
  full.skip_without_wgmma = false;
  std::size_t analysed = 0;
  for (const InspectResult& r : Inspector(full).inspect_all(items)) {
    EXPECT_EQ(r.status, StaticOutcome::clean) << r.triton << " " << r.name << ": " << r.error;
    EXPECT_EQ(r.finding_count, 0U) << r.triton << " " << r.name;
    EXPECT_EQ(r.early_read_count, 0U) << r.triton << " " << r.name;
    analysed += r.sass ? 1 : 0;
  }
  EXPECT_EQ(analysed, items.size());
  const InspectResult skipped = Inspector(options(*tool)).inspect_all({items.front()}).front();
  EXPECT_FALSE(skipped.skipped.empty());
}

TEST(Inspector, UnknownCheckIsAUsageError) {
  sass::Nvdisasm unused;
  EXPECT_THROW(Inspector(options(unused, 1, std::nullopt, {"no-such-check"})), UsageError);
}

TEST(Cache, DefaultRootFollowsXdg) {
  const ScopedEnv home("HOME", "/home/someone");
  {
    const ScopedEnv xdg("XDG_CACHE_HOME", "/var/tmp/xdg");
    EXPECT_EQ(default_cache_root(), "/var/tmp/xdg/loraprobe");
  }
  // The XDG spec: a relative XDG_CACHE_HOME is invalid and ignored.
  const ScopedEnv xdg("XDG_CACHE_HOME", "relative/ignored");
  EXPECT_EQ(default_cache_root(), "/home/someone/.cache/loraprobe");
}

TEST(Cache, StoreFailureIsReportedNotThrown) {
  const TempDir dir("lp-inspect-cache-");
  const std::string blocker = dir.write("file", "x");
  const ResultCache cache(blocker);  // a file where the root folder should be
  const std::optional<std::string> failure = cache.store_report("ab12", sass::CubinReport{});
  ASSERT_TRUE(failure.has_value());
  EXPECT_NE(failure->find("cannot create"), std::string::npos) << *failure;
  EXPECT_FALSE(cache.load_report("ab12", "").payload.has_value());
}

}  // namespace
}  // namespace lp::inspect
