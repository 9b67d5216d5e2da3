#include "util/sha256.hpp"

#include <openssl/evp.h>

#include <array>
#include <limits>
#include <memory>

#include <fmt/format.h>

#include "util/error.hpp"
#include "util/files.hpp"

namespace lp {
namespace {

using DigestContext = std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)>;

DigestContext make_context() {
  DigestContext ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) {
    throw Error("sha256: cannot initialise an OpenSSL digest context");
  }
  return ctx;
}

std::string finish(EVP_MD_CTX* ctx) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(ctx, digest.data(), &length) != 1) {
    throw Error("sha256: digest failed");
  }
  std::string hex;
  hex.reserve(length * 2);
  for (unsigned int i = 0; i < length; ++i) {
    hex += fmt::format("{:02x}", digest[i]);
  }
  return hex;
}

}  // namespace

std::string sha256_hex(std::string_view bytes) {
  DigestContext ctx = make_context();
  EVP_DigestUpdate(ctx.get(), bytes.data(), bytes.size());
  return finish(ctx.get());
}

std::string sha256_file_hex(const std::string& path) {
  DigestContext ctx = make_context();
  try {
    // The bounded reader (util/files.hpp): a FIFO or a device named as a tool is refused.
    read_file_chunks(path, std::numeric_limits<std::size_t>::max(), [&](std::string_view chunk) {
      EVP_DigestUpdate(ctx.get(), chunk.data(), chunk.size());
      return true;
    });
  } catch (const UsageError& e) {
    throw Error(e.what());
  }
  return finish(ctx.get());
}

}  // namespace lp
