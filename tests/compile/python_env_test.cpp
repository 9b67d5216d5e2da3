// Where a pip-installed loraprobe finds its tools: the nvidia-* wheels of the Python
// environment it was installed in (tools::site_dirs_of_prefix, nvidia_roots_in),
// built as a venv would lay them out, without Python.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tools/tools.hpp"
#include "util/files.hpp"

namespace lp::tools {
namespace {

namespace fs = std::filesystem;

void touch(const fs::path& file) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << "x";
}

TEST(PythonEnv, TheSiteFoldersOfAPrefixAreItsLibPython3Ones) {
  const TempDir venv("lp-venv-");
  const fs::path root(venv.path());
  fs::create_directories(root / "lib/python3.12/site-packages");
  fs::create_directories(root / "lib64/python3.9/site-packages");
  fs::create_directories(root / "lib/python2.7/site-packages");  // not a python3
  fs::create_directories(root / "lib/perl5/site-packages");
  fs::create_directories(root / "lib/python3.12/dist-packages");
  const std::vector<std::string> sites = site_dirs_of_prefix(root.string());
  const std::vector<std::string> expected = {(root / "lib/python3.12/dist-packages").string(),
                                             (root / "lib/python3.12/site-packages").string(),
                                             (root / "lib64/python3.9/site-packages").string()};
  EXPECT_EQ(sites, expected);
  EXPECT_TRUE(site_dirs_of_prefix((root / "missing").string()).empty());
}

TEST(PythonEnv, NvidiaWheelRootsAreFoundInSiteOrderThenByName) {
  const TempDir scratch("lp-sites-");
  const fs::path first = fs::path(scratch.path()) / "first";
  const fs::path second = fs::path(scratch.path()) / "second";
  // CUDA 13 wheels share nvidia/cu13; CUDA 12 ones have a folder per package.
  touch(first / "nvidia/cu13/bin/ptxas");
  touch(first / "nvidia/cu13/bin/nvdisasm");
  touch(first / "nvidia/cuda_nvcc/bin/ptxas");
  touch(first / "nvidia/cublas/lib/libcublas.so.12");
  touch(second / "nvidia/cu13/bin/ptxas");
  touch(second / "nvidia/cu13/lib/libcublas.so.13");
  const std::vector<std::string> sites = {first.string(), second.string(),
                                          (fs::path(scratch.path()) / "no-such-site").string()};

  const std::vector<ToolRoot> ptxas = nvidia_roots_in(sites, "bin/ptxas");
  ASSERT_EQ(ptxas.size(), 3U);
  EXPECT_EQ(ptxas[0].root, (first / "nvidia/cu13").string());
  EXPECT_EQ(ptxas[1].root, (first / "nvidia/cuda_nvcc").string());
  EXPECT_EQ(ptxas[2].root, (second / "nvidia/cu13").string());
  EXPECT_EQ(ptxas[0].origin, "python env " + first.string());
  EXPECT_EQ(ptxas[2].origin, "python env " + second.string());

  const std::vector<ToolRoot> cublas13 = nvidia_roots_in(sites, "lib/libcublas.so.13");
  ASSERT_EQ(cublas13.size(), 1U);
  EXPECT_EQ(cublas13[0].root, (second / "nvidia/cu13").string());
  EXPECT_EQ(nvidia_roots_in(sites, "lib/libcublas.so.12").size(), 1U);
  EXPECT_TRUE(nvidia_roots_in(sites, "bin/nvcc").empty());
}

}  // namespace
}  // namespace lp::tools
