#include "sass/checks.hpp"

#include <array>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "util/error.hpp"

namespace lp::sass {
namespace {

/// The first warpgroup wait after instruction `from`, in listing order, before `to`
/// (wrapping past the end when `wrap`); nullptr when there is none. For an excerpt:
/// the wait a reader of the race sees between the MMA and the instruction.
const Instruction* wait_between(const KernelListing& k, std::size_t from, std::size_t to, bool wrap) {
  const std::size_t n = k.instructions.size();
  for (std::size_t step = 1; step < n; ++step) {
    const std::size_t i = (from + step) % n;
    if (i == to || (!wrap && i < from)) {
      break;
    }
    if (k.instructions[i].opcode == "WARPGROUP.DEPBAR.LE") {
      return &k.instructions[i];
    }
  }
  return nullptr;
}

Finding to_finding(std::string_view check, const CheckContext& ctx, const Conflict& c) {
  const Instruction& insn = ctx.kernel.instructions[c.instruction];
  const Instruction& mma = ctx.kernel.instructions[c.wgmma];
  Finding f{std::string(check),
            ctx.kernel.name,
            insn.address,
            insn.text,
            mma.address,
            mma.text,
            c.access == Access::write ? "write" : "read",
            c.registers,
            c.over_back_edge,
            {},
            {}};
  const bool wrap = c.over_back_edge || c.instruction < c.wgmma;
  if (const Instruction* wait = wait_between(ctx.kernel, c.wgmma, c.instruction, wrap)) {
    f.wait_address = wait->address;
    f.wait_instruction = wait->text;
  }
  return f;
}

constexpr std::string_view k_a_reg_reuse = "wgmma-a-reg-reuse";
constexpr std::string_view k_acc_in_flight = "wgmma-acc-in-flight";

/// The ptxas bug of shared/DESIGN.md: the next loads land in the registers that
/// an in-flight HGMMA still reads as its A fragment.
void check_a_reg_reuse(const CheckContext& ctx, std::vector<Finding>& out) {
  for (const auto& c : ctx.scoreboard.conflicts) {
    if (c.role == HeldRole::a_operand) {
      out.push_back(to_finding(k_a_reg_reuse, ctx, c));
    }
  }
}

/// The accumulator is the MMA's output: touching it before the DEPBAR that
/// retires the MMA reads stale values or races with the result.
void check_acc_in_flight(const CheckContext& ctx, std::vector<Finding>& out) {
  for (const auto& c : ctx.scoreboard.conflicts) {
    if (c.role == HeldRole::accumulator) {
      out.push_back(to_finding(k_acc_in_flight, ctx, c));
    }
  }
}

constexpr std::array<Check, 2> k_checks{{
    {k_a_reg_reuse,
     "an instruction writes a register that an in-flight warpgroup MMA (HGMMA) reads as its A operand, "
     "before the WARPGROUP.DEPBAR that retires it",
     &check_a_reg_reuse},
    {k_acc_in_flight,
     "an instruction other than an MMA chained on the same accumulator reads or writes the accumulator "
     "of an in-flight warpgroup MMA",
     &check_acc_in_flight},
}};

}  // namespace

std::span<const Check> all_checks() noexcept { return k_checks; }

const Check* find_check(std::string_view id) noexcept {
  for (const auto& c : k_checks) {
    if (c.id == id) {
      return &c;
    }
  }
  return nullptr;
}

const Check& require_check(std::string_view id) {
  if (const Check* c = find_check(id)) {
    return *c;
  }
  std::vector<std::string_view> known;
  for (const Check& c : k_checks) {
    known.push_back(c.id);
  }
  throw lp::UsageError(fmt::format("unknown SASS check '{}' (known: {})", id, fmt::join(known, ", ")));
}

}  // namespace lp::sass
