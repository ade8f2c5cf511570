// ActivityCounter (cupti_counter.h): libcupti opened with dlopen and its activity entry points
// resolved once per process; kernel, memcpy and memset records enabled while a probe holds the
// counter, delivered into buffers this file hands CUPTI, and counted per armed stream.
#include "backends/cuda/cupti_counter.h"

#include <cupti.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "backends/cuda/cuda_check.h"

namespace splice::cuda {

namespace {

// The activity entry points splice calls.
struct CuptiLibrary {
  decltype(&cuptiGetVersion) GetVersion;
  decltype(&cuptiGetResultString) GetResultString;
  decltype(&cuptiActivityRegisterCallbacks) ActivityRegisterCallbacks;
  decltype(&cuptiActivityEnable) ActivityEnable;
  decltype(&cuptiActivityDisable) ActivityDisable;
  decltype(&cuptiActivityFlushAll) ActivityFlushAll;
  decltype(&cuptiActivityGetNextRecord) ActivityGetNextRecord;
  decltype(&cuptiActivityGetNumDroppedRecords) ActivityGetNumDroppedRecords;
  decltype(&cuptiGetStreamIdEx) GetStreamIdEx;
  // Profiling only (optional: a library without them still counts).
  decltype(&cuptiActivityPushExternalCorrelationId) PushExternalCorrelationId;
  decltype(&cuptiActivityPopExternalCorrelationId) PopExternalCorrelationId;
};

// The record kinds counted. CONCURRENT_KERNEL, not KERNEL: KERNEL makes the driver run kernels
// one at a time, which would change what is measured.
constexpr CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                         CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET};
// Enabled only while a call is profiled: the launches' API records, which the external
// correlation records (a kernel's step) come with.
constexpr CUpti_ActivityKind kApiKinds[] = {CUPTI_ACTIVITY_KIND_RUNTIME,
                                            CUPTI_ACTIVITY_KIND_DRIVER};

// The records this build reads are the headers' (kind and stream id only). A library of another
// major version lays its records out differently, so only the headers' major is accepted.
constexpr uint32_t kApiMajor = CUPTI_API_VERSION / 10000;

// Each buffer holds thousands of records; CUPTI asks for another when one fills up.
constexpr size_t kBufferBytes = size_t{1} << 20;
constexpr size_t kRecordAlignment = 8;  // CUPTI's requirement for activity buffers

struct State {
  CuptiLibrary lib{};
  std::string error;  // why there is no counter; empty when there is one
  // Guards holders. release() flushes under it, so the buffer callback must never take it.
  std::mutex control;
  int holders = 0;
  // Guards armed and dropped; taken by the buffer callback, on whatever thread CUPTI uses.
  std::mutex records;
  std::unordered_map<uint32_t, StreamCounts> armed;
  size_t dropped = 0;
  // Profiling: the stream whose kernel records are kept (0: none), those records by CUPTI
  // correlation id, and the external ids (step + 1) of correlation ids.
  uint32_t profiled = 0;
  std::vector<std::pair<uint32_t, KernelRecord>> kernels;
  std::unordered_map<uint32_t, uint64_t> external;
  // Guarded by control: the step pushed on this process's external correlation stack, if any.
  bool step_pushed = false;
};

State* state = nullptr;  // set once by open_once, never freed: CUPTI's thread may call back late

std::string cupti_message(CUptiResult r) {
  const char* text = nullptr;
  if (state != nullptr && state->lib.GetResultString != nullptr &&
      state->lib.GetResultString(r, &text) == CUPTI_SUCCESS && text != nullptr)
    return text;
  return "CUPTI error " + std::to_string(static_cast<int>(r));
}

#define SPLICE_CUPTI_CHECK(call)                                     \
  do {                                                               \
    const CUptiResult cupti_result_ = (call);                        \
    if (cupti_result_ != CUPTI_SUCCESS)                              \
      return make_error(ErrorKind::kBackend, "{} failed: {}", #call, \
                        cupti_message(cupti_result_));               \
  } while (0)

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  // A null buffer makes CUPTI drop records, which disarm() then reports.
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kRecordAlignment, kBufferBytes));
  *size = *buffer != nullptr ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

