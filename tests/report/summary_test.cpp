#include <gtest/gtest.h>

#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/report.hpp"
#include "report/verdict.hpp"
#include "util/files.hpp"

namespace lp::report {
namespace {

CaseRecord record(std::size_t index, std::int64_t tokens, std::int64_t rank, Verdict verdict) {
  CaseRecord r;
  r.index = index;
  r.id = fmt::format("{:012x}", index);
  r.axes = lp::AxisValues::from_json(nlohmann::json{{"tokens", tokens}, {"rank", rank}});
  r.verdict = verdict;
  r.runs = 4;
  r.failed_runs = verdict == Verdict::fail ? 2 : 0;
  return r;
}

TEST(Summary, CleanSweepExitsZero) {
  const std::vector<CaseRecord> cases = {record(0, 16, 64, Verdict::pass), record(1, 32, 64, Verdict::skipped)};
  const Summary s = summarize(cases, default_fail_on(), true);
  EXPECT_EQ(s.exit_code, 0);
  EXPECT_EQ(s.outcome, Outcome::clean);
  EXPECT_FALSE(s.first_failure.has_value());
  EXPECT_EQ(s.counts.at(Verdict::pass), 1U);
  EXPECT_EQ(s.counts.at(Verdict::skipped), 1U);
}

TEST(Summary, FirstFailureIsPlanOrderMinimalIsFewestTokensThenRank) {
  const std::vector<CaseRecord> cases = {
      record(0, 256, 64, Verdict::pass), record(1, 1024, 16, Verdict::fail), record(2, 384, 128, Verdict::fail),
      record(3, 384, 64, Verdict::fail), record(4, 8192, 16, Verdict::fail), record(5, 16, 8, Verdict::fault)};
  const Summary s = summarize(cases, default_fail_on(), true);
  EXPECT_EQ(s.exit_code, 1);
  EXPECT_EQ(s.outcome, Outcome::failures);
  EXPECT_EQ(s.first_failure, 1U);
  EXPECT_EQ(s.minimal_failure, 3U);  // 384 tokens ties with case 2; rank 64 < 128; a fault is weaker evidence
}

// Issue 53: the minimal failure was the fewest tokens whatever the verdict, so a
// compile_error at 16 tokens hid a FAIL at 384. Wrong numbers come first, a case that
// was not built last, and a compile_error over nothing.
TEST(Summary, MinimalFailurePrefersWrongNumbersOverACompileError) {
  const std::vector<CaseRecord> mixed = {record(0, 16, 8, Verdict::compile_error), record(1, 2048, 64, Verdict::fault),
                                         record(2, 384, 64, Verdict::fail), record(3, 16, 64, Verdict::timeout)};
  EXPECT_EQ(summarize(mixed, default_fail_on(), true).minimal_failure, 2U);
  const std::vector<CaseRecord> ran_and_broke = {record(0, 16, 8, Verdict::compile_error),
                                                 record(1, 2048, 64, Verdict::fault)};
  EXPECT_EQ(summarize(ran_and_broke, default_fail_on(), true).minimal_failure, 1U);
  const std::vector<CaseRecord> only_unbuilt = {record(0, 256, 8, Verdict::pass),
                                                record(1, 2048, 64, Verdict::compile_error)};
  EXPECT_EQ(summarize(only_unbuilt, default_fail_on(), true).minimal_failure, 1U);
}

TEST(Summary, LatentFailsOnlyWhenAsked) {
  const std::vector<CaseRecord> cases = {record(0, 16, 64, Verdict::pass), record(1, 256, 64, Verdict::latent)};
  const Summary lenient = summarize(cases, default_fail_on(), true);
  EXPECT_EQ(lenient.exit_code, 0);
  EXPECT_EQ(lenient.first_latent, 1U);
  std::set<Verdict> strict = default_fail_on();
  strict.insert(Verdict::latent);
  const Summary gate = summarize(cases, strict, true);
  EXPECT_EQ(gate.exit_code, 1);
  EXPECT_EQ(gate.first_failure, 1U);
}

TEST(Summary, InvalidControlsExitThreeWhateverTheCases) {
  const std::vector<CaseRecord> cases = {record(0, 16, 64, Verdict::fail)};
  const Summary s = summarize(cases, default_fail_on(), false);
  EXPECT_EQ(s.exit_code, 3);
  EXPECT_EQ(s.outcome, Outcome::invalid_controls);
}

TEST(Summary, IncompatibleIsNeverAFailureButAllIncompatibleExitsThree) {
  // Triton 3.9.0's PTX under ptxas 13.0: a pairing no stack has. Not the first failure.
  const std::vector<CaseRecord> mixed = {record(0, 16, 64, Verdict::incompatible), record(1, 32, 64, Verdict::pass),
                                         record(2, 64, 64, Verdict::latent)};
  Summary s = summarize(mixed, default_fail_on(), true);
  EXPECT_EQ(s.exit_code, 0);
  EXPECT_EQ(s.outcome, Outcome::clean);
  EXPECT_FALSE(s.first_failure.has_value());
  EXPECT_EQ(s.counts.at(Verdict::incompatible), 1U);
  EXPECT_EQ(counts_text(s.counts), "1 PASS, 1 LATENT, 1 incompatible");
  // Every case incompatible: the run judged nothing, and a gate must not go green on it.
  const std::vector<CaseRecord> none = {record(0, 16, 64, Verdict::incompatible),
                                        record(1, 32, 64, Verdict::incompatible)};
  s = summarize(none, default_fail_on(), true);
  EXPECT_EQ(s.exit_code, 3);
  EXPECT_EQ(s.outcome, Outcome::nothing_compatible);
  Report r;
  r.cases = none;
  EXPECT_EQ(r.to_json()["summary"]["outcome"], "nothing_compatible");
  // A skipped case among them is not "something compatible" either way: it was not judged, but it
  // compiled or never needed to; the run is then clean, as any run that skipped what it could not run.
  EXPECT_EQ(summarize({record(0, 16, 64, Verdict::incompatible), record(1, 16, 64, Verdict::skipped)},
                      default_fail_on(), true)
                .exit_code,
            0);
  // Invalid controls still win.
  EXPECT_EQ(summarize(none, default_fail_on(), false).outcome, Outcome::invalid_controls);
}

TEST(CaseRecord, RuleOfThreeBoundOnlyWithoutFailures) {
  CaseRecord clean = record(0, 16, 64, Verdict::latent);
  clean.runs = 100;
  EXPECT_DOUBLE_EQ(clean.to_json()["failure_rate_upper_bound"].get<double>(), 0.03);
  EXPECT_DOUBLE_EQ(clean.to_json()["failure_rate"].get<double>(), 0.0);
  const CaseRecord failing = record(1, 16, 64, Verdict::fail);
  EXPECT_TRUE(failing.to_json()["failure_rate_upper_bound"].is_null());
  EXPECT_DOUBLE_EQ(failing.to_json()["failure_rate"].get<double>(), 0.5);
}

TEST(Verdict, SpellingsRoundTrip) {
  for (Verdict v : {Verdict::pass, Verdict::fail, Verdict::latent, Verdict::incomplete, Verdict::fault, Verdict::timeout,
                    Verdict::compile_error, Verdict::skipped, Verdict::incompatible}) {
    EXPECT_EQ(parse_verdict(to_string(v)), v);
  }
  EXPECT_EQ(verdict_letter(Verdict::incompatible), 'x');
  EXPECT_EQ(parse_verdict("latent"), Verdict::latent);
  EXPECT_FALSE(parse_verdict("maybe").has_value());
}

TEST(Verdict, AHazardPtxasMadeNamesThePtxasThatFixesIt) {
  // Triton 3.8/3.9's PTX is clean; ptxas up to 13.2 folds its copies away, 13.3 keeps them.
  EXPECT_EQ(k_fixing_ptxas, (Release{13, 3, 0}));
  EXPECT_EQ(fixing_ptxas_version(), "13.3");
  EXPECT_EQ(ptxas_fix_text(), "ptxas >= 13.3 fixes it (the PTX is clean, ptxas up to 13.2 re-creates the hazard)");
  EXPECT_EQ(attribution_note("ptxas"), "; ptxas made the hazard: " + ptxas_fix_text());
  // The PTX's own hazard: no ptxas version is named, none fixes it.
  EXPECT_EQ(attribution_note("ptx").find("13."), std::string::npos);
  EXPECT_EQ(attribution_note("none"), "");
}

TEST(Report, WritesAtomicallyAndCarriesTheSchemaVersion) {
  Report r;
  r.cases = {record(0, 16, 64, Verdict::fail)};
  const auto path = (std::filesystem::temp_directory_path() / "lp-report-test.json").string();
  r.write(path);
  const nlohmann::json j = nlohmann::json::parse(read_file(path));
  EXPECT_EQ(j["schema_version"], schema_version());
  EXPECT_EQ(j["summary"]["exit_code"], 1);
  EXPECT_EQ(j["summary"]["first_failure"]["id"], "000000000000");
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace lp::report
