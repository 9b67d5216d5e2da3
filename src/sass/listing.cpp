#include "sass/listing.hpp"

#include <cctype>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <regex>
#include <stdexcept>
#include "util/json_bounded.hpp"
#include "util/text.hpp"

namespace lp::sass {

namespace {


/// "EF_CUDA_SM90 ... EF_CUDA_ACCELERATORS" -> "sm_90a".
std::string arch_from_headerflags(std::string_view line) {
  static const std::regex k_sm(R"(EF_CUDA_SM(\d+))");
  std::match_results<std::string_view::const_iterator> m;
  if (!std::regex_search(line.begin(), line.end(), m, k_sm)) {
    return {};
  }
  std::string arch = "sm_" + m[1].str();
  if (line.find("EF_CUDA_ACCELERATORS") != std::string_view::npos) {
    arch += "a";
  }
  return arch;
}

/// Builds kernels line by line; labels wait for the next instruction's address.
class TextListingBuilder {
 public:
  explicit TextListingBuilder(std::string_view source) : m_source(source) {}

  void start_function(std::string name) {
    finish_function();
    m_current = KernelListing{};
    m_current.name = std::move(name);
    m_open = true;
  }

  void end_function() { finish_function(); }

  void label(std::string name) {
    ensure_open();
    m_pending.push_back(std::move(name));
  }

  void instruction(std::uint64_t address, std::string_view text, int line) {
    ensure_open();
    if (!m_current.instructions.empty() && address <= m_current.instructions.back().address) {
      throw ListingError(m_source, line, "address 0x" + hex(address) + " does not follow the previous one");
    }
    try {
      m_current.instructions.push_back(parse_instruction(address, text));
    } catch (const std::invalid_argument& e) {
      throw ListingError(m_source, line, e.what());
    }
    m_current.instructions.back().line = line;
    for (auto& name : m_pending) {
      m_current.labels[name] = address;
    }
    m_pending.clear();
  }

  Listing take() {
    finish_function();
    return std::move(m_listing);
  }

  Listing& listing() { return m_listing; }

 private:
  static std::string hex(std::uint64_t v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%04llx", static_cast<unsigned long long>(v));
    return buf;
  }

  void ensure_open() {
    if (!m_open) {
      // A bare listing (a snippet pasted into a test or an issue): one function.
      start_function(m_source);
    }
  }

  void finish_function() {
    if (!m_open) {
      return;
    }
    std::uint64_t end = m_current.instructions.empty()
                            ? 0
                            : m_current.instructions.back().address + k_instruction_bytes;
    for (auto& name : m_pending) {
      m_current.labels[name] = end;
    }
    m_pending.clear();
    if (!m_current.instructions.empty()) {
      m_listing.kernels.push_back(std::move(m_current));
    }
    m_open = false;
  }

  std::string m_source;
  Listing m_listing;
  KernelListing m_current;
  std::vector<std::string> m_pending;
  bool m_open = false;
};

/// Strips a trailing encoding comment "/* 0x000fe2... */" from an instruction line.
std::string_view strip_encoding(std::string_view s) {
  std::size_t pos = s.rfind("/*");
  if (pos != std::string_view::npos && pos > 0) {
    std::string_view tail = trim(s.substr(pos + 2));
    if (tail.starts_with("0x")) {
      s = s.substr(0, pos);
    }
  }
  return trim(s);
}

/// True for "RZ[" or "R92[" at the start of an operand or after a non-identifier
/// character: the comma before a memory operand went missing.
bool has_glued_memory_operand(std::string_view operands) {
  static const std::regex k_glued(R"((^|[^A-Za-z0-9_])(R\d+|RZ|UR\d+|URZ|P\d|PT|UP\d|UPT)\[)");
  return std::regex_search(operands.begin(), operands.end(), k_glued);
}

}  // namespace

Listing parse_text_listing(std::string_view text, std::string_view source) {
  TextListingBuilder builder(source);
  int line_no = 0;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t nl = text.find('\n', pos);
    std::string_view raw = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
    ++line_no;
    std::string_view line = trim(raw);
    if (line.empty() || line.starts_with("//") || line.starts_with('#')) {
      continue;
    }
    if (line.starts_with("/*")) {
      std::size_t close = line.find("*/");
      if (close == std::string_view::npos) {
        throw ListingError(std::string(source), line_no, "unterminated comment");
      }
      std::string_view inside = trim(line.substr(2, close - 2));
      if (inside.starts_with("0x") || inside.empty()) {
        continue;  // an encoding line of -hex / cuobjdump output
      }
      std::uint64_t address = 0;
      for (char c : inside) {
        if (std::isxdigit(static_cast<unsigned char>(c)) == 0) {
          throw ListingError(std::string(source), line_no, "bad address '" + std::string(inside) + "'");
        }
        address = address * 16 + static_cast<std::uint64_t>(std::isdigit(static_cast<unsigned char>(c)) != 0
                                                                ? c - '0'
                                                                : std::tolower(c) - 'a' + 10);
      }
      std::string_view body = strip_encoding(line.substr(close + 2));
      if (body.starts_with('{')) {
        body = trim(body.substr(1));  // dual-issue braces of older architectures
      }
      if (body.ends_with('}')) {
        body = trim(body.substr(0, body.size() - 1));
      }
      if (body.empty()) {
        throw ListingError(std::string(source), line_no, "address without an instruction");
      }
      builder.instruction(address, body, line_no);
      continue;
    }
    if (line.starts_with("Function :")) {  // cuobjdump -sass
      builder.start_function(std::string(trim(line.substr(10))));
      continue;
    }
    if (line.starts_with("arch = ")) {  // cuobjdump -sass
      builder.listing().arch = std::string(trim(line.substr(7)));
      continue;
    }
    if (line.ends_with(':') && line.find_first_of(" \t") == std::string_view::npos) {
      builder.label(std::string(line.substr(0, line.size() - 1)));
      continue;
    }
    if (line.starts_with('.')) {
      const std::string_view directive = line.substr(0, line.find_first_of(" \t"));
      if (directive == ".section") {
        std::string_view rest = trim(line.substr(directive.size()));
        std::string_view name = rest.substr(0, rest.find(','));
        if (name.starts_with(".text.")) {
          builder.start_function(std::string(name.substr(6)));
        } else {
          builder.end_function();
        }
      } else if (directive == ".headerflags") {
        builder.listing().arch = arch_from_headerflags(line);
      }
      continue;  // other directives (.align, .type, .size, ...) say nothing we use
    }
    if (line == "{" || line == "}" || line.starts_with("code for") || line.starts_with("Fatbin") ||
        line.starts_with("..........")) {
      continue;  // cuobjdump framing
    }
    throw ListingError(std::string(source), line_no, "cannot parse '" + std::string(line) + "'");
  }
  return builder.take();
}

namespace {

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

}  // namespace lp::sass