// The stream a counted record ran on; false for kinds not counted.
bool record_stream(const CUpti_Activity* record, uint32_t& stream, StreamCounts& add) {
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      stream = reinterpret_cast<const CUpti_ActivityKernel10*>(record)->streamId;
      add.kernels = 1;
      return true;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      stream = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record)->streamId;
      add.memcpys = 1;
      return true;
    case CUPTI_ACTIVITY_KIND_MEMSET:
      stream = reinterpret_cast<const CUpti_ActivityMemset4*>(record)->streamId;
      add.memsets = 1;
      return true;
    default:
      return false;
  }
}

void CUPTIAPI buffer_completed(CUcontext /*context*/, uint32_t stream_id, uint8_t* buffer,
                               size_t /*size*/, size_t valid_size) {
  State& s = *state;
  {
    std::lock_guard<std::mutex> lock(s.records);
    CUpti_Activity* record = nullptr;
    // Ends with CUPTI_ERROR_MAX_LIMIT_REACHED after the last record (or any other error).
    while (valid_size > 0 &&
           s.lib.ActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) {
      if (record->kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) {
        const auto* r = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
        if (s.profiled != 0 && r->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0)
          s.external[r->correlationId] = r->externalId;
        continue;
      }
      uint32_t stream = 0;
      StreamCounts add;
      if (!record_stream(record, stream, add)) continue;
      if (add.kernels > 0 && s.profiled != 0 && stream == s.profiled) {
        const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
        KernelRecord kr;
        kr.name = k->name != nullptr ? k->name : "";
        kr.grid[0] = k->gridX;
        kr.grid[1] = k->gridY;
        kr.grid[2] = k->gridZ;
        kr.start_ns = k->start;
        kr.end_ns = k->end;
        s.kernels.emplace_back(k->correlationId, std::move(kr));
      }
      auto it = s.armed.find(stream);
      if (it == s.armed.end()) continue;
      it->second.kernels += add.kernels;
      it->second.memcpys += add.memcpys;
      it->second.memsets += add.memsets;
    }
    size_t dropped = 0;
    if (s.lib.ActivityGetNumDroppedRecords(nullptr, stream_id, &dropped) == CUPTI_SUCCESS)
      s.dropped += dropped;
  }
  std::free(buffer);
}

template <typename Fn>
void resolve(void* handle, const char* name, Fn& fn, std::string& missing) {
  fn = reinterpret_cast<Fn>(dlsym(handle, name));
  if (fn == nullptr && missing.empty()) missing = name;
}

// dlopen of the first candidate that loads, or null with the first failure's reason (the
// loader's search by soname is the likeliest to work, so its dlerror says most).
void* open_library(std::string& loaded, std::string& reason, std::string& tried) {
  const std::string soname = "libcupti.so." + std::to_string(kApiMajor);
  std::vector<std::string> candidates = {soname, "libcupti.so"};
  std::vector<std::string> folders;
  if (const char* home = std::getenv("CUDA_HOME"); home != nullptr && *home != '\0')
    folders.push_back(std::string(home) + "/lib64");
  folders.push_back("/usr/local/cuda/lib64");
  folders.push_back("/usr/local/cuda/extras/CUPTI/lib64");
  for (const std::string& f : folders) {
    candidates.push_back(f + "/" + soname);
    candidates.push_back(f + "/libcupti.so");
  }
  for (const std::string& c : candidates) {
    void* handle = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) {
      loaded = c;
      return handle;
    }
    if (reason.empty()) {
      const char* e = dlerror();
      reason = e != nullptr ? e : "dlopen failed";
    }
  }
  tried = soname + ", libcupti.so";
  for (const std::string& f : folders) tried += ", " + f + "/";
  return nullptr;
}

