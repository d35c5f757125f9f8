//===- runtime/InputSearch.cpp - Inputs that reach a model's real paths ---===//
#include "runtime/InputSearch.h"

#include "ir/IR.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <limits>

namespace onnxslim::rt {

namespace {

/// Ops a value goes through unchanged in what its elements are.
bool passesValuesThrough(const Node &n) {
  static const char *const kOps[] = {"Cast", "Reshape", "Squeeze", "Unsqueeze", "Identity", "Flatten", "Expand"};
  if (!n.isDefaultDomain())
    return false;
  for (const char *op : kOps)
    if (n.opType() == op)
      return true;
  return false;
}

/// The integers a constant value holds (an initializer that is no graph
/// input, or a Constant node's value), at most 16 of them.
std::optional<std::vector<int64_t>> smallIntConstant(const Value *v) {
  TensorPtr t;
  if (v->initializer() && !v->isGraphInput())
    t = v->initializer();
  else if (const Node *c = v->definingNode(); c && c->is("Constant") && c->attr("value") && c->attr("value")->t)
    t = c->attr("value")->t;
  if (!t || !t->isConsistent() || t->numElements() > 16 || !isInteger(t->dtype()))
    return std::nullopt;
  std::vector<int64_t> out;
  for (int64_t i = 0; i < t->numElements(); ++i) {
    switch (t->dtype()) {
    case DataType::Int64: out.push_back(t->at<int64_t>(static_cast<size_t>(i))); break;
    case DataType::Int32: out.push_back(t->at<int32_t>(static_cast<size_t>(i))); break;
    default: return std::nullopt;
    }
  }
  return out;
}

/// The size of dim `axis` of `v` when it is a known number.
std::optional<int64_t> knownDim(const Value *v, int64_t axis) {
  if (!v)
    return std::nullopt;
  std::optional<std::vector<int64_t>> dims;
  if (v->initializer())
    dims = v->initializer()->dims();
  else if (v->type() && v->type()->isTensor() && v->type()->shape()) {
    std::vector<int64_t> d;
    for (const Dim &x : *v->type()->shape()) {
      if (!x.isValue())
        return std::nullopt;
      d.push_back(x.getValue());
    }
    dims = d;
  }
  if (!dims)
    return std::nullopt;
  int64_t rank = static_cast<int64_t>(dims->size());
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return std::nullopt;
  return (*dims)[static_cast<size_t>(axis)];
}

/// Records what the users of `v` (an input, or a value it flows into
/// unchanged) say about the input `name`.
void readUses(const Value *v, const std::string &name, InputHints &hints, int depth) {
  if (depth > 8)
    return;
  for (const Use *u = v->uses().first; u; u = u->next()) {
    const Node *n = u->owner();
    if (u->isGraphOutput() || !n || !n->isDefaultDomain())
      continue;
    size_t at = u->index();
    const std::string &op = n->opType();
    if ((op == "Equal" || op == "Less" || op == "LessOrEqual" || op == "Greater" || op == "GreaterOrEqual") &&
        n->numOperands() == 2 && n->operand(1 - at)) {
      if (std::optional<std::vector<int64_t>> c = smallIntConstant(n->operand(1 - at))) {
        std::vector<int64_t> &list = hints.compared[name];
        for (int64_t x : *c)
          if (std::find(list.begin(), list.end(), x) == list.end())
            list.push_back(x);
      }
    } else if ((op == "Gather" || op == "GatherElements") && at == 1 && n->operand(0)) {
      if (std::optional<int64_t> size = knownDim(n->operand(0), n->attrInt("axis", 0)); size && *size > 0) {
        auto it = hints.indexLimit.find(name);
        hints.indexLimit[name] = it == hints.indexLimit.end() ? *size : std::min(it->second, *size);
      }
    } else if (op == "Where" && at == 0) {
      hints.masks.insert(name); // a condition: ones keep every value visible
    } else if (passesValuesThrough(*n) && at == 0) {
      for (const Value *r : n->results())
        if (r)
          readUses(r, name, hints, depth + 1);
    }
  }
}

std::string lower(std::string s) {
  for (char &c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

/// A free dim: a symbol, or an unnamed dim "INPUT[AXIS]".
struct FreeDim {
  std::string key;
  bool leading = false;
};

const Shape *declaredShape(const Value *in) {
  if (in->isInitializer() || !in->type() || !in->type()->isTensor() || !in->type()->shape())
    return nullptr;
  return &*in->type()->shape();
}

std::string unnamedKey(const Value &in, size_t axis) { return in.name() + "[" + std::to_string(axis) + "]"; }

const InputSpec *specOf(const std::vector<InputSpec> &specs, const std::string &name) {
  for (const InputSpec &s : specs)
    if (s.name == name)
      return &s;
  return nullptr;
}

class Search {
public:
  Search(const Graph &graph, const InputSearchOptions &options, const TryInputs &run)
      : graph_(graph), options_(options), run_(run) {
    std::set<std::string> seen, leading;
    for (const Value *in : graph.inputs())
      if (const Shape *s = declaredShape(in); s && !s->empty() && (*s)[0].isSymbol())
        leading.insert((*s)[0].getSymbol());
    for (const Value *in : graph.inputs()) {
      const Shape *s = declaredShape(in);
      const InputSpec *spec = specOf(options.base.specs, in->name());
      if (!s || options.base.provided.count(in->name()) || (spec && spec->shape))
        continue;
      for (size_t i = 0; i < s->size(); ++i) {
        const Dim &d = (*s)[i];
        if (d.isValue())
          continue;
        std::string key = d.isSymbol() ? d.getSymbol() : unnamedKey(*in, i);
        if (!seen.insert(key).second)
          continue;
        if (options.base.dims.count(key))
          sized_.push_back(key);
        else
          free_.push_back({key, i == 0 || (d.isSymbol() && leading.count(key))});
      }
    }
  }

  /// Given a sample's specs, Result: whether some sizes ran, with them in `found`.
  bool find(const InputOptions &sample, InputOptions &found, std::string &description, std::string &error) {
    tries_ = 0;
    if (free_.empty()) {
      description = describe({});
      std::string given = givenShapes(sample);
      description += (description.empty() || given.empty() ? "" : ", ") + given;
      return attempt(sample, {}, found, error, nullptr);
    }
    std::map<std::string, int64_t> best;
    uint64_t bestProgress = 0;
    double bestTotal = 0;
    // The sizes that got furthest, the smaller ones among those that got as
    // far; the error reported is theirs.
    auto total = [](const std::map<std::string, int64_t> &a) {
      double t = 0;
      for (const auto &[key, v] : a)
        t += static_cast<double>(v);
      return t;
    };
    auto consider = [&](const std::map<std::string, int64_t> &a) {
      uint64_t progress = 0;
      std::string why;
      if (attempt(sample, a, found, why, &progress)) {
        description = describe(a);
        return true;
      }
      if (best.empty() || progress > bestProgress || (progress == bestProgress && total(a) < bestTotal))
        best = a, bestProgress = progress, bestTotal = total(a), error = why;
      return false;
    };
    for (int64_t size : options_.preferredSizes) {
      std::map<std::string, int64_t> a;
      for (const FreeDim &d : free_)
        a[d.key] = d.leading ? sample.defaultDim : size;
      if (consider(a))
        return true;
    }
    std::map<std::string, int64_t> ones;
    for (const FreeDim &d : free_)
      ones[d.key] = sample.defaultDim;
    if (consider(ones))
      return true;
    // One dim changed at a time, the smallest sizes first, each try from the
    // sizes that got furthest so far, until one runs.
    for (int pass = 0; pass < 3 && tries_ < options_.maxTries; ++pass) {
      std::map<std::string, int64_t> before = best;
      for (int64_t v = 1; v <= 4096 && tries_ < options_.maxTries; v *= 2)
        for (const FreeDim &d : free_) {
          if (best[d.key] == v)
            continue;
          std::map<std::string, int64_t> a = best;
          a[d.key] = v;
          if (consider(a))
            return true;
        }
      if (best == before)
        break;
    }
    return false;
  }

private:
  /// Given a sample and sizes of the free dims, Execute: runs the model on
  /// inputs made with them, Result: whether it ran (its options in `found`).
  bool attempt(const InputOptions &sample, const std::map<std::string, int64_t> &sizes, InputOptions &found,
               std::string &error, uint64_t *progress) {
    ++tries_;
    if (options_.cancel && options_.cancel->load(std::memory_order_relaxed)) {
      tries_ = options_.maxTries; // no further try
      error = "the run was cancelled";
      return false;
    }
    InputOptions io = sample;
    for (const Value *in : graph_.inputs()) {
      const Shape *s = declaredShape(in);
      if (!s || options_.base.provided.count(in->name()))
        continue;
      InputSpec *spec = nullptr;
      for (InputSpec &x : io.specs)
        if (x.name == in->name())
          spec = &x;
      if (spec && spec->shape)
        continue;
      std::vector<int64_t> dims;
      bool unnamed = false;
      for (size_t i = 0; i < s->size(); ++i) {
        const Dim &d = (*s)[i];
        if (d.isValue()) {
          dims.push_back(d.getValue());
          continue;
        }
        std::string key = d.isSymbol() ? d.getSymbol() : unnamedKey(*in, i);
        unnamed |= !d.isSymbol();
        auto user = options_.base.dims.find(key);
        auto chosen = sizes.find(key);
        int64_t v = user != options_.base.dims.end() ? user->second
                    : chosen != sizes.end()          ? chosen->second
                                                     : sample.defaultDim;
        if (d.isSymbol())
          io.dims[key] = v;
        dims.push_back(v);
      }
      if (unnamed) {
        if (!spec) {
          io.specs.push_back(InputSpec{in->name(), std::nullopt, std::nullopt, std::nullopt, std::nullopt});
          spec = &io.specs.back();
        }
        spec->shape = dims;
      }
    }
    uint64_t p = 0;
    if (run_(io, error, p)) {
      found = io;
      return true;
    }
    if (progress)
      *progress = p;
    return false;
  }

  /// The shapes the caller's specs give the inputs whose declared shape
  /// is not fixed, and the values they give scalars ("input=[1,512],
  /// sr=16000"), for reports.
  std::string givenShapes(const InputOptions &sample) const {
    std::string out;
    for (const Value *in : graph_.inputs()) {
      const Shape *s = declaredShape(in);
      const InputSpec *spec = specOf(sample.specs, in->name());
      if (s && spec && s->empty() && spec->value) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%g", *spec->value);
        out += (out.empty() ? "" : ", ") + in->name() + "=" + buf;
        continue;
      }
      if (!s || !spec || !spec->shape || std::all_of(s->begin(), s->end(), [](const Dim &d) { return d.isValue(); }))
        continue;
      std::string dims;
      for (int64_t d : *spec->shape)
        dims += (dims.empty() ? "" : ",") + std::to_string(d);
      out += (out.empty() ? "" : ", ") + in->name() + "=[" + dims + "]";
    }
    return out;
  }

  /// The sizes of the dims the caller sized and of the free dims.
  std::string describe(const std::map<std::string, int64_t> &sizes) const {
    std::string out;
    for (const std::string &key : sized_)
      out += (out.empty() ? "" : ", ") + key + "=" + std::to_string(options_.base.dims.at(key));
    for (const FreeDim &d : free_)
      if (auto it = sizes.find(d.key); it != sizes.end())
        out += (out.empty() ? "" : ", ") + d.key + "=" + std::to_string(it->second);
    return out;
  }

  const Graph &graph_;
  const InputSearchOptions &options_;
  const TryInputs &run_;
  std::vector<FreeDim> free_;
  std::vector<std::string> sized_; ///< Dims the caller sized.
  int tries_ = 0;
};

} // namespace

InputHints readInputHints(const Graph &graph) {
  InputHints hints;
  for (const Value *in : graph.inputs()) {
    if (in->isInitializer())
      continue;
    if (lower(in->name()).find("mask") != std::string::npos)
      hints.masks.insert(in->name());
    std::optional<DataType> dt =
        in->type() && in->type()->isTensor() && in->type()->hasElemType ? std::optional(in->type()->elemType())
                                                                          : std::nullopt;
    if (dt && (isInteger(*dt) || *dt == DataType::Bool))
      readUses(in, in->name(), hints, 0);
  }
  return hints;
}

std::vector<InputSample> searchInputs(const Graph &graph, const InputSearchOptions &options, const TryInputs &run,
                                      std::string &error) {
  InputHints hints = readInputHints(graph);
  auto decided = [&](const std::string &name) {
    return specOf(options.base.specs, name) || options.base.provided.count(name);
  };
  // The combinations of compared values, one sample each (capped).
  // Each compared constant picks one side of its comparisons; one less than
  // the smallest picks the other side of every Equal, Less and Greater.
  std::vector<std::pair<std::string, std::vector<int64_t>>> decisions;
  // An input that also indexes a table keeps to its rows (token ids
  // compared with an end-of-text id the random table does not have).
  for (const auto &[name, values] : hints.compared) {
    if (decided(name) || values.empty())
      continue;
    std::vector<int64_t> v = values;
    int64_t low = *std::min_element(v.begin(), v.end());
    if (low > std::numeric_limits<int64_t>::min())
      v.push_back(low - 1);
    if (auto limit = hints.indexLimit.find(name); limit != hints.indexLimit.end())
      v.erase(std::remove_if(v.begin(), v.end(), [&](int64_t x) { return x < 0 || x >= limit->second; }), v.end());
    if (!v.empty())
      decisions.emplace_back(name, v);
  }
  auto isDecision = [&](const std::string &name) {
    for (const auto &d : decisions)
      if (d.first == name)
        return true;
    return false;
  };
  std::vector<std::vector<std::pair<std::string, int64_t>>> combos{{}};
  for (const auto &[name, values] : decisions) {
    std::vector<std::vector<std::pair<std::string, int64_t>>> next;
    for (int64_t v : values)
      for (const auto &c : combos) {
        if (next.size() >= kMaxDecisionSamples)
          break;
        auto d = c;
        d.emplace_back(name, v);
        next.push_back(std::move(d));
      }
    combos = std::move(next);
  }
  size_t count = std::max<size_t>(combos.size(), static_cast<size_t>(std::max(options.samples, 1)));
  Search search(graph, options, run);
  std::vector<InputSample> samples;
  std::string firstError;
  for (size_t s = 0; s < count; ++s) {
    InputOptions sample = options.base;
    sample.seed = options.base.seed + s;
    std::string values;
    for (const auto &[name, v] : combos[s % combos.size()]) {
      sample.specs.push_back(InputSpec{name, std::nullopt, std::nullopt, std::nullopt, static_cast<double>(v)});
      values += (values.empty() ? "" : ", ") + name + "=" + std::to_string(v);
    }
    for (const auto &[name, limit] : hints.indexLimit)
      if (!decided(name) && !isDecision(name) && !hints.masks.count(name)) {
        sample.specs.push_back(InputSpec{name, std::nullopt, std::nullopt,
                                         std::pair<double, double>(0.0, static_cast<double>(limit - 1)), std::nullopt});
        values += (values.empty() ? "" : ", ") + name + " in [0, " + std::to_string(limit - 1) + "]";
      }
    for (const std::string &name : hints.masks)
      if (!decided(name) && !isDecision(name)) {
        sample.specs.push_back(InputSpec{name, std::nullopt, std::nullopt, std::nullopt, 1.0});
        values += (values.empty() ? "" : ", ") + name + "=1";
      }
    InputOptions found;
    std::string dims, why;
    if (search.find(sample, found, dims, why)) {
      std::string description = values;
      if (!dims.empty())
        description += (description.empty() ? "" : "; ") + dims;
      samples.push_back(InputSample{std::move(found), std::move(description)});
    } else if (firstError.empty()) {
      firstError = why;
    }
  }
  if (samples.empty())
    error = firstError;
  return samples;
}

} // namespace onnxslim::rt
