// What the SASS tests share (they compile as one unit, so each helper is here once):
// the committed files of our expand kernel (tests/sass/fixtures); an nvdisasm when
// one is installed is support/nvdisasm.hpp's.
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

}  // namespace lp::sass::fixtures
