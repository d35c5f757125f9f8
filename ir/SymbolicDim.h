//===- ir/SymbolicDim.h - Symbolic dimension expressions -------*- C++ -*-===//
//
// The arithmetic shape inference does on dims it cannot reduce to numbers. A
// SymDim is unknown, or a polynomial with integer coefficients over atoms:
//
//  - a *named* atom is a user symbol from the model (`batch`, `sequence`);
//  - an *anonymous* atom stands for one particular but unnamed size (an
//    unknown input dim, the row count of a NonZero result), so that two
//    values sharing it are provably the same size;
//  - an *opaque* atom is a non-polynomial term such as `floor((H + -1) / 2)`,
//    named by its canonical text so equal expressions compare equal.
//
// Polynomials are kept in canonical form (sorted monomials, no zero terms), so
// structural equality is mathematical equality and `str()` is a canonical
// key. Only a constant or a lone named atom converts back to an IR Dim; every
// other expression becomes an unknown Dim: inference never invents symbol
// names for the model. Sizes are assumed non-negative; overflow gives unknown.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Type.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace onnxslim {

/// One indeterminate of a symbolic dim.
struct SymAtom {
  enum class Kind : uint8_t { Named, Anonymous, Opaque };
  Kind kind = Kind::Named;
  std::string name; ///< The symbol (Named) or canonical text (Opaque).
  uint64_t id = 0;  ///< Anonymous atoms only.

  auto operator<=>(const SymAtom &) const = default;
  bool operator==(const SymAtom &) const = default;
};

class SymDim {
public:
  /// Unknown: equal to nothing, not even another unknown (see provablyEqual).
  SymDim() = default;
  static SymDim unknown() { return SymDim(); }
  static SymDim constant(int64_t v);
  static SymDim named(std::string symbol);
  static SymDim anonymous(uint64_t id);
  static SymDim opaque(std::string canonicalText);
  /// Given an IR dim, Result: a constant, a named atom, or unknown.
  static SymDim fromDim(const Dim &d);

  bool isKnown() const { return known_; }
  bool isUnknown() const { return !known_; }
  bool isConstant() const;
  /// The value when this is a constant.
  std::optional<int64_t> constantValue() const;
  /// Whether this is exactly one named atom (coefficient 1, no constant).
  bool isNamedSymbol() const;
  /// The atom when this is exactly one atom (coefficient 1, no constant).
  std::optional<SymAtom> soleAtom() const;
  /// A constant, a lone named atom, or unknown for anything else.
  Dim toDim() const;
  /// A value this dim is provably at least: its constant term when every
  /// other term is a positive multiple of sizes (named or anonymous atoms,
  /// which are never negative); nullopt otherwise.
  std::optional<int64_t> lowerBound() const;
  /// Canonical text: `2*batch*seq + 3`, `?4` for anonymous atoms, `unknown`.
  std::string str() const;

  /// Structural (= mathematical) equality; two unknowns compare equal here.
  bool operator==(const SymDim &o) const { return known_ == o.known_ && terms_ == o.terms_; }
  bool operator!=(const SymDim &o) const { return !(*this == o); }

  friend SymDim operator+(const SymDim &a, const SymDim &b);
  friend SymDim operator-(const SymDim &a, const SymDim &b);
  friend SymDim operator*(const SymDim &a, const SymDim &b);

  /// Given a divisor, Result: the exact quotient when it provably divides this
  /// (a constant or a single term divisor), else unknown.
  SymDim divExact(const SymDim &divisor) const;
  /// floor(this / k) for a positive constant k; exact polynomial parts are
  /// kept and the remainder becomes an opaque atom when not constant.
  SymDim floorDiv(int64_t k) const;
  /// ceil(this / k) for a positive constant k.
  SymDim ceilDiv(int64_t k) const;

private:
  using Monomial = std::vector<SymAtom>; ///< Sorted atoms; empty = the constant term.
  bool known_ = false;
  std::map<Monomial, int64_t> terms_;
  static SymDim fromTerms(std::map<Monomial, int64_t> terms);
  bool addTerm(const Monomial &m, int64_t c);
};

/// Both known and equal: the two dims are the same size at run time.
inline bool provablyEqual(const SymDim &a, const SymDim &b) { return a.isKnown() && a == b; }
/// Known and provably of different sizes: differing constants, or one
/// provably greater than the other (`batch` vs -1, `n + 1` vs `n`).
bool provablyDifferent(const SymDim &a, const SymDim &b);
/// a >= b + margin for every size the atoms can take: `a - b` has a lower
/// bound >= margin, or (margin <= 0) b is `min(a, ...)`.
bool provablyAtLeast(const SymDim &a, const SymDim &b, int64_t margin = 0);
/// min(a, b) of two known dims: the smaller one when that is provable, else
/// the opaque atom `min(A, B)` (operands in canonical order), which
/// provablyAtLeast knows is at most each operand; unknown when either is.
SymDim minimum(const SymDim &a, const SymDim &b);
/// Given a dim, Result: its operands when it is exactly one `min(A, B)`
/// atom made by minimum().
std::optional<std::pair<std::string, std::string>> minimumOperands(const SymDim &d);

using SymShape = std::vector<SymDim>;

/// Conversions between IR shapes and symbolic shapes.
SymShape toSymShape(const Shape &shape);
Shape toShape(const SymShape &shape);
/// Product of all dims (1 for rank 0).
SymDim product(const SymShape &shape, size_t begin = 0, size_t end = SIZE_MAX);
/// Every dim a constant.
bool isStatic(const SymShape &shape);
/// The constant element count of a static shape.
std::optional<int64_t> staticSize(const SymShape &shape);
/// `[batch, 3, ?]` for diagnostics.
std::string str(const SymShape &shape);

} // namespace onnxslim
