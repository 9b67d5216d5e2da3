#pragma once
// The typed records a report carries from other libraries (report/carried.hpp says
// how they are kept), as every report version since 2.0 holds them. Each is read once,
// by its from_json in records.cpp.
//
// The environment records (host, toolkit, GPU, compilers, cache, a set's bundled
// ptxas) and the config are read as the converters always drew them: a key that is
// absent, null or of another type reads as absent (nullopt), never as an error, since
// 2.x and 3.x records differ in their keys and a report may come from anyone; what is
// there is still only ever what the document says. The SASS analysis, the race tally,
// a merge's record and how an image was built are read strictly: a value of the wrong
// type is refused at its pointer.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "util/json_in.hpp"

namespace lp::report {

/// A text a record may lack.
using Text = std::optional<std::string>;

/// environment.host (report/environment.hpp HostRecord writes it).
struct ReportedHost {
  Text hostname;
  Text os;
  Text kernel;
  Text machine;
  std::optional<std::int64_t> cpus;

  static ReportedHost from_json(const JsonIn& j);
};

/// environment.toolkit (compile::ToolkitRecord writes it).
struct ReportedToolkit {
  Text version;
  Text root;
  Text origin;
  Text build_version;

  static ReportedToolkit from_json(const JsonIn& j);
};

/// environment.gpu and gpus[] (protocol::GpuRecord writes it; 2.x lacks some keys).
struct ReportedGpu {
  Text name;
  Text uuid;
  Text compute_capability;
  Text driver_version;
  Text driver_cuda_version;
  Text runtime_version;
  Text cublas_version;
  std::optional<std::int64_t> sm_count;
  double total_memory_bytes = 0.0;  ///< 0 when not recorded

  static ReportedGpu from_json(const JsonIn& j);
};

/// A ptxas as a record names it: a compiler's (compilers[].ptxas), a set's bundled one
/// (kernel_sets[].ptxas, as its manifest records it).
struct ReportedPtxas {
  Text version;  ///< 3.x: "12.8.93"; 2.x and manifests: ptxas's own words
  Text sha256;

  static ReportedPtxas from_json(const JsonIn& j);
};

/// environment.compilers[] (compile::CompilerRecord writes it; 2.x kept the sha256 on
/// the record and the version in ptxas's words), and an inspect document's compilers.
struct ReportedCompiler {
  Text name;
  Text triton;   ///< absent for a user's files
  Text version;  ///< as recorded
  Text error;    ///< why it could not be used
  std::optional<ReportedPtxas> ptxas;  ///< 3.x: the binary
  Text sha256;                         ///< 2.x: the binary's, on the record
  /// The ptxas options (anything but a string as its JSON text).
  std::vector<std::string> options;

  /// The binary's sha256 in either version's place.
  [[nodiscard]] Text ptxas_sha256() const { return ptxas && ptxas->sha256 ? ptxas->sha256 : sha256; }
  static ReportedCompiler from_json(const JsonIn& j);
};

/// environment.inspection_cache (inspect::CacheStats writes it).
struct ReportedCache {
  bool enabled = false;
  Text root;
  std::optional<std::int64_t> sass_hits;
  std::optional<std::int64_t> sass_misses;

  static ReportedCache from_json(const JsonIn& j);
};

/// meta.config: the resolved config (plan::SweepConfig writes it, each setting with its
/// origin); the parts a report's reader uses.
struct ReportedConfig {
  Text name;
  Text source;  ///< the file it came from

  static ReportedConfig from_json(const JsonIn& j);
};

/// One wgmma finding of a SASS analysis (sass/analyze.hpp's JSON form).
struct ReportedFinding {
  std::string address;  ///< "" when absent, as every text below
  std::string instruction;
  std::string access;  ///< "read" or "write"
  std::vector<std::string> registers;
  bool over_back_edge = false;
  std::string wgmma_address;
  std::string wgmma_instruction;
  bool has_wait = false;  ///< a wait that leaves the MMA in flight
  std::string wait_address;
  std::string wait_instruction;
};

/// One gdc-early-read finding of a SASS analysis.
struct ReportedEarlyRead {
  Text address;
  Text instruction;
  Text param;
  Text wait_address;
  Text wait_instruction;
};

/// One kernel of a SASS analysis.
struct ReportedKernel {
  std::vector<ReportedFinding> findings;
  std::vector<ReportedEarlyRead> early_reads;
  /// The first finding and early read as the document wrote them (JUnit quotes them).
  Text first_finding_json;
  Text first_early_read_json;
};

/// The nvdisasm that disassembled it.
struct ReportedDisassembler {
  Text version;
  Text sha256;
  Text origin;
};

/// A SASS analysis (sass::CubinReport's JSON form): a variant's `sass`, an inspect
/// item's. Each part that is there has its type, or it is refused at its pointer;
/// addresses are "0x" and hex digits.
struct ReportedSass {
  std::vector<ReportedKernel> kernels;
  std::optional<ReportedDisassembler> disassembler;  ///< when recorded as an object

  static ReportedSass from_json(const JsonIn& j);
};

/// controls.race.result: what the race-control kernel produced (protocol::RaceResult
/// writes it); a count it lacks reads as 0.
struct RaceTally {
  std::uint64_t ctas = 0;
  std::uint64_t launches = 0;
  std::uint64_t tiles = 0;
  std::uint64_t late_tiles = 0;
  std::uint64_t late_elements = 0;
  std::uint64_t launches_with_late = 0;
  std::uint64_t unwritten = 0;
  std::map<std::string, std::uint64_t> values;  ///< each written value (as its JSON key), with its count

  static RaceTally from_json(const JsonIn& j);
};

}  // namespace lp::report
