// The matmul family as GEMM steps (see matmul_exec.h): torch.matmul's shape rules (1-D
// operands, broadcast batch dims), mm/bmm/addmm/baddbmm/linear on top of them, the C operand
// broadcast into the output, the bias epilogue choice, and the step sequence run through a
// GemmSteps implementation.
#include "backends/cuda/matmul_exec.h"

#include <algorithm>

#include "tensor/tensor.h"

namespace splice::cuda {

namespace {

Shape shape_of(const DeviceTensor& t) {
  return Shape(t.sizes.begin(), t.sizes.begin() + std::clamp(t.rank, 0, kMaxDims));
}
Shape strides_of(const DeviceTensor& t) {
  return Shape(t.strides.begin(), t.strides.begin() + std::clamp(t.rank, 0, kMaxDims));
}

DeviceTensor make_view(void* data, DType dtype, const Shape& sizes, const Shape& strides) {
  DeviceTensor t;
  t.data = data;
  t.dtype = dtype;
  t.rank = static_cast<int>(sizes.size());
  for (int d = 0; d < t.rank; ++d) {
    t.sizes[d] = sizes[d];
    t.strides[d] = strides[d];
  }
  return t;
}

// Right-aligned numpy broadcast of two shapes; nullopt if they do not broadcast.
std::optional<Shape> broadcast(const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t x = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t y = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (x != y && x != 1 && y != 1) return std::nullopt;
    out[i] = x == 1 ? y : x;
  }
  return out;
}

// t's strides over `target` (right-aligned; 0 where t lacks the dim or has size 1); nullopt if
// t does not broadcast to target.
std::optional<Shape> broadcast_strides(const Shape& sizes, const Shape& strides,
                                       const Shape& target) {
  if (sizes.size() > target.size()) return std::nullopt;
  Shape out(target.size(), 0);
  const size_t lead = target.size() - sizes.size();
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == target[lead + i]) {
      out[lead + i] = sizes[i] == 1 ? 0 : strides[i];
    } else if (sizes[i] != 1) {
      return std::nullopt;
    }
  }
  return out;
}

struct Operand {  // a matrix operand with its batch dims (sizes, strides)
  Shape batch, batch_strides;
  int64_t rows = 0, cols = 0, rs = 0, cs = 0;
};

Operand as_matrix(const Shape& sizes, const Shape& strides) {
  Operand o;
  const size_t r = sizes.size();
  o.batch.assign(sizes.begin(), sizes.end() - 2);
  o.batch_strides.assign(strides.begin(), strides.end() - 2);
  o.rows = sizes[r - 2];
  o.cols = sizes[r - 1];
  o.rs = strides[r - 2];
  o.cs = strides[r - 1];
  return o;
}

bool is_reduced_or_single(DType d) {
  return d == DType::kFloat16 || d == DType::kBFloat16 || d == DType::kFloat32;
}

}  // namespace

DeviceTensor MatmulExec::operand_view(int w) const {
  Shape sizes = plan.batch_sizes, strides = plan.src_batch_strides[w];
  sizes.push_back(plan.rows[w]);
  sizes.push_back(plan.cols[w]);
  strides.push_back(plan.src_row_stride[w]);
  strides.push_back(plan.src_col_stride[w]);
  void* data = w == 0 ? const_cast<void*>(a_data) : w == 1 ? const_cast<void*>(b_data) : d_data;
  return make_view(data, dtype, sizes, strides);
}

DeviceTensor MatmulExec::copy_view(int w, void* data) const {
  Shape sizes = plan.batch_sizes;
  sizes.push_back(plan.rows[w]);
  sizes.push_back(plan.cols[w]);
  return make_view(data, dtype, sizes, contiguous_strides(sizes));
}

