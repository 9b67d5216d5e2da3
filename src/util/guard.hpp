#pragma once
// The one place where an error ends loraprobe (main calls it once): the exit-code
// contract of README "Exit codes" in code.

#include <cstdio>
#include <functional>

namespace lp {

/// Runs `body` and returns its exit status. An lp::Fatal prints "loraprobe: <what>"
/// and returns its code (2 bad input, 3 environment); running out of memory
/// (std::bad_alloc) prints "loraprobe: out of memory ..." and returns 3; anything
/// else, an lp::Error nobody recorded included, is a bug in loraprobe: it prints
/// "loraprobe: internal error: <what>" and a request for a bug report, and returns 4.
/// Every message goes through escape::terminal (it quotes documents' values).
int run_guarded(const std::function<int()>& body, std::FILE* err = stderr);

}  // namespace lp
