//===- backend/AtomicFile.cpp - Write-to-temp-then-rename files -----------===//
#include "backend/AtomicFile.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace onnxslim::backend {

namespace {

std::string osError(int err) { return std::strerror(err); }

/// Permissions for the new file: the old file's, else 0666 minus the umask.
mode_t targetMode(const WriteTarget &target) {
  struct stat st {};
  if (target.kind == WriteTarget::Kind::RegularFile && ::stat(target.path.c_str(), &st) == 0)
    return st.st_mode & 07777;
  mode_t mask = ::umask(0); // reading the umask requires setting it
  ::umask(mask);
  return 0666 & ~mask;
}

/// Whether `st` describes the null device (compared by device number, so a
/// bind-mounted or linked /dev/null counts too).
bool isDevNull(const struct stat &st) {
  struct stat null {};
  return S_ISCHR(st.st_mode) && ::stat("/dev/null", &null) == 0 && S_ISCHR(null.st_mode) &&
         st.st_rdev == null.st_rdev;
}

/// "a FIFO (named pipe)" and the like, for files that are never replaced.
const char *specialKind(mode_t mode) {
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISFIFO(mode))
    return "a FIFO (named pipe)";
  if (S_ISSOCK(mode))
    return "a socket";
  return "not a regular file";
}

/// Linux's limit on symbolic links followed in one lookup.
constexpr int kMaxLinkHops = 40;

} // namespace

