#pragma once
// vLLM's tuned LoRA kernel configs (VLLM_TUNED_CONFIG_FOLDER): one JSON per op,
// `<GPU>_EXPAND_TRUE.json` / `<GPU>_EXPAND_FALSE.json` (by add_inputs) and
// `<GPU>_SHRINK.json`, where <GPU> is torch.cuda.get_device_name() with spaces and
// dashes made underscores. Each nests [max_loras][num_slices][m][k][n] down to a leaf
// of block_m, block_n, block_k, num_warps, num_ctas, num_stages (and split_k for
// shrink, with an optional group_size_m, 8 when absent); m is the token count; expand
// has k = rank and n = the output width (the widest slice), shrink k = the input width
// and n = rank. max_loras is the size of vLLM's lora_ids, the engine's max_loras + 1.
// num_slices is indexed exactly: vLLM raises KeyError when the key is missing. On
// every other level the exact key wins, else the key numerically closest to the
// wanted value; among equally close keys the first in the file, as Python's min()
// over a dict's keys picks. A file that is not there means vLLM's built-in defaults
// for that op. (vllm/runtime/modeling/lora/ops/triton_ops/utils.py,
// get_lora_op_configs; lora_expand_op.py and lora_shrink_op.py for MAX_LORAS.)
// The fused-MoE LoRA files, `<GPU>_FUSED_MOE_LORA_{W13,W2}_SHRINK.json`, nest one level
// deeper, [max_loras][num_slices][m][k][n][i] with k = rank, n = the layer's hidden
// width (x's for gate/up, y's for down) and i = the experts' intermediate width, and
// are keyed by the engine's max_loras itself (punica_gpu.py, add_lora_fused_moe; vLLM
// 0.34.0). Of their config the fast path reads BLOCK_SIZE_M alone (`block_m` or
// `BLOCK_SIZE_M`, 64 when absent, null or 0: `int(get("BLOCK_SIZE_M") or 64)`), the
// block the routing is padded to.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <memory>

#include <nlohmann/json_fwd.hpp>

#include "plan/plan.hpp"

namespace lp::plan {

/// What a lookup chose, and where from.
struct TunedChoice {
  KernelKnobs knobs;
  /// Set when vLLM itself would fail on this lookup (a num_slices key the file lacks):
  /// what vLLM raises and why; knobs are then not set.
  std::string vllm_error;
  std::string file;                ///< the file's name in the folder
  std::vector<std::string> keys;   ///< the key taken at each level, max_loras first
  [[nodiscard]] std::string describe() const;  ///< "NVIDIA_H200_SHRINK.json[1][1][256][4096][64]"
};

class TunedConfigs {
 public:
  /// The ops of a tuned folder, as its file names end: <GPU>_<op>.json. The tuned
  /// fuzzer picks one by index (its corpus's first byte), so the order stays.
  static constexpr std::array<std::string_view, 5> k_ops = {"EXPAND_TRUE", "EXPAND_FALSE", "SHRINK",
                                                            "FUSED_MOE_LORA_W13_SHRINK", "FUSED_MOE_LORA_W2_SHRINK"};

  /// Reads the folder's files for `gpu` (a device name, spaces and dashes allowed).
  /// Throws lp::UsageError for a folder that is not there, lp::InputError
  /// ("<file>:<pointer>: ...") for a file that is malformed or incomplete anywhere.
  static TunedConfigs load(const std::string& dir, const std::string& gpu);

  /// One file's text, read as load() reads `<GPU>_<op>.json` (op: EXPAND_TRUE,
  /// EXPAND_FALSE or SHRINK) from the folder; `source` names it in errors. Throws as
  /// load() does. load() reads each file it finds through the same code; the tuned
  /// fuzzer (fuzz/tuned_fuzzer.cpp) calls this.
  static TunedConfigs parse(const std::string& gpu, std::string_view op, std::string_view text,
                            const std::string& source);

  /// The file-name prefix of a device name: "NVIDIA H100 80GB HBM3" -> "NVIDIA_H100_80GB_HBM3".
  static std::string file_prefix(const std::string& gpu);

  /// vLLM's choice for expand (add_inputs picks the file) or shrink; nullopt when the
  /// op's file is not in the folder (vLLM then uses its defaults). `max_loras` is the
  /// engine's (the lookup key is max_loras + 1, as vLLM's lora_ids holds).
  [[nodiscard]] std::optional<TunedChoice> expand(bool add_inputs, std::int64_t max_loras, std::int64_t num_slices,
                                                  std::int64_t m, std::int64_t rank, std::int64_t width) const;
  [[nodiscard]] std::optional<TunedChoice> shrink(std::int64_t max_loras, std::int64_t num_slices, std::int64_t m,
                                                  std::int64_t width, std::int64_t rank) const;

  /// The fused-MoE fast path's BLOCK_SIZE_M (knobs.block_m; the other knobs are not set)
  /// for gate/up (`w13`) or down; nullopt when the projection's file is not in the
  /// folder (vLLM then pads to 64). `max_loras` is the engine's, the key itself; `hidden`
  /// is x's width for gate/up and y's for down, `intermediate` the experts' width.
  /// vllm_error is set where vLLM fails: a missing num_slices key, or a block_m its
  /// one-shot kernel asserts against (not a power of two of at least 16).
  [[nodiscard]] std::optional<TunedChoice> fused_moe_shrink(bool w13, std::int64_t max_loras, std::int64_t num_slices,
                                                            std::int64_t m, std::int64_t rank, std::int64_t hidden,
                                                            std::int64_t intermediate) const;

  [[nodiscard]] const std::string& prefix() const { return m_prefix; }
  /// The files read, by name.
  [[nodiscard]] std::vector<std::string> files() const;

 private:
  [[nodiscard]] std::string file_name(std::string_view op) const;  ///< "<prefix>_<op>.json"
  void add_file(std::string_view op, std::string_view text, const std::string& source);
  std::optional<TunedChoice> lookup(const std::string& name, const std::vector<std::int64_t>& wanted) const;
  struct Level;
  /// How a file's last level reads: the expand's or the shrink's full config, or the
  /// fused-MoE one's block_m alone (one level deeper).
  enum class Leaf { expand, shrink, fused_moe };
  static std::shared_ptr<const Level> read_level(const nlohmann::ordered_json& node, std::size_t level,
                                                 const std::string& file, const std::string& ptr, Leaf leaf);

  /// One level of a file (max_loras, num_slices, m, then rank and width in the op's
  /// order): its keys in file order, each with the level below, or on the last level
  /// the kernel config.
  struct Level {
    struct Entry {
      std::string key;          ///< as the file writes it
      std::int64_t value = 0;   ///< the key as a number, for the nearest-key lookup
      std::shared_ptr<const Level> below;  ///< null on the last level
      KernelKnobs knobs;        ///< the last level's config
    };
    std::vector<Entry> entries;
  };
  std::string m_prefix;
  std::vector<std::pair<std::string, std::shared_ptr<const Level>>> m_files;  ///< name -> contents, in file order
};

}  // namespace lp::plan
