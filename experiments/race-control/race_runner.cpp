// Runs race-control cubins (kernels/race/gen_race_ptx.py, compiled by ptxas) on
// the GPU through the same code the sweep's race control uses
// (sweep/race_control.hpp), and prints one JSON line per cubin.
//
//   race_runner [--ctas N] [--launches N] FILE.cubin...
//
// A tile is late when any of its elements differs from 64.0 (the A the wgmma was
// issued with); the values seen are counted, so one can tell which A was read.

#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cuda/context.hpp"
#include "cuda/driver.hpp"
#include "cuda/stream.hpp"
#include "worker/race_kernel.hpp"
#include "util/files.hpp"

namespace {

struct Options {
  unsigned ctas = lp::protocol::k_race_ctas;
  unsigned launches = 50;
  std::vector<std::string> files;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto number = [&](const char* flag) -> unsigned {
      if (i + 1 >= argc) {
        throw std::runtime_error(fmt::format("{} needs a value", flag));
      }
      const long v = std::stol(argv[++i]);
      if (v < 1 || v > 1'000'000) {
        throw std::runtime_error(fmt::format("{} {}: expected 1..1000000", flag, v));
      }
      return static_cast<unsigned>(v);
    };
    if (arg == "--ctas") {
      o.ctas = number("--ctas");
    } else if (arg == "--launches") {
      o.launches = number("--launches");
    } else {
      o.files.push_back(arg);
    }
  }
  if (o.files.empty()) {
    throw std::runtime_error("usage: race_runner [--ctas N] [--launches N] FILE.cubin...");
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options o = parse(argc, argv);
    lp::init_driver(false);
    lp::PrimaryContext context(0);
    const lp::Stream stream;
    int failures = 0;
    for (const std::string& file : o.files) {
      nlohmann::json line = {{"file", file}};
      try {
        line.update(lp::protocol::to_json(lp::worker::run_race_kernel(lp::read_file(file, 16U << 20), o.ctas, o.launches, stream)));
        line["late_tile_fraction"] = static_cast<double>(line["late_tiles"].get<std::uint64_t>()) /
                                     static_cast<double>(line["tiles"].get<std::uint64_t>());
      } catch (const std::exception& e) {
        ++failures;
        line["error"] = e.what();
      }
      std::printf("%s\n", line.dump().c_str());
      std::fflush(stdout);
    }
    return failures == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "race_runner: %s\n", e.what());
    return 2;
  }
}
