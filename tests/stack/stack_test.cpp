// The stack library without Python: the probe's answer read, the variants check builds,
// the answer decided from inspect results, and its formats.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "formats/document.hpp"
#include "kernels/kernel_sets.hpp"
#include "plan/config.hpp"
#include "plan/embedded_configs.hpp"
#include "plan/plan.hpp"
#include "stack/answer.hpp"
#include "stack/build.hpp"
#include "stack/probe.hpp"
#include "stack/python_tree.hpp"
#include "stack/selection.hpp"
#include "util/error.hpp"
#include "util/files.hpp"

namespace lp::stack {
namespace {

const char* const k_probe = R"({"probe_version": 1,
  "python": {"executable": "/venv/bin/python", "version": "3.11.7", "prefix": "/venv"},
  "vllm": {"version": "0.34.0", "dir": "/venv/vllm", "lora_ops_dir": "/venv/vllm/lora/ops/triton_ops"},
  "torch": {"version": "2.14.0"},
  "triton": {"version": "3.8.0", "dir": "/venv/triton"},
  "env": {"VLLM_LORA_ENABLE_DUAL_STREAM": "1", "VLLM_LORA_DISABLE_PDL": null, "VLLM_TUNED_CONFIG_FOLDER": null,
          "VLLM_BATCH_INVARIANT": null, "TRITON_PTXAS_PATH": null, "TRITON_PTXAS_BLACKWELL_PATH": null},
  "vllm_flags": {"VLLM_LORA_ENABLE_DUAL_STREAM": {"set": true, "value": "1", "on": true, "error": null},
                 "VLLM_LORA_DISABLE_PDL": {"set": false, "value": null, "on": false, "error": null},
                 "VLLM_BATCH_INVARIANT": {"set": true, "value": "x", "on": false, "error": "vLLM would raise"}},
  "ptxas": {"bin_dir": "/venv/triton/backends/nvidia/bin", "sm90_path": "/venv/triton/backends/nvidia/bin/ptxas",
            "sm90_knob": "TRITON_PTXAS_PATH", "error": null, "imported_version": "3.8.0",
            "bundled": {"ptxas": "/venv/triton/backends/nvidia/bin/ptxas", "ptxas-blackwell": null, "nvdisasm": null}}})";

TEST(Probe, TheAnswerIsReadIntoTheStack) {
  const PythonStack s = stack_from_probe_json(k_probe, "probe");
  EXPECT_EQ(s.vllm_version, "0.34.0");
  EXPECT_EQ(s.torch_version, "2.14.0");
  EXPECT_EQ(s.triton_version, "3.8.0");
  EXPECT_EQ(s.vllm_ops_dir, "/venv/vllm/lora/ops/triton_ops");
  EXPECT_TRUE(s.dual_stream.on);
  EXPECT_FALSE(s.disable_pdl.on);
  EXPECT_TRUE(s.use_gdc());
  EXPECT_EQ(s.batch_invariant.error, "vLLM would raise");
  EXPECT_EQ(s.env.count("VLLM_LORA_ENABLE_DUAL_STREAM"), 1U);
  EXPECT_EQ(s.env.count("TRITON_PTXAS_PATH"), 0U);  // unset variables are not listed
  EXPECT_EQ(s.ptxas.sm90_path, "/venv/triton/backends/nvidia/bin/ptxas");
  EXPECT_FALSE(s.ptxas.blackwell_path.has_value());
  EXPECT_FALSE(s.ptxas.overridden);
  EXPECT_FALSE(s.ptxas.sm90.has_value());  // not run by the reader
}

