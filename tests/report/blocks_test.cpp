// The typed blocks of a report (report/blocks.hpp): each reads back what it wrote, key
// for key, including the keys written only when present; a wrong type or range is
// named by its pointer.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/error_of.hpp"
#include "report/blocks.hpp"
#include "util/error.hpp"

namespace lp::report {
namespace {

using nlohmann::json;

const std::string k_file = "r.json";

template <class T>
json round_trip(const json& j) {
  return T::from_json(JsonIn(j, k_file)).to_json();
}

/// The message of the InputError reading `j` as T throws, "" when it reads.
template <class T>
std::string error_of(const json& j) {
  const auto e = test_support::thrown_by<InputError>([&] { (void)T::from_json(JsonIn(j, k_file)); });
  return e ? e->pointer() + ": " + e->message() : "";
}

json meta_json() {
  return {{"tool", "loraprobe"},
          {"version", "0.1.0"},
          {"git_sha", "0123456789ab"},
          {"argv", {"loraprobe", "sweep"}},
          {"started_at", "2026-12-01T10:00:00Z"},
          {"finished_at", "2026-12-01T10:05:00Z"},
          {"config", {{"name", "seed"}, {"axes", {{"tokens", {{"value", {16, 32}}, {"origin", "file"}}}}}}},
          {"config_sha256", std::string(64, 'c')},
          {"seed", 48590},
          {"repeats", 5},
          {"kernel_sets",
           {{{"triton_version", "3.6.0"},
             {"origin", "<embedded>/kernels/sets/triton-3.6.0"},
             {"variants", 1593},
             {"ptxas", {{"version", "12.8.93"}, {"sha256", std::string(64, 'a')}}},
             {"ptxas_options", {"-lineinfo", "-v"}}}}},
          {"plan",
           {{"cases", 80},
            {"combinations", 96},
            {"excluded_by_rule", {16}},
            {"duplicates", 0},
            {"not_applicable", {{{"reason", "naive block assignment"}, {"count", 2}}}},
            {"not_swept", {{{"projection", "experts.down_proj"}, {"why", "no fused kernel"}}}},
            {"only_cases", {"9efe288f6599"}}}},
          {"shard", {{"index", 1}, {"count", 3}, {"plan_sha256", std::string(64, 'p')}, {"plan_cases", 240}}},
          {"devices", {{{"device", 0}, {"cases", 40}, {"retired", nullptr}}, {{"device", 1}, {"cases", 40}, {"retired", "3 faults"}}}},
          {"merged", {{"parts", json::array()}, {"incomplete", false}}},
          {"phases_s", {{"cases", 1.5}, {"total", 2.25}}}};
}

TEST(Blocks, MetaReadsBackEveryKeyItWrote) {
  EXPECT_EQ(round_trip<Meta>(meta_json()), meta_json());
  // The optional keys stay absent: a 2.x meta has no shard, devices, merged or only_cases.
  json minimal = meta_json();
  for (const char* key : {"finished_at", "kernel_sets", "shard", "devices", "merged", "phases_s"}) {
    minimal.erase(key);
  }
  minimal["plan"] = {{"cases", 1}, {"combinations", 1}};
  EXPECT_EQ(round_trip<Meta>(minimal), minimal);
}

TEST(Blocks, MetaRefusesAShardPastItsCountAndAMissingField) {
  json j = meta_json();
  j["shard"]["index"] = 3;
  EXPECT_EQ(error_of<Meta>(j), "/shard/index: expected a whole number in [0, 2], got 3");
  j = meta_json();
  j.erase("config_sha256");
  EXPECT_EQ(error_of<Meta>(j), ": missing \"config_sha256\"");
  j = meta_json();
  j["devices"][1]["device"] = 5000;
  EXPECT_EQ(error_of<Meta>(j), "/devices/1/device: expected a whole number in [0, 1023], got 5000");
}

json case_json(const char* verdict) {
  return {{"index", 0},        {"id", "9efe288f6599"}, {"axes", {{"op", "expand"}, {"tokens", 16}}},
          {"variant", nullptr}, {"verdict", verdict},   {"reason", nullptr},
          {"runs", 0},          {"failed_runs", 0},     {"metrics", nullptr},
          {"timing", nullptr},  {"static_findings", 2}, {"attribution", "ptx"},
          {"device", nullptr},  {"failure_rate", nullptr}, {"failure_rate_upper_bound", nullptr}};
}

TEST(Blocks, ControlsReadBackEveryKeyTheyWrote) {
  const json controls = {
      {"ran", true},
      {"valid", false},
      {"sets", {{{"triton", "3.6.0"}, {"valid", false}, {"positive", case_json("PASS")}, {"negative", nullptr},
                 {"reason", "the positive control must FAIL"}}}},
      {"race", {{"ran", true}, {"compiler", "ptxas=toolkit (13.0.88)"}, {"static_findings", 1},
                {"result", {{"ctas", 4}, {"values", {{"64", 10}}}}}, {"shows", false}, {"summary", "no late read"}}},
      {"amplified", {{{"triton", "3.9.0"}, {"role", "fixed_default"}, {"amplify", 2}, {"valid", true},
                      {"record", case_json("PASS")}}}},
      {"amplified_notes", {"no block_n 32 variant in 3.7.1"}},
      {"reason", "Triton 3.6.0: the positive control must FAIL"}};
  EXPECT_EQ(round_trip<Controls>(controls), controls);
  // Before report schema 5.0.0 the count was "pairs": it reads, and is written as "amplify".
  json before_5 = controls;
  before_5["amplified"][0].erase("amplify");
  before_5["amplified"][0]["pairs"] = 2;
  EXPECT_EQ(round_trip<Controls>(before_5), controls);
  json neither = controls;
  neither["amplified"][0].erase("amplify");
  EXPECT_THROW(Controls::from_json(JsonIn(neither, k_file)), InputError);
  const json not_run = {{"ran", false}, {"valid", nullptr}, {"reason", "--no-controls"}};
  EXPECT_EQ(round_trip<Controls>(not_run), not_run);
  EXPECT_TRUE(Controls::from_json(JsonIn(not_run, k_file)).trusted());
  EXPECT_FALSE(Controls::from_json(JsonIn(controls, k_file)).trusted());
}

TEST(Blocks, TolerancesReadBackAndRefuseANegativeTolerance) {
  const json t = {{"model", "|a - e| <= atol + rtol * |e|"},
                  {"table", {{{"op", "expand"}, {"output_dtype", "bf16"}, {"k", 64}, {"add_inputs", true},
                              {"hidden_in", 0}, {"atol", 2.4e-5}, {"rtol", 0.0156}, {"why", "bf16 rounding"}}}},
                  {"overrides", {{"fp16", {{"atol", 0.004}, {"rtol", 0.016}, {"origin", "file seed.json"}}}}}};
  EXPECT_EQ(round_trip<Tolerances>(t), t);
  json bad = t;
  bad["overrides"]["fp16"]["rtol"] = -1.0;
  EXPECT_EQ(error_of<Tolerances>(bad), "/overrides/fp16/rtol: expected a number >= 0, got -1.0");
}

TEST(Blocks, RemediesReadBackAndNameAWrongVerdict) {
  const json r = {
      {"hazards",
       {{{"configuration", "expand fp32->bf16 r16"},
         {"case", "9efe288f6599"},
         {"tokens", 16},
         {"verdict", "LATENT"},
         {"kernel_ms", 0.0086},
         {"remedies",
          {{{"remedy", "block_n=32"}, {"why", "no register-A wgmma in flight"}, {"case", "1b20cd989a51"},
            {"verdict", "PASS"}, {"static_findings", 0}, {"kernel_ms", 0.0084}, {"cost", 0.97}, {"in_plan", true},
            {"reason", nullptr}},
           {{"remedy", "ptxas 13.3"}, {"why", "ptxas keeps the copies"}, {"case", "2c30de9b4a11"},
            {"verdict", "compile_error"}, {"static_findings", nullptr}, {"kernel_ms", nullptr}, {"cost", nullptr},
            {"in_plan", false}, {"reason", "ptxas=13.3: not installed"}}}}}}},
      {"notes", {"no remedy for 3.9.0: clean"}}};
  EXPECT_EQ(round_trip<Remedies>(r), r);
  json bad = r;
  bad["hazards"][0]["remedies"][1]["verdict"] = "maybe";
  EXPECT_EQ(error_of<Remedies>(bad), "/hazards/0/remedies/1/verdict: \"maybe\" is not a verdict");
  bad = r;
  bad["hazards"][0]["remedies"][0]["cost"] = "cheap";
  EXPECT_EQ(error_of<Remedies>(bad), "/hazards/0/remedies/0/cost: expected a number, got \"cheap\"");
}

TEST(Blocks, EnvironmentAndVariantsReadBackEveryKeyTheyWrote) {
  const json env = {{"host", {{"os", "Linux"}, {"cpus", 16}}},
                    {"toolkit", {{"version", "13.0.88"}, {"root", "/usr/local/cuda"}}},
                    {"compilers", {{{"name", "prebuilt"}, {"triton", "3.6.0"}, {"error", nullptr}}}},
                    {"kernel_sets", meta_json()["kernel_sets"]},
                    {"gpu", {{"name", "NVIDIA H200"}, {"uuid", "GPU-1"}}},
                    {"gpus", {{{"name", "NVIDIA H200"}}, nullptr}},
                    {"jit_cache_disabled", true},
                    {"module_loading", "EAGER"},
                    {"inspection_cache", nullptr}};
  EXPECT_EQ(round_trip<Environment>(env), env);
  // Without a GPU, from a sample: no gpus, no inspection_cache key.
  const json none = {{"host", json::object()}, {"toolkit", json::object()}, {"compilers", json::array()},
                     {"gpu", nullptr}, {"no_gpu_reason", "no CUDA device"}};
  EXPECT_EQ(round_trip<Environment>(none), none);
  json bad = env;
  bad["gpus"][1] = "H200";
  EXPECT_EQ(error_of<Environment>(bad), "/gpus/1: expected an object, got a string");

  const json variant = {{"variant", "expand-fp32-bf16-m64n128k32-w4s2-evenk-add-s1"}, {"triton", "3.8.0"},
                        {"compiler", "ptxas=13.3"}, {"amplify", 2},
                        {"compile", {{"kind", "ptxas"}, {"version", "13.3.73"}}}, {"compile_error", nullptr},
                        {"cubin_sha256", std::string(64, 'b')}, {"static_findings", 0}, {"ptx_findings", 0},
                        {"attribution", "none"}, {"sass", {{"kernels", json::array()}}}, {"sass_error", nullptr},
                        {"case_verdicts", {{"PASS", 10}}}};
  EXPECT_EQ(round_trip<VariantRecord>(variant), variant);
  // A variant the sweep could not build: {} for its compile record, its error, no cubin.
  json failed = variant;
  failed.erase("amplify");
  failed["compile"] = json::object();
  failed["compile_error"] = "ptxas=13.9: not installed";
  failed["cubin_sha256"] = nullptr;
  failed["sass"] = nullptr;
  failed["case_verdicts"] = json::object();
  EXPECT_EQ(round_trip<VariantRecord>(failed), failed);
  bad = variant;
  bad["case_verdicts"]["PASS"] = -1;
  EXPECT_EQ(error_of<VariantRecord>(bad), "/case_verdicts/PASS: expected a whole number in [0, 9007199254740992], got -1");
}

// Issue 54: the records other libraries write are typed where the report is read, and
// written back as they were read, keys this loraprobe does not know included.
TEST(Blocks, CarriedRecordsAreReadTypedAndWrittenBackAsRead) {
  const json env = {{"host", {{"os", "Linux"}, {"cpus", 16}, {"a_later_key", {1, 2}}}},
                    {"toolkit", {{"version", "13.0.88"}, {"root", "/usr/local/cuda"}}},
                    {"compilers",
                     {{{"name", "prebuilt"}, {"triton", "3.6.0"}, {"version", "12.8.93"},
                       {"ptxas", {{"sha256", std::string(64, 'a')}, {"path", nullptr}}}, {"options", {"-v", 3}}},
                      {{"name", "ptxas=toolkit"}, {"sha256", std::string(64, 'b')}, {"error", "gone"}}}},
                    {"gpu", {{"name", "NVIDIA H200"}, {"sm_count", 132}, {"total_memory_bytes", 150000000000}}},
                    {"inspection_cache", {{"enabled", true}, {"root", "/c"}, {"sass_hits", 9}}}};
  const Environment e = Environment::from_json(JsonIn(env, k_file));
  EXPECT_EQ(e.to_json(), env);
  ASSERT_TRUE(e.host.record());
  EXPECT_EQ(e.host.record()->os, "Linux");
  EXPECT_EQ(e.host.record()->cpus, 16);
  EXPECT_EQ(e.host.record()->kernel, std::nullopt);
  EXPECT_EQ(e.toolkit.record()->version, "13.0.88");
  ASSERT_EQ(e.compilers.size(), 2U);
  const ReportedCompiler& prebuilt = *e.compilers[0].record();
  EXPECT_EQ(prebuilt.ptxas_sha256(), std::string(64, 'a'));
  EXPECT_EQ(prebuilt.options, (std::vector<std::string>{"-v", "3"}));
  EXPECT_EQ(e.compilers[1].record()->ptxas_sha256(), std::string(64, 'b')) << "2.x kept it on the record";
  EXPECT_EQ(e.compilers[1].record()->error, "gone");
  EXPECT_EQ(e.gpu.record()->name, "NVIDIA H200");
  EXPECT_EQ(e.gpu.record()->sm_count, 132);
  EXPECT_EQ(e.gpu.record()->total_memory_bytes, 150000000000.0);
  EXPECT_EQ(e.gpu.record()->uuid, std::nullopt);
  ASSERT_TRUE(e.inspection_cache && e.inspection_cache->record());
  EXPECT_TRUE(e.inspection_cache->record()->enabled);
  EXPECT_EQ(e.inspection_cache->record()->sass_misses, std::nullopt);
  // A record in its owner's JSON form reads as a report's does.
  const Carried<ReportedGpu> owned(JsonText::of({{"name", "NVIDIA H100"}}));
  EXPECT_EQ(owned.record()->name, "NVIDIA H100");
  EXPECT_FALSE(Carried<ReportedGpu>().record());
}

TEST(Blocks, ABuildRecordReadsBackWhatItsOwnerWrote) {
  compile::BuildRecord b;
  b.kind = compile::CompilerKind::ptxas;
  b.tool = "/opt/cuda/bin/ptxas";
  b.version = "13.3.73";
  b.sha256 = std::string(64, 'd');
  b.options = std::vector<std::string>{"-v", "--gpu-name=sm_90a"};
  b.ms = 12.5;
  b.amplified = 2;
  const JsonText text = b.to_json_text();
  const json j = text.value();
  const compile::BuildRecord read = compile::BuildRecord::from_json(JsonIn(j, k_file));
  EXPECT_EQ(read.to_json_text(), text);
  EXPECT_EQ(read.kind, compile::CompilerKind::ptxas);
  EXPECT_EQ(read.amplified, 2);
  json bad = j;
  bad["kind"] = "nvcc";
  EXPECT_EQ(error_of<compile::BuildRecord>(bad), "/kind: expected prebuilt, driver, ptxas or file, got \"nvcc\"");
  bad = j;
  bad["options"] = {1};
  EXPECT_EQ(error_of<compile::BuildRecord>(bad).rfind("/options/0: ", 0), 0U) << error_of<compile::BuildRecord>(bad);
  // A variant's record is typed too; {} is a variant no run built.
  const json variant = {{"variant", "v"},         {"triton", "3.8.0"},      {"compiler", "ptxas=13.3"},
                        {"compile", j},           {"compile_error", nullptr}, {"cubin_sha256", nullptr},
                        {"static_findings", nullptr}, {"ptx_findings", nullptr}, {"attribution", nullptr},
                        {"sass", nullptr},        {"sass_error", nullptr}};
  const VariantRecord v = VariantRecord::from_json(JsonIn(variant, k_file));
  ASSERT_TRUE(v.compile.record());
  EXPECT_EQ(v.compile.record()->sha256, std::string(64, 'd'));
  EXPECT_EQ(v.to_json(), variant);
}

TEST(Blocks, AMergeRecordReadsBackWhatMergeWrote) {
  MergedRecord m;
  m.parts.push_back({"a.json", "report", {0, 2, std::string(64, 'p'), 4}, 2,
                     Environment::from_json(JsonIn(json{{"host", json::object()},
                                                        {"toolkit", json::object()},
                                                        {"compilers", json::array()},
                                                        {"gpu", nullptr}},
                                                   k_file)),
                     std::nullopt});
  m.parts.push_back({"b.jsonl", "journal", {1, 2, std::string(64, 'p'), 4}, 1, std::nullopt, std::nullopt});
  m.short_parts = {"b.jsonl: holds 1 of the 2 cases of shard 1/2"};
  m.incomplete = true;
  const JsonText text = m.to_json_text();
  const json j = text.value();
  const MergedRecord read = MergedRecord::from_json(JsonIn(j, k_file));
  EXPECT_EQ(read.to_json_text(), text);
  EXPECT_EQ(read.parts.at(1).kind, "journal");
  EXPECT_TRUE(read.incomplete);
  json bad = j;
  bad["parts"][0]["shard"]["index"] = 2;
  EXPECT_EQ(error_of<MergedRecord>(bad), "/parts/0/shard/index: expected a whole number in [0, 1], got 2");
}

}  // namespace
}  // namespace lp::report
