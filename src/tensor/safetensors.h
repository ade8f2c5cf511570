#pragma once
// Reading and writing safetensors files: the format of the conformance cases' recorded inputs,
// outputs and state (tests/cases), and of the state files `splice run` loads and saves.
//
// Layout: an 8-byte little-endian header length N, N bytes of a JSON object
// {name: {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, "__metadata__": {...}},
// then the data area, which the offsets (relative to its start) address.
//
// Files are untrusted: every length and offset is checked with overflow-safe arithmetic
// before use; errors are ErrorKind::kBadInput (the file is a user's input or state file) and
// name the file and the tensor key. As the reference implementation does, a header over
// 100,000,000 bytes, a name given twice, and data offsets that do not tile the data area
// exactly (overlapping tensors, gaps, trailing bytes) are refused. The header is read as a
// stream of JSON events into compact entries, so memory stays a small multiple of its size.
// read_safetensors copies each tensor into owned, contiguous storage, so the result stays valid
// and writable after the file changes; map_safetensors views them in a private map instead.

#include <cstddef>
#include <map>
#include <span>
#include <string>
#include <string_view>

#include "support/error.h"
#include "support/file_writer.h"
#include "tensor/tensor.h"

namespace splice {

// Reads every tensor of the file at `path` (the `__metadata__` entry is ignored). A file that
// cannot be read, or is not a regular file, is ErrorKind::kIo (support/input_file.h: a FIFO
// never blocks).
Result<std::map<std::string, Tensor>> read_safetensors(const std::string& path);

// Reads the file at `path` without copying its tensors: each is a writable view of a
// copy-on-write map of the file (MappedFile::open_copy_on_write), so writing one changes this
// process's pages only, never the file; the map lives as long as a tensor views it. A tensor
// whose bytes are not aligned to its element size (the format does not promise it) is copied.
// Checks and errors as read_safetensors.
Result<std::map<std::string, Tensor>> map_safetensors(const std::string& path);

// Parses a whole safetensors file held in memory. `name` labels the bytes in error messages
// (read_safetensors passes the path).
Result<std::map<std::string, Tensor>> parse_safetensors(std::span<const std::byte> bytes,
                                                        std::string_view name = "<memory>");

// Serialises tensors to safetensors bytes: header keys sorted by name, data in the same order,
// each tensor's elements contiguous (a non-contiguous view is copied first), the header padded
// with spaces to a multiple of 8 bytes. An undefined tensor or a name that is not valid UTF-8
// (JSON cannot hold it) is ErrorKind::kBadUsage.
Result<std::string> serialize_safetensors(const std::map<std::string, Tensor>& tensors);

// The bytes of serialize_safetensors, streamed into a PendingFile for `path`
// (support/file_writer.h) straight from each tensor's storage (no whole-file buffer), ready for
// commit_files along with the other files of one call. I/O failures are kIo.
Result<PendingFile> prepare_safetensors_file(const std::string& path,
                                             const std::map<std::string, Tensor>& tensors);

// prepare_safetensors_file and commit it: `path` holds either its old contents or all of the
// new ones, never a mix. I/O failures are kIo.
Result<void> write_safetensors(const std::string& path,
                               const std::map<std::string, Tensor>& tensors);

}  // namespace splice
