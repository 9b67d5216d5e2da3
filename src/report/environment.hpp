#pragma once
// The host part of a report's environment record; the toolkit and compilers come
// from compile/toolchain, the GPU from cuda/.

#include <nlohmann/json_fwd.hpp>

namespace lp::report {

/// {"hostname", "os", "kernel", "cpus"} of this machine.
nlohmann::json host_record();

}  // namespace lp::report
