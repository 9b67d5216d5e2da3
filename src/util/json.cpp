// util's one unit that compiles the JSON library: the bounded parse every document goes
// through (json_bounded.hpp), the typed field reader (json_in.hpp), the absent-value
// helpers (json_out.hpp) and JsonText (json_text.hpp).
#include "util/json_bounded.hpp"
#include "util/json_in.hpp"
#include "util/json_out.hpp"
#include "util/json_text.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "util/error.hpp"
#include "util/escape.hpp"

namespace lp {

std::size_t json_nesting(std::string_view text) {
  std::size_t depth = 0;
  std::size_t deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character, a quote included
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

namespace {

/// The index just past the string whose opening quote is at `open` (text.size() when
/// it does not end).
std::size_t string_end(std::string_view text, std::size_t open) {
  for (std::size_t i = open + 1; i < text.size(); ++i) {
    if (text[i] == '\\') {
      ++i;  // the escaped character, a quote included
    } else if (text[i] == '"') {
      return i + 1;
    }
  }
  return text.size();
}

bool json_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::size_t skip_space(std::string_view text, std::size_t i) {
  while (i < text.size() && json_space(text[i])) {
    ++i;
  }
  return i;
}

/// The elements of the array whose '[' is at `open`, and the index of its ']'
/// (nullopt when it does not close).
std::optional<std::size_t> array_elements(std::string_view text, std::size_t open,
                                          std::vector<std::string_view>& elements) {
  std::size_t depth = 0;
  std::size_t start = skip_space(text, open + 1);
  bool after_comma = false;
  for (std::size_t i = open + 1; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      i = string_end(text, i) - 1;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    } else if (depth == 0 && (c == ',' || c == ']')) {
      std::size_t end = i;
      while (end > start && json_space(text[end - 1])) {
        --end;
      }
      // An empty element (",," or ",]", a comma first) is kept: its parse fails.
      if (c == ',' || after_comma || end > start) {
        elements.push_back(text.substr(start, end - start));
      }
      if (c == ']') {
        return i;
      }
      after_comma = true;
      start = skip_space(text, i + 1);
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<JsonArraySplit> split_top_level_array(std::string_view text, std::string_view key) {
  std::size_t depth = 0;
  std::optional<std::pair<std::size_t, std::size_t>> found;  // the array's '[' and ']'
  JsonArraySplit split;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      const std::size_t end = string_end(text, i);
      const std::size_t colon = skip_space(text, end);
      const bool is_key = depth == 1 && colon < text.size() && text[colon] == ':';
      if (is_key && text.substr(i, end - i).find('\\') != std::string_view::npos) {
        return std::nullopt;  // an escaped key could spell `key`: the whole parse decides
      }
      if (is_key && text.substr(i + 1, end - i - 2) == key) {
        const std::size_t open = skip_space(text, colon + 1);
        if (found || open >= text.size() || text[open] != '[') {
          return std::nullopt;  // twice, or not an array: the whole parse decides
        }
        const std::optional<std::size_t> close = array_elements(text, open, split.elements);
        if (!close) {
          return std::nullopt;
        }
        found.emplace(open, *close);
        i = *close;
        continue;
      }
      i = end - 1;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  if (!found) {
    return std::nullopt;
  }
  split.head = std::string(text.substr(0, found->first + 1));
  split.head.append(text.substr(found->second));
  return split;
}

void require_json_nesting(std::string_view text, const std::string& source, std::size_t max_depth) {
  if (json_nesting(text) > max_depth) {
    throw InputError(source, "", fmt::format("nesting deeper than {} levels", max_depth));
  }
}

std::string json_error_text(const std::exception& e) {
  std::string what = e.what();
  if (const auto pos = what.find("] "); what.starts_with("[json.exception") && pos != std::string::npos) {
    what = what.substr(pos + 2);
  }
  return what;
}

namespace {

/// A SAX handler (nlohmann::json::sax_parse) that builds values with the depth bounded
/// as it goes. In `blocks` mode it builds the whole document but the bulk arrays'
/// elements, which it counts; in `elements` mode it builds only those elements, each
/// handed to the callback once complete, then freed.
class BulkBuilder {
 public:
  enum class Mode { blocks, elements };
  using json = nlohmann::json;
  using number_integer_t = json::number_integer_t;
  using number_unsigned_t = json::number_unsigned_t;
  using number_float_t = json::number_float_t;
  using string_t = json::string_t;
  using binary_t = json::binary_t;

  BulkBuilder(Mode mode, std::size_t max_depth, const JsonBulkPaths& bulk,
              const std::function<void(json&&, std::size_t)>* element)
      : m_mode(mode), m_max_depth(max_depth), m_bulk(bulk), m_element(element) {}

  bool null() { return value(json()); }
  bool boolean(bool v) { return value(json(v)); }
  bool number_integer(number_integer_t v) { return value(json(v)); }
  bool number_unsigned(number_unsigned_t v) { return value(json(v)); }
  bool number_float(number_float_t v, const string_t&) { return value(json(v)); }
  bool string(string_t& v) { return value(json(std::move(v))); }
  bool binary(binary_t& v) { return value(json::binary(std::move(v))); }
  bool start_object(std::size_t) { return open(json::object(), false); }
  bool start_array(std::size_t) { return open(json::array(), true); }
  bool key(string_t& k) {
    m_frames.back().key = std::move(k);
    return true;
  }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    m_error = "not JSON: " + json_error_text(e);
    return false;
  }

  [[nodiscard]] const std::string& error() const { return m_error; }
  [[nodiscard]] bool too_deep() const { return m_too_deep; }
  json& root() { return m_root; }
  [[nodiscard]] std::size_t elements() const { return m_elements; }

 private:
  struct Frame {
    bool array = false;
    std::string key;       ///< an object's current key
    json* value = nullptr; ///< the container being built; nullptr when not built
    bool bulk = false;     ///< an array at one of the bulk paths
    bool element = false;  ///< the outermost container of a bulk element (elements mode)
  };

  /// Whether the container being opened, inside the frames so far, is at a bulk path.
  [[nodiscard]] bool at_bulk_path() const {
    for (const std::vector<std::string>& path : m_bulk) {
      if (path.size() != m_frames.size()) {
        continue;
      }
      bool same = true;
      for (std::size_t i = 0; same && i < path.size(); ++i) {
        same = !m_frames[i].array && m_frames[i].key == path[i];
      }
      if (same) {
        return true;
      }
    }
    return false;
  }
  /// Whether the value starting now is an element of a bulk array.
  [[nodiscard]] bool in_bulk_array() const { return !m_frames.empty() && m_frames.back().bulk; }
  /// Whether values are built here: in blocks mode outside bulk elements, in elements
  /// mode inside them.
  [[nodiscard]] bool building() const { return m_mode == Mode::blocks ? m_skip_depth == 0 : m_element_depth > 0; }

  /// Where a new value goes in the container being built; nullptr at the root.
  json* place(json&& v) {
    if (m_frames.empty()) {
      m_root = std::move(v);
      return &m_root;
    }
    Frame& top = m_frames.back();
    if (top.array) {
      top.value->push_back(std::move(v));
      return &top.value->back();
    }
    json& slot = (*top.value)[top.key];
    slot = std::move(v);
    return &slot;
  }

  bool value(json&& v) {
    if (m_mode == Mode::blocks) {
      if (in_bulk_array() && m_skip_depth == 0) {
        ++m_elements;  // a scalar element: counted, not built
        return true;
      }
      if (building()) {
        place(std::move(v));
      }
      return true;
    }
    if (in_bulk_array() && m_element_depth == 0) {
      (*m_element)(std::move(v), m_elements++);
      return true;
    }
    if (building()) {
      place(std::move(v));
    }
    return true;
  }

  bool open(json&& container, bool array) {
    if (m_frames.size() >= m_max_depth) {
      m_too_deep = true;
      return false;
    }
    Frame f;
    f.array = array;
    if (m_mode == Mode::blocks) {
      if (in_bulk_array() || m_skip_depth > 0) {
        if (m_skip_depth == 0) {
          ++m_elements;
        }
        ++m_skip_depth;
      } else {
        f.value = place(std::move(container));
        f.bulk = array && at_bulk_path();
      }
    } else {
      if (in_bulk_array() && m_element_depth == 0) {
        m_element_root = std::move(container);
        f.value = &m_element_root;
        f.element = true;
        ++m_element_depth;
      } else if (m_element_depth > 0) {
        f.value = place(std::move(container));
        ++m_element_depth;
      } else {
        f.bulk = array && at_bulk_path();
      }
    }
    m_frames.push_back(std::move(f));
    return true;
  }

  bool close() {
    const Frame f = std::move(m_frames.back());
    m_frames.pop_back();
    if (m_mode == Mode::blocks) {
      if (m_skip_depth > 0) {
        --m_skip_depth;
      }
      return true;
    }
    if (m_element_depth > 0) {
      --m_element_depth;
      if (f.element) {
        (*m_element)(std::move(m_element_root), m_elements++);
        m_element_root = json();
      }
    }
    return true;
  }

  Mode m_mode;
  std::size_t m_max_depth;
  const JsonBulkPaths& m_bulk;
  const std::function<void(json&&, std::size_t)>* m_element;
  std::vector<Frame> m_frames;
  json m_root;
  json m_element_root;
  std::size_t m_skip_depth = 0;     ///< blocks mode: depth inside a skipped element
  std::size_t m_element_depth = 0;  ///< elements mode: depth inside the element being built
  std::size_t m_elements = 0;
  bool m_too_deep = false;
  std::string m_error;
};

void run(BulkBuilder& b, std::string_view text, const std::string& source, std::size_t max_depth) {
  bool ok = false;
  try {
    ok = nlohmann::json::sax_parse(text.begin(), text.end(), &b);
  } catch (const nlohmann::json::exception& e) {  // out_of_range for numbers that overflow, ...
    throw InputError(source, "", "not JSON: " + json_error_text(e));
  }
  if (b.too_deep()) {
    throw InputError(source, "", fmt::format("nesting deeper than {} levels", max_depth));
  }
  if (!ok) {
    throw InputError(source, "", b.error().empty() ? std::string("not JSON") : b.error());
  }
}

}  // namespace

nlohmann::json parse_json_bounded_without_bulk(std::string_view text, const std::string& source,
                                               std::size_t max_depth, const JsonBulkPaths& bulk,
                                               std::size_t& bulk_elements) {
  BulkBuilder b(BulkBuilder::Mode::blocks, max_depth, bulk, nullptr);
  run(b, text, source, max_depth);
  bulk_elements = b.elements();
  return std::move(b.root());
}

nlohmann::json parse_json_bounded(std::string_view text, const std::string& source, std::size_t max_depth) {
  std::size_t bulk_elements = 0;
  return parse_json_bounded_without_bulk(text, source, max_depth, {}, bulk_elements);
}

std::optional<nlohmann::json> try_parse_json_bounded(std::string_view text, std::size_t max_depth) {
  try {
    return parse_json_bounded(text, "", max_depth);
  } catch (const InputError&) {
    return std::nullopt;
  }
}

void for_each_bulk_element(std::string_view text, const std::string& source, std::size_t max_depth,
                           const JsonBulkPaths& bulk,
                           const std::function<void(nlohmann::json&& value, std::size_t index)>& element) {
  BulkBuilder b(BulkBuilder::Mode::elements, max_depth, bulk, &element);
  run(b, text, source, max_depth);
}

}  // namespace lp

namespace lp {

std::string json_pointer_token(std::string_view key) {
  std::string out;
  for (const char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

namespace {

std::string kind_of(const nlohmann::json& v) {
  if (v.is_number_integer()) {
    return "a whole number";
  }
  if (v.is_number()) {
    return "a number";
  }
  if (v.is_string()) {
    return "a string";
  }
  if (v.is_boolean()) {
    return "a boolean";
  }
  if (v.is_array()) {
    return "a list";
  }
  if (v.is_object()) {
    return "an object";
  }
  return "null";
}

}  // namespace

std::string json_preview(const nlohmann::json& value) {
  // Previews are of values already bounded in depth (json_bounded.hpp): dump cannot recurse far.
  std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > 40) {
    text = text.substr(0, 37) + "...";
  }
  return text;
}

bool JsonIn::is_null() const noexcept { return m_value->is_null(); }

void JsonIn::fail(const std::string& message) const { throw InputError(*m_file, m_pointer, message); }

const nlohmann::json& JsonIn::object() const {
  if (!m_value->is_object()) {
    fail(fmt::format("expected an object, got {}", kind_of(*m_value)));
  }
  return *m_value;
}

const nlohmann::json& JsonIn::array() const {
  if (!m_value->is_array()) {
    fail(fmt::format("expected a list, got {}", kind_of(*m_value)));
  }
  return *m_value;
}

JsonIn JsonIn::at(std::string_view key) const {
  const nlohmann::json& o = object();
  const auto it = o.find(key);
  if (it == o.end()) {
    fail(fmt::format("missing \"{}\"", key));
  }
  return JsonIn(*it, *m_file, m_pointer + "/" + json_pointer_token(key));
}

std::optional<JsonIn> JsonIn::find(std::string_view key) const {
  const nlohmann::json& o = object();
  const auto it = o.find(key);
  if (it == o.end() || it->is_null()) {
    return std::nullopt;
  }
  return JsonIn(*it, *m_file, m_pointer + "/" + json_pointer_token(key));
}

std::optional<std::string> JsonIn::optional_string(std::string_view key) const {
  const std::optional<JsonIn> v = find(key);
  return v ? std::optional<std::string>(v->string()) : std::nullopt;
}

std::optional<double> JsonIn::optional_number(std::string_view key) const {
  const std::optional<JsonIn> v = find(key);
  return v ? std::optional<double>(v->number()) : std::nullopt;
}

JsonIn JsonIn::operator[](std::size_t i) const {
  const nlohmann::json& a = array();
  if (i >= a.size()) {
    fail(fmt::format("has {} elements, element {} is needed", a.size(), i));
  }
  return JsonIn(a[i], *m_file, fmt::format("{}/{}", m_pointer, i));
}

std::vector<JsonIn> JsonIn::items() const {
  const nlohmann::json& a = array();
  std::vector<JsonIn> out;
  out.reserve(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    out.emplace_back(a[i], *m_file, fmt::format("{}/{}", m_pointer, i));
  }
  return out;
}

std::vector<std::pair<std::string, JsonIn>> JsonIn::members() const {
  const nlohmann::json& o = object();
  std::vector<std::pair<std::string, JsonIn>> out;
  out.reserve(o.size());
  for (auto it = o.begin(); it != o.end(); ++it) {
    out.emplace_back(it.key(), JsonIn(it.value(), *m_file, m_pointer + "/" + json_pointer_token(it.key())));
  }
  return out;
}

std::string JsonIn::string() const {
  if (!m_value->is_string()) {
    fail(fmt::format("expected a string, got {}", json_preview(*m_value)));
  }
  return m_value->get<std::string>();
}

bool JsonIn::boolean() const {
  if (!m_value->is_boolean()) {
    fail(fmt::format("expected true or false, got {}", json_preview(*m_value)));
  }
  return m_value->get<bool>();
}

double JsonIn::number() const {
  if (!m_value->is_number() || !std::isfinite(m_value->get<double>())) {
    fail(fmt::format("expected a number, got {}", json_preview(*m_value)));
  }
  return m_value->get<double>();
}

std::int64_t JsonIn::integer(std::int64_t lo, std::int64_t hi) const {
  const bool whole = m_value->is_number_integer();
  // An unsigned value past int64's range is out of any range this reads.
  const bool fits = whole && !(m_value->is_number_unsigned() &&
                               m_value->get<std::uint64_t>() > static_cast<std::uint64_t>(hi < 0 ? 0 : hi));
  const std::int64_t v = fits ? m_value->get<std::int64_t>() : 0;
  if (!fits || v < lo || v > hi) {
    if (lo == std::numeric_limits<std::int64_t>::min() && hi == std::numeric_limits<std::int64_t>::max()) {
      fail(fmt::format("expected a whole number, got {}", json_preview(*m_value)));
    }
    fail(whole_out_of_range(lo, hi, json_preview(*m_value)));
  }
  return v;
}

std::uint64_t JsonIn::natural(std::uint64_t lo, std::uint64_t hi) const {
  const bool fits = m_value->is_number_unsigned() ||
                    (m_value->is_number_integer() && m_value->get<std::int64_t>() >= 0);
  const std::uint64_t v = fits ? m_value->get<std::uint64_t>() : 0;
  if (!fits || v < lo || v > hi) {
    fail(whole_out_of_range(lo, hi, json_preview(*m_value)));
  }
  return v;
}

namespace {
template <class T>
std::string whole_range_text(T lo, T hi, std::string_view got) {
  return fmt::format("expected a whole number in [{}, {}], got {}", lo, hi, got);
}
}  // namespace

std::string whole_out_of_range(std::int64_t lo, std::int64_t hi, std::string_view got) {
  return whole_range_text(lo, hi, got);
}

std::string whole_out_of_range(std::uint64_t lo, std::uint64_t hi, std::string_view got) {
  return whole_range_text(lo, hi, got);
}

std::vector<std::string> JsonIn::strings() const {
  std::vector<std::string> out;
  for (const JsonIn& item : items()) {
    out.push_back(item.string());
  }
  return out;
}

nlohmann::json null_if_empty(const std::string& text) { return text.empty() ? nlohmann::json() : nlohmann::json(text); }

nlohmann::json null_if_absent(const std::optional<std::string>& text) {
  return text ? nlohmann::json(*text) : nlohmann::json();
}

// util/json_text.hpp: defined here, with the other readers, so that util has one unit
// that compiles the JSON library for them.

JsonText JsonText::of(const nlohmann::json& value) {
  JsonText t;
  t.m_text = value.dump();
  return t;
}

JsonText JsonText::of_string(std::string_view text) { return of(nlohmann::json(text)); }

JsonText JsonText::array(const std::vector<JsonText>& items) {
  nlohmann::json out = nlohmann::json::array();
  for (const JsonText& item : items) {
    out.push_back(item.value());
  }
  return of(out);
}

JsonText JsonText::object(const std::vector<std::pair<std::string, JsonText>>& members) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [key, value] : members) {
    out[key] = value.value();
  }
  return of(out);
}

std::string JsonText::pretty() const { return escape::json_c1(value().dump(2)); }

nlohmann::json JsonText::value() const {
  // Our own dump(): it parses, and a depth the bounded reader let in is no deeper now.
  return nlohmann::json::parse(m_text);
}

}  // namespace lp
