// The safetensors reader and writer: validates an untrusted header (length within the file and
// at most 100 MB; a JSON object, read as a stream of events into compact entries; each name
// once; known dtypes, non-negative shapes of bounded rank, offsets inside the data area whose
// span matches the shape; all tensors tiling the data area exactly) with overflow-checked
// arithmetic, then copies each tensor into owned storage; and writes sorted, space-padded
// headers over contiguous data through the one file writer (support/file_writer.h).
#include "tensor/safetensors.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/checked_math.h"
#include "support/mapped_file.h"

namespace splice {

namespace {

using nlohmann::json;

// The data area is raw little-endian bytes copied as they are.
static_assert(std::endian::native == std::endian::little, "splice assumes a little-endian host");

constexpr size_t kMaxRank = 64;
// The reference implementation's limit (safetensors' MAX_HEADER_SIZE): a larger header is
// refused before any of it is parsed.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;
constexpr std::string_view kMetadataKey = "__metadata__";
constexpr std::string_view kKnownDTypes = "F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL";

// A JSON scalar as the header reader saw it: enough to check it and to quote it in a message.
struct JsonScalar {
  enum class Kind { kNull, kBoolean, kInteger, kString, kFloat, kContainer } kind = Kind::kNull;
  std::optional<int64_t> non_negative;  // the value, for integers in [0, INT64_MAX]
  std::string text;                     // as written (strings quoted), for messages

  const char* type_name() const {
    switch (kind) {
      case Kind::kNull:
        return "null";
      case Kind::kBoolean:
        return "boolean";
      case Kind::kInteger:
      case Kind::kFloat:
        return "number";
      case Kind::kString:
        return "string";
      case Kind::kContainer:
        return "container";
    }
    return "value";
  }
};

// One tensor of the header, checked against the data area; its dims live in Header::dims.
struct HeaderEntry {
  std::string key;
  int64_t begin = 0;
  int64_t end = 0;
  uint32_t dims_at = 0;  // a header of at most 100 MB has fewer dims than that
  uint16_t rank = 0;
  DType dtype = DType::kFloat32;
};

struct Header {
  std::vector<HeaderEntry> entries;
  std::vector<int64_t> dims;
  bool metadata_seen = false;
};

// The header as a stream of JSON events (nlohmann's SAX interface), checked as it goes and
// kept as compact entries: memory stays a small multiple of the header's size, however many
// keys it has (a DOM of millions of keys takes gigabytes). Each tensor entry is checked when
// its object closes, in the order the messages below follow. Values the format does not use
// (`__metadata__`, unknown fields of an entry) are skipped, nested or not.
class HeaderReader {
 public:
  HeaderReader(std::string_view name, uint64_t data_size, Header& out)
      : name_(name), data_size_(data_size), out_(out) {}

  const std::optional<Error>& error() const { return error_; }

