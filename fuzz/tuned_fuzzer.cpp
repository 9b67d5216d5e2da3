// libFuzzer target: the reader of vLLM's tuned LoRA configs (plan/tuned.cpp), the
// files --vllm-configs points at: a folder a user copies from someone else's tuning
// run. The first byte picks the file: 'T', 'F', 'S', 'G' and 'D' are EXPAND_TRUE,
// EXPAND_FALSE, SHRINK and the fused-MoE gate/up (W13) and down (W2) shrinks; any
// other byte picks by its value modulo 5, in that order. The rest is its text. Any input must be
// read or refused with lp::UsageError (InputError is one): a crash, a sanitizer
// report or another exception is a bug. A file it reads is then looked up as the
// plan looks it up, with wanted values from the plan's limits and far outside them,
// and every answer must be whole: vLLM's error, or the five keys (six for fused-MoE)
// to a kernel config whose knobs the reader checked.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>

#include "plan/tuned.hpp"
#include "util/error.hpp"

namespace {

constexpr const auto& k_ops = lp::plan::TunedConfigs::k_ops;
constexpr std::int64_t k_min = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t k_max = std::numeric_limits<std::int64_t>::max();

/// The letters that name k_ops' files, in its order.
constexpr std::string_view k_letters = "TFSGD";
static_assert(k_letters.size() == k_ops.size());

void check(const std::optional<lp::plan::TunedChoice>& c, bool expected, std::size_t keys = 5) {
  if (c.has_value() != expected) {
    __builtin_trap();  // the file read is the file looked up, and no other
  }
  if (!c || !c->vllm_error.empty()) {
    return;
  }
  const lp::plan::KernelKnobs& k = c->knobs;
  if (keys == 6) {  // fused-MoE: block_m alone, a power of two of at least 16 (else vllm_error)
    if (c->keys.size() != keys || k.block_m < 16 || k.block_m > 1024 || (k.block_m & (k.block_m - 1)) != 0) {
      __builtin_trap();
    }
    return;
  }
  if (c->keys.size() != keys || k.block_m < 1 || k.block_m > 1024 || k.block_n < 1 || k.block_n > 1024 ||
      k.num_stages < 1 || k.num_stages > 1024 || k.split_k < 1 || k.split_k > 1024) {
    __builtin_trap();  // a choice without its keys, or knobs the reader did not check
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) {
    return 0;
  }
  const std::size_t letter = k_letters.find(static_cast<char>(data[0]));
  const std::size_t which = letter != std::string_view::npos ? letter : data[0] % k_ops.size();
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::optional<lp::plan::TunedConfigs> tuned;
  try {
    tuned = lp::plan::TunedConfigs::parse("NVIDIA H200", k_ops[which], text, "fuzz.json");
  } catch (const lp::UsageError&) {
    return 0;  // refused with a message, as it should be
  }
  // max_loras stays below INT64_MAX: the lookup key is max_loras + 1, as vLLM's lora_ids holds.
  for (const std::int64_t max_loras : {std::int64_t{0}, std::int64_t{3}, k_max - 1}) {
    for (const std::int64_t slices : {std::int64_t{1}, std::int64_t{3}}) {
      for (const std::int64_t m : {std::int64_t{1}, std::int64_t{256}, std::int64_t{1} << 20, k_min, k_max}) {
        for (const bool add_inputs : {true, false}) {
          check(tuned->expand(add_inputs, max_loras, slices, m, 64, 4096), which == (add_inputs ? 0U : 1U));
        }
        check(tuned->shrink(max_loras, slices, m, 4096, k_min), which == 2);
        for (const bool w13 : {true, false}) {
          check(tuned->fused_moe_shrink(w13, max_loras, slices, m, 64, 2048, k_max), which == (w13 ? 3U : 4U), 6);
        }
      }
    }
  }
  return 0;
}
