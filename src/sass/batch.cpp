#include "sass/batch.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "sass/cubin.hpp"
#include "util/text.hpp"
#include "util/error.hpp"
#include "util/elapsed.hpp"
#include "util/parallel.hpp"

namespace lp::sass {
namespace {

using Clock = std::chrono::steady_clock;

/// Where the last hex literal ("0x2680") of `text` starts and ends, if any.
std::optional<std::pair<std::size_t, std::size_t>> last_hex_literal(const std::string& text) {
  for (std::size_t at = text.rfind("0x"); at != std::string::npos; at = at == 0 ? std::string::npos : text.rfind("0x", at - 1)) {
    const bool starts_word = at == 0 || !is_word_char(text[at - 1]);
    std::size_t end = at + 2;
    while (end < text.size() && std::isxdigit(static_cast<unsigned char>(text[end]))) {
      ++end;
    }
    const bool ends_word = end == text.size() || !is_word_char(text[end]);
    if (starts_word && ends_word && end > at + 2 && end - at <= 18) {
      return std::make_pair(at, end);
    }
  }
  return std::nullopt;
}

struct Chunk {
  std::string arch;
  std::vector<std::size_t> items;  ///< indexes into the inputs, in order
};

}  // namespace

std::optional<Instruction> rebase(const Instruction& insn, std::uint64_t base, std::uint64_t size) {
  if (insn.address < base || insn.address - base >= size) {
    return std::nullopt;
  }
  const std::uint64_t address = insn.address - base;
  const std::string& b = insn.base;
  const bool absolute = b == "JMP" || b == "JMX" || b == "JMXU" || b == "BRX" || b == "BRXU" ||
                        ((b == "CALL" || b == "RET") && !insn.has_modifier("REL"));
  if (absolute) {
    return std::nullopt;
  }
  if (b != "BRA" && b != "BSSY" && b != "CALL" && b != "RET") {
    Instruction out = insn;
    out.address = address;
    return out;
  }
  const auto literal = last_hex_literal(insn.text);
  if (!literal) {
    return std::nullopt;
  }
  const auto [at, end] = *literal;
  const std::optional<std::uint64_t> parsed =
      parse_number<std::uint64_t>(std::string_view(insn.text).substr(at + 2, end - at - 2), 16);
  if (!parsed || *parsed < base) {
    return std::nullopt;
  }
  const std::uint64_t relative = *parsed - base;
  // RET.REL names its function's start; a branch or call lands inside the function;
  // a BSSY's reconvergence point may be its end.
  const bool inside = b == "RET" ? relative == 0 : b == "BSSY" ? relative <= size : relative < size;
  if (!inside || relative % 16 != 0) {
    return std::nullopt;
  }
  const std::string text = insn.text.substr(0, at) + fmt::format("{:#x}", relative) + insn.text.substr(end);
  try {
    Instruction out = parse_instruction(address, text);
    out.line = insn.line;
    return out;
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
}

namespace {

/// The chunks of one architecture's items: as many runs as threads (each run's
/// start-up is the cost), none above k_max_batch_kernels.
void add_chunks(const std::string& arch, const std::vector<std::size_t>& items, std::size_t threads,
                std::vector<Chunk>& chunks) {
  const std::size_t n = items.size();
  std::size_t count = std::min(threads, n);
  count = std::max(count, (n + k_max_batch_kernels - 1) / k_max_batch_kernels);
  for (std::size_t k = 0; k < count; ++k) {
    Chunk chunk{arch, {items.begin() + static_cast<std::ptrdiff_t>(k * n / count),
                       items.begin() + static_cast<std::ptrdiff_t>((k + 1) * n / count)}};
    if (!chunk.items.empty()) {
      chunks.push_back(std::move(chunk));
    }
  }
}

/// A batched listing's instructions, by address.
std::vector<const Instruction*> by_address(const Disassembly& d) {
  std::vector<const Instruction*> all;
  for (const KernelListing& k : d.listing.kernels) {
    for (const Instruction& insn : k.instructions) {
      all.push_back(&insn);
    }
  }
  std::sort(all.begin(), all.end(), [](const Instruction* a, const Instruction* b) { return a->address < b->address; });
  return all;
}

/// One cubin's function cut out of a batched listing (`all`, by address, from `next`
/// on): the code at [base, base + size), rebased to 0, into `kernel`. Returns why it
/// could not be cut; empty when it was.
std::string cut_kernel(const std::vector<const Instruction*>& all, std::size_t& next, std::uint64_t base,
                       std::uint64_t size, KernelListing& kernel) {
  std::string problem;
  while (next < all.size() && all[next]->address < base + size) {
    const Instruction& insn = *all[next++];
    if (insn.address != base + 16 * kernel.instructions.size()) {
      problem = fmt::format("the batched listing has no instruction at {:#x}", base + 16 * kernel.instructions.size());
      continue;
    }
    std::optional<Instruction> rebased = rebase(insn, base, size);
    if (!rebased) {
      problem = fmt::format("'{}' has a target this reader does not make relative", insn.text);
      continue;
    }
    kernel.instructions.push_back(std::move(*rebased));
  }
  if (problem.empty() && kernel.instructions.size() * 16 != size) {
    problem = fmt::format("the batched listing has {} instructions for {} bytes", kernel.instructions.size(), size);
  }
  return problem;
}

/// One disassemble_batch: the cubins' code grouped into chunks by architecture, each
/// chunk disassembled by one nvdisasm run and its listing cut back into each cubin's;
/// a cubin without extractable code, or whose cut fails, disassembled from its ELF.
class BatchRun {
 public:
  BatchRun(const Nvdisasm& tool, const std::vector<BatchInput>& inputs, std::chrono::milliseconds timeout)
      : m_tool(tool), m_inputs(inputs), m_timeout(timeout), m_out(inputs.size()), m_codes(inputs.size()) {}

  std::vector<BatchOutput> run(std::size_t threads) {
    std::map<std::string, std::vector<std::size_t>> by_arch;
    std::vector<std::size_t> alone;
    for (std::size_t i = 0; i < m_inputs.size(); ++i) {
      FunctionCodeOrWhy c = function_code(m_inputs[i].cubin);
      if (c.code) {
        by_arch[c.code->nvdisasm_arch].push_back(i);
        m_codes[i] = std::move(c.code);
      } else {
        m_out[i].why_cubin = std::move(c.why_not);
        alone.push_back(i);
      }
    }
    std::vector<Chunk> chunks;
    for (const auto& [arch, items] : by_arch) {
      add_chunks(arch, items, threads, chunks);
    }
    parallel_for(chunks.size() + alone.size(), threads, [&](std::size_t t) {
      if (t < chunks.size()) {
        run_chunk(chunks[t]);
      } else {
        from_elf(alone[t - chunks.size()]);
      }
    });
    return std::move(m_out);
  }

 private:
  void from_elf(std::size_t i) {
    const auto start = Clock::now();
    m_out[i].input = "cubin";
    try {
      m_out[i].disassembly = disassemble(m_tool, m_inputs[i].cubin, m_inputs[i].name, m_timeout);
    } catch (const Error& e) {
      m_out[i].error = e.what();
    }
    m_out[i].ms = ms_since(start);
  }

  void run_chunk(const Chunk& chunk) {
    std::string code;
    std::vector<std::uint64_t> offsets;
    for (const std::size_t i : chunk.items) {
      offsets.push_back(code.size());
      code.append(m_codes[i]->code);
    }
    const auto start = Clock::now();
    Disassembly d;
    try {
      d = disassemble_code(m_tool, code, chunk.arch,
                           fmt::format("{} cubin(s) from {}", chunk.items.size(), m_inputs[chunk.items.front()].name),
                           m_timeout);
    } catch (const Error& e) {
      for (const std::size_t i : chunk.items) {
        m_out[i].why_cubin = fmt::format("the batched nvdisasm run failed: {}", e.what());
        from_elf(i);
      }
      return;
    }
    const double share = ms_since(start) / static_cast<double>(chunk.items.size());
    const std::vector<const Instruction*> all = by_address(d);
    std::size_t next = 0;
    for (std::size_t k = 0; k < chunk.items.size(); ++k) {
      const std::size_t i = chunk.items[k];
      KernelListing kernel;
      kernel.name = m_codes[i]->function;
      const std::string problem = cut_kernel(all, next, offsets[k], m_codes[i]->code.size(), kernel);
      if (!problem.empty()) {
        m_out[i].why_cubin = problem;
        from_elf(i);
        continue;
      }
      Disassembly one;
      // The ELF's own word (JSON listings say "sm_90" for either).
      one.listing.arch = m_codes[i]->nvdisasm_arch == "SM90a" ? "sm_90a" : "sm_90";
      one.listing.producer = d.listing.producer;
      one.listing.kernels.push_back(std::move(kernel));
      one.format = d.format;
      one.warnings = d.warnings;
      m_out[i].disassembly = std::move(one);
      m_out[i].input = "code";
      m_out[i].ms = share;
    }
  }

  const Nvdisasm& m_tool;
  const std::vector<BatchInput>& m_inputs;
  const std::chrono::milliseconds m_timeout;
  std::vector<BatchOutput> m_out;
  std::vector<std::optional<FunctionCode>> m_codes;  ///< each cubin's function code, when it has one
};

}  // namespace

std::vector<BatchOutput> disassemble_batch(const Nvdisasm& tool, const std::vector<BatchInput>& inputs,
                                           unsigned jobs, std::chrono::milliseconds timeout) {
  const std::size_t threads = jobs == 0 ? hardware_threads() : jobs;
  return BatchRun(tool, inputs, timeout).run(threads);
}

}  // namespace lp::sass
