// Tests for the safetensors reader/writer: round trips of every dtype (0-d, empty and
// non-contiguous tensors included), the exact bytes written, a file laid out as the Python
// `safetensors` library writes it, every kind of corrupt file with its message, the reference
// implementation's limits (header size, names given twice, data that does not tile), and the
// memory a huge header costs. Writing files: safetensors_files_test.cc.
#include "tensor/safetensors.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace splice {
namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::path(::testing::TempDir()) / ("splice_st_" + name)).string();
}

template <typename T>
Tensor make_tensor(DType dtype, const Shape& sizes, const std::vector<T>& values) {
  Tensor t = Tensor::empty(dtype, sizes).value();
  EXPECT_EQ(static_cast<size_t>(t.numel()), values.size());
  EXPECT_EQ(sizeof(T), static_cast<size_t>(dtype_size(dtype)));
  if (!values.empty()) std::memcpy(t.raw_data(), values.data(), values.size() * sizeof(T));
  return t;
}

std::vector<uint8_t> tensor_bytes(const Tensor& t) {
  const Tensor c = t.is_contiguous() ? t : t.contiguous_copy().value();
  const auto* p = reinterpret_cast<const uint8_t*>(c.raw_data());
  return std::vector<uint8_t>(p, p + c.nbytes());
}

// A file from a header text and a data area, with the 8-byte little-endian length prefix.
std::string make_file(const std::string& header, const std::string& data = "") {
  std::string out(8, '\0');
  const uint64_t n = header.size();
  std::memcpy(out.data(), &n, 8);
  return out + header + data;
}

std::span<const std::byte> as_bytes(const std::string& s) {
  return std::as_bytes(std::span<const char>(s.data(), s.size()));
}

// Parses `file` expecting failure; returns the message.
std::string parse_error(const std::string& file, ErrorKind kind = ErrorKind::kBadInput) {
  auto r = parse_safetensors(as_bytes(file), "state.safetensors");
  EXPECT_FALSE(r.ok());
  if (r.ok()) return "";
  EXPECT_EQ(r.error().kind(), kind) << r.error().message();
  return r.error().message();
}

void expect_contains(const std::string& message, const std::string& part) {
  EXPECT_NE(message.find(part), std::string::npos) << "'" << message << "' lacks '" << part << "'";
}

TEST(Safetensors, RoundTripsEveryDType) {
  std::map<std::string, Tensor> tensors;
  for (DType dtype : kAllDTypes) {
    Tensor t = Tensor::empty(dtype, {2, 3}).value();
    auto* p = reinterpret_cast<uint8_t*>(t.raw_data());
    for (size_t i = 0; i < t.nbytes(); ++i) {
      p[i] = dtype == DType::kBool ? static_cast<uint8_t>(i % 2) : static_cast<uint8_t>(i * 37 + 1);
    }
    tensors.emplace(std::string("t_") + std::string(dtype_name(dtype)), t);
  }
  const std::string path = temp_path("every_dtype.safetensors");
  ASSERT_TRUE(write_safetensors(path, tensors).ok());
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  auto read = read_safetensors(path);
  ASSERT_TRUE(read.ok()) << read.error().message();
  ASSERT_EQ(read->size(), std::size(kAllDTypes));
  for (const auto& [key, t] : tensors) {
    const Tensor& r = read->at(key);
    EXPECT_EQ(r.dtype(), t.dtype()) << key;
    EXPECT_EQ(r.sizes(), (Shape{2, 3})) << key;
    EXPECT_EQ(r.strides(), (Shape{3, 1})) << key;
    EXPECT_EQ(tensor_bytes(r), tensor_bytes(t)) << key;
  }
  std::filesystem::remove(path);
}

