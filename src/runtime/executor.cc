// The plan executor (see executor.h). One pass over the plan's steps per call:
//   - host nodes (symbols, asserts, .item()) are evaluated here (host_nodes.cc);
//   - a kernel whose output has planned storage is asked to store into it (a whole buffer, or
//     the destination view of a later write); if it does not, its result is copied there;
//   - a write does what its decision says: nothing (the producer already stored src), a copy
//     of src into the base in place, or a copy of the base first;
//   - a base copy step copies a write's base into its new buffer before the producer runs.
// Every kernel output is checked against the type the archive recorded, so a kernel that
// disagrees with PyTorch is caught at the node, not at the output. Kernels, copies and
// allocations go through the model's backend (backends/backend.h); nothing here knows which
// backend that is.
#include "runtime/executor.h"

#include <algorithm>
#include <cstring>

#include "plan/build.h"
#include "plan/dataflow.h"
#include "plan/fusion.h"
#include "plan/gemv_epilogue.h"
#include "plan/matmul_kernels.h"
#include "plan/norm_fusion.h"
#include "runtime/device_positions.h"
#include "runtime/frame.h"
#include "runtime/host_nodes.h"
#include "runtime/input_binding.h"
#include "runtime/kernel_check.h"
#include "runtime/memory_check.h"
#include "runtime/node_exec.h"
#include "runtime/recorded_calls.h"
#include "tensor/convert.h"
#include "tensor/indexing.h"

namespace splice::runtime {

namespace {

using ir::Node;
using ir::OpId;
using ir::Value;
using plan::PlacementKind;
using plan::SrcMode;
using plan::WriteStrategy;

Result<Shape> evaluate_sizes(const ir::TensorType& type, const SymBindings& symbols) {
  Shape sizes;
  for (const SymExpr& d : type.sizes) {
    SPLICE_ASSIGN_OR_RETURN(int64_t n, d.evaluate(symbols));
    sizes.push_back(n);
  }
  return sizes;
}

bool same_view(const Tensor& a, const Tensor& b) {
  return a.storage() == b.storage() && a.offset() == b.offset() && a.sizes() == b.sizes() &&
         a.strides() == b.strides() && a.dtype() == b.dtype();
}

class Call {
 public:
  Call(const detail::ModelImpl& m, detail::SessionState& state, CallStats* stats)
      : m_(m), state_(state), stats_(stats), per_call_(m.plan.buffers.size()) {
    state_.workspace.resize(m.plan.buffers.size());
    f_.slots.resize(m.slot_value.size());
    f_.slot_of = &m.slot_of;
    f_.device = DeviceAccess{m.backend, state.backend_session.get()};
    // The session's argument copies, made on its first call.
    if (state_.args.size() != m.exec.size()) {
      state_.args.clear();
      for (const auto& e : m.exec) state_.args.push_back(e.args);
      state_.destination.assign(m.exec.size(), Tensor());
      state_.views.assign(m.exec.size(), {});
    }
  }

  Frame& frame() { return f_; }
  // This call is being recorded with its position symbols (already bound in the frame to the
  // values the host read) read on the device: windows at them move by copies that read the
  // positions when they run, and no producer stores into a write's destination (a positional
  // one has no fixed address; the others may overlap it), so every write copies its src.
  void read_positions_on_device() {
    positions_on_device_ = true;
    positions_.assign(m_.positions.symbols.size(), Tensor());
  }
  // The shape checks evaluated so far this call (run_shape_checks).
  std::vector<char>& checks_done() { return checks_done_; }

  Result<void> run_steps(StepHooks* hooks = nullptr) {
    state_.shapes.begin_call(f_.symbols, m_.slot_value.size(), m_.plan.buffers.size(),
                             m_.groups.size());
    for (size_t s = 0; s < m_.plan.steps.size(); ++s) {
      if (hooks != nullptr) SPLICE_TRY(hooks->before(s));
      SPLICE_TRY(run_step(s));
      if (hooks != nullptr) SPLICE_TRY(hooks->after(s));
    }
    return ok_result();
  }

 private:
  Result<void> run_step(size_t s) {
    const auto& nodes = m_.program.graph.nodes();
    {
      const plan::Step& step = m_.plan.steps[s];
      if (step.kind == plan::StepKind::kBaseCopy) {
        SPLICE_TRY(run_base_copy(step.index));
      } else if (step.kind == plan::StepKind::kGroup) {
        SPLICE_TRY(run_group(step.index));
      } else {
        const int pos = step.index;
        const Node& node = *nodes[pos];
        if (m_.host_node[pos]) {
          const PositionSymbol* position =
              positions_on_device_ ? m_.positions.symbol_of_item(pos) : nullptr;
          if (position != nullptr) {
            SPLICE_TRY(bind_position_on_device(node, *position));
          } else {
            SPLICE_TRY(run_host_node(m_.program, node, f_));
          }
          // A data-dependent symbol (.item()) may just have been bound.
          SPLICE_TRY(run_shape_checks(m_.program, f_.symbols, checks_done_));
        } else if (positions_on_device_ && m_.positions.node(pos) != nullptr) {
          SPLICE_TRY(run_positional(pos, *m_.positions.node(pos)));
        } else if (m_.decision_at[pos] >= 0) {
          SPLICE_TRY(run_write(pos, m_.decision_at[pos]));
        } else {
          SPLICE_TRY(run_kernel(pos));
        }
      }
      for (int32_t slot : m_.step_release[s]) f_.slots[slot] = std::monostate{};
    }
    return ok_result();
  }

  void record(const Node& node, const char* kind, int64_t bytes, const Tensor& into) {
    if (stats_ != nullptr)
      stats_->steps.push_back({node.name(), kind, bytes, into.storage().get()});
  }

  void bind(const Value* v, Tensor t) { f_.at(v) = std::move(t); }

  backend::SessionContext* session() const { return state_.backend_session.get(); }

  // dst = src (same dtype and sizes) on the backend.
  Result<void> copy_into(const Tensor& dst, const Tensor& src) {
    return m_.backend->copy(dst, src, session());
  }

  // A new contiguous tensor on the backend's device.
  Result<Tensor> new_tensor(DType dtype, const Shape& sizes) {
    auto bytes = checked_numel(sizes);
    SPLICE_CHECK_OR_RETURN(bytes.has_value(), ErrorKind::kShapeMismatch,
                           "a tensor of sizes {} is too large", shape_string(sizes));
    SPLICE_ASSIGN_OR_RETURN(auto storage,
                            m_.backend->allocate(static_cast<size_t>(*bytes) * dtype_size(dtype)));
    return Tensor(dtype, sizes, contiguous_strides(sizes), 0, std::move(storage));
  }

  // A contiguous copy of t on the backend's device.
  Result<Tensor> copy_of(const Tensor& t) {
    SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(t.dtype(), t.sizes()));
    SPLICE_TRY(copy_into(out, t));
    return out;
  }

  // Slot's shape when it is known without evaluating anything: static, or already evaluated
  // under this call's symbols (BoundShapes); nullptr when it needs a symbol bound mid-call.
  const detail::StaticShape* known_shape(int32_t slot) {
    if (const auto& s = m_.static_shape[slot]) return &*s;
    return state_.shapes.value(slot, m_.slot_value[slot]->type());
  }
  // Plan buffer b's byte count, the same way.
  std::optional<int64_t> known_buffer_bytes(int b) {
    if (const auto& n = m_.static_buffer_bytes[b]) return n;
    return state_.shapes.buffer_bytes(b, m_.plan.buffers[b].bytes);
  }
  // v's sizes: known, or evaluated under the symbols bound so far.
  Result<Shape> sizes_of(const Value& v) {
    if (const detail::StaticShape* s = known_shape(m_.slot_of.at(&v))) return s->sizes;
    return evaluate_sizes(v.type(), f_.symbols);
  }

  // Storage of plan buffer b holding at least `needed` bytes: the session's (kept between
  // calls) or, for a per-call buffer, a new one each call.
  Result<std::shared_ptr<Storage>> buffer_storage(int b, int64_t needed) {
    const plan::Buffer& buf = m_.plan.buffers[b];
    int64_t planned = 0;
    if (auto known = known_buffer_bytes(b)) {
      planned = *known;
    } else {
      SPLICE_ASSIGN_OR_RETURN(planned, buf.bytes.evaluate(f_.symbols));
    }
    const auto bytes = static_cast<size_t>(std::max(planned, needed));
    auto& slot = buf.per_call ? per_call_[b] : state_.workspace[b];
    if (!slot || slot->nbytes() < bytes) {
      SPLICE_ASSIGN_OR_RETURN(slot, m_.backend->allocate(bytes));
    }
    return slot;
  }

