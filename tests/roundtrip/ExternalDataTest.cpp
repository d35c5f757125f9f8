//===- tests/roundtrip/ExternalDataTest.cpp - External tensor data --------===//
//
// Writing tensors to an external-data file, reading them back as views into
// its mapping, keeping them external on a plain save, and the checks on
// locations (relative, inside the model's directory, within the file);
// unchanged external tensors copied file to file (copy_file_range or the
// read/write fallback, byte-identical either way).
//
//===----------------------------------------------------------------------===//
#include "tests/roundtrip/ProtoBuilders.h"
#include "tests/roundtrip/RoundTripUtil.h"

#include "backend/AtomicFile.h"
#include "backend/Writer.h"
#include "frontend/Loader.h"
#include "ir/Verifier.h"

#include <filesystem>

#include <fcntl.h>
#include <unistd.h>

using namespace onnxslim;
using namespace onnxslim::testing;

namespace {

/// y = Add(Add(x, big), small): `big` has 2048 floats (8 KiB), `small` 4.
onnx::ModelProto twoWeights() {
  onnx::ModelProto m = baseModel();
  auto &g = *m.mutable_graph();
  addInput(g, "x", 1, {2048});
  std::vector<float> big(2048);
  for (size_t i = 0; i < big.size(); ++i)
    big[i] = static_cast<float>(i);
  addRawInitializer(g, "big", big);
  addRawInitializer(g, "small", {1, 2, 3, 4});
  addNode(g, "Add", {"x", "big"}, {"t"}, "a0");
  addNode(g, "Add", {"t", "small"}, {"y"}, "a1");
  addOutput(g, "y", 1, {2048});
  return m;
}

std::unique_ptr<Model> loadProto(const onnx::ModelProto &m, std::string &error) {
  return loadModelFromString(m.SerializeAsString(), "mem.onnx", ".", error);
}

onnx::ModelProto parse(const std::string &path) {
  onnx::ModelProto m;
  EXPECT_TRUE(m.ParseFromString(readFile(path))) << path;
  return m;
}

const Tensor &weight(const Model &m, const std::string &name) {
  for (const Value *v : m.graph()->initializers())
    if (v->name() == name)
      return *v->initializer();
  throw std::runtime_error("no initializer " + name);
}

/// A model whose initializer `w` (4 floats) lives in external data described by `entries`.
std::string externalModel(const std::vector<std::pair<std::string, std::string>> &entries) {
  onnx::ModelProto m = addModel(4);
  auto *w = m.mutable_graph()->mutable_initializer(0);
  w->clear_raw_data();
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  for (const auto &[k, v] : entries) {
    auto *e = w->add_external_data();
    e->set_key(k);
    e->set_value(v);
  }
  return m.SerializeAsString();
}

} // namespace

TEST(ExternalData, SaveAndReload) {
  TempDir a, b;
  std::string error;
  auto model = loadProto(twoWeights(), error);
  ASSERT_TRUE(model) << error;
  SaveOptions opts;
  opts.externalData = true;
  ASSERT_TRUE(saveModel(*model, a.file("m.onnx"), error, opts)) << error;
  EXPECT_EQ(a.list(), (std::vector<std::string>{"m.onnx", "m.onnx.data"}));

  onnx::ModelProto written = parse(a.file("m.onnx"));
  const auto &big = written.graph().initializer(0);
  EXPECT_EQ(big.data_location(), onnx::TensorProto::EXTERNAL);
  ASSERT_EQ(big.external_data_size(), 3);
  EXPECT_EQ(big.external_data(0).value(), "m.onnx.data");
  EXPECT_FALSE(big.has_raw_data());
  EXPECT_TRUE(written.graph().initializer(1).has_raw_data()); // below the threshold

  auto reloaded = loadModel(a.file("m.onnx"), error);
  ASSERT_TRUE(reloaded) << error;
  EXPECT_TRUE(verify(*reloaded).empty());
  const Tensor &t = weight(*reloaded, "big");
  EXPECT_EQ(t.encoding, TensorEncoding::External);
  EXPECT_TRUE(t.buffer().isMapped());
  EXPECT_TRUE(t.sameContent(weight(*model, "big")));

  // Saved again (same file name, another directory): the same model and data.
  ASSERT_TRUE(saveModel(*reloaded, b.file("m.onnx"), error, opts)) << error;
  EXPECT_TRUE(compareModels(readFile(a.file("m.onnx")), readFile(b.file("m.onnx"))).empty());
  EXPECT_EQ(readFile(a.file("m.onnx.data")), readFile(b.file("m.onnx.data")));

  // In memory, external tensors are written inline.
  onnx::ModelProto inlined;
  ASSERT_TRUE(inlined.ParseFromString(serializeModel(*reloaded)));
  EXPECT_TRUE(compareModels(twoWeights().SerializeAsString(), inlined.SerializeAsString()).empty());
}