TEST(Safetensors, RoundTripsZeroDimAndEmptyTensors) {
  std::map<std::string, Tensor> tensors;
  tensors["scalar"] = make_tensor<double>(DType::kFloat64, {}, {3.5});
  tensors["empty_rows"] = make_tensor<int32_t>(DType::kInt32, {0, 4}, {});
  tensors["empty_cols"] = make_tensor<uint16_t>(DType::kBFloat16, {3, 0}, {});
  tensors["flag"] = make_tensor<uint8_t>(DType::kBool, {}, {1});
  auto bytes = serialize_safetensors(tensors);
  ASSERT_TRUE(bytes.ok());
  auto read = parse_safetensors(as_bytes(*bytes));
  ASSERT_TRUE(read.ok()) << read.error().message();
  ASSERT_EQ(read->size(), 4u);
  EXPECT_EQ(read->at("scalar").dim(), 0);
  EXPECT_EQ(read->at("scalar").dtype(), DType::kFloat64);
  EXPECT_EQ(*read->at("scalar").data<double>(), 3.5);
  EXPECT_EQ(read->at("flag").dim(), 0);
  EXPECT_EQ(*read->at("flag").data<uint8_t>(), 1);
  EXPECT_EQ(read->at("empty_rows").sizes(), (Shape{0, 4}));
  EXPECT_EQ(read->at("empty_rows").dtype(), DType::kInt32);
  EXPECT_EQ(read->at("empty_cols").sizes(), (Shape{3, 0}));
  EXPECT_EQ(read->at("empty_cols").dtype(), DType::kBFloat16);
}

TEST(Safetensors, WritesNonContiguousViewsInLogicalOrder) {
  // base = [[0, 1, 2], [3, 4, 5]]; its transpose is [[0, 3], [1, 4], [2, 5]].
  Tensor base = make_tensor<float>(DType::kFloat32, {2, 3}, {0, 1, 2, 3, 4, 5});
  std::map<std::string, Tensor> tensors;
  tensors["transposed"] = base.view_as({3, 2}, {1, 3}, 0);
  tensors["column"] = base.view_as({2}, {3}, 2);  // base[:, 2] = [2, 5]
  auto bytes = serialize_safetensors(tensors);
  ASSERT_TRUE(bytes.ok());
  auto read = parse_safetensors(as_bytes(*bytes));
  ASSERT_TRUE(read.ok()) << read.error().message();
  const Tensor& t = read->at("transposed");
  EXPECT_EQ(t.sizes(), (Shape{3, 2}));
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(std::vector<float>(t.data<float>(), t.data<float>() + 6),
            (std::vector<float>{0, 3, 1, 4, 2, 5}));
  const Tensor& c = read->at("column");
  EXPECT_EQ(std::vector<float>(c.data<float>(), c.data<float>() + 2), (std::vector<float>{2, 5}));
}

TEST(Safetensors, WritesSortedSpacePaddedHeader) {
  std::map<std::string, Tensor> tensors;
  tensors["b"] = make_tensor<int64_t>(DType::kInt64, {1}, {7});
  tensors["a"] = make_tensor<float>(DType::kFloat32, {2}, {1.0f, 2.0f});
  auto bytes = serialize_safetensors(tensors);
  ASSERT_TRUE(bytes.ok());
  const std::string json = R"({"a":{"data_offsets":[0,8],"dtype":"F32","shape":[2]},)"
                           R"("b":{"data_offsets":[8,16],"dtype":"I64","shape":[1]}})";
  ASSERT_EQ(json.size(), 108u);
  const std::string header = json + std::string(4, ' ');  // 112 = 14 * 8
  std::string data(16, '\0');
  const float a[2] = {1.0f, 2.0f};
  const int64_t b = 7;
  std::memcpy(data.data(), a, 8);
  std::memcpy(data.data() + 8, &b, 8);
  EXPECT_EQ(*bytes, make_file(header, data));
}

