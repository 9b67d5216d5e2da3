#include "kernels/manifest.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <optional>
#include <regex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "util/error.hpp"
#include "util/json_bounded.hpp"
#include "util/json_in.hpp"
#include "util/parallel.hpp"
#include "util/release.hpp"
#include "util/text.hpp"

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

PackRef read_pack(const JsonIn& doc) {
  const JsonIn p = doc.at("pack");
  PackRef ref{p.at("path").string(), p.at("sha256").string(), p.at("bytes").count(), p.at("stored_bytes").count()};
  if (ref.path != k_pack_name) {
    p.at("path").fail(fmt::format("expected \"{}\", got \"{}\"", k_pack_name, ref.path));
  }
  const std::string compression = p.at("compression").string();
  if (compression != "xz") {
    p.at("compression").fail(fmt::format("unknown compression \"{}\" (xz)", compression));
  }
  if (ref.bytes > k_max_pack_bytes) {
    p.at("bytes").fail(fmt::format("{} bytes, over the limit of {}", ref.bytes, k_max_pack_bytes));
  }
  // The stored size is what a --kernel-dir pack is read for: bounded as the pack is.
  if (ref.stored_bytes > k_max_pack_bytes) {
    p.at("stored_bytes").fail(fmt::format("{} bytes, over the limit of {}", ref.stored_bytes, k_max_pack_bytes));
  }
  return ref;
}

FileRef read_file_ref(const JsonIn& f, const PackRef& pack) {
  FileRef ref{f.at("path").string(), f.at("sha256").string(), f.at("bytes").count(), f.at("offset").count()};
  // Checked here so that slicing the pack later cannot go out of bounds.
  if (ref.offset > pack.bytes || ref.bytes > pack.bytes - ref.offset) {
    f.fail(fmt::format("offset {} + {} bytes lies outside the {}-byte pack", ref.offset, ref.bytes, pack.bytes));
  }
  return ref;
}

/// A variant id as the generator writes them ("expand-fp32-bf16-m64n128k32-w4s2-evenk-add-s1"):
/// it names the variant on every output (terminal tables, file names of repro bundles,
/// Markdown, HTML), so a manifest's id is held to letters, digits, '.', '_' and '-'.
bool is_variant_id(const std::string& id) {
  return !id.empty() && id.size() <= 200 && std::all_of(id.begin(), id.end(), is_name_char);
}

/// "file:function" of a variant's `source`; empty when the manifest has none.
std::string source_of(const JsonIn& v) {
  const auto source = v.find("source");
  return source ? fmt::format("{}:{}", source->at("file").string(), source->at("function").string()) : std::string();
}

/// A variant's grid (three dimensions, each a product of factors) and block.
void read_launch_shape(const JsonIn& v, Variant& out) {
  const std::vector<JsonIn> grid = v.at("grid").items();
  if (grid.size() != 3) {
    v.at("grid").fail("expected three dimensions");
  }
  for (std::size_t d = 0; d < 3; ++d) {
    const std::vector<JsonIn> factors = grid[d].items();
    if (factors.empty()) {
      grid[d].fail("expected a non-empty list of factors");
    }
    for (const JsonIn& f : factors) {
      // A number or a quantity's name ("num_tokens", "cdiv:hidden:BLOCK_N"): the launcher reads each (launch.cpp).
      if (!f.json().is_number_integer() && !f.json().is_string()) {
        f.fail(fmt::format("expected a whole number or a quantity's name, got {}", f.json().dump()));
      }
      out.grid[d].push_back(AxisValue::from_json(f.json()));
    }
  }
  const std::vector<JsonIn> block = v.at("block").items();
  if (block.size() != 3) {
    v.at("block").fail("expected [x, y, z]");
  }
  for (std::size_t d = 0; d < 3; ++d) {
    out.block[d] = block[d].whole<int>(1, 1024);
  }
}

