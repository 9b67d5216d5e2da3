#include "sweep/phases.hpp"

#include <array>
#include <utility>


namespace lp::sweep {

std::map<std::string, double> Phases::seconds() const {
  const std::array<std::pair<const char*, std::optional<double> Phases::*>, 18> fields = {{
      {"kernel_sets", &Phases::kernel_sets},
      {"plan", &Phases::plan},
      {"entries", &Phases::entries},
      {"images", &Phases::images},
      {"worker_start", &Phases::worker_start},
      {"journal", &Phases::journal},
      {"controls", &Phases::controls},
      {"cases", &Phases::cases},
      {"worker_stop", &Phases::worker_stop},
      {"records", &Phases::records},
      {"total", &Phases::total},
      {"jobs_round_trip", &Phases::jobs_round_trip},
      {"jobs_in_worker", &Phases::jobs_in_worker},
      {"jobs_recording", &Phases::jobs_recording},
      {"static_inspection", &Phases::static_inspection},
      {"static_inspection_wait", &Phases::static_inspection_wait},
      {"gpu_kernels", &Phases::gpu_kernels},
      {"gpu_references", &Phases::gpu_references},
  }};
  std::map<std::string, double> j;
  for (const auto& [name, member] : fields) {
    if (const std::optional<double>& seconds = this->*member) {
      j[name] = *seconds;
    }
  }
  return j;
}

}  // namespace lp::sweep
