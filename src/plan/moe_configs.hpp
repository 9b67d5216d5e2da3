#pragma once
// vLLM's per-GPU fused-MoE configs: the MoE layer's tile config by batch size,
// `E=<experts>,N=<intermediate per rank>,device_name=<GPU>.json` in vLLM's
// model_executor/layers/fused_moe/configs (vLLM 0.34.0 ships them for many GPUs,
// E=256,N=512,device_name=NVIDIA_H100_80GB_HBM3.json among them). With no
// VLLM_TUNED_CONFIG_FOLDER, vLLM's fused-MoE LoRA pads its routing to the
// BLOCK_SIZE_M of that file's entry for the batch (try_get_optimal_moe_lora_config ->
// try_get_optimal_moe_config -> get_moe_configs), and to get_default_config's when the
// GPU has no file. The file maps each batch size M (a key, as a decimal string) to an
// object with BLOCK_SIZE_M; vLLM takes the key closest to the batch's token count.
// loraprobe reads such a folder only where the user points it (--vllm-moe-configs):
// the files are vLLM's, not ours.

#include <cstdint>
#include <optional>
#include <string>

namespace lp::plan {

/// The file name vLLM looks for: `gpu` with runs of spaces and slashes made one
/// underscore, and any GPU of the H200 family as NVIDIA_H200 (get_config_file_name,
/// get_device_name_as_file_name).
std::string moe_config_file_name(std::int64_t experts, std::int64_t n, const std::string& gpu);

/// What a config file chose for a batch.
struct MoeConfigChoice {
  int block_m = 0;
  std::string file;  ///< the file's name
  std::string key;   ///< the batch-size key taken
};

/// BLOCK_SIZE_M for `tokens` from `dir`'s file for (experts, n, gpu), as vLLM picks it:
/// the key numerically closest to `tokens`, the smaller on a tie (vLLM takes the first
/// in the file, and its files list the keys in ascending order). nullopt when the file
/// is not there. Throws lp::InputError "<file>:<pointer>: ..." for a file that is not
/// such a map (a key no whole number, no BLOCK_SIZE_M, a BLOCK_SIZE_M vLLM would refuse:
/// not a power of two of at least 16).
std::optional<MoeConfigChoice> moe_config_block_m(const std::string& dir, std::int64_t experts, std::int64_t n,
                                                   const std::string& gpu, std::int64_t tokens);

}  // namespace lp::plan