TEST(ExternalData, PlainSaveKeepsTensorsExternal) {
  TempDir a, b;
  std::string error;
  auto model = loadProto(twoWeights(), error);
  ASSERT_TRUE(model) << error;
  SaveOptions opts;
  opts.externalData = true;
  opts.externalDataFile = "weights.bin";
  ASSERT_TRUE(saveModel(*model, a.file("m.onnx"), error, opts)) << error;
  auto reloaded = loadModel(a.file("m.onnx"), error);
  ASSERT_TRUE(reloaded) << error;
  ASSERT_TRUE(saveModel(*reloaded, b.file("out.onnx"), error)) << error;
  EXPECT_EQ(b.list(), (std::vector<std::string>{"out.onnx", "out.onnx.data"}));
  onnx::ModelProto written = parse(b.file("out.onnx"));
  EXPECT_EQ(written.graph().initializer(0).external_data(0).value(), "out.onnx.data");
  auto again = loadModel(b.file("out.onnx"), error);
  ASSERT_TRUE(again) << error;
  EXPECT_TRUE(weight(*again, "big").sameContent(weight(*model, "big")));
}

TEST(ExternalData, OverwritingTheModelAndItsDataInPlace) {
  TempDir a;
  std::string error;
  auto model = loadProto(twoWeights(), error);
  ASSERT_TRUE(model) << error;
  SaveOptions opts;
  opts.externalData = true;
  ASSERT_TRUE(saveModel(*model, a.file("m.onnx"), error, opts)) << error;
  auto reloaded = loadModel(a.file("m.onnx"), error);
  ASSERT_TRUE(reloaded) << error;
  // Same paths: the loaded views stay valid while the files are replaced.
  ASSERT_TRUE(saveModel(*reloaded, a.file("m.onnx"), error)) << error;
  EXPECT_TRUE(weight(*reloaded, "big").sameContent(weight(*model, "big")));
  auto third = loadModel(a.file("m.onnx"), error);
  ASSERT_TRUE(third) << error;
  EXPECT_TRUE(weight(*third, "big").sameContent(weight(*model, "big")));
}

TEST(ExternalData, OffsetsAndLengths) {
  TempDir dir;
  std::string data(64, '\0');
  for (int i = 0; i < 16; ++i)
    data[16 + i] = static_cast<char>(i + 1);
  writeFile(dir.file("d.bin"), data);
  writeFile(dir.file("m.onnx"), externalModel({{"location", "d.bin"}, {"offset", "16"}, {"length", "16"}}));
  std::string error;
  auto model = loadModel(dir.file("m.onnx"), error);
  ASSERT_TRUE(model) << error;
  const Tensor &w = weight(*model, "w");
  ASSERT_EQ(w.byteSize(), 16u);
  EXPECT_EQ(w.rawData()[0], 1);
  EXPECT_TRUE(w.buffer().isMapped());

  // Without a length the data runs to the end of the file.
  writeFile(dir.file("m2.onnx"), externalModel({{"location", "d.bin"}, {"offset", "48"}}));
  auto m2 = loadModel(dir.file("m2.onnx"), error);
  ASSERT_TRUE(m2) << error;
  EXPECT_EQ(weight(*m2, "w").byteSize(), 16u);

  // Not loading external data leaves the tensor empty, and saving it fails.
  LoadOptions lazy;
  lazy.loadExternalData = false;
  auto m3 = loadModel(dir.file("m.onnx"), error, lazy);
  ASSERT_TRUE(m3) << error;
  EXPECT_EQ(weight(*m3, "w").byteSize(), 0u);
  EXPECT_FALSE(saveModel(*m3, dir.file("out.onnx"), error));
  EXPECT_NE(error.find("tensor 'w': its external data was not loaded"), std::string::npos) << error;
}

