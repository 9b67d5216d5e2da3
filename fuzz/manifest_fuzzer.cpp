// libFuzzer target: the kernel-set manifest reader (kernels/manifest.cpp), which
// reads the manifest.json of a --kernel-dir: a folder anyone may hand over with a
// bug report. Any input must be read or refused with lp::InputError (exit 2): a
// crash, a sanitizer report or another exception is a bug. A manifest it reads must
// keep the reader's promises, which the loader then relies on without checking
// again: every file of an ok variant lies inside the pack (the pack is sliced by
// these offsets), the ids are sorted and unique, every produced name is a parameter;
// and it must list as `list --json` lists it.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/manifest.hpp"
#include "util/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  lp::kernels::Manifest m;
  try {
    m = lp::kernels::parse_manifest(text, "fuzz/manifest.json");
  } catch (const lp::InputError&) {
    return 0;  // refused with the file and the pointer, as it should be
  }
  std::vector<std::pair<std::string, const lp::kernels::Variant*>> rows;
  for (std::size_t i = 0; i < m.variants.size(); ++i) {
    const lp::kernels::Variant& v = m.variants[i];
    if (i > 0 && !(m.variants[i - 1].id < v.id)) {
      __builtin_trap();  // not sorted, or an id twice
    }
    if (v.ok()) {
      for (const auto& file : {v.ptx, v.cubin}) {
        if (!file || file->offset > m.pack.bytes || file->bytes > m.pack.bytes - file->offset) {
          __builtin_trap();  // a file outside the pack
        }
      }
    }
    const std::map<int, std::string> ordinals = v.produced_ordinals();
    for (const std::string& name : v.produced) {
      if (std::none_of(ordinals.begin(), ordinals.end(), [&](const auto& o) { return o.second == name; })) {
        __builtin_trap();  // a produced name that is no parameter
      }
    }
    rows.emplace_back(m.triton_version, &v);
  }
  const lp::kernels::ListedSet set{"fuzz", m.triton_version, m.variants.size(), m.ptxas_json()};
  static_cast<void>(lp::kernels::listing_json({set}, rows).text());
  return 0;
}
