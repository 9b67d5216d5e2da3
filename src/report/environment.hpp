#pragma once
// The host part of a report's environment record; the toolkit and compilers come
// from compile/toolchain, the GPU from cuda/.

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "util/json_text.hpp"

namespace lp::report {

/// This machine, as a report's environment.host says it.
struct HostRecord {
  std::string hostname;
  std::string os;       ///< uname's sysname: "Linux"
  std::string kernel;   ///< uname's release
  std::string machine;  ///< uname's machine: "x86_64"
  unsigned cpus = 0;    ///< hardware threads
  /// {"hostname", "os", "kernel", "machine", "cpus"} (written in blocks.cpp).
  [[nodiscard]] nlohmann::json to_json() const;
  [[nodiscard]] JsonText to_json_text() const;  ///< to_json() as a report carries it
};

/// This machine's record.
HostRecord host_record();

}  // namespace lp::report
