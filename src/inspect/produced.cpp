#include "inspect/produced.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <optional>
#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "util/files.hpp"

namespace lp::inspect {
namespace {

namespace fs = std::filesystem;

/// A .ttir is a few hundred kilobytes; a bigger one is not read.
constexpr std::size_t k_max_ttir_bytes = std::size_t{16} << 20;

bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.'; }

/// The name of the PTX's first `.entry`.
std::string ptx_entry(std::string_view ptx) {
  const std::size_t at = ptx.find(".entry ");
  if (at == std::string_view::npos) {
    return {};
  }
  std::size_t i = at + 7;
  while (i < ptx.size() && ptx[i] == ' ') {
    ++i;
  }
  std::size_t end = i;
  while (end < ptx.size() && is_name_char(ptx[end])) {
    ++end;
  }
  return std::string(ptx.substr(i, end - i));
}

/// The PTX ordinal of parameter `name` of the embedded variants whose entry is `kernel`,
/// when every one that has it has it at the same place (vLLM's `_lora_expand_kernel`
/// has `input_ptr` first under every specialisation); nullopt otherwise.
std::optional<int> embedded_ordinal(const kernels::KernelSets& sets, const std::string& kernel, const std::string& name) {
  std::optional<int> ordinal;
  for (const kernels::KernelSet& set : sets.all()) {
    for (const kernels::Variant& v : set.variants()) {
      if (!v.ok() || v.entry != kernel) {
        continue;
      }
      for (const kernels::Param& p : v.params) {
        if (p.name == name) {
          if (ordinal && *ordinal != p.index) {
            return std::nullopt;
          }
          ordinal = p.index;
        }
      }
    }
  }
  return ordinal;
}

bool is_ordinal(const std::string& s) {
  return !s.empty() && s.size() <= 4 && std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(c); });
}

}  // namespace

TtirSignature ttir_signature(std::string_view ttir) {
  TtirSignature out;
  const std::size_t at = ttir.find("tt.func public @");
  if (at == std::string_view::npos) {
    return out;
  }
  std::size_t i = at + 16;
  std::size_t end = i;
  while (end < ttir.size() && is_name_char(ttir[end])) {
    ++end;
  }
  out.kernel = std::string(ttir.substr(i, end - i));
  if (end >= ttir.size() || ttir[end] != '(') {
    return TtirSignature{out.kernel, {}};
  }
  // The arguments: `%name: type {attrs} loc(...)`, separated by commas at depth 1.
  int depth = 0;
  bool expect_name = true;
  for (i = end; i < ttir.size(); ++i) {
    const char c = ttir[i];
    if (c == '(' || c == '{' || c == '[' || c == '<') {
      ++depth;
    } else if (c == ')' || c == '}' || c == ']' || c == '>') {
      if (--depth == 0) {
        break;
      }
    } else if (c == ',' && depth == 1) {
      expect_name = true;
    } else if (c == '"') {
      // A quoted string (a loc name): skip it, escapes included.
      for (++i; i < ttir.size() && ttir[i] != '"'; ++i) {
        i += ttir[i] == '\\' ? 1 : 0;
      }
    } else if (c == '%' && depth == 1 && expect_name) {
      std::size_t name_end = i + 1;
      while (name_end < ttir.size() && is_name_char(ttir[name_end])) {
        ++name_end;
      }
      out.params.emplace_back(ttir.substr(i + 1, name_end - i - 1));
      expect_name = false;
      i = name_end - 1;
    }
  }
  if (depth != 0) {
    out.params.clear();  // cut short: no order to trust
  }
  return out;
}

ProducedParams produced_for_file(const std::string& path, const std::string* ptx, const std::vector<std::string>& flag,
                                 const kernels::KernelSets& sets) {
  ProducedParams out;
  if (ptx == nullptr || ptx->find("griddepcontrol.wait") == std::string::npos) {
    return out;  // nothing waits: the check looks at nothing
  }
  TtirSignature signature;
  const fs::path ttir = fs::path(path).replace_extension(".ttir");
  std::error_code ec;
  if (ttir != fs::path(path) && fs::is_regular_file(ttir, ec)) {
    signature = ttir_signature(read_file(ttir.string(), k_max_ttir_bytes));
  }
  const std::string kernel = signature.kernel.empty() ? ptx_entry(*ptx) : signature.kernel;
  std::vector<std::string> wanted = flag;
  std::string source = "--produced";
  if (wanted.empty()) {
    for (const kernels::KernelSet& set : sets.all()) {
      for (const kernels::Variant& v : set.variants()) {
        if (v.ok() && v.entry == kernel && !v.produced.empty()) {
          wanted = v.produced;
          break;
        }
      }
      if (!wanted.empty()) {
        break;
      }
    }
    source = fmt::format("the embedded kernel sets' contract for {}", kernel);
  }
  if (wanted.empty()) {
    out.not_checked = fmt::format("gdc-early-read not checked: the PTX waits (griddepcontrol.wait) but nothing says "
                                  "which parameters of {} the previous grid writes; give --produced PARAM,...",
                                  kernel.empty() ? std::string("its kernel") : kernel);
    return out;
  }
  for (const std::string& name : wanted) {
    if (is_ordinal(name)) {
      const int ordinal = std::stoi(name);
      out.produced[ordinal] = static_cast<std::size_t>(ordinal) < signature.params.size()
                                  ? signature.params[static_cast<std::size_t>(ordinal)]
                                  : "param " + name;
      continue;
    }
    const auto it = std::find(signature.params.begin(), signature.params.end(), name);
    if (signature.params.empty() && flag.empty()) {
      // No .ttir: the contract's names go by the embedded variants' parameter order.
      if (const std::optional<int> ordinal = embedded_ordinal(sets, kernel, name)) {
        out.produced[*ordinal] = name;
        continue;
      }
    }
    if (signature.params.empty()) {
      out.produced.clear();
      out.not_checked = fmt::format("gdc-early-read not checked: {} names {}, but no {} beside {} gives the "
                                    "parameters' order; give --produced with ordinals (0 is the first parameter)",
                                    source, name, ttir.filename().string(), path);
      return out;
    }
    if (it == signature.params.end()) {
      out.produced.clear();
      out.not_checked = fmt::format("gdc-early-read not checked: {} names {}, which is not a parameter of {} ({})",
                                    source, name, kernel, fmt::join(signature.params, ", "));
      return out;
    }
    out.produced[static_cast<int>(it - signature.params.begin())] = name;
  }
  return out;
}

}  // namespace lp::inspect
