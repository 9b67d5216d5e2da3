#pragma once
// What the sweep's fake-worker tests share (runner_cpu_test.cpp, shards_cpu_test.cpp):
// the six-case config they sweep, the request that runs the fake worker, and a line
// reader for its log.

#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "sweep/runner.hpp"

namespace lp::sweep::fake_worker {

/// Six cases: block_n 128 (a hazard in its SASS) and 32 (clean), 16/32/64 tokens.
inline constexpr const char* k_config = R"({
  "name": "fake-worker",
  "axes": {"triton": ["3.6.0"], "op": ["expand"], "input_dtype": ["fp32"], "weight_dtype": ["bf16"],
           "num_slices": [1], "hidden": [4096], "ranks": [64], "num_loras": [1], "add_inputs": [true],
           "block_m": [64], "block_n": [128, 32], "block_k": [32], "num_warps": [4], "num_stages": [2],
           "compilers": ["prebuilt"], "tokens": [16, 32, 64]},
  "repeats": 2, "seed": 48590})";

/// A sweep request writing `out` with tests/sweep/fake_worker.py as its worker: no
/// progress line, 2 CPU threads, 20 s per case (tests change what they need).
inline SweepRequest request(const std::string& out) {
  SweepRequest r;
  r.argv = {"loraprobe", "sweep"};
  r.out = out;
  r.worker_exe = std::string(LP_SOURCE_DIR) + "/tests/sweep/fake_worker.py";
  r.case_timeout = std::chrono::seconds(20);
  r.progress = false;
  r.jobs = 2;
  return r;
}

/// The lines of a file (the fake worker's log: "start ...", "run I ...").
inline std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) {
    out.push_back(line);
  }
  return out;
}

}  // namespace lp::sweep::fake_worker
