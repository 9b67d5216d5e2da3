#pragma once
// Test helper: an environment variable set for one scope and put back as it was
// (unset again when it was unset). Tests that read LP_TOOLS_DIR, XDG_CACHE_HOME and
// the like share it.

#include <cstdlib>
#include <optional>
#include <string>

namespace lp::test_support {

class ScopedEnv {
 public:
  /// `name` must outlive the object (a string literal).
  ScopedEnv(const char* name, const std::string& value) : m_name(name) {
    if (const char* old = std::getenv(name); old != nullptr) {
      m_saved = old;
    }
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (m_saved) {
      ::setenv(m_name, m_saved->c_str(), 1);
    } else {
      ::unsetenv(m_name);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* m_name;
  std::optional<std::string> m_saved;
};

}  // namespace lp::test_support
