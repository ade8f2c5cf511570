// The backend registry and the parts of Backend every backend shares (the kernel table and
// the Target built from it, and the default CallProbe: the host's clock, nothing counted).
#include "backends/backend.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace splice::backend {

namespace {

struct Registry {
  std::mutex mutex;
  std::vector<std::unique_ptr<Backend>> backends;
};

Registry& registry() {
  static Registry r;  // function-local: safe to use from other static initializers
  return r;
}

// Times a call with the host's steady clock: on a host backend the call is all host work.
class HostClockProbe final : public CallProbe {
 public:
  explicit HostClockProbe(std::string_view backend) : backend_(backend) {}
  std::string_view clock() const override { return "host"; }
  Result<void> begin(bool /*count*/) override {
    start_ = std::chrono::steady_clock::now();
    return ok_result();
  }
  Result<double> end() override {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_)
        .count();
  }
  Result<LaunchCounts> counts() override {
    LaunchCounts c;
    c.note = fmt::format("the {} backend launches no device work to count", backend_);
    return c;
  }

 private:
  std::string backend_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace

Result<std::unique_ptr<CallProbe>> Backend::probe(SessionContext& /*session*/) const {
  return std::unique_ptr<CallProbe>(std::make_unique<HostClockProbe>(name()));
}

Target Target::from_kernels(std::string name, std::span<const KernelEntry> kernels) {
  Target t;
  t.name = std::move(name);
  const size_t n = static_cast<size_t>(ir::OpId::kCount);
  t.caps.assign(n, kNoCaps);
  t.kernels.assign(n, false);
  t.dtypes.assign(n, DTypeSet());
  for (const KernelEntry& e : kernels) {
    const size_t i = static_cast<size_t>(e.op);
    if (i >= n) continue;
    t.caps[i] = e.caps;
    t.kernels[i] = e.fn != nullptr;
    t.dtypes[i] = e.fn != nullptr ? e.dtypes : DTypeSet();
  }
  return t;
}

Result<void> Target::check_runs(ir::OpId op, DType dtype) const {
  if (!supports(op))
    return make_error(ErrorKind::kUnsupportedOp, "the {} backend has no kernel for {}", name,
                      ir::op_target(op));
  if (runs(op, dtype)) return ok_result();
  return make_error(ErrorKind::kUnsupportedOp,
                    "the {} backend has no kernel for {} on {} tensors (it runs {})", name,
                    ir::op_target(op), dtype_name(dtype),
                    dtype_set_string(dtypes[static_cast<size_t>(op)]));
}

bool Target::runs_pointwise(ir::PointwiseFn fn, DType compute) const {
  const size_t i = static_cast<size_t>(fn);
  if (i >= pointwise_classes.size()) return false;
  const uint8_t cls = compute == DType::kBool ? ir::kComputeBool
                      : is_integral(compute)  ? ir::kComputeInt
                                              : ir::kComputeFloat;
  return (pointwise_classes[i] & cls) != 0;
}

void Backend::set_kernels(std::string name, std::span<const KernelEntry> kernels) {
  by_op_.assign(static_cast<size_t>(ir::OpId::kCount), KernelEntry{});
  for (const KernelEntry& e : kernels) {
    const size_t i = static_cast<size_t>(e.op);
    // Two kernels for one op, or an id outside the table, is a backend bug.
    if (i >= by_op_.size() || by_op_[i].fn != nullptr) {
      std::fprintf(stderr, "splice: backend %s registers op %zu twice or out of range\n",
                   name.c_str(), i);
      std::abort();
    }
    by_op_[i] = e;
  }
  target_ = Target::from_kernels(std::move(name), kernels);
}

bool register_backend(std::unique_ptr<Backend> backend) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const auto& b : r.backends) {
    if (b->name() == backend->name()) {
      std::fprintf(stderr, "splice: backend '%.*s' registered twice\n",
                   static_cast<int>(b->name().size()), b->name().data());
      std::abort();
    }
  }
  r.backends.push_back(std::move(backend));
  return true;
}

const Backend* find_backend(std::string_view name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const auto& b : r.backends)
    if (b->name() == name) return b.get();
  return nullptr;
}

std::vector<std::string> backend_names() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<std::string> names;
  for (const auto& b : r.backends) names.emplace_back(b->name());
  std::sort(names.begin(), names.end());
  return names;
}

Result<const Backend*> require_backend(std::string_view name) {
  if (const Backend* b = find_backend(name)) return b;
  std::string known;
  for (const auto& n : backend_names()) known += (known.empty() ? "" : ", ") + n;
  return make_error(ErrorKind::kBadUsage, "this splice has no '{}' backend (it has: {})", name,
                    known.empty() ? "none" : known);
}

}  // namespace splice::backend
