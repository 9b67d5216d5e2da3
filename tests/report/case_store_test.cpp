// report::CaseStore keeps records packed (util/packed.hpp): every record comes back
// exactly, bit for bit where it holds doubles, and a compact report's shape costs a
// small fraction of a CaseRecord.

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/case_store.hpp"
#include "util/error.hpp"
#include "util/packed.hpp"

namespace lp::report {
namespace {

using nlohmann::json;

std::uint64_t bits(double d) { return std::bit_cast<std::uint64_t>(d); }

/// A record with every optional part present, and values at the edges of their types.
CaseRecord full_record() {
  CaseRecord c;
  c.index = 123456789;
  c.id = "0123456789ab";
  c.axes.set("op", "expand");
  c.axes.set("tokens", 4096);
  c.axes.set("hidden", json::array({4096, 4096}));
  c.axes.set("pdl", true);
  c.axes.set("offset", -7);
  c.axes.set("split_k", nullptr);
  c.variant = "expand-fp32-bn128-s2";
  c.verdict = Verdict::fail;
  c.reason = "3 of 30 runs wrong";
  c.runs = 30;
  c.failed_runs = 3;
  CompareMetrics& m = c.metrics.emplace();
  m.elements = std::numeric_limits<std::uint64_t>::max();
  m.untouched_elements = 5;
  m.nan = 17;
  m.inf = 1;
  m.huge = 300;
  m.unwritten = 0;
  m.untouched_rows_written = 2;
  m.mismatches = 1U << 20U;
  m.reference_nonfinite = 0;
  m.max_abs_dev = std::numeric_limits<double>::quiet_NaN();
  m.max_rel_dev = std::numeric_limits<double>::infinity();
  m.worst_dev_over_tolerance = 1e300;  // beyond float's range
  m.atol = 0.0156;                     // not a float's value
  m.rtol = 0.015625;                   // a float's value
  m.rel_floor = -0.0;
  m.tolerance_why = "fp32 input, K=16: atol = 2^-6";
  m.failing_tiles = 3;
  m.total_tiles = 32;
  BadElement& b = m.first_bad.emplace();
  b.index = 99;
  b.slice = 1;
  b.token = -1;
  b.column = 4096;
  b.expected = 0.4375;
  b.actual = std::numeric_limits<double>::denorm_min();
  b.expected_bits = 0x3ee0;
  b.actual_bits = 0xffffffffU;
  b.untouched_row = true;
  b.dtype = DType::bf16;
  CaseTiming& t = c.timing.emplace();
  t.kernel_ms = 0.007327999919652939;
  t.reference_ms = 1.25;
  t.bytes = 1ULL << 40U;
  t.grid = std::array<std::int64_t, 3>{128, 1, -1};
  c.static_findings = 8;
  c.attribution = "ptxas";
  c.device = 1023;
  AmplificationRecord& a = c.amplification.emplace();
  a.amplify = 2;
  a.sites = 4;
  a.pending_sites = 3;
  a.unamplified_findings = 0;
  a.serialised = "C7515";
  a.void_reason = "ptxas serialised the amplified wgmmas";
  return c;
}

void expect_same(const CaseRecord& want, const CaseRecord& got) {
  EXPECT_EQ(want.to_json().dump(), got.to_json().dump());
  EXPECT_EQ(want.reason, got.reason);
  ASSERT_EQ(want.metrics.has_value(), got.metrics.has_value());
  if (want.metrics) {
    EXPECT_EQ(bits(want.metrics->max_abs_dev), bits(got.metrics->max_abs_dev));
    EXPECT_EQ(bits(want.metrics->rel_floor), bits(got.metrics->rel_floor));
    EXPECT_EQ(want.metrics->untouched_elements, got.metrics->untouched_elements);  // not in to_json
    EXPECT_EQ(want.metrics->tolerance_why, got.metrics->tolerance_why);
    ASSERT_EQ(want.metrics->first_bad.has_value(), got.metrics->first_bad.has_value());
    if (want.metrics->first_bad) {
      EXPECT_EQ(want.metrics->first_bad->index, got.metrics->first_bad->index);
      EXPECT_EQ(want.metrics->first_bad->dtype, got.metrics->first_bad->dtype);
      EXPECT_EQ(bits(want.metrics->first_bad->actual), bits(got.metrics->first_bad->actual));
    }
  }
  ASSERT_EQ(want.timing.has_value(), got.timing.has_value());
  if (want.timing) {
    EXPECT_EQ(want.timing->grid, got.timing->grid);
  }
  EXPECT_EQ(want.axes, got.axes);
}

TEST(Packed, NumbersAndTextsComeBackAsWritten) {
  std::string bytes;
  ByteWriter out(bytes);
  const std::uint64_t counts[] = {0, 1, 127, 128, 300, 1ULL << 35U, std::numeric_limits<std::uint64_t>::max()};
  const std::int64_t signed_counts[] = {0, -1, 1, -64, 64, std::numeric_limits<std::int64_t>::min(),
                                        std::numeric_limits<std::int64_t>::max()};
  const double reals[] = {0.0, -0.0, 1.5, 0.1, 1e300, -1e-310, std::numeric_limits<double>::infinity(),
                          std::bit_cast<double>(0x7ff8000000000123ULL)};  // a NaN with a payload
  for (const std::uint64_t v : counts) {
    out.varint(v);
  }
  for (const std::int64_t v : signed_counts) {
    out.signed_varint(v);
  }
  for (const double v : reals) {
    out.real(v);
  }
  out.text("");
  out.text(std::string(300, 'x'));
  EXPECT_EQ(bytes.substr(0, 1), std::string(1, '\0'));  // 0 is one byte
  ByteReader in(bytes);
  for (const std::uint64_t v : counts) {
    EXPECT_EQ(in.varint(), v);
  }
  for (const std::int64_t v : signed_counts) {
    EXPECT_EQ(in.signed_varint(), v);
  }
  for (const double v : reals) {
    EXPECT_EQ(bits(in.real()), bits(v)) << v;
  }
  EXPECT_EQ(in.text(), "");
  EXPECT_EQ(in.text(), std::string(300, 'x'));
  EXPECT_TRUE(in.done());
  EXPECT_THROW(in.byte(), Error);  // past the end: an internal bug, said so
}

TEST(CaseStore, EveryPartOfARecordComesBackExactly) {
  CaseStore store;
  const CaseRecord full = full_record();
  CaseRecord bare;
  bare.index = 0;
  bare.id = "x";
  bare.verdict = Verdict::skipped;
  CaseRecord nan_free = full;
  nan_free.metrics->first_bad.reset();
  nan_free.metrics->huge.reset();
  nan_free.metrics->unwritten = 12;
  nan_free.timing->grid.reset();
  nan_free.timing->kernel_ms.reset();
  nan_free.amplification->unamplified_findings.reset();
  nan_free.amplification->serialised.clear();
  store.push_back(full);
  store.push_back(bare);
  store.push_back(nan_free);
  ASSERT_EQ(store.size(), 3U);
  expect_same(full, store[0]);
  expect_same(bare, store[1]);
  expect_same(nan_free, store[2]);
  EXPECT_FALSE(store[1].metrics.has_value());
  EXPECT_FALSE(store[1].variant.has_value());
  EXPECT_FALSE(store[2].metrics->huge.has_value());
  EXPECT_EQ(store[2].metrics->unwritten, 12U);
  // A copy reads the same, and set() replaces one record only.
  CaseStore copy = store;
  copy.set(1, full);
  expect_same(full, copy[1]);
  expect_same(bare, store[1]);
  expect_same(nan_free, copy[2]);
  EXPECT_THROW((void)store[3], Error);
  std::size_t n = 0;
  for (const CaseRecord& c : store) {
    EXPECT_EQ(c.id, store[n++].id);
  }
  EXPECT_EQ(n, 3U);
}

TEST(CaseStore, ACompactReportsShapeCostsAFewBytesPerCase) {
  // A compact group's axes, shared, and each case's shape and numbers of its own (the
  // H200 seed report's shape: scripts/bench/report_memory.sh).
  AxisValues group;
  for (const auto& [key, value] : {std::pair<const char*, json>{"op", "expand"}, {"dtype", "fp32"}, {"block_n", 128},
                                   {"num_stages", 2}, {"triton", "3.6.0"}, {"compiler", "prebuilt"}, {"pdl", false}}) {
    group.set(key, value);
  }
  group = group.shared();
  const CaseRecord pattern = full_record();
  CaseStore store;
  constexpr std::size_t k_cases = 20000;
  for (std::size_t i = 0; i < k_cases; ++i) {
    CaseRecord c = pattern;
    c.index = i;
    c.id = fmt::format("{:012x}", i);
    c.axes = group;
    c.axes.set("tokens", static_cast<std::int64_t>(i + 1));
    c.axes.set("rank", 16);
    c.axes.set("hidden", json::array({4096}));
    c.axes.set("num_loras", 4);
    // A clean case's numbers, as a sweep measures them.
    CompareMetrics& m = *c.metrics;
    m = CompareMetrics{};
    m.elements = 1U << 20U;
    m.total_tiles = 256;
    m.max_abs_dev = 0.001953125;
    m.max_rel_dev = static_cast<float>(0.0039);  // a float ratio (compact keeps single precision)
    m.worst_dev_over_tolerance = static_cast<float>(0.125);
    m.atol = 0.015625;
    m.rtol = 0.015625;
    c.timing->grid.reset();
    c.amplification.reset();
    c.reason = i % 2 == 0 ? "LATENT: 8 hazards" : "";
    store.push_back(c);
  }
  const CaseRecord last = store[k_cases - 1];
  EXPECT_EQ(last.axes.integer("tokens"), static_cast<std::int64_t>(k_cases));
  EXPECT_EQ(last.axes.text("triton"), "3.6.0");
  EXPECT_EQ(last.id, fmt::format("{:012x}", k_cases - 1));
  // sizeof(CaseRecord) alone is several hundred bytes; the packed record about 100.
  const double per_case = static_cast<double>(store.bytes()) / k_cases;
  EXPECT_LT(per_case, 128.0) << store.bytes();
  EXPECT_GT(sizeof(CaseRecord), 4 * 128U);
}

TEST(CaseStore, TextsBeyondTheSharedTableAreKeptInline) {
  CaseStore store;
  constexpr std::size_t k_texts = 70000;  // more than the table holds
  for (std::size_t i = 0; i < k_texts; ++i) {
    CaseRecord c;
    c.index = i;
    c.id = std::to_string(i);
    c.reason = fmt::format("reason {}", i);
    store.push_back(c);
  }
  for (const std::size_t i : {std::size_t{0}, std::size_t{65535}, std::size_t{65536}, k_texts - 1}) {
    EXPECT_EQ(store[i].reason, fmt::format("reason {}", i));
  }
}

}  // namespace
}  // namespace lp::report