  // v (in `slot`) as the whole of buffer b (contiguous), or nullopt when its sizes are not
  // known yet.
  std::optional<Tensor> whole_view(const Value& v, int32_t slot, int b) {
    if (const detail::StaticShape* shape = known_shape(slot)) {
      auto storage = buffer_storage(b, shape->nbytes);
      if (!storage.ok()) return std::nullopt;
      return Tensor(v.type().dtype, shape->sizes, shape->strides, 0, *storage);
    }
    auto sizes = evaluate_sizes(v.type(), f_.symbols);
    if (!sizes.ok()) return std::nullopt;
    const int64_t bytes = shape_numel(*sizes) * static_cast<int64_t>(dtype_size(v.type().dtype));
    auto storage = buffer_storage(b, bytes);
    if (!storage.ok()) return std::nullopt;
    return Tensor(v.type().dtype, *sizes, contiguous_strides(*sizes), 0, *storage);
  }

  // Fresh storage for a write's new buffer: planned if it has a placement, else allocated.
  Result<Tensor> new_buffer_for(const Value& result, const Tensor& like) {
    auto it = m_.placement.find(&result);
    if (it != m_.placement.end() && it->second->kind == PlacementKind::kBuffer)
      if (auto t = whole_view(result, m_.slot_of.at(&result), it->second->buffer)) return *t;
    return new_tensor(like.dtype(), like.sizes());
  }

  // The view of write wi's destination, for its producer to store src into; with
  // squeeze_dim >= 0, without that dim (a select write's value before its unsqueeze).
  Result<Tensor> region_destination(int wi, int squeeze_dim) {
    SPLICE_ASSIGN_OR_RETURN(Tensor region, write_region(wi));
    if (squeeze_dim < 0) return region;
    if (squeeze_dim >= region.dim() || region.size(squeeze_dim) != 1)
      return make_error(ErrorKind::kBadArchive, "plan: write {} has no dim {} of size 1 to drop",
                        wi, squeeze_dim);
    Shape sizes = region.sizes(), strides = region.strides();
    sizes.erase(sizes.begin() + squeeze_dim);
    strides.erase(strides.begin() + squeeze_dim);
    return region.view_as(sizes, strides, region.offset());
  }

  // The view of write wi's base that the write covers (src's shape). The base itself may not
  // exist yet (a later link of an in-place chain): the destination's whole view stands in.
  Result<Tensor> write_region(int wi) {
    const plan::WriteDecision& d = m_.plan.writes[wi];
    const Node& w = *m_.program.graph.nodes()[d.node];
    SPLICE_ASSIGN_OR_RETURN(const Tensor* whole, tensor_of(f_, m_.dest_value[wi]));
    // src is what the producer is about to make: only its shape is needed here.
    const Value* src = plan::write_src(w);
    SPLICE_ASSIGN_OR_RETURN(Shape src_sizes, sizes_of(*src));
    auto int_arg = [&](size_t i) -> Result<std::optional<int64_t>> {
      SPLICE_ASSIGN_OR_RETURN(backend::KernelArg a, resolve_arg(f_, w.op().args[i], w.arg(i)));
      if (auto* v = std::get_if<int64_t>(&a)) return std::optional<int64_t>(*v);
      if (std::holds_alternative<std::monostate>(a)) return std::optional<int64_t>();
      return make_error(ErrorKind::kBadArchive, "argument {} is not an int", i);
    };
    Result<Tensor> dest =
        make_error(ErrorKind::kInternal, "{} has no strided destination", w.target());
    if (w.op_id() == OpId::slice_scatter) {
      SPLICE_ASSIGN_OR_RETURN(auto dim, int_arg(2));
      SPLICE_ASSIGN_OR_RETURN(auto start, int_arg(3));
      SPLICE_ASSIGN_OR_RETURN(auto end, int_arg(4));
      SPLICE_ASSIGN_OR_RETURN(auto step, int_arg(5));
      dest = slice_write_view(w.target(), *whole, src_sizes, dim, start, end, step);
    } else if (w.op_id() == OpId::select_scatter) {
      SPLICE_ASSIGN_OR_RETURN(auto dim, int_arg(2));
      SPLICE_ASSIGN_OR_RETURN(auto index, int_arg(3));
      if (!dim || !index)
        return make_error(ErrorKind::kBadArchive, "{}: dim and index are required", node_label(w));
      dest = select_write_view(w.target(), *whole, src_sizes, *dim, *index);
    }
    if (!dest.ok()) return dest.error().with_context(node_label(w));
    return dest;
  }

  // Drops a node's tensor arguments when its step ends, however it ends: an argument dies
  // with its value, and the session keeps none of the caller's tensors.
  struct ArgsRelease {
    const detail::NodeExec& exec;
    std::vector<backend::KernelArg>& args;
    ~ArgsRelease() { release_args(exec, args); }
  };

  // The whole-buffer destination of node `pos`'s output (value v in `slot`) in plan buffer b,
  // or nullptr when there is none (sizes not known yet, or no memory: the kernel allocates).
  // A value of known shape in a buffer the session keeps reuses the view made on an earlier
  // call while the storage and the sizes stay; anything else is built into `holder`.
  const Tensor* buffer_destination(int pos, const Value& v, int32_t slot, int b, Tensor& holder) {
    const detail::StaticShape* shape = known_shape(slot);
    const std::optional<int64_t> planned = known_buffer_bytes(b);
    if (shape && planned && !m_.plan.buffers[b].per_call) {
      auto& storage = state_.workspace[b];
      const auto bytes = static_cast<size_t>(std::max(*planned, shape->nbytes));
      if (!storage || storage->nbytes() < bytes) {
        auto fresh = m_.backend->allocate(bytes);
        if (!fresh.ok()) return nullptr;
        storage = std::move(*fresh);
      }
      Tensor& cached = state_.destination[pos];
      if (cached.storage() != storage || cached.sizes() != shape->sizes)
        cached = Tensor(v.type().dtype, shape->sizes, shape->strides, 0, storage);
      return &cached;
    }
    auto t = whole_view(v, slot, b);
    if (!t) return nullptr;
    holder = std::move(*t);
    return &holder;
  }

  // check_output, without evaluating anything for a value of known shape that matches.
  Result<void> check_value(const Node& node, int32_t slot, const Value& v, const Tensor& t) {
    const detail::StaticShape* shape = known_shape(slot);
    if (shape && t.dtype() == v.type().dtype && t.sizes() == shape->sizes) return ok_result();
    return check_output(node, v, t, f_.symbols);
  }

  // A memoised view whose input has the geometry it had when the view was made: the same
  // view over this call's input. False when the kernel must run.
  bool reuse_view(const detail::NodeExec& e, detail::ViewMemo& memo) {
    const Tensor* in = std::get_if<Tensor>(&f_.slots[e.refs[0].slot]);
    if (in == nullptr || !memo.matches(*in)) return false;
    f_.slots[e.outputs[0]] = in->view_as(memo.out_sizes, memo.out_strides, memo.out_offset);
    return true;
  }

  // Remembers the view a memoised-view node's kernel made; a copy (reshape of a tensor whose
  // strides do not allow a view, `to` another dtype) is not remembered and runs every call.
  void remember_view(const detail::NodeExec& e, detail::ViewMemo& memo) {
    memo.valid = false;
    const Tensor* in = std::get_if<Tensor>(&f_.slots[e.refs[0].slot]);
    const Tensor* out = std::get_if<Tensor>(&f_.slots[e.outputs[0]]);
    if (in == nullptr || out == nullptr || out->storage() != in->storage() ||
        out->dtype() != in->dtype())
      return;
    memo = {true,         in->dtype(),  in->sizes(),    in->strides(),
            in->offset(), out->sizes(), out->strides(), out->offset()};
  }

  Result<void> run_kernel(int pos) {
    const Node& node = *m_.program.graph.nodes()[pos];
    const detail::NodeExec& e = m_.exec[pos];
    if (e.memoised_view) {
      detail::ViewMemo& memo = state_.views[pos];
      if (reuse_view(e, memo))
        return check_value(node, e.outputs[0], *node.output(0),
                           std::get<Tensor>(f_.slots[e.outputs[0]]));
      SPLICE_TRY(run_kernel_node(pos, node, e));
      remember_view(e, memo);
      return ok_result();
    }
    return run_kernel_node(pos, node, e);
  }

