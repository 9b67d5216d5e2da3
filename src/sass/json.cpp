// The sass library's one unit that compiles the JSON library: nvdisasm's `-json`
// listing read (listing.hpp), and a report's JSON form written and read back (analyze.hpp).
#include "sass/analyze.hpp"
#include "sass/listing.hpp"

#include <regex>

#include <nlohmann/json.hpp>

#include "sass/instruction.hpp"
#include "util/error.hpp"
#include "util/json_bounded.hpp"
#include "util/text.hpp"

namespace lp::sass {
namespace {

/// True for "RZ[" or "R92[" at the start of an operand or after a non-identifier
/// character: the comma before a memory operand went missing.
bool has_glued_memory_operand(std::string_view operands) {
  static const std::regex k_glued(R"((^|[^A-Za-z0-9_])(R\d+|RZ|UR\d+|URZ|P\d|PT|UP\d|UPT)\[)");
  return std::regex_search(operands.begin(), operands.end(), k_glued);
}

Listing parse_json_listing_unchecked(std::string_view text, std::string_view source) {
  const std::string src(source);
  // nvdisasm's layout nests 5 deep (header, functions, instructions, operands); a deeper
  // text is no listing, and is refused before it is parsed.
  if (json_nesting(text) > 32) {
    throw ListingError(src, 0, "nesting deeper than 32 levels: not nvdisasm's JSON");
  }
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for an overflowing number
    throw ListingError(src, 0, "not JSON: " + json_error_text(e));
  }
  if (!doc.is_array() || doc.size() != 2 || !doc[0].is_object() || !doc[1].is_array()) {
    throw ListingError(src, 0, "expected nvdisasm's [header, [functions]] layout");
  }
  Listing listing;
  const auto& header = doc[0];
  // find(), not operator[]: on a const json a missing key is undefined behaviour
  // (found by fuzz/sass_fuzzer as a heap-buffer-overflow).
  if (const auto sm = header.find("SM"); sm != header.end() && sm->is_object()) {
    if (const auto v = sm->find("version"); v != sm->end() && v->is_object()) {
      listing.arch = "sm_" + std::to_string(v->value("major", 0)) + std::to_string(v->value("minor", 0));
    }
  }
  listing.producer = header.value("Producer", "");
  for (const auto& fn : doc[1]) {
    KernelListing kernel;
    kernel.name = fn.value("function-name", "");
    const std::uint64_t start = fn.value("start", std::uint64_t{0});
    const std::uint64_t length = fn.value("length", std::uint64_t{0});
    const auto& insns = fn.at("sass-instructions");
    if (length != insns.size() * k_instruction_bytes) {
      throw ListingError(src, 0,
                         "function '" + kernel.name + "': length " + std::to_string(length) + " is not " +
                             std::to_string(insns.size()) + " instructions of 16 bytes");
    }
    for (std::size_t i = 0; i < insns.size(); ++i) {
      const auto& j = insns[i];
      const int index = static_cast<int>(i) + 1;
      const std::string operands = j.value("operands", "");
      if (has_glued_memory_operand(operands)) {
        throw UnreliableJsonError(src, index,
                                  "function '" + kernel.name + "': operand list '" + operands +
                                      "' lost a comma (nvdisasm JSON before 13.5)");
      }
      std::string line = j.value("predicate", "");
      line += (line.empty() ? "" : " ") + j.value("opcode", "");
      const auto pieces = split_operands(operands);
      for (std::size_t k = 0; k < pieces.size(); ++k) {
        line += (k == 0 ? " " : ", ") + pieces[k];
      }
      try {
        kernel.instructions.push_back(parse_instruction(start + i * k_instruction_bytes, line));
      } catch (const std::invalid_argument& e) {
        throw ListingError(src, index, "function '" + kernel.name + "': " + e.what());
      }
      kernel.instructions.back().line = index;
    }
    listing.kernels.push_back(std::move(kernel));
  }
  return listing;
}

}  // namespace

Listing parse_json_listing(std::string_view text, std::string_view source) {
  try {
    return parse_json_listing_unchecked(text, source);
  } catch (const nlohmann::json::exception& e) {
    // A field of the wrong type (a number where an object belongs, ...) deep in the layout.
    throw ListingError(std::string(source), 0, std::string("unexpected nvdisasm JSON layout: ") + e.what());
  }
}

