#include "model/axis_values.hpp"

#include <algorithm>
#include <limits>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "util/error.hpp"
#include "util/packed.hpp"

namespace lp {

namespace {

using nlohmann::json;

/// The distinct keys and non-scalar values every AxisValues of the process points into.
/// Append-only: a pointer handed out stays valid until exit, so records can be copied,
/// moved and compared by pointer without reference counts.
class Pool {
 public:
  const std::string* key(std::string_view text) {
    const std::lock_guard<std::mutex> lock(m_mutex);
    return &*m_keys.emplace(text).first;
  }
  const json* value(const json& v) {
    std::string text = v.dump();
    const std::lock_guard<std::mutex> lock(m_mutex);
    auto [it, added] = m_values.try_emplace(std::move(text));
    if (added) {
      it->second = std::make_unique<const json>(v);
    }
    return it->second.get();
  }

 private:
  std::mutex m_mutex;
  std::unordered_set<std::string> m_keys;
  std::unordered_map<std::string, std::unique_ptr<const json>> m_values;  ///< by dump()
};

Pool& pool() {
  static Pool* const p = new Pool();  // never destroyed: records may outlive static destruction
  return *p;
}

/// Where `key` is or would go in the sorted `entries`.
template <class Entry>
std::size_t position(const std::vector<Entry>& entries, std::string_view key) {
  const auto it = std::lower_bound(entries.begin(), entries.end(), key,
                                   [](const Entry& e, std::string_view k) { return *e.key < k; });
  return static_cast<std::size_t>(it - entries.begin());
}

template <class Entry>
const Entry* find_in(const std::vector<Entry>& entries, std::string_view key) {
  const std::size_t i = position(entries, key);
  return i < entries.size() && *entries[i].key == key ? &entries[i] : nullptr;
}

}  // namespace

AxisValue AxisValue::from_json(const json& value) {
  AxisValue v;
  if (value.is_null()) {
    v.m_kind = Kind::null;
  } else if (value.is_boolean()) {
    v.m_kind = Kind::boolean;
    v.m_value.boolean = value.get<bool>();
  } else if (value.is_number_integer() &&
             (!value.is_number_unsigned() ||
              value.get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))) {
    // A whole number as the file wrote it: json keeps 0..2^63-1 read from text as
    // unsigned, which dumps the same digits as the int64 held here.
    v.m_kind = Kind::integer;
    v.m_value.integer = value.get<std::int64_t>();
  } else {
    v.m_kind = Kind::pooled;
    v.m_value.pooled = pool().value(value);
  }
  return v;
}

AxisValue AxisValue::of_bool(bool value) {
  AxisValue v;
  v.m_kind = Kind::boolean;
  v.m_value.boolean = value;
  return v;
}

AxisValue AxisValue::of_int(std::int64_t value) {
  AxisValue v;
  v.m_kind = Kind::integer;
  v.m_value.integer = value;
  return v;
}

AxisValue AxisValue::of_text(std::string_view value) { return from_json(json(value)); }

AxisValue AxisValue::from_user_text(std::string_view text) {
  json value = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded() || value.is_structured()) {
    value = std::string(text);
  }
  return from_json(value);
}

bool AxisValue::matches(const AxisValue& other) const { return *this == other || to_json() == other.to_json(); }

AxisValue AxisValue::of_ints(const std::vector<std::int64_t>& values) { return from_json(json(values)); }

json AxisValue::to_json() const {
  switch (m_kind) {
    case Kind::null:
    case Kind::erased:
      return nullptr;
    case Kind::boolean:
      return m_value.boolean;
    case Kind::integer:
      return m_value.integer;
    case Kind::pooled:
      return *m_value.pooled;
  }
  return nullptr;
}

std::optional<std::int64_t> AxisValue::integer() const {
  return m_kind == Kind::integer ? std::optional<std::int64_t>(m_value.integer) : std::nullopt;
}

std::optional<std::string> AxisValue::text() const {
  if (m_kind != Kind::pooled || !m_value.pooled->is_string()) {
    return std::nullopt;
  }
  return m_value.pooled->get<std::string>();
}