TEST(Probe, AnAnswerOfAnotherShapeNamesTheKey) {
  std::string text = k_probe;
  text.replace(text.find("\"version\": \"0.34.0\""), 19, "\"version\": 34");
  try {
    (void)stack_from_probe_json(text, "probe");
    FAIL() << "read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("probe:/vllm/version"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)stack_from_probe_json(std::string(100, '[') + std::string(100, ']'), "probe"), InputError);
  EXPECT_THROW((void)stack_from_probe_json("{\"probe_version\": 2}", "probe"), InputError);
  // A version that would break the answer's first line is no version.
  std::string forged = k_probe;
  forged.replace(forged.find("\"2.14.0\""), 8, "\"2.14.0\\nCLEAN\"");
  try {
    (void)stack_from_probe_json(forged, "probe");
    FAIL() << "read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("probe:/torch/version: \"2.14.0\nCLEAN\" is no version"), std::string::npos)
        << e.what();
  }
}

TEST(Probe, ThePtxasItNamesRunsOnlyInsideTritonOrWhereTheVariableSays) {
  PythonStack s = stack_from_probe_json(k_probe, "probe");
  s.ptxas.sm90_path = "/bin/true";
  s.ptxas.bundled_path.reset();
  describe_stack_ptxas(s);
  EXPECT_FALSE(s.ptxas.sm90.has_value());
  EXPECT_NE(s.ptxas.error.find("neither in Triton's bin folder"), std::string::npos) << s.ptxas.error;
}

TEST(PythonTree, TheGeneratorAndTheProbeAreEmbeddedAndWrittenAsInACheckout) {
  EXPECT_NE(tree_file("scripts/gen_kernels.py").find("--stack"), std::string_view::npos);
  EXPECT_NE(tree_file("scripts/check/probe.py").find("get_ptxas"), std::string_view::npos);
  EXPECT_THROW((void)tree_file("nope.py"), Error);
  const TempDir dir("stack-test-");
  write_python_tree(dir.path());
  for (const char* rel : {"scripts/kernelgen/build.py", "kernels/triton/lora_expand.py", "configs/vllm/defaults.json",
                          "scripts/kernelgen/vllm_source.py"}) {
    EXPECT_TRUE(std::filesystem::is_regular_file(dir.path() + "/" + rel)) << rel;
  }
  EXPECT_EQ(read_file(dir.path() + "/scripts/gen_kernels.py"), tree_file("scripts/gen_kernels.py"));
}

plan::Plan check_plan(const kernels::KernelSets& sets, bool dual_stream = false) {
  plan::SweepConfig config = plan::parse_config(plan::embedded_config("check.json"), "check.json");
  plan::FlagOverrides flags;
  flags.axes[plan::AxisId::triton] = {"3.6.0"};
  flags.vllm_dual_stream = dual_stream;
  plan::apply_flags(config, flags);
  return plan::expand_plan(config, sets.versions());
}

bool has(const std::vector<std::string>& ids, const std::string& id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

TEST(Selection, TheCheckConfigLaunchesVllmsDefaultExpandAndItsRemediesNeighbours) {
  const kernels::KernelSets sets = kernels::KernelSets::load();
  const Selection s = select_variants(check_plan(sets), sets);
  EXPECT_EQ(s.resolved_in, "3.6.0");
  const std::string hazardous = "expand-fp32-bf16-m64n128k32-w4s2-evenk-add-s1";
  ASSERT_TRUE(has(s.launched, hazardous)) << fmt::format("{}", fmt::join(s.launched, " "));
  EXPECT_TRUE(has(s.launched, "expand-bf16-bf16-m64n128k32-w4s2-evenk-add-s1"));
  const auto neighbour = [&](KernelRemedy r) {
    for (const Neighbour& n : s.neighbours) {
      if (n.of == hazardous && n.remedy == r) {
        return n.id;
      }
    }
    return std::string();
  };
  EXPECT_EQ(neighbour(KernelRemedy::block_n_32), "expand-fp32-bf16-m64n32k32-w4s2-evenk-add-s1");
  EXPECT_EQ(neighbour(KernelRemedy::input_16bit), "expand-bf16-bf16-m64n128k32-w4s2-evenk-add-s1");
  EXPECT_EQ(neighbour(KernelRemedy::pdl_off), "");  // not a USE_GDC kernel
  const std::vector<std::string> ids = s.ids();
  EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));
  EXPECT_TRUE(has(ids, "expand-fp32-bf16-m64n32k32-w4s2-evenk-add-s1"));
}

