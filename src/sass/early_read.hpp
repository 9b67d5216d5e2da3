#pragma once
// The gdc-early-read check on SASS (the PTX pass and the hazard are described in
// ptx/early_read.hpp): a global load whose address derives from a produced
// parameter, on a path from the entry that has not passed the acquire that
// lowers `griddepcontrol.wait` (ACQBULK on sm_90; `griddepcontrol.launch_dependents`
// lowers to PREEXIT).
//
// Parameters live in constant bank 0 at the offsets the cubin records
// (cubin.hpp ParamLayout). Which parameters a register's value derives from is a
// forward data-flow analysis over the control-flow graph (registers are reused, so
// unlike the PTX pass it is per program point): an instruction's destinations take
// the parameters of its sources (registers, uniform registers, c[0x0][...] operands
// inside a parameter); LDC/ULDC of a parameter give that parameter; any other load
// gives none (a loaded value is data); a guarded write keeps what was there too;
// paths join by union. Loads checked: LDG, LD, ATOMG, ATOM, LDGSTS, and the bulk
// copies UBLKCP and UTMALDG (their memory operands' registers).

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "sass/cfg.hpp"
#include "sass/cubin.hpp"
#include "sass/listing.hpp"

namespace lp::sass {

/// The check's id and description (--list-checks, --checks, the analysis fingerprint),
/// the same for the PTX and the SASS pass. It is not a row of checks.hpp's table, whose
/// findings are the wgmma hazard's: a report counts its findings apart.
inline constexpr std::string_view k_early_read_id = "gdc-early-read";
inline constexpr std::string_view k_early_read_description =
    "a global load of a buffer the previous grid produces (a produced parameter) on a path from the entry that has "
    "not passed the acquire of griddepcontrol.wait (ACQBULK): with programmatic dependent launch it may read the "
    "buffer before the producer has written it (triton-lang/triton #11905)";

/// The produced parameters as bits of a set (at most 64 are told apart), for the PTX
/// and the SASS pass alike: bit i is the i-th by ordinal.
class ProducedSet {
 public:
  /// `produced`: parameter ordinal -> the name a report shows.
  explicit ProducedSet(const std::map<int, std::string>& produced);
  [[nodiscard]] bool empty() const noexcept { return m_ordinals.empty(); }
  /// The bit of parameter `ordinal`; 0 when it is not produced.
  [[nodiscard]] std::uint64_t bit_of(int ordinal) const noexcept;
  /// The name of the lowest parameter in `bits` (not 0).
  [[nodiscard]] const std::string& first_name(std::uint64_t bits) const;

 private:
  std::vector<int> m_ordinals;
  std::vector<std::string> m_names;
};

/// True when `checks` (AnalysisOptions::checks) selects it: empty (all) or naming it.
bool early_reads_selected(const std::vector<std::string>& checks);

/// One load that may run before the acquire.
struct EarlyRead {
  std::string kernel;
  std::uint64_t address = 0;
  std::string instruction;
  std::string param;                ///< the produced parameter its address derives from (lowest ordinal)
  std::uint64_t wait_address = 0;   ///< the function's first ACQBULK in listing order
  std::string wait_instruction;
};

/// What the pass saw of one function.
struct EarlyReadScan {
  std::size_t waits = 0;              ///< ACQBULK instructions
  std::size_t launch_dependents = 0;  ///< PREEXIT instructions
  std::vector<EarlyRead> findings;    ///< in listing order
};

/// Runs the pass on one function. `produced`: parameter ordinal -> name. Nothing is
/// found when `produced` is empty or the function has no ACQBULK.
EarlyReadScan find_early_reads(const KernelListing& kernel, const ControlFlowGraph& cfg, const ParamLayout& layout,
                               const std::map<int, std::string>& produced);

}  // namespace lp::sass
