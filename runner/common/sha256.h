// SHA-256 (FIPS 180-4), for bitwise comparison of outputs across runs and
// for task-file anchors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace opverify {

class Sha256 {
 public:
  Sha256();
  void Update(const void* data, std::size_t size);
  std::string HexDigest();  // finishes the hash; call once

 private:
  void Block(const std::uint8_t* block);
  std::uint32_t state_[8];
  std::uint8_t buffer_[64];
  std::size_t buffered_ = 0;
  std::uint64_t total_bytes_ = 0;
};

std::string Sha256Hex(const void* data, std::size_t size);

}  // namespace opverify