std::string dirOf(const std::string &path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string baseOf(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool resolveTarget(const std::string &path, WriteTarget &out, std::string &error) {
  std::string cur = path;
  auto fail = [&](const std::string &why) {
    std::string shown = "'" + path + "'";
    if (cur != path)
      shown += " (a symbolic link to '" + cur + "')";
    error = "cannot write " + shown + ": " + why;
    return false;
  };
  for (int hops = 0;; ++hops) {
    struct stat st {};
    if (::lstat(cur.c_str(), &st) != 0) {
      int err = errno;
      if (err != ENOENT && err != ENOTDIR)
        return fail(osError(err));
      // Nothing there: a new file, if its directory exists.
      std::string dir = dirOf(cur);
      if (::stat(dir.c_str(), &st) != 0)
        return fail("directory '" + dir + "': " + osError(errno));
      if (!S_ISDIR(st.st_mode))
        return fail("'" + dir + "' is not a directory");
      out = {WriteTarget::Kind::NewFile, cur};
      return true;
    }
    if (S_ISLNK(st.st_mode)) {
      if (hops >= kMaxLinkHops)
        return fail(osError(ELOOP));
      std::vector<char> buf(static_cast<size_t>(st.st_size > 0 ? st.st_size : 255) + 1);
      ssize_t n = ::readlink(cur.c_str(), buf.data(), buf.size());
      if (n < 0)
        return fail("cannot read the symbolic link: " + osError(errno));
      if (static_cast<size_t>(n) >= buf.size())
        return fail("the symbolic link changed while it was read");
      std::string link(buf.data(), static_cast<size_t>(n));
      if (link.empty())
        return fail("the symbolic link is empty");
      cur = link.front() == '/' ? link : dirOf(cur) + "/" + link;
      continue;
    }
    if (S_ISREG(st.st_mode)) {
      out = {WriteTarget::Kind::RegularFile, cur};
      return true;
    }
    if (S_ISDIR(st.st_mode))
      return fail("it is a directory");
    if (isDevNull(st)) {
      out = {WriteTarget::Kind::DevNull, cur};
      return true;
    }
    return fail(std::string("it is ") + specialKind(st.st_mode) +
                "; only regular files are replaced (and /dev/null is written through)");
  }
}

//===----------------------------------------------------------------------===//
// FdStreamBuf
//===----------------------------------------------------------------------===//

FdStreamBuf::FdStreamBuf(int fd, size_t bufferSize) : fd_(fd), buffer_(bufferSize) {
  setp(buffer_.data(), buffer_.data() + buffer_.size());
}

bool FdStreamBuf::writeAll(const char *p, size_t n) {
  while (n > 0 && errno_ == 0) {
    // Keep single writes below 1 GB (Linux caps a write near 2 GB anyway).
    ssize_t w = ::write(fd_, p, std::min<size_t>(n, size_t{1} << 30));
    if (w < 0) {
      if (errno == EINTR)
        continue;
      errno_ = errno;
      return false;
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return errno_ == 0;
}

bool FdStreamBuf::flushAll() {
  size_t n = static_cast<size_t>(pptr() - pbase());
  bool ok = writeAll(pbase(), n);
  setp(buffer_.data(), buffer_.data() + buffer_.size());
  return ok;
}

FdStreamBuf::int_type FdStreamBuf::overflow(int_type ch) {
  if (!flushAll())
    return traits_type::eof();
  if (!traits_type::eq_int_type(ch, traits_type::eof())) {
    *pptr() = traits_type::to_char_type(ch);
    pbump(1);
  }
  return traits_type::not_eof(ch);
}

std::streamsize FdStreamBuf::xsputn(const char *s, std::streamsize n) {
  auto count = static_cast<size_t>(n);
  size_t room = static_cast<size_t>(epptr() - pptr());
  if (count <= room) {
    std::memcpy(pptr(), s, count);
    pbump(static_cast<int>(count));
    return n;
  }
  if (!flushAll())
    return 0;
  if (count >= buffer_.size())
    return writeAll(s, count) ? n : 0;
  std::memcpy(pptr(), s, count);
  pbump(static_cast<int>(count));
  return n;
}

int FdStreamBuf::sync() { return flushAll() ? 0 : -1; }

//===----------------------------------------------------------------------===//
// copyRange
//===----------------------------------------------------------------------===//

namespace {

/// Whether copy_file_range failed because it cannot serve this pair of files
/// (rather than because of an I/O error that read/write would hit too).
bool kernelCopyRefused(int err) {
  return err == EXDEV || err == EINVAL || err == ENOSYS || err == EOPNOTSUPP || err == EBADF ||
         err == ETXTBSY || err == EPERM;
}

bool readWriteCopy(int srcFd, uint64_t offset, uint64_t length, int dstFd, std::string &error) {
  std::vector<char> chunk(static_cast<size_t>(std::min<uint64_t>(length, uint64_t{1} << 20)));
  while (length > 0) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(length, chunk.size()));
    ssize_t got = ::pread(srcFd, chunk.data(), want, static_cast<off_t>(offset));
    if (got < 0) {
      if (errno == EINTR)
        continue;
      error = "cannot read: " + osError(errno);
      return false;
    }
    if (got == 0) {
      error = "cannot read: unexpected end of file";
      return false;
    }
    for (size_t done = 0; done < static_cast<size_t>(got);) {
      ssize_t w = ::write(dstFd, chunk.data() + done, static_cast<size_t>(got) - done);
      if (w < 0) {
        if (errno == EINTR)
          continue;
        error = osError(errno);
        return false;
      }
      done += static_cast<size_t>(w);
    }
    offset += static_cast<uint64_t>(got);
    length -= static_cast<uint64_t>(got);
  }
  return true;
}

} // namespace

bool copyRange(int srcFd, uint64_t srcOffset, uint64_t length, int dstFd, CopyMethod method,
               std::string &error, bool *usedKernelCopy) {
  if (usedKernelCopy)
    *usedKernelCopy = false;
  if (method == CopyMethod::Auto) {
    auto in = static_cast<off_t>(srcOffset);
    while (length > 0) {
      // Bounded steps keep an interrupted or slow copy responsive.
      ssize_t n = ::copy_file_range(srcFd, &in, dstFd, nullptr,
                                    static_cast<size_t>(std::min<uint64_t>(length, uint64_t{1} << 30)), 0);
      if (n < 0) {
        if (errno == EINTR)
          continue;
        if (kernelCopyRefused(errno))
          return readWriteCopy(srcFd, static_cast<uint64_t>(in), length, dstFd, error);
        error = osError(errno);
        return false;
      }
      if (n == 0) {
        error = "cannot read: unexpected end of file";
        return false;
      }
      length -= static_cast<uint64_t>(n);
    }
    if (usedKernelCopy)
      *usedKernelCopy = true;
    return true;
  }
  return readWriteCopy(srcFd, srcOffset, length, dstFd, error);
}

//===----------------------------------------------------------------------===//
// AtomicFile
//===----------------------------------------------------------------------===//

bool AtomicFile::flush(std::string &error) {
  if (fd_ < 0 || !buf_) {
    error = "cannot write '" + path_ + "': the file is not open";
    return false;
  }
  stream_->flush();
  if (!buf_->flushAll() || stream_->bad()) {
    error = "cannot write '" + path_ + "': " + osError(buf_->errorCode() ? buf_->errorCode() : EIO);
    return false;
  }
  return true;
}

AtomicFile::~AtomicFile() { discard(); }

void AtomicFile::discard() {
  stream_.reset();
  buf_.reset();
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  if (!committed_ && !tempPath_.empty()) {
    ::unlink(tempPath_.c_str());
    tempPath_.clear();
  }
}

bool AtomicFile::open(const std::string &path, std::string &error) {
  path_ = path;
  std::string base = baseOf(path);
  if (base.empty() || base == "." || base == "..") {
    error = "cannot write '" + path + "': not a file name";
    return false;
  }
  if (!resolveTarget(path, target_, error))
    return false;
  if (target_.kind == WriteTarget::Kind::DevNull) {
    fd_ = ::open(target_.path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd_ < 0) {
      error = "cannot write '" + path + "': " + osError(errno);
      return false;
    }
  } else {
    std::string dir = dirOf(target_.path);
    std::string templ = dir + "/." + baseOf(target_.path) + ".tmp.XXXXXX";
    std::vector<char> name(templ.begin(), templ.end());
    name.push_back('\0');
    int fd = ::mkostemp(name.data(), O_CLOEXEC);
    if (fd < 0) {
      error = "cannot write '" + path + "': cannot create a temporary file in '" + dir +
              "': " + osError(errno);
      return false;
    }
    fd_ = fd;
    tempPath_ = name.data();
    ::fchmod(fd_, targetMode(target_));
  }
  buf_ = std::make_unique<FdStreamBuf>(fd_);
  stream_ = std::make_unique<std::ostream>(buf_.get());
  return true;
}

bool AtomicFile::finish(std::string &error) {
  if (fd_ < 0) {
    error = "cannot write '" + path_ + "': the file is not open";
    return false;
  }
  stream_->flush();
  bool ok = buf_->flushAll() && !stream_->bad();
  int err = buf_->errorCode();
  // /dev/null has nothing to sync (and fsync may refuse a device).
  if (ok && target_.kind != WriteTarget::Kind::DevNull && ::fsync(fd_) != 0) {
    ok = false;
    err = errno;
  }
  if (::close(fd_) != 0 && ok) {
    ok = false;
    err = errno;
  }
  fd_ = -1;
  if (!ok) {
    error = "cannot write '" + path_ + "': " + osError(err ? err : EIO);
    discard();
    return false;
  }
  finished_ = true;
  return true;
}

bool AtomicFile::commit(std::string &error) {
  if (!finished_ && !finish(error))
    return false;
  if (target_.kind != WriteTarget::Kind::DevNull &&
      ::rename(tempPath_.c_str(), target_.path.c_str()) != 0) {
    error = "cannot write '" + path_ + "': rename failed: " + osError(errno);
    discard();
    return false;
  }
  committed_ = true;
  tempPath_.clear();
  // The directory is not fsynced: the rename is atomic either way (a crash
  // leaves the old file or the complete new one), and syncing the directory
  // would cost a second full journal flush on every save.
  return true;
}

} // namespace onnxslim::backend