Result<MatmulExec> describe_matmul(std::string_view op, const MatmulArgs& args) {
  const DeviceTensor& x = args.a;
  const DeviceTensor& y = args.b;
  const DeviceTensor& out = args.out;
  for (const DeviceTensor* t : {&x, &y, &out, args.c}) {
    if (t == nullptr) continue;
    SPLICE_CHECK_OR_RETURN(t->rank >= 0 && t->rank <= kMaxDims, ErrorKind::kShapeMismatch,
                           "{}: operand of rank {} exceeds {}", op, t->rank, kMaxDims);
  }
  const Shape xs = shape_of(x), ys = shape_of(y), os = shape_of(out);
  SPLICE_CHECK_OR_RETURN(x.dtype == y.dtype, ErrorKind::kShapeMismatch,
                         "{}: expected both operands to have the same dtype, got {} and {}", op,
                         dtype_name(x.dtype), dtype_name(y.dtype));
  SPLICE_CHECK_OR_RETURN(x.dtype != DType::kBool, ErrorKind::kBadInput,
                         "{}: not implemented for bool tensors", op);
  SPLICE_CHECK_OR_RETURN(out.dtype == x.dtype, ErrorKind::kShapeMismatch,
                         "{}: the output dtype {} must be the operands' {}", op,
                         dtype_name(out.dtype), dtype_name(x.dtype));
  if (args.c) {
    SPLICE_CHECK_OR_RETURN(args.c->dtype == x.dtype, ErrorKind::kShapeMismatch,
                           "{}: {} has dtype {} but the operands have {}", op,
                           args.kind == MatmulKind::kLinear ? "bias" : "self",
                           dtype_name(args.c->dtype), dtype_name(x.dtype));
  }
  const auto two_d = [&](int rank) { return x.rank == rank && y.rank == rank; };
  Shape ys_eff = ys, yt_eff = strides_of(y);  // the right operand of the product
  switch (args.kind) {
    case MatmulKind::kMm:
    case MatmulKind::kAddmm:
      SPLICE_CHECK_OR_RETURN(two_d(2), ErrorKind::kShapeMismatch,
                             "{}: expects 2-D tensors, got shapes {} and {}", op, shape_string(xs),
                             shape_string(ys));
      break;
    case MatmulKind::kBmm:
    case MatmulKind::kBaddbmm:
      SPLICE_CHECK_OR_RETURN(two_d(3), ErrorKind::kShapeMismatch,
                             "{}: expects 3-D tensors, got shapes {} and {}", op, shape_string(xs),
                             shape_string(ys));
      SPLICE_CHECK_OR_RETURN(xs[0] == ys[0] && xs[2] == ys[1], ErrorKind::kShapeMismatch,
                             "{}: shapes {} and {} cannot be batch-multiplied", op,
                             shape_string(xs), shape_string(ys));
      break;
    case MatmulKind::kLinear:
      SPLICE_CHECK_OR_RETURN(y.rank == 1 || y.rank == 2, ErrorKind::kShapeMismatch,
                             "{}: weight must be 1-D or 2-D, got shape {}", op, shape_string(ys));
      if (y.rank == 2) {  // input @ weight.T
        ys_eff = {ys[1], ys[0]};
        yt_eff = {y.strides[1], y.strides[0]};
      }
      break;
    case MatmulKind::kMatmul:
      break;
  }
  SPLICE_CHECK_OR_RETURN(x.rank >= 1 && ys_eff.size() >= 1, ErrorKind::kShapeMismatch,
                         "{}: both arguments need to be at least 1-D, got shapes {} and {}", op,
                         shape_string(xs), shape_string(ys));
  // torch.matmul: a 1-D left operand is a row, a 1-D right operand a column.
  Shape a_sizes = xs, a_strides = strides_of(x);
  if (x.rank == 1) {
    a_sizes = {1, xs[0]};
    a_strides = {0, x.strides[0]};
  }
  Shape b_sizes = ys_eff, b_strides = yt_eff;
  if (ys_eff.size() == 1) {
    b_sizes = {ys_eff[0], 1};
    b_strides = {yt_eff[0], 0};
  }
  const Operand a = as_matrix(a_sizes, a_strides), b = as_matrix(b_sizes, b_strides);
  SPLICE_CHECK_OR_RETURN(b.rows == a.cols, ErrorKind::kShapeMismatch,
                         "{}: shapes {} and {} cannot be multiplied ({} != {})", op,
                         shape_string(xs), shape_string(ys), a.cols, b.rows);
  const auto batch_opt = broadcast(a.batch, b.batch);
  SPLICE_CHECK_OR_RETURN(batch_opt.has_value(), ErrorKind::kShapeMismatch,
                         "{}: the batch dims of {} and {} do not broadcast", op, shape_string(xs),
                         shape_string(ys));
  const Shape batch = *batch_opt;
  Shape out_shape = batch;
  if (x.rank > 1) out_shape.push_back(a.rows);
  if (ys_eff.size() > 1) out_shape.push_back(b.cols);
  SPLICE_CHECK_OR_RETURN(os == out_shape, ErrorKind::kShapeMismatch,
                         "{}: the output has shape {}, expected {}", op, shape_string(os),
                         shape_string(out_shape));
  // The output as [batch.., m, n] (size-1 dims where an operand was 1-D).
  const Shape out_strides = strides_of(out);
  Shape d_sizes = batch;
  Shape d_strides(out_strides.begin(), out_strides.begin() + static_cast<int64_t>(batch.size()));
  size_t next = batch.size();
  d_sizes.push_back(a.rows);
  d_strides.push_back(x.rank > 1 ? out_strides[next++] : 0);
  d_sizes.push_back(b.cols);
  d_strides.push_back(ys_eff.size() > 1 ? out_strides[next++] : 0);

  MatmulExec exec;
  exec.op = op;
  exec.dtype = x.dtype;
  exec.out = out;
  exec.a_data = x.data;
  exec.b_data = y.data;
  exec.d_data = out.data;
  GemmProblem& p = exec.problem;
  p.batch = batch;
  p.elem_size = dtype_size(x.dtype);
  const auto a_bs = broadcast_strides(a.batch, a.batch_strides, batch);
  const auto b_bs = broadcast_strides(b.batch, b.batch_strides, batch);
  p.a = {*a_bs, a.rows, a.cols, a.rs, a.cs};
  p.b = {*b_bs, b.rows, b.cols, b.rs, b.cs};
  p.d = {Shape(d_strides.begin(), d_strides.end() - 2), a.rows, b.cols,
         d_strides[d_strides.size() - 2], d_strides.back()};
  // Size-1 batch dims of the output address nothing: stride 0 keeps merging simple.
  for (size_t i = 0; i < batch.size(); ++i)
    if (batch[i] == 1) p.d.batch_strides[i] = 0;

  const bool has_scales = args.kind == MatmulKind::kAddmm || args.kind == MatmulKind::kBaddbmm;
  exec.alpha = has_scales ? args.alpha : 1.0;
  exec.beta = has_scales ? args.beta : 1.0;
  if (args.c) {
    const auto cs = broadcast_strides(shape_of(*args.c), strides_of(*args.c), os);
    SPLICE_CHECK_OR_RETURN(cs.has_value(), ErrorKind::kShapeMismatch,
                           "{}: {} of shape {} does not broadcast to the output shape {}", op,
                           args.kind == MatmulKind::kLinear ? "bias" : "self",
                           shape_string(shape_of(*args.c)), shape_string(os));
    exec.c_broadcast = make_view(args.c->data, x.dtype, os, *cs);
    exec.use_c = exec.beta != 0.0;
  }
  exec.empty = shape_numel(os) == 0;
  exec.k_zero = !exec.empty && a.cols == 0;
  if (exec.empty || exec.k_zero || !is_floating(x.dtype)) return exec;
  exec.plan = plan_gemm(p);
  // A [n] bias along the output's last dim, added by cuBLASLt (one rounding, no extra pass).
  if (exec.use_c && exec.beta == 1.0 && ys_eff.size() > 1 && is_reduced_or_single(x.dtype) &&
      (args.kind == MatmulKind::kLinear || args.kind == MatmulKind::kAddmm) && exec.plan.swapped &&
      !exec.plan.copied[2]) {
    const Shape cb = strides_of(exec.c_broadcast);
    bool vector = cb.back() == 1 || os.back() == 1;
    for (size_t i = 0; i + 1 < cb.size(); ++i) vector = vector && cb[i] == 0;
    const bool aligned = reinterpret_cast<uintptr_t>(args.c->data) % 16 == 0;
    exec.bias_epilogue = vector && aligned;
  }
  if (exec.use_c && ys_eff.size() > 1) {
    const Shape cb = strides_of(exec.c_broadcast);
    bool vector = true;
    for (size_t i = 0; i + 1 < cb.size(); ++i) vector = vector && (cb[i] == 0 || os[i] == 1);
    exec.c_vector = vector;
    exec.c_vector_stride = cb.empty() ? 0 : cb.back();
  }
  return exec;
}

