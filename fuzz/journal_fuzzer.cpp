// libFuzzer target: the sweep journal reader (src/report/journal), which reads what
// --resume is given: a file the user names, torn by a crash or not a journal at all.
// Any input must be read or refused with lp::InputError / lp::UsageError (one line,
// exit 2); anything else (json exceptions, std::out_of_range, a crash) is a bug.

#include <cstddef>
#include <cstdint>
#include <string>

#include "report/journal.hpp"
#include "util/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // read_journal reads a path: one scratch file in the working directory (scripts/fuzz.sh
  // runs in the fuzz build folder), the same name every run so that the messages that
  // quote it, and so the gate's coverage, do not depend on a pid or a temporary name.
  static const std::string path = "journal-fuzz-input.jsonl";
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) {
    return 0;
  }
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  try {
    const lp::report::JournalContents c = lp::report::read_journal(path);
    static_cast<void>(c.cases.size());
  } catch (const lp::UsageError&) {
    // InputError (file:line: message) or UsageError: refused as bad input.
  }
  std::remove(path.c_str());
  return 0;
}
