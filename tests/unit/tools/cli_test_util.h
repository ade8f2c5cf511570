#pragma once
// Helpers for the CLI tests: run the built `splice` binary as a child process (no shell),
// optionally with extra environment variables (e.g. XDG_CACHE_HOME pointing at a scratch folder
// so the engine cache never touches the real ~/.cache), capture its exit code, stdout and
// stderr, and kill it when it runs past a deadline so a hang fails the test instead of stalling
// ctest; plus safetensors helpers over tests/cases.

#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "tensor/safetensors.h"

namespace splice::test {

inline const std::string kSpliceBinary = SPLICE_BINARY_DIR "/bin/splice";
inline const std::string kExampleBinary = SPLICE_BINARY_DIR "/bin/api_example";
inline const std::string kCasesDir = SPLICE_SOURCE_DIR "/tests/cases";

struct Outcome {
  int exit_code = -1;  // 128 + signal when the child was killed by a signal
  bool timed_out = false;
  std::string out;
  std::string err;
};

// Variables to set in a child's environment (overriding the test process's own values).
using Environment = std::map<std::string, std::string>;

// Runs `binary args...` with the test process's environment plus `env`; after `timeout` the
// child is killed and timed_out is set.
inline Outcome run_program(const std::string& binary, const std::vector<std::string>& args,
                           std::chrono::seconds timeout = std::chrono::seconds(20),
                           const Environment& env = {}) {
  Outcome outcome;
  // Built before fork(): the child only calls async-signal-safe functions.
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry(*e);
    if (!env.count(entry.substr(0, entry.find('=')))) env_strings.push_back(std::move(entry));
  }
  for (const auto& [name, value] : env) env_strings.push_back(name + "=" + value);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);

  int out_pipe[2], err_pipe[2];
  // (pipe(), not pipe2(): <fcntl.h> declares a function named splice.)
  if (pipe(out_pipe) != 0 || pipe(err_pipe) != 0) {
    ADD_FAILURE() << "pipe: " << std::strerror(errno);
    return outcome;
  }
  std::vector<std::string> argv_strings{binary};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);

  pid_t pid = fork();
  if (pid == 0) {
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) close(fd);
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (pid < 0) {
    ADD_FAILURE() << "fork: " << std::strerror(errno);
    close(out_pipe[0]);
    close(err_pipe[0]);
    return outcome;
  }

  auto deadline = std::chrono::steady_clock::now() + timeout;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&outcome.out, &outcome.err};
  int open_count = 2;
  while (open_count > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      outcome.timed_out = true;
      kill(pid, SIGKILL);
      break;
    }
    int ready = poll(fds, 2, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buffer[4096];
      ssize_t n = read(fds[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        sinks[i]->append(buffer, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;  // poll ignores negative descriptors
        --open_count;
      }
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) close(f.fd);
  // The child may still run after closing its output; the deadline holds for it too.
  int status = 0;
  for (;;) {
    pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid || (done < 0 && errno != EINTR)) break;
    if (!outcome.timed_out && std::chrono::steady_clock::now() >= deadline) {
      outcome.timed_out = true;
      kill(pid, SIGKILL);
    }
    usleep(1000);
  }
  outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return outcome;
}

// `splice` with the test's environment. Unless the test chooses its own, the engine cache
// lives in the build folder, so no test writes into the user's ~/.cache.
inline Outcome run_splice(const std::vector<std::string>& args, const Environment& env,
                          std::chrono::seconds timeout = std::chrono::seconds(20)) {
  Environment with_cache = env;
  with_cache.emplace("XDG_CACHE_HOME", SPLICE_BINARY_DIR "/cli-test-cache");
  return run_program(kSpliceBinary, args, timeout, with_cache);
}

inline Outcome run_splice(const std::vector<std::string>& args,
                          std::chrono::seconds timeout = std::chrono::seconds(20)) {
  return run_splice(args, Environment{}, timeout);
}

inline std::string describe(const Outcome& o) {
  return "exit " + std::to_string(o.exit_code) + (o.timed_out ? " (timed out)" : "") +
         "\nstderr: " + o.err + "\nstdout (first 2000 bytes): " + o.out.substr(0, 2000);
}

inline std::map<std::string, Tensor> read_tensors(const std::string& path) {
  auto r = read_safetensors(path);
  EXPECT_TRUE(r.ok()) << path << ": " << (r.ok() ? "" : r.error().message());
  return r.ok() ? std::move(*r) : std::map<std::string, Tensor>{};
}

inline void write_tensors(const std::string& path, const std::map<std::string, Tensor>& t) {
  auto r = write_safetensors(path, t);
  ASSERT_TRUE(r.ok()) << path << ": " << r.error().message();
}

// Same keys, dtypes, shapes and bytes.
inline void expect_same_tensors(const std::map<std::string, Tensor>& actual,
                                const std::map<std::string, Tensor>& expected) {
  std::vector<std::string> actual_keys, expected_keys;
  for (const auto& [k, v] : actual) actual_keys.push_back(k);
  for (const auto& [k, v] : expected) expected_keys.push_back(k);
  ASSERT_EQ(actual_keys, expected_keys);
  for (const auto& [name, e] : expected) {
    const Tensor& a = actual.at(name);
    EXPECT_EQ(a.dtype(), e.dtype()) << name;
    EXPECT_EQ(a.sizes(), e.sizes()) << name;
    if (a.dtype() != e.dtype() || a.sizes() != e.sizes()) continue;
    Tensor ac = a.contiguous_copy().value(), ec = e.contiguous_copy().value();
    EXPECT_EQ(std::memcmp(ac.raw_data(), ec.raw_data(), ac.nbytes()), 0) << name << " differs";
  }
}

// A fresh directory under gtest's temp dir, made by mkdtemp (so it is this test's alone) and
// removed when the object goes out of scope.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string("splice_") + info->test_suite_name() + "_" + info->name();
    for (char& c : name)
      if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    std::string templ = (std::filesystem::path(::testing::TempDir()) / (name + "_XXXXXX")).string();
    if (::mkdtemp(templ.data()) == nullptr) {
      ADD_FAILURE() << "mkdtemp " << templ << ": " << std::strerror(errno);
      return;
    }
    path_ = templ;
  }
  ~TempDir() {
    // Only what mkdtemp made: a "splice_..." folder right under the temp folder.
    std::error_code ec;
    if (!path_.empty() && path_.filename().string().rfind("splice_", 0) == 0 &&
        std::filesystem::equivalent(path_.parent_path(), ::testing::TempDir(), ec))
      std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace splice::test
