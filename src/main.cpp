// loraprobe entry point: parse everything first, dispatch one subcommand, and
// catch every error once, here.

#include <cstdio>
#include <exception>

#include <fmt/format.h>

#include "cli/app.hpp"
#include "util/error.hpp"

int main(int argc, char** argv) {
  try {
    return lp::cli::run_app(argc, argv);
  } catch (const lp::Fatal& e) {
    fmt::print(stderr, "loraprobe: {}\n", e.what());
    return static_cast<int>(e.code());
  } catch (const lp::Error& e) {
    fmt::print(stderr, "loraprobe: {}\n", e.what());
    return static_cast<int>(lp::ExitCode::environment);
  } catch (const std::exception& e) {
    fmt::print(stderr, "loraprobe: internal error: {}\n", e.what());
    return static_cast<int>(lp::ExitCode::environment);
  }
}
