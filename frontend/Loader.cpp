//===- frontend/Loader.cpp - Read ONNX protobuf files into the IR ---------===//
//
// Zero-copy loading. The file is mapped, then its wire format is scanned:
//  - ModelProto.graph (field 7) is scanned as a GraphProto;
//  - in a GraphProto, each initializer (field 5) is scanned as a TensorProto
//    whose raw_data (field 9) becomes a Buffer viewing the mapping (every
//    other tensor field is parsed by protobuf), and each node holding a
//    tensor or a subgraph in an attribute (Constant, If, Loop...) is scanned
//    down to those tensors and graphs, recursively;
//  - every other record is handed to protobuf, range by range (protobuf
//    merges repeated fields in order, so this equals parsing the whole; a
//    range is flushed before a scanned node so that node order is kept).
// So no tensor payload of the main graph or its subgraphs is ever copied.
// training_info and configuration entries are kept as their serialized bytes.
// The resulting messages are lowered by frontend/ProtoImporter.
//
//===----------------------------------------------------------------------===//
#include "frontend/Loader.h"

#include "frontend/NestingLimit.h"
#include "frontend/ProtoImporter.h"
#include "frontend/WireFormat.h"
#include "schema/onnx.pb.h"

#include <google/protobuf/arena.h>
#include <google/protobuf/io/coded_stream.h>

#include <climits>

namespace onnxslim {

using frontend::kMaxSubgraphDepth;
using frontend::nestingLevel;
using frontend::nestingTooDeep;

namespace {

/// The bytes being read and what keeps them alive.
struct Source {
  const uint8_t *data = nullptr;
  size_t size = 0;
  std::shared_ptr<const void> owner;
  bool mapped = false;
  const MappedFile *file = nullptr; ///< the mapping, when it is a MappedFile

  /// A Buffer viewing [p, p+n) inside the source.
  Buffer view(const uint8_t *p, size_t n) const {
    Buffer b(p, n, owner);
    if (mapped)
      b.markMapped(file);
    return b;
  }
};

/// Byte ranges of field records, coalesced when adjacent.
struct Ranges {
  std::vector<std::pair<const uint8_t *, const uint8_t *>> list;
  void add(const uint8_t *b, const uint8_t *e) {
    if (!list.empty() && list.back().second == b)
      list.back().second = e;
    else
      list.emplace_back(b, e);
  }
};

/// Given field records, Execute: lets protobuf merge them into `msg` in order.
bool mergeRanges(google::protobuf::MessageLite &msg, const Ranges &ranges, const uint8_t *base,
                 std::string &error) {
  for (const auto &[b, e] : ranges.list) {
    auto n = static_cast<size_t>(e - b);
    if (n > static_cast<size_t>(INT_MAX)) {
      error = "a " + msg.GetTypeName() + " section larger than 2 GB (at byte " +
              std::to_string(b - base) + ") cannot be parsed";
      return false;
    }
    google::protobuf::io::CodedInputStream in(b, static_cast<int>(n));
    in.SetRecursionLimit(frontend::kProtobufRecursionLimit);
    if (!msg.MergePartialFromCodedStream(&in)) {
      error = "malformed " + msg.GetTypeName() + " data between bytes " +
              std::to_string(b - base) + " and " + std::to_string(e - base) +
              " (or messages nested more than " + std::to_string(frontend::kProtobufRecursionLimit) +
              " deep)";
      return false;
    }
  }
  return true;
}

/// Walks the wire format of the messages that can hold tensor payloads
/// (GraphProto, NodeProto, AttributeProto, TensorProto) and builds their
/// protobuf messages with every raw_data left out and recorded as a view in
/// `views`. Records that hold no tensor are parsed by protobuf, coalesced.
class DeepScanner {
public:
  DeepScanner(const Source &src, frontend::RawViews &views) : src_(src), views_(views) {}

  bool tensor(const uint8_t *b, const uint8_t *e, onnx::TensorProto &out) {
    wire::Reader rd(src_.data, b, e);
    wire::Field f;
    Ranges rest;
    while (rd.next(f)) {
      if (f.number == 9 && f.type == wire::WireType::Len)
        views_.insert_or_assign(&out, src_.view(f.payload, f.payloadSize()));
      else
        rest.add(f.begin, f.end);
    }
    if (rd.failed())
      return fail(rd.error());
    return merge(out, rest);
  }

