// make_call_probe (call_probe.h): CUDA events around each call on the session's stream, and,
// for a counted call, CUPTI's per-stream counts armed just before the start event and read
// just after the end event completes (CUPTI's records are on only while calls are counted).
// A profiled call (enable_profile) keeps its kernel records instead, each tagged with the plan
// step marked when it was launched.
#include "backends/cuda/call_probe.h"

#include <cxxabi.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/cupti_counter.h"

namespace splice::cuda {

namespace {

// A kernel's C++ name from its mangled one (the mangled one where it is not C++).
std::string demangled(const std::string& name) {
  int status = 0;
  char* text = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  if (status != 0 || text == nullptr) return name;
  std::string out(text);
  std::free(text);
  return out;
}

class CudaCallProbe final : public backend::CallProbe {
 public:
  explicit CudaCallProbe(CudaSession& session) : session_(session) {}
  CudaCallProbe(const CudaCallProbe&) = delete;
  CudaCallProbe& operator=(const CudaCallProbe&) = delete;

  ~CudaCallProbe() override {
    // A call that failed between begin() and end() left the stream armed.
    if (counter_ != nullptr && armed_) (void)counter_->disarm(session_.stream(), stream_id_);
    if (counter_ != nullptr && held_) counter_->release();
    if (start_ != nullptr) (void)cudaEventDestroy(start_);
    if (stop_ != nullptr) (void)cudaEventDestroy(stop_);
  }

  Result<void> open() {
    session_.make_current();
    // Default flags: with cudaEventDisableTiming an event has no time to read.
    SPLICE_CUDA_CHECK(cudaEventCreate(&start_));
    SPLICE_CUDA_CHECK(cudaEventCreate(&stop_));
    // libcupti is loaded now, but its records are made only while a call is counted.
    auto counter = ActivityCounter::get();
    if (!counter.ok()) {
      note_ = counter.error().message();
      return ok_result();
    }
    counter_ = *counter;
    return ok_result();
  }

  std::string_view clock() const override { return "cuda_events"; }
  bool counts_work() const override { return counter_ != nullptr; }

  Result<void> begin(bool count) override {
    session_.make_current();
    count = count || profiling_;
    // Records on only for counted calls: while held, CUPTI costs every launch host time.
    if (counter_ != nullptr && count != held_) {
      if (count) {
        if (auto held = hold(); !held.ok()) stop_counting(held.error());
      } else {
        counter_->release();
        held_ = false;
      }
    }
    // Armed before the start event: arming waits for the stream and flushes CUPTI, host work
    // that must not fall inside the timed interval.
    if (profiling_) {
      SPLICE_CHECK_OR_RETURN(counter_ != nullptr, ErrorKind::kBackend,
                             "profiling a GPU call needs CUPTI's kernel records: {}", note_);
      SPLICE_TRY(counter_->profile_arm(session_.stream(), stream_id_));
      armed_ = true;
    } else if (count && counter_ != nullptr) {
      if (auto armed = counter_->arm(session_.stream(), stream_id_); !armed.ok())
        stop_counting(armed.error());
      else
        armed_ = true;
    }
    SPLICE_CUDA_CHECK(cudaEventRecord(start_, session_.stream()));
    return ok_result();
  }

  Result<double> end() override {
    session_.make_current();
    // run() has waited for its work already; the stop event still goes on the stream, so the
    // interval is the device's view of the call from start to its last copy.
    SPLICE_CUDA_CHECK(cudaEventRecord(stop_, session_.stream()));
    SPLICE_CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0;
    SPLICE_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    if (profiling_) {
      profiling_ = false;
      armed_ = false;
      SPLICE_ASSIGN_OR_RETURN(std::vector<KernelRecord> records,
                              counter_->profile_disarm(session_.stream(), stream_id_));
      kernels_.clear();
      for (KernelRecord& r : records) {
        backend::KernelTime k;
        k.step = r.step;
        k.kernel = demangled(r.name);
        for (int i = 0; i < 3; ++i) k.grid[i] = r.grid[i];
        k.ms = static_cast<double>(r.end_ns - r.start_ns) * 1e-6;
        kernels_.push_back(std::move(k));
      }
      totals_.kernels += static_cast<int64_t>(records.size());
    } else if (counter_ != nullptr && armed_) {
      auto counts = counter_->disarm(session_.stream(), stream_id_);
      armed_ = false;
      if (!counts.ok()) {
        stop_counting(counts.error());
      } else {
        totals_.kernels += counts->kernels;
        totals_.memcpys += counts->memcpys;
        totals_.memsets += counts->memsets;
      }
    }
    return static_cast<double>(ms);
  }

  Result<bool> enable_profile() override {
    SPLICE_CHECK_OR_RETURN(counter_ != nullptr, ErrorKind::kBackend,
                           "profiling a GPU call needs CUPTI's kernel records: {}", note_);
    profiling_ = true;
    return true;
  }

  Result<void> mark_step(int64_t step) override {
    if (!profiling_) return ok_result();
    return counter_->mark_step(step);
  }

  Result<std::vector<backend::KernelTime>> kernel_times() override { return kernels_; }

  Result<backend::LaunchCounts> counts() override {
    backend::LaunchCounts c;
    c.counted = counter_ != nullptr;
    if (c.counted) {
      c.kernels = totals_.kernels;
      c.memcpys = totals_.memcpys;
      c.memsets = totals_.memsets;
    }
    c.note = note_;
    return c;
  }

 private:
  // Turns CUPTI's records on for this probe and learns the session stream's id.
  Result<void> hold() {
    SPLICE_TRY(counter_->hold());
    held_ = true;
    SPLICE_ASSIGN_OR_RETURN(stream_id_, counter_->stream_id(session_.stream()));
    return ok_result();
  }

  // A counting failure leaves the times valid: counting stops for the rest of the measurement
  // (a partial count would be misread as a per-call figure) and the reason becomes the note.
  void stop_counting(const Error& why) {
    note_ = "counting stopped: " + why.message();
    if (held_) counter_->release();
    held_ = false;
    counter_ = nullptr;
  }

  CudaSession& session_;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
  ActivityCounter* counter_ = nullptr;  // null when not counting (note_ says why)
  uint32_t stream_id_ = 0;
  bool held_ = false;       // CUPTI's records are on for this probe (a counted call)
  bool armed_ = false;      // between a begin() that armed the stream and its end()
  bool profiling_ = false;  // enable_profile() until the profiled call's end()
  std::vector<backend::KernelTime> kernels_;  // the profiled call's kernels
  StreamCounts totals_;
  std::string note_;
};

}  // namespace

Result<std::unique_ptr<backend::CallProbe>> make_call_probe(CudaSession& session) {
  auto probe = std::make_unique<CudaCallProbe>(session);
  SPLICE_TRY(probe->open());
  return std::unique_ptr<backend::CallProbe>(std::move(probe));
}

}  // namespace splice::cuda
