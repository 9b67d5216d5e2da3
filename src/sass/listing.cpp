#include "sass/listing.hpp"

#include <cctype>
#include <cstdio>
#include <regex>
#include <stdexcept>
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

}  // namespace lp::sass