TEST(ExternalData, BadLocationsAreClearErrors) {
  TempDir outer;
  std::string inner = outer.file("model");
  std::filesystem::create_directory(inner);
  writeFile(outer.file("secret.bin"), std::string(64, 'x'));
  writeFile(inner + "/d.bin", std::string(32, '\0'));
  ASSERT_EQ(::symlink((outer.path() + "/secret.bin").c_str(), (inner + "/link.bin").c_str()), 0);

  struct Case {
    std::vector<std::pair<std::string, std::string>> entries;
    std::string expected;
  };
  std::vector<Case> cases = {
      {{{"location", "../secret.bin"}}, "external data location '../secret.bin' leaves the model's directory"},
      {{{"location", "sub/../../secret.bin"}}, "leaves the model's directory"},
      {{{"location", outer.file("secret.bin")}}, "is an absolute path"},
      {{{"location", "link.bin"}}, "resolves (through a symbolic link) outside the model's directory"},
      {{{"location", "missing.bin"}}, "cannot open"},
      {{{"location", "d.bin"}, {"offset", "40"}}, "offset 40 is past the end of the file (32 bytes)"},
      {{{"location", "d.bin"}, {"offset", "16"}, {"length", "32"}},
       "offset 16 + length 32 is past the end of the file (32 bytes)"},
      {{{"location", "d.bin"}, {"offset", "-1"}}, "offset '-1' is not a non-negative integer"},
      {{{"location", ""}}, "external_data has no location"},
  };
  for (const Case &c : cases) {
    std::string path = inner + "/m.onnx";
    writeFile(path, externalModel(c.entries));
    std::string error;
    EXPECT_FALSE(loadModel(path, error)) << c.expected;
    EXPECT_EQ(error.rfind(path + ": graph 'g' / initializer 'w': ", 0), 0u) << error;
    EXPECT_NE(error.find(c.expected), std::string::npos) << error;
  }
}

TEST(ExternalData, BadExternalFileNameOnSave) {
  TempDir dir;
  std::string error;
  auto model = loadProto(twoWeights(), error);
  ASSERT_TRUE(model) << error;
  SaveOptions opts;
  opts.externalData = true;
  opts.externalDataFile = "../escape.bin";
  EXPECT_FALSE(saveModel(*model, dir.file("m.onnx"), error, opts));
  EXPECT_NE(error.find("must be a relative path inside the output's directory"), std::string::npos) << error;
  EXPECT_TRUE(dir.list().empty());
}

TEST(ExternalData, OverTwoGigabytesIsRefusedWithoutExternalData) {
  TempDir dir;
  // A sparse 2.1 GB file: mapping it costs nothing, and nothing here reads it.
  const uint64_t bytes = (uint64_t{2} << 30) + (uint64_t{100} << 20);
  std::string big = dir.file("big.bin");
  writeFile(big, "");
  ASSERT_EQ(::truncate(big.c_str(), static_cast<off_t>(bytes)), 0);
  std::string error;
  auto file = MappedFile::open(big, error);
  ASSERT_TRUE(file) << error;

  Model model;
  model.irVersion = 8;
  model.opsetImport.push_back(OpsetId{"", 17, {}});
  model.setGraph(std::make_unique<Graph>());
  Graph &g = *model.graph();
  g.name = "g";
  auto t = std::make_shared<Tensor>(DataType::Float, std::vector<int64_t>{static_cast<int64_t>(bytes / 4)},
                                    file->view(file, 0, bytes));
  Value *w = g.addInitializer("w", t);
  Node *id = g.createNode("Identity", {w}, {"y"});
  g.append(id);
  g.addOutput(id->result(0));

  EXPECT_TRUE(serializeModel(model, error).empty());
  EXPECT_NE(error.find("over protobuf's 2 GB limit"), std::string::npos) << error;

  SaveOptions opts;
  opts.autoExternalOver2GB = false;
  EXPECT_FALSE(saveModel(model, dir.file("m.onnx"), error, opts));
  EXPECT_NE(error.find("over protobuf's 2 GB limit; save it with external data"), std::string::npos) << error;
  EXPECT_EQ(dir.list(), (std::vector<std::string>{"big.bin"}));
}

//===----------------------------------------------------------------------===//
// Streaming unchanged external data (copy_file_range, read/write fallback)
//===----------------------------------------------------------------------===//

