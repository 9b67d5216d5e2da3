#include "worker/launch.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <variant>

#include <fmt/format.h>

#include "families/family.hpp"
#include "kernels/abi.hpp"
#include "model/dtype.hpp"

namespace lp::worker {

namespace {

using namespace launch_value;
using Value = LaunchValue;

bool contains(const std::vector<std::string>& list, const std::string& name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

/// The Triton pointer type of a tensor of `dtype` ("*fp32", "*bf16", "*fp16", "*fp8e4nv").
std::string triton_pointer_type(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return "*fp32";
    case DType::bf16:
      return "*bf16";
    case DType::f16:
      return "*fp16";
    case DType::e4m3:
      return "*fp8e4nv";  // Triton's name of float8 e4m3fn
  }
  return "*?";
}

class Arguments {
 public:
  Arguments(Op kernel, const Problem& p, const LoraMetadata& m, CaseBuffers& b)
      : m_kernel(kernel), m_inputs{p, m, b} {}

  /// The value of argument `name` for this kernel; `pointer_form` says whether the
  /// variant takes it as a pointer (per-slice array) or a scalar.
  Value value(const std::string& name, bool pointer_form) const {
    const CaseBuffers& b = m_inputs.buffers;
    // The LoRA mapping every kernel reads (docs/problem.md), then the kernel's own.
    const std::pair<const char*, const DeviceBuffer*> mapping[] = {
        {"token_indices_sorted_by_lora_ids", &b.token_indices_sorted_by_lora_ids},
        {"num_tokens_per_lora", &b.num_tokens_per_lora},
        {"lora_token_start_loc", &b.lora_token_start_loc},
        {"lora_ids", &b.lora_ids}};
    for (const auto& [array, buffer] : mapping) {
      if (name == array) {
        return Pointer{buffer->get(), DType::f32};
      }
    }
    if (name == "M") {
      return Integer{m_inputs.problem.num_tokens};
    }
    if (std::optional<Value> own = device_family_of(m_kernel).argument(m_inputs, name, pointer_form)) {
      return *std::move(own);
    }
    throw AbiViolation(fmt::format("{} argument {} has no value in loraprobe's launcher", op_name(m_kernel), name));
  }

  [[nodiscard]] const LaunchInputs& inputs() const noexcept { return m_inputs; }

 private:
  Op m_kernel;
  LaunchInputs m_inputs;
};

std::int64_t grid_quantity(const std::string& name, const LaunchInputs& in) {
  const Problem& p = in.problem;
  const LoraMetadata& m = in.metadata;
  if (const std::optional<std::int64_t> own = device_family_of(p.op).grid_quantity(in, name)) {
    return *own;
  }
  if (name == "num_tokens") {
    return p.num_tokens;
  }
  if (name == "rank") {
    return p.rank;
  }
  if (name == "hidden_size") {
    return p.hidden_in;
  }
  if (name == "max_hidden_size") {
    return *std::max_element(p.slice_hidden.begin(), p.slice_hidden.end());
  }
  if (name == "num_slices") {
    return p.num_slices();
  }
  if (name == "num_lora_ids") {
    return m.num_active();
  }
  throw AbiViolation(fmt::format("grid quantity \"{}\" is not one loraprobe knows", name));
}

std::int64_t grid_factor(const AxisValue& factor, const kernels::Variant& v, const LaunchInputs& in) {
  if (const std::optional<std::int64_t> n = factor.integer()) {
    return *n;
  }
  const std::string text = factor.text().value_or("");  // the manifest reader allows nothing else
  if (text.rfind("cdiv:", 0) == 0) {
    const std::size_t colon = text.find(':', 5);
    const std::string quantity = text.substr(5, colon - 5);
    const std::string constexpr_name = text.substr(colon + 1);
    const std::optional<std::int64_t> divisor =
        colon == std::string::npos ? std::nullopt : v.constexprs.integer(constexpr_name);
    if (!divisor || *divisor < 1) {
      throw AbiViolation(fmt::format("variant {}: grid factor \"{}\" names no positive whole-number constexpr", v.id,
                                     text));
    }
    const std::int64_t d = *divisor;
    return (grid_quantity(quantity, in) + d - 1) / d;
  }
  return grid_quantity(text, in);
}

// The kernel must be one the case's family launches, and the variant's constexprs
// must agree with the case (the kernel's family says which).
void check_constexprs(const kernels::Variant& v, Op kernel, const Problem& p) {
  const std::span<const KernelLaunch> launches = family_of(p.op).kernels();
  if (std::none_of(launches.begin(), launches.end(), [&](const KernelLaunch& k) { return k.kernel == kernel; })) {
    throw AbiViolation(fmt::format("variant {} ({}) cannot run a {} case", v.id, v.op, op_name(p.op)));
  }
  device_family_of(kernel).check_variant(v, p);
}

}  // namespace

PreparedLaunch::PreparedLaunch(const kernels::Variant& v, Op kernel, const Problem& problem,
                               const LoraMetadata& metadata, CaseBuffers& buffers, const Stream& stream) {
  if (!v.ok()) {
    throw AbiViolation(fmt::format("variant {} was rejected when the set was generated: {}", v.id, v.reason));
  }
  check_constexprs(v, kernel, problem);
  const Arguments args(kernel, problem, metadata, buffers);
  // Arguments folded to the constant 1 are not passed, but the case must agree.
  for (const std::string& name : v.specialization.equal_to_1) {
    const Value value = args.value(name, false);
    if (!std::holds_alternative<Integer>(value) || std::get<Integer>(value).value != 1) {
      throw AbiViolation(fmt::format("variant {} was compiled with {}=1, which this case does not have", v.id, name));
    }
  }
  const std::size_t n = v.params.size();
  if (n < 2 || v.params[n - 2].name != kernels::k_global_scratch || v.params[n - 1].name != kernels::k_profile_scratch) {
    throw AbiViolation(fmt::format("variant {}: the last two parameters are not Triton's scratch pointers", v.id));
  }
  const std::int64_t programs = set_grid(v, args.inputs());  // first: scratch is sized per program
  m_storage.assign(n, 0);
  m_args.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    m_args[i] = &m_storage[i];
  }
  for (std::size_t i = 0; i + 2 < n; ++i) {
    const kernels::Param& param = v.params[i];
    const Value value = args.value(param.name, param.is_pointer());
    if (param.is_pointer()) {
      m_storage[i] = pointer_argument(v, param, value, stream);
    } else {
      store_scalar(v, param, value, m_storage[i]);
    }
  }
  // Triton's scratch: size per program times the number of programs, or null.
  const std::int64_t sizes[2] = {v.global_scratch_size, v.profile_scratch_size};
  for (std::size_t k = 0; k < 2; ++k) {
    if (sizes[k] > 0) {
      m_arrays.emplace_back(static_cast<std::size_t>(sizes[k] * programs));
      m_storage[n - 2 + k] = m_arrays.back().get();
    }
  }
}