  // ---- nlohmann::json SAX interface ----
  bool null() { return scalar({JsonScalar::Kind::kNull, std::nullopt, "null"}); }
  bool boolean(bool v) {
    return scalar({JsonScalar::Kind::kBoolean, std::nullopt, v ? "true" : "false"});
  }
  bool number_integer(json::number_integer_t v) {
    return scalar({JsonScalar::Kind::kInteger, v >= 0 ? std::optional<int64_t>(v) : std::nullopt,
                   std::to_string(v)});
  }
  bool number_unsigned(json::number_unsigned_t v) {
    const bool fits = v <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    return scalar({JsonScalar::Kind::kInteger,
                   fits ? std::optional<int64_t>(static_cast<int64_t>(v)) : std::nullopt,
                   std::to_string(v)});
  }
  bool number_float(json::number_float_t, const json::string_t& raw) {
    return scalar({JsonScalar::Kind::kFloat, std::nullopt, raw});
  }
  bool string(json::string_t& v) {
    return scalar({JsonScalar::Kind::kString, std::nullopt,
                   json(v).dump(-1, ' ', false, json::error_handler_t::replace)},
                  &v);
  }
  bool binary(json::binary_t&) { return scalar({JsonScalar::Kind::kNull, std::nullopt, "?"}); }
  bool start_object(size_t) { return open(/*object=*/true); }
  bool start_array(size_t) { return open(/*object=*/false); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(json::string_t& k) {
    if (skip_ > 0) return true;
    if (where_ == Where::kTopObject) {
      key_ = std::move(k);
      if (key_ == kMetadataKey) {
        if (out_.metadata_seen) return fail("\"{}\" appears twice in the header", kMetadataKey);
        out_.metadata_seen = true;
      }
      return true;
    }
    // Inside a tensor entry.
    field_ = Field::kOther;
    if (k == "dtype") field_ = Field::kDType;
    if (k == "shape") field_ = Field::kShape;
    if (k == "data_offsets") field_ = Field::kOffsets;
    if (field_ != Field::kOther) {
      const unsigned bit = 1u << static_cast<unsigned>(field_);
      if (fields_seen_ & bit)
        return fail("{}: tensor '{}': \"{}\" appears twice in its entry", name_, key_, k);
      fields_seen_ |= bit;
    }
    return true;
  }
  bool parse_error(size_t, const std::string&, const nlohmann::detail::exception&) {
    return false;  // the caller reports invalid JSON, unless error() says more
  }

 private:
  enum class Where { kTop, kTopObject, kEntry, kShape, kOffsets, kDone };
  enum class Field : unsigned { kDType, kShape, kOffsets, kOther };

  template <typename... Args>
  bool fail(fmt::format_string<Args...> format, Args&&... args) {
    if (!error_) error_ = make_error(ErrorKind::kBadInput, format, std::forward<Args>(args)...);
    return false;
  }

  // A whole value (scalar, or a container's first event) in the current place.
  bool scalar(JsonScalar v, json::string_t* string_value = nullptr) {
    if (skip_ > 0) return true;
    switch (where_) {
      case Where::kTop:
        return fail("{}: the header is a JSON {}, not an object", name_, v.type_name());
      case Where::kTopObject:
        if (key_ == kMetadataKey) return true;
        return fail("{}: tensor '{}': header entry is a JSON {}, not an object", name_, key_,
                    v.type_name());
      case Where::kEntry:
        if (field_ == Field::kDType && string_value != nullptr) dtype_ = std::move(*string_value);
        if (field_ == Field::kShape) shape_is_array_ = false;
        if (field_ == Field::kOffsets) offsets_is_array_ = false;
        return true;
      case Where::kShape:
        if (shape_count_ < kMaxRank && v.non_negative) out_.dims.push_back(*v.non_negative);
        if (!v.non_negative && !bad_dim_) bad_dim_ = std::make_pair(shape_count_, v.text);
        ++shape_count_;
        return true;
      case Where::kOffsets:
        if (offsets_.size() < 2) offsets_.push_back(std::move(v));
        ++offsets_count_;
        return true;
      case Where::kDone:
        return false;
    }
    return false;
  }

  bool open(bool object) {
    if (skip_ > 0) {
      ++skip_;
      return true;
    }
    switch (where_) {
      case Where::kTop:
        if (!object) return fail("{}: the header is a JSON array, not an object", name_);
        where_ = Where::kTopObject;
        return true;
      case Where::kTopObject:
        if (key_ == kMetadataKey) break;
        if (!object)
          return fail("{}: tensor '{}': header entry is a JSON array, not an object", name_, key_);
        start_entry();
        return true;
      case Where::kEntry:
        if (!object && field_ == Field::kShape) {
          where_ = Where::kShape;
          shape_is_array_ = true;
          return true;
        }
        if (!object && field_ == Field::kOffsets) {
          where_ = Where::kOffsets;
          offsets_is_array_ = true;
          return true;
        }
        if (field_ == Field::kShape) shape_is_array_ = false;
        if (field_ == Field::kOffsets) offsets_is_array_ = false;
        break;  // dtype or an unknown field: skipped
      case Where::kShape:
      case Where::kOffsets:
        // A container where a number belongs: counted, kept as a bad element, skipped.
        scalar({JsonScalar::Kind::kContainer, std::nullopt, object ? "{...}" : "[...]"});
        break;
      case Where::kDone:
        return false;
    }
    skip_ = 1;
    return true;
  }

  bool close() {
    if (skip_ > 0) {
      --skip_;
      return true;
    }
    switch (where_) {
      case Where::kShape:
      case Where::kOffsets:
        where_ = Where::kEntry;
        return true;
      case Where::kEntry:
        where_ = Where::kTopObject;
        return finish_entry();
      case Where::kTopObject:
        where_ = Where::kDone;
        return true;
      default:
        return false;
    }
  }

  void start_entry() {
    where_ = Where::kEntry;
    fields_seen_ = 0;
    dtype_.reset();
    shape_is_array_ = false;
    offsets_is_array_ = false;
    dims_at_ = out_.dims.size();
    shape_count_ = 0;
    bad_dim_.reset();
    offsets_.clear();
    offsets_count_ = 0;
  }

  // Checks the entry that just closed and keeps it.
  bool finish_entry() {
    if (!dtype_) return fail("{}: tensor '{}': missing or non-string \"dtype\"", name_, key_);
    const std::optional<DType> dtype = dtype_from_safetensors_name(*dtype_);
    if (!dtype)
      return fail("{}: tensor '{}' has unsupported dtype '{}' (splice reads {})", name_, key_,
                  *dtype_, kKnownDTypes);
    if (!shape_is_array_)
      return fail("{}: tensor '{}': missing or non-array \"shape\"", name_, key_);
    if (shape_count_ > kMaxRank)
      return fail("{}: tensor '{}' has rank {}, more than the {} splice accepts", name_, key_,
                  shape_count_, kMaxRank);
    if (bad_dim_)
      return fail("{}: tensor '{}': shape entry {} ({}) is not a non-negative integer", name_, key_,
                  bad_dim_->first, bad_dim_->second);
    if (!offsets_is_array_ || offsets_count_ != 2)
      return fail("{}: tensor '{}': \"data_offsets\" is not a pair [begin, end]", name_, key_);
    const std::optional<int64_t> begin = offsets_[0].non_negative;
    const std::optional<int64_t> end = offsets_[1].non_negative;
    if (!begin || !end)
      return fail("{}: tensor '{}': data_offsets [{},{}] are not non-negative integers", name_,
                  key_, offsets_[0].text, offsets_[1].text);
    if (*begin > *end)
      return fail("{}: tensor '{}': data_offsets [{}, {}] end before they begin", name_, key_,
                  *begin, *end);
    if (static_cast<uint64_t>(*end) > data_size_)
      return fail("{}: tensor '{}': data_offsets [{}, {}] lie outside the data area of {} bytes",
                  name_, key_, *begin, *end, data_size_);

    const Shape shape(out_.dims.begin() + static_cast<std::ptrdiff_t>(dims_at_), out_.dims.end());
    const std::optional<int64_t> numel = checked_numel(shape);
    const std::optional<int64_t> nbytes =
        numel ? checked_mul(*numel, dtype_size(*dtype)) : std::nullopt;
    if (!nbytes)
      return fail("{}: tensor '{}': shape {} of {} overflows a 64-bit byte count", name_, key_,
                  shape_string(shape), *dtype_);
    if (*end - *begin != *nbytes)
      return fail(
          "{}: tensor '{}': data_offsets [{}, {}] hold {} bytes, but shape {} of {} needs {}",
          name_, key_, *begin, *end, *end - *begin, shape_string(shape), *dtype_, *nbytes);
    out_.entries.push_back(HeaderEntry{std::move(key_), *begin, *end,
                                       static_cast<uint32_t>(dims_at_),
                                       static_cast<uint16_t>(shape_count_), *dtype});
    key_.clear();
    return true;
  }

  std::string_view name_;
  uint64_t data_size_;
  Header& out_;
  std::optional<Error> error_;

  Where where_ = Where::kTop;
  int skip_ = 0;  // > 0: inside a value being skipped, this many containers deep
  std::string key_;
  Field field_ = Field::kOther;

  // The entry being read.
  unsigned fields_seen_ = 0;
  std::optional<std::string> dtype_;
  bool shape_is_array_ = false;
  bool offsets_is_array_ = false;
  size_t dims_at_ = 0;
  size_t shape_count_ = 0;
  std::optional<std::pair<size_t, std::string>> bad_dim_;
  std::vector<JsonScalar> offsets_;
  size_t offsets_count_ = 0;
};

// Each name once, as in the reference implementation (a JSON object with a repeated key is
// ambiguous: which one is the tensor?).
Result<void> check_unique_keys(std::string_view name, const Header& header) {
  std::vector<const std::string*> keys;
  keys.reserve(header.entries.size());
  for (const HeaderEntry& e : header.entries) keys.push_back(&e.key);
  std::sort(keys.begin(), keys.end(), [](auto* a, auto* b) { return *a < *b; });
  for (size_t i = 1; i < keys.size(); ++i)
    SPLICE_CHECK_OR_RETURN(*keys[i] != *keys[i - 1], ErrorKind::kBadInput,
                           "{}: tensor '{}' appears twice in the header", name, *keys[i]);
  return ok_result();
}

// The tensors' bytes must tile the data area exactly, as the reference implementation
// requires: in order of their offsets each starts where the previous one ends (the first at
// 0), and the last ends at the end of the file. So no two tensors share bytes (a write into
// one cannot show up in another) and no bytes are unaccounted for.
Result<void> check_tiling(std::string_view name, const Header& header, uint64_t data_size) {
  std::vector<const HeaderEntry*> order;
  order.reserve(header.entries.size());
  for (const HeaderEntry& e : header.entries) order.push_back(&e);
  std::sort(order.begin(), order.end(), [](auto* a, auto* b) {
    return std::tie(a->begin, a->end) < std::tie(b->begin, b->end);
  });
  int64_t covered = 0;
  const HeaderEntry* previous = nullptr;
  for (const HeaderEntry* e : order) {
    if (e->begin < covered)
      return make_error(ErrorKind::kBadInput,
                        "{}: tensor '{}': data_offsets [{}, {}] overlap tensor '{}' at [{}, {}]",
                        name, e->key, e->begin, e->end, previous->key, previous->begin,
                        previous->end);
    if (e->begin > covered)
      return make_error(ErrorKind::kBadInput,
                        "{}: tensor '{}': data_offsets [{}, {}] leave bytes [{}, {}) of the data "
                        "area unused (each tensor must start where the previous one ends)",
                        name, e->key, e->begin, e->end, covered, e->begin);
    covered = e->end;
    previous = e;
  }
  SPLICE_CHECK_OR_RETURN(static_cast<uint64_t>(covered) == data_size, ErrorKind::kBadInput,
                         "{}: the tensors' data ends at byte {} of the data area, which has {} "
                         "bytes (trailing bytes belong to no tensor)",
                         name, covered, data_size);
  return ok_result();
}

// Copies one checked entry's bytes out of `data` (the data area).
// The tensor views `data` in place when `map` (the copy-on-write map `data` lies in) is given.
Result<Tensor> read_entry(std::string_view name, const Header& header, const HeaderEntry& e,
                          std::span<const std::byte> data,
                          const std::shared_ptr<const MappedFile>* map) {
  const auto dims_begin = header.dims.begin() + static_cast<std::ptrdiff_t>(e.dims_at);
  const Shape shape(dims_begin, dims_begin + static_cast<std::ptrdiff_t>(e.rank));
  const std::span<const std::byte> src = data.subspan(e.begin, e.end - e.begin);
  // A bool byte other than 0 or 1 would be undefined behaviour in any kernel reading it as bool.
  if (e.dtype == DType::kBool) {
    for (size_t i = 0; i < src.size(); ++i) {
      const auto b = static_cast<unsigned>(src[i]);
      SPLICE_CHECK_OR_RETURN(b <= 1, ErrorKind::kBadInput,
                             "{}: tensor '{}': bool element {} has byte value {} (must be 0 or 1)",
                             name, e.key, i, b);
    }
  }
  // A view of the map where the bytes lie as kernels need them (aligned to the element size);
  // the map is copy-on-write, so a call that updates the input in place never writes the file.
  if (map != nullptr && !src.empty() &&
      reinterpret_cast<uintptr_t>(src.data()) % dtype_size(e.dtype) == 0) {
    std::byte* at = (*map)->writable_data() + (src.data() - (*map)->bytes().data());
    auto storage = Storage::borrow(at, src.size(), *map, /*writable=*/true);
    return Tensor(e.dtype, shape, contiguous_strides(shape), 0, std::move(storage));
  }
  SPLICE_ASSIGN_OR_RETURN(Tensor t, Tensor::empty(e.dtype, shape));
  if (!src.empty()) std::memcpy(t.raw_data(), src.data(), src.size());
  return t;
}

// True when nlohmann would have to alter `s` to emit it as JSON, i.e. it is not valid UTF-8:
// "replace" substitutes U+FFFD for each bad byte while "ignore" drops it, so the two dumps
// differ exactly when there is one (a valid U+FFFD in `s` appears in both).
bool is_valid_utf8(const std::string& s) {
  const json j = s;
  return j.dump(-1, ' ', false, json::error_handler_t::replace) ==
         j.dump(-1, ' ', false, json::error_handler_t::ignore);
}

Result<std::map<std::string, Tensor>> parse(std::span<const std::byte> bytes, std::string_view name,
                                            const std::shared_ptr<const MappedFile>* map) {
  const uint64_t size = bytes.size();
  SPLICE_CHECK_OR_RETURN(size >= 8, ErrorKind::kBadInput,
                         "{}: truncated safetensors file: {} bytes, fewer than the 8-byte header "
                         "length",
                         name, size);
  uint64_t header_len = 0;
  std::memcpy(&header_len, bytes.data(), 8);
  SPLICE_CHECK_OR_RETURN(header_len <= kMaxHeaderBytes, ErrorKind::kBadInput,
                         "{}: header length {} is more than the {} bytes a safetensors header may "
                         "have",
                         name, header_len, kMaxHeaderBytes);
  SPLICE_CHECK_OR_RETURN(header_len <= size - 8, ErrorKind::kBadInput,
                         "{}: header length {} runs past the end of the file ({} bytes, {} after "
                         "the length field)",
                         name, header_len, size, size - 8);

  const std::span<const std::byte> data = bytes.subspan(8 + header_len);
  const char* header_begin = reinterpret_cast<const char*>(bytes.data() + 8);
  Header header;
  // Room for as many entries as the header could hold (each takes at least
  // `"":{"dtype":"","shape":[],"data_offsets":[0,0]},`, 48 bytes), so the vector never grows
  // by copying; only the pages the entries fill take memory.
  header.entries.reserve(header_len / 48 + 1);
  HeaderReader reader(name, data.size(), header);
  const bool parsed = json::sax_parse(header_begin, header_begin + header_len, &reader);
  if (reader.error()) return *reader.error();
  SPLICE_CHECK_OR_RETURN(parsed, ErrorKind::kBadInput, "{}: the {}-byte header is not valid JSON",
                         name, header_len);
  SPLICE_TRY(check_unique_keys(name, header));
  SPLICE_TRY(check_tiling(name, header, data.size()));

  std::map<std::string, Tensor> tensors;
  for (const HeaderEntry& e : header.entries) {
    SPLICE_ASSIGN_OR_RETURN(Tensor t, read_entry(name, header, e, data, map));
    tensors.emplace(e.key, std::move(t));
  }
  return tensors;
}

}  // namespace

Result<std::map<std::string, Tensor>> parse_safetensors(std::span<const std::byte> bytes,
                                                        std::string_view name) {
  return parse(bytes, name, nullptr);
}

Result<std::map<std::string, Tensor>> read_safetensors(const std::string& path) {
  SPLICE_ASSIGN_OR_RETURN(auto file, MappedFile::open(path));
  return parse(file->bytes(), path, nullptr);
}

Result<std::map<std::string, Tensor>> map_safetensors(const std::string& path) {
  SPLICE_ASSIGN_OR_RETURN(auto file, MappedFile::open_copy_on_write(path));
  return parse(file->bytes(), path, &file);
}

namespace {

// The header (length field, JSON padded to a multiple of 8) of a file holding `tensors` in
// key order, their elements contiguous.
Result<std::string> safetensors_header(const std::map<std::string, Tensor>& tensors,
                                       uint64_t* data_bytes) {
  json header = json::object();
  uint64_t offset = 0;
  for (const auto& [key, t] : tensors) {
    SPLICE_CHECK_OR_RETURN(t.defined(), ErrorKind::kBadUsage,
                           "cannot write tensor '{}': it is undefined (no storage)", key);
    SPLICE_CHECK_OR_RETURN(key != kMetadataKey, ErrorKind::kBadUsage,
                           "cannot write a tensor named '{}': the name is reserved", key);
    SPLICE_CHECK_OR_RETURN(is_valid_utf8(key), ErrorKind::kBadUsage,
                           "cannot write tensor '{}': its name is not valid UTF-8", key);
    const uint64_t end = offset + t.nbytes();
    json entry = json::object();
    entry["dtype"] = std::string(dtype_safetensors_name(t.dtype()));
    entry["shape"] = t.sizes();
    entry["data_offsets"] = json::array({offset, end});
    header[key] = std::move(entry);
    offset = end;
  }
  // nlohmann's default object is a std::map, so the keys come out sorted by name.
  std::string text = header.dump(-1, ' ', false, json::error_handler_t::replace);
  text.append((8 - text.size() % 8) % 8, ' ');
  const uint64_t header_len = text.size();
  *data_bytes = offset;
  return std::string(reinterpret_cast<const char*>(&header_len), 8) + text;
}

// Hands the file's bytes to `sink` in order: the header, then each tensor's elements straight
// from its storage (a non-contiguous view is copied first, one tensor at a time).
template <typename Sink>
Result<void> emit_safetensors(const std::map<std::string, Tensor>& tensors, const Sink& sink) {
  uint64_t data_bytes = 0;
  SPLICE_ASSIGN_OR_RETURN(const std::string head, safetensors_header(tensors, &data_bytes));
  SPLICE_TRY(sink(head.data(), head.size()));
  for (const auto& [key, t] : tensors) {
    if (t.numel() == 0) continue;
    Tensor contiguous = t;
    if (!t.is_contiguous()) {
      SPLICE_ASSIGN_OR_RETURN(contiguous, t.contiguous_copy());
    }
    SPLICE_TRY(sink(contiguous.raw_data(), contiguous.nbytes()));
  }
  return ok_result();
}

}  // namespace

Result<std::string> serialize_safetensors(const std::map<std::string, Tensor>& tensors) {
  std::string out;
  uint64_t data_bytes = 0;
  SPLICE_ASSIGN_OR_RETURN(const std::string head, safetensors_header(tensors, &data_bytes));
  out.reserve(head.size() + data_bytes);
  SPLICE_TRY(emit_safetensors(tensors, [&](const void* data, size_t size) -> Result<void> {
    out.append(static_cast<const char*>(data), size);
    return ok_result();
  }));
  return out;
}

Result<PendingFile> prepare_safetensors_file(const std::string& path,
                                             const std::map<std::string, Tensor>& tensors) {
  SPLICE_ASSIGN_OR_RETURN(PendingFile file, PendingFile::create(path));
  // Streamed: no copy of the whole file is ever held in memory.
  SPLICE_TRY(emit_safetensors(
      tensors, [&](const void* data, size_t size) { return file.write(data, size); }));
  return file;
}

Result<void> write_safetensors(const std::string& path,
                               const std::map<std::string, Tensor>& tensors) {
  SPLICE_ASSIGN_OR_RETURN(PendingFile file, prepare_safetensors_file(path, tensors));
  return commit_file(file);
}

}  // namespace splice
