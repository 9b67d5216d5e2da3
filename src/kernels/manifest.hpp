#pragma once
// kernels/manifest.json (format_version 2, documented in kernels/README.md and
// kernels/manifest.schema.json): the variants of the kernel set, their launch
// ABI, and where each one's PTX and cubin lie in the pack (kernels/set.pack.xz),
// parsed into typed records.

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "model/axis_values.hpp"
#include "util/json_text.hpp"

namespace lp::kernels {

/// The manifest format scripts/gen_kernels.py writes: 3 stores the manifest
/// xz-compressed (manifest.json.xz) and records the ptxas options Triton ran.
inline constexpr int k_manifest_format_version = 3;
/// The oldest format this build still reads: 2 (an uncompressed manifest.json, no
/// ptxas options), from --kernel-dir sets made by an older scripts/gen_kernels.py.
inline constexpr int k_oldest_manifest_format_version = 2;

/// The manifest's file name in a set's folder, by format.
inline constexpr const char* k_manifest_name = "manifest.json.xz";
inline constexpr const char* k_format2_manifest_name = "manifest.json";

/// The one pack file this format has, beside the manifest.
inline constexpr const char* k_pack_name = "set.pack.xz";

/// Largest uncompressed pack this build accepts (the set is 118 MB): a manifest
/// cannot make loraprobe allocate more.
inline constexpr std::size_t k_max_pack_bytes = std::size_t{1} << 30;

/// The pack: every PTX and cubin of the set, concatenated, as one xz stream.
struct PackRef {
  std::string path;              ///< relative to the manifest's folder; always k_pack_name
  std::string sha256;            ///< of the uncompressed pack
  std::size_t bytes = 0;         ///< uncompressed size, at most k_max_pack_bytes
  std::size_t stored_bytes = 0;  ///< size of the .xz file
};

/// One generated file of a variant: a slice of the uncompressed pack.
struct FileRef {
  std::string path;        ///< logical name in the pack: "ptx/<id>.ptx", "cubin/<id>.cubin"
  std::string sha256;      ///< of the file's bytes
  std::size_t bytes = 0;   ///< size of the slice
  std::size_t offset = 0;  ///< where the slice starts in the uncompressed pack
};

/// One PTX parameter of a variant's entry, in order.
struct Param {
  int index = 0;
  std::string ptx_type;  ///< "u64", "u32", "f32"
  std::string name;      ///< the kernel argument, or global_scratch / profile_scratch
  std::string type;      ///< Triton type: "*fp32", "i32", "fp32", ...
  [[nodiscard]] bool is_pointer() const { return !type.empty() && type[0] == '*'; }
};

/// Specialisation assumptions compiled into a variant.
struct Specialization {
  std::vector<std::string> equal_to_1;       ///< folded to the constant 1, not passed
  std::vector<std::string> divisible_by_16;  ///< integers that must be multiples of 16
  std::vector<std::string> aligned_16;       ///< pointers that must be 16-byte aligned
  std::vector<std::string> unspecialized;    ///< any value
};

/// One grid dimension: the product of its factors (see kernels/README.md "Grid factors").
using GridDim = std::vector<AxisValue>;

/// One variant of the kernel set.
struct Variant {
  std::string id;
  std::string op;      ///< "expand", "shrink" or "fused_moe"
  std::string role;    ///< kernel, positive_control, negative_control, test_*
  std::string status;  ///< "ok" or "rejected"
  std::string reason;  ///< why it was rejected; empty when ok
  AxisValues axes;            ///< flat axis values (null where not applicable)
  AxisValues constexprs;      ///< every constant it was compiled with (BLOCK_M, ADD_INPUTS, ...)
  int num_warps = 0;
  int num_stages = 0;
  Specialization specialization;
  std::array<GridDim, 3> grid;
  std::array<int, 3> block{0, 1, 1};
  std::string entry;
  std::vector<Param> params;
  /// The PDL contract (expand and shrink): parameters the previous grid of vLLM's
  /// dual-stream chain writes, which must not be read before griddepcontrol.wait.
  std::vector<std::string> produced;
  /// "file:function" the generator built it from ("kernels/triton/lora_expand.py:_lora_expand_kernel",
  /// or vLLM's own file for a set `check --kernels vllm` built); empty when the manifest does not say.
  std::string source;
  std::int64_t shared_bytes = 0;
  std::int64_t global_scratch_size = 0;
  std::int64_t global_scratch_align = 1;
  std::int64_t profile_scratch_size = 0;
  std::int64_t profile_scratch_align = 1;
  AxisValues resource_usage;  ///< what ptxas reported (registers, ...); empty when the manifest has none
  std::string ptxas_version;
  std::optional<FileRef> ptx;
  std::optional<FileRef> cubin;