  Result<void> run_kernel_node(int pos, const Node& node, const detail::NodeExec& e) {
    auto& args = state_.args[pos];
    ArgsRelease release{e, args};
    SPLICE_TRY(fill_args(m_, e, f_, args));
    const Tensor* dest = nullptr;
    Tensor holder;
    const Value* out0 = node.outputs().size() == 1 ? node.output(0) : nullptr;
    if (out0 != nullptr && e.placement != nullptr &&
        !(positions_on_device_ && e.placement->kind == PlacementKind::kRegion)) {
      if (e.placement->kind == PlacementKind::kRegion) {
        SPLICE_ASSIGN_OR_RETURN(holder,
                                region_destination(e.placement->write, e.placement->squeeze_dim));
        dest = &holder;
      } else {
        dest = buffer_destination(pos, *out0, e.outputs[0], e.placement->buffer, holder);
      }
    }
    // Never store into memory splice may not write (a plan naming a read-only input or
    // weight as a destination): the kernel allocates instead and nothing else changes.
    if (dest != nullptr && !dest->storage()->writable()) dest = nullptr;
    if (dest != nullptr && node.op().is_empty_factory()) {
      f_.slots[e.outputs[0]] = *dest;  // contents undefined, as PyTorch's: nothing to run
      return ok_result();
    }
    const backend::KernelCall call{session(), dest, false};
    auto results = m_.kernels[pos]->fn(call, args);
    if (!results.ok()) return results.error().with_context(node_label(node));
    auto& outs = *results;
    if (outs.size() < node.outputs().size())
      return make_error(ErrorKind::kInternal, "{}: kernel returned {} outputs, the node has {}",
                        node_label(node), outs.size(), node.outputs().size());
    const bool view = node.op().may_view();
    int64_t written = 0;
    for (size_t i = 0; i < node.outputs().size(); ++i) {
      const Value* v = node.output(i);
      if (v == nullptr) continue;
      const int32_t slot = e.outputs[i];
      Tensor& t = outs[i];
      if (!v->is_tensor()) {
        // A SymInt result of a tensor op (e.g. attention's max_q) comes back as a 0-d tensor.
        SPLICE_ASSIGN_OR_RETURN(Tensor host, f_.device.to_host(t));
        SPLICE_ASSIGN_OR_RETURN(Tensor i64, convert(host, DType::kInt64));
        f_.slots[slot] = Scalar{*i64.data<int64_t>()};
        continue;
      }
      SPLICE_TRY(check_value(node, slot, *v, t));
      if (i == 0 && dest != nullptr && !same_view(t, *dest)) {
        // The kernel kept its own output: move it where the plan wants it.
        SPLICE_TRY(copy_into(*dest, t));
        record(node, "copy", static_cast<int64_t>(t.nbytes()), *dest);
        t = *dest;
      } else if (!view && shares_storage_with_input(t, args)) {
        // A kernel handed back its input; the plan treats this value as fresh storage that
        // writes may reuse, so it must not alias the input.
        SPLICE_ASSIGN_OR_RETURN(t, copy_of(t));
      }
      if (!view) written += static_cast<int64_t>(t.nbytes());
      f_.slots[slot] = std::move(t);
    }
    if (stats_ == nullptr || view) return ok_result();
    if (out0 != nullptr && out0->is_tensor())
      record(node, node.op().is_copy() ? "copy" : "kernel", written,
             std::get<Tensor>(f_.slots[e.outputs[0]]));
    else
      stats_->steps.push_back({node.name(), "kernel", written, nullptr});
    return ok_result();
  }

  static bool shares_storage_with_input(const Tensor& t,
                                        const std::vector<backend::KernelArg>& args) {
    for (const auto& a : args)
      if (auto* in = std::get_if<Tensor>(&a); in != nullptr && in->storage() == t.storage())
        return true;
    return false;
  }

  // A pointwise group: its program over its iteration space on the backend, its inputs as
  // views broadcast to it, each output stored to its placement (a planned buffer, or a write's
  // destination) or into a new tensor.
  Result<void> run_group(int gi) {
    const detail::GroupExec& g = m_.groups[gi];
    Shape evaluated;
    const Shape* known = g.static_sizes ? &*g.static_sizes : state_.shapes.group_sizes(gi, g.sizes);
    if (known == nullptr) {
      for (const SymExpr& d : g.sizes) {
        auto n = d.evaluate(f_.symbols);
        if (!n.ok()) return n.error().with_context(g.label);
        evaluated.push_back(*n);
      }
    }
    const Shape& sizes = known != nullptr ? *known : evaluated;
    std::vector<Tensor> ins, outs;
    ins.reserve(g.inputs.size());
    for (int32_t slot : g.inputs) {
      if (slot < 0) {  // a GEMV epilogue's product column: the kernel computes it
        ins.emplace_back();
        continue;
      }
      SPLICE_ASSIGN_OR_RETURN(const Tensor* t, tensor_of(f_, m_.slot_value[slot]));
      if (t->dim() > static_cast<int64_t>(sizes.size()))
        return make_error(ErrorKind::kInternal, "{}: input of rank {} over rank {}", g.label,
                          t->dim(), sizes.size());
      // Leading dims it lacks broadcast (size 1).
      const size_t lead = sizes.size() - static_cast<size_t>(t->dim());
      Shape in_sizes(lead, 1), in_strides(lead, 0);
      in_sizes.insert(in_sizes.end(), t->sizes().begin(), t->sizes().end());
      in_strides.insert(in_strides.end(), t->strides().begin(), t->strides().end());
      for (size_t d = 0; d < sizes.size(); ++d)
        if (in_sizes[d] != sizes[d] && in_sizes[d] != 1)
          return make_error(
              ErrorKind::kShapeMismatch, "{}: '{}' of sizes {} does not broadcast to {}", g.label,
              m_.slot_value[slot]->name(), shape_string(t->sizes()), shape_string(sizes));
      ins.push_back(t->view_as(std::move(in_sizes), std::move(in_strides), t->offset()));
    }
    outs.reserve(g.outputs.size());
    for (size_t k = 0; k < g.outputs.size(); ++k) {
      const Value& v = *g.output_values[k];
      const plan::Placement* p = g.placements[k];
      std::optional<Tensor> dest;
      if (p != nullptr && p->kind == PlacementKind::kRegion) {
        if (!positions_on_device_) {
          SPLICE_ASSIGN_OR_RETURN(dest, region_destination(p->write, p->squeeze_dim));
        }
      } else if (p != nullptr) {
        // The view cached for the producing member (which never runs on its own).
        Tensor holder;
        const Tensor* whole =
            buffer_destination(g.output_nodes[k], v, g.outputs[k], p->buffer, holder);
        if (whole != nullptr) dest = *whole;
      }
      if (dest && (dest->sizes() != sizes || dest->dtype() != v.type().dtype))
        return make_error(
            ErrorKind::kInternal, "{}: '{}' is planned into a {}{} destination, not {}", g.label,
            v.name(), dtype_name(dest->dtype()), shape_string(dest->sizes()), v.type().to_string());
      if (!dest) {
        SPLICE_ASSIGN_OR_RETURN(dest, new_tensor(v.type().dtype, sizes));
      }
      outs.push_back(std::move(*dest));
    }
    auto r = g.norm   ? run_norm(g, ins, outs)
             : g.gemv ? run_gemv_epilogue(g, ins, outs, sizes)
                      : m_.backend->run_pointwise(session(), g.program, ins, outs, sizes);
    if (!r.ok()) return r.error().with_context(g.label);
    for (size_t k = 0; k < outs.size(); ++k) {
      // One record per output: each may be stored into a different storage.
      if (stats_ != nullptr)
        stats_->steps.push_back(
            {g.label, "kernel", static_cast<int64_t>(outs[k].nbytes()), outs[k].storage().get()});
      f_.slots[g.outputs[k]] = std::move(outs[k]);
    }
    return ok_result();
  }

  // An RMSNorm group's kernel (plan/norm_fusion.h): its inputs and outputs as run_group made
  // them (the weight broadcast to the rows).
  Result<void> run_norm(const detail::GroupExec& g, const std::vector<Tensor>& ins,
                        const std::vector<Tensor>& outs) const {
    const detail::GroupExec::Norm& n = *g.norm;
    backend::RmsNormCall call;
    call.x = ins[0];
    call.out = outs[n.out];
    call.stat = n.stat;
    call.cast = n.cast;
    call.eps = n.eps;
    size_t k = 1;
    if (n.residual) call.residual = ins[k++];
    if (n.weight) call.weight = ins[k++];
    if (n.sum >= 0) call.sum = outs[n.sum];
    return m_.backend->run_rms_norm(session(), call);
  }

