#pragma once
// How a batched row-major product D[b] = A[b] · B[b] over strided views maps onto cuBLASLt's
// column-major strided-batch GEMM (plain C++, no CUDA: unit-tested by emulating cuBLAS's
// semantics on the host).
//
// cuBLAS sees column-major matrices. A row-major D (unit column stride) is the column-major
// Dᵀ, and Dᵀ = Bᵀ·Aᵀ, so the usual mapping swaps the operands (`swapped`); a D stored
// column-major (unit row stride, e.g. a transposed view) is computed unswapped. Each input
// is then read as stored (op N) or transposed (op T) when one of its two matrix strides is 1
// and the other a valid leading dimension; otherwise (a slice with a step, a broadcast row)
// it is first copied to a contiguous buffer in scratch. A D with no unit stride is computed
// into a contiguous scratch buffer and copied out. The batch dims of A, B and D are merged
// where all three allow; cuBLAS takes the innermost as its strided batch (stride 0 for a
// broadcast operand) and the rest become a loop of calls. When B has no batch (a weight) and
// A's and D's batch dims fold into their rows, the product is one GEMM with more rows
// (as PyTorch folds matmul and linear).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace splice::cuda {

// One operand of the row-major problem: element (batch index b, row i, col j) lies at
// element offset sum_d b_d * batch_strides[d] + i * row_stride + j * col_stride from its base.
struct MatrixView {
  std::vector<int64_t> batch_strides;  // one per problem batch dim (0 where broadcast)
  int64_t rows = 0, cols = 0;
  int64_t row_stride = 0, col_stride = 0;
};

struct GemmProblem {
  std::vector<int64_t> batch;  // the output's batch shape
  MatrixView a, b, d;          // a: m x k, b: k x n, d: m x n
  int64_t elem_size = 4;
};

// How cuBLASLt reads or writes one operand.
struct BlasOperand {
  int which = 0;                       // the problem operand: 0 = a, 1 = b, 2 = d
  bool transpose = false;              // CUBLAS_OP_T (never for d)
  int64_t rows = 0, cols = 0, ld = 1;  // the stored column-major matrix
  int64_t batch_stride = 0;            // elements between the matrices of the strided batch
};

struct GemmPlan {
  bool swapped = true;          // cuBLAS's first operand is the problem's b (D^T = B^T A^T)
  int64_t m = 0, n = 0, k = 0;  // cuBLAS's dims: its D is m x n column-major
  int64_t batch_count = 1;
  BlasOperand first, second, out;  // cuBLAS A, B, D
  // Merged batch dims (outermost first) and each problem operand's strides over them (those
  // of its contiguous copy when copied). The last dim is cuBLAS's batch; the others loop.
  std::vector<int64_t> batch_sizes;
  std::vector<int64_t> batch_strides[3];
  int64_t rows[3] = {0, 0, 0}, cols[3] = {0, 0, 0};  // the (folded) problem matrices
  int64_t row_stride[3] = {0, 0, 0}, col_stride[3] = {0, 0, 0};
  // The same before any copy: how the (folded, merged) problem operands lie in their own
  // memory (what a copy reads, or writes back for d).
  std::vector<int64_t> src_batch_strides[3];
  int64_t src_row_stride[3] = {0, 0, 0}, src_col_stride[3] = {0, 0, 0};
  // Which problem operands go through a contiguous copy in scratch ([batch_sizes.., rows,
  // cols] row-major) and where (byte offsets, 256-aligned); d's copy is written back.
  bool copied[3] = {false, false, false};
  size_t scratch_offset[3] = {0, 0, 0};
  size_t scratch_bytes = 0;
  bool folded = false;

  int64_t outer_calls() const;  // cuBLAS calls: product of all batch sizes but the last
  // The element offset of outer call `index` (row-major over batch_sizes without the last)
  // in problem operand `which` (of the original or of its copy).
  int64_t outer_offset(int which, int64_t index) const;
};

// The leading dimension with which the matrix L (rows x cols, L[i][j] at i * rs + j * cs) is
// column-major, if it is.
std::optional<int64_t> column_major_ld(int64_t rows, int64_t cols, int64_t rs, int64_t cs);

// Plans a problem with m, n, k >= 1 and a non-empty batch (every batch size >= 1).
GemmPlan plan_gemm(const GemmProblem& problem);

}  // namespace splice::cuda
