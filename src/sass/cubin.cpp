#include "sass/cubin.hpp"

#include "sass/instruction.hpp"

#include <cctype>
#include <cstring>
#include <vector>

#include "util/text.hpp"
#include "util/error.hpp"

namespace lp::sass {
namespace {

constexpr std::uint8_t k_eiattr_frame_size = 0x11;
constexpr std::uint8_t k_eiattr_min_stack_size = 0x12;
constexpr std::uint8_t k_eiattr_regcount = 0x2f;
constexpr std::uint8_t k_eifmt_sval = 0x04;  // u16 size, then that many bytes
constexpr std::uint8_t k_eiattr_param_cbank = 0x0a;
constexpr std::uint8_t k_eiattr_kparam_info = 0x17;

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
  std::uint64_t flags = 0;
  std::uint32_t info = 0;
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
    sections[i].flags = r.at<std::uint64_t>(h + 8);
    sections[i].info = r.at<std::uint32_t>(h + 44);
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

constexpr std::uint32_t k_sht_progbits = 1;
constexpr std::uint32_t k_sht_rela = 4;
constexpr std::uint32_t k_sht_rel = 9;
constexpr std::uint64_t k_shf_execinstr = 0x4;
constexpr std::uint16_t k_et_exec = 2;
constexpr std::uint32_t k_ef_cuda_accelerators_v1 = 0x800;

/// "-arch sm_90a" or "-arch sm_90" as a whole word in `text` (ptxas's command line in
/// the new layout's .note.nv.tkinfo): true/false for accelerators, nullopt when neither.
std::optional<bool> tkinfo_accelerators(std::string_view text, int sm) {
  const std::string plain = "-arch sm_" + std::to_string(sm);
  std::optional<bool> found;
  for (std::size_t at = text.find(plain); at != std::string_view::npos; at = text.find(plain, at + 1)) {
    const std::size_t end = at + plain.size();
    const char next = end < text.size() ? text[end] : '\0';
    const char after = end + 1 < text.size() ? text[end + 1] : '\0';
    const bool word_end = !is_word_char(next);
    const bool a_then_end = next == 'a' && !is_word_char(after);
    const std::optional<bool> here = word_end ? std::optional<bool>(false)
                                              : a_then_end ? std::optional<bool>(true) : std::nullopt;
    if (here) {
      if (found && *found != *here) {
        return std::nullopt;  // both spellings: not for this reader to decide
      }
      found = here;
    }
  }
  return found;
}

FunctionCodeOrWhy function_code_or_throw(std::string_view bytes) {
  FunctionCodeOrWhy out;
  auto why = [&out](std::string text) {
    out.why_not = std::move(text);
    return out;
  };
  if (!looks_like_elf(bytes) || bytes.size() < 64 || bytes[4] != 2 || bytes[5] != 1) {
    return why("not a 64-bit little-endian ELF");
  }
  const Reader r(bytes);
  if (r.at<std::uint16_t>(0x10) != k_et_exec) {
    return why("not an executable cubin (ET_EXEC)");
  }
  const std::vector<Section> sections = read_sections(r);
  std::optional<std::size_t> text;
  for (std::size_t i = 0; i < sections.size(); ++i) {
    if ((sections[i].flags & k_shf_execinstr) == 0) {
      continue;
    }
    if (text) {
      return why("more than one executable section");
    }
    text = i;
  }
  if (!text) {
    return why("no executable section");
  }
  const Section& code = sections[*text];
  if (code.type != k_sht_progbits || !code.name.starts_with(".text.") || code.name.size() == 6) {
    return why("the executable section is not a .text.<function> PROGBITS section");
  }
  if (code.size == 0 || code.size % k_instruction_bytes != 0 || code.offset > bytes.size() ||
      bytes.size() - code.offset < code.size) {
    return why("the code is not a whole number of 16-byte instructions inside the file");
  }
  for (const Section& s : sections) {
    if ((s.type == k_sht_rel || s.type == k_sht_rela) && s.info == *text && s.size > 0) {
      return why("relocations apply to the code");
    }
  }
  const auto osabi = static_cast<std::uint8_t>(bytes[7]);
  const auto abiversion = static_cast<std::uint8_t>(bytes[8]);
  const auto e_flags = r.at<std::uint32_t>(0x30);
  int sm = 0;
  std::optional<bool> accelerators;
  if (osabi == 0x33 && abiversion == 7) {
    sm = static_cast<int>(e_flags & 0xff);
    accelerators = (e_flags & k_ef_cuda_accelerators_v1) != 0;
  } else if (osabi == 0x41 && abiversion == 8) {
    sm = static_cast<int>((e_flags >> 8) & 0xff);
    for (const Section& s : sections) {
      if (s.name == ".note.nv.tkinfo" && s.offset <= bytes.size() && bytes.size() - s.offset >= s.size) {
        accelerators = tkinfo_accelerators(bytes.substr(s.offset, s.size), sm);
      }
    }
  } else {
    return why("an ELF layout this reader does not know (EI_OSABI " + std::to_string(osabi) + ", EI_ABIVERSION " +
               std::to_string(abiversion) + ")");
  }
  if (sm != 90) {
    return why("not sm_90 (SM " + std::to_string(sm) + ")");
  }
  if (!accelerators) {
    return why("the ELF does not say whether it is sm_90 or sm_90a");
  }
  out.code = FunctionCode{code.name.substr(6), bytes.substr(code.offset, code.size), *accelerators ? "SM90a" : "SM90"};
  return out;
}

}  // namespace

FunctionCodeOrWhy function_code(std::string_view cubin) {
  try {
    return function_code_or_throw(cubin);
  } catch (const lp::Error& e) {  // a malformed ELF: why there is no code to compare
    FunctionCodeOrWhy out;
    out.why_not = e.what();
    return out;
  }
}

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
    if (symtab.link >= sections.size()) {
      throw lp::Error("cubin: the symbol table of .nv.info links to a missing string table");
    }
    const Section& strtab = sections[symtab.link];
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

std::optional<int> ParamLayout::ordinal_at(std::uint32_t at) const {
  for (const Param& p : params) {
    if (at >= bank_offset + p.offset && at < bank_offset + p.offset + p.bytes) {
      return p.ordinal;
    }
  }
  return std::nullopt;
}

std::map<std::string, ParamLayout> read_param_layouts(std::string_view bytes) {
  if (!looks_like_elf(bytes) || bytes.size() < 64 || bytes[4] != 2 || bytes[5] != 1) {
    throw lp::Error("cubin: not a 64-bit little-endian ELF file");
  }
  const Reader r(bytes);
  std::map<std::string, ParamLayout> out;
  const std::string prefix = ".nv.info.";
  for (const Section& info : read_sections(r)) {
    if (info.name.size() <= prefix.size() || info.name.compare(0, prefix.size(), prefix) != 0) {
      continue;
    }
    ParamLayout layout;
    bool has_bank = false;
    for (std::uint64_t p = info.offset; p + 4 <= info.offset + info.size;) {
      const auto format = r.at<std::uint8_t>(p);
      const auto attribute = r.at<std::uint8_t>(p + 1);
      if (format != k_eifmt_sval) {
        p += 4;
        continue;
      }
      const auto size = r.at<std::uint16_t>(p + 2);
      if (attribute == k_eiattr_param_cbank && size >= 8) {
        layout.bank_offset = r.at<std::uint16_t>(p + 8);
        has_bank = true;
      } else if (attribute == k_eiattr_kparam_info && size >= 12) {
        const auto flags = r.at<std::uint32_t>(p + 12);
        layout.params.push_back({r.at<std::uint16_t>(p + 8), r.at<std::uint16_t>(p + 10), (flags >> 18) & 0x3fffU});
      }
      p += 4 + size;
    }
    if (has_bank) {
      out[info.name.substr(prefix.size())] = std::move(layout);
    }
  }
  return out;
}

}  // namespace lp::sass
