// The splice command line. Subcommands live in their own files (inspect.cc, run.cc,
// compile.cc); this file parses the command line and maps errors to exit codes: 0 success, 2 for
// anything the user can fix (bad usage, unreadable file, bad archive, bad input, out of memory),
// 1 for internal errors. No exception leaves a command (guard.h).
#include <CLI/CLI.hpp>
#include <cstdio>

#include "tools/splice/commands.h"
#include "tools/splice/guard.h"
#include "tools/splice/mapped_file_guard.h"

namespace {

// --device: the backend, for every command that plans or runs a program. Any name is accepted
// here; an unknown one is refused with the names this build has.
void add_device(CLI::App* cmd, splice::tools::PlanOptions& planning) {
  cmd->add_option("--device", planning.device,
                  "backend to plan for and run on: cpu (default), or cuda in a CUDA build");
}

// --device, --plan-mode, --cache-dir and --no-cache, for the commands that load a program.
void add_planning(CLI::App* cmd, splice::tools::PlanOptions& planning) {
  add_device(cmd, planning);
  cmd->add_option("--plan-mode", planning.plan_mode,
                  "planned (default) or naive (every write copies its base; no buffer reuse: "
                  "the baseline)")
      ->check(CLI::IsMember({"planned", "naive"}));
  cmd->add_option("--cache-dir", planning.cache_dir,
                  "engine cache directory (default: $XDG_CACHE_HOME/splice or ~/.cache/splice)");
  cmd->add_flag("--no-cache", planning.no_cache, "plan in memory; read and write no cache");
}

}  // namespace

int main(int argc, char** argv) {
  splice::tools::install_mapped_file_guard();
  CLI::App app{"splice: an ahead-of-time compiler and runtime for torch.export programs"};
  app.require_subcommand(1);

  splice::tools::InspectOptions inspect;
  auto* inspect_cmd = app.add_subcommand("inspect", "Print a program's signature, symbols and IR");
  inspect_cmd->add_option("model", inspect.model, "the .pt2 archive");
  inspect_cmd->add_flag("--passes", inspect.passes,
                        "list the passes every program goes through, with what each does");
  inspect_cmd->add_flag("--no-graph", inspect.no_graph, "print only the signature and symbols");
  inspect_cmd->add_flag("--plan", inspect.plan,
                        "print every write's plan (strategy, src, rejected strategies and why, "
                        "bytes moved) and the totals");
  inspect_cmd->add_flag("--json", inspect.json, "with --plan: one JSON object");
  add_planning(inspect_cmd, inspect.planning);

  splice::tools::RunOptions run;
  auto* run_cmd = app.add_subcommand("run", "Run a program on inputs from a safetensors file");
  run_cmd->add_option("model", run.model, "a .pt2 archive or an engine file from `compile`")
      ->required();
  run_cmd->add_option("--inputs", run.inputs, "safetensors file of user inputs by name");
  run_cmd->add_option("--outputs", run.outputs, "safetensors file to write outputs to");
  run_cmd->add_option("--state-in", run.state_in, "safetensors file of buffer values");
  run_cmd->add_option("--state-out", run.state_out, "write every buffer after the call here");
  run_cmd->add_option("--threads", run.threads, "CPU threads (0 = all cores)")
      ->check(CLI::Range(0, 4096));
  run_cmd->add_flag("--print", run.print, "print the outputs");
  run_cmd->add_option("--compare", run.compare,
                      "print each output next to the same key of this safetensors file "
                      "(e.g. PyTorch's outputs) with the largest difference");

  add_planning(run_cmd, run.planning);

  splice::tools::CompileOptions compile;
  auto* compile_cmd =
      app.add_subcommand("compile", "Plan a .pt2 program once and write an engine file");
  compile_cmd->add_option("model", compile.model, "the .pt2 archive")->required();
  compile_cmd->add_option("-o,--output", compile.output, "the engine file to write")->required();
  compile_cmd
      ->add_option("--plan-mode", compile.planning.plan_mode,
                   "planned (default) or naive (every write copies its base; no buffer "
                   "reuse: the baseline)")
      ->check(CLI::IsMember({"planned", "naive"}));
  add_device(compile_cmd, compile.planning);

  splice::tools::BenchOptions bench;
  auto* bench_cmd = app.add_subcommand(
      "bench", "Time a program's calls on one set of inputs (median, p90, min, mean)");
  bench_cmd->add_option("model", bench.model, "a .pt2 archive or an engine file")->required();
  bench_cmd->add_option("--inputs", bench.inputs, "safetensors file of user inputs by name");
  bench_cmd->add_option("--state-in", bench.state_in,
                        "safetensors file of buffer values every timed call starts from");
  bench_cmd->add_option("--outputs", bench.outputs, "write the first call's outputs here");
  bench_cmd->add_option("--threads", bench.threads, "CPU threads (0 = all cores)")
      ->check(CLI::Range(0, 4096));
  bench_cmd->add_option("--warmup", bench.warmup, "untimed calls first (default 10)")
      ->check(CLI::Range(0, 1000000));
  bench_cmd->add_option("--iters", bench.iters, "timed calls (default 100)")
      ->check(CLI::Range(1, 10000000));
  bench_cmd->add_flag("--json", bench.json, "print one JSON object");
  bench_cmd->add_flag("--profile", bench.profile,
                      "also profile one call: GPU time per kernel (CUPTI) or, on the CPU, host "
                      "time per plan step; a top-N table, or \"profile\" rows with --json");
  bench_cmd->add_option("--top", bench.top, "with --profile: table rows shown (default 20)")
      ->check(CLI::PositiveNumber);
  bench_cmd->add_flag("--device-io", bench.device_io,
                      "on the GPU, inputs copied there once and outputs left there, untimed "
                      "(as for a caller whose tensors are already on the GPU)");
  bench_cmd->add_flag("--no-graphs", bench.no_graphs,
                      "on the GPU, run every call step by step instead of replaying a CUDA graph");
  add_planning(bench_cmd, bench.planning);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  splice::Result<void> result = splice::tools::run_guarded([&]() -> splice::Result<void> {
    if (*inspect_cmd) return splice::tools::run_inspect(inspect);
    if (*run_cmd) return splice::tools::run_run(run);
    if (*compile_cmd) return splice::tools::run_compile(compile);
    if (*bench_cmd) return splice::tools::run_bench(bench);
    return splice::ok_result();
  });
  if (!result.ok()) {
    std::fprintf(stderr, "splice: error: %s\n", result.error().message().c_str());
    return result.error().exit_code();
  }
  return 0;
}
