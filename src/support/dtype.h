#pragma once
// Tables over the element types splice knows, with the export schema's ScalarType numbering
// (torch/_export/serde/schema.py), which differs from c10's.

#include <cstdint>
#include <optional>
#include <string_view>

#include "splice/dtype.h"

namespace splice {

inline constexpr DType kAllDTypes[] = {
    DType::kUInt8,   DType::kInt8,    DType::kInt16,   DType::kInt32, DType::kInt64,
    DType::kFloat16, DType::kFloat32, DType::kFloat64, DType::kBool,  DType::kBFloat16};

// Bytes per element. Inline: every kernel and view asks, many times a call.
constexpr int dtype_size(DType dtype) {
  constexpr int kSizes[] = {1, 1, 2, 4, 8, 2, 4, 8, 1, 2};  // in DType's (and kAllDTypes') order
  return kSizes[static_cast<int>(dtype)];
}
// Short IR name: "u8", "i8", "i16", "i32", "i64", "f16", "f32", "f64", "bool", "bf16".
std::string_view dtype_name(DType dtype);
std::optional<DType> dtype_from_name(std::string_view name);
// PyTorch's name: "torch.float32", ...
std::string_view dtype_torch_name(DType dtype);
// safetensors' name: "F32", "BF16", "BOOL", ...
std::string_view dtype_safetensors_name(DType dtype);
std::optional<DType> dtype_from_safetensors_name(std::string_view name);
// The export schema's ScalarType number (FLOAT = 7, ...). Complex, float8 and unknown types
// give nullopt; the caller reports them.
std::optional<DType> dtype_from_schema(int64_t scalar_type);

bool is_floating(DType dtype);  // f16, bf16, f32, f64
bool is_integral(DType dtype);  // u8..i64 (not bool)

}  // namespace splice