// The layout the Python `safetensors` library (Rust core, 0.4 and later) writes for
// save_file({"b": torch.tensor([1, 2]), "a": torch.arange(6.).reshape(2, 3)},
// metadata={"format": "pt"}): __metadata__ first, tensors ordered by dtype (I64 before F32)
// then name, fields in the order dtype/shape/data_offsets, header space-padded to 8 bytes.
TEST(Safetensors, ReadsTheLayoutPythonSafetensorsWrites) {
  std::string json = R"({"__metadata__":{"format":"pt"},)"
                     R"("b":{"dtype":"I64","shape":[2],"data_offsets":[0,16]},)"
                     R"("a":{"dtype":"F32","shape":[2,3],"data_offsets":[16,40]}})";
  json.append((8 - json.size() % 8) % 8, ' ');
  std::string data(40, '\0');
  const int64_t b[2] = {1, 2};
  const float a[6] = {0, 1, 2, 3, 4, 5};
  std::memcpy(data.data(), b, 16);
  std::memcpy(data.data() + 16, a, 24);
  const std::string path = temp_path("python_layout.safetensors");
  {
    std::ofstream f(path, std::ios::binary);
    const std::string file = make_file(json, data);
    f.write(file.data(), static_cast<std::streamsize>(file.size()));
  }
  auto read = read_safetensors(path);
  ASSERT_TRUE(read.ok()) << read.error().message();
  ASSERT_EQ(read->size(), 2u);  // __metadata__ is not a tensor
  const Tensor& ta = read->at("a");
  EXPECT_EQ(ta.dtype(), DType::kFloat32);
  EXPECT_EQ(ta.sizes(), (Shape{2, 3}));
  EXPECT_EQ(std::vector<float>(ta.data<float>(), ta.data<float>() + 6),
            (std::vector<float>{0, 1, 2, 3, 4, 5}));
  const Tensor& tb = read->at("b");
  EXPECT_EQ(tb.dtype(), DType::kInt64);
  EXPECT_EQ(tb.data<int64_t>()[0], 1);
  EXPECT_EQ(tb.data<int64_t>()[1], 2);
  std::filesystem::remove(path);
}

TEST(Safetensors, ReadCopiesIntoOwnedWritableStorage) {
  std::string file = make_file(R"({"x":{"dtype":"I32","shape":[1],"data_offsets":[0,4]}})",
                               std::string("\x05\x00\x00\x00", 4));
  auto read = parse_safetensors(as_bytes(file));
  ASSERT_TRUE(read.ok()) << read.error().message();
  file[file.size() - 4] = '\x09';  // the source changes after reading
  const Tensor& x = read->at("x");
  EXPECT_EQ(x.data<int32_t>()[0], 5);
  EXPECT_TRUE(x.storage()->writable());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(x.raw_data()) % 64, 0u);
}

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// `splice run`'s inputs: views of the file's map, not copies (issue 34), and writing one (a
// call that updates its input in place) never reaches the file.
TEST(Safetensors, MapViewsTensorsInTheFilesPrivateMap) {
  const std::string path = temp_path("mapped.safetensors");
  std::map<std::string, Tensor> tensors;
  tensors["a"] = make_tensor<float>(DType::kFloat32, {2, 3}, {1, 2, 3, 4, 5, 6});
  tensors["b"] = make_tensor<int64_t>(DType::kInt64, {2}, {7, 8});
  ASSERT_TRUE(write_safetensors(path, tensors).ok());
  const std::string before = file_bytes(path);
  // The data area starts after the 8-byte length and the header, padded to 8 bytes.
  uint64_t header_len = 0;
  std::memcpy(&header_len, before.data(), 8);
  {
    auto mapped = map_safetensors(path);
    ASSERT_TRUE(mapped.ok()) << mapped.error().message();
    const Tensor& a = mapped->at("a");
    const Tensor& b = mapped->at("b");
    EXPECT_EQ(tensor_bytes(a), tensor_bytes(tensors["a"]));
    EXPECT_EQ(tensor_bytes(b), tensor_bytes(tensors["b"]));
    // b follows a in the data area: a's 24 bytes after the header, in the same map.
    EXPECT_EQ(b.raw_data() - a.raw_data(), 24);
    EXPECT_FALSE(a.storage()->owned()) << "a view of the map, not a copy";
    EXPECT_EQ(reinterpret_cast<uintptr_t>(a.raw_data()) % 4096, (8 + header_len) % 4096)
        << "the tensor starts where its bytes lie in the (page-aligned) map";
    a.data<float>()[0] = 100.0f;
    EXPECT_EQ(a.data<float>()[0], 100.0f);
  }
  EXPECT_EQ(file_bytes(path), before) << "writes to the map stay in the process";
  std::filesystem::remove(path);
}

