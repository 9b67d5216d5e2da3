#include "kernels/manifest.hpp"

#include <regex>

#include <fmt/format.h>

#include "util/error.hpp"
#include "util/json_bounded.hpp"
#include "util/release.hpp"

namespace lp::kernels {

using nlohmann::json;

namespace {

/// The ptxas options Triton 3.x's make_cubin passes (and its knobs add): a manifest is
/// a document, and ptxas runs with what it lists, so an option outside these (an -o,
/// an --input-as-string, a file name) is refused rather than passed on.
bool is_triton_ptxas_option(const std::vector<std::string>& options, std::size_t i) {
  static const std::regex k_allowed(
      R"((-lineinfo|-suppress-debug-func|-v|-g|--fmad=(true|false)|--opt-level|-O[0-3]|--regAllocOptLevel=[0-9]|)"
      R"(--gpu-name=sm_[0-9]{2,3}a?|-?-maxrregcount=[0-9]{1,3}))");
  if (std::regex_match(options[i], k_allowed)) {
    return true;
  }
  // --opt-level's value is the next element.
  return i > 0 && options[i - 1] == "--opt-level" && std::regex_match(options[i], std::regex("[0-3]"));
}

/// Typed field access with errors naming the manifest and the pointer.
class Reader {
 public:
  Reader(const std::string& source) : m_source(source) {}

  const json& field(const json& object, const std::string& ptr, const char* key) const {
    if (!object.is_object()) {
      throw InputError(m_source, ptr, fmt::format("expected an object, got {}", object.type_name()));
    }
    const auto it = object.find(key);
    if (it == object.end()) {
      throw InputError(m_source, ptr, fmt::format("missing \"{}\"", key));
    }
    return *it;
  }
  std::string string(const json& object, const std::string& ptr, const char* key) const {
    const json& v = field(object, ptr, key);
    if (!v.is_string()) {
      throw InputError(m_source, ptr + "/" + key, fmt::format("expected a string, got {}", v.dump()));
    }
    return v.get<std::string>();
  }
  std::int64_t integer(const json& object, const std::string& ptr, const char* key) const {
    const json& v = field(object, ptr, key);
    if (!v.is_number_integer()) {
      throw InputError(m_source, ptr + "/" + key, fmt::format("expected a whole number, got {}", v.dump()));
    }
    return v.get<std::int64_t>();
  }
  std::vector<std::string> strings(const json& object, const std::string& ptr, const char* key) const {
    const json& v = field(object, ptr, key);
    if (!v.is_array()) {
      throw InputError(m_source, ptr + "/" + key, fmt::format("expected a list, got {}", v.dump()));
    }
    std::vector<std::string> out;
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_string()) {
        throw InputError(m_source, fmt::format("{}/{}/{}", ptr, key, i), fmt::format("expected a string, got {}", v[i].dump()));
      }
      out.push_back(v[i].get<std::string>());
    }
    return out;
  }
  std::size_t size(const json& object, const std::string& ptr, const char* key) const {
    const std::int64_t v = integer(object, ptr, key);
    if (v < 0) {
      throw InputError(m_source, ptr + "/" + key, fmt::format("expected a size, got {}", v));
    }
    return static_cast<std::size_t>(v);
  }
  PackRef pack(const json& doc) const {
    const json& p = field(doc, "", "pack");
    PackRef ref{string(p, "/pack", "path"), string(p, "/pack", "sha256"), size(p, "/pack", "bytes"),
                size(p, "/pack", "stored_bytes")};
    if (ref.path != k_pack_name) {
      fail("/pack/path", fmt::format("expected \"{}\", got \"{}\"", k_pack_name, ref.path));
    }
    const std::string compression = string(p, "/pack", "compression");
    if (compression != "xz") {
      fail("/pack/compression", fmt::format("unknown compression \"{}\" (xz)", compression));
    }
    if (ref.bytes > k_max_pack_bytes) {
      fail("/pack/bytes", fmt::format("{} bytes, over the limit of {}", ref.bytes, k_max_pack_bytes));
    }
    return ref;
  }
  FileRef file(const json& files, const std::string& ptr, const char* key, const PackRef& pack) const {
    const json& f = field(files, ptr, key);
    const std::string p = ptr + "/" + key;
    FileRef ref{string(f, p, "path"), string(f, p, "sha256"), size(f, p, "bytes"), size(f, p, "offset")};
    // Checked here so that slicing the pack later cannot go out of bounds.
    if (ref.offset > pack.bytes || ref.bytes > pack.bytes - ref.offset) {
      fail(p, fmt::format("offset {} + {} bytes lies outside the {}-byte pack", ref.offset, ref.bytes, pack.bytes));
    }
    return ref;
  }
  [[noreturn]] void fail(const std::string& ptr, const std::string& message) const {
    throw InputError(m_source, ptr, message);
  }

