// Tests for opening inputs (support/input_file.h) and for same-file detection
// (support/file_identity.h): a FIFO without a writer, a socket, a device node and a folder are
// refused at once (a FIFO never blocks: the ctest TIMEOUT would catch a hang), links to
// regular files open; outputs that are an input or another output, by any spelling (same
// path, "./", hard or symbolic link, a file not there yet), are refused naming both options.
#include "support/input_file.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <filesystem>

#include "support/file_identity.h"
#include "support/mapped_file.h"
#include "tests/unit/temp_dir_test_base.h"

namespace splice {
namespace {

namespace fs = std::filesystem;

class InputFileTest : public splice::testing::TempDirTest {
 protected:
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
};

void expect_refused(const std::string& p, const std::string& what) {
  auto r = open_input_file(p);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind(), ErrorKind::kIo);
  EXPECT_EQ(r.error().message(), "cannot read '" + p + "': it is " + what + ", not a regular file");
  // Everything that reads a file goes through it.
  auto mapped = MappedFile::open(p);
  ASSERT_FALSE(mapped.ok());
  EXPECT_EQ(mapped.error().message(), r.error().message());
}

TEST_F(InputFileTest, OpensARegularFileAndALinkToOne) {
  const std::string p = write("a.bin", "abc");
  auto fd = open_input_file(p);
  ASSERT_TRUE(fd.ok()) << fd.error().message();
  char buffer[4] = {};
  EXPECT_EQ(::read(fd->get(), buffer, sizeof buffer), 3);
  EXPECT_STREQ(buffer, "abc");
  fs::create_symlink(p, dir_ / "link");
  EXPECT_TRUE(open_input_file(path("link")).ok());
}

TEST_F(InputFileTest, AFifoWithoutAWriterIsRefusedWithoutBlocking) {
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  expect_refused(path("fifo"), "a FIFO");
  // Reached through a link, the same.
  fs::create_symlink(path("fifo"), dir_ / "to_fifo");
  expect_refused(path("to_fifo"), "a FIFO");
}

TEST_F(InputFileTest, AFolderIsRefused) { expect_refused(dir_.string(), "a folder"); }

TEST_F(InputFileTest, ASocketIsRefused) {
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
  ASSERT_EQ(::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  expect_refused(p, "a socket");
  ::close(s);
}

TEST_F(InputFileTest, ADeviceNodeIsRefused) {
  // Made in the test's own folder, never under /dev: the numbers of /dev/zero, which would
  // read forever.
  if (::geteuid() != 0) GTEST_SKIP() << "making a device node needs root";
  if (::mknod(path("zero").c_str(), S_IFCHR | 0666, makedev(1, 5)) != 0)
    GTEST_SKIP() << "mknod refused (" << std::strerror(errno) << "), e.g. in a container";
  expect_refused(path("zero"), "a character device");
}

TEST_F(InputFileTest, AMissingFileNamesTheReason) {
  auto r = open_input_file(path("missing"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message(),
            "cannot open '" + path("missing") + "': No such file or directory");
}

// ---- check_distinct_files ----

void expect_collision(const Result<void>& r, const std::string& message) {
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind(), ErrorKind::kBadUsage);
  EXPECT_EQ(r.error().message(), message);
}

TEST_F(InputFileTest, AnOutputThatIsAnInputIsRefused) {
  const std::string model = write("m.pt2", "model");
  expect_collision(check_distinct_files({{"the model", model}}, {{"-o", model}}),
                   "the model and -o are the same file ('" + model +
                       "'): splice will not overwrite a file it reads; write the output elsewhere");
  // Other spellings of the same file.
  const std::string dotted = (dir_ / "." / "m.pt2").string();
  EXPECT_FALSE(check_distinct_files({{"the model", model}}, {{"--outputs", dotted}}).ok());
  fs::create_hard_link(model, dir_ / "hard");
  expect_collision(check_distinct_files({{"--inputs", path("hard")}}, {{"--outputs", model}}),
                   "--inputs and --outputs are the same file ('" + path("hard") + "' and '" +
                       model +
                       "'): splice will not overwrite a file it reads; write the output "
                       "elsewhere");
  fs::create_symlink(model, dir_ / "soft");
  EXPECT_FALSE(check_distinct_files({{"the model", model}}, {{"--state-out", path("soft")}}).ok());
}

TEST_F(InputFileTest, TwoOutputsInOneFileAreRefusedEvenBeforeItExists) {
  const std::string x = path("x.safetensors");
  expect_collision(
      check_distinct_files({}, {{"--outputs", x}, {"--state-out", x}}),
      "--outputs and --state-out are the same file ('" + x + "'): each output needs its own file");
  EXPECT_FALSE(check_distinct_files(
                   {}, {{"--outputs", x}, {"--state-out", (dir_ / "." / "x.safetensors").string()}})
                   .ok());
}

TEST_F(InputFileTest, DistinctFilesAndSharedInputsAreFine) {
  const std::string in = write("in.safetensors", "x");
  EXPECT_TRUE(check_distinct_files({{"--inputs", in}, {"--state-in", in}},
                                   {{"--outputs", path("out")}, {"--state-out", path("state")}})
                  .ok());
  // A missing input is not compared (opening it reports it).
  EXPECT_TRUE(
      check_distinct_files({{"--inputs", path("missing")}}, {{"--outputs", path("o")}}).ok());
}

}  // namespace
}  // namespace splice