namespace {

/// `n` pseudo-random bytes (xorshift from `seed`).
std::string noise(size_t n, uint64_t seed) {
  std::string out(n, '\0');
  for (char &c : out) {
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    c = static_cast<char>(seed >> 24);
  }
  return out;
}

/// A descriptor closed at the end of the scope.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0)
      ::close(fd);
  }
};

/// y = Add(Add(x, w), s): `w` (32768 floats, 128 KiB) and `s` (1 float) in
/// external data at `wOffset` and `wOffset` + 128 KiB of `location`.
onnx::ModelProto externalWeights(const std::string &location, uint64_t wOffset) {
  onnx::ModelProto m = baseModel();
  auto &g = *m.mutable_graph();
  addInput(g, "x", 1, {32768});
  auto external = [&](const std::string &name, int64_t n, uint64_t offset) {
    auto *t = g.add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(n);
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    std::pair<const char *, std::string> entries[] = {
        {"location", location}, {"offset", std::to_string(offset)}, {"length", std::to_string(n * 4)}};
    for (const auto &[k, v] : entries) {
      auto *e = t->add_external_data();
      e->set_key(k);
      e->set_value(v);
    }
  };
  external("w", 32768, wOffset);
  external("s", 1, wOffset + 131072);
  addNode(g, "Add", {"x", "w"}, {"t"}, "a0");
  addNode(g, "Add", {"t", "s"}, {"y"}, "a1");
  addOutput(g, "y", 1, {32768});
  return m;
}

} // namespace

TEST(ExternalData, CopyRangeKernelAndReadWriteWriteTheSameBytes) {
  TempDir dir;
  std::string src = noise((size_t{3} << 20) + 1234, 7);
  writeFile(dir.file("src.bin"), src);
  Fd in{::open(dir.file("src.bin").c_str(), O_RDONLY | O_CLOEXEC)};
  ASSERT_GE(in.fd, 0);
  const size_t length = (size_t{2} << 20) + 3; // more than one 1 MiB chunk
  std::string expected = "head" + src.substr(4097, length) + src.substr(0, 10);
  for (backend::CopyMethod method : {backend::CopyMethod::Auto, backend::CopyMethod::ReadWrite}) {
    bool kernel = method == backend::CopyMethod::Auto;
    std::string out = dir.file(kernel ? "kernel.bin" : "readwrite.bin");
    Fd fd{::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)};
    ASSERT_GE(fd.fd, 0);
    ASSERT_EQ(::write(fd.fd, "head", 4), 4); // copies append at the current position
    std::string error;
    bool usedKernel = !kernel;
    ASSERT_TRUE(backend::copyRange(in.fd, 4097, length, fd.fd, method, error, &usedKernel)) << error;
    // Same file system, a kernel that has copy_file_range (4.5+): no fallback.
    EXPECT_EQ(usedKernel, kernel);
    ASSERT_TRUE(backend::copyRange(in.fd, 0, 10, fd.fd, method, error)) << error;
    EXPECT_EQ(readFile(out), expected);

    // Past the end of the source: an error, not a short copy.
    EXPECT_FALSE(backend::copyRange(in.fd, src.size() - 10, 20, fd.fd, method, error));
    EXPECT_NE(error.find("unexpected end of file"), std::string::npos) << error;
  }
  // Into /dev/null (not a regular file: copy_file_range refuses it on
  // current kernels): still succeeds, by the fallback where needed.
  Fd null{::open("/dev/null", O_WRONLY | O_CLOEXEC)};
  std::string error;
  EXPECT_TRUE(backend::copyRange(in.fd, 0, src.size(), null.fd, backend::CopyMethod::Auto, error)) << error;
}

