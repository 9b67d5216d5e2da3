#pragma once
// Element types of the LoRA tensors and exact bit-level conversions, shared by the
// device kernels (nvcc) and their host twins (g++), so a host test exercises the
// very functions the GPU runs. Values travel as raw bits in a uint32 (low 16 bits
// for the half types) so no conversion hides a payload or canonicalises a NaN.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

#if defined(__CUDACC__)
#define LP_HD __host__ __device__
#else
#define LP_HD
#endif

namespace lp {

/// Element type of a tensor. e4m3 is float8 e4m3fn (torch.float8_e4m3fn, Triton's
/// fp8e4nv): the operands of the FP8 families (families/fp8), never an output.
enum class DType : std::uint8_t { f32, bf16, f16, e4m3 };

/// Bytes per element.
LP_HD constexpr std::size_t dtype_size(DType t) { return t == DType::f32 ? 4 : t == DType::e4m3 ? 1 : 2; }

/// "fp32", "bf16", "fp16", "fp8e4m3": the spelling of configs and reports.
std::string_view dtype_name(DType t) noexcept;

/// Inverse of dtype_name; nullopt for anything else.
std::optional<DType> parse_dtype(std::string_view name) noexcept;

/// Unit roundoff of the type: half the distance from 1 to the next value (2^-24,
/// 2^-8, 2^-11, 2^-4). Round-to-nearest changes a value by at most u * |value| (normal range).
LP_HD constexpr double unit_roundoff(DType t) {
  return t == DType::f32    ? 5.9604644775390625e-08
         : t == DType::bf16 ? 0.00390625
         : t == DType::f16  ? 0.00048828125
                            : 0.0625;
}

LP_HD inline float float_from_u32(std::uint32_t bits) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(bits);
#else
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
#endif
}

LP_HD inline std::uint32_t u32_from_float(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
#endif
}

/// Exact value of the element stored as `bits` in type `t` (every bf16 and fp16
/// value is a float, subnormals, infinities and NaN payloads included).
LP_HD inline float bits_to_float(DType t, std::uint32_t bits) {
  switch (t) {
    case DType::f32:
      return float_from_u32(bits);
    case DType::bf16:
      return float_from_u32((bits & 0xFFFFu) << 16);
    case DType::f16: {
      const std::uint32_t sign = (bits & 0x8000u) << 16;
      const std::uint32_t exponent = (bits >> 10) & 0x1Fu;
      const std::uint32_t mantissa = bits & 0x3FFu;
      if (exponent == 0) {
        // Zero or subnormal: mantissa * 2^-24, exact in float.
        const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-08f;
        return sign != 0 ? -magnitude : magnitude;
      }
      if (exponent == 0x1Fu) {
        return float_from_u32(sign | 0x7F800000u | (mantissa << 13));
      }
      return float_from_u32(sign | ((exponent + 112u) << 23) | (mantissa << 13));
    }
    case DType::e4m3: {
      // e4m3fn: bias 7, no infinities, S.1111.111 is NaN; subnormals are m * 2^-9.
      const std::uint32_t sign = (bits & 0x80u) << 24;
      const std::uint32_t exponent = (bits >> 3) & 0xFu;
      const std::uint32_t mantissa = bits & 0x7u;
      if (exponent == 0xFu && mantissa == 0x7u) {
        return float_from_u32(sign | 0x7FC00000u);
      }
      if (exponent == 0) {
        const float magnitude = static_cast<float>(mantissa) * 0.001953125f;
        return sign != 0 ? -magnitude : magnitude;
      }
      return float_from_u32(sign | ((exponent + 120u) << 23) | (mantissa << 20));
    }
  }
  return 0.0f;
}

/// `value` rounded to nearest-even into type `t`, as bits. Uses the CUDA headers'
/// conversions (cvt.rn on the device, their bit-exact emulation on the host), which
/// is also what Triton emits for `.to(tl.bfloat16)`. NaN becomes the canonical
/// NaN of the type (0x7FFF for the half types); overflow becomes infinity, but
/// saturates to +-448 in e4m3, which has no infinity.
LP_HD inline std::uint32_t float_to_bits(DType t, float value) {
  switch (t) {
    case DType::f32:
      return u32_from_float(value);
    case DType::bf16: {
      const __nv_bfloat16_raw raw = static_cast<__nv_bfloat16_raw>(__float2bfloat16_rn(value));
      return raw.x;
    }
    case DType::f16: {
      const __half_raw raw = static_cast<__half_raw>(__float2half_rn(value));
      return raw.x;
    }
    case DType::e4m3:
      // Saturating, as torch's and Triton's casts to float8_e4m3fn: beyond 448 is 448.
      return __nv_cvt_float_to_fp8(value, __NV_SATFINITE, __NV_E4M3);
  }
  return 0;
}

/// round_t(value): the float nearest to value that type `t` can hold.
LP_HD inline float round_to(DType t, float value) { return bits_to_float(t, float_to_bits(t, value)); }

/// Stored bits of element `index` of a tensor of type `t` at `data`.
LP_HD inline std::uint32_t load_bits(DType t, const void* data, std::size_t index) {
  if (t == DType::f32) {
    return static_cast<const std::uint32_t*>(data)[index];
  }
  if (t == DType::e4m3) {
    return static_cast<const std::uint8_t*>(data)[index];
  }
  return static_cast<const std::uint16_t*>(data)[index];
}

/// Stores `bits` as element `index` of a tensor of type `t` at `data`.
LP_HD inline void store_bits(DType t, void* data, std::size_t index, std::uint32_t bits) {
  if (t == DType::f32) {
    static_cast<std::uint32_t*>(data)[index] = bits;
  } else if (t == DType::e4m3) {
    static_cast<std::uint8_t*>(data)[index] = static_cast<std::uint8_t>(bits);
  } else {
    static_cast<std::uint16_t*>(data)[index] = static_cast<std::uint16_t>(bits);
  }
}

}  // namespace lp
