// Writing safetensors files (through support/file_writer.h) as users and attackers meet it:
// writers racing on one path each leave a whole file, a symbolic link planted where the old
// writer put its temporary (`OUT.tmp`) is never followed, a FIFO or folder at the destination
// is refused and left alone, a file name at the system's limit works, and a replaced file keeps
// its permissions. Links and FIFOs are made only in the test's own mkdtemp folder.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "tensor/safetensors.h"
#include "tests/unit/temp_dir_test_base.h"

namespace splice {
namespace {

namespace fs = std::filesystem;

class SafetensorsFiles : public splice::testing::TempDirTest {
 protected:
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  static std::map<std::string, Tensor> filled(int64_t elements, int32_t value) {
    Tensor t = Tensor::empty(DType::kInt32, {elements}).value();
    for (int64_t i = 0; i < elements; ++i) t.data<int32_t>()[i] = value;
    return {{"x", t}};
  }
  std::string read(const std::string& p) const {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
};

TEST_F(SafetensorsFiles, ConcurrentWritersOfOnePathEachLeaveAWholeFile) {
  // 8 writers of 4 MB each, several rounds: every write succeeds and the file always holds
  // exactly one writer's tensor (the old writer shared one `OUT.tmp` among them all).
  constexpr int kWriters = 8;
  constexpr int64_t kElements = 1 << 20;
  const std::string out = path("out.safetensors");
  std::vector<std::map<std::string, Tensor>> contents;
  for (int w = 0; w < kWriters; ++w) contents.push_back(filled(kElements, w + 1));
  for (int round = 0; round < 4; ++round) {
    std::vector<std::string> errors(kWriters);
    std::vector<std::thread> threads;
    for (int w = 0; w < kWriters; ++w)
      threads.emplace_back([&, w] {
        auto r = write_safetensors(out, contents[w]);
        if (!r.ok()) errors[w] = r.error().message();
      });
    for (auto& t : threads) t.join();
    for (int w = 0; w < kWriters; ++w) EXPECT_EQ(errors[w], "") << "writer " << w;
    auto back = read_safetensors(out);
    ASSERT_TRUE(back.ok()) << back.error().message();
    const Tensor& x = back->at("x");
    ASSERT_EQ(x.numel(), kElements);
    const int32_t first = x.data<int32_t>()[0];
    int64_t mixed = 0;
    for (int64_t i = 0; i < kElements; ++i) mixed += x.data<int32_t>()[i] != first;
    EXPECT_EQ(mixed, 0) << "round " << round << ": elements from another writer than " << first;
  }
  for (const auto& e : fs::directory_iterator(dir_))
    EXPECT_EQ(e.path().filename(), "out.safetensors") << "left behind: " << e.path();
}

TEST_F(SafetensorsFiles, ALinkPlantedAtTheOldTemporaryNameIsNotFollowed) {
  const std::string victim = write("victim", "precious");
  const std::string out = path("out.safetensors");
  fs::create_symlink(victim, out + ".tmp");
  ASSERT_TRUE(write_safetensors(out, filled(4, 7)).ok());
  EXPECT_EQ(read(victim), "precious");
  EXPECT_TRUE(fs::is_symlink(out + ".tmp"));
  auto back = read_safetensors(out);
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->at("x").data<int32_t>()[3], 7);
}

TEST_F(SafetensorsFiles, AFifoOrAFolderAtTheDestinationIsRefusedAndKept) {
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  auto r = write_safetensors(path("fifo"), filled(1, 1));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind(), ErrorKind::kIo);
  EXPECT_EQ(r.error().message(), "cannot write '" + path("fifo") +
                                     "': it is a FIFO; splice only replaces regular files");
  struct stat st {};
  ASSERT_EQ(::lstat(path("fifo").c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));

  fs::create_directories(dir_ / "folder");
  EXPECT_FALSE(write_safetensors(path("folder"), filled(1, 1)).ok());
  EXPECT_TRUE(fs::is_directory(dir_ / "folder"));
}

TEST_F(SafetensorsFiles, ANameAtTheSystemsLimitIsWritten) {
  const long name_max = ::pathconf(dir_.c_str(), _PC_NAME_MAX);
  ASSERT_GT(name_max, 20);
  const std::string out =
      path(std::string(static_cast<size_t>(name_max) - 12, 'o') + ".safetensors");
  auto r = write_safetensors(out, filled(2, 5));
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_TRUE(read_safetensors(out).ok());
}

TEST_F(SafetensorsFiles, AReplacedFileKeepsItsPermissions) {
  const std::string out = path("private.safetensors");
  ASSERT_TRUE(write_safetensors(out, filled(1, 1)).ok());
  ASSERT_EQ(::chmod(out.c_str(), 0600), 0);
  ASSERT_TRUE(write_safetensors(out, filled(1, 2)).ok());
  struct stat st {};
  ASSERT_EQ(::stat(out.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(read_safetensors(out)->at("x").data<int32_t>()[0], 2);
}

}  // namespace
}  // namespace splice
