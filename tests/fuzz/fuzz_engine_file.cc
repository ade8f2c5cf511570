// libFuzzer target for the engine-file reader (load_engine_file): section table, program text
// IR, weights table, plan JSON and the plan's re-derivation. A checksum guards every engine,
// and random bytes would almost never get past it, so an input that starts with the engine
// magic gets this splice's versions and a correct checksum written into its header first:
// the fuzzer then explores what lies behind them. Each input is held in a memfd (a regular
// file in memory) and read through its /proc/self/fd path, as any engine file is read.
#include <sys/mman.h>
#include <unistd.h>
#include <xxhash.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "backends/backend.h"
#include "plan/engine_file.h"

namespace {

void put_le(std::string& s, size_t at, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) s[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const int fd = ::memfd_create("splice_fuzz_engine", MFD_CLOEXEC);
  static const std::string path = "/proc/self/fd/" + std::to_string(fd);
  if (fd < 0) return 0;
  std::string bytes(reinterpret_cast<const char*>(data), size);
  using splice::plan::kEngineMagic;
  if (bytes.size() >= splice::plan::kEngineHeaderSize &&
      bytes.compare(0, kEngineMagic.size(), kEngineMagic) == 0) {
    put_le(bytes, 8, splice::plan::kPlanFormatVersion, 4);
    std::string version(splice::plan::kSpliceVersion);
    version.resize(16, '\0');
    bytes.replace(16, 16, version);
    // The backend field too, so inputs reach the sections instead of the backend check.
    std::string backend = "cpu";
    backend.resize(16, '\0');
    bytes.replace(104, 16, backend);
    put_le(bytes, 32, XXH3_64bits(bytes.data() + 40, bytes.size() - 40), 8);
  }
  if (::ftruncate(fd, 0) != 0) return 0;
  if (!bytes.empty() &&
      ::pwrite(fd, bytes.data(), bytes.size(), 0) != static_cast<ssize_t>(bytes.size()))
    return 0;
  auto engine =
      splice::plan::load_engine_file(path, splice::backend::find_backend("cpu")->target());
  (void)engine.ok();
  return 0;
}
