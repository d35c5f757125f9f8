//===- backend/AtomicFile.h - Write-to-temp-then-rename files --*- C++ -*-===//
//
// Internal to backend/. An AtomicFile is a temporary file created next to its
// target (mkstemp in the same directory, so the final rename cannot cross a
// file system), written through a buffered std::ostream, then fsynced and
// renamed over the target. Until commit() the target is untouched; if the
// object dies uncommitted the temporary file is removed. Two AtomicFiles can
// be prepared and then committed back to back (a model and its data file).
//
// What the target path may be (resolveTarget):
//  - a new name in an existing directory, or a regular file: replaced
//    atomically, keeping the old file's permissions;
//  - a symbolic link (or a chain of them): followed, and the file it points
//    to is replaced atomically in that file's own directory (the link stays a
//    link); a dangling link creates its target;
//  - /dev/null (also through a link): written through, deliberately, so that
//    `onnxslim IN /dev/null` runs everything and keeps nothing;
//  - a directory, any other device, a FIFO or a socket: refused with a
//    one-line error. Such a path is never replaced by a regular file.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>
#include <ostream>
#include <streambuf>
#include <string>
#include <vector>

namespace onnxslim::backend {

/// The directory part of a path ("." for a bare name, "/" for "/x").
std::string dirOf(const std::string &path);
/// The last component of a path.
std::string baseOf(const std::string &path);

/// Where writing to a path really goes.
struct WriteTarget {
  enum class Kind {
    NewFile,     ///< nothing there yet: created
    RegularFile, ///< an existing regular file: replaced atomically
    DevNull,     ///< /dev/null: written through
  };
  Kind kind = Kind::NewFile;
  /// The path after following symbolic links (equal to the given path when
  /// it is not a link).
  std::string path;
};

/// Given a path, Execute: follows symbolic links and classifies what is
/// there, Result: false with `error` (one line naming `path`) for a
/// directory, a device other than /dev/null, a FIFO, a socket, a link loop
/// or a missing directory.
bool resolveTarget(const std::string &path, WriteTarget &out, std::string &error);

/// A std::streambuf writing to a file descriptor through a large buffer;
/// big writes bypass the buffer. Remembers the first OS error.
class FdStreamBuf : public std::streambuf {
public:
  explicit FdStreamBuf(int fd, size_t bufferSize = 1 << 20);
  /// errno of the first failed write, or 0.
  int errorCode() const { return errno_; }
  /// Given nothing, Execute: writes out the buffer, Result: false on an OS error.
  bool flushAll();

protected:
  int_type overflow(int_type ch) override;
  std::streamsize xsputn(const char *s, std::streamsize n) override;
  int sync() override;

private:
  bool writeAll(const char *p, size_t n);
  int fd_;
  std::vector<char> buffer_;
  int errno_ = 0;
};

/// How copyRange moves bytes.
enum class CopyMethod {
  Auto,      ///< copy_file_range, falling back to ReadWrite where refused
  ReadWrite, ///< pread + write in 1 MiB chunks
};

/// Given a source file, an offset and a length, and a destination file
/// descriptor, Execute: appends those bytes to the destination at its
/// current position, in the kernel where it can (copy_file_range: no page of
/// the source is mapped or copied into this process; file systems that
/// support it may share extents), else by reading and writing 1 MiB chunks
/// (copy_file_range refused: another file system type, a device such as
/// /dev/null, an old kernel), Result: false with `error` (the OS's words;
/// "unexpected end of file" when the source is shorter). `usedKernelCopy`,
/// when given, tells whether copy_file_range moved every byte.
bool copyRange(int srcFd, uint64_t srcOffset, uint64_t length, int dstFd, CopyMethod method,
               std::string &error, bool *usedKernelCopy = nullptr);

class AtomicFile {
public:
  AtomicFile() = default;
  AtomicFile(const AtomicFile &) = delete;
  AtomicFile &operator=(const AtomicFile &) = delete;
  ~AtomicFile();

  /// Given a target path, Execute: resolves it (see the file comment) and
  /// creates the temporary file beside the real target (or opens /dev/null),
  /// Result: false with `error` (path + cause) when that is impossible.
  bool open(const std::string &path, std::string &error);
  std::ostream &stream() { return *stream_; }
  /// The temporary file's descriptor, for writes that bypass stream() (call
  /// flush() first, so the buffered bytes land before them).
  int fd() const { return fd_; }
  /// Given nothing, Execute: writes out the stream's buffer, Result: false
  /// with `error` on an OS error.
  bool flush(std::string &error);
  /// Given nothing, Execute: flushes, fsyncs and closes the temporary file,
  /// Result: false with `error` on a write error (ENOSPC...).
  bool finish(std::string &error);
  /// Given a finished file, Execute: renames it over the target, Result:
  /// false with `error` on failure.
  bool commit(std::string &error);
  /// Removes the temporary file now (also done by the destructor).
  void discard();
  /// The resolved target (valid after a successful open()).
  const WriteTarget &target() const { return target_; }

private:
  std::string path_;
  WriteTarget target_;
  std::string tempPath_;
  int fd_ = -1;
  bool finished_ = false;
  bool committed_ = false;
  std::unique_ptr<FdStreamBuf> buf_;
  std::unique_ptr<std::ostream> stream_;
};

} // namespace onnxslim::backend