  bool graph(const uint8_t *b, const uint8_t *e, onnx::GraphProto &out) {
    wire::Reader rd(src_.data, b, e);
    wire::Field f;
    Ranges pending;
    size_t nodeIndex = 0, initIndex = 0;
    while (rd.next(f)) {
      bool len = f.type == wire::WireType::Len;
      if (f.number == 1 && len && heavyNode(f.payload, f.end)) {
        // Keep node order: everything pending goes in before this node.
        if (!merge(out, pending))
          return false;
        pending.list.clear();
        if (!node(f.payload, f.end, nodeIndex, *out.add_node()))
          return context("node #" + std::to_string(nodeIndex));
      } else if (f.number == 5 && len) {
        if (!tensor(f.payload, f.end, *out.add_initializer()))
          return context("initializer #" + std::to_string(initIndex));
        ++initIndex;
      } else {
        pending.add(f.begin, f.end);
      }
      nodeIndex += f.number == 1;
    }
    if (rd.failed())
      return fail(rd.error());
    return merge(out, pending);
  }

  const std::string &error() const { return error_; }
  /// Whether the error is subgraphs nested too deep.
  bool tooDeep() const { return tooDeep_; }

private:
  bool node(const uint8_t *b, const uint8_t *e, size_t index, onnx::NodeProto &out) {
    wire::Reader rd(src_.data, b, e);
    wire::Field f;
    Ranges pending;
    size_t attrIndex = 0;
    // The name and op type (fields 3, 4) precede the attributes (5) as
    // protobuf writes them; they only label a nesting path.
    std::string name, opType;
    while (rd.next(f)) {
      bool len = f.type == wire::WireType::Len;
      if (len && f.number == 3)
        name = text(f);
      else if (len && f.number == 4)
        opType = text(f);
      if (f.number == 5 && len && heavyAttribute(f.payload, f.end)) {
        if (!merge(out, pending))
          return false;
        pending.list.clear();
        std::string label = name.empty() ? "node #" + std::to_string(index) : name;
        if (!attribute(f.payload, f.end, label, opType, *out.add_attribute()))
          return context("attribute #" + std::to_string(attrIndex));
      } else {
        pending.add(f.begin, f.end);
      }
      attrIndex += f.number == 5;
    }
    if (rd.failed())
      return fail(rd.error());
    return merge(out, pending);
  }

  bool attribute(const uint8_t *b, const uint8_t *e, const std::string &nodeLabel,
                 const std::string &opType, onnx::AttributeProto &out) {
    wire::Reader rd(src_.data, b, e);
    wire::Field f;
    Ranges rest;
    std::string name; // field 1 precedes the tensors and graphs
    // Given a graph record, Execute: scans it one nesting level down.
    auto subgraph = [&](onnx::GraphProto &g) {
      path_.push_back(nestingLevel(nodeLabel, opType, name));
      if (path_.size() > kMaxSubgraphDepth) {
        error_ = nestingTooDeep(path_);
        tooDeep_ = true;
        return false;
      }
      bool ok = graph(f.payload, f.end, g);
      path_.pop_back();
      return ok;
    };
    while (rd.next(f)) {
      bool len = f.type == wire::WireType::Len;
      if (len && f.number == 1)
        name = text(f);
      // A singular message field seen twice would merge in protobuf; here the
      // last one wins (no writer emits it twice).
      if (f.number == 5 && len) {
        out.clear_t();
        if (!tensor(f.payload, f.end, *out.mutable_t()))
          return context("tensor");
      } else if (f.number == 6 && len) {
        out.clear_g();
        if (!subgraph(*out.mutable_g()))
          return context("graph");
      } else if (f.number == 10 && len) {
        if (!tensor(f.payload, f.end, *out.add_tensors()))
          return context("tensor #" + std::to_string(out.tensors_size() - 1));
      } else if (f.number == 11 && len) {
        if (!subgraph(*out.add_graphs()))
          return context("graph #" + std::to_string(out.graphs_size() - 1));
      } else {
        rest.add(f.begin, f.end);
      }
    }
    if (rd.failed())
      return fail(rd.error());
    return merge(out, rest);
  }