void to_json(nlohmann::json& j, const Finding& f) {
  nlohmann::json regs = nlohmann::json::array();
  for (int r : f.registers) {
    regs.push_back(gpr_name(r));
  }
  j = nlohmann::json{{"check", f.check},
                     {"kernel", f.kernel},
                     {"address", format_address(f.address)},
                     {"instruction", f.instruction},
                     {"access", f.access},
                     {"registers", std::move(regs)},
                     {"wgmma", {{"address", format_address(f.wgmma_address)}, {"instruction", f.wgmma_instruction}}},
                     {"over_back_edge", f.over_back_edge},
                     {"wait", f.wait_instruction.empty()
                                  ? nlohmann::json()
                                  : nlohmann::json{{"address", format_address(f.wait_address)},
                                                   {"instruction", f.wait_instruction}}}};
}

void to_json(nlohmann::json& j, const EarlyRead& f) {
  j = nlohmann::json{{"check", "gdc-early-read"},
                     {"kernel", f.kernel},
                     {"address", format_address(f.address)},
                     {"instruction", f.instruction},
                     {"param", f.param},
                     {"wait", {{"address", format_address(f.wait_address)}, {"instruction", f.wait_instruction}}}};
}

void to_json(nlohmann::json& j, const KernelStats& s) {
  auto opt = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  j = nlohmann::json{{"instructions", s.instructions},
                     {"basic_blocks", s.basic_blocks},
                     {"back_edges", s.back_edges},
                     {"wgmma", s.wgmma},
                     {"wgmma_register_a", s.wgmma_register_a},
                     {"a_from_registers", s.a_from_registers()},
                     {"max_groups_in_flight", s.max_groups_in_flight},
                     {"local_loads", s.local_loads},
                     {"local_stores", s.local_stores},
                     {"registers", opt(s.registers)},
                     {"frame_bytes", opt(s.frame_bytes)},
                     {"min_stack_bytes", opt(s.min_stack_bytes)},
                     {"gdc_waits", s.gdc_waits}};
}

void to_json(nlohmann::json& j, const KernelReport& k) {
  j = nlohmann::json{{"name", k.name}, {"stats", k.stats}, {"findings", k.findings}, {"early_reads", k.early_reads}};
}

void to_json(nlohmann::json& j, const ListingReport& r) {
  j = nlohmann::json{{"arch", r.arch},
                     {"checks", r.checks},
                     {"finding_count", r.finding_count()},
                     {"early_read_count", r.early_read_count()},
                     {"analysis_ms", r.analysis_ms},
                     {"kernels", r.kernels}};
}

void to_json(nlohmann::json& j, const Nvdisasm& d) {
  j = nlohmann::json{{"path", d.path}, {"origin", d.origin}, {"version", d.version}, {"sha256", d.sha256}};
}

void to_json(nlohmann::json& j, const CubinReport& r) {
  to_json(j, static_cast<const ListingReport&>(r));
  j["cubin_sha256"] = r.cubin_sha256;
  j["cubin_bytes"] = r.cubin_bytes;
  j["disassembler"] = r.disassembler;
  j["disassembler"]["format"] = r.listing_format;
  j["disassembler"]["input"] = r.input;
  j["warnings"] = r.warnings;
  j["disassemble_ms"] = r.disassemble_ms;
}

JsonText to_json_text(const CubinReport& r) { return JsonText::of(r); }

JsonText to_json_text(const Nvdisasm& d) { return JsonText::of(d); }