TEST(Safetensors, MapCopiesATensorItCannotViewAligned) {
  // An int32 at data offset 2: a view would be misaligned for its kernels.
  const std::string path = temp_path("unaligned.safetensors");
  {
    std::ofstream out(path, std::ios::binary);
    std::string header = R"({"p":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},)"
                         R"("x":{"dtype":"I32","shape":[1],"data_offsets":[2,6]}})";
    header.append((8 - header.size() % 8) % 8, ' ');  // the data area starts 8-aligned
    out << make_file(header, std::string("\x01\x02\x05\x00\x00\x00", 6));
  }
  auto mapped = map_safetensors(path);
  ASSERT_TRUE(mapped.ok()) << mapped.error().message();
  EXPECT_EQ(mapped->at("x").data<int32_t>()[0], 5);
  EXPECT_TRUE(mapped->at("x").storage()->owned()) << "copied";
  EXPECT_FALSE(mapped->at("p").storage()->owned()) << "bytes need no alignment";
  std::filesystem::remove(path);
}

TEST(Safetensors, MapChecksAsReadDoes) {
  const std::string path = temp_path("bad_bool.safetensors");
  {
    std::ofstream out(path, std::ios::binary);
    out << make_file(R"({"m":{"dtype":"BOOL","shape":[1],"data_offsets":[0,1]}})",
                     std::string("\x02", 1));
  }
  auto mapped = map_safetensors(path);
  ASSERT_FALSE(mapped.ok());
  expect_contains(mapped.error().message(), "bool element 0 has byte value 2");
  auto missing = map_safetensors(temp_path("missing.safetensors"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind(), ErrorKind::kIo);
  std::filesystem::remove(path);
}

// The file writer streams from each tensor's storage; the bytes are serialize_safetensors'.
TEST(Safetensors, TheStreamedFileIsTheSerialisedBytes) {
  const std::string path = temp_path("streamed.safetensors");
  std::map<std::string, Tensor> tensors;
  tensors["z"] =
      make_tensor<float>(DType::kFloat32, {2, 2}, {1, 2, 3, 4}).view_as({2, 2}, {1, 2}, 0);
  tensors["e"] = Tensor::empty(DType::kInt8, {0}).value();
  tensors["s"] = make_tensor<double>(DType::kFloat64, {}, {2.5});
  ASSERT_TRUE(write_safetensors(path, tensors).ok());
  EXPECT_EQ(file_bytes(path), serialize_safetensors(tensors).value());
  std::filesystem::remove(path);
}

TEST(Safetensors, RejectsTruncatedHeaderLength) {
  const std::string m = parse_error(std::string("\x10\x00\x00", 3));
  expect_contains(m, "state.safetensors: truncated safetensors file: 3 bytes");
}

TEST(Safetensors, RejectsHeaderLengthPastTheEnd) {
  std::string file = make_file(R"({})");
  file[0] = '\x40';  // claims 64 header bytes; 2 follow
  const std::string m = parse_error(file);
  expect_contains(m, "header length 64 runs past the end of the file (10 bytes, 2 after");
  std::string huge(8, '\xff');
  expect_contains(parse_error(huge), "header length 18446744073709551615 is more than");
}

TEST(Safetensors, RejectsBadJson) {
  expect_contains(parse_error(make_file(R"({"x": {"dtype": )")),
                  "state.safetensors: the 16-byte header is not valid JSON");
  expect_contains(parse_error(make_file(R"([1, 2])")), "the header is a JSON array, not an object");
  expect_contains(parse_error(make_file(R"({"x": 3})")),
                  "tensor 'x': header entry is a JSON number, not an object");
  expect_contains(parse_error(make_file(R"({"x": {"shape": [1], "data_offsets": [0, 4]}})")),
                  "tensor 'x': missing or non-string \"dtype\"");
  expect_contains(parse_error(make_file(R"({"x": {"dtype": "F32", "data_offsets": [0, 4]}})")),
                  "tensor 'x': missing or non-array \"shape\"");
  expect_contains(parse_error(make_file(R"({"x": {"dtype": "F32", "shape": [1]}})", "abcd")),
                  "tensor 'x': \"data_offsets\" is not a pair");
  expect_contains(
      parse_error(make_file(R"({"x": {"dtype": "F32", "shape": [1], "data_offsets": [0]}})")),
      "tensor 'x': \"data_offsets\" is not a pair");
}

TEST(Safetensors, RejectsOffsetsOutsideTheDataArea) {
  const std::string m = parse_error(
      make_file(R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})", "12345678"));
  expect_contains(m,
                  "state.safetensors: tensor 'w': data_offsets [4, 12] lie outside the data area "
                  "of 8 bytes");
  expect_contains(
      parse_error(make_file(R"({"w": {"dtype": "F32", "shape": [0], "data_offsets": [8, 4]}})",
                            "12345678")),
      "tensor 'w': data_offsets [8, 4] end before they begin");
  expect_contains(parse_error(make_file(
                      R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [-4, 0]}})", "1234")),
                  "tensor 'w': data_offsets [-4,0] are not non-negative integers");
  expect_contains(
      parse_error(make_file(
          R"({"w": {"dtype": "U8", "shape": [1], "data_offsets": [0, 18446744073709551615]}})",
          "1")),
      "are not non-negative integers");
}