  // A GEMV-epilogue group's kernel (plan/gemv_epilogue.h): the product's operands from their
  // slots, the epilogue's inputs and outputs as run_group made them.
  Result<void> run_gemv_epilogue(const detail::GroupExec& g, const std::vector<Tensor>& ins,
                                 const std::vector<Tensor>& outs, const Shape& sizes) {
    const detail::GroupExec::Gemv& p = *g.gemv;
    backend::GemvEpilogueCall call;
    call.product_op = p.op;
    SPLICE_ASSIGN_OR_RETURN(const Tensor* a, tensor_of(f_, m_.slot_value[p.a]));
    SPLICE_ASSIGN_OR_RETURN(const Tensor* b, tensor_of(f_, m_.slot_value[p.b]));
    call.a = *a;
    call.b = *b;
    if (p.norm && p.op != ir::OpId::linear) {
      // mm and addmm read the norm's input as the [rows, k] matrix their x is a row view of
      // (a strided input, such as one position's rows of a batch, is copied into rows first).
      if (!a->is_contiguous()) {
        SPLICE_ASSIGN_OR_RETURN(call.a, copy_of(*a));
      }
      const int64_t k = a->sizes().empty() ? 1 : a->sizes().back();
      int64_t rows = 1;
      for (size_t d = 0; d + 1 < a->sizes().size(); ++d) rows *= a->sizes()[d];
      call.a = call.a.view_as({rows, k}, {k, 1}, call.a.offset());
    }
    if (p.c >= 0) {
      SPLICE_ASSIGN_OR_RETURN(const Tensor* c, tensor_of(f_, m_.slot_value[p.c]));
      call.c = *c;
    }
    call.product_dtype = p.dtype;
    if (p.norm) {
      backend::GemvEpilogueCall::Norm n;
      if (p.norm->weight >= 0) {
        SPLICE_ASSIGN_OR_RETURN(const Tensor* w, tensor_of(f_, m_.slot_value[p.norm->weight]));
        n.weight = *w;
      }
      n.stat = p.norm->stat;
      n.cast = p.norm->cast;
      n.eps = p.norm->eps;
      call.norm = n;
    }
    call.program = &g.program;
    call.columns = p.columns;
    call.inputs = ins;
    call.outputs = outs;
    call.sizes = sizes;
    return m_.backend->run_gemv_epilogue(session(), call);
  }

  Result<void> run_write(int pos, int wi) {
    const plan::WriteDecision& d = m_.plan.writes[wi];
    const Node& node = *m_.program.graph.nodes()[pos];
    const Value* result = node.output(0);
    const int32_t slot = m_.exec[pos].outputs[0];
    SPLICE_ASSIGN_OR_RETURN(const Tensor* base_ptr, tensor_of(f_, plan::write_base(node)));
    const Tensor base = *base_ptr;
    SPLICE_ASSIGN_OR_RETURN(const Tensor* src_ptr, tensor_of(f_, plan::write_src(node)));
    const Tensor src = *src_ptr;

    if (d.strategy == WriteStrategy::kFullOverwrite) {
      SPLICE_TRY(check_value(node, slot, *result, src));
      bind(result, src);
      return ok_result();
    }
    const bool in_place =
        d.strategy == WriteStrategy::kInPlaceState || d.strategy == WriteStrategy::kReuseBase;
    // Whether src's producer already stored it into the destination.
    const bool stored = d.src == SrcMode::kProducerWrites && !positions_on_device_;
    if (in_place && base.storage()->writable()) {
      if (!stored) SPLICE_TRY(write_src_into(node, pos, base));
      SPLICE_TRY(check_value(node, slot, *result, base));
      bind(result, base);
      return ok_result();
    }
    if (d.strategy == WriteStrategy::kCopyThenWrite && d.src == SrcMode::kProducerWrites) {
      // The base was copied into the new buffer before the producer ran (and src stored there).
      SPLICE_ASSIGN_OR_RETURN(const Tensor* t, tensor_of(f_, result));
      if (!stored) SPLICE_TRY(write_src_into(node, pos, *t));
      return check_value(node, slot, *result, *t);
    }
    // copy_then_write (or an in-place plan whose base turned out read-only: never write
    // memory splice may not write).
    SPLICE_ASSIGN_OR_RETURN(Tensor dest, new_buffer_for(*result, base));
    SPLICE_TRY(copy_into(dest, base));
    record(node, "copy", static_cast<int64_t>(base.nbytes()), dest);
    SPLICE_TRY(write_src_into(node, pos, dest));
    SPLICE_TRY(check_value(node, slot, *result, dest));
    bind(result, dest);
    return ok_result();
  }

  // Runs the write's kernel on `target` in place: src copied into its slice, or its rows.
  Result<void> write_src_into(const Node& node, int pos, const Tensor& target) {
    SPLICE_ASSIGN_OR_RETURN(auto args, resolve_args(f_, node));
    args[0] = target;
    const backend::KernelCall call{session(), nullptr, /*in_place=*/true};
    auto r = m_.kernels[pos]->fn(call, args);
    if (!r.ok()) return r.error().with_context(node_label(node));
    SPLICE_ASSIGN_OR_RETURN(const Tensor* src, tensor_of(f_, plan::write_src(node)));
    record(node, "copy", static_cast<int64_t>(src->nbytes()), target);
    return ok_result();
  }

  // .item() of a position symbol in a recorded call: the value the host read before the
  // recording began stands for later host nodes, and the device reads the positions from the
  // recording's own copy of the input (runtime/device_positions.h).
  Result<void> bind_position_on_device(const Node& node, const PositionSymbol& s) {
    const int64_t value = f_.symbols.at(s.name);
    if (!s.range.contains(value)) return symbol_out_of_range(node, s.name, value, s.range);
    f_.at(node.output(0)) = Scalar{value};
    SPLICE_ASSIGN_OR_RETURN(const Tensor* source, tensor_of(f_, s.source));
    const auto index = static_cast<size_t>(&s - m_.positions.symbols.data());
    SPLICE_ASSIGN_OR_RETURN(const backend::CallRecorder* recorder, recorder_of(m_));
    SPLICE_ASSIGN_OR_RETURN(
        positions_[index],
        recorder->bind_positions(*session(), *source, s.offsets, s.range,
                                 fmt::format("{}, symbol {}", node_label(node), s.name)));
    return ok_result();
  }

  // Where a positional write's result lives, as its decision says: the base itself (in place),
  // the copy of the base its base-copy step made, or a new copy of the base.
  Result<Tensor> positional_write_target(int pos, const Value& result, const Tensor& base) {
    const int wi = m_.decision_at[pos];
    const plan::WriteDecision* d = wi >= 0 ? &m_.plan.writes[wi] : nullptr;
    const bool in_place = d != nullptr && (d->strategy == WriteStrategy::kInPlaceState ||
                                           d->strategy == WriteStrategy::kReuseBase);
    if (in_place && base.storage()->writable()) return base;
    if (d != nullptr && d->strategy == WriteStrategy::kCopyThenWrite &&
        d->src == SrcMode::kProducerWrites) {
      SPLICE_ASSIGN_OR_RETURN(const Tensor* copied, tensor_of(f_, &result));  // run_base_copy's
      return *copied;
    }
    SPLICE_ASSIGN_OR_RETURN(Tensor target, new_buffer_for(result, base));
    SPLICE_TRY(copy_into(target, base));
    return target;
  }

  // A slice or select of a window at a position read on the device (positions_on_device_): a
  // read becomes a copy of the window into a tensor of its own, a write a copy of src into the
  // window of the written tensor (the base itself, or a copy of it, as the decision says).
  Result<void> run_positional(int pos, const PositionalNode& p) {
    const Node& node = *m_.program.graph.nodes()[pos];
    const Value* result = node.output(0);
    SPLICE_ASSIGN_OR_RETURN(const Tensor* base, tensor_of(f_, plan::write_base(node)));
    const bool write = node.op().is_write();
    Tensor target;
    if (write) {
      SPLICE_ASSIGN_OR_RETURN(target, positional_write_target(pos, *result, *base));
    } else {
      SPLICE_ASSIGN_OR_RETURN(Shape sizes, evaluate_sizes(result->type(), f_.symbols));
      SPLICE_ASSIGN_OR_RETURN(target, new_tensor(result->type().dtype, sizes));
    }
    const Tensor& whole = write ? target : *base;
    if (p.extent > whole.size(p.dim))
      return make_error(ErrorKind::kOutOfRange, "{}: a window of {} on dim {} of size {}",
                        node_label(node), p.extent, p.dim, whole.size(p.dim));
    Shape sizes = whole.sizes();
    sizes[p.dim] = p.extent;
    const Tensor window = whole.view_as(sizes, whole.strides(), whole.offset());
    // The side that is not the window lacks a select's dim: give it back with size 1.
    Tensor other = target;
    if (write) {
      SPLICE_ASSIGN_OR_RETURN(const Tensor* src, tensor_of(f_, plan::write_src(node)));
      other = *src;
    }
    if (p.select) {
      Shape s = other.sizes(), st = other.strides();
      s.insert(s.begin() + p.dim, 1);
      st.insert(st.begin() + p.dim, 0);
      other = other.view_as(s, st, other.offset());
    }
    const backend::WindowPosition at{&positions_[p.symbol], p.offset, p.dim, whole.size(p.dim),
                                     write};
    SPLICE_ASSIGN_OR_RETURN(const backend::CallRecorder* recorder, recorder_of(m_));
    SPLICE_TRY(recorder->copy_at_position(*session(), write ? window : other,
                                          write ? other : window, at, node_label(node)));
    record(node, "copy", static_cast<int64_t>(window.nbytes()), write ? target : other);
    SPLICE_TRY(check_output(node, *result, target, f_.symbols));
    bind(result, target);
    return ok_result();
  }

