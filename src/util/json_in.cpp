#include "util/json_in.hpp"

#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "util/error.hpp"
#include "util/json_out.hpp"
#include "util/json_text.hpp"

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
    fail(fmt::format("expected a whole number in [{}, {}], got {}", lo, hi, json_preview(*m_value)));
  }
  return v;
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

nlohmann::json JsonText::value() const {
  // Our own dump(): it parses, and a depth the bounded reader let in is no deeper now.
  return nlohmann::json::parse(m_text);
}

}  // namespace lp
