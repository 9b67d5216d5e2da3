#include "kernels/kernel_set.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kernels/embedded.hpp"
#include "kernels/xz.hpp"
#include "util/error.hpp"
#include "util/parallel.hpp"
#include "util/text.hpp"
#include "util/files.hpp"
#include "util/sha256.hpp"

namespace lp::kernels {


namespace {

constexpr const char* k_embedded_origin = "<embedded>/kernels";
constexpr const char* k_sets_folder = "sets";

bool is_kernel_role(const std::string& role) { return role == "kernel" || role == "negative_control"; }

std::string describe(const AxisValue& v) { return v.text().value_or(v.dump()); }

}  // namespace

std::vector<std::string> take_triton_terms(std::vector<FilterTerm>& terms) {
  std::vector<std::string> tritons;
  std::erase_if(terms, [&](const FilterTerm& t) {
    if (t.key != "triton") {
      return false;
    }
    tritons.push_back(describe(t.value));
    return true;
  });
  return tritons;
}

UsageError no_filter_match(const std::string& filter, std::string_view what, const std::vector<const KernelSet*>& sets,
                           std::string_view hint) {
  std::vector<std::string> origins;
  for (const KernelSet* set : sets) {
    origins.push_back(set->origin());
  }
  return UsageError(fmt::format("--filter {}: no {} of {} matches ({})", filter, what, fmt::join(origins, ", "), hint));
}

std::vector<FilterTerm> parse_filter(const std::string& text) {
  std::vector<FilterTerm> terms;
  for (const std::string_view view : split(text)) {
    const std::string item(view);
    const std::size_t eq = item.find('=');
    if (item.empty() || eq == std::string::npos || eq == 0 || eq + 1 == item.size()) {
      throw UsageError(fmt::format("--filter {}: \"{}\" is not key=value", text, item));
    }
    terms.push_back({item.substr(0, eq), AxisValue::from_user_text(item.substr(eq + 1))});
  }
  return terms;
}

AxisValue variant_field(const Variant& v, std::string_view key) {
  if (key == "id") {
    return AxisValue::of_text(v.id);
  }
  if (key == "op") {
    return AxisValue::of_text(v.op);
  }
  if (key == "role") {
    return AxisValue::of_text(v.role);
  }
  if (key == "status") {
    return AxisValue::of_text(v.status);
  }
  if (key == "entry") {
    return AxisValue::of_text(v.entry);
  }
  if (key == "num_ctas" && !v.axes.contains("num_ctas")) {
    return AxisValue::of_int(1);  // Triton's default: the generator never sets another, so a manifest need not say it
  }
  return v.axes.at(key);
}

namespace {

/// The manifest text of a stored manifest: manifest.json.xz (format 3) is decompressed,
/// capped at k_max_manifest_bytes; an InputError names `where` when it is not xz.
std::string manifest_text(std::string_view stored, const std::string& where, bool compressed) {
  if (!compressed) {
    return std::string(stored);
  }
  try {
    return unxz(stored, where, 0, k_max_manifest_bytes);
  } catch (const Error& e) {
    throw InputError(where, "", e.what());
  }
}

}  // namespace

std::vector<KernelSet> KernelSet::embedded_sets() {
  // The manifests' JSON is most of a run's fixed cost (3.6.0's alone is about half):
  // each is parsed on its own thread, and the sets are kept in embedded order.
  struct Found {
    const EmbeddedFile* file;
    std::string folder;
    std::string where;
    std::optional<Manifest> manifest;
  };
  std::vector<Found> found;
  const std::string prefix = std::string(k_sets_folder) + "/";
  const std::string name = std::string("/") + k_manifest_name;
  for (const EmbeddedFile& f : embedded_files()) {
    const std::string path(f.path);
    if (path.rfind(prefix, 0) != 0 || path.size() <= name.size() ||
        path.compare(path.size() - name.size(), name.size(), name) != 0) {
      continue;
    }
    found.push_back({&f, path.substr(0, path.size() - name.size()), std::string(k_embedded_origin) + "/" + path, {}});
  }
  parallel_for(found.size(), 0, [&](std::size_t i) {
    found[i].manifest = parse_manifest(manifest_text(found[i].file->bytes, found[i].where, true), found[i].where);
  });
  std::vector<KernelSet> sets;
  for (Found& f : found) {
    sets.push_back(KernelSet(std::move(*f.manifest), std::string(k_embedded_origin) + "/" + f.folder, std::nullopt,
                             f.folder + "/"));
  }
  if (sets.empty()) {
    throw Error(fmt::format("this loraprobe was built without an embedded kernel set (kernels/{}/*/{} were missing)",
                            k_sets_folder, k_manifest_name));
  }
  return sets;
}

KernelSet KernelSet::from_directory(const std::string& dir) {
  const std::filesystem::path folder(dir);
  std::error_code ec;
  if (!std::filesystem::is_directory(folder, ec)) {
    throw UsageError(fmt::format("--kernel-dir {}: not a folder", dir));
  }
  const std::string xz = (folder / k_manifest_name).string();
  if (std::filesystem::exists(xz, ec)) {
    return KernelSet(parse_manifest(manifest_text(read_file(xz, k_max_manifest_bytes), xz, true), xz), dir, dir, "");
  }
  const std::string plain = (folder / k_format2_manifest_name).string();
  if (!std::filesystem::exists(plain, ec)) {
    throw UsageError(fmt::format("--kernel-dir {}: no {} (or format 2's {}) there; make a set with "
                                 "python3 scripts/gen_kernels.py --out DIR",
                                 dir, k_manifest_name, k_format2_manifest_name));
  }
  return KernelSet(parse_manifest(read_file(plain, k_max_manifest_bytes), plain), dir, dir, "");
}

const Variant* KernelSet::find(const std::string& id) const {
  const auto& vs = m_manifest.variants;
  const auto it = std::lower_bound(vs.begin(), vs.end(), id, [](const Variant& v, const std::string& i) { return v.id < i; });
  return it != vs.end() && it->id == id ? &*it : nullptr;
}

const KernelSet::LazyPack& KernelSet::indexed_pack() const {
  // A throw leaves `indexed` unset, so a broken pack fails every call, not just the first.
  LazyPack& lazy = *m_pack;
  const std::lock_guard<std::mutex> lock(lazy.mutex);
  if (lazy.indexed) {
    return lazy;
  }
  const PackRef& pack = m_manifest.pack;
  const std::string where = fmt::format("{}/{}", m_origin, pack.path);
  if (m_dir) {
    // The manifest says how large the stored pack is: a file of another size (a link to
    // /dev/zero, another set's pack, a truncated copy) is refused before a byte is read.
    const std::string file = (std::filesystem::path(*m_dir) / pack.path).string();
    const std::size_t size = regular_file_size(file);
    if (size != pack.stored_bytes) {
      // An Error as corrupt xz data is: a --kernel-dir's caller names the folder.
      throw Error(fmt::format("{}: {} bytes, but its manifest says {}: not this set's pack", where, size,
                              pack.stored_bytes));
    }
    lazy.read = read_file(file, pack.stored_bytes);
    if (lazy.read.size() != pack.stored_bytes) {
      throw Error(fmt::format("{}: {} bytes read, but its manifest says {}: it changed while it was read", where,
                              lazy.read.size(), pack.stored_bytes));
    }
    lazy.stored = lazy.read;
  } else {
    const std::optional<std::string_view> bytes = embedded_file(m_embedded_prefix + pack.path);
    if (!bytes) {
      throw Error(fmt::format("{}: listed in the manifest but not embedded", where));
    }
    lazy.stored = *bytes;
  }
  // The manifest's size is the cap: streams that decode to more are not this pack.
  const std::vector<XzStreamSpan> spans = xz_streams(lazy.stored, where, pack.bytes);
  const std::size_t total = spans.back().offset + spans.back().bytes;
  if (total != pack.bytes) {
    throw Error(fmt::format("{}: decompresses to {} bytes, the manifest says {}", where, total, pack.bytes));
  }
  lazy.streams.clear();
  for (const XzStreamSpan& span : spans) {
    lazy.streams.push_back(std::make_unique<PackStream>());
    lazy.streams.back()->span = span;
  }
  lazy.indexed = true;
  return lazy;
}

const std::string& KernelSet::stream_bytes(const LazyPack& pack, std::size_t k) const {
  PackStream& stream = *pack.streams[k];
  const std::lock_guard<std::mutex> lock(stream.mutex);
  if (!stream.loaded) {
    const XzStreamSpan& span = stream.span;
    const std::string where = fmt::format("{}/{}", m_origin, m_manifest.pack.path);
    // Its index gave the size; unxz refuses a stream that decodes to more, and this to less.
    std::string bytes = unxz(pack.stored.substr(span.stored_offset, span.stored_bytes), where, span.bytes, span.bytes);
    if (bytes.size() != span.bytes) {
      throw Error(fmt::format("{}: corrupt xz data: stream {} decompresses to {} bytes, its index says {}", where, k,
                              bytes.size(), span.bytes));
    }
    stream.bytes = std::move(bytes);
    stream.loaded = true;
  }
  return stream.bytes;
}

std::pair<std::size_t, std::size_t> KernelSet::streams_of(const LazyPack& pack, const FileRef& file) {
  // parse_manifest checked offset + bytes against the pack's size, and indexed_pack the streams' total.
  const std::size_t begin = file.offset;
  const std::size_t end = file.offset + file.bytes;
  auto it = std::upper_bound(pack.streams.begin(), pack.streams.end(), begin,
                             [](std::size_t at, const std::unique_ptr<PackStream>& s) { return at < s->span.offset; });
  if (it != pack.streams.begin()) {
    --it;
  }
  // Skip an empty stream, or one that ends where the file starts.
  while (it != pack.streams.end() && (*it)->span.offset + (*it)->span.bytes <= begin && (*it)->span.offset < end) {
    ++it;
  }
  auto last = it;
  while (last != pack.streams.end() && (*last)->span.offset < end) {
    ++last;
  }
  return {static_cast<std::size_t>(it - pack.streams.begin()), static_cast<std::size_t>(last - pack.streams.begin())};
}

void KernelSet::prefetch(const std::vector<std::pair<const KernelSet*, const FileRef*>>& files, std::size_t threads) {
  std::set<std::pair<const KernelSet*, std::size_t>> streams;
  std::map<const KernelSet*, const LazyPack*> packs;
  for (const auto& [set, file] : files) {
    auto found = packs.find(set);
    if (found == packs.end()) {
      const LazyPack* pack = nullptr;
      try {
        pack = &set->indexed_pack();
      } catch (const Error&) {  // a broken pack, or none (Fatal): contents() says so
      } catch (const Fatal&) {
      }
      found = packs.emplace(set, pack).first;
    }
    if (found->second == nullptr) {
      continue;
    }
    const auto [first, last] = streams_of(*found->second, *file);
    for (std::size_t k = first; k < last; ++k) {
      streams.emplace(set, k);
    }
  }
  const std::vector<std::pair<const KernelSet*, std::size_t>> todo(streams.begin(), streams.end());
  parallel_for(todo.size(), threads, [&](std::size_t i) {
    const KernelSet* set = todo[i].first;
    const std::size_t k = todo[i].second;
    (void)error_of([&] { (void)set->stream_bytes(*packs.at(set), k); });  // contents() reports a bad stream
  });
}

std::string KernelSet::contents(const FileRef& file) const {
  const LazyPack& pack = indexed_pack();
  const std::string where = fmt::format("{}/{}: {}", m_origin, m_manifest.pack.path, file.path);
  const std::size_t begin = file.offset;
  const std::size_t end = file.offset + file.bytes;
  const auto [first, last] = streams_of(pack, file);
  std::string data;
  data.reserve(file.bytes);
  for (std::size_t k = first; k < last; ++k) {
    const XzStreamSpan& span = pack.streams[k]->span;
    if (span.offset + span.bytes <= begin) {
      continue;  // an empty stream, or one that ends where the file starts
    }
    const std::string& bytes = stream_bytes(pack, k);
    const std::size_t from = std::max(begin, span.offset) - span.offset;
    const std::size_t to = std::min(end, span.offset + span.bytes) - span.offset;
    data.append(bytes, from, to - from);
  }
  const std::string digest = sha256_hex(data);
  if (digest != file.sha256) {
    throw Error(fmt::format("{}: sha256 {} differs from the manifest's {}", where, digest, file.sha256));
  }
  return data;
}

void KernelSet::verify_pack() const {
  const LazyPack& pack = indexed_pack();
  std::string all;
  all.reserve(m_manifest.pack.bytes);
  for (std::size_t k = 0; k < pack.streams.size(); ++k) {
    all += stream_bytes(pack, k);
  }
  const std::string digest = sha256_hex(all);
  if (digest != m_manifest.pack.sha256) {
    throw Error(fmt::format("{}/{}: sha256 {} differs from the manifest's {}", m_origin, m_manifest.pack.path, digest,
                            m_manifest.pack.sha256));
  }
}

std::vector<const Variant*> KernelSet::filter(const std::vector<FilterTerm>& terms) const {
  std::set<std::string> known = {"id", "op", "role", "status", "entry"};
  for (const Variant& v : m_manifest.variants) {
    for (const auto& [key, value] : v.axes.entries()) {
      known.insert(std::string(key));
    }
  }
  for (const FilterTerm& t : terms) {
    if (known.count(t.key) == 0) {
      throw UsageError(fmt::format("--filter: unknown key \"{}\" (keys: {})", t.key, fmt::join(known, ", ")));
    }
  }
  std::vector<const Variant*> out;
  for (const Variant& v : m_manifest.variants) {
    if (std::all_of(terms.begin(), terms.end(), [&](const FilterTerm& t) { return variant_field(v, t.key).matches(t.value); })) {
      out.push_back(&v);
    }
  }
  return out;
}

const Variant* KernelSet::with_role(const std::string& role) const {
  for (const Variant& v : m_manifest.variants) {
    if (v.role == role) {
      return &v;
    }
  }
  return nullptr;
}

namespace {

using WantedAxes = std::vector<std::pair<std::string_view, AxisValue>>;

/// The lookup of a variant that matches: it, or why it cannot be used.
Lookup found(const Variant* v) {
  if (!v->ok()) {
    return {nullptr, fmt::format("variant {} was rejected when the set was generated: {}", v->id, v->reason)};
  }
  return {v, ""};
}

/// The variants of `candidates` that differ from `wanted` on the fewest axes, and on
/// how many.
std::pair<std::vector<const Variant*>, std::size_t> nearest_of(const std::vector<const Variant*>& candidates,
                                                              const WantedAxes& wanted) {
  std::size_t best_diff = std::numeric_limits<std::size_t>::max();
  std::vector<const Variant*> nearest;
  for (const Variant* v : candidates) {
    std::size_t diff = 0;
    for (const auto& [key, value] : wanted) {
      diff += variant_field(*v, key).matches(value) ? 0 : 1;
    }
    if (diff < best_diff) {
      best_diff = diff;
      nearest.clear();
    }
    if (diff == best_diff) {
      nearest.push_back(v);
    }
  }
  return {nearest, best_diff};
}

/// Why no `op` variant has `wanted`: for each axis that differs, the values the
/// `nearest` variants offer instead.
std::string no_match(const std::string& op, const AxisValues& wanted_values, const WantedAxes& wanted,
                     const std::vector<const Variant*>& nearest) {
  std::map<std::string, std::set<std::string>> offered;
  for (const Variant* v : nearest) {
    for (const auto& [key, value] : wanted) {
      const AxisValue have = variant_field(*v, key);
      if (!have.matches(value)) {
        offered[std::string(key)].insert(describe(have));
      }
    }
  }
  std::vector<std::string> wanted_text;
  std::vector<std::string> alternatives;
  for (const auto& [key, values] : offered) {
    wanted_text.push_back(fmt::format("{}={}", key, describe(wanted_values.at(key))));
    alternatives.push_back(fmt::format("{}={}", key, fmt::join(values, "|")));
  }
  return fmt::format("no {} variant with {} in the kernel set (nearest: {}, e.g. {})", op,
                     fmt::join(wanted_text, ", "), fmt::join(alternatives, ", "), nearest.front()->id);
}

}  // namespace

const Variant* KernelSet::indexed_match(const AxisValues& wanted_values) const {
  const WantedAxes wanted = wanted_values.entries();
  std::string keys;
  for (const auto& [key, value] : wanted) {
    keys += std::string(key) + '\n';
  }
  const std::lock_guard<std::mutex> lock(m_index->mutex);
  auto [it, added] = m_index->by_keys.try_emplace(keys);
  if (added) {
    const std::string op = wanted_values.text("op").value_or("");
    for (const Variant& v : m_manifest.variants) {
      if (v.op == op && is_kernel_role(v.role)) {
        std::string values;
        for (const auto& [key, value] : wanted) {
          values += variant_field(v, key).dump() + '\n';
        }
        it->second.try_emplace(values, &v);  // the first in manifest order, as lookup's nearest
      }
    }
  }
  std::string values;
  for (const auto& [key, value] : wanted) {
    values += value.dump() + '\n';
  }
  const auto hit = it->second.find(values);
  return hit == it->second.end() ? nullptr : hit->second;
}

Lookup KernelSet::lookup(const AxisValues& wanted_values) const {
  // An exact match, the common case (a sweep asks once per case), from the index.
  if (const Variant* v = indexed_match(wanted_values)) {
    return found(v);
  }
  // No exact match: the nearest variants, to say what differs.
  const WantedAxes wanted = wanted_values.entries();
  const std::string op = wanted_values.text("op").value_or("");
  std::vector<const Variant*> candidates;
  for (const Variant& v : m_manifest.variants) {
    if (v.op == op && is_kernel_role(v.role)) {
      candidates.push_back(&v);
    }
  }
  if (candidates.empty()) {
    return {nullptr, fmt::format("the kernel set {} has no {} variants", m_origin, op)};
  }
  // Fewest differing axes first: an exact match has none.
  const auto [nearest, differing] = nearest_of(candidates, wanted);
  if (differing == 0) {
    return found(nearest.front());
  }
  return {nullptr, no_match(op, wanted_values, wanted, nearest)};
}

}  // namespace lp::kernels