  [[nodiscard]] bool ok() const { return status == "ok"; }
  /// `produced` by PTX parameter ordinal (the params' index) -> name.
  [[nodiscard]] std::map<int, std::string> produced_ordinals() const;
};

/// A kernel set as `list --json` names it.
struct ListedSet {
  std::string origin;
  std::string triton;
  std::size_t variants = 0;
  JsonText ptxas;  ///< Manifest::ptxas_json()
};

/// `list --json`: {"kernel_sets": [...], "count", "variants": [...]}, each variant of
/// `rows` (with its set's Triton version) by its id, op, role, status, axes and, when it
/// is ok, its entry, shared memory, resource usage and ptxas version, else the reason.
JsonText listing_json(const std::vector<ListedSet>& sets,
                      const std::vector<std::pair<std::string, const Variant*>>& rows);

/// The ptxas Triton compiled the set's cubins with, as the manifest records it.
struct PtxasRecord {
  std::string path_hint;  ///< inside Triton's wheel: "triton/backends/nvidia/bin/ptxas"
  std::string sha256;     ///< of the binary
  std::string version;    ///< its own words: "Cuda compilation tools, release 12.8, V12.8.93"
};

/// The parsed manifest.
struct Manifest {
  std::string source;  ///< "<embedded>/kernels/manifest.json" or the path read
  int format_version = 0;
  std::string generated_by;
  std::string triton_version;
  PtxasRecord ptxas;
  /// The options Triton ran its ptxas with for this set (from ptxas.options; for a
  /// format 2 manifest, Triton's make_cubin options of its version: -lineinfo -v
  /// --gpu-name=sm_90a, plus --regAllocOptLevel=2 from Triton 3.7 on). A `ptxas=`
  /// compiler of a case of this set uses the same ones.
  std::vector<std::string> ptxas_options;
  PackRef pack;
  std::vector<Variant> variants;  ///< sorted by id

  /// The manifest's ptxas block as reports, env and list print it: path_hint, sha256,
  /// version, and (format 3 on) the options.
  [[nodiscard]] JsonText ptxas_json() const;
};

/// Limits on manifest files, as on configs.
inline constexpr std::size_t k_max_manifest_bytes = std::size_t{64} << 20;
inline constexpr std::size_t k_max_manifest_depth = 16;

/// The options Triton's make_cubin passes its ptxas for sm_90 (format 2 manifests do
/// not record them): -lineinfo -v [--regAllocOptLevel=2 from 3.7.0 on] --gpu-name=sm_90a.
std::vector<std::string> triton_make_cubin_options(const std::string& triton_version);

/// How parse_manifest reads the JSON: whole, or with the variants cut out and parsed on
/// several threads (the same Manifest and the same errors; tests hold them alike).
/// `automatic` splits on machines of more than 4 hardware threads: on 2 cores the split
/// cost 20-40 ms more per load, on the 16-core H100 host it took the sets' load from
/// 0.35-0.45 s to 0.17-0.31 s.
enum class ManifestParse { automatic, whole, split };

/// Parses manifest text; `source` names it in errors (lp::InputError with a JSON pointer).
/// Every file must lie inside the pack; a manifest of another format_version (format 1
/// kept one .gz per file) is refused naming the version.
Manifest parse_manifest(std::string_view text, const std::string& source,
                        ManifestParse how = ManifestParse::automatic);

}  // namespace lp::kernels