  Result<void> run_base_copy(int wi) {
    const plan::WriteDecision& d = m_.plan.writes[wi];
    const Node& node = *m_.program.graph.nodes()[d.node];
    SPLICE_ASSIGN_OR_RETURN(const Tensor* base, tensor_of(f_, plan::write_base(node)));
    SPLICE_ASSIGN_OR_RETURN(Tensor dest, new_buffer_for(*node.output(0), *base));
    SPLICE_TRY(copy_into(dest, *base));
    record(node, "copy", static_cast<int64_t>(base->nbytes()), dest);
    bind(node.output(0), dest);
    return ok_result();
  }

  const detail::ModelImpl& m_;
  detail::SessionState& state_;
  CallStats* stats_;
  Frame f_;
  std::vector<char> checks_done_;
  std::vector<std::shared_ptr<Storage>> per_call_;
  bool positions_on_device_ = false;
  std::vector<Tensor> positions_;  // per position symbol: its positions on the device
};

Result<std::optional<Tensor>> output_tensor(const Frame& f, const ir::Arg& out) {
  if (out.is_none()) return std::optional<Tensor>{};
  Scalar literal;
  if (auto* v = std::get_if<Value*>(&out.data)) {
    if ((*v)->is_tensor()) {
      SPLICE_ASSIGN_OR_RETURN(const Tensor* t, tensor_of(f, *v));
      return std::optional<Tensor>{*t};
    }
    SPLICE_ASSIGN_OR_RETURN(literal, scalar_of(f, *v));
  } else if (auto* i = std::get_if<int64_t>(&out.data)) {
    literal = *i;
  } else if (auto* d = std::get_if<double>(&out.data)) {
    literal = *d;
  } else if (auto* b = std::get_if<bool>(&out.data)) {
    literal = *b;
  } else {
    return make_error(ErrorKind::kBadArchive, "a graph output of an unsupported kind");
  }
  SPLICE_ASSIGN_OR_RETURN(Tensor t, scalar_tensor(literal));
  return std::optional<Tensor>{std::move(t)};
}

// The graph input whose storage write `d` ends up in: follow in-place bases back.
const Value* state_input_of(const detail::ModelImpl& m, const plan::WriteDecision& d) {
  const Value* v = plan::write_base(*m.program.graph.nodes()[d.node]);
  for (size_t guard = 0; guard <= m.plan.writes.size(); ++guard) {
    const Node* producer = v->producer();
    if (producer == nullptr) return v;
    auto pos = std::find_if(m.program.graph.nodes().begin(), m.program.graph.nodes().end(),
                            [&](const auto& n) { return n.get() == producer; }) -
               m.program.graph.nodes().begin();
    const int wi = m.decision_at[pos];
    if (wi < 0) return nullptr;
    v = plan::write_base(*producer);
  }
  return nullptr;
}

// Resolves the plan's names and indices into lookups, checking each.
Result<void> resolve_plan(detail::ModelImpl& m) {
  const ir::Graph& g = m.program.graph;
  const auto& nodes = g.nodes();
  m.decision_at.assign(nodes.size(), -1);
  for (size_t i = 0; i < m.plan.writes.size(); ++i) {
    const auto& d = m.plan.writes[i];
    if (d.node < 0 || d.node >= static_cast<int>(nodes.size()) || !nodes[d.node]->op().is_write())
      return make_error(ErrorKind::kBadArchive, "plan: write {} is not a write node", i);
    m.decision_at[d.node] = static_cast<int>(i);
    const Value* dest = nullptr;
    if (d.src == SrcMode::kProducerWrites && d.strategy != WriteStrategy::kFullOverwrite) {
      dest = g.find_value(d.dest_value);
      if (dest == nullptr || !dest->is_tensor())
        return make_error(ErrorKind::kBadArchive, "plan: write {} names unknown value '{}'", i,
                          d.dest_value);
    }
    m.dest_value.push_back(dest);
  }
  for (const auto& p : m.plan.placements) {
    const Value* v = g.find_value(p.value);
    const bool bad_buffer = p.kind == PlacementKind::kBuffer &&
                            (p.buffer < 0 || p.buffer >= static_cast<int>(m.plan.buffers.size()));
    const bool bad_write = p.kind == PlacementKind::kRegion &&
                           (p.write < 0 || p.write >= static_cast<int>(m.plan.writes.size()) ||
                            m.dest_value[p.write] == nullptr);
    if (v == nullptr || !v->is_tensor() || bad_buffer || bad_write)
      return make_error(ErrorKind::kBadArchive, "plan: bad placement of '{}'", p.value);
    m.placement[v] = &p;
  }
  // Which state each in-place write updates, so sessions keep it writable.
  for (const auto& d : m.plan.writes) {
    if (d.strategy != WriteStrategy::kInPlaceState) continue;
    const Value* input = state_input_of(m, d);
    for (const auto& spec : m.program.signature.inputs) {
      if (spec.value != input || input == nullptr) continue;
      if (spec.kind == ir::InputKind::kBuffer) m.state_written_in_place.insert(spec.target);
      if (spec.kind == ir::InputKind::kUserInput) m.inputs_written_in_place.insert(input->name());
    }
  }
  // Lifetimes, by plan step: a value dies after the step of its last reader (a group's step
  // for its members); a producer's destination lives until the producer has run; graph
  // outputs live to the end.
  std::vector<int> step_of(nodes.size(), -1);
  for (size_t s = 0; s < m.plan.steps.size(); ++s) {
    const plan::Step& step = m.plan.steps[s];
    if (step.kind == plan::StepKind::kNode) step_of[step.index] = static_cast<int>(s);
    if (step.kind == plan::StepKind::kGroup)
      for (int32_t n : m.plan.groups[step.index].nodes) step_of[n] = static_cast<int>(s);
  }
  std::unordered_map<const Value*, int> last;
  for (size_t pos = 0; pos < nodes.size(); ++pos) {
    for (const Value* v : nodes[pos]->operands()) last[v] = std::max(last[v], step_of[pos]);
    for (const Value* v : nodes[pos]->outputs())
      if (v != nullptr && !last.count(v)) last[v] = step_of[pos];
  }
  for (size_t i = 0; i < m.plan.writes.size(); ++i)
    if (m.dest_value[i] != nullptr && m.plan.writes[i].producer >= 0 &&
        m.plan.writes[i].producer < static_cast<int>(nodes.size()))
      last[m.dest_value[i]] = std::max(last[m.dest_value[i]], step_of[m.plan.writes[i].producer]);
  // Every node whose output is placed in a write's destination finds it through the
  // destination value (a view of the stored value after a group runs, too).
  std::unordered_map<const ir::Node*, int> position;
  for (size_t pos = 0; pos < nodes.size(); ++pos)
    position[nodes[pos].get()] = static_cast<int>(pos);
  for (const auto& [v, p] : m.placement) {
    if (p->kind != PlacementKind::kRegion || v->producer() == nullptr) continue;
    const Value* dest = m.dest_value[p->write];
    last[dest] = std::max(last[dest], step_of[position.at(v->producer())]);
  }
  for (const auto& out : g.outputs())
    if (auto* v = std::get_if<Value*>(&out.data)) last.erase(*v);
  for (const auto& spec : m.program.signature.inputs) last.erase(spec.value);
  m.release_after.assign(m.plan.steps.size(), {});
  for (const auto& [v, s] : last)
    if (s >= 0 && s < static_cast<int>(m.plan.steps.size())) m.release_after[s].push_back(v);
  return ok_result();
}

// A group's sizes when every one is known before the run.
std::optional<Shape> static_sizes_of(const std::vector<SymExpr>& sizes) {
  std::optional<std::vector<int64_t>> known = constant_values(sizes);
  if (!known) return std::nullopt;
  return Shape(known->begin(), known->end());
}

// An RMSNorm group's operands (plan/norm_fusion.h), matched again in the graph, as slots.
Result<detail::GroupExec> resolve_norm_group(
    detail::ModelImpl& m, const plan::Group& group, size_t i,
    const std::unordered_map<const ir::Node*, int>& position, const plan::GraphUses& uses) {
  const auto& nodes = m.program.graph.nodes();
  if (!m.backend->target().fused_rms_norm)
    return make_error(ErrorKind::kBadArchive,
                      "plan: group {} is an RMSNorm, which the {} backend does not run as one "
                      "kernel",
                      i, m.backend->name());
  SPLICE_ASSIGN_OR_RETURN(plan::RmsNormChain c, plan::rms_norm_of(m.program.graph, group, uses));
  detail::GroupExec e;
  e.label = fmt::format("group {} ({} .. {})", i, nodes[group.nodes.front()]->name(),
                        nodes[group.nodes.back()]->name());
  detail::GroupExec::Norm n;
  n.residual = c.residual != nullptr;
  n.weight = c.weight != nullptr;
  n.stat = c.stat;
  n.cast = c.cast;
  n.eps = c.eps;
  e.inputs.push_back(m.slot_of.at(c.x));
  if (c.residual) e.inputs.push_back(m.slot_of.at(c.residual));
  if (c.weight) e.inputs.push_back(m.slot_of.at(c.weight));
  bool has_out = false;
  for (const std::string& name : group.outputs) {
    const Value* v = m.program.graph.find_value(name);
    if (v == nullptr || (v != c.out && v != c.sum))
      return make_error(ErrorKind::kBadArchive,
                        "plan: {} stores '{}', which is neither the norm nor the residual sum",
                        e.label, name);
    (v == c.out ? n.out : n.sum) = static_cast<int>(e.outputs.size());
    has_out = has_out || v == c.out;
    e.output_nodes.push_back(position.at(v->producer()));
    e.outputs.push_back(m.slot_of.at(v));
    e.output_values.push_back(v);
    auto it = m.placement.find(v);
    e.placements.push_back(it == m.placement.end() ? nullptr : it->second);
  }
  if (!has_out)
    return make_error(ErrorKind::kBadArchive, "plan: {} does not store its norm '{}'", e.label,
                      c.out->name());
  e.sizes = c.out->type().sizes;
  e.static_sizes = static_sizes_of(e.sizes);
  e.norm = n;
  return e;
}

// A pointwise group's program, rebuilt from the graph, and its slots and placements.
Result<detail::GroupExec> resolve_pointwise_group(
    detail::ModelImpl& m, const plan::Group& group, size_t i,
    const std::unordered_map<const ir::Node*, int>& position) {
  const auto& nodes = m.program.graph.nodes();
  SPLICE_ASSIGN_OR_RETURN(plan::GroupProgram gp, plan::group_program(m.program.graph, group));
  detail::GroupExec e;
  e.label = fmt::format("group {} ({} .. {})", i, nodes[group.nodes.front()]->name(),
                        nodes[group.nodes.back()]->name());
  for (const auto& n : gp.program.nodes)
    if (!m.backend->target().runs_pointwise(n.fn, n.compute))
      return make_error(ErrorKind::kBadArchive,
                        "plan: {} computes {} in {}, which the {} "
                        "backend does not run in a group",
                        e.label, ir::pointwise_fn_info(n.fn).name, dtype_name(n.compute),
                        m.backend->name());
  for (const Value* v : gp.inputs) e.inputs.push_back(m.slot_of.at(v));
  for (const Value* v : gp.outputs) {
    e.output_nodes.push_back(position.at(v->producer()));
    e.outputs.push_back(m.slot_of.at(v));
    e.output_values.push_back(v);
    auto it = m.placement.find(v);
    e.placements.push_back(it == m.placement.end() ? nullptr : it->second);
  }
  e.static_sizes = static_sizes_of(gp.sizes);
  e.sizes = std::move(gp.sizes);
  e.program = std::move(gp.program);
  return e;
}

// A GEMV-epilogue group: its epilogue as a pointwise group, the product's columns among the
// program's inputs, the product's operands as slots.
Result<detail::GroupExec> resolve_gemv_group(
    detail::ModelImpl& m, const plan::Group& group, size_t i,
    const std::unordered_map<const ir::Node*, int>& position, const plan::GraphUses& uses) {
  const auto& nodes = m.program.graph.nodes();
  if (!m.backend->target().gemv_epilogue)
    return make_error(ErrorKind::kBadArchive,
                      "plan: group {} is a GEMV epilogue, which the {} backend does not run", i,
                      m.backend->name());
  SPLICE_ASSIGN_OR_RETURN(plan::GemvEpilogueOf of, plan::gemv_epilogue_of(m.program.graph, group));
  const ir::Node& product = *nodes[of.product];
  detail::GroupExec e;
  if (!of.pointwise.nodes.empty()) {
    SPLICE_ASSIGN_OR_RETURN(e, resolve_pointwise_group(m, of.pointwise, i, position));
  } else {
    // No epilogue: the product is stored as it is (a copy of its one column range).
    const Value* v = product.output(0);
    const DType t = v->type().dtype;
    e.program.add_output(e.program.add_node(ir::PointwiseFn::kCopy, {e.program.add_input(t)}, t,
                                            ir::opmath_dtype(t)));
    e.inputs.push_back(m.slot_of.at(v));
    e.output_nodes.push_back(of.product);
    e.outputs.push_back(m.slot_of.at(v));
    e.output_values.push_back(v);
    auto it = m.placement.find(v);
    e.placements.push_back(it == m.placement.end() ? nullptr : it->second);
    e.sizes = v->type().sizes;
    e.static_sizes = static_sizes_of(e.sizes);
  }
  e.label =
      fmt::format("group {} ({} .. {})", i, product.name(), nodes[group.nodes.back()]->name());
  detail::GroupExec::Gemv gemv;
  gemv.op = product.op_id();
  gemv.dtype = product.output(0)->type().dtype;
  const size_t x_arg = product.op_id() == ir::OpId::addmm ? 1 : 0;
  // Every value has a slot; x and the weight are tensors (plan::epilogue_product_op), the bias
  // may be None.
  auto slot_at = [&](size_t arg) -> int32_t {
    const Value* v = plan::tensor_at(product, arg);
    return v != nullptr ? m.slot_of.at(v) : -1;
  };
  gemv.a = slot_at(x_arg);
  gemv.b = slot_at(x_arg + 1);
  gemv.c = product.op_id() == ir::OpId::addmm    ? slot_at(0)
           : product.op_id() == ir::OpId::linear ? slot_at(2)
                                                 : -1;
  if (!of.prologue.nodes.empty()) {
    // The norm is applied as the product reads x: the product reads the norm's input.
    SPLICE_ASSIGN_OR_RETURN(plan::RmsNormChain c,
                            plan::rms_norm_of(m.program.graph, of.prologue, uses));
    auto* xp = std::get_if<Value*>(&product.arg(x_arg).data);
    const Value* x = xp != nullptr ? *xp : nullptr;
    while (x != nullptr && x != c.out && x->producer() != nullptr &&
           plan::row_view_source(*x->producer()) != nullptr)
      x = plan::row_view_source(*x->producer());
    if (c.residual != nullptr || x == nullptr || x != c.out)
      return make_error(ErrorKind::kBadArchive,
                        "plan: {} has an RMSNorm prologue that is not its product's input",
                        e.label);
    detail::GroupExec::Gemv::Norm n;
    n.weight = c.weight != nullptr ? m.slot_of.at(c.weight) : -1;
    n.stat = c.stat;
    n.cast = c.cast;
    n.eps = c.eps;
    gemv.norm = n;
    gemv.a = m.slot_of.at(c.x);
  }
  for (int32_t& slot : e.inputs) {
    const auto column = plan::product_column(*m.slot_value[slot], product);
    gemv.columns.push_back(column.value_or(-1));
    if (column) slot = -1;
  }
  e.gemv = std::move(gemv);
  return e;
}

// Rebuilds each group's program and resolves its slots and placements.
Result<void> resolve_groups(detail::ModelImpl& m) {
  // Who reads what and where each node stands, once for every group (the graph does not change
  // from here on).
  const plan::GraphUses uses = plan::graph_uses(m.program.graph);
  const std::unordered_map<const ir::Node*, int>& position = uses.position;
  for (size_t i = 0; i < m.plan.groups.size(); ++i) {
    const plan::Group& group = m.plan.groups[i];
    if (group.kind == plan::GroupKind::kRmsNorm) {
      SPLICE_ASSIGN_OR_RETURN(detail::GroupExec e, resolve_norm_group(m, group, i, position, uses));
      m.groups.push_back(std::move(e));
      continue;
    }
    if (group.kind == plan::GroupKind::kGemvEpilogue) {
      SPLICE_ASSIGN_OR_RETURN(detail::GroupExec e, resolve_gemv_group(m, group, i, position, uses));
      m.groups.push_back(std::move(e));
      continue;
    }
    SPLICE_ASSIGN_OR_RETURN(detail::GroupExec e, resolve_pointwise_group(m, group, i, position));
    m.groups.push_back(std::move(e));
  }
  return ok_result();
}

}  // namespace

