#include "model/dtype.hpp"

namespace lp {

std::string_view dtype_name(DType t) noexcept {
  switch (t) {
    case DType::f32:
      return "fp32";
    case DType::bf16:
      return "bf16";
    case DType::f16:
      return "fp16";
    case DType::e4m3:
      return "fp8e4m3";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view name) noexcept {
  for (const DType t : {DType::f32, DType::bf16, DType::f16, DType::e4m3}) {
    if (name == dtype_name(t)) {
      return t;
    }
  }
  return std::nullopt;
}

}  // namespace lp
