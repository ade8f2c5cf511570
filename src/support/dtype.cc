// The DType tables: sizes, names in each notation and the export schema's numbering.
#include "support/dtype.h"

#include <iterator>

namespace splice {

namespace {
struct DTypeInfo {
  DType dtype;
  int size;
  std::string_view ir_name;
  std::string_view torch_name;
  std::string_view safetensors_name;
  int64_t schema_number;
};

constexpr DTypeInfo kInfos[] = {
    {DType::kUInt8, 1, "u8", "torch.uint8", "U8", 1},
    {DType::kInt8, 1, "i8", "torch.int8", "I8", 2},
    {DType::kInt16, 2, "i16", "torch.int16", "I16", 3},
    {DType::kInt32, 4, "i32", "torch.int32", "I32", 4},
    {DType::kInt64, 8, "i64", "torch.int64", "I64", 5},
    {DType::kFloat16, 2, "f16", "torch.float16", "F16", 6},
    {DType::kFloat32, 4, "f32", "torch.float32", "F32", 7},
    {DType::kFloat64, 8, "f64", "torch.float64", "F64", 8},
    {DType::kBool, 1, "bool", "torch.bool", "BOOL", 12},
    {DType::kBFloat16, 2, "bf16", "torch.bfloat16", "BF16", 13},
};

const DTypeInfo& info(DType dtype) { return kInfos[static_cast<int>(dtype)]; }

// kInfos is indexed by DType, and dtype_size's own table must agree with it.
constexpr bool tables_agree() {
  for (int i = 0; i < static_cast<int>(std::size(kInfos)); ++i)
    if (static_cast<int>(kInfos[i].dtype) != i || dtype_size(kInfos[i].dtype) != kInfos[i].size)
      return false;
  return true;
}
static_assert(tables_agree());
}  // namespace

std::string_view dtype_name(DType dtype) { return info(dtype).ir_name; }
std::string_view dtype_torch_name(DType dtype) { return info(dtype).torch_name; }
std::string_view dtype_safetensors_name(DType dtype) { return info(dtype).safetensors_name; }

std::optional<DType> dtype_from_name(std::string_view name) {
  for (const auto& i : kInfos)
    if (i.ir_name == name) return i.dtype;
  return std::nullopt;
}
std::optional<DType> dtype_from_safetensors_name(std::string_view name) {
  for (const auto& i : kInfos)
    if (i.safetensors_name == name) return i.dtype;
  return std::nullopt;
}
std::optional<DType> dtype_from_schema(int64_t scalar_type) {
  for (const auto& i : kInfos)
    if (i.schema_number == scalar_type) return i.dtype;
  return std::nullopt;
}

bool is_floating(DType d) {
  return d == DType::kFloat16 || d == DType::kBFloat16 || d == DType::kFloat32 ||
         d == DType::kFloat64;
}
bool is_integral(DType d) {
  return d == DType::kUInt8 || d == DType::kInt8 || d == DType::kInt16 || d == DType::kInt32 ||
         d == DType::kInt64;
}

}  // namespace splice