int64_t CallStats::copy_bytes() const {
  int64_t n = 0;
  for (const auto& s : steps) n += s.kind == "copy" ? s.bytes : 0;
  return n;
}
int64_t CallStats::bytes_into(const Storage* storage) const {
  int64_t n = 0;
  for (const auto& s : steps) n += s.storage == storage ? s.bytes : 0;
  return n;
}

Result<Tensor> scalar_tensor(const Scalar& s) {
  if (auto* b = std::get_if<bool>(&s)) {
    SPLICE_ASSIGN_OR_RETURN(Tensor t, Tensor::empty(DType::kBool, {}));
    *t.data<bool>() = *b;
    return t;
  }
  if (auto* i = std::get_if<int64_t>(&s)) {
    SPLICE_ASSIGN_OR_RETURN(Tensor t, Tensor::empty(DType::kInt64, {}));
    *t.data<int64_t>() = *i;
    return t;
  }
  SPLICE_ASSIGN_OR_RETURN(Tensor t, Tensor::empty(DType::kFloat64, {}));
  *t.data<double>() = std::get<double>(s);
  return t;
}

Result<Tensor> to_backend(const backend::Backend& b, backend::SessionContext* session,
                          const Tensor& t) {
  if (t.device() == b.device()) return t;
  SPLICE_ASSIGN_OR_RETURN(auto storage, b.allocate(t.nbytes()));
  Tensor out(t.dtype(), t.sizes(), contiguous_strides(t.sizes()), 0, std::move(storage));
  SPLICE_TRY(b.copy(out, t, session));
  return out;
}