TEST(Selection, DualStreamLaunchesTheGdcExpandWithItsPdlOffNeighbour) {
  const kernels::KernelSets sets = kernels::KernelSets::load();
  const Selection s = select_variants(check_plan(sets, true), sets);
  const std::string gdc = "expand-fp32-bf16-m64n128k32-w4s2-evenk-noadd-s1-gdc";
  ASSERT_TRUE(has(s.launched, gdc)) << fmt::format("{}", fmt::join(s.launched, " "));
  // vLLM's dual-stream shrink has no TAIL_NS: that form is judged; the sweep's is only built for --run.
  EXPECT_TRUE(has(s.launched, "shrink-bf16-m32n16k32-w4s2-sk8-g8-evenk-s1-gdc")) << fmt::format("{}", fmt::join(s.launched, " "));
  EXPECT_FALSE(has(s.launched, "shrink-bf16-m32n16k32-w4s2-sk8-g8-evenk-s1-gdc-tail100us"));
  EXPECT_TRUE(has(s.for_run, "shrink-bf16-m32n16k32-w4s2-sk8-g8-evenk-s1-gdc-tail100us"));
  EXPECT_TRUE(has(s.ids(), "shrink-bf16-m32n16k32-w4s2-sk8-g8-evenk-s1-gdc-tail100us"));
  EXPECT_TRUE(std::any_of(s.neighbours.begin(), s.neighbours.end(), [&](const Neighbour& n) {
    return n.of == gdc && n.remedy == KernelRemedy::pdl_off && n.id == "expand-fp32-bf16-m64n128k32-w4s2-evenk-noadd-s1";
  }));
}

inspect::InspectResult result(const std::string& id, const std::string& compiler, std::size_t findings,
                              const std::string& made_by, std::size_t early = 0) {
  inspect::InspectResult r;
  r.name = id;
  r.variant = id;
  r.triton = "3.8.0";
  r.compiler = compiler;
  r.status = findings + early > 0 ? inspect::StaticOutcome::hazard : inspect::StaticOutcome::clean;
  r.finding_count = findings;
  r.early_read_count = early;
  r.attribution = findings > 0 ? made_by : "none";
  r.early_read_attribution = early > 0 ? "ptx" : "none";
  return r;
}

/// Triton 3.8.0 as measured: the fp32 expand at block_n 128 has 8 findings made by ptxas;
/// the ptxas-blackwell 13.3 beside it compiles the same PTX clean.
struct Fixture {
  kernels::KernelSets sets = kernels::KernelSets::load();
  CheckInputs in;
  const std::string hazardous = "expand-fp32-bf16-m64n128k32-w4s2-evenk-add-s1";
  const std::string blackwell = "ptxas=/venv/triton/backends/nvidia/bin/ptxas-blackwell";

  Fixture() {
    in.stack = stack_from_probe_json(k_probe, "probe");
    in.stack.dual_stream = {};
    in.selection = select_variants(check_plan(sets), sets);
    in.built = &sets.at("3.8.0");
    in.kernels_source = "loraprobe's";
    compile::PtxasInfo info{"/venv/triton/backends/nvidia/bin/ptxas-blackwell",
                            "/venv/triton/backends/nvidia/bin/ptxas-blackwell", "13.3.33", "ab"};
    in.ptxas.push_back({blackwell, info, "beside Triton's ptxas"});
    for (const std::string& id : in.selection.ids()) {
      const bool bad = id == hazardous;
      in.results.push_back(result(id, "prebuilt", bad ? 8 : 0, "ptxas"));
      in.results.push_back(result(id, blackwell, 0, "none"));
    }
  }
  [[nodiscard]] const Remedy* remedy(const CheckAnswer& a, const std::string& id) const {
    for (const Remedy& r : a.remedies) {
      if (r.id == id) {
        return &r;
      }
    }
    return nullptr;
  }
};

