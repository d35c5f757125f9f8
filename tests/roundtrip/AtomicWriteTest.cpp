//===- tests/roundtrip/AtomicWriteTest.cpp - Atomic file replacement ------===//
//
// Output goes to a temporary file beside the target and is renamed over it:
// failures leave no file behind, the old file stays intact until the rename,
// and a model can be saved over the very file it was loaded from. Only
// regular files are replaced: symbolic links are followed, /dev/null is
// written through, and devices, FIFOs and sockets are refused (never turned
// into regular files). Every test that could replace a special file reaches
// it through a link in its own temporary directory, so that a regression
// replaces the link, never the real /dev/null.
//
//===----------------------------------------------------------------------===//
#include "tests/roundtrip/ProtoBuilders.h"
#include "tests/roundtrip/RoundTripUtil.h"

#include "backend/AtomicFile.h"
#include "backend/Writer.h"
#include "frontend/Loader.h"

#include <cstring>
#include <filesystem>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

using namespace onnxslim;
using namespace onnxslim::testing;

namespace {

std::unique_ptr<Model> smallModel() {
  std::string error;
  auto m = loadModelFromString(addModel(1024).SerializeAsString(), "mem.onnx", ".", error);
  EXPECT_TRUE(m) << error;
  return m;
}

bool isSymlink(const std::string &path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

mode_t fileType(const std::string &path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 ? (st.st_mode & S_IFMT) : 0;
}

void symlinkTo(const std::string &target, const std::string &link) {
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0) << link << " -> " << target;
}

SaveOptions withExternalData() {
  SaveOptions opts;
  opts.externalData = true;
  opts.externalThreshold = 16;
  return opts;
}

/// The model saved with external data, as the bytes of the model file and of the data file.
std::pair<std::string, std::string> referenceWithExternalData() {
  TempDir ref;
  std::string error;
  EXPECT_TRUE(saveModel(*smallModel(), ref.file("m.onnx"), error, withExternalData())) << error;
  return {readFile(ref.file("m.onnx")), readFile(ref.file("m.onnx.data"))};
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

TEST(AtomicWrite, SymlinkIsFollowedAndTheTargetReplaced) {
  TempDir dir;
  std::filesystem::create_directory(dir.file("d"));
  writeFile(dir.file("d/real.onnx"), "old");
  ASSERT_EQ(::chmod(dir.file("d/real.onnx").c_str(), 0600), 0);
  symlinkTo("d/real.onnx", dir.file("link.onnx")); // relative to the link's directory
  std::string error;
  ASSERT_TRUE(saveModel(*smallModel(), dir.file("link.onnx"), error)) << error;
  EXPECT_TRUE(isSymlink(dir.file("link.onnx")));
  EXPECT_TRUE(compareModels(addModel(1024).SerializeAsString(), readFile(dir.file("d/real.onnx"))).empty());
  struct stat st {};
  ASSERT_EQ(::stat(dir.file("d/real.onnx").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // The temporary file was made in the target's directory and is gone.
  EXPECT_EQ(dir.list(), (std::vector<std::string>{"d", "link.onnx"}));
  std::vector<std::string> inD;
  for (const auto &e : std::filesystem::directory_iterator(dir.file("d")))
    inD.push_back(e.path().filename().string());
  EXPECT_EQ(inD, (std::vector<std::string>{"real.onnx"}));
}

TEST(AtomicWrite, ChainedAndDanglingSymlinks) {
  TempDir dir;
  symlinkTo(dir.file("b"), dir.file("a")); // absolute
  symlinkTo("c.onnx", dir.file("b"));      // dangling: c.onnx does not exist yet
  std::string error;
  ASSERT_TRUE(saveModel(*smallModel(), dir.file("a"), error)) << error;
  EXPECT_TRUE(isSymlink(dir.file("a")));
  EXPECT_TRUE(isSymlink(dir.file("b")));
  EXPECT_EQ(fileType(dir.file("c.onnx")), static_cast<mode_t>(S_IFREG));
  EXPECT_TRUE(compareModels(addModel(1024).SerializeAsString(), readFile(dir.file("c.onnx"))).empty());
  EXPECT_EQ(dir.list(), (std::vector<std::string>{"a", "b", "c.onnx"}));
}

TEST(AtomicWrite, SymlinkLoopIsRefused) {
  TempDir dir;
  symlinkTo("y", dir.file("x"));
  symlinkTo("x", dir.file("y"));
  std::string error;
  EXPECT_FALSE(saveModel(*smallModel(), dir.file("x"), error));
  EXPECT_EQ(error.rfind("cannot write '" + dir.file("x") + "'", 0), 0u) << error;
  EXPECT_NE(error.find("Too many levels of symbolic links"), std::string::npos) << error;
  EXPECT_TRUE(isSymlink(dir.file("x")));
  EXPECT_EQ(dir.list(), (std::vector<std::string>{"x", "y"}));
}

TEST(AtomicWrite, FifoIsRefusedNotReplaced) {
  TempDir dir;
  ASSERT_EQ(::mkfifo(dir.file("pipe").c_str(), 0600), 0);
  std::string error;
  EXPECT_FALSE(saveModel(*smallModel(), dir.file("pipe"), error));
  EXPECT_EQ(error, "cannot write '" + dir.file("pipe") +
                       "': it is a FIFO (named pipe); only regular files are replaced (and /dev/null is "
                       "written through)");
  EXPECT_EQ(fileType(dir.file("pipe")), static_cast<mode_t>(S_IFIFO));
  // Through a link, the error names both.
  symlinkTo("pipe", dir.file("to-pipe"));
  EXPECT_FALSE(saveModel(*smallModel(), dir.file("to-pipe"), error));
  EXPECT_EQ(error.rfind("cannot write '" + dir.file("to-pipe") + "' (a symbolic link to '" + dir.path() +
                            "/pipe'): it is a FIFO",
                        0),
            0u)
      << error;
  EXPECT_EQ(fileType(dir.file("pipe")), static_cast<mode_t>(S_IFIFO));
  EXPECT_TRUE(isSymlink(dir.file("to-pipe")));
  EXPECT_EQ(dir.list(), (std::vector<std::string>{"pipe", "to-pipe"}));
}

TEST(AtomicWrite, SocketIsRefused) {
  TempDir dir;
  std::string path = dir.file("sock");
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(path.size(), sizeof addr.sun_path) << "temporary directory path too long for a socket";
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr), 0);
  std::string error;
  EXPECT_FALSE(saveModel(*smallModel(), path, error));
  EXPECT_NE(error.find("it is a socket"), std::string::npos) << error;
  EXPECT_EQ(fileType(path), static_cast<mode_t>(S_IFSOCK));
  ::close(fd);
  EXPECT_EQ(dir.list(), (std::vector<std::string>{"sock"}));
}

TEST(AtomicWrite, DevicesOtherThanDevNullAreRefused) {
  TempDir dir;
  symlinkTo("/dev/zero", dir.file("zero"));
  std::string error;
  EXPECT_FALSE(saveModel(*smallModel(), dir.file("zero"), error));
  EXPECT_NE(error.find("(a symbolic link to '/dev/zero'): it is a character device"), std::string::npos)
      << error;
  EXPECT_TRUE(isSymlink(dir.file("zero")));
  EXPECT_EQ(fileType("/dev/zero"), static_cast<mode_t>(S_IFCHR));
  EXPECT_EQ(dir.list(), (std::vector<std::string>{"zero"}));
}

TEST(AtomicWrite, DevNullIsWrittenThrough) {
  // Classified without writing anything.
  backend::WriteTarget target;
  std::string error;
  ASSERT_TRUE(backend::resolveTarget("/dev/null", target, error)) << error;
  EXPECT_EQ(target.kind, backend::WriteTarget::Kind::DevNull);
  EXPECT_EQ(target.path, "/dev/null");

  TempDir dir;
  symlinkTo("/dev/null", dir.file("null"));
  ASSERT_TRUE(saveModel(*smallModel(), dir.file("null"), error)) << error;
  ASSERT_TRUE(writeFileAtomically(
      dir.file("null"), [](std::ostream &os, std::string &) { return static_cast<bool>(os << "text"); },
      error))
      << error;
  // External data goes to /dev/null too: nothing is left beside the link.
  ASSERT_TRUE(saveModel(*smallModel(), dir.file("null"), error, withExternalData())) << error;
  EXPECT_TRUE(isSymlink(dir.file("null")));
  EXPECT_EQ(fileType("/dev/null"), static_cast<mode_t>(S_IFCHR));
  EXPECT_EQ(dir.list(), (std::vector<std::string>{"null"}));
}

TEST(AtomicWrite, ExternalDataFileFollowsTheSameRules) {
  auto [refModel, refData] = referenceWithExternalData();
  ASSERT_FALSE(refData.empty());
  std::string error;
  {
    // A FIFO where the data file goes: refused, nothing written.
    TempDir dir;
    ASSERT_EQ(::mkfifo(dir.file("m.onnx.data").c_str(), 0600), 0);
    EXPECT_FALSE(saveModel(*smallModel(), dir.file("m.onnx"), error, withExternalData()));
    EXPECT_EQ(error.rfind("cannot write '" + dir.file("m.onnx.data") + "': it is a FIFO", 0), 0u) << error;
    EXPECT_EQ(fileType(dir.file("m.onnx.data")), static_cast<mode_t>(S_IFIFO));
    EXPECT_EQ(dir.list(), (std::vector<std::string>{"m.onnx.data"}));
  }
  {
    // A link where the data file goes: its target is replaced, the link kept,
    // and the model still names the data file by the link's name.
    TempDir dir;
    std::filesystem::create_directory(dir.file("store"));
    writeFile(dir.file("store/blob"), "old");
    symlinkTo("store/blob", dir.file("m.onnx.data"));
    ASSERT_TRUE(saveModel(*smallModel(), dir.file("m.onnx"), error, withExternalData())) << error;
    EXPECT_TRUE(isSymlink(dir.file("m.onnx.data")));
    EXPECT_EQ(readFile(dir.file("store/blob")), refData);
    EXPECT_EQ(readFile(dir.file("m.onnx")), refModel);
    EXPECT_EQ(dir.list(), (std::vector<std::string>{"m.onnx", "m.onnx.data", "store"}));
    auto back = loadModel(dir.file("m.onnx"), error);
    EXPECT_TRUE(back) << error;
  }
}
