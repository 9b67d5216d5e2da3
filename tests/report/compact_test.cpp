// The compact case table (report/compact.hpp) keeps every number: writing records
// compact and reading them back gives the full records minus the prose it drops.

#include <gtest/gtest.h>

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "model/metrics_json.hpp"
#include "report/compact.hpp"
#include "report/report.hpp"
#include "util/error.hpp"
#include "util/files.hpp"

namespace lp::report {
namespace {

using nlohmann::json;

/// The full record as compact keeps it: no metrics prose, no grid, and floats that
/// are floats at float's shortest.
json without_prose(json j) {
  if (j["metrics"].is_object()) {
    j["metrics"].erase("summary");
    j["metrics"].erase("tolerance_why");
  }
  if (j["timing"].is_object()) {
    j["timing"].erase("grid");
    j["timing"].erase("bandwidth_gb_s");
  }
  return j;
}

void expect_same_numbers(const json& want, const json& got) {
  ASSERT_EQ(want.type(), got.type()) << want.dump() << " vs " << got.dump();
  if (want.is_object()) {
    for (const auto& [key, value] : want.items()) {
      ASSERT_TRUE(got.contains(key)) << key << " missing from " << got.dump();
      SCOPED_TRACE(key);
      expect_same_numbers(value, got[key]);
    }
    EXPECT_EQ(want.size(), got.size()) << want.dump() << " vs " << got.dump();
  } else if (want.is_array()) {
    ASSERT_EQ(want.size(), got.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
      expect_same_numbers(want[i], got[i]);
    }
  } else if (want.is_number_float()) {
    // Kept exactly, or at single precision where the value was a float.
    EXPECT_EQ(static_cast<float>(want.get<double>()), static_cast<float>(got.get<double>())) << want << " vs " << got;
  } else {
    EXPECT_EQ(want, got);
  }
}

std::size_t column(const json& table, const std::string& name) {
  for (std::size_t i = 0; i < table["columns"].size(); ++i) {
    if (table["columns"][i] == name) {
      return i;
    }
  }
  ADD_FAILURE() << "no column " << name;
  return 0;
}

std::vector<CaseRecord> fixture_cases() {
  const json report = json::parse(read_file(std::string(LP_SOURCE_DIR) + "/tests/report/fixtures/seed-h200-2.0.0.json"));
  std::vector<CaseRecord> cases;
  for (const json& c : report.at("cases")) {
    cases.push_back(CaseRecord::from_json(c));
  }
  return cases;
}

TEST(Compact, MeasuredRecordsComeBackWithEveryNumber) {
  const std::vector<CaseRecord> cases = fixture_cases();
  ASSERT_EQ(cases.size(), 8U);
  const json table = compact_cases(cases);
  EXPECT_TRUE(is_compact(table));
  const std::vector<CaseRecord> back = expand_cases(table);
  ASSERT_EQ(back.size(), cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(cases[i].id);
    expect_same_numbers(without_prose(cases[i].to_json()), without_prose(back[i].to_json()));
    // The LATENT reason of the seed cases is rebuilt word for word.
    EXPECT_EQ(cases[i].reason, back[i].reason);
  }
  // Two variants (block_n 128 and 32) under two Tritons: four groups, one tolerance.
  EXPECT_EQ(table["groups"].size(), 4U);
  EXPECT_EQ(table["tolerances"].size(), 1U);
  EXPECT_EQ(table["rows"][0][column(table, "id")], cases[0].id);
  // Every seed case ran 30 times and none was wrong: said once.
  EXPECT_EQ(table["constants"]["runs"], 30);
  EXPECT_EQ(table["constants"]["nan"], 0);
  EXPECT_EQ(table["columns"].size() + table["constants"].size(), 30U);  // huge since 4.1.0
}

TEST(Compact, TheTablesHeaderReadsItsRowsOneAtATime) {
  const std::vector<CaseRecord> cases = fixture_cases();
  json table = compact_cases(cases);
  const std::vector<CaseRecord> whole = expand_cases(table);
  json rows = std::move(table["rows"]);
  table.erase("rows");
  const CompactTable header(table);  // no rows: what read_document parses first
  ASSERT_EQ(rows.size(), whole.size());
  for (std::size_t r = 0; r < rows.size(); ++r) {
    EXPECT_EQ(header.row(rows[r], r).to_json(), whole[r].to_json()) << whole[r].id;
  }
  try {
    (void)header.row(json::array({1, 2}), 7);
    ADD_FAILURE() << "a short row was read";
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "/cases/rows/7");
  }
}

TEST(Compact, KeepsReasonsItCannotRebuildAndRecordsThatDidNotRun) {
  CaseRecord odd;
  odd.index = 7;
  odd.id = "0123456789ab";
  odd.axes = lp::AxisValues::from_json(nlohmann::json{{"op", "shrink"}, {"tokens", 64}, {"hidden", {4096, 1024}}, {"split_k", 4}});
  odd.verdict = Verdict::latent;
  odd.static_findings = 3;
  odd.runs = 2;
  odd.reason = "a reason written by hand";
  CaseRecord skipped;
  skipped.index = 8;
  skipped.id = "ba9876543210";
  skipped.axes = lp::AxisValues::from_json(nlohmann::json{{"op", "expand"}, {"tokens", 16}});
  skipped.verdict = Verdict::skipped;
  skipped.reason = "no kernel variant for block_k=24";
  const std::vector<CaseRecord> back = expand_cases(compact_cases({odd, skipped}));
  ASSERT_EQ(back.size(), 2U);
  EXPECT_EQ(back[0].reason, "a reason written by hand");
  EXPECT_EQ(back[0].axes, odd.axes);
  EXPECT_EQ(back[0].static_findings, 3);
  EXPECT_FALSE(back[0].variant.has_value());
  EXPECT_EQ(back[1].reason, skipped.reason);
  EXPECT_FALSE(back[1].metrics.has_value());
  EXPECT_FALSE(back[1].timing.has_value());
  EXPECT_FALSE(back[1].static_findings.has_value());
}

TEST(Compact, AnAmplifiedRecordComesBackWithItsAmplificationAndOthersKeepTheirForm) {
  std::vector<CaseRecord> cases = fixture_cases();
  const json plain_groups = compact_cases(cases)["group_columns"];
  EXPECT_EQ(std::count(plain_groups.begin(), plain_groups.end(), "amplification"), 0)
      << "a run without amplify writes the groups as before";
  CaseRecord amplified = cases.front();
  amplified.index = cases.size();
  amplified.id = "00000000a0a0";
  amplified.axes.set("amplify", 2);
  amplified.verdict = Verdict::fail;
  amplified.failed_runs = 30;
  amplified.metrics->nan = 13696;
  amplified.metrics->huge = 226892;
  amplified.reason = "under amplification (2 queued wgmma pairs): 30 of 30 runs wrong: ...";
  AmplificationRecord a;
  a.amplify = 2;
  a.sites = 2;
  a.pending_sites = 2;
  a.unamplified_findings = 8;
  amplified.amplification = a;
  cases.push_back(amplified);
  const json table = compact_cases(cases);
  EXPECT_EQ(table["group_columns"][3], "amplification");
  const std::vector<CaseRecord> back = expand_cases(table);
  ASSERT_EQ(back.size(), cases.size());
  ASSERT_TRUE(back.back().amplification.has_value());
  EXPECT_EQ(*back.back().amplification, a);
  EXPECT_EQ(back.back().axes.value("amplify"), 2);
  EXPECT_EQ(back.back().metrics->huge, 226892U);
  EXPECT_EQ(back.back().reason, amplified.reason);
  EXPECT_FALSE(back.front().amplification.has_value());
  EXPECT_FALSE(back.front().metrics->huge.has_value()) << "a 2.0.0 record has no huge count: null stays absent";
  // And the full record round-trips too.
  EXPECT_EQ(CaseRecord::from_json(amplified.to_json()).amplification, amplified.amplification);
  json broken = amplified.to_json();
  broken["amplification"]["pending_sites"] = 3;
  EXPECT_THROW((void)CaseRecord::from_json(broken), InputError);
}

TEST(Compact, EveryMetricHasAColumnOrIsProseAndAnUnknownOneIsRefused) {
  CaseRecord c = fixture_cases().front();
  c.metrics->first_bad = lp::BadElement{};
  c.metrics->unwritten = 5;
  c.metrics->huge = 0;
  c.metrics->tolerance_why = "bf16 output";
  const json metrics = *c.metrics;
  const auto columns = lp::metric_columns();
  for (const auto& [key, value] : metrics.items()) {
    const bool column = std::find(columns.begin(), columns.end(), key) != columns.end();
    const bool prose = key == "atol" || key == "rtol" || key == "tolerance_why" || key == "summary";
    EXPECT_TRUE(column || prose) << key << " has no column of a compact report";
  }
  EXPECT_EQ(metrics.size(), columns.size() + 4) << "every column is a key of the record";
  json record = c.to_json();
  record["metrics"]["new_metric"] = 1;
  try {
    (void)CaseRecord::from_json(record);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "/metrics/new_metric");
  }
}

