#pragma once
// CUDA C++ source for an ir::PointwiseProgram, compiled by NVRTC (nvrtc_compiler.h) and launched
// by pointwise_launch.h. One table maps each PointwiseFn to an expression per compute class;
// dtype conversions follow c10 (as cpu/cast.h does). The source is self-contained (16-bit
// float conversions through PTX, math through NVRTC's built-ins), so compiling it needs no
// toolkit headers at run time.
//
// Every program becomes four kernels over the same parameter block, so one compiled module
// serves every shape of the program (shapes, strides, pointers and constant values are kernel
// parameters, not source): splice_pw_contiguous (every operand dense or a single broadcast
// element; four elements per thread, with vector loads and stores when the host found the
// pointers aligned), splice_pw_rows4 (strided rows, each dense and aligned in its innermost
// dim: four elements per thread with vector loads and stores, the index math once for the
// four), splice_pw_strided32 and splice_pw_strided64 (any strides, index math in 32 or 64
// bits). What is structural — the program, and which operands start at a position read
// on the device — is in the source and so in the cache key.

#include <cstdint>
#include <string>
#include <vector>

#include "ir/pointwise.h"
#include "support/error.h"

namespace splice::cuda {

inline constexpr const char* kPointwiseContiguousKernel = "splice_pw_contiguous";
inline constexpr const char* kPointwiseStrided32Kernel = "splice_pw_strided32";
inline constexpr const char* kPointwiseStrided64Kernel = "splice_pw_strided64";
inline constexpr const char* kPointwiseRows4Kernel = "splice_pw_rows4";

// Most operands (inputs + outputs) one program may have: the parameter block stays under the
// 4 KiB kernel parameter limit.
inline constexpr int kMaxPointwiseOperands = 24;
inline constexpr int kMaxPointwiseConstants = 64;

// Structure beyond the program: per operand (inputs, then outputs), whether its start moves
// along one dim by a position read from device memory when the kernel runs.
struct PointwiseVariant {
  std::vector<bool> dynamic;  // empty: no operand moves
  bool is_dynamic(size_t operand) const { return operand < dynamic.size() && dynamic[operand]; }
  int dynamic_count() const;
};

// The kernels' parameter block, as 8-byte slots (the generated struct and the launcher's
// buffer share this layout):
//   numel, rank, sizes[8], ptr[operands], strides[operands][8], err, site,
//   consts[constants] (int64, or a double's bits), dyn[dynamic][5] {pos ptr, stride, size,
//   extent, dim}, vec.
struct PointwiseParamLayout {
  int operands = 0;
  int constants = 0;
  int dynamic = 0;

  int numel() const { return 0; }
  int rank() const { return 1; }
  int sizes() const { return 2; }
  int ptr() const { return 10; }
  int strides() const { return ptr() + operands; }
  int err() const { return strides() + operands * 8; }
  int site() const { return err() + 1; }
  int consts() const { return site() + 1; }
  int dyn() const { return consts() + constants; }
  int vec() const { return dyn() + dynamic * 5; }
  // Per dim: the 32-bit strided kernel's divisor of that dim's size (divisor_of below).
  int divs() const { return vec() + 1; }
  int slots() const { return divs() + 8; }
};

// Division by a dim's size without a divide instruction, for the 32-bit strided kernel, which
// turns each element's linear index into coordinates (a divide per dim per element made it
// compute-bound): for 1 <= d < 2^31 and n < 2^31, n / d == (umulhi(n, magic) + n) >> shift,
// where umulhi is the high 32 bits of the 64-bit product. Packed as magic | shift << 32.
uint64_t divisor_of(uint32_t d);

// The CUDA C++ source of `program` (validated first; errors are kInternal, or kUnsupportedOp
// for a function with no expression for its compute class).
Result<std::string> generate_pointwise_source(const ir::PointwiseProgram& program,
                                              const PointwiseVariant& variant);

// The program's nodes as `__device__ void compute(const Params& p, const long long li, const
// T0 a0, ..., T0& r0, ...)`: input k is `ak`, output k is stored to `rk`, `li` is the element's
// linear index, constants come from `p.consts[]` (a Params struct the caller defines). Other
// kernels reuse it (gemv_epilogue.h) so a group's arithmetic is generated in one place.
Result<std::string> pointwise_compute_function(const ir::PointwiseProgram& program);

// The C++ type the generated code stores a dtype in ("float", "sp_half", ...).
const char* pointwise_storage_type(DType dtype);

}  // namespace splice::cuda
