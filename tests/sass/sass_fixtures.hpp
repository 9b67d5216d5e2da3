// What the SASS tests share (they compile as one unit, so each helper is here once):
// the committed files of our expand kernel (tests/sass/fixtures), and an nvdisasm
// when one is installed.
#pragma once

#include <optional>
#include <string>

#include "sass/nvdisasm.hpp"
#include "util/error.hpp"
#include "util/files.hpp"

namespace lp::sass::fixtures {

/// The committed fixture `name` (an id and its extension: ".cubin", ".sass", ".json").
inline std::string fixture(const std::string& name) {
  return read_file(std::string(LP_SOURCE_DIR) + "/tests/sass/fixtures/" + name);
}

/// An nvdisasm to run, or nullopt (the calling test then says it skipped).
inline std::optional<Nvdisasm> any_nvdisasm() {
  try {
    return find_nvdisasm();
  } catch (const EnvironmentError&) {
    return std::nullopt;
  }
}

}  // namespace lp::sass::fixtures
