#include "report/environment.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <array>
#include <thread>

#include <nlohmann/json.hpp>

namespace lp::report {

nlohmann::json host_record() {
  std::array<char, 256> name{};
  if (::gethostname(name.data(), name.size() - 1) != 0) {
    name[0] = '\0';
  }
  struct utsname uts {};
  ::uname(&uts);
  return {{"hostname", name.data()},
          {"os", uts.sysname},
          {"kernel", uts.release},
          {"machine", uts.machine},
          {"cpus", std::thread::hardware_concurrency()}};
}

}  // namespace lp::report