Result<detail::ModelImpl> prepare(ir::Program program, const PrepareOptions& options,
                                  std::optional<plan::Plan> plan) {
  detail::ModelImpl model;
  SPLICE_ASSIGN_OR_RETURN(model.backend, backend::require_backend(options.device));
  // Every op × dtype the program needs, from the backend's table, before anything is loaded.
  SPLICE_TRY(check_kernels(program, model.backend->target()));
  for (const auto& node : program.graph.nodes())
    model.kernels.push_back(node->op().runs_on_host() ? nullptr
                                                      : model.backend->kernel(node->op_id()));
  const auto& specs = program.signature.inputs;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (specs[i].kind == ir::InputKind::kCustomObj || specs[i].kind == ir::InputKind::kToken)
      return make_error(ErrorKind::kUnsupportedOp, "input {} is a {}, which splice cannot run", i,
                        ir::input_kind_name(specs[i].kind));
    if (specs[i].kind != ir::InputKind::kUserInput) continue;
    if (specs[i].value == nullptr || !specs[i].value->is_tensor())
      return make_error(ErrorKind::kBadArchive,
                        "user input '{}' is not a tensor; `splice run` takes tensor inputs only "
                        "(pass a 0-d tensor and call .item() in the program instead)",
                        specs[i].value ? specs[i].value->name() : specs[i].target);
    model.user_inputs.push_back(i);
  }
  for (const auto& spec : program.signature.outputs)
    if (spec.kind != ir::OutputKind::kUserOutput && spec.kind != ir::OutputKind::kLossOutput &&
        spec.kind != ir::OutputKind::kBufferMutation &&
        spec.kind != ir::OutputKind::kUserInputMutation)
      return make_error(ErrorKind::kUnsupportedOp,
                        "a graph output is a {}, which splice cannot "
                        "run",
                        ir::output_kind_name(spec.kind));
  if (plan && plan->backend != model.backend->name())
    return make_error(ErrorKind::kBadUsage, "the plan was made for the {} backend, not {}",
                      plan->backend, model.backend->name());
  model.plan =
      plan ? std::move(*plan) : plan::build_plan(program, options.mode, model.backend->target());
  SPLICE_TRY(plan::check_static_peak(program, model.plan));
  model.program = std::move(program);
  // Steps must run every node once, in an order the plan chose; check before trusting it.
  std::vector<int> seen(model.program.graph.nodes().size(), 0);
  for (const auto& s : model.plan.steps) {
    const bool node = s.kind == plan::StepKind::kNode, group = s.kind == plan::StepKind::kGroup;
    const int limit = node    ? static_cast<int>(seen.size())
                      : group ? static_cast<int>(model.plan.groups.size())
                              : static_cast<int>(model.plan.writes.size());
    if (s.index < 0 || s.index >= limit)
      return make_error(ErrorKind::kBadArchive, "plan: a step refers to {} {}",
                        node    ? "node"
                        : group ? "group"
                                : "write",
                        s.index);
    if (node) ++seen[s.index];
    if (group)
      for (int32_t n : model.plan.groups[s.index].nodes) {
        if (n < 0 || n >= static_cast<int>(seen.size()))
          return make_error(ErrorKind::kBadArchive, "plan: group {} names node {}", s.index, n);
        ++seen[n];
      }
  }
  if (std::any_of(seen.begin(), seen.end(), [](int n) { return n != 1; }))
    return make_error(ErrorKind::kBadArchive, "plan: the steps do not run every node once");
  SPLICE_TRY(resolve_plan(model));
  SPLICE_TRY(resolve_node_exec(model));
  SPLICE_TRY(resolve_groups(model));
  model.allocated_values = find_allocated_values(model);
  if (model.backend->recorder() != nullptr)
    model.positions = find_device_positions(model.program, model.plan);
  backend::ModelOptions backend_options;
  backend_options.threads = std::max(options.threads, 1);
  for (const detail::GroupExec& g : model.groups)
    if (!g.norm && !g.gemv) backend_options.pointwise_groups.push_back(&g.program);
  SPLICE_ASSIGN_OR_RETURN(model.backend_model, model.backend->open_model(backend_options));
  // Weights go to the backend's device once; its sessions share them. A weight the backend
  // copied (uploaded to its device) replaces the program's host view too, so the file map under
  // those views is released once nothing views it: the weights are never resident twice. (The
  // CPU uses the views as they are.)
  for (auto& [name, w] : model.program.weights) {
    auto moved = to_backend(*model.backend, nullptr, w);
    if (!moved.ok()) return moved.error().with_context(fmt::format("weight '{}'", name));
    if (moved->storage() != w.storage()) w = *moved;
    model.weights.emplace(name, std::move(*moved));
  }
  model.load_checked_weights = check_weights_at_load(model.program, model.weights);
  return model;
}

namespace {

// Whether a buffer other than `name` views `storage` (two buffers may be given one tensor).
bool shared_with_another_buffer(const std::map<std::string, Tensor, std::less<>>& buffers,
                                const std::string& name, const Storage* storage) {
  for (const auto& [other, t] : buffers)
    if (other != name && t.storage().get() == storage) return true;
  return false;
}

}  // namespace

Result<void> reset_session_state(const detail::ModelImpl& model, detail::SessionState& state) {
  if (state.backend_session == nullptr) {
    SPLICE_ASSIGN_OR_RETURN(state.backend_session,
                            model.backend->open_session(*model.backend_model));
  }
  std::map<std::string, Tensor, std::less<>> buffers;
  bool replaced = false;
  for (const auto& spec : model.program.signature.inputs) {
    if (spec.kind != ir::InputKind::kBuffer) continue;
    auto it = model.weights.find(spec.target);
    if (it == model.weights.end()) continue;
    // Buffers are read-only views of the weights, shared by sessions; a buffer that the plan
    // updates in place gets this session's own copy, once.
    Tensor t = it->second;
    if (model.state_written_in_place.count(spec.target)) {
      // The session's copy is reset in place when it has one, so recorded calls, which name
      // its memory, stay valid.
      auto own = state.buffers.find(spec.target);
      const bool reusable = own != state.buffers.end() && own->second.storage() != t.storage() &&
                            own->second.dtype() == t.dtype() && own->second.sizes() == t.sizes() &&
                            own->second.is_contiguous();
      Tensor copy;
      if (reusable) {
        copy = own->second;
      } else {
        SPLICE_ASSIGN_OR_RETURN(auto storage, model.backend->allocate(t.nbytes()));
        copy = Tensor(t.dtype(), t.sizes(), contiguous_strides(t.sizes()), 0, std::move(storage));
        replaced = true;
      }
      SPLICE_TRY(model.backend->copy(copy, t, state.backend_session.get()));
      t = std::move(copy);
    } else if (auto own = state.buffers.find(spec.target);
               own == state.buffers.end() || own->second.storage() != t.storage()) {
      // A buffer the calls replace (not update in place) may hold the session's own memory by
      // now, which recordings name: the archive's value is copied into it instead.
      const bool reusable =
          own != state.buffers.end() && own->second.storage()->owned() &&
          own->second.storage()->writable() && own->second.dtype() == t.dtype() &&
          own->second.sizes() == t.sizes() && own->second.is_contiguous() &&
          !shared_with_another_buffer(state.buffers, spec.target, own->second.storage().get());
      if (reusable) {
        SPLICE_TRY(model.backend->copy(own->second, t, state.backend_session.get()));
        t = own->second;
      } else {
        replaced = true;
      }
    }
    buffers[spec.target] = std::move(t);
  }
  // Recordings read the buffers they were recorded with: if any of them changed, drop them.
  if (replaced) forget_recordings(state);
  state.buffers = std::move(buffers);
  return ok_result();
}

Result<detail::SessionState> open_session_state(const detail::ModelImpl& model) {
  detail::SessionState state;
  SPLICE_TRY(reset_session_state(model, state));
  return state;
}

