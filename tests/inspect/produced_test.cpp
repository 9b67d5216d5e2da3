// The gdc-early-read contract of a user's kernel (inspect/produced.hpp): the .ttir's
// parameter names, --produced, and the embedded sets' contract by kernel name.
#include "inspect/produced.hpp"

#include <gtest/gtest.h>

#include "util/files.hpp"

namespace lp::inspect {
namespace {

// The signature Triton 3.6.0 writes for our dual-stream expand (its .ttir's first
// tt.func line), shortened to its first three and last two parameters.
constexpr std::string_view k_ttir =
    "#loc = loc(\"kernels/triton/lora_expand.py\":190:0)\nmodule {\n"
    "  tt.func public @_lora_expand_kernel(%input_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32} "
    "loc(\"input_ptr\"(#loc)), %lora_ptr: !tt.ptr<bf16> {tt.divisibility = 16 : i32} loc(\"lora_ptr\"(#loc)), "
    "%out_ptr: !tt.ptr<bf16> {tt.divisibility = 16 : i32} loc(\"out_ptr\"(#loc)), %output_d0_stride: i32 "
    "{tt.divisibility = 16 : i32} loc(\"output_d0_stride\"(#loc)), %output_hs_ptr: i32 {tt.divisibility = 16 : i32} "
    "loc(\"output_hs_ptr\"(#loc))) attributes {noinline = false} {\n";

const std::string k_waits = ".version 8.7\n.visible .entry _lora_expand_kernel(\n)\n{\n\tgriddepcontrol.wait;\n}\n";

TEST(Produced, TheTtirSignatureNamesTheParametersInOrder) {
  const TtirSignature s = ttir_signature(k_ttir);
  EXPECT_EQ(s.kernel, "_lora_expand_kernel");
  EXPECT_EQ(s.params,
            (std::vector<std::string>{"input_ptr", "lora_ptr", "out_ptr", "output_d0_stride", "output_hs_ptr"}));
  EXPECT_TRUE(ttir_signature("module {}").params.empty());
  // Cut short: no order to trust.
  EXPECT_TRUE(ttir_signature(k_ttir.substr(0, 200)).params.empty());
}

class ProducedFiles : public ::testing::Test {
 protected:
  TempDir m_dir{"lp-produced-"};
  const kernels::KernelSets m_sets = kernels::KernelSets::load();
  std::string cubin() const { return m_dir.path() + "/_lora_expand_kernel.cubin"; }
};

TEST_F(ProducedFiles, AKernelThatDoesNotWaitIsNotChecked) {
  const std::string ptx = ".version 8.7\n.visible .entry k()\n{\n\tret;\n}\n";
  const ProducedParams p = produced_for_file(cubin(), &ptx, {}, m_sets);
  EXPECT_TRUE(p.produced.empty());
  EXPECT_TRUE(p.not_checked.empty());
}

TEST_F(ProducedFiles, VllmsExpandGetsTheEmbeddedContractThroughTheTtirNames) {
  m_dir.write("_lora_expand_kernel.ttir", std::string(k_ttir));
  const ProducedParams p = produced_for_file(cubin(), &k_waits, {}, m_sets);
  EXPECT_EQ(p.produced, (std::map<int, std::string>{{0, "input_ptr"}}));
  EXPECT_TRUE(p.not_checked.empty()) << p.not_checked;
}

TEST_F(ProducedFiles, TheFlagOverridesByNameOrOrdinal) {
  m_dir.write("_lora_expand_kernel.ttir", std::string(k_ttir));
  EXPECT_EQ(produced_for_file(cubin(), &k_waits, {"lora_ptr", "out_ptr"}, m_sets).produced,
            (std::map<int, std::string>{{1, "lora_ptr"}, {2, "out_ptr"}}));
  EXPECT_EQ(produced_for_file(cubin(), &k_waits, {"1"}, m_sets).produced,
            (std::map<int, std::string>{{1, "lora_ptr"}}));
  const ProducedParams bad = produced_for_file(cubin(), &k_waits, {"bogus"}, m_sets);
  EXPECT_TRUE(bad.produced.empty());
  EXPECT_NE(bad.not_checked.find("names bogus, which is not a parameter of _lora_expand_kernel (input_ptr, lora_ptr"),
            std::string::npos)
      << bad.not_checked;
}

TEST_F(ProducedFiles, WithoutATtirTheContractGoesByTheEmbeddedOrdinalAndAFlagNameIsRefused) {
  // vLLM's own _lora_expand_kernel cubin, no sidecar: input_ptr is parameter 0 in every
  // embedded specialisation of that kernel, so the contract is checked, not skipped.
  const ProducedParams contract = produced_for_file(cubin(), &k_waits, {}, m_sets);
  EXPECT_EQ(contract.produced, (std::map<int, std::string>{{0, "input_ptr"}}));
  EXPECT_TRUE(contract.not_checked.empty()) << contract.not_checked;
  // A name the user gives needs the .ttir's order.
  const ProducedParams named = produced_for_file(cubin(), &k_waits, {"lora_ptr"}, m_sets);
  EXPECT_TRUE(named.produced.empty());
  EXPECT_NE(named.not_checked.find("names lora_ptr, but no _lora_expand_kernel.ttir beside"), std::string::npos)
      << named.not_checked;
  EXPECT_EQ(produced_for_file(cubin(), &k_waits, {"0"}, m_sets).produced,
            (std::map<int, std::string>{{0, "param 0"}}));
}

TEST_F(ProducedFiles, AnUnknownKernelThatWaitsSaysHowToCheckIt) {
  const std::string ptx = ".version 8.7\n.visible .entry my_kernel(\n)\n{\n\tgriddepcontrol.wait;\n}\n";
  const ProducedParams p = produced_for_file(m_dir.path() + "/my_kernel.cubin", &ptx, {}, m_sets);
  EXPECT_TRUE(p.produced.empty());
  EXPECT_NE(p.not_checked.find("which parameters of my_kernel the previous grid writes; give --produced"),
            std::string::npos)
      << p.not_checked;
}

}  // namespace
}  // namespace lp::inspect
