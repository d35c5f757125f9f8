//===- ir/SymbolicDim.cpp - Symbolic dimension expressions ----------------===//
//
// Canonical polynomials over named, anonymous and opaque atoms, with checked
// 64-bit arithmetic: any overflow turns the result into unknown.
//
//===----------------------------------------------------------------------===//
#include "ir/SymbolicDim.h"

#include <algorithm>

namespace onnxslim {

namespace {

/// Bounds that keep pathological models (a shape value squared in a loop of
/// Muls, say) from growing expressions without limit: beyond them, unknown.
constexpr size_t kMaxTerms = 32;
constexpr size_t kMaxDegree = 16;
constexpr size_t kMaxOpaqueText = 256;

bool addOverflows(int64_t a, int64_t b, int64_t &out) { return __builtin_add_overflow(a, b, &out); }
bool mulOverflows(int64_t a, int64_t b, int64_t &out) { return __builtin_mul_overflow(a, b, &out); }

/// Floor division for a positive divisor.
int64_t floorDivInt(int64_t a, int64_t k) {
  int64_t q = a / k;
  if ((a % k) != 0 && a < 0)
    --q;
  return q;
}

std::string atomText(const SymAtom &a) {
  switch (a.kind) {
  case SymAtom::Kind::Named:
  case SymAtom::Kind::Opaque: return a.name;
  case SymAtom::Kind::Anonymous: return "?" + std::to_string(a.id);
  }
  return "?";
}

} // namespace

SymDim SymDim::fromTerms(std::map<Monomial, int64_t> terms) {
  SymDim d;
  d.known_ = true;
  for (auto &[m, c] : terms)
    if (c != 0)
      d.terms_.emplace(m, c);
  return d;
}

bool SymDim::addTerm(const Monomial &m, int64_t c) {
  if (c == 0)
    return true;
  auto [it, inserted] = terms_.emplace(m, c);
  if (inserted)
    return true;
  int64_t sum;
  if (addOverflows(it->second, c, sum))
    return false;
  if (sum == 0)
    terms_.erase(it);
  else
    it->second = sum;
  return true;
}

SymDim SymDim::constant(int64_t v) {
  SymDim d;
  d.known_ = true;
  if (v != 0)
    d.terms_.emplace(Monomial{}, v);
  return d;
}

SymDim SymDim::named(std::string symbol) {
  SymDim d;
  d.known_ = true;
  d.terms_.emplace(Monomial{SymAtom{SymAtom::Kind::Named, std::move(symbol), 0}}, 1);
  return d;
}

SymDim SymDim::anonymous(uint64_t id) {
  SymDim d;
  d.known_ = true;
  d.terms_.emplace(Monomial{SymAtom{SymAtom::Kind::Anonymous, "", id}}, 1);
  return d;
}

SymDim SymDim::opaque(std::string canonicalText) {
  if (canonicalText.size() > kMaxOpaqueText)
    return SymDim();
  SymDim d;
  d.known_ = true;
  d.terms_.emplace(Monomial{SymAtom{SymAtom::Kind::Opaque, std::move(canonicalText), 0}}, 1);
  return d;
}

SymDim SymDim::fromDim(const Dim &d) {
  if (d.isValue())
    return constant(d.getValue());
  if (d.isSymbol() && !d.getSymbol().empty())
    return named(d.getSymbol());
  return unknown();
}

bool SymDim::isConstant() const {
  return known_ && (terms_.empty() || (terms_.size() == 1 && terms_.begin()->first.empty()));
}

std::optional<int64_t> SymDim::constantValue() const {
  if (!isConstant())
    return std::nullopt;
  return terms_.empty() ? 0 : terms_.begin()->second;
}

bool SymDim::isNamedSymbol() const {
  if (!known_ || terms_.size() != 1)
    return false;
  const auto &[m, c] = *terms_.begin();
  return c == 1 && m.size() == 1 && m[0].kind == SymAtom::Kind::Named;
}

std::optional<SymAtom> SymDim::soleAtom() const {
  if (!known_ || terms_.size() != 1)
    return std::nullopt;
  const auto &[m, c] = *terms_.begin();
  if (c != 1 || m.size() != 1)
    return std::nullopt;
  return m[0];
}

std::optional<int64_t> SymDim::lowerBound() const {
  if (!known_)
    return std::nullopt;
  int64_t bound = 0;
  for (const auto &[m, c] : terms_) {
    if (m.empty()) {
      bound = c;
      continue;
    }
    if (c < 0)
      return std::nullopt;
    for (const SymAtom &a : m)
      if (a.kind == SymAtom::Kind::Opaque)
        return std::nullopt;
  }
  return bound;
}

Dim SymDim::toDim() const {
  if (auto v = constantValue())
    return *v >= 0 ? Dim::value(*v) : Dim::unknown();
  if (isNamedSymbol())
    return Dim::symbol(terms_.begin()->first[0].name);
  return Dim::unknown();
}

std::string SymDim::str() const {
  if (!known_)
    return "unknown";
  if (terms_.empty())
    return "0";
  std::string out;
  std::string constantPart;
  for (const auto &[m, c] : terms_) {
    if (m.empty()) {
      constantPart = std::to_string(c);
      continue;
    }
    std::string term;
    if (c == -1)
      term = "-";
    else if (c != 1)
      term = std::to_string(c) + "*";
    for (size_t i = 0; i < m.size(); ++i)
      term += (i ? "*" : "") + atomText(m[i]);
    out += (out.empty() ? "" : " + ") + term;
  }
  if (!constantPart.empty())
    out += (out.empty() ? "" : " + ") + constantPart;
  return out;
}

SymDim operator+(const SymDim &a, const SymDim &b) {
  if (!a.known_ || !b.known_)
    return SymDim();
  SymDim r = a;
  for (const auto &[m, c] : b.terms_)
    if (!r.addTerm(m, c))
      return SymDim();
  return r.terms_.size() > kMaxTerms ? SymDim() : r;
}

SymDim operator-(const SymDim &a, const SymDim &b) {
  if (!a.known_ || !b.known_)
    return SymDim();
  SymDim r = a;
  for (const auto &[m, c] : b.terms_) {
    if (c == INT64_MIN || !r.addTerm(m, -c))
      return SymDim();
  }
  return r.terms_.size() > kMaxTerms ? SymDim() : r;
}

SymDim operator*(const SymDim &a, const SymDim &b) {
  if (!a.known_ || !b.known_)
    return SymDim();
  SymDim r = SymDim::constant(0);
  for (const auto &[ma, ca] : a.terms_)
    for (const auto &[mb, cb] : b.terms_) {
      int64_t c;
      if (mulOverflows(ca, cb, c))
        return SymDim();
      if (ma.size() + mb.size() > kMaxDegree)
        return SymDim();
      SymDim::Monomial m;
      m.reserve(ma.size() + mb.size());
      std::merge(ma.begin(), ma.end(), mb.begin(), mb.end(), std::back_inserter(m));
      if (!r.addTerm(m, c) || r.terms_.size() > kMaxTerms)
        return SymDim();
    }
  return r;
}

SymDim SymDim::divExact(const SymDim &divisor) const {
  if (!known_ || !divisor.known_ || divisor.terms_.empty())
    return SymDim();
  if (*this == divisor)
    return constant(1);
  if (divisor.terms_.size() != 1)
    return SymDim();
  const auto &[dm, dc] = *divisor.terms_.begin();
  std::map<Monomial, int64_t> out;
  for (const auto &[m, c] : terms_) {
    if (c % dc != 0 || !std::includes(m.begin(), m.end(), dm.begin(), dm.end()))
      return SymDim();
    Monomial rest;
    std::set_difference(m.begin(), m.end(), dm.begin(), dm.end(), std::back_inserter(rest));
    out[rest] += c / dc;
  }
  return fromTerms(std::move(out));
}

SymDim SymDim::floorDiv(int64_t k) const {
  if (!known_ || k <= 0)
    return SymDim();
  if (k == 1)
    return *this;
  std::map<Monomial, int64_t> quotient, remainder;
  for (const auto &[m, c] : terms_) {
    int64_t q = floorDivInt(c, k);
    quotient[m] = q;
    remainder[m] = c - q * k;
  }
  SymDim q = fromTerms(std::move(quotient));
  SymDim r = fromTerms(std::move(remainder));
  if (r.isConstant())
    return q; // 0 <= r < k, so floor(r / k) == 0.
  return q + opaque("floor((" + r.str() + ") / " + std::to_string(k) + ")");
}

SymDim SymDim::ceilDiv(int64_t k) const {
  if (!known_ || k <= 0)
    return SymDim();
  return (*this + constant(k - 1)).floorDiv(k);
}

bool provablyDifferent(const SymDim &a, const SymDim &b) {
  auto x = a.constantValue(), y = b.constantValue();
  if (x && y)
    return *x != *y;
  return provablyAtLeast(a, b, 1) || provablyAtLeast(b, a, 1);
}

bool provablyAtLeast(const SymDim &a, const SymDim &b, int64_t margin) {
  if (a.isUnknown() || b.isUnknown())
    return false;
  if (std::optional<int64_t> low = (a - b).lowerBound(); low && *low >= margin)
    return true;
  if (margin > 0)
    return false;
  // b = min(a, c) <= a.
  if (auto ops = minimumOperands(b))
    return margin == 0 && (ops->first == a.str() || ops->second == a.str());
  return false;
}

SymDim minimum(const SymDim &a, const SymDim &b) {
  if (a.isUnknown() || b.isUnknown())
    return SymDim();
  if (provablyAtLeast(b, a))
    return a;
  if (provablyAtLeast(a, b))
    return b;
  std::string x = a.str(), y = b.str();
  if (y < x)
    std::swap(x, y);
  return SymDim::opaque("min(" + x + ", " + y + ")");
}

std::optional<std::pair<std::string, std::string>> minimumOperands(const SymDim &d) {
  std::optional<SymAtom> atom = d.soleAtom();
  if (!atom || atom->kind != SymAtom::Kind::Opaque)
    return std::nullopt;
  const std::string &text = atom->name;
  if (text.rfind("min(", 0) != 0 || text.back() != ')')
    return std::nullopt;
  int depth = 0;
  for (size_t i = 4; i + 1 < text.size(); ++i) {
    char c = text[i];
    if (c == '(')
      ++depth;
    else if (c == ')' && --depth < 0)
      return std::nullopt; // `min(a) + min(b)`: not one atom
    else if (c == ',' && depth == 0 && text.compare(i, 2, ", ") == 0)
      return std::make_pair(text.substr(4, i - 4), text.substr(i + 2, text.size() - i - 3));
  }
  return std::nullopt;
}

SymShape toSymShape(const Shape &shape) {
  SymShape out;
  out.reserve(shape.size());
  for (const Dim &d : shape)
    out.push_back(SymDim::fromDim(d));
  return out;
}

Shape toShape(const SymShape &shape) {
  Shape out;
  out.reserve(shape.size());
  for (const SymDim &d : shape)
    out.push_back(d.toDim());
  return out;
}

SymDim product(const SymShape &shape, size_t begin, size_t end) {
  SymDim p = SymDim::constant(1);
  for (size_t i = begin; i < std::min(end, shape.size()); ++i)
    p = p * shape[i];
  return p;
}

bool isStatic(const SymShape &shape) {
  return std::all_of(shape.begin(), shape.end(), [](const SymDim &d) { return d.isConstant(); });
}

std::optional<int64_t> staticSize(const SymShape &shape) {
  int64_t n = 1;
  for (const SymDim &d : shape) {
    auto v = d.constantValue();
    if (!v || *v < 0 || mulOverflows(n, *v, n))
      return std::nullopt;
  }
  return n;
}

std::string str(const SymShape &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + shape[i].str();
  return s + "]";
}

} // namespace onnxslim
