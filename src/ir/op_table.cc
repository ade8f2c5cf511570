// The op table: every supported export target with its ATen schema, verbatim from PyTorch's
// native_functions.yaml (alias annotations kept, since they cost nothing and document views).
// Adding an op: one line here, a CPU kernel, and a case in tests/cases.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>

#include "ir/ops.h"

namespace splice::ir {

namespace {

constexpr std::string_view kFactoryKw =
    "*, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None";

struct Entry {
  std::string_view target;
  std::string schema;
};

std::vector<Entry> entries() {
  const std::string fk(kFactoryKw);
  const std::string fk_mf = fk + ", MemoryFormat? memory_format=None";
  return {
      // Views and shape ops.
      {"aten.view.default", "(Tensor(a) self, SymInt[] size) -> Tensor(a)"},
      {"aten._unsafe_view.default", "(Tensor self, SymInt[] size) -> Tensor"},
      {"aten.reshape.default", "(Tensor(a) self, SymInt[] shape) -> Tensor(a)"},
      {"aten.permute.default", "(Tensor(a) self, int[] dims) -> Tensor(a)"},
      {"aten.transpose.int", "(Tensor(a) self, int dim0, int dim1) -> Tensor(a)"},
      {"aten.t.default", "(Tensor(a) self) -> Tensor(a)"},
      {"aten.unsqueeze.default", "(Tensor(a) self, int dim) -> Tensor(a)"},
      {"aten.squeeze.dim", "(Tensor(a) self, int dim) -> Tensor(a)"},
      {"aten.squeeze.dims", "(Tensor(a) self, int[] dim) -> Tensor(a)"},
      {"aten.squeeze.default", "(Tensor(a) self) -> Tensor(a)"},
      {"aten.expand.default", "(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)"},
      {"aten.slice.Tensor",
       "(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> "
       "Tensor(a)"},
      {"aten.select.int", "(Tensor(a) self, int dim, SymInt index) -> Tensor(a)"},
      {"aten.alias.default", "(Tensor(a) self) -> Tensor(a)"},
      {"aten.detach.default", "(Tensor(a) self) -> Tensor(a)"},
      // Autograd-only in the training IR; an alias for inference.
      {"aten.detach_.default", "(Tensor(a!) self) -> Tensor(a!)"},
      {"aten.split_with_sizes.default",
       "(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> Tensor(a)[]"},
      {"aten.split.Tensor", "(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]"},
      {"aten.unbind.int", "(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]"},
      // Copies and factories.
      {"aten.clone.default", "(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor"},
      {"aten.copy.default", "(Tensor self, Tensor src, bool non_blocking=False) -> Tensor"},
      {"aten._to_copy.default",
       "(Tensor self, " + fk + ", bool non_blocking=False, MemoryFormat? memory_format=None) -> "
       "Tensor"},
      {"aten.lift_fresh_copy.default", "(Tensor self) -> Tensor"},
      {"aten.empty.memory_format", "(SymInt[] size, " + fk_mf + ") -> Tensor"},
      {"aten.empty_like.default", "(Tensor self, " + fk_mf + ") -> Tensor"},
      {"aten.empty_permuted.default", "(SymInt[] size, int[] physical_layout, " + fk + ") -> Tensor"},
      {"aten.empty_strided.default", "(SymInt[] size, SymInt[] stride, " + fk + ") -> Tensor"},
      {"aten.zeros.default", "(SymInt[] size, " + fk + ") -> Tensor"},
      {"aten.ones.default", "(SymInt[] size, " + fk + ") -> Tensor"},
      {"aten.full.default", "(SymInt[] size, Scalar fill_value, " + fk + ") -> Tensor"},
      {"aten.zeros_like.default", "(Tensor self, " + fk_mf + ") -> Tensor"},
      {"aten.ones_like.default", "(Tensor self, " + fk_mf + ") -> Tensor"},
      {"aten.full_like.default", "(Tensor self, Scalar fill_value, " + fk_mf + ") -> Tensor"},
      {"aten.scalar_tensor.default", "(Scalar s, " + fk + ") -> Tensor"},
      {"aten.arange.default", "(Scalar end, " + fk + ") -> Tensor"},
      {"aten.arange.start", "(Scalar start, Scalar end, " + fk + ") -> Tensor"},
      {"aten.arange.start_step", "(Scalar start, Scalar end, Scalar step=1, " + fk + ") -> Tensor"},
      {"aten.fill.Scalar", "(Tensor self, Scalar value) -> Tensor"},
      {"aten.fill.Tensor", "(Tensor self, Tensor value) -> Tensor"},
      {"aten.repeat.default", "(Tensor self, SymInt[] repeats) -> Tensor"},
      {"aten.repeat_interleave.self_int",
       "(Tensor self, SymInt repeats, int? dim=None, *, SymInt? output_size=None) -> Tensor"},
      {"aten.repeat_interleave.Tensor", "(Tensor repeats, *, SymInt? output_size=None) -> Tensor"},
      {"aten.repeat_interleave.self_Tensor",
       "(Tensor self, Tensor repeats, int? dim=None, *, SymInt? output_size=None) -> Tensor"},
      {"aten.new_empty.default", "(Tensor self, SymInt[] size, " + fk + ") -> Tensor"},
      {"aten.new_zeros.default", "(Tensor self, SymInt[] size, " + fk + ") -> Tensor"},
      {"aten.new_ones.default", "(Tensor self, SymInt[] size, " + fk + ") -> Tensor"},
      {"aten.new_full.default",
       "(Tensor self, SymInt[] size, Scalar fill_value, " + fk + ") -> Tensor"},
      {"aten.tril.default", "(Tensor self, SymInt diagonal=0) -> Tensor"},
      {"aten.triu.default", "(Tensor self, SymInt diagonal=0) -> Tensor"},
      {"aten.flip.default", "(Tensor self, int[] dims) -> Tensor"},
      {"aten.roll.default", "(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor"},
      {"aten.constant_pad_nd.default", "(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor"},
      {"aten.pad.default",
       "(Tensor self, SymInt[] pad, str mode=\"constant\", float? value=None) -> Tensor"},
      {"aten.stack.default", "(Tensor[] tensors, int dim=0) -> Tensor"},
      // Pointwise arithmetic.
      {"aten.add.Tensor", "(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"},
      {"aten.add.Scalar", "(Tensor self, Scalar other, Scalar alpha=1) -> Tensor"},
      {"aten.sub.Tensor", "(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"},
      {"aten.sub.Scalar", "(Tensor self, Scalar other, Scalar alpha=1) -> Tensor"},
      {"aten.rsub.Tensor", "(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"},
      {"aten.rsub.Scalar", "(Tensor self, Scalar other, Scalar alpha=1) -> Tensor"},
      {"aten.mul.Tensor", "(Tensor self, Tensor other) -> Tensor"},
      {"aten.mul.Scalar", "(Tensor self, Scalar other) -> Tensor"},
      {"aten.div.Tensor", "(Tensor self, Tensor other) -> Tensor"},
      {"aten.div.Scalar", "(Tensor self, Scalar other) -> Tensor"},
      {"aten.div.Tensor_mode", "(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor"},
      {"aten.div.Scalar_mode", "(Tensor self, Scalar other, *, str? rounding_mode) -> Tensor"},
      {"aten.remainder.Tensor", "(Tensor self, Tensor other) -> Tensor"},
      {"aten.remainder.Scalar", "(Tensor self, Scalar other) -> Tensor"},
      {"aten.pow.Tensor_Scalar", "(Tensor self, Scalar exponent) -> Tensor"},
      {"aten.pow.Tensor_Tensor", "(Tensor self, Tensor exponent) -> Tensor"},
      {"aten.pow.Scalar", "(Scalar self, Tensor exponent) -> Tensor"},
      {"aten.fmod.Tensor", "(Tensor self, Tensor other) -> Tensor"},
      {"aten.fmod.Scalar", "(Tensor self, Scalar other) -> Tensor"},
      {"aten.floor_divide.default", "(Tensor self, Tensor other) -> Tensor"},
      {"aten.atan2.default", "(Tensor self, Tensor other) -> Tensor"},
      {"aten.bitwise_and.Tensor", "(Tensor self, Tensor other) -> Tensor"},
      {"aten.bitwise_and.Scalar", "(Tensor self, Scalar other) -> Tensor"},
      {"aten.bitwise_or.Tensor", "(Tensor self, Tensor other) -> Tensor"},
      {"aten.bitwise_or.Scalar", "(Tensor self, Scalar other) -> Tensor"},
      {"aten.bitwise_xor.Tensor", "(Tensor self, Tensor other) -> Tensor"},
      {"aten.bitwise_xor.Scalar", "(Tensor self, Scalar other) -> Tensor"},
      {"aten.__and__.Tensor", "(Tensor self, Tensor other) -> Tensor"},
      {"aten.__and__.Scalar", "(Tensor self, Scalar other) -> Tensor"},
      {"aten.__or__.Tensor", "(Tensor self, Tensor other) -> Tensor"},
      {"aten.__or__.Scalar", "(Tensor self, Scalar other) -> Tensor"},
      {"aten.__xor__.Tensor", "(Tensor self, Tensor other) -> Tensor"},
      {"aten.__xor__.Scalar", "(Tensor self, Scalar other) -> Tensor"},
      {"aten.masked_fill.Scalar", "(Tensor self, Tensor mask, Scalar value) -> Tensor"},
      {"aten.masked_fill.Tensor", "(Tensor self, Tensor mask, Tensor value) -> Tensor"},
      {"aten.minimum.default", "(Tensor self, Tensor other) -> Tensor"},
      {"aten.maximum.default", "(Tensor self, Tensor other) -> Tensor"},
      {"aten.clamp.default", "(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor"},
      {"aten.clamp.Tensor", "(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor"},
      {"aten.clamp_min.default", "(Tensor self, Scalar min) -> Tensor"},
      {"aten.clamp_max.default", "(Tensor self, Scalar max) -> Tensor"},
      {"aten.clamp_min.Tensor", "(Tensor self, Tensor min) -> Tensor"},
      {"aten.clamp_max.Tensor", "(Tensor self, Tensor max) -> Tensor"},
      {"aten.where.self", "(Tensor condition, Tensor self, Tensor other) -> Tensor"},
      {"aten.where.ScalarSelf", "(Tensor condition, Scalar self, Tensor other) -> Tensor"},
      {"aten.where.ScalarOther", "(Tensor condition, Tensor self, Scalar other) -> Tensor"},
      {"aten.where.Scalar", "(Tensor condition, Scalar self, Scalar other) -> Tensor"},
      // Pointwise unary.
      {"aten.neg.default", "(Tensor self) -> Tensor"},
      {"aten.abs.default", "(Tensor self) -> Tensor"},
      {"aten.sqrt.default", "(Tensor self) -> Tensor"},
      {"aten.rsqrt.default", "(Tensor self) -> Tensor"},
      {"aten.exp.default", "(Tensor self) -> Tensor"},
      {"aten.log.default", "(Tensor self) -> Tensor"},
      {"aten.sin.default", "(Tensor self) -> Tensor"},
      {"aten.cos.default", "(Tensor self) -> Tensor"},
      {"aten.tanh.default", "(Tensor self) -> Tensor"},
      {"aten.sigmoid.default", "(Tensor self) -> Tensor"},
      {"aten.silu.default", "(Tensor self) -> Tensor"},
      {"aten.relu.default", "(Tensor self) -> Tensor"},
      {"aten.gelu.default", "(Tensor self, *, str approximate='none') -> Tensor"},
      {"aten.erf.default", "(Tensor self) -> Tensor"},
      {"aten.reciprocal.default", "(Tensor self) -> Tensor"},
      {"aten.log1p.default", "(Tensor self) -> Tensor"},
      {"aten.expm1.default", "(Tensor self) -> Tensor"},
      {"aten.log2.default", "(Tensor self) -> Tensor"},
      {"aten.sinh.default", "(Tensor self) -> Tensor"},
      {"aten.cosh.default", "(Tensor self) -> Tensor"},
      {"aten.asin.default", "(Tensor self) -> Tensor"},
      {"aten.acos.default", "(Tensor self) -> Tensor"},
      {"aten.atan.default", "(Tensor self) -> Tensor"},
      {"aten.sign.default", "(Tensor self) -> Tensor"},
      {"aten.isnan.default", "(Tensor self) -> Tensor"},
      {"aten.isinf.default", "(Tensor self) -> Tensor"},
      {"aten.hardtanh.default", "(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor"},
      {"aten.leaky_relu.default", "(Tensor self, Scalar negative_slope=0.01) -> Tensor"},
      {"aten.softplus.default", "(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor"},
      {"aten.elu.default",
       "(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor"},
      {"aten.floor.default", "(Tensor self) -> Tensor"},
      {"aten.ceil.default", "(Tensor self) -> Tensor"},
      {"aten.round.default", "(Tensor self) -> Tensor"},
      {"aten.round.decimals", "(Tensor self, *, int decimals) -> Tensor"},
      {"aten.bitwise_not.default", "(Tensor self) -> Tensor"},
      {"aten.logical_not.default", "(Tensor self) -> Tensor"},
      {"aten.logical_and.default", "(Tensor self, Tensor other) -> Tensor"},
      {"aten.logical_or.default", "(Tensor self, Tensor other) -> Tensor"},
      {"aten.logical_xor.default", "(Tensor self, Tensor other) -> Tensor"},
      // Comparisons.
      {"aten.eq.Tensor", "(Tensor self, Tensor other) -> Tensor"},
      {"aten.eq.Scalar", "(Tensor self, Scalar other) -> Tensor"},
      {"aten.ne.Tensor", "(Tensor self, Tensor other) -> Tensor"},
      {"aten.ne.Scalar", "(Tensor self, Scalar other) -> Tensor"},
      {"aten.lt.Tensor", "(Tensor self, Tensor other) -> Tensor"},
      {"aten.lt.Scalar", "(Tensor self, Scalar other) -> Tensor"},
      {"aten.le.Tensor", "(Tensor self, Tensor other) -> Tensor"},
      {"aten.le.Scalar", "(Tensor self, Scalar other) -> Tensor"},
      {"aten.gt.Tensor", "(Tensor self, Tensor other) -> Tensor"},
      {"aten.gt.Scalar", "(Tensor self, Scalar other) -> Tensor"},
      {"aten.ge.Tensor", "(Tensor self, Tensor other) -> Tensor"},
      {"aten.ge.Scalar", "(Tensor self, Scalar other) -> Tensor"},
      // Reductions.
      {"aten.any.default", "(Tensor self) -> Tensor"},
      {"aten.any.dim", "(Tensor self, int dim, bool keepdim=False) -> Tensor"},
      {"aten.any.dims", "(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor"},
      {"aten.all.default", "(Tensor self) -> Tensor"},
      {"aten.all.dim", "(Tensor self, int dim, bool keepdim=False) -> Tensor"},
      {"aten.all.dims", "(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor"},
      {"aten.sum.default", "(Tensor self, *, ScalarType? dtype=None) -> Tensor"},
      {"aten.sum.dim_IntList",
       "(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"},
      {"aten.mean.default", "(Tensor self, *, ScalarType? dtype=None) -> Tensor"},
      {"aten.mean.dim",
       "(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"},
      {"aten.amax.default", "(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor"},
      {"aten.amin.default", "(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor"},
      {"aten.max.dim",
       "(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)"},
      {"aten.argmax.default", "(Tensor self, int? dim=None, bool keepdim=False) -> Tensor"},
      {"aten.min.dim",
       "(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)"},
      {"aten.argmin.default", "(Tensor self, int? dim=None, bool keepdim=False) -> Tensor"},
      {"aten.max.default", "(Tensor self) -> Tensor"},
      {"aten.min.default", "(Tensor self) -> Tensor"},
      {"aten.prod.default", "(Tensor self, *, ScalarType? dtype=None) -> Tensor"},
      {"aten.prod.dim_int",
       "(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"},
      {"aten.var.dim",
       "(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> Tensor"},
      {"aten.var.correction",
       "(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> "
       "Tensor"},
      {"aten.std.dim",
       "(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> Tensor"},
      {"aten.std.correction",
       "(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> "
       "Tensor"},
      {"aten.cumsum.default", "(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor"},
      {"aten.var_mean.correction",
       "(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> "
       "(Tensor, Tensor)"},
      // Matrix products, normalisation, attention.
      {"aten.mm.default", "(Tensor self, Tensor mat2) -> Tensor"},
      {"aten.bmm.default", "(Tensor self, Tensor mat2) -> Tensor"},
      {"aten.addmm.default",
       "(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor"},
      {"aten.matmul.default", "(Tensor self, Tensor other) -> Tensor"},
      {"aten.linear.default", "(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor"},
      {"aten._softmax.default", "(Tensor self, int dim, bool half_to_float) -> Tensor"},
      {"aten._log_softmax.default", "(Tensor self, int dim, bool half_to_float) -> Tensor"},
      {"aten.softmax.int", "(Tensor self, int dim, ScalarType? dtype=None) -> Tensor"},
      {"aten.log_softmax.int", "(Tensor self, int dim, ScalarType? dtype=None) -> Tensor"},
      {"aten.layer_norm.default",
       "(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? bias=None, float "
       "eps=1e-05, bool cudnn_enable=True) -> Tensor"},
      {"aten.rms_norm.default",
       "(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, float? eps=None) -> "
       "Tensor"},
      {"aten._fused_rms_norm.default",
       "(Tensor input, int[] normalized_shape, Tensor? weight, float? eps) -> (Tensor, Tensor)"},
      {"aten.native_layer_norm.default",
       "(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps) -> "
       "(Tensor, Tensor, Tensor)"},
      {"aten.scaled_dot_product_attention.default",
       "(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, float dropout_p=0.0, "
       "bool is_causal=False, *, float? scale=None, bool enable_gqa=False) -> Tensor"},
      {"aten._scaled_dot_product_flash_attention_for_cpu.default",
       "(Tensor query, Tensor key, Tensor value, float dropout_p=0.0, bool is_causal=False, *, "
       "Tensor? attn_mask=None, float? scale=None) -> (Tensor output, Tensor logsumexp)"},
      {"aten._scaled_dot_product_flash_attention.default",
       "(Tensor query, Tensor key, Tensor value, float dropout_p=0.0, bool is_causal=False, "
       "bool return_debug_mask=False, *, float? scale=None) -> (Tensor output, Tensor "
       "logsumexp, Tensor cum_seq_q, Tensor cum_seq_k, SymInt max_q, SymInt max_k, Tensor "
       "rng_state, Tensor unused, Tensor debug_attn_mask)"},
      {"aten._scaled_dot_product_efficient_attention.default",
       "(Tensor query, Tensor key, Tensor value, Tensor? attn_bias, bool compute_log_sumexp, "
       "float dropout_p=0.0, bool is_causal=False, *, float? scale=None) -> (Tensor output, "
       "Tensor log_sumexp, Tensor philox_seed, Tensor philox_offset)"},
      {"aten._scaled_dot_product_cudnn_attention.default",
       "(Tensor query, Tensor key, Tensor value, Tensor? attn_bias, bool compute_log_sumexp, "
       "float dropout_p=0.0, bool is_causal=False, bool return_debug_mask=False, *, float? "
       "scale=None) -> (Tensor output, Tensor logsumexp, Tensor cum_seq_q, Tensor cum_seq_k, "
       "SymInt max_q, SymInt max_k, Tensor philox_seed, Tensor philox_offset, Tensor "
       "debug_attn_mask)"},
      // Indexing and writes.
      {"aten.cat.default", "(Tensor[] tensors, int dim=0) -> Tensor"},
      {"aten.slice_scatter.default",
       "(Tensor self, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, SymInt "
       "step=1) -> Tensor"},
      {"aten.select_scatter.default", "(Tensor self, Tensor src, int dim, SymInt index) -> Tensor"},
      {"aten.index_put.default",
       "(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor"},
      {"aten.index_copy.default", "(Tensor self, int dim, Tensor index, Tensor source) -> Tensor"},
      {"aten.index.Tensor", "(Tensor self, Tensor?[] indices) -> Tensor"},
      {"aten.index_select.default", "(Tensor self, int dim, Tensor index) -> Tensor"},
      {"aten.gather.default",
       "(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor"},
      {"aten.embedding.default",
       "(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, "
       "bool sparse=False) -> Tensor"},
      {"aten.scatter.src", "(Tensor self, int dim, Tensor index, Tensor src) -> Tensor"},
      {"aten.scatter.value", "(Tensor self, int dim, Tensor index, Scalar value) -> Tensor"},
      {"aten.index_add.default",
       "(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor"},
      // CompositeImplicit ops that the training IR keeps (kernels: backends/cpu/composite*.cc).
      {"aten.to.dtype",
       "(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool copy=False, "
       "MemoryFormat? memory_format=None) -> Tensor(a)"},
      {"aten.to.dtype_layout",
       "(Tensor(a) self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
       "bool? pin_memory=None, bool non_blocking=False, bool copy=False, MemoryFormat? "
       "memory_format=None) -> Tensor(a)"},
      {"aten.to.device",
       "(Tensor(a) self, Device device, ScalarType dtype, bool non_blocking=False, bool "
       "copy=False, MemoryFormat? memory_format=None) -> Tensor(a)"},
      {"aten.to.other",
       "(Tensor(a) self, Tensor other, bool non_blocking=False, bool copy=False, MemoryFormat? "
       "memory_format=None) -> Tensor(a)"},
      {"aten.type_as.default", "(Tensor self, Tensor other) -> Tensor"},
      {"aten.contiguous.default", "(Tensor(a) self, *, MemoryFormat memory_format=0) -> Tensor(a)"},
      {"aten.dropout.default", "(Tensor input, float p, bool train) -> Tensor"},
      {"aten.narrow.default",
       "(Tensor(a) self, int dim, SymInt start, SymInt length) -> Tensor(a)"},
      {"aten.chunk.default", "(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]"},
      {"aten.flatten.using_ints", "(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)"},
      {"aten.unflatten.int", "(Tensor(a) self, int dim, SymInt[] sizes) -> Tensor(a)"},
      {"aten.view_as.default", "(Tensor(a) self, Tensor other) -> Tensor(a)"},
      {"aten.reshape_as.default", "(Tensor(a) self, Tensor other) -> Tensor(a)"},
      {"aten.expand_as.default", "(Tensor(a) self, Tensor other) -> Tensor(a)"},
      {"aten.movedim.int", "(Tensor(a) self, int source, int destination) -> Tensor(a)"},
      {"aten.movedim.intlist", "(Tensor(a) self, int[] source, int[] destination) -> Tensor(a)"},
      {"aten.moveaxis.int", "(Tensor(a) self, int source, int destination) -> Tensor(a)"},
      {"aten.moveaxis.intlist", "(Tensor(a) self, int[] source, int[] destination) -> Tensor(a)"},
      {"aten.swapaxes.default", "(Tensor(a) self, int axis0, int axis1) -> Tensor(a)"},
      {"aten.swapdims.default", "(Tensor(a) self, int dim0, int dim1) -> Tensor(a)"},
      {"aten.diagonal.default",
       "(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)"},
      {"aten.einsum.default", "(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor"},
      {"aten.baddbmm.default",
       "(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor"},
      {"aten.outer.default", "(Tensor self, Tensor vec2) -> Tensor"},
      {"aten.linalg_vector_norm.default",
       "(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, ScalarType? "
       "dtype=None) -> Tensor"},
      {"aten.norm.ScalarOpt_dim",
       "(Tensor self, Scalar? p, int[1] dim, bool keepdim=False) -> Tensor"},
      {"aten.norm.Scalar", "(Tensor self, Scalar p=2) -> Tensor"},
      {"aten.std_mean.correction",
       "(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> "
       "(Tensor, Tensor)"},
      {"aten.std_mean.dim",
       "(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> (Tensor, Tensor)"},
      {"aten.group_norm.default",
       "(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, float "
       "eps=1.0000000000000001e-05, bool cudnn_enabled=True) -> Tensor"},
      {"aten.native_group_norm.default",
       "(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, SymInt HxW, int group, "
       "float eps) -> (Tensor, Tensor, Tensor)"},
      // Symbolic scalars and checks.
      {"aten.sym_size.int", "(Tensor self, int dim) -> SymInt"},
      {"aten.sym_numel.default", "(Tensor self) -> SymInt"},
      {"aten.sym_stride.int", "(Tensor self, int dim) -> SymInt"},
      {"aten.sym_storage_offset.default", "(Tensor self) -> SymInt"},
      {"aten._local_scalar_dense.default", "(Tensor self) -> Scalar"},
      {"aten.item.default", "(Tensor self) -> Scalar"},
      {"aten._assert_scalar.default", "(Scalar self, str assert_msg) -> ()"},
      {"aten._assert_async.msg", "(Tensor self, str assert_msg) -> ()"},
      {"aten.sym_constrain_range.default", "(Scalar size, *, int? min=None, int? max=None) -> ()"},
      {"aten.sym_constrain_range_for_size.default",
       "(Scalar size, *, int? min=None, int? max=None) -> ()"},
      {"aten._assert_tensor_metadata.default",
       "(Tensor a, SymInt[]? size=None, SymInt[]? stride=None, ScalarType? dtype=None, *, "
       "Device? device=None, Layout? layout=None) -> ()"},
      // Python operators on symbolic scalars (targets as torch.export names them).
      {"_operator.add", "(Scalar a, Scalar b) -> Scalar"},
      {"_operator.sub", "(Scalar a, Scalar b) -> Scalar"},
      {"_operator.mul", "(Scalar a, Scalar b) -> Scalar"},
      {"_operator.floordiv", "(Scalar a, Scalar b) -> Scalar"},
      {"_operator.mod", "(Scalar a, Scalar b) -> Scalar"},
      {"_operator.truediv", "(Scalar a, Scalar b) -> Scalar"},
      {"_operator.pow", "(Scalar a, Scalar b) -> Scalar"},
      {"_operator.neg", "(Scalar a) -> Scalar"},
      {"_operator.eq", "(Scalar a, Scalar b) -> Scalar"},
      {"_operator.ne", "(Scalar a, Scalar b) -> Scalar"},
      {"_operator.lt", "(Scalar a, Scalar b) -> Scalar"},
      {"_operator.le", "(Scalar a, Scalar b) -> Scalar"},
      {"_operator.gt", "(Scalar a, Scalar b) -> Scalar"},
      {"_operator.ge", "(Scalar a, Scalar b) -> Scalar"},
      {"_operator.and_", "(Scalar a, Scalar b) -> Scalar"},
      {"_operator.or_", "(Scalar a, Scalar b) -> Scalar"},
      {"_operator.not_", "(Scalar a) -> Scalar"},
      {"torch.sym_max", "(Scalar a, Scalar b) -> Scalar"},
      {"torch.sym_min", "(Scalar a, Scalar b) -> Scalar"},
      {"torch.sym_not", "(Scalar a) -> Scalar"},
      {"torch.sym_float", "(Scalar a) -> Scalar"},
      {"torch.sym_int", "(Scalar a) -> Scalar"},
      {"math.ceil", "(Scalar a) -> Scalar"},
      {"math.floor", "(Scalar a) -> Scalar"},
  };
}

struct Table {
  std::vector<std::unique_ptr<OpSchema>> owned;
  std::map<std::string, const OpSchema*, std::less<>> by_target;
  std::vector<const OpSchema*> ordered;
};

const Table& table() {
  static const Table t = [] {
    Table built;
    for (const Entry& e : entries()) {
      auto parsed = parse_op_schema(e.target, e.schema);
      // The table is splice's own source: a schema that does not parse is a splice bug.
      if (!parsed.ok()) {
        std::fprintf(stderr, "splice: %s\n", parsed.error().message().c_str());
        std::abort();
      }
      built.owned.push_back(std::make_unique<OpSchema>(std::move(*parsed)));
      const OpSchema* op = built.owned.back().get();
      built.by_target.emplace(op->target, op);
      built.ordered.push_back(op);
    }
    return built;
  }();
  return t;
}

}  // namespace

const OpSchema* find_op(std::string_view target) {
  const auto& t = table();
  auto it = t.by_target.find(target);
  return it == t.by_target.end() ? nullptr : it->second;
}

const std::vector<const OpSchema*>& all_ops() { return table().ordered; }

}  // namespace splice::ir