TEST(Decide, AHazardMadeByPtxasIsAffectedAndThePtxasBesideTritonIsVerified) {
  Fixture f;
  const CheckAnswer a = decide(f.in);
  EXPECT_EQ(a.verdict, Verdict::affected);
  EXPECT_EQ(a.exit_code(), 1);
  EXPECT_EQ(a.headline().rfind("vLLM 0.34.0, torch 2.14.0, Triton 3.8.0", 0), 0U) << a.headline();
  EXPECT_NE(a.headline().find("AFFECTED. vLLM's LoRA kernel(s) expand fp32->bf16, 1 slice, block_n 128, 2 stages have "
                              "the wgmma register hazard (made by ptxas"),
            std::string::npos)
      << a.headline();
  const Remedy* beside = f.remedy(a, "ptxas_beside_triton");
  ASSERT_NE(beside, nullptr);
  EXPECT_EQ(beside->status, RemedyStatus::verified);
  EXPECT_EQ(beside->how, "export TRITON_PTXAS_PATH=/venv/triton/backends/nvidia/bin/ptxas-blackwell");
  ASSERT_NE(f.remedy(a, "ptxas_pip"), nullptr);
  EXPECT_EQ(f.remedy(a, "ptxas_pip")->status, RemedyStatus::verified);  // 13.3.33 >= 13.3
  ASSERT_NE(f.remedy(a, "block_n_32"), nullptr);
  EXPECT_EQ(f.remedy(a, "block_n_32")->status, RemedyStatus::verified);
  ASSERT_NE(f.remedy(a, "input_16bit"), nullptr);
  EXPECT_EQ(f.remedy(a, "input_16bit")->status, RemedyStatus::verified);
  EXPECT_EQ(f.remedy(a, "disable_pdl"), nullptr);  // no early read
}

TEST(Decide, AHazardInThePtxIsNotFixedByAnyPtxas) {
  Fixture f;
  for (inspect::InspectResult& r : f.in.results) {
    if (r.variant == f.hazardous) {
      r = result(f.hazardous, r.compiler, 8, "ptx");
    }
  }
  const CheckAnswer a = decide(f.in);
  EXPECT_EQ(a.verdict, Verdict::affected);
  EXPECT_NE(a.sentence.find("made by the PTX: Triton's fault, no ptxas fixes it"), std::string::npos) << a.sentence;
  ASSERT_NE(f.remedy(a, "ptxas_beside_triton"), nullptr);
  EXPECT_EQ(f.remedy(a, "ptxas_beside_triton")->status, RemedyStatus::does_not_fix);
  EXPECT_EQ(f.remedy(a, "ptxas_pip")->status, RemedyStatus::does_not_fix);  // 13.3.33 ran: the PTX has it
}

TEST(Decide, NoFindingIsCleanAndAKernelNotBuiltCannotTell) {
  Fixture f;
  for (inspect::InspectResult& r : f.in.results) {
    r = result(*r.variant, r.compiler, 0, "none");
  }
  CheckAnswer a = decide(f.in);
  EXPECT_EQ(a.verdict, Verdict::clean);
  EXPECT_EQ(a.exit_code(), 0);
  EXPECT_TRUE(a.remedies.empty());
  // One kernel vLLM launches not inspected.
  f.in.results.erase(std::find_if(f.in.results.begin(), f.in.results.end(), [&](const inspect::InspectResult& r) {
    return r.variant == f.hazardous && r.compiler == "prebuilt";
  }));
  a = decide(f.in);
  EXPECT_EQ(a.verdict, Verdict::cannot_tell);
  EXPECT_EQ(a.exit_code(), 3);
}

