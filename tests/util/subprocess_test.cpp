#include "util/subprocess.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "util/error.hpp"
#include "util/files.hpp"
#include "util/sha256.hpp"

namespace lp {
namespace {

TEST(Subprocess, CapturesStdoutStderrAndExitCode) {
  const ProcessResult r = run_process({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.describe(), "exit 3");
}

TEST(Subprocess, ArgumentsAreNotInterpretedByAShell) {
  // Each argument arrives verbatim: no globbing, no substitution, no word splitting.
  const std::string nasty = "a b; rm -rf / $(touch /tmp/lp-pwned) `id` *";
  const ProcessResult r = run_process({"/usr/bin/printf", "%s|", nasty, "x"});
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.out, nasty + "|x|");
  EXPECT_FALSE(std::filesystem::exists("/tmp/lp-pwned"));
}

TEST(Subprocess, ProgramPathWithSpacesAndMetacharacters) {
  const auto dir = std::filesystem::temp_directory_path() / "lp dir ;$(x) &";
  std::filesystem::create_directories(dir);
  const auto tool = dir / "fake tool";
  {
    std::ofstream f(tool);
    f << "#!/bin/sh\necho \"ran:$1\"\n";
  }
  std::filesystem::permissions(tool, std::filesystem::perms::owner_all);
  const ProcessResult r = run_process({tool.string(), "--version"});
  EXPECT_TRUE(r.ok()) << r.err;
  EXPECT_EQ(r.out, "ran:--version\n");
  std::filesystem::remove_all(dir);
}

TEST(Subprocess, TimeoutKillsTheProcessGroup) {
  ProcessOptions options;
  options.timeout = std::chrono::milliseconds(300);
  options.grace = std::chrono::milliseconds(200);
  const auto start = std::chrono::steady_clock::now();
  const ProcessResult r = run_process({"/bin/sh", "-c", "trap '' TERM; sleep 30 & wait"}, options);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.ok());
  EXPECT_LT(elapsed, std::chrono::seconds(10));
}

TEST(Subprocess, OutputIsCapped) {
  ProcessOptions options;
  options.max_output = 100;
  const ProcessResult r = run_process({"/bin/sh", "-c", "head -c 100000 /dev/zero"}, options);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.out.size(), 100U);
  EXPECT_TRUE(r.out_truncated);
}

TEST(Subprocess, CleanEnvironmentDropsOurVariables) {
  ::setenv("LP_SECRET_FOR_TEST", "leak", 1);
  ProcessOptions options;
  options.environment = clean_environment();
  const ProcessResult r = run_process({"/usr/bin/env"}, options);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.out.find("LP_SECRET_FOR_TEST"), std::string::npos);
  EXPECT_NE(r.out.find("LC_ALL=C"), std::string::npos);
}

TEST(Subprocess, StdinIsFed) {
  ProcessOptions options;
  options.stdin_data = "hello";
  const ProcessResult r = run_process({"/bin/cat"}, options);
  EXPECT_EQ(r.out, "hello");
}

TEST(Subprocess, WorkingDirectory) {
  const TempDir dir("lp-subprocess-cwd-");
  ProcessOptions options;
  options.working_directory = dir.path();
  const ProcessResult r = run_process({"/bin/pwd", "-P"}, options);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.out, std::filesystem::canonical(dir.path()).string() + "\n");
  options.working_directory = dir.path() + "/missing";
  EXPECT_THROW(run_process({"/bin/pwd"}, options), Error);
}

TEST(Subprocess, MissingProgramThrows) {
  EXPECT_THROW(run_process({"/nonexistent/ptxas"}), Error);
  EXPECT_FALSE(find_executable("/nonexistent/ptxas").has_value());
  EXPECT_TRUE(find_executable("sh").has_value());
}

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Files, AtomicWriteThenReadBack) {
  const auto path = (std::filesystem::temp_directory_path() / "lp-atomic-test.txt").string();
  write_file_atomic(path, "first");
  write_file_atomic(path, "second");
  EXPECT_EQ(read_file(path), "second");
  EXPECT_EQ(sha256_file_hex(path), sha256_hex("second"));
  std::filesystem::remove(path);
  EXPECT_THROW(read_file(path), UsageError);
}

TEST(Files, AProducedFileIsWrittenPieceByPieceAndAFailedProducerLeavesTheTargetAsItWas) {
  const TempDir dir("lp-atomic-produce-");
  const std::string path = dir.path() + "/out.txt";
  write_file_atomic(path, "kept");
  // Many small pieces and one larger than the buffer: all of them, in order.
  const std::string big(3U << 20U, 'x');
  write_file_atomic(path, [&](const TextSink& sink) {
    for (int i = 0; i < 100000; ++i) {
      sink("ab");
    }
    sink(big);
    sink("end");
  });
  std::string want;
  for (int i = 0; i < 100000; ++i) {
    want += "ab";
  }
  want += big + "end";
  EXPECT_EQ(read_file(path), want);
  write_file_atomic(path, "kept");
  EXPECT_THROW(write_file_atomic(path,
                                 [&](const TextSink& sink) {
                                   sink(big);  // already on disk in the temporary file
                                   throw InputError(path, "/cases/7", "a record that cannot be written");
                                 }),
               InputError);
  EXPECT_EQ(read_file(path), "kept");
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    ++files;
  }
  EXPECT_EQ(files, 1U) << "the temporary file was left behind";
}

// Issue 53: a kernel-dir pack linked to /dev/zero was read for 1 GiB before it was
// refused, and a FIFO named as a manifest or tuned file blocked the run. Every input is
// read by read_file, which refuses what is not a regular file before opening it.
TEST(Files, WhatIsNotARegularFileIsRefusedBeforeItIsRead) {
  const TempDir dir("lp-read-kinds-");
  const std::string fifo = dir.path() + "/manifest.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string zero = dir.path() + "/set.pack.xz";
  std::filesystem::create_symlink("/dev/zero", zero);
  auto error = [](const std::function<void()>& read) {
    try {
      read();
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  // The FIFO has no writer: opening it for reading would block.
  EXPECT_EQ(error([&] { (void)read_file(fifo); }), fifo + ": cannot read: it is a FIFO, not a regular file");
  EXPECT_EQ(error([&] { (void)read_file(zero, 1 << 20); }),
            zero + ": cannot read: it is a character device, not a regular file");
  EXPECT_EQ(error([&] { (void)read_file(dir.path()); }),
            dir.path() + ": cannot read: it is a folder, not a regular file");
  EXPECT_EQ(error([&] { (void)regular_file_size(zero); }),
            zero + ": cannot read: it is a character device, not a regular file");
  EXPECT_EQ(error([&] { (void)read_file_chunks(fifo, 100, [](std::string_view) { return true; }); }),
            fifo + ": cannot read: it is a FIFO, not a regular file");
  EXPECT_THROW((void)sha256_file_hex(fifo), Error);
  // A regular file: its size, its contents (in chunks, stopped early on request), its limit.
  const std::string file = dir.write("file.txt", std::string(200000, 'x'));
  EXPECT_EQ(regular_file_size(file), 200000U);
  EXPECT_EQ(read_file(file).size(), 200000U);
  std::size_t chunks = 0;
  read_file_chunks(file, 200000, [&](std::string_view piece) {
    EXPECT_LE(piece.size(), 65536U);
    return ++chunks < 2;
  });
  EXPECT_EQ(chunks, 2U);
  EXPECT_EQ(error([&] { (void)read_file(file, 1000); }), file + ": cannot read: 200000 bytes is over the limit of 1000");
}

}  // namespace
}  // namespace lp
