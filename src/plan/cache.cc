// The engine cache: the key (a streamed XXH3-128 over a program and its weights) and the
// load-or-build policy. Weight bytes are hashed where they lie (the .pt2 map, or the entry's
// map when a hit is checked), each weight to its own XXH3-64 first, so hashing a large model
// reads each byte once without copying it.
#include "plan/cache.h"

#include <xxhash.h>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include "ir/printer.h"
#include "support/file_writer.h"
#include "tensor/strided_walk.h"

namespace splice::plan {

namespace {

// Feeds fields to an XXH3-128 state. Every variable-length field is preceded by its length, so
// two different field sequences can never produce the same byte stream.
class KeyHasher {
 public:
  KeyHasher() : state_(XXH3_createState(), &XXH3_freeState) {
    SPLICE_ASSERT(state_ != nullptr);
    XXH3_128bits_reset(state_.get());
  }
  void u64(uint64_t v) { XXH3_128bits_update(state_.get(), &v, sizeof(v)); }
  void str(std::string_view s) {
    u64(s.size());
    XXH3_128bits_update(state_.get(), s.data(), s.size());
  }
  std::string hex() const {
    XXH128_hash_t h = XXH3_128bits_digest(state_.get());
    return fmt::format("{:016x}{:016x}", h.high64, h.low64);
  }

 private:
  std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> state_;
};

uint64_t hash_weight_bytes(const Tensor& t) {
  if (!t.defined() || t.numel() == 0) return XXH3_64bits(nullptr, 0);
  if (t.is_contiguous()) return XXH3_64bits(t.raw_data(), t.nbytes());
  // The engine stores a non-contiguous weight as its contiguous copy; hash what it stores, in
  // that order, element by element (no copy: nothing here may fail to allocate).
  XXH3_state_t* state = XXH3_createState();
  if (state == nullptr) return 0;  // cannot happen for a few hundred bytes; keeps the key total
  XXH3_64bits_reset(state);
  const size_t esize = dtype_size(t.dtype());
  const std::byte* base = t.raw_data();
  const std::array<const int64_t*, 1> strides = {t.strides().data()};
  for_each_offset<1>(t.sizes(), strides, [&](const std::array<int64_t, 1>& o) {
    XXH3_64bits_update(state, base + o[0] * static_cast<int64_t>(esize), esize);
  });
  const uint64_t h = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  return h;
}

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

}  // namespace

std::string default_cache_dir() {
  if (const char* xdg = env("XDG_CACHE_HOME"))
    return (std::filesystem::path(xdg) / "splice").string();
  if (const char* home = env("HOME"))
    return (std::filesystem::path(home) / ".cache" / "splice").string();
  return ".splice-cache";
}

std::string cache_key(const ir::Program& program, PlanMode mode, const backend::Target& target) {
  KeyHasher h;
  h.u64(kPlanFormatVersion);
  h.str(kSpliceVersion);
  h.str(plan_mode_name(mode));
  // The plan depends on the backend's kernel capabilities, not only on its name.
  h.str(target.name);
  h.u64(target.caps.size());
  for (size_t i = 0; i < target.caps.size(); ++i)
    h.u64((uint64_t{target.kernels[i]} << 32) | target.caps[i]);
  h.str(ir::print_program(program));
  // The printer writes hints today; hashing them again keeps the key right if that changes.
  h.u64(program.hints.size());
  for (const auto& [name, hint] : program.hints) {
    h.str(name);
    h.u64(static_cast<uint64_t>(hint));
  }
  h.u64(program.weights.size());
  for (const auto& [name, t] : program.weights) {  // std::map: sorted by name
    h.str(name);
    h.str(dtype_name(t.dtype()));
    h.u64(t.sizes().size());
    for (int64_t d : t.sizes()) h.u64(static_cast<uint64_t>(d));
    h.u64(hash_weight_bytes(t));
  }
  return h.hex();
}

Result<LoadedEngine> load_or_build(const std::string& dir, const ir::Program& program,
                                   PlanMode mode, const backend::Target& target,
                                   const std::function<Result<Plan>(const ir::Program&)>& build,
                                   bool* hit) {
  if (hit != nullptr) *hit = false;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return make_error(ErrorKind::kIo, "cannot create the engine cache folder '{}': {}", dir,
                      ec.message());
  // Temporaries of runs that were killed mid-write would otherwise stay forever.
  remove_abandoned_temporaries(dir);
  const std::string key = cache_key(program, mode, target);
  const std::string path = (std::filesystem::path(dir) / (key + ".splice")).string();
  auto loaded = load_engine_file(path, target);
  // The name is only a claim: an entry is used when what it holds has this key (another
  // engine copied or linked under this name, or built from other weights, is not this
  // program). Anything else that fails to load -- a missing entry, a crash mid-write on a
  // filesystem without atomic rename, a disk error, a file damaged by hand -- is not the
  // user's problem either: it is rebuilt below and replaced.
  if (loaded.ok() && cache_key(loaded->program, loaded->plan.mode, target) == key) {
    if (hit != nullptr) *hit = true;
    return loaded;
  }
  SPLICE_ASSIGN_OR_RETURN(Plan plan, build(program));
  SPLICE_TRY(write_engine_file(program, plan, path));
  return load_engine_file(path, target);
}

}  // namespace splice::plan