GemvChoice choose_gemv(const MatmulExec& exec) {
  GemvChoice choice;
  const GemmPlan& plan = exec.plan;
  if (exec.empty || exec.k_zero || !is_reduced_or_single(exec.dtype)) {
    choice.reason = "not a float16, bfloat16 or float32 product with k > 0";
    return choice;
  }
  if (!plan.batch_sizes.empty()) {
    choice.reason = "batched: the right operand differs between batches";
    return choice;
  }
  if (plan.rows[0] > kGemvMaxRows) {
    choice.reason = std::to_string(plan.rows[0]) + " rows > " + std::to_string(kGemvMaxRows) +
                    ": a GEMM reuses each weight tile";
    return choice;
  }
  if (exec.use_c && !exec.c_vector) {
    choice.reason = "C varies along the rows (not a bias)";
    return choice;
  }
  GemvArgs& a = choice.args;
  a.dtype = exec.dtype;
  a.m = plan.rows[0];
  a.k = plan.cols[0];
  a.n = plan.cols[1];
  // Strides as the operands lie in memory (the plan's src_* strides: no copy is made).
  a.x = exec.a_data;
  a.x_rs = plan.src_row_stride[0];
  a.x_cs = plan.src_col_stride[0];
  a.w = exec.b_data;  // b is k x n: W(n, k) = b(k, n)
  a.w_ns = plan.src_col_stride[1];
  a.w_ks = plan.src_row_stride[1];
  a.out = exec.d_data;
  a.o_rs = plan.src_row_stride[2];
  a.o_cs = plan.src_col_stride[2];
  a.alpha = static_cast<float>(exec.alpha);
  if (exec.use_c) {
    a.bias = exec.c_broadcast.data;
    a.bias_s = exec.c_vector_stride;
    a.beta = static_cast<float>(exec.beta);
  }
  choice.use = true;
  choice.reason =
      std::to_string(a.m) + " rows <= " + std::to_string(kGemvMaxRows) + ": a read of the weight";
  return choice;
}

