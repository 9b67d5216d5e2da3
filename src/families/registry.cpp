// The one place a kernel family is registered: its Op value (model/problem.hpp)
// and its object here. Adding a family is a folder under src/families/ and one line
// in each of the two lists below (and its device half in device_registry.cpp).
#include <array>

#include "families/expand/expand.hpp"
#include "families/family.hpp"
#include "families/fp8/fp8.hpp"
#include "families/fused_moe/fused_moe.hpp"
#include "families/lora_linear/lora_linear.hpp"
#include "families/shrink/shrink.hpp"

namespace lp {
namespace {

const std::array<const KernelFamily*, 6> k_families = {&expand_family(),      &shrink_family(),
                                                       &lora_linear_family(), &fused_moe_family(),
                                                       &shrink_fp8_family(),  &expand_fp8_family()};

}  // namespace

const KernelFamily& family_of(Op op) noexcept { return *k_families[static_cast<std::size_t>(op)]; }

std::span<const KernelFamily* const> families() noexcept { return k_families; }

const KernelFamily* family_named(std::string_view name) noexcept {
  const std::optional<Op> op = parse_op(name);
  return op ? &family_of(*op) : nullptr;
}

std::span<const std::string_view> kernel_arguments(std::string_view variant_op) noexcept {
  if (const KernelFamily* family = family_named(variant_op)) {
    return family->kernel_arguments();
  }
  if (variant_op == "fused_moe_shrink" || variant_op == "fused_moe_expand") {
    return two_kernel_arguments();
  }
  return {};
}

std::string_view op_name(Op op) noexcept {
  return static_cast<std::size_t>(op) < k_families.size() ? family_of(op).name() : std::string_view("?");
}

std::optional<Op> parse_op(std::string_view name) noexcept {
  for (const KernelFamily* f : k_families) {
    if (f->name() == name) {
      return f->op();
    }
  }
  return std::nullopt;
}

}  // namespace lp