TEST(Safetensors, RejectsSizeMismatch) {
  const std::string m = parse_error(
      make_file(R"({"k": {"dtype": "F16", "shape": [2, 3], "data_offsets": [0, 8]}})", "12345678"));
  expect_contains(m,
                  "tensor 'k': data_offsets [0, 8] hold 8 bytes, but shape [2, 3] of F16 needs 12");
  // A shape whose byte count overflows int64 is caught before any comparison.
  expect_contains(
      parse_error(make_file(
          R"({"k": {"dtype": "F64", "shape": [4611686018427387904, 4], "data_offsets": [0, 8]}})",
          "12345678")),
      "tensor 'k': shape [4611686018427387904, 4] of F64 overflows");
}

TEST(Safetensors, RejectsBadShapes) {
  expect_contains(
      parse_error(make_file(R"({"s": {"dtype": "I8", "shape": [-1], "data_offsets": [0, 0]}})")),
      "tensor 's': shape entry 0 (-1) is not a non-negative integer");
  expect_contains(
      parse_error(make_file(R"({"s": {"dtype": "I8", "shape": [1.5], "data_offsets": [0, 0]}})")),
      "shape entry 0 (1.5) is not a non-negative integer");
  std::string rank65 = "[1";
  for (int i = 1; i < 65; ++i) rank65 += ",1";
  rank65 += "]";
  expect_contains(
      parse_error(make_file(
          R"({"s": {"dtype": "I8", "shape": )" + rank65 + R"(, "data_offsets": [0, 1]}})", "x")),
      "tensor 's' has rank 65, more than the 64 splice accepts");
}

TEST(Safetensors, RejectsUnknownDTypeNamingKeyAndDType) {
  const std::string m = parse_error(make_file(
      R"({"layers.0.scale": {"dtype": "F8_E4M3", "shape": [1], "data_offsets": [0, 1]}})", "x"));
  expect_contains(m, "state.safetensors: tensor 'layers.0.scale' has unsupported dtype 'F8_E4M3'");
  expect_contains(m, "F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL");
}

