// Tests for the one file writer (support/file_writer.h): new and replaced files, permissions
// kept, names at the system's length limit, every kind of non-regular destination refused and
// left as it was, multi-file commits that fail before and during the renames, and temporaries
// that are locked while their writer lives and removed once it has died (killed by SIGKILL in
// a child process). FIFOs, sockets, device nodes and links are made only in the test's own
// mkdtemp folder.
#include "support/posix_fcntl.h"  // first: see the header

#include "support/file_writer.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/unit/temp_dir_test_base.h"

namespace splice {
namespace {

namespace fs = std::filesystem;

class FileWriterTest : public splice::testing::TempDirTest {
 protected:
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string read(const std::string& p) const {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  // Every name in the scratch folder that is a writer's temporary.
  std::vector<std::string> temporaries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_))
      if (e.path().filename().string().find(kTempFilePrefix) != std::string::npos)
        names.push_back(e.path().filename().string());
    return names;
  }
  static unsigned mode_of(const std::string& p) {
    struct stat st {};
    EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
    return st.st_mode;
  }
};

void expect_error(const Result<void>& r, const std::vector<std::string>& parts,
                  ErrorKind kind = ErrorKind::kIo) {
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind(), kind) << r.error().message();
  for (const auto& part : parts)
    EXPECT_NE(r.error().message().find(part), std::string::npos)
        << "'" << r.error().message() << "' lacks '" << part << "'";
}

TEST_F(FileWriterTest, WritesANewFileWithTheUmasksPermissions) {
  const mode_t old = ::umask(022);
  auto r = write_file(path("new.bin"), "contents");
  ::umask(old);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(read(path("new.bin")), "contents");
  EXPECT_EQ(mode_of(path("new.bin")) & 0777, 0644u);
  EXPECT_TRUE(temporaries().empty());
}

TEST_F(FileWriterTest, ReplacingKeepsThePermissions) {
  const std::string p = write("secret.bin", "old");
  ASSERT_EQ(::chmod(p.c_str(), 0600), 0);
  ASSERT_TRUE(write_file(p, "new contents").ok());
  EXPECT_EQ(read(p), "new contents");
  EXPECT_EQ(mode_of(p) & 07777, 0600u);
  ASSERT_EQ(::chmod(p.c_str(), 0640), 0);
  ASSERT_TRUE(write_file(p, "again").ok());
  EXPECT_EQ(mode_of(p) & 07777, 0640u);
}

TEST_F(FileWriterTest, NamesAtTheSystemsLimitWork) {
  const long name_max = ::pathconf(dir_.c_str(), _PC_NAME_MAX);
  ASSERT_GT(name_max, 20);
  const std::string p = path(std::string(static_cast<size_t>(name_max), 'n'));
  ASSERT_TRUE(write_file(p, "long").ok());
  EXPECT_EQ(read(p), "long");
  ASSERT_TRUE(write_file(p, "longer").ok()) << "replacing it too";
  EXPECT_EQ(read(p), "longer");
}

TEST_F(FileWriterTest, RefusesAFolderAndLeavesIt) {
  fs::create_directories(dir_ / "folder");
  expect_error(write_file(path("folder"), "x"), {"cannot write '" + path("folder") +
                                                 "': it is a folder; splice only replaces "
                                                 "regular files"});
  EXPECT_TRUE(fs::is_directory(dir_ / "folder"));
  expect_error(write_file(path("folder") + "/", "x"), {"it names a folder, not a file"});
  EXPECT_TRUE(temporaries().empty());
}

TEST_F(FileWriterTest, RefusesAFifoAndLeavesIt) {
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  expect_error(write_file(path("fifo"), "x"), {"it is a FIFO; splice only replaces regular files"});
  EXPECT_TRUE(S_ISFIFO(mode_of(path("fifo"))));
  EXPECT_TRUE(temporaries().empty());
}

