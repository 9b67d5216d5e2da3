#include "host_model.hpp"

#include <cmath>
#include <cstring>

#include "families/family.hpp"
#include "families/fused_moe/routing.hpp"
#include "verify/case_buffers.hpp"
#include "verify/inputs.hpp"
#include "verify/poison.hpp"

namespace lp::test {
namespace {

std::vector<std::uint32_t> generate(DType t, ValueRange range, std::uint64_t seed, std::uint32_t tensor,
                                    std::size_t count) {
  std::vector<std::uint32_t> bits(count);
  for (std::size_t i = 0; i < count; ++i) {
    bits[i] = generated_bits(t, range, seed, tensor, i);
  }
  return bits;
}

// sum_k a(k) * b(k) with the chosen accumulation. a and b are already the rounded
// operand values; `amplify` is fp32_amplified's D.
template <class A, class B>
double dot(std::int64_t k_count, A a, B b, Accumulation accumulation, int amplify = 0) {
  switch (accumulation) {
    case Accumulation::float64: {
      double sum = 0.0;
      for (std::int64_t k = 0; k < k_count; ++k) {
        sum += static_cast<double>(a(k)) * static_cast<double>(b(k));
      }
      return sum;
    }
    case Accumulation::fp32_forward: {
      float sum = 0.0f;
      for (std::int64_t k = 0; k < k_count; ++k) {
        sum = std::fma(a(k), b(k), sum);
      }
      return sum;
    }
    case Accumulation::fp32_reverse: {
      float sum = 0.0f;
      for (std::int64_t k = k_count - 1; k >= 0; --k) {
        sum = std::fma(a(k), b(k), sum);
      }
      return sum;
    }
    case Accumulation::fp32_blocked:
    case Accumulation::fp32_amplified: {
      // fp32_amplified: as the tensor cores run an amplified k16 wgmma, the pairs on the
      // accumulator first, then the wgmma's own 16 products.
      const int queued = accumulation == Accumulation::fp32_amplified ? amplify : 0;
      float sum = 0.0f;
      for (std::int64_t k0 = 0; k0 < k_count; k0 += 16) {
        float p = 0.0f;
        for (std::int64_t k = k0; k < k0 + 16 && k < k_count && queued > 0; ++k) {
          p = std::fma(b(k), b(k), p);
        }
        for (int i = 0; i < queued; ++i) {
          sum = sum - p;
          sum = sum + p;
        }
        float block = 0.0f;
        for (std::int64_t k = k0; k < k0 + 16 && k < k_count; ++k) {
          block = std::fma(a(k), b(k), block);
        }
        sum += block;
      }
      return sum;
    }
  }
  return 0.0;
}

// fp32 value of a double result, as the kernels store an fp32 accumulator.
float to_f32(double v) { return static_cast<float>(v); }

// buf [S, T, R] in fp32: the shrink, for live tokens.
std::vector<float> shrink(const Problem& p, const HostInputs& in, Accumulation acc) {
  const std::int64_t t_count = p.num_tokens;
  const std::int64_t r_count = p.rank;
  const std::int64_t h = p.hidden_in;
  const DType x_type = p.input_dtype;
  std::vector<float> buf(static_cast<std::size_t>(p.num_slices() * t_count * r_count), 0.0f);
  for (std::int64_t s = 0; s < p.num_slices(); ++s) {
    const auto& a_bits = in.lora_a[static_cast<std::size_t>(s)];
    for (std::int64_t t = 0; t < t_count; ++t) {
      const std::int32_t lora = p.lora_of[static_cast<std::size_t>(t)];
      if (lora < 0) {
        continue;
      }
      for (std::int64_t r = 0; r < r_count; ++r) {
        const double sum = dot(
            h, [&](std::int64_t k) { return bits_to_float(x_type, in.x[static_cast<std::size_t>(t * h + k)]); },
            [&](std::int64_t k) {
              return bits_to_float(x_type, a_bits[static_cast<std::size_t>((lora * r_count + r) * h + k)]);
            },
            acc);
        // The kernel scales its fp32 accumulator: one fp32 multiply.
        buf[static_cast<std::size_t>((s * t_count + t) * r_count + r)] = to_f32(sum) * p.scale;
      }
    }
  }
  return buf;
}

void put(DType t, std::vector<std::byte>& out, std::size_t index, std::uint32_t bits) {
  std::memcpy(out.data() + index * dtype_size(t), &bits, dtype_size(t));
}

std::uint32_t pre_launch_bits(const Problem& p, const HostInputs& in, std::size_t index) {
  switch (output_init(p)) {
    case OutputInit::poison:
      return poison_bits(output_dtype(p));
    case OutputInit::y_in:
      return in.y_in[index];
    case OutputInit::zero:
      return 0;
  }
  return 0;
}

// fused_moe (docs/problem.md): per routed pair of a token with an adapter, the shrink
// with the pair's expert's A, rounded to W, the expand with its B, times the routing
// weight (down), then the expand's finishing; other rows hold the pre-launch state.
std::vector<std::byte> fused_moe_output(const Problem& p, const HostInputs& in, Accumulation acc) {
  const MoeRouting routing = make_moe_routing(p);
  const DType w = p.weight_dtype;
  const std::int64_t r_count = p.rank;
  const std::int64_t k_count = p.hidden_in;
  const std::int64_t n_count = p.slice_hidden.at(0);
  const std::int64_t e_count = p.moe.num_experts;
  const std::int64_t row = p.num_slices() * n_count;
  const std::int64_t factor = p.moe.mul_routed_weight ? 1 : p.moe.top_k;
  const Accumulation shrink_acc = acc == Accumulation::fp32_amplified ? Accumulation::fp32_blocked : acc;
  std::vector<std::byte> out(static_cast<std::size_t>(output_rows(p) * row) * dtype_size(w));
  std::vector<float> tmp(static_cast<std::size_t>(r_count));
  for (std::int64_t pair = 0; pair < output_rows(p); ++pair) {
    const std::int32_t lora = routing.pair_lora[static_cast<std::size_t>(pair)];
    const std::int64_t weights = lora * e_count + routing.topk_ids[static_cast<std::size_t>(pair)];
    const std::int64_t x_row = pair / factor;
    for (std::int64_t s = 0; s < p.num_slices(); ++s) {
      const auto& a_bits = in.lora_a[static_cast<std::size_t>(s)];
      const auto& b_bits = in.lora_b[static_cast<std::size_t>(s)];
      if (lora >= 0) {
        for (std::int64_t r = 0; r < r_count; ++r) {
          const double sum = dot(
              k_count, [&](std::int64_t k) { return bits_to_float(w, in.x[static_cast<std::size_t>(x_row * k_count + k)]); },
              [&](std::int64_t k) {
                return bits_to_float(w, a_bits[static_cast<std::size_t>((weights * r_count + r) * k_count + k)]);
              },
              shrink_acc);
          tmp[static_cast<std::size_t>(r)] = round_to(w, to_f32(sum));
        }
      }
      for (std::int64_t n = 0; n < n_count; ++n) {
        const auto at = static_cast<std::size_t>(pair * row + s * n_count + n);
        if (lora < 0) {
          put(w, out, at, pre_launch_bits(p, in, at));
          continue;
        }
        const double sum = dot(
            r_count, [&](std::int64_t r) { return tmp[static_cast<std::size_t>(r)]; },
            [&](std::int64_t r) {
              return bits_to_float(w, b_bits[static_cast<std::size_t>((weights * n_count + n) * r_count + r)]);
            },
            shrink_acc);
        float value = to_f32(sum);
        if (p.moe.mul_routed_weight) {
          value *= routing.topk_weights[static_cast<std::size_t>(pair)];
        }
        std::uint32_t bits = float_to_bits(w, value);
        if (p.add_inputs) {
          bits = float_to_bits(w, bits_to_float(w, bits) + bits_to_float(w, in.y_in[at]));
        }
        put(w, out, at, bits);
      }
    }
  }
  return out;
}

}  // namespace

HostInputs generate_host_inputs(const Problem& p) {
  HostInputs in;
  const auto t = static_cast<std::size_t>(p.num_tokens);
  const auto r = static_cast<std::size_t>(p.rank);
  const auto l = static_cast<std::size_t>(p.num_loras);
  const auto s_count = static_cast<std::size_t>(p.num_slices());
  if (p.op == Op::fused_moe) {
    // The device layout (case_buffers.cpp): x [x_rows, K], A [L, E, R, K], B [L, E, N, R].
    const auto e = static_cast<std::size_t>(p.moe.num_experts);
    const auto k = static_cast<std::size_t>(p.hidden_in);
    const auto n = static_cast<std::size_t>(p.slice_hidden.at(0));
    const DType w = p.weight_dtype;
    in.x = generate(w, k_activation_range, p.seed, tensor_id::x, static_cast<std::size_t>(x_rows(p)) * k);
    for (std::size_t s = 0; s < s_count; ++s) {
      const auto slice = static_cast<std::int64_t>(s);
      in.lora_a.push_back(generate(w, k_weight_range, p.seed, tensor_id::lora_a(slice), l * e * r * k));
      in.lora_b.push_back(generate(w, k_weight_range, p.seed, tensor_id::lora_b(slice), l * e * n * r));
    }
    if (p.add_inputs) {
      in.y_in = generate(w, k_activation_range, p.seed, tensor_id::y_in,
                         static_cast<std::size_t>(output_rows(p)) * s_count * n);
    }
    return in;
  }
  if (p.op != Op::expand) {
    const auto h = static_cast<std::size_t>(p.hidden_in);
    in.x = generate(p.input_dtype, k_activation_range, p.seed, tensor_id::x, t * h);
    for (std::size_t s = 0; s < s_count; ++s) {
      in.lora_a.push_back(generate(p.input_dtype, k_weight_range, p.seed, tensor_id::lora_a(static_cast<std::int64_t>(s)), l * r * h));
    }
  }
  if (p.op != Op::shrink) {
    for (std::size_t s = 0; s < s_count; ++s) {
      const auto h = static_cast<std::size_t>(p.slice_hidden[s]);
      in.lora_b.push_back(generate(p.weight_dtype, k_weight_range, p.seed, tensor_id::lora_b(static_cast<std::int64_t>(s)), l * h * r));
    }
    if (p.add_inputs) {
      in.y_in = generate(p.weight_dtype, k_activation_range, p.seed, tensor_id::y_in,
                         t * static_cast<std::size_t>(p.hidden_total()));
    }
  }
  if (p.op == Op::expand) {
    in.buf = generate(p.input_dtype, k_activation_range, p.seed, tensor_id::buf, s_count * t * r);
  }
  return in;
}

std::vector<std::byte> host_output(const Problem& p, const HostInputs& in, Accumulation acc) {
  validate(p);
  const DType out_type = output_dtype(p);
  const std::int64_t t_count = p.num_tokens;
  const std::int64_t r_count = p.rank;
  const Accumulation shrink_acc = acc == Accumulation::fp32_amplified ? Accumulation::fp32_blocked : acc;
  if (p.op == Op::fused_moe) {
    return fused_moe_output(p, in, acc);
  }
  if (p.op == Op::shrink) {
    const std::vector<float> buf = shrink(p, in, shrink_acc);
    std::vector<std::byte> out(buf.size() * sizeof(float));
    for (std::size_t i = 0; i < buf.size(); ++i) {
      const auto t = static_cast<std::size_t>((static_cast<std::int64_t>(i) / r_count) % t_count);
      put(DType::f32, out, i, p.lora_of[t] >= 0 ? u32_from_float(buf[i]) : pre_launch_bits(p, in, i));
    }
    return out;
  }
  // expand / lora_linear: the A operand is cast_W of buf (generated, or the shrink's fp32 result).
  const DType w = p.weight_dtype;
  std::vector<float> operand;
  if (p.op == Op::lora_linear) {
    for (const float v : shrink(p, in, shrink_acc)) {
      operand.push_back(round_to(w, v));
    }
  } else {
    for (const std::uint32_t bits : in.buf) {
      operand.push_back(round_to(w, bits_to_float(p.input_dtype, bits)));
    }
  }
  const std::int64_t h_tot = p.hidden_total();
  const std::vector<std::int64_t> offsets = p.slice_offsets();
  std::vector<std::byte> out(static_cast<std::size_t>(t_count * h_tot) * dtype_size(out_type));
  for (std::int64_t t = 0; t < t_count; ++t) {
    const std::int32_t lora = p.lora_of[static_cast<std::size_t>(t)];
    for (std::int64_t s = 0; s < p.num_slices(); ++s) {
      const std::int64_t h = p.slice_hidden[static_cast<std::size_t>(s)];
      const auto& b_bits = in.lora_b[static_cast<std::size_t>(s)];
      for (std::int64_t n = 0; n < h; ++n) {
        const auto at = static_cast<std::size_t>(t * h_tot + offsets[static_cast<std::size_t>(s)] + n);
        if (lora < 0) {
          put(out_type, out, at, pre_launch_bits(p, in, at));
          continue;
        }
        const double sum = dot(
            r_count, [&](std::int64_t r) { return operand[static_cast<std::size_t>((s * t_count + t) * r_count + r)]; },
            [&](std::int64_t r) { return bits_to_float(w, b_bits[static_cast<std::size_t>((lora * h + n) * r_count + r)]); },
            acc, p.amplify);
        std::uint32_t bits = float_to_bits(w, to_f32(sum));
        if (p.add_inputs) {
          bits = float_to_bits(w, bits_to_float(w, bits) + bits_to_float(w, in.y_in[at]));
        }
        put(out_type, out, at, bits);
      }
    }
  }
  return out;
}

std::vector<std::int32_t> row_lora(const Problem& problem) {
  return problem.op == Op::fused_moe ? make_moe_routing(problem).pair_lora : problem.lora_of;
}

}  // namespace lp::test