  /// Whether an AttributeProto record holds a tensor or a graph (malformed
  /// input counts as heavy so that the scan reports the error).
  bool heavyAttribute(const uint8_t *b, const uint8_t *e) const {
    wire::Reader rd(src_.data, b, e);
    wire::Field f;
    while (rd.next(f))
      if (f.type == wire::WireType::Len &&
          (f.number == 5 || f.number == 6 || f.number == 10 || f.number == 11))
        return true;
    return rd.failed();
  }

  bool heavyNode(const uint8_t *b, const uint8_t *e) const {
    wire::Reader rd(src_.data, b, e);
    wire::Field f;
    while (rd.next(f))
      if (f.number == 5 && f.type == wire::WireType::Len && heavyAttribute(f.payload, f.end))
        return true;
    return rd.failed();
  }

  bool merge(google::protobuf::MessageLite &msg, const Ranges &ranges) {
    std::string err;
    return mergeRanges(msg, ranges, src_.data, err) || fail(err);
  }

  bool fail(const std::string &msg) {
    error_ = "malformed protobuf: " + msg;
    return false;
  }

  /// Prefixes the error with where it happened (innermost last); a nesting
  /// error carries its own path.
  bool context(const std::string &where) {
    if (!tooDeep_)
      error_ = where + ": " + error_;
    return false;
  }

  static std::string text(const wire::Field &f) {
    return std::string(reinterpret_cast<const char *>(f.payload), f.payloadSize());
  }