 private:
  const std::string& m_source;
};

Variant parse_variant(const Reader& r, const json& v, const std::string& ptr, const PackRef& pack) {
  Variant out;
  out.id = r.string(v, ptr, "id");
  out.op = r.string(v, ptr, "op");
  out.role = r.string(v, ptr, "role");
  out.status = r.string(v, ptr, "status");
  out.axes = r.field(v, ptr, "axes");
  if (!out.axes.is_object()) {
    r.fail(ptr + "/axes", "expected an object");
  }
  if (out.status != "ok") {
    if (out.status != "rejected") {
      r.fail(ptr + "/status", fmt::format("unknown status \"{}\" (ok, rejected)", out.status));
    }
    out.reason = r.string(v, ptr, "reason");
    return out;
  }
  out.constexprs = r.field(v, ptr, "constexprs");
  out.num_warps = static_cast<int>(r.integer(v, ptr, "num_warps"));
  out.num_stages = static_cast<int>(r.integer(v, ptr, "num_stages"));
  const json& spec = r.field(v, ptr, "specialization");
  const std::string sp = ptr + "/specialization";
  out.specialization = {r.strings(spec, sp, "equal_to_1"), r.strings(spec, sp, "divisible_by_16"),
                        r.strings(spec, sp, "aligned_16"), r.strings(spec, sp, "unspecialized")};
  const json& grid = r.field(v, ptr, "grid");
  if (!grid.is_array() || grid.size() != 3) {
    r.fail(ptr + "/grid", "expected three dimensions");
  }
  for (std::size_t d = 0; d < 3; ++d) {
    if (!grid[d].is_array() || grid[d].empty()) {
      r.fail(fmt::format("{}/grid/{}", ptr, d), "expected a non-empty list of factors");
    }
    out.grid[d] = grid[d].get<GridDim>();
  }
  const json& block = r.field(v, ptr, "block");
  if (!block.is_array() || block.size() != 3) {
    r.fail(ptr + "/block", "expected [x, y, z]");
  }
  for (std::size_t d = 0; d < 3; ++d) {
    out.block[d] = block[d].get<int>();
  }
  out.entry = r.string(v, ptr, "entry");
  const json& params = r.field(v, ptr, "params");
  if (!params.is_array()) {
    r.fail(ptr + "/params", "expected a list");
  }
  for (std::size_t i = 0; i < params.size(); ++i) {
    const std::string pp = fmt::format("{}/params/{}", ptr, i);
    Param p{static_cast<int>(r.integer(params[i], pp, "index")), r.string(params[i], pp, "ptx_type"),
            r.string(params[i], pp, "name"), r.string(params[i], pp, "type")};
    if (p.index != static_cast<int>(i)) {
      r.fail(pp + "/index", fmt::format("expected {}, got {}", i, p.index));
    }
    out.params.push_back(std::move(p));
  }
  out.shared_bytes = r.integer(v, ptr, "shared_bytes");
  out.global_scratch_size = r.integer(v, ptr, "global_scratch_size");
  out.global_scratch_align = r.integer(v, ptr, "global_scratch_align");
  out.profile_scratch_size = r.integer(v, ptr, "profile_scratch_size");
  out.profile_scratch_align = r.integer(v, ptr, "profile_scratch_align");
  out.resource_usage = v.value("resource_usage", json::object());
  out.ptxas_version = r.string(v, ptr, "ptxas_version");
  const json& files = r.field(v, ptr, "files");
  out.ptx = r.file(files, ptr + "/files", "ptx", pack);
  out.cubin = r.file(files, ptr + "/files", "cubin", pack);
  return out;
}

}  // namespace

