// The tolerance table, pinned, and the model behind it: two correct fp32
// implementations summing in different orders must pass with margin.

#include "families/device.hpp"
#include "support/print_name.hpp"
#include "model/tolerance.hpp"
#include "families/family.hpp"

#include <gtest/gtest.h>

#include <ostream>
#include <utility>

#include <fmt/format.h>

#include "util/error.hpp"

#include <cmath>

#include "host_model.hpp"
#include "test_problems.hpp"
#include "verify/case_buffers.hpp"
#include "verify/compare.hpp"

namespace lp {
namespace {

struct Pinned {
  Op op;
  DType out;
  std::int64_t k;
  bool add_inputs;
  double atol;
  double rtol;
};

// The same numbers as the table in model/tolerance.hpp.
constexpr Pinned k_table[] = {
    {Op::expand, DType::bf16, 16, false, 3.051758e-06, 1.562500e-02},
    {Op::expand, DType::bf16, 16, true, 1.982430e-02, 1.562500e-02},
    {Op::expand, DType::bf16, 64, false, 2.441406e-05, 1.562500e-02},
    {Op::expand, DType::bf16, 64, true, 3.966691e-02, 1.562500e-02},
    {Op::expand, DType::bf16, 256, false, 1.953125e-04, 1.562500e-02},
    {Op::expand, DType::bf16, 256, true, 7.948031e-02, 1.562500e-02},
    {Op::expand, DType::bf16, 1024, false, 1.562500e-03, 1.562500e-02},
    {Op::expand, DType::bf16, 1024, true, 1.601325e-01, 1.562500e-02},
    {Op::expand, DType::f16, 16, false, 3.051758e-06, 1.953125e-03},
    {Op::expand, DType::f16, 16, true, 2.480708e-03, 1.953125e-03},
    {Op::expand, DType::f16, 64, false, 2.441406e-05, 1.953125e-03},
    {Op::expand, DType::f16, 64, true, 4.979727e-03, 1.953125e-03},
    {Op::expand, DType::f16, 256, false, 1.953125e-04, 1.953125e-03},
    {Op::expand, DType::f16, 256, true, 1.010594e-02, 1.953125e-03},
    {Op::expand, DType::f16, 1024, false, 1.562500e-03, 1.953125e-03},
    {Op::expand, DType::f16, 1024, true, 2.138375e-02, 1.953125e-03},
    {Op::shrink, DType::f32, 1024, false, 1.562500e-03, 2.384186e-07},
    {Op::shrink, DType::f32, 4096, false, 1.250000e-02, 2.384186e-07},
    {Op::shrink, DType::f32, 16384, false, 1.000000e-01, 2.384186e-07},
    {Op::lora_linear, DType::bf16, 16, false, 3.174497e-02, 1.562500e-02},
    {Op::lora_linear, DType::bf16, 64, false, 3.196177e-02, 1.562500e-02},
    {Op::lora_linear, DType::bf16, 256, false, 3.369613e-02, 1.562500e-02},
    {Op::lora_linear, DType::f16, 16, false, 3.995221e-03, 1.953125e-03},
    {Op::lora_linear, DType::f16, 64, false, 4.212016e-03, 1.953125e-03},
    {Op::lora_linear, DType::f16, 256, false, 5.946375e-03, 1.953125e-03},
};

TEST(ToleranceTable, MatchesTheDocumentedNumbers) {
  const std::vector<ToleranceRow> rows = tolerance_table();
  ASSERT_EQ(rows.size(), std::size(k_table));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const ToleranceRow& row = rows[i];
    const Pinned& pin = k_table[i];
    SCOPED_TRACE(row.tolerance.describe());
    EXPECT_EQ(row.op, pin.op);
    EXPECT_EQ(row.output, pin.out);
    EXPECT_EQ(row.k, pin.k);
    EXPECT_EQ(row.add_inputs, pin.add_inputs);
    EXPECT_NEAR(row.tolerance.atol, pin.atol, pin.atol * 1e-3);
    EXPECT_NEAR(row.tolerance.rtol, pin.rtol, pin.rtol * 1e-3);
  }
}

TEST(Tolerance, OutputRoundingGivesRtolOfTwoUlpsRelative) {
  Problem p;
  p.op = Op::expand;
  p.num_tokens = 1;
  p.rank = 64;
  p.slice_hidden = {128};
  p.lora_of = {0};
  p.weight_dtype = DType::bf16;
  EXPECT_DOUBLE_EQ(tolerance_for(p).rtol, 4.0 / 256.0);
  p.weight_dtype = DType::f16;
  EXPECT_DOUBLE_EQ(tolerance_for(p).rtol, 4.0 / 2048.0);
  const Tolerance t = tolerance_for(p);
  ASSERT_EQ(t.atol_terms.size(), 1u);
  EXPECT_EQ(t.atol_terms[0].name, "accumulation");
  // sqrt(64) 2^-24 * 64 * 2 * 0.1 per side, two sides, margin 2.
  EXPECT_NEAR(t.atol, 2.0 * 2.0 * 8.0 * 64.0 * 0.2 / 16777216.0, 1e-12);
  EXPECT_DOUBLE_EQ(t.rel_floor(), t.atol / t.rtol);
  EXPECT_NE(t.describe().find("accumulation"), std::string::npos);
}

TEST(Tolerance, TermsAppearOnlyWhereTheyApply) {
  Problem p;
  p.op = Op::shrink;
  p.num_tokens = 1;
  p.rank = 16;
  p.hidden_in = 256;
  p.slice_hidden = {256};
  p.input_dtype = DType::bf16;
  p.weight_dtype = DType::bf16;
  p.lora_of = {0};
  p.scale = 0.5f;
  const Tolerance plain = tolerance_for(p);
  ASSERT_EQ(plain.atol_terms.size(), 1u);
  p.split_k = 4;
  const Tolerance split = tolerance_for(p);
  ASSERT_EQ(split.atol_terms.size(), 2u);
  EXPECT_EQ(split.atol_terms[1].name, "split_k");
  EXPECT_GT(split.atol, plain.atol);
  p.scale = 1.0f;
  EXPECT_NEAR(tolerance_for(p).atol, 2.0 * split.atol, 1e-15) << "atol scales with |scale|";

  p.op = Op::lora_linear;
  p.split_k = 1;
  p.add_inputs = true;
  const Tolerance linear = tolerance_for(p);
  ASSERT_EQ(linear.atol_terms.size(), 3u);
  EXPECT_EQ(linear.atol_terms[0].name, "buf_cast_flip");
  EXPECT_EQ(linear.atol_terms[1].name, "accumulation");
  EXPECT_EQ(linear.atol_terms[2].name, "add_inputs_rounding");
}

// Two correct fp32 orders of the same sums, compared with the case's tolerance.
struct OrderCase {
  const char* name;
  Problem problem;
};

using test_support::PrintTo;  // a case prints as its name

using test::make_problem;

class AccumulationOrder : public testing::TestWithParam<OrderCase> {};

TEST_P(AccumulationOrder, CleanResultsPassWithMargin) {
  const Problem& p = GetParam().problem;
  const test::HostInputs inputs = test::generate_host_inputs(p);
  const Tolerance tol = tolerance_for(p);
  const CompareLayout layout = compare_layout(p);
  CompareSpec spec;
  spec.dtype = output_dtype(p);
  spec.atol = tol.atol;
  spec.rtol = tol.rtol;
  spec.tile = TileShape{16, 32};
  spec.unwritten_measurable = unwritten_measurable(p);
  const std::vector<std::byte> reference = test::host_output(p, inputs, test::Accumulation::float64);
  double worst = 0.0;
  for (const test::Accumulation order :
       {test::Accumulation::fp32_forward, test::Accumulation::fp32_reverse, test::Accumulation::fp32_blocked}) {
    const std::vector<std::byte> other = test::host_output(p, inputs, order);
    const CompareMetrics m = compare_on_host(layout, spec, other, reference, test::row_lora(p));
    EXPECT_TRUE(m.passed()) << describe(p) << ": " << m.summary();
    EXPECT_LE(m.worst_dev_over_tolerance, 0.5) << describe(p) << ": " << m.summary() << "; " << tol.describe();
    worst = std::max(worst, m.worst_dev_over_tolerance);
  }
  std::printf("%s: worst dev/tol %.3f (%s)\n", describe(p).c_str(), worst, tol.describe().c_str());
}

INSTANTIATE_TEST_SUITE_P(
    Cases, AccumulationOrder,
    testing::Values(OrderCase{"expand_bf16_r64", make_problem(Op::expand, DType::bf16, 96, 64, {256}, 0, 1, false, 1)},
                    OrderCase{"expand_bf16_r512_add", make_problem(Op::expand, DType::bf16, 32, 512, {128, 64}, 0, 3, true, 2)},
                    OrderCase{"expand_fp16_r256_add", make_problem(Op::expand, DType::f16, 48, 256, {96}, 0, 2, true, 3)},
                    OrderCase{"shrink_bf16_h4096", make_problem(Op::shrink, DType::bf16, 16, 16, {4096, 4096}, 4096, 2, false, 4)},
                    OrderCase{"linear_bf16", make_problem(Op::lora_linear, DType::bf16, 24, 32, {256, 64}, 1024, 2, true, 5)},
                    OrderCase{"linear_fp16", make_problem(Op::lora_linear, DType::f16, 24, 64, {128}, 2048, 1, false, 6)},
                    OrderCase{"fused_moe_gate_up_bf16",
                              test::make_fused_problem(DType::bf16, 24, 2, 8, 2, 64, 2048, 128, 2, false, true, 7)},
                    OrderCase{"fused_moe_down_fp16",
                              test::make_fused_problem(DType::f16, 16, 1, 8, 4, 32, 512, 256, 1, true, false, 8)}),
    [](const testing::TestParamInfo<OrderCase>& param_info) { return std::string(param_info.param.name); });

}  // namespace
}  // namespace lp

