// make_call_probe (call_probe.h): CUDA events around each call on the session's stream, and
// CUPTI's per-stream counts armed just before the start event and read just after the end
// event completes.
#include "backends/cuda/call_probe.h"

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/cupti_counter.h"

namespace splice::cuda {

namespace {

class CudaCallProbe final : public backend::CallProbe {
 public:
  explicit CudaCallProbe(CudaSession& session) : session_(session) {}
  CudaCallProbe(const CudaCallProbe&) = delete;
  CudaCallProbe& operator=(const CudaCallProbe&) = delete;

  ~CudaCallProbe() override {
    // A call that failed between begin() and end() left the stream armed.
    if (counter_ != nullptr && armed_) (void)counter_->disarm(session_.stream(), stream_id_);
    if (counter_ != nullptr) counter_->release();
    if (start_ != nullptr) (void)cudaEventDestroy(start_);
    if (stop_ != nullptr) (void)cudaEventDestroy(stop_);
  }

  Result<void> open() {
    session_.make_current();
    // Default flags: with cudaEventDisableTiming an event has no time to read.
    SPLICE_CUDA_CHECK(cudaEventCreate(&start_));
    SPLICE_CUDA_CHECK(cudaEventCreate(&stop_));
    auto counter = ActivityCounter::get();
    if (!counter.ok()) {
      note_ = counter.error().message();
      return ok_result();
    }
    if (auto held = (*counter)->hold(); !held.ok()) {
      note_ = held.error().message();
      return ok_result();
    }
    counter_ = *counter;
    auto id = counter_->stream_id(session_.stream());
    if (!id.ok()) {
      stop_counting(id.error());
      return ok_result();
    }
    stream_id_ = *id;
    return ok_result();
  }

  std::string_view clock() const override { return "cuda_events"; }

  Result<void> begin() override {
    session_.make_current();
    // Armed before the start event: arming waits for the stream and flushes CUPTI, host work
    // that must not fall inside the timed interval.
    if (counter_ != nullptr) {
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
    if (counter_ != nullptr) {
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
  // A counting failure leaves the times valid: counting stops for the rest of the measurement
  // (a partial count would be misread as a per-call figure) and the reason becomes the note.
  void stop_counting(const Error& why) {
    note_ = "counting stopped: " + why.message();
    counter_->release();
    counter_ = nullptr;
  }

  CudaSession& session_;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
  ActivityCounter* counter_ = nullptr;  // null when not counting (note_ says why)
  uint32_t stream_id_ = 0;
  bool armed_ = false;  // between a begin() that armed the stream and its end()
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
