// `splice run MODEL --inputs IN --outputs OUT [--state-in S] [--state-out S]`: the contract
// held-out programs are run through. Output keys: `output.N` for the N-th user output (None
// outputs omitted), `mutated.NAME` for each mutated user input; state files hold buffers by
// fully qualified name.
#include <cstdio>
#include <cstring>

#include "splice/splice.h"
#include "support/dtype.h"
#include "tensor/safetensors.h"
#include "tools/splice/commands.h"
#include "tools/splice/tensor_print.h"

namespace splice::tools {

namespace {

TensorArg arg_of(const Tensor& t) {
  // safetensors reads contiguous tensors into their own storage.
  return TensorArg{t.raw_data(), t.dtype(), t.sizes()};
}

Result<Tensor> tensor_of(const HostTensor& h) {
  SPLICE_ASSIGN_OR_RETURN(Tensor t, Tensor::empty(h.dtype, h.shape));
  if (!h.bytes.empty()) std::memcpy(t.raw_data(), h.bytes.data(), h.bytes.size());
  return t;
}

}  // namespace

Result<void> run_run(const RunOptions& options) {
  SPLICE_ASSIGN_OR_RETURN(LoadOptions load_options,
                          to_load_options(options.planning, options.threads));
  SPLICE_ASSIGN_OR_RETURN(Model model, Model::load(options.model, load_options));
  if (!model.cache_note().empty())
    std::fprintf(stderr, "splice: warning: engine cache not used (%s); planned in memory\n",
                 model.cache_note().c_str());
  SPLICE_ASSIGN_OR_RETURN(Session session, model.open_session());

  std::map<std::string, Tensor> input_tensors;
  if (!options.inputs.empty()) {
    SPLICE_ASSIGN_OR_RETURN(input_tensors, read_safetensors(options.inputs));
  }
  if (!options.state_in.empty()) {
    SPLICE_ASSIGN_OR_RETURN(auto state, read_safetensors(options.state_in));
    for (const auto& [name, t] : state) {
      auto r = session.set_state(name, arg_of(t));
      if (!r.ok()) return r.error().with_context(fmt::format("--state-in {}", options.state_in));
    }
  }
  std::map<std::string, TensorArg> args;
  for (auto& [name, t] : input_tensors) args.emplace(name, arg_of(t));
  SPLICE_ASSIGN_OR_RETURN(RunResult result, session.run(args));

  std::map<std::string, Tensor> out;
  for (size_t i = 0; i < result.outputs.size(); ++i) {
    if (!result.present[i]) continue;
    SPLICE_ASSIGN_OR_RETURN(Tensor t, tensor_of(result.outputs[i]));
    out.emplace(fmt::format("output.{}", i), std::move(t));
  }
  for (const auto& [name, h] : result.mutated_inputs) {
    SPLICE_ASSIGN_OR_RETURN(Tensor t, tensor_of(h));
    out.emplace(fmt::format("mutated.{}", name), std::move(t));
  }
  if (!options.outputs.empty()) SPLICE_TRY(write_safetensors(options.outputs, out));
  if (!options.compare.empty()) {
    SPLICE_ASSIGN_OR_RETURN(auto expected, read_safetensors(options.compare));
    std::printf("%s", format_comparison(out, expected).c_str());
  } else if (options.print || options.outputs.empty()) {
    for (const auto& [name, t] : out)
      std::printf("%s = %s\n", name.c_str(), format_tensor(t).c_str());
  }
  if (!options.state_out.empty()) {
    std::map<std::string, Tensor> state;
    for (const auto& name : model.state_names()) {
      SPLICE_ASSIGN_OR_RETURN(HostTensor h, session.state(name));
      SPLICE_ASSIGN_OR_RETURN(Tensor t, tensor_of(h));
      state.emplace(name, std::move(t));
    }
    SPLICE_TRY(write_safetensors(options.state_out, state));
  }
  return ok_result();
}

}  // namespace splice::tools
