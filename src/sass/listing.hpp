#pragma once
// Disassembly listings -> per-function instruction lists. Two front-ends:
//  - text: what `nvdisasm -c [-hex]` prints (also `cuobjdump -sass`), one
//    instruction per line with its /*address*/, labels, .section directives;
//  - JSON: what `nvdisasm -json` prints. Only nvdisasm 13.5 and later print it
//    faithfully: 12.8 to 13.4 drop the comma before a memory operand
//    ("LDS.64 R92[R109+UR6+0x4000]") and 12.8 even moves it to the end of an
//    LDGSTS, so parse_json_listing refuses such output (UnreliableJsonError) and
//    the caller falls back to text.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "sass/instruction.hpp"

namespace lp::sass {

/// One function (kernel or device function) of a listing.
struct KernelListing {
  std::string name;
  std::vector<Instruction> instructions;  ///< in address order
  /// Label -> address of the instruction that follows it (or one past the last).
  std::map<std::string, std::uint64_t> labels;
};

/// Everything a listing says that the analysis uses.
struct Listing {
  std::string arch;      ///< "sm_90a", "sm_90", ...; empty when the listing does not say
  std::string producer;  ///< nvdisasm's own version line (JSON only), else empty
  std::vector<KernelListing> kernels;
};

/// Parses nvdisasm text output (`nvdisasm -c`, with or without -hex) or
/// `cuobjdump -sass` output. `source` names the input in errors. A listing whose
/// instructions carry no enclosing `.section .text.<name>` / `Function : <name>`
/// is one function named "<source>". Throws ListingError naming the line.
Listing parse_text_listing(std::string_view text, std::string_view source);

/// nvdisasm -json printed something that is not the instruction stream (see the
/// file comment): use the text listing instead.
class UnreliableJsonError : public ListingError {
 public:
  using ListingError::ListingError;
};

/// Parses `nvdisasm -json` output. Throws UnreliableJsonError for the malformed
/// operand lists of nvdisasm < 13.5, ListingError for anything else malformed
/// (the line number is the 1-based instruction index within its function).
Listing parse_json_listing(std::string_view text, std::string_view source);

}  // namespace lp::sass