/// A variant's parameters, in order, and its produced ones among them.
void read_params(const JsonIn& v, Variant& out) {
  const std::vector<JsonIn> params = v.at("params").items();
  for (std::size_t i = 0; i < params.size(); ++i) {
    const JsonIn& pi = params[i];
    Param p{pi.at("index").whole<int>(0, static_cast<int>(params.size())), pi.at("ptx_type").string(),
            pi.at("name").string(), pi.at("type").string()};
    if (p.index != static_cast<int>(i)) {
      pi.at("index").fail(fmt::format("expected {}, got {}", i, p.index));
    }
    out.params.push_back(std::move(p));
  }
  for (const std::string& name : out.produced) {
    if (std::none_of(out.params.begin(), out.params.end(), [&](const Param& p) { return p.name == name; })) {
      v.at("produced").fail(fmt::format("\"{}\" is not a parameter of {}", name, out.id));
    }
  }
}

Variant parse_variant(const JsonIn& v, const PackRef& pack) {
  Variant out;
  out.id = v.at("id").string();
  if (!is_variant_id(out.id)) {
    v.at("id").fail(fmt::format("\"{}\" is not a variant id (1 to 200 letters, digits, '.', '_' and '-')", out.id));
  }
  out.op = v.at("op").string();
  out.role = v.at("role").string();
  out.status = v.at("status").string();
  out.axes = AxisValues::from_json(v.at("axes").object());
  if ((out.op == "expand" || out.op == "shrink") && !out.axes.contains("gdc")) {
    // A set made before the dual-stream variants: every kernel in it is USE_GDC=False.
    out.axes.set("gdc", AxisValue::from_json(false));
    out.axes.set("tail_ns", AxisValue::from_json(out.op == "shrink" ? nlohmann::json(0) : nlohmann::json()));
  }
  if (out.op == "expand" && !out.axes.contains("n_spec")) {
    // A set made before the narrow-width variants: every expand in it assumes widths
    // divisible by 16 (its specialization says so too).
    out.axes.set("n_spec", AxisValue::of_text("divisible_by_16"));
    out.axes.set("out_stride_spec", AxisValue::of_text("divisible_by_16"));
  }
  if (const auto produced = v.find("produced")) {
    out.produced = produced->strings();
  }
  out.source = source_of(v);
  if (out.status != "ok") {
    if (out.status != "rejected") {
      v.at("status").fail(fmt::format("unknown status \"{}\" (ok, rejected)", out.status));
    }
    out.reason = v.at("reason").string();
    return out;
  }
  out.constexprs = AxisValues::from_json(v.at("constexprs").object());
  out.num_warps = v.at("num_warps").whole<int>(1, 32);
  out.num_stages = v.at("num_stages").whole<int>(1, 16);
  const JsonIn spec = v.at("specialization");
  out.specialization = {spec.at("equal_to_1").strings(), spec.at("divisible_by_16").strings(),
                        spec.at("aligned_16").strings(), spec.at("unspecialized").strings()};
  read_launch_shape(v, out);
  out.entry = v.at("entry").string();
  read_params(v, out);
  out.shared_bytes = v.at("shared_bytes").integer(0);
  out.global_scratch_size = v.at("global_scratch_size").integer(0);
  out.global_scratch_align = v.at("global_scratch_align").integer(0);
  out.profile_scratch_size = v.at("profile_scratch_size").integer(0);
  out.profile_scratch_align = v.at("profile_scratch_align").integer(0);
  if (const auto usage = v.find("resource_usage")) {
    out.resource_usage = AxisValues::from_json(usage->object());
  }
  out.ptxas_version = v.at("ptxas_version").string();
  const JsonIn files = v.at("files");
  out.ptx = read_file_ref(files.at("ptx"), pack);
  out.cubin = read_file_ref(files.at("cubin"), pack);
  return out;
}

}  // namespace

std::map<int, std::string> Variant::produced_ordinals() const {
  std::map<int, std::string> out;
  for (const std::string& name : produced) {
    for (const Param& p : params) {
      if (p.name == name) {
        out[p.index] = name;
      }
    }
  }
  return out;
}

JsonText Manifest::ptxas_json() const {
  json out = json::object();
  if (format_version >= 3) {
    out["options"] = ptxas_options;
  }
  for (auto [key, value] : {std::pair{"path_hint", &ptxas.path_hint}, std::pair{"sha256", &ptxas.sha256},
                            std::pair{"version", &ptxas.version}}) {
    if (!value->empty()) {
      out[key] = *value;
    }
  }
  return JsonText::of(out);
}

