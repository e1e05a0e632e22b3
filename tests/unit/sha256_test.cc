// SHA-256 against FIPS 180-4's test vectors.
#include "runner/common/sha256.h"

#include <gtest/gtest.h>

#include <string>

namespace opverify {
namespace {

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(Sha256Hex("", 0), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc", 3), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const std::string two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  EXPECT_EQ(Sha256Hex(two_blocks.data(), two_blocks.size()),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  const std::string million(1000000, 'a');
  EXPECT_EQ(Sha256Hex(million.data(), million.size()),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, PiecewiseUpdatesEqualOneUpdate) {
  const std::string text(1000, 'x');
  Sha256 hash;
  for (std::size_t i = 0; i < text.size(); i += 7) hash.Update(text.data() + i, std::min<std::size_t>(7, text.size() - i));
  EXPECT_EQ(hash.HexDigest(), Sha256Hex(text.data(), text.size()));
}

}  // namespace
}  // namespace opverify