TEST(Safetensors, RejectsBoolBytesOtherThanZeroOrOne) {
  expect_contains(
      parse_error(make_file(R"({"m": {"dtype": "BOOL", "shape": [3], "data_offsets": [0, 3]}})",
                            std::string("\x01\x00\x02", 3))),
      "tensor 'm': bool element 2 has byte value 2");
}

// The limits of the reference implementation (safetensors' MAX_HEADER_SIZE, duplicate names,
// Metadata::validate's tiling): a file it refuses, splice refuses too.
TEST(Safetensors, RefusesAHeaderOverOneHundredMillionBytes) {
  // An empty object padded with spaces: valid JSON, just too long.
  std::string header = "{}";
  header.resize(100'000'001, ' ');
  std::string m = parse_error(make_file(header));
  expect_contains(m,
                  "state.safetensors: header length 100000001 is more than the 100000000 bytes "
                  "a safetensors header may have");
  // The length alone decides: it is refused before the file's size is looked at.
  std::string claim(8, '\0');
  const uint64_t n = 220'000'000;
  std::memcpy(claim.data(), &n, 8);
  expect_contains(parse_error(claim), "header length 220000000 is more than the 100000000 bytes");
  // The limit itself is fine.
  header.resize(100'000'000);
  auto ok = parse_safetensors(as_bytes(make_file(header)));
  ASSERT_TRUE(ok.ok()) << ok.error().message();
  EXPECT_TRUE(ok->empty());
}

TEST(Safetensors, RefusesANameGivenTwice) {
  expect_contains(parse_error(make_file(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
                                        R"("b":{"dtype":"U8","shape":[1],"data_offsets":[1,2]},)"
                                        R"("a":{"dtype":"U8","shape":[1],"data_offsets":[2,3]}})",
                                        "xyz")),
                  "state.safetensors: tensor 'a' appears twice in the header");
  expect_contains(
      parse_error(
          make_file(R"({"a":{"dtype":"U8","dtype":"I8","shape":[1],"data_offsets":[0,1]}})", "x")),
      "tensor 'a': \"dtype\" appears twice in its entry");
  expect_contains(parse_error(make_file(R"({"__metadata__":{},"__metadata__":{}})")),
                  "\"__metadata__\" appears twice in the header");
}

TEST(Safetensors, RefusesOverlappingData) {
  expect_contains(parse_error(make_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                        R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                                        std::string(12, 'd'))),
                  "tensor 'b': data_offsets [4, 12] overlap tensor 'a' at [0, 8]");
  // Two names for the same bytes overlap too.
  expect_contains(parse_error(make_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                                        R"("b":{"dtype":"I32","shape":[1],"data_offsets":[0,4]}})",
                                        "dddd")),
                  "data_offsets [0, 4] overlap tensor");
}

TEST(Safetensors, RefusesGapsAndTrailingBytes) {
  expect_contains(parse_error(make_file(R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},)"
                                        R"("b":{"dtype":"U8","shape":[2],"data_offsets":[4,6]}})",
                                        "dddddd")),
                  "tensor 'b': data_offsets [4, 6] leave bytes [2, 4) of the data area unused");
  expect_contains(
      parse_error(make_file(R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[2,4]}})", "dddd")),
      "tensor 'a': data_offsets [2, 4] leave bytes [0, 2) of the data area unused");
  expect_contains(
      parse_error(make_file(R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}})", "dddd")),
      "the tensors' data ends at byte 2 of the data area, which has 4 bytes");
  expect_contains(parse_error(make_file(R"({})", "dd")),
                  "the tensors' data ends at byte 0 of the data area, which has 2 bytes");
}