Result<void> execute_matmul(const MatmulExec& exec, const KernelScratch& scratch,
                            GemmSteps& steps) {
  if (exec.empty) return ok_result();
  if (exec.use_c && !exec.bias_epilogue) SPLICE_TRY(steps.copy(exec.out, exec.c_broadcast));
  if (exec.k_zero) return steps.scale(exec.out, exec.use_c ? exec.beta : 0.0);
  const GemmProblem& p = exec.problem;
  if (!is_floating(exec.dtype)) {
    IntGemmArgs args;
    args.dtype = exec.dtype;
    args.a = exec.a_data;
    args.b = exec.b_data;
    args.d = exec.d_data;
    args.batch = p.batch;
    args.a_batch_strides = p.a.batch_strides;
    args.b_batch_strides = p.b.batch_strides;
    args.d_batch_strides = p.d.batch_strides;
    args.m = p.a.rows;
    args.n = p.b.cols;
    args.k = p.a.cols;
    args.a_rs = p.a.row_stride;
    args.a_cs = p.a.col_stride;
    args.b_rs = p.b.row_stride;
    args.b_cs = p.b.col_stride;
    args.d_rs = p.d.row_stride;
    args.d_cs = p.d.col_stride;
    args.alpha = static_cast<int64_t>(exec.alpha);
    args.beta = exec.use_c ? static_cast<int64_t>(exec.beta) : 0;
    return steps.int_gemm(args);
  }
  const GemmPlan& plan = exec.plan;
  SPLICE_CHECK_OR_RETURN(
      plan.scratch_bytes == 0 || (scratch.data != nullptr && scratch.bytes >= plan.scratch_bytes),
      ErrorKind::kBackend,
      "{}: needs {} bytes of scratch for contiguous copies of operands whose "
      "layout cuBLASLt cannot read, got {}",
      exec.op, plan.scratch_bytes, scratch.data ? scratch.bytes : 0);
  char* base = static_cast<char*>(scratch.data);
  for (int w = 0; w < 2; ++w) {
    if (plan.copied[w])
      SPLICE_TRY(
          steps.copy(exec.copy_view(w, base + plan.scratch_offset[w]), exec.operand_view(w)));
  }
  if (plan.copied[2] && exec.use_c)  // C is in the output already: bring it into the temporary
    SPLICE_TRY(steps.copy(exec.copy_view(2, base + plan.scratch_offset[2]), exec.operand_view(2)));
  const int64_t es = dtype_size(exec.dtype);
  const auto pointer = [&](int w, int64_t call) -> char* {
    char* data = plan.copied[w] ? base + plan.scratch_offset[w]
                 : w == 0       ? static_cast<char*>(const_cast<void*>(exec.a_data))
                 : w == 1       ? static_cast<char*>(const_cast<void*>(exec.b_data))
                                : static_cast<char*>(exec.d_data);
    return data + plan.outer_offset(w, call) * es;
  };
  const void* bias = exec.bias_epilogue ? exec.c_broadcast.data : nullptr;
  double beta = exec.use_c && !exec.bias_epilogue ? exec.beta : 0.0;
  for (int64_t call = 0; call < plan.outer_calls(); ++call) {
    BlasCall c;
    c.dtype = exec.dtype;
    c.m = plan.m;
    c.n = plan.n;
    c.k = plan.k;
    c.batch = plan.batch_count;
    c.trans_a = plan.first.transpose;
    c.a = pointer(plan.first.which, call);
    c.lda = plan.first.ld;
    c.stride_a = plan.first.batch_stride;
    c.trans_b = plan.second.transpose;
    c.b = pointer(plan.second.which, call);
    c.ldb = plan.second.ld;
    c.stride_b = plan.second.batch_stride;
    c.d = pointer(2, call);
    c.ldd = plan.out.ld;
    c.stride_d = plan.out.batch_stride;
    c.alpha = exec.alpha;
    c.beta = beta;
    c.bias = bias;
    SPLICE_ASSIGN_OR_RETURN(bool done, steps.gemm(c));
    if (!done) {
      // No algorithm with the bias epilogue: add the bias as C instead (first call only; every
      // call has the same configuration).
      SPLICE_CHECK_OR_RETURN(bias != nullptr && call == 0, ErrorKind::kBackend,
                             "{}: cuBLASLt found no algorithm for m={} n={} k={} batch={}", exec.op,
                             c.m, c.n, c.k, c.batch);
      SPLICE_TRY(steps.copy(exec.out, exec.c_broadcast));
      bias = nullptr;
      beta = exec.beta;
      --call;
      continue;
    }
  }
  if (plan.copied[2])
    SPLICE_TRY(steps.copy(exec.operand_view(2), exec.copy_view(2, base + plan.scratch_offset[2])));
  return ok_result();
}

}  // namespace splice::cuda
