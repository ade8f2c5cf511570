// The caching device allocator (caching_allocator.h): free lists keyed by (stream, rounded
// size), behind one mutex; blocks are returned by the Storage owner's deleter.
#include "backends/cuda/caching_allocator.h"

#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "backends/cuda/device_memory.h"

namespace splice::cuda {

namespace {

thread_local cudaStream_t t_current_stream = nullptr;
thread_local std::vector<std::shared_ptr<Storage>>* t_recording_keep = nullptr;

struct Cache {
  std::mutex mutex;
  // (stream, rounded bytes) -> free blocks of exactly that size.
  std::map<std::pair<cudaStream_t, size_t>, std::vector<void*>> free;
};

Cache& cache() {
  static Cache* c = new Cache;  // never destroyed: Storages may be freed during exit
  return *c;
}

size_t round_bytes(size_t bytes) {
  const size_t unit = 512;
  if (bytes == 0) return unit;
  // Above 1 MiB round to 1 MiB steps, so buffers that grow a little reuse one block.
  const size_t big = size_t{1} << 20;
  if (bytes > big) return (bytes + big - 1) / big * big;
  return (bytes + unit - 1) / unit * unit;
}

// Frees every cached block (after a device sync: some may be in use by queued work).
void trim_all() {
  Cache& c = cache();
  std::vector<void*> blocks;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    for (auto& [key, list] : c.free) blocks.insert(blocks.end(), list.begin(), list.end());
    c.free.clear();
  }
  if (blocks.empty()) return;
  (void)cudaDeviceSynchronize();
  for (void* p : blocks) (void)device_free(p);
}

// Returns a block to the free list of the stream current on the freeing thread.
struct BlockOwner {
  void* ptr = nullptr;
  size_t bytes = 0;
  ~BlockOwner() {
    Cache& c = cache();
    std::lock_guard<std::mutex> lock(c.mutex);
    c.free[{t_current_stream, bytes}].push_back(ptr);
  }
};

// cudaMalloc while this thread records: allowed for this one call (relaxed capture mode), since
// the allocation is made once, now, and is not part of what the graph replays.
Result<void*> malloc_while_recording(size_t bytes) {
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  (void)cudaThreadExchangeStreamCaptureMode(&mode);
  auto ptr = device_malloc(bytes, "a tensor");
  (void)cudaThreadExchangeStreamCaptureMode(&mode);
  return ptr;
}

}  // namespace

void set_current_stream(cudaStream_t stream) { t_current_stream = stream; }
void set_recording_keep(std::vector<std::shared_ptr<Storage>>* keep) { t_recording_keep = keep; }
cudaStream_t current_stream() { return t_current_stream; }

Result<std::shared_ptr<Storage>> allocate_device_storage(size_t bytes, Device device) {
  const size_t rounded = round_bytes(bytes);
  void* ptr = nullptr;
  {
    Cache& c = cache();
    std::lock_guard<std::mutex> lock(c.mutex);
    auto it = c.free.find({t_current_stream, rounded});
    if (it != c.free.end() && !it->second.empty()) {
      ptr = it->second.back();
      it->second.pop_back();
    }
  }
  if (ptr == nullptr && t_recording_keep != nullptr) {
    // No trimming and retrying here: that waits for the device, which a recording cannot.
    SPLICE_ASSIGN_OR_RETURN(ptr, malloc_while_recording(rounded));
  } else if (ptr == nullptr) {
    auto fresh = device_malloc(rounded, "a tensor");
    if (!fresh.ok()) {
      // Memory held in free lists may be what is missing: give it back and try once more.
      trim_all();
      SPLICE_ASSIGN_OR_RETURN(ptr, device_malloc(rounded, "a tensor"));
    } else {
      ptr = *fresh;
    }
  }
  auto owner = std::make_shared<BlockOwner>();
  owner->ptr = ptr;
  owner->bytes = rounded;
  auto storage = Storage::adopt(ptr, bytes, std::move(owner), device);
  if (t_recording_keep != nullptr) t_recording_keep->push_back(storage);
  return storage;
}

void release_stream(cudaStream_t stream) {
  std::vector<void*> blocks;
  {
    Cache& c = cache();
    std::lock_guard<std::mutex> lock(c.mutex);
    for (auto it = c.free.begin(); it != c.free.end();) {
      if (it->first.first == stream) {
        blocks.insert(blocks.end(), it->second.begin(), it->second.end());
        it = c.free.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (void* p : blocks) (void)device_free(p);
  if (t_current_stream == stream) t_current_stream = nullptr;
}

size_t cached_block_count() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  size_t n = 0;
  for (const auto& [key, list] : c.free) n += list.size();
  return n;
}

size_t cached_bytes() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  size_t n = 0;
  for (const auto& [key, list] : c.free) n += key.second * list.size();
  return n;
}

}  // namespace splice::cuda
