#include "report/environment.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <array>
#include <thread>

namespace lp::report {

HostRecord host_record() {
  std::array<char, 256> name{};
  if (::gethostname(name.data(), name.size() - 1) != 0) {
    name[0] = '\0';
  }
  struct utsname uts {};
  ::uname(&uts);
  return {name.data(), uts.sysname, uts.release, uts.machine, std::thread::hardware_concurrency()};
}

}  // namespace lp::report