std::int64_t PreparedLaunch::set_grid(const kernels::Variant& v, const LaunchInputs& in) {
  std::int64_t programs = 1;
  for (std::size_t d = 0; d < 3; ++d) {
    std::int64_t extent = 1;
    for (const AxisValue& factor : v.grid[d]) {
      extent *= grid_factor(factor, v, in);
    }
    const std::int64_t limit = d == 0 ? std::numeric_limits<std::int32_t>::max() : 65535;
    if (extent < 1 || extent > limit) {
      throw AbiViolation(fmt::format("variant {}: grid dimension {} would be {}, outside [1, {}]", v.id, d, extent, limit));
    }
    m_config.grid[d] = static_cast<unsigned>(extent);
    m_config.block[d] = static_cast<unsigned>(v.block[d]);
    programs *= extent;
  }
  m_config.shared_bytes = static_cast<unsigned>(v.shared_bytes);
  return programs;
}

CUdeviceptr PreparedLaunch::pointer_argument(const kernels::Variant& v, const kernels::Param& param,
                                             const Value& value, const Stream& stream) {
  CUdeviceptr ptr = 0;
  if (const auto* tensor = std::get_if<Pointer>(&value)) {
    const bool index_array = param.type == "*i32";
    if (!index_array && param.type != triton_pointer_type(tensor->dtype)) {
      throw AbiViolation(fmt::format("variant {} takes {} as {} but the case's tensor is {}", v.id, param.name,
                                     param.type, triton_pointer_type(tensor->dtype)));
    }
    ptr = tensor->value;
  } else if (const auto* u64 = std::get_if<U64Array>(&value)) {
    m_arrays.push_back(upload(std::span<const std::uint64_t>(u64->values), stream));
    ptr = m_arrays.back().get();
  } else if (const auto* i64 = std::get_if<I64Array>(&value)) {
    m_arrays.push_back(upload(std::span<const std::int64_t>(i64->values), stream));
    ptr = m_arrays.back().get();
  } else {
    throw AbiViolation(fmt::format("variant {} takes {} as a pointer, the launcher has a scalar", v.id, param.name));
  }
  if (contains(v.specialization.aligned_16, param.name) && ptr % 16 != 0) {
    throw AbiViolation(fmt::format("variant {} assumes {} is 16-byte aligned; it is at 0x{:x}", v.id, param.name, ptr));
  }
  return ptr;
}

void PreparedLaunch::store_scalar(const kernels::Variant& v, const kernels::Param& param, const Value& value,
                                  std::uint64_t& slot) {
  if (param.type == "fp32") {
    const auto* f = std::get_if<Float>(&value);
    if (f == nullptr) {
      throw AbiViolation(fmt::format("variant {} takes {} as fp32, the launcher has another kind", v.id, param.name));
    }
    std::memcpy(&slot, &f->value, sizeof(float));
    return;
  }
  const auto* integer = std::get_if<Integer>(&value);
  if (integer == nullptr || param.type != "i32") {
    throw AbiViolation(fmt::format("variant {} takes {} as {}, the launcher has another kind", v.id, param.name,
                                   param.type));
  }
  if (integer->value < std::numeric_limits<std::int32_t>::min() ||
      integer->value > std::numeric_limits<std::int32_t>::max()) {
    throw AbiViolation(fmt::format("{}={} does not fit the variant's i32 parameter", param.name, integer->value));
  }
  if (contains(v.specialization.divisible_by_16, param.name) && integer->value % 16 != 0) {
    throw AbiViolation(fmt::format("variant {} assumes {} is divisible by 16; the case has {}={}", v.id, param.name,
                                   param.name, integer->value));
  }
  const auto as32 = static_cast<std::int32_t>(integer->value);
  std::memcpy(&slot, &as32, sizeof(as32));
}

void PreparedLaunch::launch(CUfunction fn, const Stream& stream, bool programmatic) {
  if (m_config.shared_bytes > 48 * 1024) {
    set_max_dynamic_shared(fn, static_cast<int>(m_config.shared_bytes));
  }
  if (programmatic) {
    launch_kernel_programmatic(fn, m_config, m_args.data(), stream.get());
  } else {
    launch_kernel(fn, m_config, m_args.data(), stream.get());
  }
}

}  // namespace lp::worker
