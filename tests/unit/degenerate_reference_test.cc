// The degenerate-reference checks over whole outputs: a sparse output that
// moves with its inputs is not flagged wherever its few values sit; one that
// is bit for bit the same for different inputs is, whatever its dtype.
#include "runner/verify/degenerate_reference.h"

#include <gtest/gtest.h>

#include "tests/support/tensor_builder.h"

namespace opverify {
namespace {

using testing::OwnedTensor;

// A 259x259 float32 output, zero but for every 256th element from the 8th,
// which holds `base` + its index: 99.6% zeros, and no nonzero element on
// the stride of 16 a 4,096-element sample would read.
OwnedTensor Sparse(double base) {
  std::vector<double> values(259 * 259, 0.0);
  for (std::size_t i = 8; i < values.size(); i += 256) values[i] = base + static_cast<double>(i);
  return OwnedTensor(DType::kFloat32, {259, 259}, values);
}

std::vector<std::string> Compare(const std::vector<OwnedTensor>& per_seed,
                                 bool inputs_differ = true) {
  SeedComparison seeds;
  std::uint64_t seed = 1;
  for (const OwnedTensor& golden : per_seed) {
    seeds.Add(seed, inputs_differ ? "inputs-" + std::to_string(seed) : "same",
              {{golden.view(), golden.view()}});
    ++seed;
  }
  return seeds.Warnings();
}

TEST(DegenerateReference, ASparseOutputThatMovesWithItsInputsIsNotFlagged) {
  const std::vector<OwnedTensor> outputs = {Sparse(0.5), Sparse(1.5), Sparse(2.5)};
  EXPECT_TRUE(Compare(outputs).empty());
  EXPECT_FALSE(DegenerateReference(outputs[0]).has_value());
}

TEST(DegenerateReference, AnOutputThatDiffersInOneElementOnlyIsNotFlagged) {
  std::vector<double> a(10000, 1.0), b(10000, 1.0);
  a[4097] = 3.0;
  b[4097] = 4.0;
  a[0] = b[0] = 2.0;
  EXPECT_TRUE(Compare({OwnedTensor(DType::kFloat32, a), OwnedTensor(DType::kFloat32, b)}).empty());
}

TEST(DegenerateReference, AnInputBlindOutputIsFlaggedWithItsSize) {
  const std::vector<OwnedTensor> outputs = {Sparse(0.5), Sparse(0.5), Sparse(0.5)};
  const std::vector<std::string> warnings = Compare(outputs);
  ASSERT_EQ(warnings.size(), 1U);
  EXPECT_NE(warnings[0].find("bit for bit the same (all 67081 elements) for seeds 1, 2, 3"),
            std::string::npos);
  EXPECT_NE(warnings[0].find("does not depend on them"), std::string::npos);
}

TEST(DegenerateReference, IntegerAndBoolOutputsAreComparedToo) {
  std::vector<double> flags(100, 0.0);
  const std::vector<OwnedTensor> outputs = {OwnedTensor(DType::kBool, flags),
                                            OwnedTensor(DType::kBool, flags)};
  EXPECT_EQ(Compare(outputs).size(), 1U);
}

TEST(DegenerateReference, TheSameInputsOrOneSeedSayNothing) {
  EXPECT_TRUE(Compare({Sparse(0.5), Sparse(0.5)}, /*inputs_differ=*/false).empty());
  EXPECT_TRUE(Compare({Sparse(0.5)}).empty());
  // A single element (a loss, a count) may well not move.
  EXPECT_TRUE(
      Compare({OwnedTensor(DType::kFloat32, {1.0}), OwnedTensor(DType::kFloat32, {1.0})}).empty());
}

TEST(DegenerateReference, AllNearZeroAndOneValueAreReadOverTheWholeOutput) {
  std::vector<double> zeros(100000, 0.0);
  EXPECT_NE(DegenerateReference(OwnedTensor(DType::kFloat32, zeros))->find("within 1e-6 of zero"),
            std::string::npos);
  zeros[99999] = 1.0;  // one real value at the very end
  EXPECT_FALSE(DegenerateReference(OwnedTensor(DType::kFloat32, zeros)).has_value());
  std::vector<double> sevens(100000, 7.0);
  EXPECT_NE(DegenerateReference(OwnedTensor(DType::kFloat32, sevens))->find("one value"),
            std::string::npos);
}

}  // namespace
}  // namespace opverify
