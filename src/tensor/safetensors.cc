// The safetensors reader and writer: validates an untrusted header (length within the file,
// a JSON object, known dtypes, non-negative shapes of bounded rank, offsets inside the data
// area whose span matches the shape) with overflow-checked arithmetic, then copies each
// tensor into owned storage; and writes sorted, space-padded headers over contiguous data.
#include "tensor/safetensors.h"

#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <utility>

#include <nlohmann/json.hpp>

#include "support/checked_math.h"
#include "support/mapped_file.h"

namespace splice {

namespace {

using nlohmann::json;

// The data area is raw little-endian bytes copied as they are.
static_assert(std::endian::native == std::endian::little, "splice assumes a little-endian host");

constexpr size_t kMaxRank = 64;
constexpr std::string_view kMetadataKey = "__metadata__";
constexpr std::string_view kKnownDTypes = "F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL";

// A JSON integer that fits in int64 and is >= 0; nullopt for anything else (floats, strings,
// negative numbers, unsigned values past INT64_MAX).
std::optional<int64_t> json_non_negative_int(const json& v) {
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
    return static_cast<int64_t>(u);
  }
  if (v.is_number_integer()) {
    const int64_t i = v.get<int64_t>();
    if (i < 0) return std::nullopt;
    return i;
  }
  return std::nullopt;
}

// Checks one header entry and copies its bytes out of `data` (the data area).
Result<Tensor> parse_entry(std::string_view name, const std::string& key, const json& entry,
                           std::span<const std::byte> data) {
  SPLICE_CHECK_OR_RETURN(entry.is_object(), ErrorKind::kBadInput,
                         "{}: tensor '{}': header entry is a JSON {}, not an object", name, key,
                         entry.type_name());

  auto dtype_it = entry.find("dtype");
  SPLICE_CHECK_OR_RETURN(dtype_it != entry.end() && dtype_it->is_string(), ErrorKind::kBadInput,
                         "{}: tensor '{}': missing or non-string \"dtype\"", name, key);
  const std::string& dtype_name = dtype_it->get_ref<const std::string&>();
  const std::optional<DType> dtype = dtype_from_safetensors_name(dtype_name);
  SPLICE_CHECK_OR_RETURN(dtype.has_value(), ErrorKind::kBadInput,
                         "{}: tensor '{}' has unsupported dtype '{}' (splice reads {})", name, key,
                         dtype_name, kKnownDTypes);

  auto shape_it = entry.find("shape");
  SPLICE_CHECK_OR_RETURN(shape_it != entry.end() && shape_it->is_array(), ErrorKind::kBadInput,
                         "{}: tensor '{}': missing or non-array \"shape\"", name, key);
  SPLICE_CHECK_OR_RETURN(shape_it->size() <= kMaxRank, ErrorKind::kBadInput,
                         "{}: tensor '{}' has rank {}, more than the {} splice accepts", name, key,
                         shape_it->size(), kMaxRank);
  Shape shape;
  shape.reserve(shape_it->size());
  for (size_t d = 0; d < shape_it->size(); ++d) {
    const std::optional<int64_t> size = json_non_negative_int((*shape_it)[d]);
    SPLICE_CHECK_OR_RETURN(size.has_value(), ErrorKind::kBadInput,
                           "{}: tensor '{}': shape entry {} ({}) is not a non-negative integer",
                           name, key, d, (*shape_it)[d].dump());
    shape.push_back(*size);
  }

  auto offsets_it = entry.find("data_offsets");
  SPLICE_CHECK_OR_RETURN(
      offsets_it != entry.end() && offsets_it->is_array() && offsets_it->size() == 2,
      ErrorKind::kBadInput, "{}: tensor '{}': \"data_offsets\" is not a pair [begin, end]", name,
      key);
  const std::optional<int64_t> begin = json_non_negative_int((*offsets_it)[0]);
  const std::optional<int64_t> end = json_non_negative_int((*offsets_it)[1]);
  SPLICE_CHECK_OR_RETURN(begin && end, ErrorKind::kBadInput,
                         "{}: tensor '{}': data_offsets {} are not non-negative integers", name,
                         key, offsets_it->dump());
  SPLICE_CHECK_OR_RETURN(*begin <= *end, ErrorKind::kBadInput,
                         "{}: tensor '{}': data_offsets [{}, {}] end before they begin", name, key,
                         *begin, *end);
  SPLICE_CHECK_OR_RETURN(static_cast<uint64_t>(*end) <= data.size(), ErrorKind::kBadInput,
                         "{}: tensor '{}': data_offsets [{}, {}] lie outside the data area of {} "
                         "bytes",
                         name, key, *begin, *end, data.size());

  const std::optional<int64_t> numel = checked_numel(shape);
  const std::optional<int64_t> nbytes =
      numel ? checked_mul(*numel, dtype_size(*dtype)) : std::nullopt;
  SPLICE_CHECK_OR_RETURN(nbytes.has_value(), ErrorKind::kBadInput,
                         "{}: tensor '{}': shape {} of {} overflows a 64-bit byte count", name, key,
                         shape_string(shape), dtype_name);
  SPLICE_CHECK_OR_RETURN(*end - *begin == *nbytes, ErrorKind::kBadInput,
                         "{}: tensor '{}': data_offsets [{}, {}] hold {} bytes, but shape {} of {} "
                         "needs {}",
                         name, key, *begin, *end, *end - *begin, shape_string(shape), dtype_name,
                         *nbytes);

  const std::span<const std::byte> src = data.subspan(*begin, *nbytes);
  // A bool byte other than 0 or 1 would be undefined behaviour in any kernel reading it as bool.
  if (*dtype == DType::kBool) {
    for (size_t i = 0; i < src.size(); ++i) {
      const auto b = static_cast<unsigned>(src[i]);
      SPLICE_CHECK_OR_RETURN(b <= 1, ErrorKind::kBadInput,
                             "{}: tensor '{}': bool element {} has byte value {} (must be 0 or 1)",
                             name, key, i, b);
    }
  }
  SPLICE_ASSIGN_OR_RETURN(Tensor t, Tensor::empty(*dtype, shape));
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

}  // namespace

Result<std::map<std::string, Tensor>> parse_safetensors(std::span<const std::byte> bytes,
                                                        std::string_view name) {
  const uint64_t size = bytes.size();
  SPLICE_CHECK_OR_RETURN(size >= 8, ErrorKind::kBadInput,
                         "{}: truncated safetensors file: {} bytes, fewer than the 8-byte header "
                         "length",
                         name, size);
  uint64_t header_len = 0;
  std::memcpy(&header_len, bytes.data(), 8);
  SPLICE_CHECK_OR_RETURN(header_len <= size - 8, ErrorKind::kBadInput,
                         "{}: header length {} runs past the end of the file ({} bytes, {} after "
                         "the length field)",
                         name, header_len, size, size - 8);

  const char* header_begin = reinterpret_cast<const char*>(bytes.data() + 8);
  const json header = json::parse(header_begin, header_begin + header_len, nullptr,
                                  /*allow_exceptions=*/false);
  SPLICE_CHECK_OR_RETURN(!header.is_discarded(), ErrorKind::kBadInput,
                         "{}: the {}-byte header is not valid JSON", name, header_len);
  SPLICE_CHECK_OR_RETURN(header.is_object(), ErrorKind::kBadInput,
                         "{}: the header is a JSON {}, not an object", name, header.type_name());

  const std::span<const std::byte> data = bytes.subspan(8 + header_len);
  std::map<std::string, Tensor> tensors;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == kMetadataKey) continue;
    SPLICE_ASSIGN_OR_RETURN(Tensor t, parse_entry(name, it.key(), it.value(), data));
    tensors.emplace(it.key(), std::move(t));
  }
  return tensors;
}