std::optional<bool> AxisValue::boolean() const {
  return m_kind == Kind::boolean ? std::optional<bool>(m_value.boolean) : std::nullopt;
}

bool AxisValue::operator==(const AxisValue& other) const {
  if (m_kind != other.m_kind) {
    return false;
  }
  switch (m_kind) {
    case Kind::null:
    case Kind::erased:
      return true;
    case Kind::boolean:
      return m_value.boolean == other.m_value.boolean;
    case Kind::integer:
      return m_value.integer == other.m_value.integer;
    case Kind::pooled:
      return m_value.pooled == other.m_value.pooled;  // the pool holds each value once
  }
  return false;
}

std::string AxisValue::dump() const { return to_json().dump(); }

std::vector<AxisValue> to_axis_values(const std::vector<json>& values) {
  std::vector<AxisValue> out;
  out.reserve(values.size());
  for (const json& v : values) {
    out.push_back(AxisValue::from_json(v));
  }
  return out;
}

std::vector<json> to_json_values(const std::vector<AxisValue>& values) {
  std::vector<json> out;
  out.reserve(values.size());
  for (const AxisValue& v : values) {
    out.push_back(v.to_json());
  }
  return out;
}

AxisValues AxisValues::from_json(const json& object) {
  if (!object.is_object()) {
    throw Error("axis values: expected a JSON object, got " + std::string(object.type_name()));
  }
  AxisValues out;
  out.m_own.reserve(object.size());
  for (const auto& [key, value] : object.items()) {
    out.set(key, value);  // an object's keys come sorted: each set() appends
  }
  return out;
}

AxisValues AxisValues::shared() const {
  std::vector<Entry> all;
  visit([&](const Entry& e) { all.push_back(e); });
  AxisValues out;
  out.m_shared = std::make_shared<const std::vector<Entry>>(std::move(all));
  return out;
}

template <class F>
void AxisValues::visit(F&& f) const {
  static const std::vector<Entry> k_none;
  const std::vector<Entry>& shared = m_shared ? *m_shared : k_none;
  std::size_t s = 0;
  std::size_t o = 0;
  while (s < shared.size() || o < m_own.size()) {
    if (o == m_own.size() || (s < shared.size() && *shared[s].key < *m_own[o].key)) {
      f(shared[s++]);
      continue;
    }
    if (s < shared.size() && shared[s].key == m_own[o].key) {
      ++s;  // the own entry is over it
    }
    if (m_own[o].value.m_kind != AxisValue::Kind::erased) {
      f(m_own[o]);
    }
    ++o;
  }
}

json AxisValues::to_json() const {
  json out = json::object();
  visit([&](const Entry& e) { out.emplace(*e.key, e.value.to_json()); });
  return out;
}

std::string AxisValues::dump() const { return to_json().dump(); }

std::size_t AxisValues::size() const {
  std::size_t n = 0;
  visit([&](const Entry&) { ++n; });
  return n;
}

const AxisValues::Entry* AxisValues::find(std::string_view key) const {
  if (const Entry* own = find_in(m_own, key)) {
    return own->value.m_kind == AxisValue::Kind::erased ? nullptr : own;
  }
  return m_shared ? find_in(*m_shared, key) : nullptr;
}

bool AxisValues::contains(std::string_view key) const { return find(key) != nullptr; }

AxisValue AxisValues::at(std::string_view key) const {
  const Entry* e = find(key);
  return e != nullptr ? e->value : AxisValue();
}

json AxisValues::value(std::string_view key) const { return at(key).to_json(); }

std::vector<std::pair<std::string_view, AxisValue>> AxisValues::entries() const {
  std::vector<std::pair<std::string_view, AxisValue>> out;
  visit([&](const Entry& e) { out.emplace_back(*e.key, e.value); });
  return out;
}

std::vector<std::pair<std::string_view, json>> AxisValues::items() const {
  std::vector<std::pair<std::string_view, json>> out;
  visit([&](const Entry& e) { out.emplace_back(*e.key, e.value.to_json()); });
  return out;
}

