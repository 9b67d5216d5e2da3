#pragma once
// The dual-stream hazard of triton-lang/triton #11905, on PTX: a global load of a
// buffer the previous grid produces, on a path from the kernel's entry that does
// not pass a `griddepcontrol.wait`. With programmatic dependent launch the kernel
// may start while the previous grid still writes that buffer; only the wait orders
// the two. vLLM's dual-stream expand loads the LoRA weights before its wait on
// purpose (they are not produced by the shrink), so which parameters are produced
// is the caller's contract (the manifest's `produced`, or --produced).
//
// Which buffer a load reads: the parameters its address derives from. A register
// takes the parameters of every operand of the instruction that writes it
// (`ld.param` of parameter N gives N), except that a value loaded from memory
// derives from no parameter: an index read from a table is data, not an address
// into that table. PTX registers are virtual and nearly all written once, so one
// set per register (the union over every write) is exact for Triton's PTX and can
// only add findings otherwise.
//
// Loads: `ld` and `ldu` of the global or generic space, `atom` (it reads too), and
// every `cp.async` form (its source operand). A guarded wait may be skipped, so it
// does not end a path. A function with no `griddepcontrol.wait` is not checked: it
// was not written to be launched early.

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ptx/parse.hpp"

namespace lp::ptx {

/// Produced parameters of one function: PTX parameter ordinal (N of `<fn>_param_N`)
/// -> the name a report shows.
using ProducedParams = std::map<int, std::string>;

/// One load that may run before the wait.
struct EarlyRead {
  std::string function;
  int line = 0;              ///< 1-based line of the load
  std::string instruction;   ///< its text (whitespace collapsed)
  std::string param;         ///< the produced parameter its address derives from (the first, by ordinal)
  int wait_line = 0;         ///< the function's first griddepcontrol.wait, in listing order
  std::string wait_instruction;
};

/// What the pass saw of one function.
struct EarlyReadScan {
  std::size_t waits = 0;              ///< griddepcontrol.wait statements
  std::size_t launch_dependents = 0;  ///< griddepcontrol.launch_dependents statements
  std::vector<EarlyRead> findings;    ///< in listing order
};

/// Runs the pass on one parsed function. `source` names the text in errors (a
/// branch to a missing label: lp::sass::ListingError).
EarlyReadScan find_early_reads(const Function& f, const ProducedParams& produced, std::string_view source);

}  // namespace lp::ptx