namespace {

/// "0x1a30" as written; anything else is a value outside the vocabulary (lp::Error),
/// so the reader below refuses the entry rather than letting an exception escape it.
std::uint64_t address_of(const nlohmann::json& j) {
  const std::string text = j.get<std::string>();
  const std::optional<std::uint64_t> value =
      text.rfind("0x", 0) == 0 ? parse_number<std::uint64_t>(std::string_view(text).substr(2), 16) : std::nullopt;
  if (!value) {
    throw lp::Error("not an address: " + text);
  }
  return *value;
}

/// "R12": a register of the SASS register file (R0 to R255).
int register_of(const nlohmann::json& j) {
  const std::string text = j.get<std::string>();
  const std::optional<unsigned> number =
      text.rfind('R', 0) == 0 ? parse_number<unsigned>(std::string_view(text).substr(1)) : std::nullopt;
  if (!number || *number > 255) {
    throw lp::Error("not a register: " + text);
  }
  return static_cast<int>(*number);
}

template <class T>
std::optional<T> optional_of(const nlohmann::json& j) {
  return j.is_null() ? std::nullopt : std::optional<T>(j.get<T>());
}

Finding finding_of(const nlohmann::json& j) {
  Finding f;
  f.check = j.at("check").get<std::string>();
  f.kernel = j.at("kernel").get<std::string>();
  f.address = address_of(j.at("address"));
  f.instruction = j.at("instruction").get<std::string>();
  f.access = j.at("access").get<std::string>();
  for (const nlohmann::json& r : j.at("registers")) {
    f.registers.push_back(register_of(r));
  }
  f.wgmma_address = address_of(j.at("wgmma").at("address"));
  f.wgmma_instruction = j.at("wgmma").at("instruction").get<std::string>();
  f.over_back_edge = j.at("over_back_edge").get<bool>();
  if (const nlohmann::json& wait = j.at("wait"); !wait.is_null()) {
    f.wait_address = address_of(wait.at("address"));
    f.wait_instruction = wait.at("instruction").get<std::string>();
  }
  return f;
}

KernelStats stats_of(const nlohmann::json& j) {
  KernelStats s;
  s.instructions = j.at("instructions").get<std::size_t>();
  s.basic_blocks = j.at("basic_blocks").get<std::size_t>();
  s.back_edges = j.at("back_edges").get<std::size_t>();
  s.wgmma = j.at("wgmma").get<std::size_t>();
  s.wgmma_register_a = j.at("wgmma_register_a").get<std::size_t>();
  s.max_groups_in_flight = j.at("max_groups_in_flight").get<int>();
  s.local_loads = j.at("local_loads").get<std::size_t>();
  s.local_stores = j.at("local_stores").get<std::size_t>();
  s.registers = optional_of<int>(j.at("registers"));
  s.frame_bytes = optional_of<std::uint32_t>(j.at("frame_bytes"));
  s.min_stack_bytes = optional_of<std::uint32_t>(j.at("min_stack_bytes"));
  s.gdc_waits = j.at("gdc_waits").get<std::size_t>();
  return s;
}

EarlyRead early_read_of(const nlohmann::json& j) {
  EarlyRead f;
  f.kernel = j.at("kernel").get<std::string>();
  f.address = address_of(j.at("address"));
  f.instruction = j.at("instruction").get<std::string>();
  f.param = j.at("param").get<std::string>();
  f.wait_address = address_of(j.at("wait").at("address"));
  f.wait_instruction = j.at("wait").at("instruction").get<std::string>();
  return f;
}

}  // namespace

std::optional<CubinReport> cubin_report_from_json(const nlohmann::json& j) {
  try {
    CubinReport r;
    r.arch = j.at("arch").get<std::string>();
    r.checks = j.at("checks").get<std::vector<std::string>>();
    r.analysis_ms = j.at("analysis_ms").get<double>();
    for (const nlohmann::json& k : j.at("kernels")) {
      KernelReport kernel;
      kernel.name = k.at("name").get<std::string>();
      kernel.stats = stats_of(k.at("stats"));
      for (const nlohmann::json& f : k.at("findings")) {
        kernel.findings.push_back(finding_of(f));
      }
      for (const nlohmann::json& f : k.at("early_reads")) {
        kernel.early_reads.push_back(early_read_of(f));
      }
      r.kernels.push_back(std::move(kernel));
    }
    r.cubin_sha256 = j.at("cubin_sha256").get<std::string>();
    r.cubin_bytes = j.at("cubin_bytes").get<std::size_t>();
    const nlohmann::json& d = j.at("disassembler");
    r.disassembler.path = d.at("path").get<std::string>();
    r.disassembler.origin = d.at("origin").get<std::string>();
    r.disassembler.version = d.at("version").get<std::string>();
    r.disassembler.sha256 = d.at("sha256").get<std::string>();
    r.listing_format = d.at("format").get<std::string>();
    r.input = d.at("input").get<std::string>();
    r.warnings = j.at("warnings").get<std::vector<std::string>>();
    r.disassemble_ms = j.at("disassemble_ms").get<double>();
    // Equal to what would be written: finding_count is the findings' count, the
    // accesses and addresses are in their one spelling, no key is extra.
    if (nlohmann::json(r) != j) {
      return std::nullopt;
    }
    return r;
  } catch (const nlohmann::json::exception&) {  // a missing key, a wrong type, a number out of range
    return std::nullopt;
  } catch (const lp::Error&) {  // a value outside its vocabulary
    return std::nullopt;
  }
}

bool same_findings(const ListingReport& a, const ListingReport& b) {
  if (a.kernels.size() != b.kernels.size()) {
    return false;
  }
  for (std::size_t k = 0; k < a.kernels.size(); ++k) {
    const KernelReport& x = a.kernels[k];
    const KernelReport& y = b.kernels[k];
    // Compared in their JSON form: every field of every finding, in the one spelling.
    if (x.name != y.name || nlohmann::json(x.findings) != nlohmann::json(y.findings) ||
        nlohmann::json(x.early_reads) != nlohmann::json(y.early_reads)) {
      return false;
    }
  }
  return true;
}

}  // namespace lp::sass