TEST(Compact, MalformedTablesNameTheCell) {
  json table = compact_cases(fixture_cases());
  table["rows"][3][column(table, "verdict")] = "MAYBE";
  try {
    (void)expand_cases(table);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "/cases/rows/3/verdict");
    EXPECT_EQ(e.message(), "\"MAYBE\" is not a verdict");
  }
  json both = compact_cases(fixture_cases());
  both["constants"]["verdict"] = "PASS";
  EXPECT_THROW((void)expand_cases(both), InputError);
  json short_row = compact_cases(fixture_cases());
  short_row["rows"][0].erase(0);
  EXPECT_THROW((void)expand_cases(short_row), InputError);
  json bad_group = compact_cases(fixture_cases());
  bad_group["rows"][1][column(bad_group, "group")] = 99;
  try {
    (void)expand_cases(bad_group);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "/cases/rows/1/group");
  }
}

TEST(Compact, TheFileHasOneLinePerRow) {
  Report r;
  r.cases = fixture_cases();
  const std::string text = r.dump();
  const json j = json::parse(text);
  EXPECT_EQ(j["meta"]["detail"], "compact");
  EXPECT_EQ(j["cases"]["rows"].size(), 8U);
  for (const CaseRecord& c : r.cases) {
    EXPECT_NE(text.find(fmt::format("\n      [{},\"{}\",", c.index, c.id)), std::string::npos) << c.id;
  }
  r.detail = Detail::full;
  EXPECT_TRUE(json::parse(r.dump())["cases"].is_array());
}

// A full report is written a case at a time (dump_full_report): the same bytes as the
// whole tree's dump, with a reason that holds a newline and a quote, and with no case.
TEST(Compact, AFullReportWrittenACaseAtATimeIsTheTreesDump) {
  Report r;
  r.detail = Detail::full;
  std::vector<CaseRecord> cases = fixture_cases();
  cases[1].reason = "line one\nline \"two\"\n  indented";
  r.cases = cases;
  const std::string text = r.dump();
  EXPECT_EQ(text, r.to_json().dump(2) + "\n");
  EXPECT_NE(text.find("line one\\nline \\\"two\\\"\\n  indented"), std::string::npos);
  std::vector<std::string> pieces;
  r.dump([&](std::string_view piece) { pieces.emplace_back(piece); });
  EXPECT_GT(pieces.size(), r.cases.size());  // at least a piece per case, not one text
  r.cases = std::vector<CaseRecord>{};
  EXPECT_EQ(r.dump(), r.to_json().dump(2) + "\n");
  EXPECT_NE(r.dump().find("\"cases\": [],"), std::string::npos);
}

}  // namespace
}  // namespace lp::report