json Variant::summary_json() const {
  json j = {{"id", id}, {"op", op}, {"role", role}, {"status", status}, {"axes", axes}};
  if (ok()) {
    j["entry"] = entry;
    j["shared_bytes"] = shared_bytes;
    j["resource_usage"] = resource_usage;
    j["ptxas_version"] = ptxas_version;
  } else {
    j["reason"] = reason;
  }
  return j;
}

std::vector<std::string> triton_make_cubin_options(const std::string& triton_version) {
  std::vector<std::string> options = {"-lineinfo", "-v"};
  const auto v = parse_release(triton_version);
  if (v && *v >= Release{3, 7, 0}) {
    options.push_back("--regAllocOptLevel=2");
  }
  options.push_back("--gpu-name=sm_90a");
  return options;
}

Manifest parse_manifest(std::string_view text, const std::string& source) {
  if (text.size() > k_max_manifest_bytes) {
    throw InputError(source, "", fmt::format("manifest is {} bytes, over the limit of {}", text.size(), k_max_manifest_bytes));
  }
  // The depth is checked by a pass over the text (util/json_bounded), not by a parser
  // callback: the callback ran for every token and slowed the 5 MB manifest of the full set.
  const json doc = parse_json_bounded(text, source, k_max_manifest_depth);
  const Reader r(source);
  Manifest m;
  m.source = source;
  m.format_version = static_cast<int>(r.integer(doc, "", "format_version"));
  if (m.format_version == 1) {
    r.fail("/format_version", fmt::format("format_version 1 (one .gz file per PTX and cubin) is not the {} this "
                                          "loraprobe reads (one {}); regenerate with python3 scripts/gen_kernels.py",
                                          k_manifest_format_version, k_pack_name));
  }
  if (m.format_version < k_oldest_manifest_format_version || m.format_version > k_manifest_format_version) {
    r.fail("/format_version", fmt::format("format_version {} is not one this loraprobe reads ({} to {})",
                                          m.format_version, k_oldest_manifest_format_version,
                                          k_manifest_format_version));
  }
  m.generated_by = r.string(doc, "", "generated_by");
  m.triton_version = r.string(doc, "", "triton_version");
  if (!parse_release(m.triton_version)) {
    r.fail("/triton_version", fmt::format("\"{}\" is not a version such as 3.8.0", m.triton_version));
  }
  m.ptxas = r.field(doc, "", "ptxas");
  if (!m.ptxas.is_object()) {
    r.fail("/ptxas", "expected an object");
  }
  if (m.format_version >= 3) {
    const json& options = r.field(m.ptxas, "/ptxas", "options");
    if (!options.is_array()) {
      r.fail("/ptxas/options", "expected a list of strings");
    }
    for (std::size_t i = 0; i < options.size(); ++i) {
      if (!options[i].is_string()) {
        r.fail(fmt::format("/ptxas/options/{}", i), "expected a string");
      }
      m.ptxas_options.push_back(options[i].get<std::string>());
      if (!is_triton_ptxas_option(m.ptxas_options, i)) {
        r.fail(fmt::format("/ptxas/options/{}", i),
               fmt::format("\"{}\" is not an option Triton passes ptxas (-lineinfo, -v, --gpu-name=sm_90a, "
                           "--regAllocOptLevel=N, --fmad=, --opt-level N, -maxrregcount=N): ptxas runs with these",
                           m.ptxas_options.back()));
      }
    }
  } else {
    m.ptxas_options = triton_make_cubin_options(m.triton_version);
  }
  m.target = r.field(doc, "", "target");
  m.pack = r.pack(doc);
  const json& variants = r.field(doc, "", "variants");
  if (!variants.is_array()) {
    r.fail("/variants", "expected a list");
  }
  for (std::size_t i = 0; i < variants.size(); ++i) {
    m.variants.push_back(parse_variant(r, variants[i], fmt::format("/variants/{}", i), m.pack));
  }
  std::sort(m.variants.begin(), m.variants.end(), [](const Variant& a, const Variant& b) { return a.id < b.id; });
  for (std::size_t i = 1; i < m.variants.size(); ++i) {
    if (m.variants[i].id == m.variants[i - 1].id) {
      r.fail("/variants", fmt::format("variant id \"{}\" appears twice", m.variants[i].id));
    }
  }
  return m;
}

}  // namespace lp::kernels
