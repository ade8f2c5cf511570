#pragma once
// Engine files: a compiled model (`splice compile`) that loads without re-importing the .pt2 or
// re-planning. One file holds the canonical program, its plan and its weights; the weights are
// used in place from a memory map of the file (read-only views, no copy).
//
// Layout (all integers little-endian; offsets are from the start of the file):
//
//   0    magic            8 bytes  "SPLCENG\0"
//   8    format version   u32      plan::kPlanFormatVersion
//   12   header size      u32      kEngineHeaderSize
//   16   splice version   16 bytes kSpliceVersion, NUL-padded
//   32   checksum         u64      XXH3-64 of every byte from offset 40 to the end of the file
//   40   sections         4 x (u64 offset, u64 size):
//          program        the text IR (ir::print_program; ranges and hints included)
//          plan           JSON (plan_json.h)
//          weights table  JSON [{"name", "dtype", "shape", "offset", "nbytes"}]; offset is from
//                         the weight data section's start
//          weight data    64-byte-aligned; each weight at a 64-byte-aligned offset, stored
//                         contiguous, tied weights (same bytes, dtype and shape) stored once
//   104  backend          16 bytes the backend the plan is made for ("cpu"), NUL-padded
//   ...  cache key        optional, after the last section: "SPLCKEY\0" and 32 hex digits, the
//                         engine cache key the entry was written under (plan/cache.h); covered
//                         by the checksum, absent from files `splice compile` writes
//
// The fields up to the splice version keep their place in every format version, so any splice
// can tell which splice wrote a file. A file from another splice or format version is refused
// (the IR and plan formats are not promised to be stable): the user recompiles the model. A
// file made for another backend is refused before anything else is read from it (its plan
// assumes that backend's kernels).
// Everything read from a file is checked (checksum, offsets and sizes with overflow-safe math,
// the program by the verifier, the plan against the graph); problems are kBadArchive errors
// that name the file.

#include <cstdint>
#include <string>
#include <string_view>

#include "backends/target.h"
#include "ir/program.h"
#include "plan/plan.h"
#include "support/error.h"

namespace splice::plan {

// The splice release that writes engine files; a file records it and only this one loads it.
inline constexpr std::string_view kSpliceVersion = "0.7.0";
inline constexpr std::string_view kEngineMagic{"SPLCENG\0", 8};
inline constexpr uint32_t kEngineHeaderSize = 120;
// Weight alignment in the file (so in memory: the map is page-aligned), enough for any SIMD load.
inline constexpr uint64_t kEngineWeightAlign = 64;
// The optional trailer of an engine cache entry: this magic, then the 32-hex-digit key.
inline constexpr std::string_view kEngineKeyMagic{"SPLCKEY\0", 8};
inline constexpr size_t kEngineKeyDigits = 32;

// The file's bytes. Non-contiguous weights are stored as contiguous copies; a weight without
// storage is a kBadUsage error.
Result<std::string> serialize_engine(const ir::Program& program, const Plan& plan);

// Writes the engine file at `path` through the one file writer (support/file_writer.h): a
// temporary file in the same folder is written, flushed to disk and renamed over `path`, so
// readers never see a partial file; `path` must be a regular file or absent, and an existing
// file's permissions are kept. Errors are kIo naming the path. A non-empty `cache_key` (32 hex
// digits, the engine cache's key: plan/cache.h) is written after the last section, so the
// cache can tell that an entry holds what its name promises without importing the archive.
Result<void> write_engine_file(const ir::Program& program, const Plan& plan,
                               const std::string& path, std::string_view cache_key = {});

struct LoadedEngine {
  ir::Program program;    // verified; weights are read-only views into the mapped file
  Plan plan;              // checked against program.graph
  std::string cache_key;  // the key the file was written under, empty when it has none
};

// Maps, checks and reads the engine file at `path` for the backend `target` describes. An
// unreadable file is kIo; a file compiled for another backend is kBadUsage naming both; a
// truncated, corrupt, foreign or other-version file is kBadArchive with a message naming the
// path.
Result<LoadedEngine> load_engine_file(const std::string& path, const backend::Target& target);

// Whether `path` starts with the engine magic (reads 8 bytes; false on any error), so the CLI
// can take either a .pt2 archive or an engine file.
bool is_engine_file(const std::string& path);

}  // namespace splice::plan
