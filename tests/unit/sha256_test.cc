// SHA-256 against FIPS 180-4's test vectors.
#include "runner/common/sha256.h"

#include <gtest/gtest.h>

#include <algorithm>
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

// FIPS 180-4's long message (1 GiB: a 64-byte pattern 16,777,216 times), fed
// as it is in a run: many large Update calls on one hash.
TEST(Sha256, OneGibibyteInLargeUpdatesMatchesTheLongVector) {
  const std::string pattern = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmno";
  std::string chunk;
  for (int i = 0; i < 16384; ++i) chunk += pattern;  // 1 MiB
  Sha256 hash;
  for (int i = 0; i < 1024; ++i) hash.Update(chunk.data(), chunk.size());
  EXPECT_EQ(hash.HexDigest(), "50e72a0e26442fe2552dc3938ac58658228c0cbfb1d2ca872ae435266fcd055e");
}

// Pieces of every size around the 64-byte block, empty ones included.
TEST(Sha256, UnevenPiecesAcrossBlocksEqualOneUpdate) {
  std::string text((1 << 20) + 13, '\0');
  for (std::size_t i = 0; i < text.size(); ++i) text[i] = static_cast<char>(i % 251);
  Sha256 hash;
  std::size_t at = 0;
  for (std::size_t piece = 0; at < text.size(); piece = (piece + 1) % 200) {
    const std::size_t n = std::min(piece, text.size() - at);
    hash.Update(text.data() + at, n);
    at += n;
  }
  EXPECT_EQ(hash.HexDigest(), Sha256Hex(text.data(), text.size()));
}

}  // namespace
}  // namespace opverify
