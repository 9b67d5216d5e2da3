// The ptxas=PATH compile path without a GPU: any ptxas binary, run without a
// shell, whatever its path looks like.

#include "compile/ptxas.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "compile/toolchain.hpp"
#include "support/scoped_env.hpp"
#include "tools/tools.hpp"
#include "util/error.hpp"
#include "util/files.hpp"
#include "util/sha256.hpp"

namespace lp::compile {
namespace {

namespace fs = std::filesystem;

const std::string k_ptx = LP_SOURCE_DIR "/tests/sass/fixtures/expand-fp32-bf16-m64n128k32-w4s2-evenk-noadd-s1.ptx";

using test_support::ScopedEnv;

TEST(Ptxas, APathWithSpacesAndShellMetacharactersJustWorks) {
  const std::optional<std::string> root = tools::toolkit_root();
  if (!root) {
    GTEST_SKIP() << "skipped: no CUDA toolkit ptxas";
  }
  // If a shell ever saw this path, $(touch ...) would create the marker file (in the
  // shell's working directory, the test's scratch folder: names without '/', so the
  // folder is one level and goes with the scratch).
  const TempDir scratch("lp-ptxas-test-");
  const fs::path marker = fs::path(scratch.path()) / "lp-ptxas-pwned";
  const fs::path dir = fs::path(scratch.path()) / "lp ptxas dir; $(touch lp-ptxas-pwned) & `id`";
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
  EXPECT_FALSE(fs::exists("lp-ptxas-pwned"));
}

TEST(Ptxas, APtxIsaNewerThanThePtxasReadsIsIncompatibleNotAnError) {
  const std::optional<std::string> root = tools::toolkit_root();
  if (!root) {
    GTEST_SKIP() << "skipped: no CUDA toolkit ptxas";
  }
  // The fixture with a PTX ISA version no ptxas reads, as Triton 3.9's 9.4 is to ptxas 13.0.
  std::string ptx = read_file(k_ptx);
  const std::size_t at = ptx.find(".version ");
  ASSERT_NE(at, std::string::npos);
  ptx.replace(at, ptx.find('\n', at) - at, ".version 99.9");
  const PtxasInfo info = resolve_ptxas(*root + "/bin/ptxas");
  try {
    (void)compile_with_ptxas(info, ptx, "fixture");
    FAIL() << "ptxas compiled .version 99.9";
  } catch (const IncompatiblePtx& e) {
    EXPECT_EQ(e.reason().rfind("the PTX is .version 99.9; ptxas " + info.version + " reads up to ", 0), 0U)
        << e.reason();
    EXPECT_NE(std::string(e.what()).find("a newer ptxas is needed"), std::string::npos) << e.what();
  }
  // Any other refusal stays an error of the compile.
  std::string broken = read_file(k_ptx);
  broken.replace(broken.find(".entry"), 6, ".entry_not_a_directive");
  try {
    (void)compile_with_ptxas(info, broken, "fixture");
    FAIL() << "ptxas compiled a broken PTX";
  } catch (const IncompatiblePtx& e) {
    FAIL() << "a syntax error is not an incompatible pairing: " << e.what();
  } catch (const Error&) {
  }
}

TEST(Ptxas, TritonIsTheBundledPtxasOfTheSetFoundBySha256) {
  const std::optional<std::string> root = tools::toolkit_root();
  if (!root) {
    GTEST_SKIP() << "skipped: no CUDA toolkit ptxas";
  }
  // A tools folder laid out as scripts/install_tools.sh triton-ptxas does, holding a
  // copy of the toolkit's ptxas as "Triton 9.9.9's bundled ptxas".
  const TempDir tools_root("lp-triton-ptxas-");
  const fs::path bundled = fs::path(tools_root.path()) / "triton-ptxas" / "9.9.9" / "ptxas";
  fs::create_directories(bundled.parent_path());
  fs::copy_file(*root + "/bin/ptxas", bundled);
  const std::string digest = sha256_file_hex(bundled.string());
  const ScopedEnv tools_dir("LP_TOOLS_DIR", tools_root.path());
  const PtxasInfo info = resolve_bundled_ptxas({"9.9.9", "triton/backends/nvidia/bin/ptxas", digest});
  EXPECT_EQ(info.spec, "triton");
  EXPECT_EQ(info.path, bundled.string());
  EXPECT_EQ(info.sha256, digest);
  try {
    (void)resolve_bundled_ptxas({"9.9.9", "triton/backends/nvidia/bin/ptxas", std::string(64, '0')});
    ADD_FAILURE() << "another binary was taken for the bundled one";
  } catch (const EnvironmentError& e) {  // a tool missing: exit 3, as a missing nvdisasm is
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("ptxas=triton: the ptxas Triton 9.9.9 bundles (triton/backends/nvidia/bin/ptxas, sha256 "
                         "000000000000) is not here; looked in " + bundled.string() + " (another binary), ",
                         0),
              0U)
        << what;
    EXPECT_NE(what.find("scripts/install_tools.sh triton-ptxas installs it"), std::string::npos) << what;
  }
}

TEST(Ptxas, TheBundledPtxasIsFoundInThePtxasMatrixByItsVersionAndSha256) {
  const std::optional<std::string> root = tools::toolkit_root();
  if (!root) {
    GTEST_SKIP() << "skipped: no CUDA toolkit ptxas";
  }
  // Triton 3.6-3.8 bundle NVIDIA's ptxas byte for byte: the matrix's copy of that
  // version is the bundled one when its sha256 says so, and only then.
  const TempDir tools_root("lp-matrix-ptxas-");
  const fs::path matrix = fs::path(tools_root.path()) / "ptxas" / "9.9.1" / "ptxas";
  fs::create_directories(matrix.parent_path());
  fs::copy_file(*root + "/bin/ptxas", matrix);
  const std::string digest = sha256_file_hex(matrix.string());
  const ScopedEnv tools_dir("LP_TOOLS_DIR", tools_root.path());
  const std::string words = "Cuda compilation tools, release 9.9, V9.9.1";
  const PtxasInfo info = resolve_bundled_ptxas({"9.9.9", "triton/backends/nvidia/bin/ptxas", digest, words});
  EXPECT_EQ(info.spec, "triton");
  EXPECT_EQ(info.path, matrix.string());
  EXPECT_THROW((void)resolve_bundled_ptxas({"9.9.9", "triton/backends/nvidia/bin/ptxas", std::string(64, '0'), words}),
               EnvironmentError);
  // Without the version the matrix is not searched.
  EXPECT_THROW((void)resolve_bundled_ptxas({"9.9.9", "triton/backends/nvidia/bin/ptxas", digest}), EnvironmentError);
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

TEST(Ptxas, AVersionPrefixIsTheNewestInstalledReleaseItNames) {
  // Folders as scripts/install_tools.sh lays them out, each with a stand-in ptxas that
  // only says its version. 13.10 is newer than 13.9: ordered as releases, not as text.
  const TempDir tools_root("lp-ptxas-versions-");
  for (const char* version : {"13.9.1", "13.10.2", "13.1.5", "13.x"}) {
    const fs::path ptxas = fs::path(tools_root.path()) / "ptxas" / version / "ptxas";
    fs::create_directories(ptxas.parent_path());
    const std::string release = std::string(version).substr(0, std::string(version).rfind('.'));
    write_file_atomic(ptxas.string(), fmt::format("#!/bin/sh\necho 'ptxas: NVIDIA (R) Ptx optimizing assembler'\n"
                                           "echo 'Cuda compilation tools, release {}, V{}'\n",
                                           release, version));
    fs::permissions(ptxas, fs::perms::owner_all);
  }
  const ScopedEnv tools_dir("LP_TOOLS_DIR", tools_root.path());
  EXPECT_EQ(resolve_ptxas("13").version, "13.10.2");
  EXPECT_EQ(resolve_ptxas("13.1").version, "13.1.5");  // not 13.10.2: a prefix ends at a dot
  EXPECT_EQ(resolve_ptxas("13.9.1").version, "13.9.1");
  try {
    (void)resolve_ptxas("14");
    FAIL() << "ptxas=14 resolved";
  } catch (const EnvironmentError& e) {  // the list, oldest first; a name that is no release first of all
    EXPECT_EQ(std::string(e.what()),
              "ptxas=14: not a path, 'toolkit', 'triton', or a version installed under " + tools_root.path() +
                  "/ptxas (installed: 13.x, 13.1.5, 13.9.1, 13.10.2)");
  }
}

TEST(Ptxas, UnknownSpecNamesWhatIsAvailable) {
  try {
    resolve_ptxas("99.9");
    FAIL();
  } catch (const EnvironmentError& e) {  // a version not installed is the machine's, not a typo
    EXPECT_EQ(std::string(e.what()).rfind("ptxas=99.9: not a path, 'toolkit', 'triton', or a version installed under ", 0),
              0U)
        << e.what();
  }
  EXPECT_THROW(resolve_ptxas("/nonexistent/ptxas"), UsageError);
  EXPECT_THROW(resolve_ptxas("latest"), UsageError);  // a misspelt spec stays the user's
}

}  // namespace
}  // namespace lp::compile
