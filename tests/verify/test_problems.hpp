#pragma once
// Test helper: one-line construction of a valid Problem with the seeded mapping.

#include <cstdint>
#include <utility>
#include <vector>

#include "model/problem.hpp"

namespace lp::test {

/// A problem of `op` with W = `w` (expand reads `expand_input`), hidden_in used by
/// shrink and lora_linear, and make_token_mapping(tokens, loras, seed) as lora_of.
inline Problem make_problem(Op op, DType w, std::int64_t tokens, std::int64_t rank, std::vector<std::int64_t> hidden,
                            std::int64_t hidden_in, std::int32_t loras, bool add_inputs, std::uint64_t seed,
                            DType expand_input = DType::f32) {
  Problem p;
  p.op = op;
  p.num_tokens = tokens;
  p.rank = rank;
  p.slice_hidden = std::move(hidden);
  p.hidden_in = op == Op::expand ? 0 : hidden_in;
  p.num_loras = loras;
  p.input_dtype = op == Op::expand ? expand_input : w;
  p.weight_dtype = w;
  p.add_inputs = add_inputs;
  p.seed = seed;
  p.lora_of = make_token_mapping(tokens, loras, seed);
  return p;
}

/// A fused_moe problem: `tokens` routed to `top_k` of `experts` experts (routing block
/// 16), K = `k` into `slices` slices of N = `n`; `routed` is the down projection.
inline Problem make_fused_problem(DType w, std::int64_t tokens, std::int32_t loras, std::int32_t experts,
                                  std::int32_t top_k, std::int64_t rank, std::int64_t k, std::int64_t n, int slices,
                                  bool routed, bool add_inputs, std::uint64_t seed) {
  Problem p;
  p.op = Op::fused_moe;
  p.num_tokens = tokens;
  p.rank = rank;
  p.slice_hidden.assign(static_cast<std::size_t>(slices), n);
  p.hidden_in = k;
  p.num_loras = loras;
  p.input_dtype = w;
  p.weight_dtype = w;
  p.add_inputs = add_inputs;
  p.seed = seed;
  p.moe = ExpertRouting{experts, top_k, routed, 16};
  p.lora_of = make_token_mapping(tokens, loras, seed);
  return p;
}

}  // namespace lp::test