Result<std::map<std::string, Tensor>> read_safetensors(const std::string& path) {
  SPLICE_ASSIGN_OR_RETURN(auto file, MappedFile::open(path));
  return parse_safetensors(file->bytes(), path);
}

Result<std::string> serialize_safetensors(const std::map<std::string, Tensor>& tensors) {
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

  std::string out;
  out.reserve(8 + text.size() + offset);
  const uint64_t header_len = text.size();
  out.append(reinterpret_cast<const char*>(&header_len), 8);
  out += text;
  for (const auto& [key, t] : tensors) {
    if (t.numel() == 0) continue;
    Tensor contiguous = t;
    if (!t.is_contiguous()) {
      SPLICE_ASSIGN_OR_RETURN(contiguous, t.contiguous_copy());
    }
    out.append(reinterpret_cast<const char*>(contiguous.raw_data()), contiguous.nbytes());
  }
  return out;
}

Result<void> write_safetensors(const std::string& path,
                               const std::map<std::string, Tensor>& tensors) {
  SPLICE_ASSIGN_OR_RETURN(const std::string bytes, serialize_safetensors(tensors));
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  SPLICE_CHECK_OR_RETURN(f != nullptr, ErrorKind::kIo, "cannot create {}: {}", tmp,
                         std::strerror(errno));
  const size_t written = std::fwrite(bytes.data(), 1, bytes.size(), f);
  const int write_errno = errno;
  const bool closed = std::fclose(f) == 0;
  if (written != bytes.size() || !closed) {
    std::remove(tmp.c_str());
    return make_error(ErrorKind::kIo, "cannot write {} ({} of {} bytes written): {}", tmp, written,
                      bytes.size(), std::strerror(written != bytes.size() ? write_errno : errno));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int rename_errno = errno;
    std::remove(tmp.c_str());
    return make_error(ErrorKind::kIo, "cannot rename {} to {}: {}", tmp, path,
                      std::strerror(rename_errno));
  }
  return ok_result();
}

}  // namespace splice
