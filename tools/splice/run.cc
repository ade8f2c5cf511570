// `splice run MODEL --inputs IN --outputs OUT [--state-in S] [--state-out S]`: the contract
// held-out programs are run through. Output keys: `output.N` for the N-th user output (None
// outputs omitted), `mutated.NAME` for each mutated user input; state files hold buffers by
// fully qualified name. Every file is read before any is written, no output may be a file the
// call reads or another output, and --outputs and --state-out are committed together
// (support/file_writer.h), so a failing call leaves every output file as it was.
#include <cstdio>
#include <cstring>

#include "splice/splice.h"
#include "support/dtype.h"
#include "support/file_identity.h"
#include "support/file_writer.h"
#include "tensor/safetensors.h"
#include "tools/splice/commands.h"
#include "tools/splice/tensor_print.h"

namespace splice::tools {

namespace {

TensorArg arg_of(const Tensor& t) {
  // map_safetensors gives contiguous tensors, views of the file's private map.
  return TensorArg{t.raw_data(), t.dtype(), t.sizes()};
}

// A read-only Tensor viewing h's bytes (no copy): h must outlive it.
Tensor view_of(const HostTensor& h) {
  auto storage = Storage::borrow(const_cast<std::byte*>(h.bytes.data()), h.bytes.size(), nullptr,
                                 /*writable=*/false);
  return Tensor(h.dtype, h.shape, contiguous_strides(h.shape), 0, std::move(storage));
}

}  // namespace

Result<void> run_run(const RunOptions& options) {
  // No output may overwrite a file this call reads, nor share a file with another output.
  std::vector<NamedPath> reads = {{"the model", options.model}}, writes;
  if (!options.inputs.empty()) reads.push_back({"--inputs", options.inputs});
  if (!options.state_in.empty()) reads.push_back({"--state-in", options.state_in});
  if (!options.compare.empty()) reads.push_back({"--compare", options.compare});
  if (!options.outputs.empty()) writes.push_back({"--outputs", options.outputs});
  if (!options.state_out.empty()) writes.push_back({"--state-out", options.state_out});
  SPLICE_TRY(check_distinct_files(reads, writes));

  SPLICE_ASSIGN_OR_RETURN(LoadOptions load_options,
                          to_load_options(options.planning, options.threads));
  SPLICE_ASSIGN_OR_RETURN(Model model, Model::load(options.model, load_options));
  if (!model.cache_note().empty())
    std::fprintf(stderr, "splice: warning: engine cache not used (%s); planned in memory\n",
                 model.cache_note().c_str());
  for (const std::string& w : model.warnings())
    std::fprintf(stderr, "splice: warning: %s\n", w.c_str());
  SPLICE_ASSIGN_OR_RETURN(Session session, model.open_session());

  std::map<std::string, Tensor> input_tensors;
  if (!options.inputs.empty()) {
    // Viewed in their (copy-on-write) map, not copied: an input the program updates in place
    // gets private pages, the rest are read where they lie.
    SPLICE_ASSIGN_OR_RETURN(input_tensors, map_safetensors(options.inputs));
  }
  if (!options.state_in.empty()) {
    SPLICE_ASSIGN_OR_RETURN(auto state, map_safetensors(options.state_in));
    for (const auto& [name, t] : state) {
      auto r = session.set_state(name, arg_of(t));
      if (!r.ok()) return r.error().with_context(fmt::format("--state-in {}", options.state_in));
    }
  }
  // Read before anything is written: a bad comparison file must not leave outputs behind.
  std::map<std::string, Tensor> expected;
  if (!options.compare.empty()) {
    SPLICE_ASSIGN_OR_RETURN(expected, map_safetensors(options.compare));
  }
  std::map<std::string, TensorArg> args;
  for (auto& [name, t] : input_tensors) args.emplace(name, arg_of(t));
  SPLICE_ASSIGN_OR_RETURN(RunResult result, session.run(args));

  // The outputs are views of the call's result (no copy) and are streamed to their file.
  std::map<std::string, Tensor> out;
  for (size_t i = 0; i < result.outputs.size(); ++i) {
    if (!result.present[i]) continue;
    out.emplace(fmt::format("output.{}", i), view_of(result.outputs[i]));
  }
  for (const auto& [name, h] : result.mutated_inputs)
    out.emplace(fmt::format("mutated.{}", name), view_of(h));

  // The outputs and the state are one commit: both files are written and flushed before
  // either is renamed into place, so a failure leaves both as they were.
  std::vector<PendingFile> files;
  if (!options.outputs.empty()) {
    SPLICE_ASSIGN_OR_RETURN(PendingFile f, prepare_safetensors_file(options.outputs, out));
    files.push_back(std::move(f));
  }
  if (!options.state_out.empty()) {
    std::map<std::string, Tensor> state;
    std::vector<HostTensor> held;  // what the views in `state` read
    const std::vector<std::string> names = model.state_names();
    held.reserve(names.size());
    for (const auto& name : names) {
      SPLICE_ASSIGN_OR_RETURN(HostTensor h, session.state(name));
      held.push_back(std::move(h));
      state.emplace(name, view_of(held.back()));
    }
    SPLICE_ASSIGN_OR_RETURN(PendingFile f, prepare_safetensors_file(options.state_out, state));
    files.push_back(std::move(f));
  }
  SPLICE_TRY(commit_files(files));

  if (!options.compare.empty()) {
    std::printf("%s", format_comparison(out, expected).c_str());
  } else if (options.print || options.outputs.empty()) {
    for (const auto& [name, t] : out)
      std::printf("%s = %s\n", name.c_str(), format_tensor(t).c_str());
  }
  return ok_result();
}

}  // namespace splice::tools