void AxisValues::set(std::string_view key, const json& value) { set(key, AxisValue::from_json(value)); }

void AxisValues::set(std::string_view key, AxisValue value) {
  const std::size_t i = position(m_own, key);
  if (i < m_own.size() && *m_own[i].key == key) {
    m_own[i].value = value;
    return;
  }
  m_own.insert(m_own.begin() + static_cast<std::ptrdiff_t>(i), Entry{pool().key(key), value});
}

void AxisValues::erase(std::string_view key) {
  if (m_shared && find_in(*m_shared, key) != nullptr) {
    AxisValue hidden;
    hidden.m_kind = AxisValue::Kind::erased;
    set(key, hidden);
    return;
  }
  const std::size_t i = position(m_own, key);
  if (i < m_own.size() && *m_own[i].key == key) {
    m_own.erase(m_own.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

bool AxisValues::operator==(const AxisValues& other) const {
  std::vector<const Entry*> mine;
  visit([&](const Entry& e) { mine.push_back(&e); });
  std::size_t i = 0;
  bool equal = true;
  other.visit([&](const Entry& e) {
    equal = equal && i < mine.size() && mine[i]->key == e.key && mine[i]->value == e.value;
    ++i;
  });
  return equal && i == mine.size();
}

std::uint64_t AxisValues::Packing::number(const void* pointer) {
  const auto [it, added] = m_numbers.try_emplace(pointer, m_pointers.size());
  if (added) {
    m_pointers.push_back(pointer);
  }
  return it->second;
}

void AxisValues::pack(ByteWriter& out, Packing& packing) const {
  if (m_shared) {
    const auto [it, added] = packing.m_base_numbers.try_emplace(m_shared.get(), packing.m_bases.size());
    if (added) {
      packing.m_bases.push_back(m_shared);
    }
    out.varint(it->second + 1);
  } else {
    out.varint(0);
  }
  out.varint(m_own.size());
  for (const Entry& e : m_own) {
    out.varint(packing.number(e.key));
    const AxisValue& v = e.value;
    out.byte(static_cast<std::uint8_t>(v.m_kind));
    switch (v.m_kind) {
      case AxisValue::Kind::null:
      case AxisValue::Kind::erased:
        break;
      case AxisValue::Kind::boolean:
        out.byte(v.m_value.boolean ? 1 : 0);
        break;
      case AxisValue::Kind::integer:
        out.signed_varint(v.m_value.integer);
        break;
      case AxisValue::Kind::pooled:
        out.varint(packing.number(v.m_value.pooled));
        break;
    }
  }
}

AxisValues AxisValues::unpack(ByteReader& in, const Packing& packing) {
  const auto pointer = [&](std::uint64_t n) {
    if (n >= packing.m_pointers.size()) {
      throw Error("packed axis values: a number that is not in the packing (an internal bug)");
    }
    return packing.m_pointers[n];
  };
  AxisValues out;
  if (const std::uint64_t base = in.varint(); base > 0) {
    if (base > packing.m_bases.size()) {
      throw Error("packed axis values: a shared list that is not in the packing (an internal bug)");
    }
    out.m_shared = packing.m_bases[base - 1];
  }
  const std::uint64_t n = in.varint();
  out.m_own.reserve(n);
  for (std::uint64_t i = 0; i < n; ++i) {
    Entry e;
    e.key = static_cast<const std::string*>(pointer(in.varint()));
    e.value.m_kind = static_cast<AxisValue::Kind>(in.byte());
    switch (e.value.m_kind) {
      case AxisValue::Kind::null:
      case AxisValue::Kind::erased:
        break;
      case AxisValue::Kind::boolean:
        e.value.m_value.boolean = in.byte() != 0;
        break;
      case AxisValue::Kind::integer:
        e.value.m_value.integer = in.signed_varint();
        break;
      case AxisValue::Kind::pooled:
        e.value.m_value.pooled = static_cast<const json*>(pointer(in.varint()));
        break;
      default:
        throw Error("packed axis values: an unknown kind (an internal bug)");
    }
    out.m_own.push_back(e);
  }
  return out;
}

}  // namespace lp