TEST(Safetensors, EmptyTensorsFitAnywhereInTheTiling) {
  auto r = parse_safetensors(
      as_bytes(make_file(R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},)"
                         R"("e0":{"dtype":"F32","shape":[0],"data_offsets":[0,0]},)"
                         R"("e1":{"dtype":"F32","shape":[3,0],"data_offsets":[2,2]},)"
                         R"("b":{"dtype":"U8","shape":[1],"data_offsets":[2,3]},)"
                         R"("e2":{"dtype":"I64","shape":[0],"data_offsets":[3,3]}})",
                         "abc")));
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->size(), 5u);
  EXPECT_EQ(r->at("e1").sizes(), (Shape{3, 0}));
}

TEST(Safetensors, SkipsMetadataAndUnknownFieldsHoweverNested) {
  auto r = parse_safetensors(as_bytes(make_file(
      R"({"__metadata__":{"format":"pt","x":[1,{"y":[]}]},)"
      R"("a":{"extra":{"deep":[[1],[2,{"z":null}]]},"dtype":"U8","shape":[1],"data_offsets":[0,1],"more":"x"}})",
      "q")));
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->size(), 1u);
  // Containers where numbers belong are quoted in the message.
  expect_contains(
      parse_error(make_file(R"({"a":{"dtype":"U8","shape":[[1]],"data_offsets":[0,1]}})", "q")),
      "shape entry 0 ([...]) is not a non-negative integer");
  expect_contains(
      parse_error(make_file(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":["0",{}]}})", "q")),
      "data_offsets [\"0\",{...}] are not non-negative integers");
  expect_contains(
      parse_error(make_file(R"({"a":{"dtype":7,"shape":[1],"data_offsets":[0,1]}})", "q")),
      "missing or non-string \"dtype\"");
  expect_contains(parse_error(make_file(R"({"a":[]})")),
                  "header entry is a JSON array, not an object");
  expect_contains(parse_error(make_file(R"("text")")),
                  "the header is a JSON string, not an object");
  expect_contains(
      parse_error(make_file(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}} x)", "q")),
      "header is not valid JSON");
}

// Peak memory of parsing a header of `keys` entries, less the memory in use before, in bytes;
// measured in a child process (VmHWM reset through /proc/self/clear_refs). `duplicate_last`
// repeats the first name at the end, so the file is refused only after all of it is read.
int64_t parse_peak_bytes(int keys, bool duplicate_last, size_t* header_bytes) {
  std::string header = "{";
  for (int i = 0; i < keys; ++i)
    header += fmt::format(
        R"("layers.{}.weight":{{"dtype":"U8","shape":[1],"data_offsets":[{},{}]}},)", i, i, i + 1);
  if (duplicate_last)
    header += R"("layers.0.weight":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}})";
  else
    header.back() = '}';
  *header_bytes = header.size();
  const std::string file = make_file(header, std::string(static_cast<size_t>(keys), '\x01'));
  header.clear();
  header.shrink_to_fit();

  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) return -1;
  const pid_t child = ::fork();
  if (child == 0) {
    auto status_kb = [](const char* field) -> int64_t {
      std::ifstream in("/proc/self/status");
      std::string line;
      while (std::getline(in, line))
        if (line.rfind(field, 0) == 0) return std::stoll(line.substr(std::strlen(field)));
      return -1;
    };
    { std::ofstream("/proc/self/clear_refs") << "5"; }  // VmHWM = VmRSS from here on
    const int64_t before = status_kb("VmRSS:");
    int64_t peak = -1;
    {
      auto r = parse_safetensors(as_bytes(file));
      if (r.ok() != !duplicate_last) ::_exit(3);
      peak = status_kb("VmHWM:");
    }
    const int64_t delta = (peak - before) * 1024;
    (void)!::write(pipe_fds[1], &delta, sizeof delta);
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  int64_t delta = -1;
  if (::read(pipe_fds[0], &delta, sizeof delta) != sizeof delta) delta = -1;
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? delta : -1;
}