  const Source &src_;
  frontend::RawViews &views_;
  std::string error_;
  /// Subgraph levels entered, outermost first (see frontend/NestingLimit.h).
  std::vector<std::string> path_;
  bool tooDeep_ = false;
};

/// The model's wire records, sorted by what the loader does with them.
struct ScannedModel {
  Ranges modelRest;
  bool hasGraph = false;
  onnx::GraphProto *graph = nullptr; ///< On the loader's arena.
  std::vector<std::string> trainingInfo;
  std::vector<std::string> configuration;
};

bool scanModel(const Source &src, frontend::RawViews &views, ScannedModel &out,
               std::string &error) {
  wire::Reader rd(src.data, src.data, src.data + src.size);
  wire::Field f;
  DeepScanner scanner(src, views);
  while (rd.next(f)) {
    bool len = f.type == wire::WireType::Len;
    if (f.number == 7 && len) {
      // Several graph records merge, as in protobuf: scan them in order.
      out.hasGraph = true;
      if (!scanner.graph(f.payload, f.end, *out.graph)) {
        error = scanner.tooDeep() ? scanner.error() : "graph: " + scanner.error();
        return false;
      }
    } else if (f.number == 20 && len) {
      onnx::TrainingInfoProto probe;
      if (!probe.ParsePartialFromArray(f.payload, static_cast<int>(std::min<size_t>(f.payloadSize(), INT_MAX)))) {
        error = "malformed training_info entry at byte " + std::to_string(rd.offsetOf(f.begin));
        return false;
      }
      out.trainingInfo.emplace_back(reinterpret_cast<const char *>(f.payload), f.payloadSize());
    } else if (f.number == 26 && len) {
      onnx::DeviceConfigurationProto probe;
      if (!probe.ParsePartialFromArray(f.payload, static_cast<int>(std::min<size_t>(f.payloadSize(), INT_MAX)))) {
        error = "malformed configuration entry at byte " + std::to_string(rd.offsetOf(f.begin));
        return false;
      }
      out.configuration.emplace_back(reinterpret_cast<const char *>(f.payload), f.payloadSize());
    } else {
      out.modelRest.add(f.begin, f.end);
    }
  }
  if (rd.failed()) {
    error = "malformed protobuf: " + rd.error();
    return false;
  }
  return true;
}

std::string dirName(const std::string &path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::unique_ptr<Model> loadFromSource(const Source &src, const std::string &displayName,
                                      const std::string &baseDir, std::string &error,
                                      const LoadOptions &opts) {
  auto failWith = [&](const std::string &msg) -> std::unique_ptr<Model> {
    error = displayName + ": " + msg;
    return nullptr;
  };
  if (src.size == 0)
    return failWith("the file is empty (not an ONNX model)");

  frontend::ImportContext ctx;
  ctx.displayName = displayName;
  ctx.baseDir = baseDir;
  ctx.options = opts;
  // The parsed messages are scaffolding for the import: keep them on an
  // arena, so that building and dropping them costs a few large blocks.
  google::protobuf::ArenaOptions arenaOptions;
  arenaOptions.start_block_size = 64 << 10;
  arenaOptions.max_block_size = 4 << 20;
  google::protobuf::Arena arena(arenaOptions);
  ScannedModel scan;
  scan.graph = google::protobuf::Arena::CreateMessage<onnx::GraphProto>(&arena);
  std::string err;
  if (!scanModel(src, ctx.rawViews, scan, err))
    return failWith(err);
  auto *mp = google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&arena);
  if (!mergeRanges(*mp, scan.modelRest, src.data, err))
    return failWith(err);
  if (!scan.hasGraph && mp->functions_size() == 0)
    return failWith("not an ONNX model (no graph and no functions found)");

  frontend::ProtoImporter importer(ctx);
  auto model = importer.importModel(*mp, scan.hasGraph ? scan.graph : nullptr,
                                    std::move(scan.trainingInfo), std::move(scan.configuration));
  if (!model)
    error = importer.error();
  return model;
}

} // namespace

std::unique_ptr<Model> loadModelFromBytes(const uint8_t *data, size_t size,
                                          std::shared_ptr<const void> keepAlive,
                                          const std::string &displayName,
                                          const std::string &baseDir, std::string &error,
                                          const LoadOptions &opts) {
  Source src{data, size, std::move(keepAlive), false};
  return loadFromSource(src, displayName, baseDir, error, opts);
}

std::unique_ptr<Model> loadModelFromBytes(std::shared_ptr<MappedFile> file,
                                          const std::string &displayName,
                                          const std::string &baseDir, std::string &error,
                                          const LoadOptions &opts) {
  Source src{file->data(), file->size(), file, true, file.get()};
  return loadFromSource(src, displayName, baseDir, error, opts);
}

std::unique_ptr<Model> loadModelFromString(std::string bytes, const std::string &displayName,
                                           const std::string &baseDir, std::string &error,
                                           const LoadOptions &opts) {
  auto owned = std::make_shared<const std::string>(std::move(bytes));
  const auto *p = reinterpret_cast<const uint8_t *>(owned->data());
  size_t n = owned->size();
  return loadModelFromBytes(p, n, std::move(owned), displayName, baseDir, error, opts);
}

std::unique_ptr<Model> loadModel(const std::string &path, std::string &error,
                                 const LoadOptions &opts) {
  std::string err;
  auto file = MappedFile::open(path, err);
  if (!file) {
    error = path + ": " + err;
    return nullptr;
  }
  return loadModelFromBytes(file, path, dirName(path), error, opts);
}

namespace {

TensorPtr loadTensorFromSource(const Source &src, const std::string &displayName,
                               const std::string &baseDir, std::string &error) {
  if (src.size == 0) {
    error = displayName + ": the file is empty (not a serialized TensorProto)";
    return nullptr;
  }
  frontend::ImportContext ctx;
  ctx.displayName = displayName;
  ctx.baseDir = baseDir;
  onnx::TensorProto proto;
  DeepScanner scanner(src, ctx.rawViews);
  if (!scanner.tensor(src.data, src.data + src.size, proto)) {
    error = displayName + ": " + scanner.error();
    return nullptr;
  }
  frontend::ProtoImporter importer(ctx);
  auto where = [&] { return proto.name().empty() ? std::string("tensor") : "tensor '" + proto.name() + "'"; };
  TensorPtr t = importer.importTensor(proto, std::nullopt, where);
  if (!t)
    error = importer.error();
  return t;
}

} // namespace

TensorPtr loadTensorFile(const std::string &path, std::string &error) {
  std::string err;
  auto file = MappedFile::open(path, err);
  if (!file) {
    error = path + ": " + err;
    return nullptr;
  }
  Source src{file->data(), file->size(), file, true, file.get()};
  return loadTensorFromSource(src, path, dirName(path), error);
}

TensorPtr loadTensorFromBytes(const uint8_t *data, size_t size, std::shared_ptr<const void> keepAlive,
                              const std::string &displayName, const std::string &baseDir,
                              std::string &error) {
  Source src{data, size, std::move(keepAlive), false};
  return loadTensorFromSource(src, displayName, baseDir, error);
}

} // namespace onnxslim
