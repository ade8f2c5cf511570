// Mapping of a strided batched row-major product onto cuBLASLt's column-major strided-batch
// GEMM (see matmul_plan.h): folding, batch merging, orientation, op flags and leading dims,
// and the contiguous copies when a layout cannot be expressed.
#include "backends/cuda/matmul_plan.h"

#include <algorithm>

#include "backends/cuda/reduce_plan.h"

namespace splice::cuda {

namespace {

// L (rows x cols, strides rs, cs) as a cuBLAS operand read as stored (N) or transposed (T).
std::optional<BlasOperand> as_operand(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  if (auto ld = column_major_ld(rows, cols, rs, cs)) {
    BlasOperand op;
    op.transpose = false;
    op.rows = rows;
    op.cols = cols;
    op.ld = *ld;
    return op;
  }
  if (auto ld = column_major_ld(cols, rows, cs, rs)) {
    BlasOperand op;
    op.transpose = true;
    op.rows = cols;
    op.cols = rows;
    op.ld = *ld;
    return op;
  }
  return std::nullopt;
}

size_t align256(size_t v) { return (v + 255) / 256 * 256; }

}  // namespace

std::optional<int64_t> column_major_ld(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  if (rows != 1 && rs != 1) return std::nullopt;
  const int64_t min_ld = std::max<int64_t>(rows, 1);
  if (cols == 1) return min_ld;
  if (cs >= min_ld) return cs;
  return std::nullopt;
}

int64_t GemmPlan::outer_calls() const {
  int64_t calls = 1;
  for (size_t d = 0; d + 1 < batch_sizes.size(); ++d) calls *= batch_sizes[d];
  return calls;
}

int64_t GemmPlan::outer_offset(int which, int64_t index) const {
  int64_t off = 0;
  if (batch_sizes.size() < 2) return 0;
  for (int64_t d = static_cast<int64_t>(batch_sizes.size()) - 2; d >= 0; --d) {
    off += (index % batch_sizes[d]) * batch_strides[which][d];
    index /= batch_sizes[d];
  }
  return off;
}

GemmPlan plan_gemm(const GemmProblem& problem) {
  GemmPlan plan;
  const MatrixView* views[3] = {&problem.a, &problem.b, &problem.d};
  for (int w = 0; w < 3; ++w) {
    plan.rows[w] = views[w]->rows;
    plan.cols[w] = views[w]->cols;
    plan.row_stride[w] = views[w]->row_stride;
    plan.col_stride[w] = views[w]->col_stride;
  }
  std::vector<int64_t> sizes = problem.batch;
  std::vector<int64_t> strides[3] = {problem.a.batch_strides, problem.b.batch_strides,
                                     problem.d.batch_strides};
  // Fold A's and D's batch dims into their rows when B is shared by every batch.
  const bool b_shared =
      std::all_of(strides[1].begin(), strides[1].end(), [](int64_t s) { return s == 0; });
  if (!sizes.empty() && b_shared) {
    std::vector<int64_t> fold_sizes = sizes;
    fold_sizes.push_back(plan.rows[0]);
    std::vector<int64_t> fa = strides[0], fd = strides[2];
    fa.push_back(plan.row_stride[0]);
    fd.push_back(plan.row_stride[2]);
    merge_dims(fold_sizes, {&fa, &fd});
    if (fold_sizes.size() <= 1) {
      int64_t rows = plan.rows[0];
      for (int64_t s : sizes) rows *= s;
      if (fold_sizes.size() == 1) {
        plan.row_stride[0] = fa[0];
        plan.row_stride[2] = fd[0];
      }
      plan.rows[0] = plan.rows[2] = rows;
      plan.folded = true;
      sizes.clear();
      for (auto& s : strides) s.clear();
    }
  }
  merge_dims(sizes, {&strides[0], &strides[1], &strides[2]});
  plan.batch_sizes = sizes;
  for (int w = 0; w < 3; ++w) plan.batch_strides[w] = strides[w];
  for (int w = 0; w < 3; ++w) {
    plan.src_batch_strides[w] = strides[w];
    plan.src_row_stride[w] = plan.row_stride[w];
    plan.src_col_stride[w] = plan.col_stride[w];
  }
  plan.batch_count = sizes.empty() ? 1 : sizes.back();
  int64_t batch_total = 1;
  for (int64_t s : sizes) batch_total *= s;

  // Replaces problem operand w by a contiguous copy [batch_sizes.., rows, cols] in scratch.
  const auto copy_operand = [&](int w) {
    plan.copied[w] = true;
    plan.scratch_offset[w] = plan.scratch_bytes;
    const int64_t matrix = plan.rows[w] * plan.cols[w];
    plan.scratch_bytes += align256(static_cast<size_t>(batch_total * matrix) *
                                   static_cast<size_t>(problem.elem_size));
    plan.row_stride[w] = plan.cols[w];
    plan.col_stride[w] = 1;
    int64_t stride = matrix;
    for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
      plan.batch_strides[w][d] = stride;
      stride *= sizes[d];
    }
  };

  // D: row-major (swapped) if possible, else column-major, else a contiguous temporary.
  const int64_t m = plan.rows[2], n = plan.cols[2], k = plan.cols[0];
  std::optional<BlasOperand> out = as_operand(n, m, plan.col_stride[2], plan.row_stride[2]);  // D^T
  plan.swapped = true;
  if (!out || out->transpose) {
    out = as_operand(m, n, plan.row_stride[2], plan.col_stride[2]);
    plan.swapped = false;
    if (!out || out->transpose) {
      copy_operand(2);
      out = as_operand(n, m, plan.col_stride[2], plan.row_stride[2]);
      plan.swapped = true;
    }
  }
  plan.out = *out;
  plan.out.which = 2;

  // The inputs as cuBLAS's first and second operands, copied when needed.
  const auto operand = [&](int w, bool transposed_view) {
    // transposed_view: cuBLAS reads the problem operand's transpose (swapped orientation).
    const auto try_view = [&]() {
      return transposed_view
                 ? as_operand(plan.cols[w], plan.rows[w], plan.col_stride[w], plan.row_stride[w])
                 : as_operand(plan.rows[w], plan.cols[w], plan.row_stride[w], plan.col_stride[w]);
    };
    std::optional<BlasOperand> op = try_view();
    if (!op) {
      copy_operand(w);
      op = try_view();
    }
    op->which = w;
    return *op;
  };
  if (plan.swapped) {
    plan.first = operand(1, true);   // B^T: n x k
    plan.second = operand(0, true);  // A^T: k x m
    plan.m = n;
    plan.n = m;
  } else {
    plan.first = operand(0, false);   // A: m x k
    plan.second = operand(1, false);  // B: k x n
    plan.m = m;
    plan.n = n;
  }
  plan.k = k;
  for (BlasOperand* op : {&plan.first, &plan.second, &plan.out})
    op->batch_stride = sizes.empty() ? 0 : plan.batch_strides[op->which].back();
  return plan;
}

}  // namespace splice::cuda
