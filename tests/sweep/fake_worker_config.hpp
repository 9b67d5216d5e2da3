#pragma once
// What the sweep's fake-worker tests share (runner_cpu_test.cpp, shards_cpu_test.cpp):
// the six-case config they sweep and a line reader for the fake worker's log.

#include <fstream>
#include <string>
#include <vector>

namespace lp::sweep::fake_worker {

/// Six cases: block_n 128 (a hazard in its SASS) and 32 (clean), 16/32/64 tokens.
inline constexpr const char* k_config = R"({
  "name": "fake-worker",
  "axes": {"triton": ["3.6.0"], "op": ["expand"], "input_dtype": ["fp32"], "weight_dtype": ["bf16"],
           "num_slices": [1], "hidden": [4096], "ranks": [64], "num_loras": [1], "add_inputs": [true],
           "block_m": [64], "block_n": [128, 32], "block_k": [32], "num_warps": [4], "num_stages": [2],
           "compilers": ["prebuilt"], "tokens": [16, 32, 64]},
  "repeats": 2, "seed": 48590})";

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
