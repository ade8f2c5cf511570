// Engine files (layout in engine_file.h): the writer lays out the sections, then streams them
// to a string or a file while hashing, and patches the checksum into the header last (so a
// multi-gigabyte model is never held twice in memory when written to disk). The reader maps
// the file, checks magic, versions, checksum and every offset before it touches a section,
// then rebuilds the program from its text IR, attaches the weights as read-only views of the
// map, verifies the program and checks the plan against it.
// Files are written through support/file_writer.h (temporary, fsync, rename) and opened
// through support/input_file.h.
#include "plan/engine_file.h"

#include "plan/build.h"

#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <tuple>

#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/type_check.h"
#include "ir/verifier.h"
#include "plan/plan_json.h"
#include "support/checked_math.h"
#include "support/file_writer.h"
#include "support/input_file.h"
#include "support/mapped_file.h"

namespace splice::plan {

namespace {

using nlohmann::json;

constexpr size_t kFormatOffset = 8;
constexpr size_t kHeaderSizeOffset = 12;
constexpr size_t kVersionOffset = 16;
constexpr size_t kVersionField = 16;
constexpr size_t kChecksumOffset = 32;
constexpr size_t kBackendOffset = 104;
constexpr size_t kBackendField = 16;
constexpr size_t kSectionsOffset = 40;  // the checksum covers everything from here on

enum Section : size_t { kProgramSection, kPlanSection, kTableSection, kDataSection, kNumSections };
constexpr std::array<const char*, kNumSections> kSectionNames = {"program", "plan", "weights table",
                                                                 "weight data"};

static_assert(kSectionsOffset + kNumSections * 16 == kBackendOffset);
static_assert(kBackendOffset + kBackendField == kEngineHeaderSize);
static_assert(kSpliceVersion.size() < kVersionField);

// Explicit little-endian encoding, so files move between hosts of either byte order.
void put_le(std::string& s, size_t at, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) s[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
uint64_t get_le(const std::byte* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

std::optional<uint64_t> align_up(uint64_t v) {
  auto bumped = checked_add_u(v, kEngineWeightAlign - 1);
  if (!bumped) return std::nullopt;
  return *bumped / kEngineWeightAlign * kEngineWeightAlign;
}

// nlohmann throws on strings that are not valid UTF-8; a name like that is refused instead.
// "replace" and "ignore" dumps differ exactly when some byte is invalid.
Result<std::string> dump_json(const json& j, const char* what) {
  std::string text = j.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text != j.dump(-1, ' ', false, json::error_handler_t::ignore))
    return make_error(ErrorKind::kBadUsage,
                      "cannot write the engine's {}: a name in it is not "
                      "valid UTF-8",
                      what);
  return text;
}

// One stored run of weight bytes; tied weights point at the same blob.
struct Blob {
  const std::byte* data = nullptr;
  uint64_t nbytes = 0;
  uint64_t offset = 0;  // from the start of the weight data section
  Tensor keep;          // the contiguous copy of a non-contiguous weight, kept alive while written
};

struct Layout {
  std::string header;                                // kEngineHeaderSize bytes, checksum still zero
  std::array<std::string, kTableSection + 1> texts;  // program, plan, weights table
  std::vector<Blob> blobs;                           // in offset order
  uint64_t data_offset = 0;
  std::string trailer;  // the cache key trailer, or empty
  uint64_t total_size = 0;
};

Result<Layout> make_layout(const ir::Program& program, const Plan& plan,
                           std::string_view cache_key) {
  if (plan.backend.empty() || plan.backend.size() >= kBackendField)
    return make_error(ErrorKind::kInternal, "engine: backend name '{}' does not fit the header",
                      plan.backend);
  Layout l;
  l.texts[kProgramSection] = ir::print_program(program);
  SPLICE_ASSIGN_OR_RETURN(l.texts[kPlanSection], dump_json(plan_to_json(plan), "plan"));

  // Tied weights are the same view of the same bytes; the key is everything that decides which
  // bytes a view reads, so two views that only share a storage are stored separately.
  using TieKey = std::tuple<const std::byte*, int, Shape, Shape>;
  std::map<TieKey, size_t> tied;
  json table = json::array();
  uint64_t data_size = 0;
  for (const auto& [name, t] : program.weights) {
    SPLICE_CHECK_OR_RETURN(t.defined(), ErrorKind::kBadUsage,
                           "cannot write weight '{}' to an engine file: it has no storage", name);
    TieKey key{t.raw_data(), static_cast<int>(t.dtype()), t.sizes(), t.strides()};
    auto [it, fresh] = tied.emplace(key, l.blobs.size());
    if (fresh) {
      Blob b;
      if (!t.is_contiguous()) {
        SPLICE_ASSIGN_OR_RETURN(b.keep, t.contiguous_copy());
      }
      const Tensor& src = b.keep.defined() ? b.keep : t;
      b.data = src.raw_data();
      b.nbytes = src.nbytes();
      auto offset = align_up(data_size);
      auto end = offset ? checked_add_u(*offset, b.nbytes) : std::nullopt;
      SPLICE_CHECK_OR_RETURN(end.has_value(), ErrorKind::kBadUsage,
                             "cannot write weight '{}': the weights exceed 2^64 bytes", name);
      b.offset = *offset;
      data_size = *end;
      l.blobs.push_back(std::move(b));
    }
    const Blob& b = l.blobs[it->second];
    table.push_back({{"name", name},
                     {"dtype", std::string(dtype_name(t.dtype()))},
                     {"shape", t.sizes()},
                     {"offset", b.offset},
                     {"nbytes", b.nbytes}});
  }
  SPLICE_ASSIGN_OR_RETURN(l.texts[kTableSection], dump_json(table, "weights table"));

  l.header.assign(kEngineHeaderSize, '\0');
  l.header.replace(0, kEngineMagic.size(), kEngineMagic);
  put_le(l.header, kFormatOffset, kPlanFormatVersion, 4);
  put_le(l.header, kHeaderSizeOffset, kEngineHeaderSize, 4);
  l.header.replace(kVersionOffset, kSpliceVersion.size(), kSpliceVersion);
  l.header.replace(kBackendOffset, plan.backend.size(), plan.backend);
  uint64_t pos = kEngineHeaderSize;
  for (size_t s = 0; s < l.texts.size(); ++s) {
    put_le(l.header, kSectionsOffset + 16 * s, pos, 8);
    put_le(l.header, kSectionsOffset + 16 * s + 8, l.texts[s].size(), 8);
    pos += l.texts[s].size();  // texts live in memory: no overflow
  }
  if (!cache_key.empty()) {
    SPLICE_CHECK_OR_RETURN(
        cache_key.size() == kEngineKeyDigits &&
            cache_key.find_first_not_of("0123456789abcdef") == std::string_view::npos,
        ErrorKind::kInternal, "engine: cache key '{}' is not {} hex digits", cache_key,
        kEngineKeyDigits);
    l.trailer = std::string(kEngineKeyMagic) + std::string(cache_key);
  }
  auto data_offset = align_up(pos);
  auto data_end = data_offset ? checked_add_u(*data_offset, data_size) : std::nullopt;
  auto total = data_end ? checked_add_u(*data_end, l.trailer.size()) : std::nullopt;
  SPLICE_CHECK_OR_RETURN(total.has_value(), ErrorKind::kBadUsage,
                         "cannot write the engine: it would exceed 2^64 bytes");
  l.data_offset = *data_offset;
  l.total_size = *total;
  put_le(l.header, kSectionsOffset + 16 * kDataSection, l.data_offset, 8);
  put_le(l.header, kSectionsOffset + 16 * kDataSection + 8, data_size, 8);
  return l;
}

using Sink = std::function<Result<void>(const void* data, size_t size)>;

// Streams the file to `sink` and returns the checksum of everything after its field (the
// header goes out with a zero checksum; the caller patches it).
Result<uint64_t> emit(const Layout& l, const Sink& sink) {
  std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> state(XXH3_createState(),
                                                                 &XXH3_freeState);
  SPLICE_CHECK_OR_RETURN(state != nullptr, ErrorKind::kInternal, "out of memory for XXH3 state");
  XXH3_64bits_reset(state.get());
  uint64_t pos = 0;
  auto put = [&](const void* data, size_t size) -> Result<void> {
    if (pos >= kSectionsOffset) XXH3_64bits_update(state.get(), data, size);
    pos += size;
    return sink(data, size);
  };
  static constexpr std::array<char, kEngineWeightAlign> kZeros{};
  auto pad_to = [&](uint64_t target) -> Result<void> {
    SPLICE_ASSERT(target >= pos && target - pos < kEngineWeightAlign);
    return put(kZeros.data(), target - pos);
  };
  SPLICE_TRY(put(l.header.data(), kSectionsOffset));
  SPLICE_TRY(put(l.header.data() + kSectionsOffset, l.header.size() - kSectionsOffset));
  for (const std::string& text : l.texts) SPLICE_TRY(put(text.data(), text.size()));
  SPLICE_TRY(pad_to(l.data_offset));
  for (const Blob& b : l.blobs) {
    SPLICE_TRY(pad_to(l.data_offset + b.offset));
    SPLICE_TRY(put(b.data, b.nbytes));
  }
  SPLICE_TRY(put(l.trailer.data(), l.trailer.size()));
  SPLICE_ASSERT(pos == l.total_size);
  return XXH3_64bits_digest(state.get());
}

std::string checksum_bytes(uint64_t checksum) {
  std::string s(8, '\0');
  put_le(s, 0, checksum, 8);
  return s;
}

// ---- reading ----

template <typename... Args>
Error bad(fmt::format_string<Args...> format, Args&&... args) {
  return make_error(ErrorKind::kBadArchive, format, std::forward<Args>(args)...);
}

// A NUL-padded text field at its fixed place, printable whatever a foreign file holds there.
std::string stored_text(std::span<const std::byte> file, size_t offset, size_t field) {
  std::string v;
  for (size_t i = offset; i < offset + field; ++i) {
    char c = static_cast<char>(file[i]);
    if (c == '\0') break;
    v += (c >= 0x20 && c < 0x7f) ? c : '?';
  }
  return v;
}

std::string_view as_text(std::span<const std::byte> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

Result<uint64_t> json_u64(const json& entry, const char* key, const std::string& where) {
  auto it = entry.find(key);
  if (it == entry.end() || !it->is_number_unsigned())
    return bad("weights table: {} has no non-negative integer '{}'", where, key);
  return it->get<uint64_t>();
}

// Reads the weights table and attaches each weight as a read-only view of the map. Tied
// weights (entries with the same offset and size) share one Storage, as they did when written.
Result<void> read_weights(const std::shared_ptr<const MappedFile>& file,
                          std::string_view table_text, std::span<const std::byte> data,
                          ir::Program& program) {
  const json table = json::parse(table_text, nullptr, /*allow_exceptions=*/false);
  if (table.is_discarded()) return bad("the weights table is not valid JSON");
  if (!table.is_array())
    return bad("the weights table is a JSON {}, not an array", table.type_name());
  std::map<std::pair<uint64_t, uint64_t>, std::shared_ptr<Storage>> storages;
  for (size_t i = 0; i < table.size(); ++i) {
    const json& e = table[i];
    std::string where = fmt::format("entry {}", i);
    if (!e.is_object()) return bad("weights table: {} is not an object", where);
    auto name_it = e.find("name");
    if (name_it == e.end() || !name_it->is_string())
      return bad("weights table: {} has no string 'name'", where);
    const std::string name = name_it->get<std::string>();
    where = fmt::format("weight '{}'", name);
    auto dtype_it = e.find("dtype");
    std::optional<DType> dtype;
    if (dtype_it != e.end() && dtype_it->is_string())
      dtype = dtype_from_name(dtype_it->get<std::string>());
    if (!dtype) return bad("weights table: {} has no known 'dtype'", where);
    auto shape_it = e.find("shape");
    if (shape_it == e.end() || !shape_it->is_array() || shape_it->size() > 64)
      return bad("weights table: {} has no 'shape' array of at most 64 dims", where);
    Shape shape;
    for (const json& d : *shape_it) {
      if (!d.is_number_unsigned() ||
          d.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        return bad("weights table: {} has a shape entry that is not a size", where);
      shape.push_back(d.get<int64_t>());
    }
    SPLICE_ASSIGN_OR_RETURN(uint64_t offset, json_u64(e, "offset", where));
    SPLICE_ASSIGN_OR_RETURN(uint64_t nbytes, json_u64(e, "nbytes", where));
    auto numel = checked_numel(shape);
    auto expected = numel ? checked_mul(*numel, dtype_size(*dtype)) : std::nullopt;
    if (!expected || static_cast<uint64_t>(*expected) != nbytes)
      return bad("weights table: {} is {}{} but records {} bytes", where, dtype_name(*dtype),
                 shape_string(shape), nbytes);
    auto end = checked_add_u(offset, nbytes);
    if (!end || *end > data.size())
      return bad("weights table: {} spans bytes [{}, {}+{}) of the {}-byte weight data", where,
                 offset, offset, nbytes, data.size());
    // Kernels may use aligned vector loads on weights; the writer always aligns them.
    if (offset % kEngineWeightAlign != 0)
      return bad("weights table: {} is at offset {}, not a multiple of {}", where, offset,
                 kEngineWeightAlign);
    if (program.weights.count(name)) return bad("weights table: {} appears twice", where);

    std::shared_ptr<Storage>& storage = storages[{offset, nbytes}];
    if (storage == nullptr)
      storage = Storage::borrow(const_cast<std::byte*>(data.data() + offset), nbytes, file,
                                /*writable=*/false);
    Tensor t(*dtype, shape, contiguous_strides(shape), 0, storage);
    auto in_bounds = check_view_in_bounds(t);
    if (!in_bounds.ok()) return in_bounds.error().with_context(where);
    program.weights.emplace(name, std::move(t));
  }

  // Every parameter, buffer and constant the signature names must be there, as the graph
  // types it (the verifier does not look at weights).
  for (const ir::InputSpec& spec : program.signature.inputs) {
    if (spec.kind != ir::InputKind::kParameter && spec.kind != ir::InputKind::kBuffer &&
        spec.kind != ir::InputKind::kTensorConstant)
      continue;
    auto it = program.weights.find(spec.target);
    if (it == program.weights.end())
      return bad("{} '{}' has no entry in the weights table", ir::input_kind_name(spec.kind),
                 spec.target);
    if (spec.value == nullptr || !spec.value->is_tensor()) continue;
    const ir::TensorType& type = spec.value->type();
    const Tensor& t = it->second;
    bool fits = t.dtype() == type.dtype && t.dim() == type.rank();
    for (int64_t d = 0; fits && d < t.dim(); ++d)
      if (auto c = type.sizes[d].constant()) fits = *c == t.size(d);
    if (!fits)
      return bad("weight '{}' is {}{} in the weights table but the graph expects {}", spec.target,
                 dtype_name(t.dtype()), shape_string(t.sizes()), type.to_string());
  }
  return ok_result();
}

Result<LoadedEngine> load_mapped(const std::shared_ptr<const MappedFile>& file,
                                 const backend::Target& target) {
  const std::span<const std::byte> bytes = file->bytes();
  const uint64_t size = bytes.size();
  const std::string_view magic = as_text(bytes.first(std::min<size_t>(size, kEngineMagic.size())));
  if (magic != kEngineMagic.substr(0, magic.size()))
    return bad("not a splice engine file (it does not start with \"SPLCENG\")");
  if (size < kVersionOffset + kVersionField)
    return bad("truncated: {} bytes, fewer than the {}-byte header", size, kEngineHeaderSize);

  // Versions before anything else: another splice may lay out the rest differently.
  const uint64_t format = get_le(bytes.data() + kFormatOffset, 4);
  const std::string version = stored_text(bytes, kVersionOffset, kVersionField);
  if (format != kPlanFormatVersion || version != kSpliceVersion)
    return bad(
        "written by splice {} (engine format {}), but this is splice {} (engine format {}); "
        "recompile the model with `splice compile`",
        version.empty() ? "?" : version, format, kSpliceVersion, kPlanFormatVersion);
  if (size < kEngineHeaderSize)
    return bad("truncated: {} bytes, fewer than the {}-byte header", size, kEngineHeaderSize);
  const uint64_t header_size = get_le(bytes.data() + kHeaderSizeOffset, 4);
  if (header_size != kEngineHeaderSize)
    return bad("header size is {}, but engine format {} has a {}-byte header", header_size,
               kPlanFormatVersion, kEngineHeaderSize);
  const std::string backend = stored_text(bytes, kBackendOffset, kBackendField);
  if (backend != target.name)
    return make_error(ErrorKind::kBadUsage,
                      "compiled for the {} backend, not {}: compile the model again for it "
                      "(`splice compile MODEL.pt2 -o ENGINE --device {}`)",
                      backend.empty() ? "?" : backend, target.name, target.name);

  const uint64_t stored = get_le(bytes.data() + kChecksumOffset, 8);
  const uint64_t actual = XXH3_64bits(bytes.data() + kSectionsOffset, size - kSectionsOffset);
  if (stored != actual) {
    // The usual cause is a partial copy or download; say so when the (unverified) section
    // table points past the end, which a truncated file shows.
    uint64_t declared_end = 0;
    for (size_t s = 0; s < kNumSections; ++s) {
      auto end = checked_add_u(get_le(bytes.data() + kSectionsOffset + 16 * s, 8),
                               get_le(bytes.data() + kSectionsOffset + 16 * s + 8, 8));
      declared_end = std::max(declared_end, end.value_or(~uint64_t{0}));
    }
    if (declared_end > size)
      return bad(
          "truncated or corrupt: the file has {} bytes but its sections end at byte {} "
          "(checksum mismatch: the header records {:016x}, the contents hash to {:016x})",
          size, declared_end, stored, actual);
    return bad(
        "checksum mismatch (the header records {:016x}, the contents hash to {:016x}): "
        "the file is corrupt",
        stored, actual);
  }

  std::array<std::span<const std::byte>, kNumSections> sections;
  uint64_t sections_end = kEngineHeaderSize;
  for (size_t s = 0; s < kNumSections; ++s) {
    const uint64_t offset = get_le(bytes.data() + kSectionsOffset + 16 * s, 8);
    const uint64_t length = get_le(bytes.data() + kSectionsOffset + 16 * s + 8, 8);
    auto end = checked_add_u(offset, length);
    if (offset < kEngineHeaderSize || !end || *end > size)
      return bad(
          "the {} section at offset {} with {} bytes lies outside the header's end ({}) "
          "and the file's {} bytes",
          kSectionNames[s], offset, length, kEngineHeaderSize, size);
    sections[s] = bytes.subspan(offset, length);
    sections_end = std::max(sections_end, *end);
  }
  if (get_le(bytes.data() + kSectionsOffset + 16 * kDataSection, 8) % kEngineWeightAlign != 0)
    return bad("the weight data section is not {}-byte aligned", kEngineWeightAlign);

  auto parsed = ir::parse_program(as_text(sections[kProgramSection]));
  if (!parsed.ok()) return bad("program section: {}", parsed.error().message());
  LoadedEngine engine{std::move(*parsed), Plan{}, {}};
  // A cache entry's key trailer (checksummed like the rest); other trailing bytes, as before,
  // carry nothing.
  if (size - sections_end == kEngineKeyMagic.size() + kEngineKeyDigits &&
      as_text(bytes.subspan(sections_end, kEngineKeyMagic.size())) == kEngineKeyMagic)
    engine.cache_key = std::string(
        as_text(bytes.subspan(sections_end + kEngineKeyMagic.size(), kEngineKeyDigits)));
  SPLICE_TRY(
      read_weights(file, as_text(sections[kTableSection]), sections[kDataSection], engine.program));
  auto verified = ir::verify(engine.program);
  if (!verified.ok()) return bad("program section: {}", verified.error().message());
  // The stored program carries the loader's shape checks; the ones its own types still leave
  // undecided are added, so a file that lost its checks block cannot skip them.
  auto checks = ir::check_types(engine.program);
  if (!checks.ok()) return bad("program section: {}", checks.error().message());
  for (ir::ShapeCheck& c : *checks) {
    auto& kept = engine.program.shape_checks;
    if (std::none_of(kept.begin(), kept.end(),
                     [&](const ir::ShapeCheck& k) { return k.condition == c.condition; }))
      kept.push_back(std::move(c));
  }

  const json plan_json =
      json::parse(as_text(sections[kPlanSection]), nullptr, /*allow_exceptions=*/false);
  if (plan_json.is_discarded()) return bad("engine plan: the plan section is not valid JSON");
  SPLICE_ASSIGN_OR_RETURN(engine.plan, plan_from_json(plan_json, engine.program.graph));
  // What the passes shared is history the stored program no longer shows (the duplicates are
  // gone); the plan carries it for the report, and the program gets it back from there.
  engine.program.shared = engine.plan.shared;
  engine.program.concatenated = engine.plan.concatenated;
  // The plan decides which storage the runtime writes in place; one that passes the checksum
  // but was edited (or made by a planner with other rules under the same version) could write
  // where it must not. Planning is deterministic and fast, so the stored plan must be exactly
  // the one this splice makes for the stored program.
  if (build_plan(engine.program, engine.plan.mode, target) != engine.plan)
    return bad(
        "engine plan: the stored plan is not the one splice {} makes for this program "
        "(the file was edited, or built by another build of splice); recompile it with "
        "`splice compile`",
        kSpliceVersion);
  return engine;
}

}  // namespace

Result<std::string> serialize_engine(const ir::Program& program, const Plan& plan) {
  SPLICE_ASSIGN_OR_RETURN(Layout layout, make_layout(program, plan, {}));
  std::string out;
  out.reserve(layout.total_size);
  SPLICE_ASSIGN_OR_RETURN(uint64_t checksum, emit(layout, [&](const void* data, size_t size) {
                            out.append(static_cast<const char*>(data), size);
                            return ok_result();
                          }));
  out.replace(kChecksumOffset, 8, checksum_bytes(checksum));
  return out;
}

Result<void> write_engine_file(const ir::Program& program, const Plan& plan,
                               const std::string& path, std::string_view cache_key) {
  SPLICE_ASSIGN_OR_RETURN(Layout layout, make_layout(program, plan, cache_key));
  SPLICE_ASSIGN_OR_RETURN(PendingFile file, PendingFile::create(path));
  SPLICE_ASSIGN_OR_RETURN(uint64_t checksum, emit(layout, [&](const void* data, size_t size) {
                            return file.write(data, size);
                          }));
  const std::string sum = checksum_bytes(checksum);
  SPLICE_TRY(file.write_at(kChecksumOffset, sum.data(), sum.size()));
  return commit_file(file);
}

Result<LoadedEngine> load_engine_file(const std::string& path, const backend::Target& target) {
  SPLICE_ASSIGN_OR_RETURN(auto file, MappedFile::open(path));
  auto engine = load_mapped(file, target);
  if (!engine.ok()) return engine.error().with_context(fmt::format("engine file '{}'", path));
  return engine;
}

bool is_engine_file(const std::string& path) {
  auto file = open_input_file(path);
  if (!file.ok()) return false;
  char magic[8];
  size_t n = 0;
  while (n < sizeof(magic)) {
    const ssize_t got = ::read(file->get(), magic + n, sizeof(magic) - n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    n += static_cast<size_t>(got);
  }
  return n == sizeof(magic) && std::string_view(magic, n) == kEngineMagic;
}

}  // namespace splice::plan