JsonText listing_json(const std::vector<ListedSet>& sets,
                      const std::vector<std::pair<std::string, const Variant*>>& rows) {
  json out = {{"kernel_sets", json::array()}, {"count", rows.size()}, {"variants", json::array()}};
  for (const ListedSet& set : sets) {
    out["kernel_sets"].push_back({{"origin", set.origin},
                                  {"triton_version", set.triton},
                                  {"variants", set.variants},
                                  {"ptxas", set.ptxas.value()}});
  }
  for (const auto& [triton, v] : rows) {
    json j = {{"id", v->id}, {"op", v->op}, {"role", v->role}, {"status", v->status}, {"axes", v->axes.to_json()}};
    if (v->ok()) {
      j["entry"] = v->entry;
      j["shared_bytes"] = v->shared_bytes;
      j["resource_usage"] = v->resource_usage.to_json();
      j["ptxas_version"] = v->ptxas_version;
    } else {
      j["reason"] = v->reason;
    }
    j["triton"] = triton;
    out["variants"].push_back(std::move(j));
  }
  return JsonText::of(out);
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

/// Every variant, read on several threads (half the typed reading of the full set's
/// 8 MB manifest, which is on the critical path of every run's start). A bad manifest
/// gets the error of its first bad variant, as a serial read would.
std::vector<Variant> parse_variants(const std::vector<JsonIn>& items, const PackRef& pack) {
  std::vector<Variant> variants(items.size());
  std::vector<std::exception_ptr> errors(items.size());
  constexpr std::size_t k_per_task = 64;
  parallel_for((items.size() + k_per_task - 1) / k_per_task, 0, [&](std::size_t task) {
    for (std::size_t i = task * k_per_task; i < std::min(items.size(), (task + 1) * k_per_task); ++i) {
      try {
        variants[i] = parse_variant(items[i], pack);
      } catch (...) {
        errors[i] = std::current_exception();
        return;
      }
    }
  });
  for (const std::exception_ptr& e : errors) {
    if (e) {
      std::rethrow_exception(e);
    }
  }
  return variants;
}

namespace {

/// Parses each element of the manifest's variants on several threads, the whole
/// text's nesting bounded first (one pass). False when that or an element fails: the
/// caller then parses the manifest whole, for its own error.
bool parse_elements(std::string_view text, const JsonArraySplit& split, std::vector<json>& values) {
  if (json_nesting(text) > k_max_manifest_depth) {
    return false;
  }
  values.assign(split.elements.size(), json());
  // nlohmann reads each element as a whole input: it skips a leading byte-order mark and
  // stops at a NUL, which inside the array are not JSON. Such text is parsed whole.
  const bool odd = std::any_of(split.elements.begin(), split.elements.end(), [](std::string_view e) {
    return e.find('\0') != std::string_view::npos || e.rfind("\xEF\xBB\xBF", 0) == 0;
  });
  if (odd) {
    return false;
  }
  std::atomic<bool> failed{false};
  constexpr std::size_t k_per_task = 64;
  parallel_for((split.elements.size() + k_per_task - 1) / k_per_task, 0, [&](std::size_t task) {
    for (std::size_t i = task * k_per_task; i < std::min(split.elements.size(), (task + 1) * k_per_task) && !failed;
         ++i) {
      values[i] = json::parse(split.elements[i], nullptr, /*allow_exceptions=*/false);
      if (values[i].is_discarded()) {
        failed = true;
        return;
      }
    }
  });
  return !failed;
}

/// The manifest's JSON with its variants array empty and the variants in `variant_values`
/// (parsed on several threads), or, for text the split does not take, the whole
/// document with `variant_values` empty. Throws as parse_json_bounded.
json parse_document(std::string_view text, const std::string& source, std::vector<json>& variant_values,
                    ManifestParse how) {
  // The depth is checked by a pass over the text (util/json_bounded), not by a parser
  // callback: the callback ran for every token and slowed the 5 MB manifest of the full set.
  // The variants (nearly all of the 8 MB of the full set) are parsed on several threads.
  if (how == ManifestParse::automatic) {
    how = hardware_threads() > 4 ? ManifestParse::split : ManifestParse::whole;
  }
  std::optional<JsonArraySplit> split;
  if (how == ManifestParse::split) {
    split = split_top_level_array(text, "variants");
  }
  if (split && !parse_elements(text, *split, variant_values)) {
    split.reset();  // the whole parse below says what is wrong, as it would have
  }
  json parsed;
  if (split) {
    std::optional<json> head = try_parse_json_bounded(split->head, k_max_manifest_depth);
    if (head) {
      parsed = std::move(*head);
    } else {
      split.reset();  // the head's error would name the wrong place: the whole parse says where
    }
  }
  if (!split) {
    variant_values.clear();  // a failed split may have parsed some: the whole document has them all
    parsed = parse_json_bounded(text, source, k_max_manifest_depth);
  }
  return parsed;
}

}  // namespace

Manifest parse_manifest(std::string_view text, const std::string& source, ManifestParse how) {
  if (text.size() > k_max_manifest_bytes) {
    throw InputError(source, "", fmt::format("manifest is {} bytes, over the limit of {}", text.size(), k_max_manifest_bytes));
  }
  std::vector<json> variant_values;  // the variants, when parsed apart from the rest
  const json parsed = parse_document(text, source, variant_values, how);
  const JsonIn doc(parsed, source);
  Manifest m;
  m.source = source;
  const JsonIn version = doc.at("format_version");
  m.format_version = version.whole<int>();
  if (m.format_version == 1) {
    version.fail(fmt::format("format_version 1 (one .gz file per PTX and cubin) is not the {} this "
                             "loraprobe reads (one {}); regenerate with python3 scripts/gen_kernels.py",
                             k_manifest_format_version, k_pack_name));
  }
  if (m.format_version < k_oldest_manifest_format_version || m.format_version > k_manifest_format_version) {
    version.fail(fmt::format("format_version {} is not one this loraprobe reads ({} to {})", m.format_version,
                             k_oldest_manifest_format_version, k_manifest_format_version));
  }
  m.generated_by = doc.at("generated_by").string();
  m.triton_version = doc.at("triton_version").string();
  if (!parse_release(m.triton_version)) {
    doc.at("triton_version").fail(fmt::format("\"{}\" is not a version such as 3.8.0", m.triton_version));
  }
  const JsonIn ptxas = doc.at("ptxas");
  (void)ptxas.object();
  // Format 3 requires all three (kernels/manifest.schema.json); a format 2 set may lack some.
  for (auto [key, field] : {std::pair{"path_hint", &m.ptxas.path_hint}, std::pair{"sha256", &m.ptxas.sha256},
                            std::pair{"version", &m.ptxas.version}}) {
    if (m.format_version >= 3) {
      *field = ptxas.at(key).string();
    } else if (const std::optional<JsonIn> value = ptxas.find(key)) {
      *field = value->string();
    }
  }
  if (m.format_version >= 3) {
    const std::vector<JsonIn> options = ptxas.at("options").items();
    for (std::size_t i = 0; i < options.size(); ++i) {
      m.ptxas_options.push_back(options[i].string());
      if (!is_triton_ptxas_option(m.ptxas_options, i)) {
        options[i].fail(fmt::format("\"{}\" is not an option Triton passes ptxas (-lineinfo, -v, --gpu-name=sm_90a, "
                                    "--regAllocOptLevel=N, --fmad=, --opt-level N, -maxrregcount=N): ptxas runs with these",
                                    m.ptxas_options.back()));
      }
    }
  } else {
    m.ptxas_options = triton_make_cubin_options(m.triton_version);
  }
  (void)doc.at("target").object();  // the target block (sm_90, CUDA) is the generator's; only its shape is checked
  m.pack = read_pack(doc);
  std::vector<JsonIn> items = doc.at("variants").items();  // the head's is empty
  for (std::size_t i = 0; i < variant_values.size(); ++i) {
    items.emplace_back(variant_values[i], source, fmt::format("/variants/{}", i));
  }
  m.variants = parse_variants(items, m.pack);
  std::sort(m.variants.begin(), m.variants.end(), [](const Variant& a, const Variant& b) { return a.id < b.id; });
  for (std::size_t i = 1; i < m.variants.size(); ++i) {
    if (m.variants[i].id == m.variants[i - 1].id) {
      doc.at("variants").fail(fmt::format("variant id \"{}\" appears twice", m.variants[i].id));
    }
  }
  return m;
}

}  // namespace lp::kernels