TEST(Safetensors, HeaderMemoryIsASmallMultipleOfItsSize) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer's allocator changes what a parse costs";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  GTEST_SKIP() << "AddressSanitizer's allocator changes what a parse costs";
#endif
#endif
  // ~24 MB of header, 300,000 names. A JSON tree of it took over 400 MB. Read as events into
  // compact entries it costs less than the header itself, so a file refused after the whole
  // header was read (a name repeated at the end) stays under twice the header. Reading it
  // costs the tensors themselves on top: ~450 bytes of bookkeeping each (storage, shape,
  // strides, map node) for ~80 bytes of header, so one-byte tensors, the worst case, stay
  // under 8 times the header.
  constexpr int kKeys = 300'000;
  size_t header_bytes = 0;
  const int64_t refused = parse_peak_bytes(kKeys, /*duplicate_last=*/true, &header_bytes);
  ASSERT_GT(refused, 0) << "the child failed";
  EXPECT_LT(refused, static_cast<int64_t>(2 * header_bytes))
      << refused << " bytes to refuse a " << header_bytes << "-byte header";
  const int64_t read = parse_peak_bytes(kKeys, /*duplicate_last=*/false, &header_bytes);
  ASSERT_GT(read, 0) << "the child failed";
  EXPECT_LT(read, static_cast<int64_t>(8 * header_bytes))
      << read << " bytes to read a " << header_bytes << "-byte header of one-byte tensors";
  std::printf("a %zu-byte header: %.2f x its size to refuse, %.2f x to read\n", header_bytes,
              static_cast<double>(refused) / static_cast<double>(header_bytes),
              static_cast<double>(read) / static_cast<double>(header_bytes));
}

TEST(Safetensors, ReadNamesTheFile) {
  const std::string path = temp_path("bad_json.safetensors");
  {
    std::ofstream f(path, std::ios::binary);
    const std::string file = make_file("{nope}");
    f.write(file.data(), static_cast<std::streamsize>(file.size()));
  }
  auto r = read_safetensors(path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind(), ErrorKind::kBadInput);
  expect_contains(r.error().message(), path + ": the 6-byte header is not valid JSON");
  std::filesystem::remove(path);

  auto missing = read_safetensors(temp_path("does_not_exist.safetensors"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind(), ErrorKind::kIo);
}

TEST(Safetensors, WriteRejectsWhatTheFormatCannotHold) {
  std::map<std::string, Tensor> undefined{{"u", Tensor()}};
  auto r1 = serialize_safetensors(undefined);
  ASSERT_FALSE(r1.ok());
  EXPECT_EQ(r1.error().kind(), ErrorKind::kBadUsage);
  expect_contains(r1.error().message(), "tensor 'u': it is undefined");

  std::map<std::string, Tensor> reserved{
      {"__metadata__", Tensor::empty(DType::kInt8, {1}).value()}};
  auto r2 = serialize_safetensors(reserved);
  ASSERT_FALSE(r2.ok());
  expect_contains(r2.error().message(), "the name is reserved");

  std::map<std::string, Tensor> bad_name{{"x\xff", Tensor::empty(DType::kInt8, {1}).value()}};
  auto r3 = serialize_safetensors(bad_name);
  ASSERT_FALSE(r3.ok());
  expect_contains(r3.error().message(), "not valid UTF-8");

  // A valid non-ASCII name is fine.
  std::map<std::string, Tensor> utf8{{"caf\xc3\xa9", Tensor::empty(DType::kInt8, {1}).value()}};
  auto r4 = serialize_safetensors(utf8);
  ASSERT_TRUE(r4.ok());
  auto back = parse_safetensors(as_bytes(*r4));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->count("caf\xc3\xa9"), 1u);

  auto r5 = write_safetensors(temp_path("no_such_dir/x.safetensors"), utf8);
  ASSERT_FALSE(r5.ok());
  EXPECT_EQ(r5.error().kind(), ErrorKind::kIo);
  expect_contains(r5.error().message(), "cannot write '" + temp_path("no_such_dir/x.safetensors") +
                                            "': cannot open its folder");
}

}  // namespace
}  // namespace splice
