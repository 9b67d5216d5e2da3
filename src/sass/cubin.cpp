#include "sass/cubin.hpp"

#include <cstring>
#include <vector>

#include "util/error.hpp"

namespace lp::sass {
namespace {

constexpr std::uint8_t k_eiattr_frame_size = 0x11;
constexpr std::uint8_t k_eiattr_min_stack_size = 0x12;
constexpr std::uint8_t k_eiattr_regcount = 0x2f;
constexpr std::uint8_t k_eifmt_sval = 0x04;  // u16 size, then that many bytes

/// Bounds-checked little-endian reads from the file image.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : m_bytes(bytes) {}

  template <typename T>
  T at(std::uint64_t offset) const {
    if (offset > m_bytes.size() || m_bytes.size() - offset < sizeof(T)) {
      throw lp::Error("cubin: read of " + std::to_string(sizeof(T)) + " bytes at offset " +
                      std::to_string(offset) + " lies outside the " + std::to_string(m_bytes.size()) +
                      "-byte file");
    }
    T value;
    std::memcpy(&value, m_bytes.data() + offset, sizeof(T));
    return value;  // cubins are little-endian, and so is every host we build for
  }

  std::string c_string(std::uint64_t offset) const {
    if (offset >= m_bytes.size()) {
      throw lp::Error("cubin: string offset " + std::to_string(offset) + " lies outside the file");
    }
    std::string_view rest = m_bytes.substr(offset);
    return std::string(rest.substr(0, rest.find('\0')));
  }

  [[nodiscard]] std::size_t size() const noexcept { return m_bytes.size(); }

 private:
  std::string_view m_bytes;
};

struct Section {
  std::string name;
  std::uint32_t type = 0;
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  std::uint32_t link = 0;
  std::uint64_t entsize = 0;
};

std::vector<Section> read_sections(const Reader& r) {
  const auto shoff = r.at<std::uint64_t>(0x28);
  const auto shentsize = r.at<std::uint16_t>(0x3a);
  const auto shnum = r.at<std::uint16_t>(0x3c);
  const auto shstrndx = r.at<std::uint16_t>(0x3e);
  if (shentsize < 64 || shstrndx >= shnum) {
    throw lp::Error("cubin: malformed section header table");
  }
  std::vector<Section> sections(shnum);
  std::vector<std::uint32_t> name_offsets(shnum);
  for (std::uint16_t i = 0; i < shnum; ++i) {
    const std::uint64_t h = shoff + std::uint64_t{i} * shentsize;
    name_offsets[i] = r.at<std::uint32_t>(h);
    sections[i].type = r.at<std::uint32_t>(h + 4);
    sections[i].offset = r.at<std::uint64_t>(h + 24);
    sections[i].size = r.at<std::uint64_t>(h + 32);
    sections[i].link = r.at<std::uint32_t>(h + 40);
    sections[i].entsize = r.at<std::uint64_t>(h + 56);
  }
  const Section& names = sections[shstrndx];
  for (std::uint16_t i = 0; i < shnum; ++i) {
    sections[i].name = r.c_string(names.offset + name_offsets[i]);
  }
  return sections;
}

}  // namespace

bool looks_like_elf(std::string_view bytes) noexcept {
  return bytes.size() >= 4 && bytes.substr(0, 4) == std::string_view("\x7f" "ELF", 4);
}

std::map<std::string, FunctionResources> read_function_resources(std::string_view bytes) {
  if (!looks_like_elf(bytes)) {
    throw lp::Error("cubin: not an ELF file");
  }
  if (bytes.size() < 64 || bytes[4] != 2 || bytes[5] != 1) {
    throw lp::Error("cubin: not a 64-bit little-endian ELF file");
  }
  const Reader r(bytes);
  const std::vector<Section> sections = read_sections(r);
  std::map<std::string, FunctionResources> out;
  for (const Section& info : sections) {
    if (info.name != ".nv.info") {
      continue;
    }
    if (info.link >= sections.size()) {
      throw lp::Error("cubin: .nv.info links to a missing symbol table");
    }
    const Section& symtab = sections[info.link];
    const Section& strtab = sections.at(symtab.link);
    const std::uint64_t symsize = symtab.entsize != 0 ? symtab.entsize : 24;
    auto symbol_name = [&](std::uint32_t index) {
      if (std::uint64_t{index} * symsize >= symtab.size) {
        throw lp::Error("cubin: .nv.info names symbol " + std::to_string(index) + " past the symbol table");
      }
      return r.c_string(strtab.offset + r.at<std::uint32_t>(symtab.offset + index * symsize));
    };
    for (std::uint64_t p = info.offset; p + 4 <= info.offset + info.size;) {
      const auto format = r.at<std::uint8_t>(p);
      const auto attribute = r.at<std::uint8_t>(p + 1);
      if (format != k_eifmt_sval) {
        p += 4;  // the other formats carry at most two bytes inline
        continue;
      }
      const auto size = r.at<std::uint16_t>(p + 2);
      if (size == 8 && (attribute == k_eiattr_regcount || attribute == k_eiattr_frame_size ||
                        attribute == k_eiattr_min_stack_size)) {
        FunctionResources& res = out[symbol_name(r.at<std::uint32_t>(p + 4))];
        const auto value = r.at<std::uint32_t>(p + 8);
        if (attribute == k_eiattr_regcount) {
          res.registers = static_cast<int>(value);
        } else if (attribute == k_eiattr_frame_size) {
          res.frame_bytes = value;
        } else {
          res.min_stack_bytes = value;
        }
      }
      p += 4 + size;
    }
  }
  return out;
}

}  // namespace lp::sass
