#include "runner/common/sha256.h"

#include <openssl/evp.h>

#include <stdexcept>

namespace opverify {
namespace {

// EVP fails only when out of memory or with a broken OpenSSL install: no
// caller can go on from either, hence an exception rather than a Status.
void Check(int ok, const char* call) {
  if (ok != 1) throw std::runtime_error(std::string("SHA-256: ") + call + " failed");
}

}  // namespace

Sha256::Sha256() : context_(EVP_MD_CTX_new()) {
  if (context_ == nullptr) throw std::runtime_error("SHA-256: EVP_MD_CTX_new failed");
  if (EVP_DigestInit_ex(context_, EVP_sha256(), nullptr) != 1) {
    EVP_MD_CTX_free(context_);
    throw std::runtime_error("SHA-256: EVP_DigestInit_ex failed");
  }
}

Sha256::~Sha256() { EVP_MD_CTX_free(context_); }

void Sha256::Update(const void* data, std::size_t size) {
  if (size == 0) return;
  Check(EVP_DigestUpdate(context_, data, size), "EVP_DigestUpdate");
}

std::string Sha256::HexDigest() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  Check(EVP_DigestFinal_ex(context_, digest, &length), "EVP_DigestFinal_ex");
  static const char* kHex = "0123456789abcdef";
  std::string out;
  out.reserve(2 * length);
  for (unsigned int i = 0; i < length; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 0xf];
  }
  return out;
}

std::string Sha256Hex(const void* data, std::size_t size) {
  Sha256 hash;
  hash.Update(data, size);
  return hash.HexDigest();
}

}  // namespace opverify