void open_once() {
  state = new State();
  State& s = *state;
  std::string loaded, reason, tried;
  void* handle = open_library(loaded, reason, tried);
  if (handle == nullptr) {
    s.error = "libcupti not found: " + reason + " (tried " + tried + ")";
    return;
  }
  // The handle stays open for the life of the process: the table and CUPTI's worker thread
  // point into it.
  CuptiLibrary& t = s.lib;
  std::string missing;
  resolve(handle, "cuptiGetVersion", t.GetVersion, missing);
  resolve(handle, "cuptiGetResultString", t.GetResultString, missing);
  resolve(handle, "cuptiActivityRegisterCallbacks", t.ActivityRegisterCallbacks, missing);
  resolve(handle, "cuptiActivityEnable", t.ActivityEnable, missing);
  resolve(handle, "cuptiActivityDisable", t.ActivityDisable, missing);
  resolve(handle, "cuptiActivityFlushAll", t.ActivityFlushAll, missing);
  resolve(handle, "cuptiActivityGetNextRecord", t.ActivityGetNextRecord, missing);
  resolve(handle, "cuptiActivityGetNumDroppedRecords", t.ActivityGetNumDroppedRecords, missing);
  resolve(handle, "cuptiGetStreamIdEx", t.GetStreamIdEx, missing);
  t.PushExternalCorrelationId = reinterpret_cast<decltype(t.PushExternalCorrelationId)>(
      dlsym(handle, "cuptiActivityPushExternalCorrelationId"));
  t.PopExternalCorrelationId = reinterpret_cast<decltype(t.PopExternalCorrelationId)>(
      dlsym(handle, "cuptiActivityPopExternalCorrelationId"));
  if (!missing.empty()) {
    s.error = loaded + " has no " + missing + " (another CUPTI version?)";
    return;
  }
  uint32_t version = 0;
  if (const CUptiResult r = t.GetVersion(&version); r != CUPTI_SUCCESS) {
    s.error = loaded + ": cuptiGetVersion failed: " + cupti_message(r);
    return;
  }
  // Before 13.0 the version was a small counter (v28 for 12.9), never of the form xxyyzz.
  if (version / 10000 != kApiMajor) {
    s.error = loaded + " has CUPTI API version " + std::to_string(version) +
              "; this splice reads the records of CUDA " + std::to_string(kApiMajor) +
              "'s CUPTI (API version " + std::to_string(CUPTI_API_VERSION) + ")";
    return;
  }
  if (const CUptiResult r = t.ActivityRegisterCallbacks(buffer_requested, buffer_completed);
      r != CUPTI_SUCCESS) {
    s.error = loaded + ": cuptiActivityRegisterCallbacks failed: " + cupti_message(r);
    return;
  }
}

// Delivers every buffer CUPTI holds, records of unfinished work included (forced): callers
// wait for their stream first, so their own records are complete.
Result<void> flush() {
  SPLICE_CUPTI_CHECK(state->lib.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  return ok_result();
}

}  // namespace

Result<ActivityCounter*> ActivityCounter::get() {
  static std::once_flag once;
  std::call_once(once, open_once);
  if (!state->error.empty()) return make_error(ErrorKind::kBackend, "{}", state->error);
  static ActivityCounter counter;
  return &counter;
}

Result<void> ActivityCounter::hold() {
  std::lock_guard<std::mutex> lock(state->control);
  if (state->holders == 0) {
    for (size_t i = 0; i < std::size(kKinds); ++i) {
      const CUptiResult r = state->lib.ActivityEnable(kKinds[i]);
      if (r == CUPTI_SUCCESS) continue;
      for (size_t j = 0; j < i; ++j) (void)state->lib.ActivityDisable(kKinds[j]);
      return make_error(ErrorKind::kBackend, "cuptiActivityEnable({}) failed: {}",
                        static_cast<int>(kKinds[i]), cupti_message(r));
    }
  }
  ++state->holders;
  return ok_result();
}

void ActivityCounter::release() {
  std::lock_guard<std::mutex> lock(state->control);
  if (state->holders == 0 || --state->holders > 0) return;
  // Nothing is armed any more: the records left are delivered and dropped, not kept.
  (void)flush();
  for (CUpti_ActivityKind kind : kKinds) (void)state->lib.ActivityDisable(kind);
}

Result<uint32_t> ActivityCounter::stream_id(cudaStream_t stream) {
  uint32_t id = 0;
  SPLICE_CUPTI_CHECK(state->lib.GetStreamIdEx(nullptr, stream, 0, &id));
  return id;
}

