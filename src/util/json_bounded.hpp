#pragma once
// The one bounded JSON parse every document goes through: a report, an inspect
// document, a journal line, a cache entry, a manifest. Size is bounded by the read
// (util/files.hpp read_file's limit); nesting is bounded here, before anything is
// built, because nlohmann's dump() and comparisons recurse and a document nested a
// million deep would overflow the stack.

#include <cstddef>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace lp {

/// The deepest nesting of arrays and objects in `text` (strings skipped), by one
/// pass over the bytes; 0 for a scalar.
std::size_t json_nesting(std::string_view text);

/// Throws lp::InputError "<source>: nesting deeper than N levels" when `text` nests
/// deeper than max_depth: one pass over the bytes, before a parser builds anything
/// (parsers that need their own callback or ordered objects call it first).
void require_json_nesting(std::string_view text, const std::string& source, std::size_t max_depth);

/// A document cut around one big array: `head` is the text with the array emptied
/// ("[]"), `elements` the text of each of its elements, in order.
struct JsonArraySplit {
  std::string head;
  std::vector<std::string_view> elements;
};

/// Finds the array at `key` of the top-level object of `text` by one pass over the
/// bytes (strings skipped), without parsing, so that its elements can be parsed on
/// several threads. nullopt when there is no such array, or the key appears twice at
/// that level. Nothing is checked: the caller parses the head and every element, and
/// on any failure parses `text` whole for the document's own error.
std::optional<JsonArraySplit> split_top_level_array(std::string_view text, std::string_view key);

/// What a nlohmann exception says, without its "[json.exception.parse_error.101] " prefix.
std::string json_error_text(const std::exception& e);

/// Parses `text`, the depth bounded as it goes (nothing deeper is built). Throws
/// lp::InputError "<source>: nesting deeper than N levels" or "<source>: not JSON:
/// <where>" (nlohmann's prefix dropped).
nlohmann::json parse_json_bounded(std::string_view text, const std::string& source, std::size_t max_depth);

/// As parse_json_bounded, nullopt instead of an error (cache entries, journal lines:
/// a bad one is a miss, not a failure).
std::optional<nlohmann::json> try_parse_json_bounded(std::string_view text, std::size_t max_depth);

/// The bulk of a document: the elements of the arrays at these paths of object keys
/// (a report's {"cases"} or {"cases", "rows"}), which a reader takes one at a time
/// instead of all at once.
using JsonBulkPaths = std::vector<std::vector<std::string>>;

/// Parses `text` as parse_json_bounded does, but leaves the bulk out: each array at one
/// of `bulk` comes back empty, and `bulk_elements` says how many elements it had. The
/// depth is bounded during the parse (nothing deeper is built).
nlohmann::json parse_json_bounded_without_bulk(std::string_view text, const std::string& source,
                                               std::size_t max_depth, const JsonBulkPaths& bulk,
                                               std::size_t& bulk_elements);

/// Parses `text` again and calls `element(value, index)` for each element of the bulk
/// arrays, in the text's order, building one element at a time: reading a report of a
/// million cases holds one case's JSON, not a million. Throws as parse_json_bounded.
void for_each_bulk_element(std::string_view text, const std::string& source, std::size_t max_depth,
                           const JsonBulkPaths& bulk,
                           const std::function<void(nlohmann::json&& value, std::size_t index)>& element);

}  // namespace lp
