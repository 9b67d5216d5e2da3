#pragma once
// SHA-256 through OpenSSL's libcrypto: kernel files, compiler binaries, configs.

#include <string>
#include <string_view>

namespace lp {

/// Lower-case hex SHA-256 of `bytes`.
std::string sha256_hex(std::string_view bytes);

/// Lower-case hex SHA-256 of the file at `path`; throws lp::Error when it cannot be read.
std::string sha256_file_hex(const std::string& path);

}  // namespace lp