TEST_F(FileWriterTest, RefusesASymbolicLinkAndLeavesItsTarget) {
  const std::string target = write("target", "precious");
  fs::create_symlink(target, dir_ / "link");
  expect_error(write_file(path("link"), "x"), {"it is a symbolic link"});
  EXPECT_EQ(read(target), "precious");
  EXPECT_TRUE(fs::is_symlink(dir_ / "link"));
  // A dangling link is a link too: nothing is created where it points.
  fs::create_symlink(dir_ / "nowhere", dir_ / "dangling");
  expect_error(write_file(path("dangling"), "x"), {"it is a symbolic link"});
  EXPECT_FALSE(fs::exists(dir_ / "nowhere"));
}

TEST_F(FileWriterTest, RefusesASocketAndLeavesIt) {
  const int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(s, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string p = path("sock");
  if (p.size() >= sizeof(addr.sun_path)) {
    ::close(s);
    GTEST_SKIP() << "the scratch folder's path is too long for a socket address";
  }
  std::strcpy(addr.sun_path, p.c_str());
  ASSERT_EQ(::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0) << std::strerror(errno);
  expect_error(write_file(p, "x"), {"it is a socket"});
  EXPECT_TRUE(S_ISSOCK(mode_of(p)));
  ::close(s);
}

TEST_F(FileWriterTest, RefusesADeviceNodeAndLeavesIt) {
  // The node is made here, in the test's own folder (never under /dev): the same device
  // numbers as /dev/null.
  if (::geteuid() != 0) GTEST_SKIP() << "making a device node needs root";
  if (::mknod(path("null").c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0)
    GTEST_SKIP() << "mknod refused (" << std::strerror(errno) << "), e.g. in a container";
  expect_error(write_file(path("null"), "x"), {"it is a character device"});
  EXPECT_TRUE(S_ISCHR(mode_of(path("null"))));
}

TEST_F(FileWriterTest, AMissingFolderNamesTheDestination) {
  expect_error(write_file(path("no_such_dir/out.bin"), "x"),
               {"cannot write '" + path("no_such_dir/out.bin") + "'", "No such file or directory"});
}

TEST_F(FileWriterTest, AnAbandonedPendingFileLeavesNothing) {
  {
    auto f = PendingFile::create(path("out.bin"));
    ASSERT_TRUE(f.ok()) << f.error().message();
    ASSERT_TRUE(f->write("partial").ok());
    EXPECT_EQ(temporaries().size(), 1u);
    EXPECT_EQ(fs::path(f->temp_path()).parent_path(), dir_);
    EXPECT_EQ(fs::path(f->temp_path()).filename().string().size(), kTempFilePrefix.size() + 12);
  }
  EXPECT_TRUE(temporaries().empty());
  EXPECT_FALSE(fs::exists(path("out.bin")));
}

TEST_F(FileWriterTest, WriteAtPatchesBytesAlreadyWritten) {
  auto f = PendingFile::create(path("out.bin"));
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE(f->write("0123456789").ok());
  ASSERT_TRUE(f->write_at(3, "abc", 3).ok());
  ASSERT_TRUE(commit_file(*f).ok());
  EXPECT_EQ(read(path("out.bin")), "012abc6789");
}

TEST_F(FileWriterTest, AFailureBeforeTheRenamesLeavesEveryDestination) {
  const std::string a = write("a.bin", "old a");
  const std::string b = write("b.bin", "old b");
  std::vector<PendingFile> files;
  for (const auto& [p, text] : {std::pair{a, "new a"}, std::pair{b, "new b"}}) {
    auto f = PendingFile::create(p);
    ASSERT_TRUE(f.ok());
    ASSERT_TRUE(f->write(text).ok());
    files.push_back(std::move(*f));
  }
  // b's destination turns into a folder after its temporary was made.
  fs::remove(b);
  fs::create_directories(b);
  expect_error(commit_files(files), {"cannot write '" + b + "': it is a folder"});
  EXPECT_EQ(read(a), "old a") << "nothing may be renamed before every file is ready";
  files.clear();
  EXPECT_TRUE(temporaries().empty());
}

TEST_F(FileWriterTest, AFailureWhileRenamingNamesTheFilesAlreadyReplaced) {
  const std::string a = write("a.bin", "old a");
  const std::string b = write("b.bin", "old b");
  const std::string c = write("c.bin", "old c");
  std::vector<PendingFile> files;
  for (const auto& p : {a, b, c}) {
    auto f = PendingFile::create(p);
    ASSERT_TRUE(f.ok());
    ASSERT_TRUE(f->write("new").ok());
    files.push_back(std::move(*f));
  }
  // c's temporary disappears, so its rename fails after a and b were replaced.
  ASSERT_EQ(::unlink(files[2].temp_path().c_str()), 0);
  expect_error(commit_files(files), {"cannot write '" + c + "': renaming its temporary file",
                                     "already replaced: '" + a + "', '" + b + "'"});
  EXPECT_EQ(read(a), "new");
  EXPECT_EQ(read(b), "new");
  EXPECT_EQ(read(c), "old c");
  files.clear();
  EXPECT_TRUE(temporaries().empty());
}

TEST_F(FileWriterTest, TwoFilesForOneDestinationAreRefused) {
  std::vector<PendingFile> files;
  for (const std::string& p : {path("x.bin"), (dir_ / "." / "x.bin").string()}) {
    auto f = PendingFile::create(p);
    ASSERT_TRUE(f.ok());
    files.push_back(std::move(*f));
  }
  expect_error(commit_files(files), {"are the same file"}, ErrorKind::kBadUsage);
  EXPECT_FALSE(fs::exists(path("x.bin")));
}

TEST_F(FileWriterTest, ALiveWritersTemporaryIsKept) {
  auto f = PendingFile::create(path("out.bin"));
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(remove_abandoned_temporaries(dir_.string()), 0u);
  EXPECT_EQ(temporaries().size(), 1u);
  ASSERT_TRUE(f->write("done").ok());
  ASSERT_TRUE(commit_file(*f).ok());
  EXPECT_EQ(read(path("out.bin")), "done");
}

TEST_F(FileWriterTest, AKilledWritersTemporaryIsRemoved) {
  // The child writes through the real writer and is killed before it commits.
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto f = PendingFile::create(path("out.bin"));
    if (f.ok() && f->write("half of it").ok()) ::kill(::getpid(), SIGKILL);
    ::_exit(3);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "status " << status;
  ASSERT_EQ(temporaries().size(), 1u) << "the killed writer leaves its temporary";
  EXPECT_EQ(remove_abandoned_temporaries(dir_.string()), 1u);
  EXPECT_TRUE(temporaries().empty());
  EXPECT_FALSE(fs::exists(path("out.bin")));
}

TEST_F(FileWriterTest, OnlyUnlockedRegularTemporariesAreRemoved) {
  // An older splice's name (no lock), a file of the user's, and a FIFO and a folder that
  // happen to carry the pattern.
  write("0123abcd.splice.tmp.AbC123", "old splice's leftover");
  write("notes.txt", "the user's");
  ASSERT_EQ(::mkfifo(path(".splice.tmp.fifo").c_str(), 0600), 0);
  fs::create_directories(dir_ / ".splice.tmp.folder");
  // A temporary whose holder still has it locked.
  const std::string held = write(".splice.tmp.held", "held");
  const int fd = ::open(held.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);

  EXPECT_EQ(remove_abandoned_temporaries(dir_.string()), 1u);
  EXPECT_FALSE(fs::exists(dir_ / "0123abcd.splice.tmp.AbC123"));
  EXPECT_TRUE(fs::exists(dir_ / "notes.txt"));
  EXPECT_TRUE(fs::exists(dir_ / ".splice.tmp.fifo"));
  EXPECT_TRUE(fs::exists(dir_ / ".splice.tmp.folder"));
  EXPECT_TRUE(fs::exists(held));
  ::close(fd);
  EXPECT_EQ(remove_abandoned_temporaries(dir_.string()), 1u) << "unlocked now";
  EXPECT_FALSE(fs::exists(held));
  EXPECT_EQ(remove_abandoned_temporaries(path("missing")), 0u);
}

}  // namespace
}  // namespace splice