TEST(ExternalData, UnchangedExternalDataIsCopiedByteForByteEitherWay) {
  TempDir in, viaKernel, viaReadWrite;
  // The input's data file starts with 4 KiB of other bytes, so the copies
  // must read at the tensors' offsets, and write them at the writer's own.
  std::string junk = noise(4096, 1), w = noise(131072, 2), s = noise(4, 3);
  writeFile(in.file("m.onnx.bin"), junk + w + s);
  writeFile(in.file("m.onnx"), externalWeights("m.onnx.bin", 4096).SerializeAsString());
  std::string error;
  auto model = loadModel(in.file("m.onnx"), error);
  ASSERT_TRUE(model) << error;
  const Tensor &mapped = weight(*model, "w");
  ASSERT_TRUE(mapped.buffer().isMapped());
  ASSERT_NE(mapped.buffer().mappedFile(), nullptr);
  EXPECT_GE(mapped.buffer().mappedFile()->fd(), 0);

  for (bool kernel : {true, false}) {
    const TempDir &out = kernel ? viaKernel : viaReadWrite;
    SaveOptions opts;
    opts.copyFileRange = kernel;
    ASSERT_TRUE(saveModel(*model, out.file("m.onnx"), error, opts)) << error;
    EXPECT_EQ(out.list(), (std::vector<std::string>{"m.onnx", "m.onnx.data"}));
    // w is page-aligned at 0 (>= 64 KiB), s 64-byte aligned right after it.
    EXPECT_EQ(readFile(out.file("m.onnx.data")), w + s);
    auto reloaded = loadModel(out.file("m.onnx"), error);
    ASSERT_TRUE(reloaded) << error;
    EXPECT_TRUE(weight(*reloaded, "w").sameContent(mapped));
    EXPECT_TRUE(weight(*reloaded, "s").sameContent(weight(*model, "s")));
  }
  EXPECT_EQ(readFile(viaKernel.file("m.onnx")), readFile(viaReadWrite.file("m.onnx")));
  EXPECT_EQ(readFile(in.file("m.onnx.bin")), junk + w + s); // the input is only read
  EXPECT_EQ(in.list(), (std::vector<std::string>{"m.onnx", "m.onnx.bin"}));

  // Saved over its own input (same names): the old data file stays mapped
  // and readable until the new one replaces it.
  SaveOptions sameName;
  sameName.externalDataFile = "m.onnx.bin";
  ASSERT_TRUE(saveModel(*model, in.file("m.onnx"), error, sameName)) << error;
  EXPECT_EQ(readFile(in.file("m.onnx.bin")), w + s);
  EXPECT_TRUE(mapped.sameContent(weight(*loadModel(viaKernel.file("m.onnx"), error), "w")));
}

TEST(ExternalData, ReleasedPagesReadBackTheSameBytes) {
  TempDir dir;
  std::string bytes = noise(3 * 4096 + 100, 5);
  writeFile(dir.file("d.bin"), bytes);
  std::string error;
  auto file = MappedFile::open(dir.file("d.bin"), error);
  ASSERT_TRUE(file) << error;
  Buffer view = file->view(file, 100, 2 * 4096); // not page-aligned
  EXPECT_EQ(view.mappedFile(), file.get());
  std::string before(reinterpret_cast<const char *>(view.data()), view.size());
  view.releasePages();
  EXPECT_EQ(std::string(reinterpret_cast<const char *>(view.data()), view.size()), before);
  EXPECT_EQ(before, bytes.substr(100, 2 * 4096));
  Buffer owned = Buffer::copyOf(bytes.data(), 10);
  owned.releasePages(); // no effect on owned bytes
  EXPECT_EQ(std::string(reinterpret_cast<const char *>(owned.data()), 10), bytes.substr(0, 10));
}

TEST(ExternalData, ManyMappedFilesKeepAtMost256Descriptors) {
  // A model split into one file per tensor must load within the usual limit
  // of 1024 open files: past 256 live mappings, a mapping closes its file.
  TempDir dir;
  writeFile(dir.file("d.bin"), "0123456789");
  std::vector<std::shared_ptr<MappedFile>> files;
  std::string error;
  for (int i = 0; i < 300; ++i) {
    files.push_back(MappedFile::open(dir.file("d.bin"), error));
    ASSERT_TRUE(files.back()) << error;
  }
  size_t open = 0;
  for (const auto &f : files) {
    open += f->fd() >= 0;
    EXPECT_EQ(std::string(reinterpret_cast<const char *>(f->data()), f->size()), "0123456789");
  }
  EXPECT_LE(open, 256u);
  EXPECT_GE(open, 200u); // other tests' mappings are gone by now
  files.clear();
  auto again = MappedFile::open(dir.file("d.bin"), error);
  ASSERT_TRUE(again) << error;
  EXPECT_GE(again->fd(), 0); // closed mappings gave their descriptors back
}
