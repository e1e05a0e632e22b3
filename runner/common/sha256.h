// SHA-256 (FIPS 180-4), for bitwise comparison of outputs across runs and
// for task-file anchors. OpenSSL's EVP does the hashing (SHA-NI or AVX2 where
// the CPU has them): every output of every case is hashed inside the judge's
// clock, so its speed matters (docs/PERFORMANCE.md, "SHA-256").
#pragma once

#include <cstddef>
#include <string>

struct evp_md_ctx_st;  // OpenSSL's EVP_MD_CTX, kept out of this header

namespace opverify {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void Update(const void* data, std::size_t size);
  std::string HexDigest();  // finishes the hash; call once

 private:
  evp_md_ctx_st* context_;  // owned
};

std::string Sha256Hex(const void* data, std::size_t size);

}  // namespace opverify
