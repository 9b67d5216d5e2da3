// The one compiler type: its grammar, its spelling, and the one record both JSON
// documents describe.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "compile/compiler.hpp"
#include "util/error.hpp"
#include "util/files.hpp"

namespace lp::compile {
namespace {

nlohmann::json schema(const char* name) {
  return nlohmann::json::parse(read_file(std::string(LP_SOURCE_DIR) + "/configs/schema/" + name, 1 << 22));
}

TEST(Compiler, ParsesEverySpellingAndWritesItBack) {
  for (const char* text : {"prebuilt", "driver", "ptxas=toolkit", "ptxas=triton", "ptxas=13.3", "ptxas=/opt/p"}) {
    const std::optional<Compiler> c = Compiler::parse(text);
    ASSERT_TRUE(c) << text;
    EXPECT_EQ(c->to_string(), text);
  }
  EXPECT_EQ(Compiler::parse("ptxas=13.3")->kind, CompilerKind::ptxas);
  EXPECT_EQ(Compiler::parse("ptxas=13.3")->ptxas, "13.3");
  EXPECT_TRUE(Compiler::parse("ptxas=triton")->is_bundled_ptxas());
  EXPECT_FALSE(Compiler::parse("ptxas=toolkit")->is_bundled_ptxas());
  for (const char* bad : {"", "ptxas=", "ptxas", "nvcc", "Prebuilt", " prebuilt"}) {
    EXPECT_FALSE(Compiler::parse(bad)) << bad;
  }
}

TEST(Compiler, TheAxisCheckAndTheFlagsRefuseWhatIsNoCompiler) {
  EXPECT_EQ(compiler_syntax_error("nvcc"), R"(expected prebuilt, driver or ptxas=<path|version|toolkit|triton>, got "nvcc")");
  EXPECT_FALSE(compiler_syntax_error("ptxas=13"));
  // file is what inspect calls a user's cubin; no config or flag may name it.
  EXPECT_TRUE(compiler_syntax_error("file"));
  EXPECT_THROW(Compiler::parse_or_throw("file", "--compiler"), UsageError);
  EXPECT_THROW(Compiler::parse_or_throw("nvcc", "--compiler"), UsageError);
  // inspect's old bare spelling still reads, as ptxas=...
  EXPECT_EQ(Compiler::parse_or_throw("toolkit", "--compiler"), Compiler::with_ptxas("toolkit"));
}

TEST(CompilerRecord, BothSchemasDescribeTheSameRecordAndItHasEveryRequiredKey) {
  const nlohmann::json report = schema("report.schema.json");
  const nlohmann::json inspect = schema("inspect.schema.json");
  EXPECT_EQ(report["$defs"]["compiler"], inspect["$defs"]["compiler"]);
  EXPECT_EQ(report["$defs"]["ptxas_binary"], inspect["$defs"]["ptxas_binary"]);
  CompilerRecord r;
  r.compiler = Compiler::with_ptxas("13.3");
  r.triton = "3.8.0";
  const nlohmann::json j = r.to_json();
  std::vector<std::string> keys;
  for (const auto& [key, value] : j.items()) {
    keys.push_back(key);
  }
  std::vector<std::string> required = report["$defs"]["compiler"]["required"].get<std::vector<std::string>>();
  std::sort(required.begin(), required.end());
  EXPECT_EQ(keys, required);
  EXPECT_EQ(j["name"], "ptxas=13.3");
  EXPECT_EQ(j["kind"], "ptxas");
  EXPECT_TRUE(j["ptxas"].is_null());
}

}  // namespace
}  // namespace lp::compile
