#include "util/json_text.hpp"

#include <nlohmann/json.hpp>

namespace lp {

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
