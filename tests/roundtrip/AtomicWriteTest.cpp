//===- tests/roundtrip/AtomicWriteTest.cpp - Atomic file replacement ------===//
//
// Output goes to a temporary file beside the target and is renamed over it:
// failures leave no file behind, the old file stays intact until the rename,
// and a model can be saved over the very file it was loaded from.
//
//===----------------------------------------------------------------------===//
#include "tests/roundtrip/ProtoBuilders.h"
#include "tests/roundtrip/RoundTripUtil.h"

#include "backend/Writer.h"
#include "frontend/Loader.h"

#include <filesystem>

#include <sys/stat.h>

using namespace onnxslim;
using namespace onnxslim::testing;

namespace {

std::unique_ptr<Model> smallModel() {
  std::string error;
  auto m = loadModelFromString(addModel(1024).SerializeAsString(), "mem.onnx", ".", error);
  EXPECT_TRUE(m) << error;
  return m;
}

} // namespace

TEST(AtomicWrite, MissingDirectory) {
  TempDir dir;
  std::string path = dir.file("missing/out.onnx");
  std::string error;
  EXPECT_FALSE(saveModel(*smallModel(), path, error));
  EXPECT_EQ(error.rfind("cannot write '" + path + "': directory '" + dir.file("missing") + "'", 0), 0u)
      << error;
  EXPECT_NE(error.find("No such file or directory"), std::string::npos) << error;
  EXPECT_TRUE(dir.list().empty());
}

TEST(AtomicWrite, ParentIsAFileOrTargetIsADirectory) {
  TempDir dir;
  writeFile(dir.file("plain"), "x");
  std::string error;
  EXPECT_FALSE(saveModel(*smallModel(), dir.file("plain/out.onnx"), error));
  EXPECT_NE(error.find("is not a directory"), std::string::npos) << error;
  std::filesystem::create_directory(dir.file("sub"));
  EXPECT_FALSE(saveModel(*smallModel(), dir.file("sub"), error));
  EXPECT_NE(error.find("it is a directory"), std::string::npos) << error;
  EXPECT_EQ(dir.list(), (std::vector<std::string>{"plain", "sub"}));
}

TEST(AtomicWrite, WriterFailureLeavesNothing) {
  TempDir dir;
  writeFile(dir.file("keep.txt"), "old");
  std::string error;
  EXPECT_FALSE(writeFileAtomically(
      dir.file("keep.txt"),
      [](std::ostream &os, std::string &err) {
        os << "half-written";
        err = "writer gave up";
        return false;
      },
      error));
  EXPECT_EQ(error, "writer gave up");
  EXPECT_EQ(dir.list(), (std::vector<std::string>{"keep.txt"}));
  EXPECT_EQ(readFile(dir.file("keep.txt")), "old");
}

TEST(AtomicWrite, OldFileIntactUntilRename) {
  TempDir dir;
  std::string path = dir.file("f.txt");
  writeFile(path, "original");
  std::string error;
  bool sawOriginal = false;
  size_t entriesDuringWrite = 0;
  ASSERT_TRUE(writeFileAtomically(
      path,
      [&](std::ostream &os, std::string &) {
        os << std::string(3 << 20, 'n'); // more than the stream's buffer
        sawOriginal = readFile(path) == "original";
        entriesDuringWrite = dir.list().size();
        return true;
      },
      error))
      << error;
  EXPECT_TRUE(sawOriginal);
  EXPECT_EQ(entriesDuringWrite, 2u); // the target and the temporary file beside it
  EXPECT_EQ(readFile(path), std::string(3 << 20, 'n'));
  EXPECT_EQ(dir.list(), (std::vector<std::string>{"f.txt"}));
}

TEST(AtomicWrite, SameInputAndOutputPath) {
  TempDir dir;
  std::string path = dir.file("m.onnx");
  std::string original = addModel(4096).SerializeAsString();
  writeFile(path, original);
  std::string error;
  auto model = loadModel(path, error);
  ASSERT_TRUE(model) << error;
  const Tensor &w = *model->graph()->initializers()[0]->initializer();
  ASSERT_TRUE(w.buffer().isMapped());
  std::string before(reinterpret_cast<const char *>(w.rawData()), w.byteSize());

  model->producerName = "rewritten";
  ASSERT_TRUE(saveModel(*model, path, error)) << error;
  // The mapping of the replaced file is still valid and unchanged.
  EXPECT_EQ(std::string(reinterpret_cast<const char *>(w.rawData()), w.byteSize()), before);
  onnx::ModelProto expected;
  ASSERT_TRUE(expected.ParseFromString(original));
  expected.set_producer_name("rewritten");
  EXPECT_TRUE(compareModels(expected.SerializeAsString(), readFile(path)).empty());
  EXPECT_EQ(dir.list(), (std::vector<std::string>{"m.onnx"}));
}

TEST(AtomicWrite, PermissionsOfAnExistingFileAreKept) {
  TempDir dir;
  std::string path = dir.file("m.onnx");
  writeFile(path, "old");
  ASSERT_EQ(::chmod(path.c_str(), 0640), 0);
  std::string error;
  ASSERT_TRUE(saveModel(*smallModel(), path, error)) << error;
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
}
