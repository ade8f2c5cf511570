// The CPU backend (see cpu_backend.h): the reference kernels over host memory, one thread pool
// per model, and BLAS kept single-threaded so that each model's pool alone decides how many
// cores its kernels use (Debian 12's OpenBLAS 0.3.21 has only a process-wide thread count).
#include "backends/cpu/cpu_backend.h"

#include <memory>

#include "backends/cpu/blas_setup.h"
#include "backends/cpu/pointwise_program.h"
#include "backends/cpu/registry.h"
#include "backends/cpu/thread_pool.h"
#include "tensor/convert.h"

namespace splice::cpu {

namespace {

class CpuModel final : public backend::ModelContext {
 public:
  explicit CpuModel(int threads) : pool_(threads) {}
  int threads() const override { return pool_.size(); }
  int threads_used() const override { return pool_.max_threads_used(); }
  ThreadPool& pool() { return pool_; }

 private:
  ThreadPool pool_;
};

class CpuSession final : public backend::SessionContext {
 public:
  explicit CpuSession(ThreadPool* pool) : pool_(pool) {}
  ThreadPool* pool() const { return pool_; }

 private:
  ThreadPool* pool_;  // the model's, which outlives its sessions
};

class CpuBackend final : public backend::Backend {
 public:
  CpuBackend() {
    set_kernels("cpu", kernels());
    // Pointwise groups run in the program interpreter (pointwise_program.h).
    std::vector<uint8_t> classes;
    for (ir::PointwiseFn fn : ir::all_pointwise_fns()) classes.push_back(interpreted_classes(fn));
    set_pointwise_classes(std::move(classes));
  }

  std::string_view name() const override { return "cpu"; }
  Device device() const override { return kHostDevice; }

  Result<std::shared_ptr<Storage>> allocate(size_t nbytes) const override {
    return Storage::allocate(nbytes);
  }

  Result<void> copy(const Tensor& dst, const Tensor& src,
                    backend::SessionContext* session) const override {
    SPLICE_CHECK_OR_RETURN(dst.is_host() && src.is_host(), ErrorKind::kInternal,
                           "the CPU backend copies host memory only");
    SPLICE_CHECK_OR_RETURN(dst.sizes() == src.sizes() && dst.dtype() == src.dtype(),
                           ErrorKind::kInternal, "copy of {}{} into {}{}", dtype_name(src.dtype()),
                           shape_string(src.sizes()), dtype_name(dst.dtype()),
                           shape_string(dst.sizes()));
    copy_cast_into(dst, src);
    return ok_result();
  }

  Result<void> run_pointwise(backend::SessionContext* session, const ir::PointwiseProgram& program,
                             std::span<const Tensor> inputs, std::span<const Tensor> outputs,
                             const Shape& sizes) const override {
    ScopedPool scoped_pool(session != nullptr ? session_pool(*session) : current_pool());
    try {
      return run_pointwise_program(program, inputs, outputs, sizes);
    } catch (const std::bad_alloc&) {
      // Only the group's per-thread tile buffers are allocated here (its outputs exist).
      return make_error(ErrorKind::kBackend,
                        "out of memory running a pointwise group over {}: its per-thread tile "
                        "buffers could not be allocated",
                        shape_string(sizes));
    }
  }

  Result<std::shared_ptr<backend::ModelContext>> open_model(
      const backend::ModelOptions& options) const override {
    // OpenBLAS is opened with the first CPU model (blas_setup.h), so a missing library is an
    // error of the load that needs it, and a process that never runs a CPU model never maps it.
    SPLICE_TRY(open_blas());
    return std::shared_ptr<backend::ModelContext>(std::make_shared<CpuModel>(options.threads));
  }

  Result<std::unique_ptr<backend::SessionContext>> open_session(
      backend::ModelContext& model) const override {
    auto* cpu_model = dynamic_cast<CpuModel*>(&model);
    SPLICE_CHECK_OR_RETURN(cpu_model != nullptr, ErrorKind::kInternal,
                           "a CPU session needs a CPU model context");
    return std::unique_ptr<backend::SessionContext>(
        std::make_unique<CpuSession>(&cpu_model->pool()));
  }
};

const bool kRegistered = backend::register_backend(std::make_unique<CpuBackend>());

}  // namespace

ThreadPool* session_pool(backend::SessionContext& session) {
  auto* s = dynamic_cast<CpuSession*>(&session);
  return s != nullptr ? s->pool() : nullptr;
}

}  // namespace splice::cpu