namespace lp {
namespace {

TEST(Tolerance, TheAmplifiersPairsAreANamedTermThatStaysFarBelowTodaysTolerance) {
  // src/ptx/amplify.hpp: each pair adds (acc - p) + p, two fp32 roundings, before each
  // of the K/16 wgmmas. The term is explicit (never a silent widening) and small.
  Problem p = test::make_problem(Op::expand, DType::bf16, 64, 64, {4096}, 0, 1, false, 11);
  const Tolerance today = tolerance_for(p);
  p.amplify = 16;
  const Tolerance amplified = tolerance_for(p);
  ASSERT_EQ(amplified.atol_terms.size(), today.atol_terms.size() + 1);
  EXPECT_EQ(amplified.atol_terms.back().name, "amplify_pairs");
  EXPECT_NE(amplified.describe().find("amplify_pairs"), std::string::npos);
  EXPECT_EQ(amplified.rtol, today.rtol);
  // sqrt(2 x 16 pairs x 4 wgmmas) x 2^-23 x (64 x 2 x 0.1 + 16 x 0.1^2)
  EXPECT_NEAR(amplified.atol_terms.back().value, std::sqrt(128.0) * 0x1p-23 * (64 * 2 * 0.1 + 16 * 0.01), 1e-12);
  p.op = Op::shrink;
  p.input_dtype = DType::bf16;
  p.hidden_in = 4096;
  EXPECT_THROW(validate(p), Error) << "only an expand kernel is amplified";
}

TEST(Tolerance, AnAmplifiedCleanResultStaysInsideTodaysToleranceWithItsMargin) {
  // The pairs emulated in fp32 (round to nearest) at the largest D of the tests: the
  // deviation from the float64 reference stays at <= 0.5 of the tolerance without the
  // amplify term, so the term is margin, not what makes a clean amplified case pass.
  for (const int pairs : {2, 16, 64}) {
    for (const auto& [name, base] : {std::pair{"r64", test::make_problem(Op::expand, DType::bf16, 96, 64, {256}, 0, 1, false, 1)},
                                     std::pair{"r512_add", test::make_problem(Op::expand, DType::bf16, 32, 512, {128, 64}, 0, 3, true, 2)},
                                     std::pair{"fp16_r256_add", test::make_problem(Op::expand, DType::f16, 48, 256, {96}, 0, 2, true, 3)}}) {
      SCOPED_TRACE(fmt::format("{} with {} pairs", name, pairs));
      Problem p = base;
      const Tolerance today = tolerance_for(p);
      p.amplify = pairs;
      const test::HostInputs inputs = test::generate_host_inputs(p);
      CompareSpec spec;
      spec.dtype = output_dtype(p);
      spec.atol = today.atol;
      spec.rtol = today.rtol;
      spec.tile = TileShape{16, 32};
      spec.unwritten_measurable = unwritten_measurable(p);
      const std::vector<std::byte> reference = test::host_output(p, inputs, test::Accumulation::float64);
      const std::vector<std::byte> amplified = test::host_output(p, inputs, test::Accumulation::fp32_amplified);
      const CompareMetrics m = compare_on_host(compare_layout(p), spec, amplified, reference, p.lora_of);
      EXPECT_TRUE(m.passed()) << m.summary();
      EXPECT_LE(m.worst_dev_over_tolerance, 0.5) << m.summary();
    }
  }
}

}  // namespace
}  // namespace lp
