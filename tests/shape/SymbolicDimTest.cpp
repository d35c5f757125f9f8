//===- tests/shape/SymbolicDimTest.cpp - Symbolic dim arithmetic ----------===//
#include "ir/SymbolicDim.h"

#include <gtest/gtest.h>

namespace onnxslim {
namespace {

SymDim c(int64_t v) { return SymDim::constant(v); }
SymDim s(const char *name) { return SymDim::named(name); }

TEST(SymDim, ConstantsFold) {
  EXPECT_EQ((c(2) + c(3)).constantValue(), 5);
  EXPECT_EQ((c(2) * c(3) - c(1)).constantValue(), 5);
  EXPECT_TRUE(c(0).isConstant());
  EXPECT_EQ(c(0).constantValue(), 0);
}

TEST(SymDim, CanonicalFormMakesEqualExpressionsEqual) {
  SymDim a = s("batch") * s("seq") * c(768);
  SymDim b = c(768) * s("seq") * s("batch");
  EXPECT_TRUE(provablyEqual(a, b));
  EXPECT_EQ(a.str(), b.str());
  EXPECT_TRUE(provablyEqual(s("seq") + c(1) - c(1), s("seq")));
  EXPECT_TRUE(provablyEqual((s("a") + s("b")) * c(2), s("b") * c(2) + s("a") * c(2)));
  EXPECT_FALSE(provablyEqual(s("a"), s("b")));
}

TEST(SymDim, UnknownIsEqualToNothing) {
  SymDim u;
  EXPECT_TRUE(u.isUnknown());
  EXPECT_FALSE(provablyEqual(u, u));
  EXPECT_TRUE((u + c(1)).isUnknown());
  EXPECT_TRUE((u * c(0)).isUnknown());
  EXPECT_FALSE(provablyDifferent(u, c(3)));
  EXPECT_TRUE(provablyDifferent(c(2), c(3)));
}

TEST(SymDim, ExactDivision) {
  SymDim total = s("batch") * s("seq") * c(768);
  EXPECT_TRUE(provablyEqual(total.divExact(s("batch") * s("seq")), c(768)));
  EXPECT_TRUE(provablyEqual(total.divExact(s("batch") * c(12)), s("seq") * c(64)));
  EXPECT_TRUE(total.divExact(c(7)).isUnknown());
  EXPECT_TRUE(total.divExact(s("other")).isUnknown());
  EXPECT_TRUE(provablyEqual((s("a") + s("b")).divExact(s("a") + s("b")), c(1)));
  EXPECT_TRUE(c(5).divExact(c(0)).isUnknown());
}

TEST(SymDim, FloorAndCeilDivision) {
  EXPECT_EQ(c(7).floorDiv(2).constantValue(), 3);
  EXPECT_EQ(c(-7).floorDiv(2).constantValue(), -4);
  EXPECT_EQ(c(7).ceilDiv(2).constantValue(), 4);
  // floor((2H + 1) / 2) == H exactly.
  EXPECT_TRUE(provablyEqual((s("H") * c(2) + c(1)).floorDiv(2), s("H")));
  // floor((H - 1) / 2) + 1 is an opaque term, equal to itself when rebuilt.
  SymDim a = (s("H") - c(1)).floorDiv(2) + c(1);
  SymDim b = (s("H") + c(-1)).floorDiv(2) + c(1);
  EXPECT_TRUE(provablyEqual(a, b));
  EXPECT_FALSE(a.isConstant());
  EXPECT_TRUE(a.toDim().isUnknown());
}

TEST(SymDim, OnlyConstantsAndUserSymbolsBecomeDims) {
  EXPECT_EQ(c(3).toDim(), Dim::value(3));
  EXPECT_EQ(s("batch").toDim(), Dim::symbol("batch"));
  EXPECT_TRUE((s("batch") * c(2)).toDim().isUnknown());
  EXPECT_TRUE((s("batch") + c(1)).toDim().isUnknown());
  EXPECT_TRUE(SymDim::anonymous(4).toDim().isUnknown());
  EXPECT_TRUE(c(-1).toDim().isUnknown());
  EXPECT_EQ(SymDim::fromDim(Dim::symbol("seq")), s("seq"));
  EXPECT_TRUE(SymDim::fromDim(Dim::unknown()).isUnknown());
}

TEST(SymDim, AnonymousAtomsAreDistinctSizes) {
  SymDim a = SymDim::anonymous(1), b = SymDim::anonymous(2);
  EXPECT_TRUE(provablyEqual(a, SymDim::anonymous(1)));
  EXPECT_FALSE(provablyEqual(a, b));
  EXPECT_FALSE(provablyEqual(a, s("?1")));
  EXPECT_EQ(a.str(), "?1");
}

TEST(SymDim, OverflowBecomesUnknown) {
  SymDim big = c(INT64_MAX);
  EXPECT_TRUE((big + c(1)).isUnknown());
  EXPECT_TRUE((big * c(2)).isUnknown());
  EXPECT_TRUE((c(INT64_MIN) - c(1)).isUnknown());
}

TEST(SymDim, LowerBounds) {
  EXPECT_EQ((s("seq") + c(4)).lowerBound(), 4);
  EXPECT_EQ((s("a") * s("b") * c(2)).lowerBound(), 0);
  EXPECT_EQ(c(7).lowerBound(), 7);
  EXPECT_FALSE((c(3) - s("seq")).lowerBound());
  EXPECT_FALSE((s("H") - c(1)).floorDiv(2).lowerBound());
  EXPECT_FALSE(SymDim().lowerBound());
}

TEST(SymDim, ShapeHelpers) {
  SymShape shape{s("batch"), c(3), c(4)};
  EXPECT_TRUE(provablyEqual(product(shape), s("batch") * c(12)));
  EXPECT_TRUE(provablyEqual(product(shape, 1), c(12)));
  EXPECT_FALSE(isStatic(shape));
  EXPECT_EQ(staticSize(SymShape{c(2), c(3)}), 6);
  EXPECT_EQ(toShape(shape)[0], Dim::symbol("batch"));
  EXPECT_EQ(str(shape), "[batch, 3, 4]");
}

} // namespace
} // namespace onnxslim