TEST(Decide, AnEarlyReadUnderPdlNamesTheDisablePdlRemedy) {
  Fixture f;
  f.in.stack = stack_from_probe_json(k_probe, "probe");  // dual stream on
  f.in.selection = select_variants(check_plan(f.sets, true), f.sets);
  f.in.results.clear();
  for (const std::string& id : f.in.selection.ids()) {
    const bool gdc = id.find("-gdc") != std::string::npos && id.rfind("expand", 0) == 0;
    f.in.results.push_back(result(id, "prebuilt", 0, "none", gdc ? 4 : 0));
    f.in.results.push_back(result(id, f.blackwell, 0, "none", gdc ? 4 : 0));
  }
  const CheckAnswer a = decide(f.in);
  EXPECT_EQ(a.verdict, Verdict::affected);
  EXPECT_NE(a.sentence.find("before griddepcontrol.wait (triton #11905"), std::string::npos) << a.sentence;
  const Remedy* pdl = f.remedy(a, "disable_pdl");
  ASSERT_NE(pdl, nullptr);
  EXPECT_EQ(pdl->status, RemedyStatus::verified);
  EXPECT_EQ(pdl->fixes, "gdc early read");
}

// The sweep report `check --run --amplify 2 --tokens 384,2048` wrote on an H100 (Triton
// 3.6.0, 2026-12-06; the command is in its meta.argv): the amplified fp32 expand at block_n
// 128 FAILs at 2048 tokens (28800 NaN) and is LATENT at 384; block_n 32, num_stages 1 and
// a bf16 input PASS.
TEST(Run, TheSweepsCasesAndMeasuredRemediesFoldIntoTheAnswer) {
  Fixture f;
  CheckAnswer a = decide(f.in);
  const std::string path = std::string(LP_SOURCE_DIR) + "/tests/stack/fixtures/h100-check-run-amplify2.json";
  fold_run(a, formats::read_document(path), path);
  EXPECT_EQ(a.verdict, Verdict::affected);
  EXPECT_NE(a.sentence.find("On this GPU, expand fp32->bf16, 1 slice, block_n 128, 2 stages returned wrong values (FAIL)."),
            std::string::npos)
      << a.sentence;
  const auto kernel = std::find_if(a.kernels.begin(), a.kernels.end(),
                                   [&](const KernelAnswer& k) { return k.variant == f.hazardous; });
  ASSERT_NE(kernel, a.kernels.end());
  EXPECT_EQ(kernel->run, "2 case(s) (2 amplified): 1 FAIL, 1 LATENT; 28800 NaN, 512 Inf, 1526861 wrong values");
  ASSERT_NE(f.remedy(a, "block_n_32"), nullptr);
  EXPECT_NE(f.remedy(a, "block_n_32")->evidence.find("; run on this GPU: PASS at 2048 tokens"), std::string::npos)
      << f.remedy(a, "block_n_32")->evidence;
  ASSERT_NE(f.remedy(a, "stages_1"), nullptr);
  EXPECT_NE(f.remedy(a, "stages_1")->evidence.find("PASS at 2048 tokens"), std::string::npos);
}

TEST(Formats, EveryFormatOpensWithTheAnswerAndEscapesWhatTheMachineSaid) {
  Fixture f;
  f.in.stack.executable = "/venv/bin/py|thon<script>";
  const CheckAnswer a = decide(f.in);
  const std::string text = answer_text(a);
  EXPECT_EQ(text.rfind(a.headline() + "\n", 0), 0U);
  EXPECT_NE(text.find("exit code 1 (affected)"), std::string::npos);
  const std::string md = answer_markdown(a);
  EXPECT_EQ(md.rfind("# loraprobe check: AFFECTED\n", 0), 0U) << md.substr(0, 80);
  EXPECT_EQ(md.find("py|thon"), std::string::npos);  // a table cell boundary from the machine's path
  const std::string junit = answer_junit(a);
  EXPECT_NE(junit.find("failures=\"1\""), std::string::npos) << junit;
  EXPECT_EQ(junit.find("<script>"), std::string::npos);
  const std::string json = answer_json(a, {"loraprobe", "check"}).text();
  EXPECT_NE(json.find("\"verdict\":\"affected\""), std::string::npos);
  EXPECT_NE(json.find("\"exit_code\":1"), std::string::npos);
}

}  // namespace
}  // namespace lp::stack
