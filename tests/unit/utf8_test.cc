// Text from outside made safe for JSON: invalid UTF-8 replaced, and cuts that
// never split a character, so nlohmann::json can always write the result.
#include "runner/common/utf8.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace opverify {
namespace {

const std::string kReplacement = "\xEF\xBF\xBD";

TEST(ValidUtf8, KeepsValidTextAndReplacesEachBadByte) {
  EXPECT_EQ(ValidUtf8("plain"), "plain");
  EXPECT_EQ(ValidUtf8("\xE9\x94\x99\xE8\xAF\xAF"), "\xE9\x94\x99\xE8\xAF\xAF");  // 错误
  EXPECT_EQ(ValidUtf8("a\xFF" "b"), "a" + kReplacement + "b");
  EXPECT_EQ(ValidUtf8("\xE9\x94"), kReplacement + kReplacement);  // a character cut short
}

TEST(ValidUtf8, RefusesOverlongFormsSurrogatesAndValuesPastTheLastCodePoint) {
  EXPECT_EQ(ValidUtf8("\xC0\x80"), kReplacement + kReplacement);              // overlong NUL
  EXPECT_EQ(ValidUtf8("\xE0\x80\xAF"), kReplacement + kReplacement + kReplacement);  // overlong '/'
  EXPECT_EQ(ValidUtf8("\xED\xA0\x80"), kReplacement + kReplacement + kReplacement);  // U+D800
  EXPECT_EQ(ValidUtf8("\xF4\x90\x80\x80").substr(0, 3), kReplacement);       // U+110000
  EXPECT_EQ(ValidUtf8("\xF0\x9F\x98\x80"), "\xF0\x9F\x98\x80");                // U+1F600
}

TEST(ValidUtf8, WhatItGivesNlohmannWrites) {
  for (const std::string raw : {"\xC0\x80", "\xED\xA0\x80", "x\xE9\x94", "\xF4\x90\x80\x80", "\xFE\xFF"}) {
    EXPECT_NO_THROW(nlohmann::json(ValidUtf8(raw)).dump()) << raw;
  }
}

TEST(CutMiddle, CountsCodePointsAndNeverSplitsOne) {
  std::string text;
  for (int i = 0; i < 700; ++i) text += "\xE9\x94\x99\xE8\xAF\xAF\xE4\xBF\xA1\xE6\x81\xAF";  // 错误信息
  ASSERT_EQ(CodePointCount(text), 2800u);
  const std::string cut = CutMiddle(text, 2000);
  EXPECT_EQ(ValidUtf8(cut), cut);
  EXPECT_NE(cut.find("\n... [truncated 800 chars] ...\n"), std::string::npos);
  const std::size_t marker = std::string("\n... [truncated 800 chars] ...\n").size();
  EXPECT_EQ(CodePointCount(cut), 2000u + marker);
  EXPECT_EQ(cut.substr(0, 3), "\xE9\x94\x99");
  EXPECT_EQ(cut.substr(cut.size() - 3), "\xE6\x81\xAF");
  EXPECT_NO_THROW(nlohmann::json(cut).dump());
}

TEST(CutMiddle, KeepsHalfFromEachEndAsTheSeedDoes) {
  std::string text(2600, 'a');
  text.replace(1300, 2600 - 1300, std::string(1300, 'z'));
  const std::string cut = CutMiddle(text, 2000);
  EXPECT_EQ(cut, std::string(1000, 'a') + "\n... [truncated 600 chars] ...\n" + std::string(1000, 'z'));
  EXPECT_EQ(CutMiddle("short", 2000), "short");
  EXPECT_EQ(CutMiddle("bad\xFF", 2000), "bad" + kReplacement);
}

TEST(Utf8Prefix, StopsOnACharacterBoundary) {
  EXPECT_EQ(Utf8Prefix("\xE9\x94\x99\xE8\xAF\xAF", 1), "\xE9\x94\x99");
  EXPECT_EQ(Utf8Prefix("ab", 5), "ab");
  EXPECT_EQ(Utf8Prefix("", 3), "");
}

}  // namespace
}  // namespace opverify
