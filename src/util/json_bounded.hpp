#pragma once
// The one bounded JSON parse every document goes through: a report, an inspect
// document, a journal line, a cache entry, a manifest. Size is bounded by the read
// (util/files.hpp read_file's limit); nesting is bounded here, before anything is
// built, because nlohmann's dump() and comparisons recurse and a document nested a
// million deep would overflow the stack.

#include <cstddef>
#include <exception>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace lp {

/// The deepest nesting of arrays and objects in `text` (strings skipped), by one
/// pass over the bytes; 0 for a scalar.
std::size_t json_nesting(std::string_view text);

/// Throws lp::InputError "<source>: nesting deeper than N levels" when `text` nests
/// deeper than max_depth: one pass over the bytes, before a parser builds anything
/// (parsers that need their own callback or ordered objects call it first).
void require_json_nesting(std::string_view text, const std::string& source, std::size_t max_depth);

/// What a nlohmann exception says, without its "[json.exception.parse_error.101] " prefix.
std::string json_error_text(const std::exception& e);

/// Parses `text`. Throws lp::InputError "<source>: nesting deeper than N levels" or
/// "<source>: not JSON: <where>" (nlohmann's prefix dropped).
nlohmann::json parse_json_bounded(std::string_view text, const std::string& source, std::size_t max_depth);

/// As parse_json_bounded, nullopt instead of an error (cache entries, journal lines:
/// a bad one is a miss, not a failure).
std::optional<nlohmann::json> try_parse_json_bounded(std::string_view text, std::size_t max_depth);

}  // namespace lp