Result<void> ActivityCounter::arm(cudaStream_t stream, uint32_t id) {
  // Work queued before (restoring state) finishes and its records are delivered unarmed.
  SPLICE_CUDA_CHECK(cudaStreamSynchronize(stream));
  SPLICE_TRY(flush());
  std::lock_guard<std::mutex> lock(state->records);
  state->armed[id] = StreamCounts{};
  state->dropped = 0;  // records dropped before now were not this call's
  return ok_result();
}

Result<StreamCounts> ActivityCounter::disarm(cudaStream_t stream, uint32_t id) {
  const cudaError_t synced = cudaStreamSynchronize(stream);
  const Result<void> flushed = synced == cudaSuccess ? flush() : ok_result();
  StreamCounts counts;
  size_t dropped = 0;
  {
    std::lock_guard<std::mutex> lock(state->records);
    auto it = state->armed.find(id);
    if (it != state->armed.end()) {
      counts = it->second;
      state->armed.erase(it);
    }
    // Dropped records are not known by stream: any drop may have been one of ours.
    dropped = state->dropped;
    state->dropped = 0;
  }
  if (synced != cudaSuccess)
    return cuda_error(synced, "cudaStreamSynchronize(stream)", __FILE__, __LINE__);
  SPLICE_TRY(flushed);
  if (dropped > 0)
    return make_error(ErrorKind::kBackend,
                      "CUPTI dropped {} activity records (no buffer to hold them), so the counts "
                      "would be short",
                      dropped);
  return counts;
}

Result<void> ActivityCounter::profile_arm(cudaStream_t stream, uint32_t id) {
  SPLICE_CHECK_OR_RETURN(
      state->lib.PushExternalCorrelationId != nullptr &&
          state->lib.PopExternalCorrelationId != nullptr,
      ErrorKind::kBackend,
      "this libcupti has no external correlation ids, which profiling maps kernels to steps by");
  SPLICE_CUPTI_CHECK(state->lib.ActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION));
  // CUPTI writes an external correlation record only beside a driver or runtime API record
  // (the record of the launch call, which carries the kernel's correlation id): without these
  // two kinds every kernel came back without its step (-1).
  for (CUpti_ActivityKind kind : kApiKinds) SPLICE_CUPTI_CHECK(state->lib.ActivityEnable(kind));
  SPLICE_TRY(arm(stream, id));
  std::lock_guard<std::mutex> lock(state->records);
  state->profiled = id;
  state->kernels.clear();
  state->external.clear();
  return ok_result();
}

Result<void> ActivityCounter::mark_step(int64_t step) {
  std::lock_guard<std::mutex> lock(state->control);
  if (state->step_pushed) {
    uint64_t last = 0;
    SPLICE_CUPTI_CHECK(
        state->lib.PopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last));
    state->step_pushed = false;
  }
  if (step < 0) return ok_result();
  SPLICE_CUPTI_CHECK(state->lib.PushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0,
                                                          static_cast<uint64_t>(step) + 1));
  state->step_pushed = true;
  return ok_result();
}

Result<std::vector<KernelRecord>> ActivityCounter::profile_disarm(cudaStream_t stream,
                                                                  uint32_t id) {
  (void)mark_step(-1);
  auto counts = disarm(stream, id);
  (void)state->lib.ActivityDisable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  for (CUpti_ActivityKind kind : kApiKinds) (void)state->lib.ActivityDisable(kind);
  std::vector<std::pair<uint32_t, KernelRecord>> kernels;
  std::unordered_map<uint32_t, uint64_t> external;
  {
    std::lock_guard<std::mutex> lock(state->records);
    state->profiled = 0;
    kernels.swap(state->kernels);
    external.swap(state->external);
  }
  if (!counts.ok()) return counts.error();
  std::vector<KernelRecord> out;
  out.reserve(kernels.size());
  for (auto& [correlation, k] : kernels) {
    auto it = external.find(correlation);
    k.step = it == external.end() ? -1 : static_cast<int64_t>(it->second) - 1;
    out.push_back(std::move(k));
  }
  std::stable_sort(out.begin(), out.end(), [](const KernelRecord& a, const KernelRecord& b) {
    return a.start_ns < b.start_ns;
  });
  return out;
}

}  // namespace splice::cuda
