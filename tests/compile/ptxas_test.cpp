// The ptxas=PATH compile path without a GPU: any ptxas binary, run without a
// shell, whatever its path looks like.

#include "compile/ptxas.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "compile/toolchain.hpp"
#include "tools/tools.hpp"
#include "util/error.hpp"
#include "util/files.hpp"

namespace lp::compile {
namespace {

namespace fs = std::filesystem;

const std::string k_ptx = LP_SOURCE_DIR "/tests/sass/fixtures/expand-fp32-bf16-m64n128k32-w4s2-evenk-noadd-s1.ptx";

TEST(Ptxas, APathWithSpacesAndShellMetacharactersJustWorks) {
  const std::optional<std::string> root = tools::toolkit_root();
  if (!root) {
    GTEST_SKIP() << "skipped: no CUDA toolkit ptxas";
  }
  // If a shell ever saw this path, $(touch ...) would create the marker file.
  const fs::path marker = fs::temp_directory_path() / "lp-ptxas-pwned";
  fs::remove(marker);
  const fs::path dir = fs::temp_directory_path() / ("lp ptxas dir; $(touch " + marker.string() + ") & `id`");
  fs::create_directories(dir);
  const fs::path copy = dir / "ptxas";
  fs::copy_file(*root + "/bin/ptxas", copy, fs::copy_options::overwrite_existing);
  const PtxasInfo info = resolve_ptxas(copy.string());
  EXPECT_EQ(info.path, copy.string());
  EXPECT_FALSE(info.version.empty());
  EXPECT_EQ(info.sha256.size(), 64U);
  const PtxasOutput out = compile_with_ptxas(info, read_file(k_ptx), "fixture");
  EXPECT_EQ(out.cubin.substr(0, 4), "\x7f" "ELF");
  EXPECT_NE(out.log.find("registers"), std::string::npos);  // -v, as Triton passes it
  EXPECT_FALSE(fs::exists(marker));
  fs::remove_all(dir);
}

TEST(Ptxas, BadPtxIsAnErrorWithTheLog) {
  const std::optional<std::string> root = tools::toolkit_root();
  if (!root) {
    GTEST_SKIP() << "skipped: no CUDA toolkit ptxas";
  }
  const PtxasInfo info = resolve_ptxas("toolkit");
  try {
    compile_with_ptxas(info, ".version 8.0\n.target sm_90a\nnonsense", "broken");
    FAIL() << "ptxas accepted nonsense";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("failed on broken"), std::string::npos) << e.what();
  }
}

TEST(Ptxas, UnknownSpecNamesWhatIsAvailable) {
  try {
    resolve_ptxas("99.9");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("ptxas=99.9: not a path, 'toolkit', 'triton', or a version installed under ", 0),
              0U)
        << e.what();
  }
  EXPECT_THROW(resolve_ptxas("/nonexistent/ptxas"), UsageError);
}

}  // namespace
}  // namespace lp::compile