namespace {

// The call's results from the frame after its last step.
Result<CallOutputs> collect_outputs(const ir::Program& program, const Frame& f) {
  CallOutputs result;
  const auto& outs = program.graph.outputs();
  const auto& specs = program.signature.outputs;
  for (size_t i = 0; i < outs.size() && i < specs.size(); ++i) {
    SPLICE_ASSIGN_OR_RETURN(std::optional<Tensor> t, output_tensor(f, outs[i]));
    switch (specs[i].kind) {
      case ir::OutputKind::kBufferMutation:
        if (t) result.new_buffers[specs[i].target] = *t;
        break;
      case ir::OutputKind::kUserInputMutation:
        if (t) result.mutated_inputs[specs[i].target] = *t;
        break;
      default:
        result.user_outputs.push_back(std::move(t));
        break;
    }
  }
  return result;
}

// A new contiguous tensor on the model's device holding t.
Result<Tensor> copy_to_new(const detail::ModelImpl& model, detail::SessionState& state,
                           const Tensor& t) {
  SPLICE_ASSIGN_OR_RETURN(auto storage, model.backend->allocate(t.nbytes()));
  Tensor copy(t.dtype(), t.sizes(), contiguous_strides(t.sizes()), 0, std::move(storage));
  SPLICE_TRY(model.backend->copy(copy, t, state.backend_session.get()));
  return copy;
}

// A buffer the call gives a new tensor (a small counter updated out of place, say): when the
// session's current tensor for it is its own memory, the recording ends by copying the new
// value there and the buffer keeps that tensor, so every replay reads and updates the same
// memory. (A buffer still viewing the archive's value is not the session's to write: the
// recording is then refused, replay_blocker.)
Result<void> keep_buffers_in_place(const detail::ModelImpl& model, detail::SessionState& state,
                                   CallOutputs& outputs) {
  for (auto& [name, t] : outputs.new_buffers) {
    auto it = state.buffers.find(name);
    if (it == state.buffers.end() || it->second.storage() == t.storage()) continue;
    const Tensor& own = it->second;
    auto archived = model.weights.find(name);
    const bool views_archive =
        archived != model.weights.end() && archived->second.storage() == own.storage();
    if (views_archive || !own.storage()->owned() || !own.storage()->writable() ||
        !own.is_contiguous() || own.dtype() != t.dtype() || own.sizes() != t.sizes() ||
        shared_with_another_buffer(state.buffers, name, own.storage().get()))
      continue;
    SPLICE_TRY(model.backend->copy(own, t, state.backend_session.get()));
    t = own;
  }
  return ok_result();
}

// Runs the call's steps as a recording and then replays it once (runtime/recorded_calls.h).
// Returns nullopt when the call cannot be recorded (the entry then says why): nothing of it
// ran, and the caller runs it without a recording.
Result<std::optional<CallOutputs>> record_call(
    const detail::ModelImpl& model, detail::SessionState& state, Call& call, RecordedEntry& entry,
    std::vector<std::pair<const Value*, Tensor>> inputs) {
  backend::SessionContext& session = *state.backend_session;
  SPLICE_ASSIGN_OR_RETURN(const backend::CallRecorder* recorder, recorder_of(model));
  std::vector<std::shared_ptr<Storage>> keep;
  SPLICE_TRY(recorder->begin_recording(session, &keep));
  auto ran = [&]() -> Result<CallOutputs> {
    SPLICE_TRY(call.run_steps());
    SPLICE_ASSIGN_OR_RETURN(CallOutputs outputs, collect_outputs(model.program, call.frame()));
    SPLICE_TRY(keep_buffers_in_place(model, state, outputs));
    return outputs;
  }();
  auto recorded = recorder->end_recording(session);
  std::string why;
  if (!ran.ok()) {
    why = ran.error().message();
    // A .item() that is not a position read on the device is the usual reason: say which.
    if (!model.positions.not_positions.empty()) why += " (" + model.positions.not_positions + ")";
  } else if (!recorded.ok()) {
    why = recorded.error().message();
  } else {
    why = replay_blocker(model, state, *ran);
  }
  if (!why.empty()) {
    refuse_recording(state, entry, std::move(why));
    return std::optional<CallOutputs>{};
  }
  GraphStats& stats = state.recordings->stats;
  keep_session_memory(state, keep);
  for (const auto& [value, t] : inputs) keep.push_back(t.storage());
  entry.call = std::move(*recorded);
  entry.inputs = std::move(inputs);
  entry.outputs = std::move(*ran);
  entry.keep = std::move(keep);
  ++stats.recorded;
  // Recording ran nothing: this call's results come from the first replay.
  SPLICE_ASSIGN_OR_RETURN(bool replayed, recorder->replay(session, *entry.call));
  SPLICE_CHECK_OR_RETURN(replayed, ErrorKind::kInternal, "a call went stale as it was recorded");
  ++stats.replayed;
  SPLICE_TRY(model.backend->synchronize(session));
  return std::optional<CallOutputs>{entry.outputs};
}

}  // namespace

Result<CallOutputs> execute(const detail::ModelImpl& model, const TensorMap& user_inputs,
                            detail::SessionState& state, CallStats* stats, StepHooks* hooks) {
  const ir::Program& program = model.program;
  if (state.backend_session == nullptr)
    return make_error(ErrorKind::kInternal, "execute: the session state was not opened");
  Call call(model, state, stats);
  Frame& f = call.frame();
  SPLICE_ASSIGN_OR_RETURN(auto bound,
                          bind_inputs(program, user_inputs, model.weights, state.buffers, f.symbols,
                                      model.load_checked_weights));
  // The archive's recorded sizes that only the bound symbols can confirm, before any kernel.
  SPLICE_TRY(run_shape_checks(program, f.symbols, call.checks_done()));
  // A call that cannot fit is refused now, before any of its memory is allocated.
  SPLICE_TRY(check_call_memory(model, state, f.symbols));
  // A call whose steps are recorded (stats and hooks want every step, so those calls run them).
  RecordedEntry* entry =
      stats == nullptr && hooks == nullptr ? recording_for(model, state, f.symbols) : nullptr;
  if (entry != nullptr && entry->call != nullptr) {
    // Positions the caller gave on the host fail here, before anything runs, as .item() would;
    // the replay checks those on the device.
    SPLICE_TRY(check_host_positions(program, model.positions, bound));
    SPLICE_ASSIGN_OR_RETURN(bool replayed, replay_recorded(model, state, *entry, bound));
    if (replayed) return entry->outputs;
    *entry = RecordedEntry{};  // stale: run once more without it, then record again
  }
  const bool recording = entry != nullptr && entry->calls_run > 0 && entry->refused.empty();
  std::vector<std::pair<const Value*, Tensor>> uploaded;
  for (auto& [value, tensor] : bound) {
    // A caller's host tensor goes to the backend's device once per call; one already there is
    // used in place — except by a call being recorded, whose replays must read tensors of
    // their own (the caller's next tensor is elsewhere).
    Tensor t;
    if (recording && !tensor.storage()->owned() && tensor.device() == model.backend->device()) {
      SPLICE_ASSIGN_OR_RETURN(t, copy_to_new(model, state, tensor));
    } else {
      SPLICE_ASSIGN_OR_RETURN(t, to_backend(*model.backend, state.backend_session.get(), tensor));
    }
    if (t.storage() != tensor.storage()) uploaded.emplace_back(value, t);
    f.at(value) = std::move(t);
  }
  if (recording && !model.positions.symbols.empty()) {
    // The positions' values this once, from the caller's tensors (a device one is read back
    // before the recording starts): host nodes and checks compute with them while recording.
    for (const PositionSymbol& s : model.positions.symbols)
      for (const auto& [value, tensor] : bound) {
        if (value != s.source) continue;
        SPLICE_ASSIGN_OR_RETURN(Tensor host, f.device.to_host(tensor));
        SPLICE_ASSIGN_OR_RETURN(std::optional<int64_t> v, host_position(s, host));
        if (v) f.symbols[s.name] = *v;
      }
    call.read_positions_on_device();
  }
  if (recording) {
    SPLICE_ASSIGN_OR_RETURN(auto recorded,
                            record_call(model, state, call, *entry, std::move(uploaded)));
    if (recorded) return std::move(*recorded);
    // Nothing ran while recording: run the call again, now step by step.
    return execute(model, user_inputs, state, stats, hooks);
  }
  if (entry != nullptr) ++entry->calls_run;
  SPLICE_TRY(call.run_steps(hooks));
  SPLICE_ASSIGN_OR_RETURN(CallOutputs result, collect_outputs(program, f));
  if (entry != nullptr && entry->calls_run == 1 && entry->refused.empty()) {
    if (std::string why =
            replay_cost_blocker(replay_copy_bytes(model, bound, result), model.plan.totals.kernels);
        !why.empty())
      refuse_recording(state, *entry, std::move(why));
  }
  // Everything the call queued is done (and any failure a kernel recorded is reported) before
  // its results are read.
  SPLICE_TRY(model.backend->synchronize(*state.backend_session));
  return result;
}

}  // namespace splice::runtime
