#pragma once
// The CLI's subcommands, one function each.

#include <string>

#include "splice/splice.h"
#include "support/error.h"

namespace splice::tools {

// How a command plans and caches a program (shared by inspect, run and compile).
struct PlanOptions {
  std::string device = "cpu";         // the backend the plan is made for (and runs on)
  std::string plan_mode = "planned";  // or "naive"
  std::string cache_dir;              // empty: the default cache directory
  bool no_cache = false;
};

struct InspectOptions {
  std::string model;
  bool no_graph = false;
  bool passes = false;
  bool plan = false;  // print the write and memory plan instead of the IR
  bool json = false;  // --plan as one JSON object
  PlanOptions planning;
};
Result<void> run_inspect(const InspectOptions& options);

struct RunOptions {
  std::string model;
  std::string inputs;
  std::string outputs;
  std::string state_in;
  std::string state_out;
  int threads = 0;
  bool print = false;
  std::string compare;  // a safetensors file of expected outputs to print side by side
  PlanOptions planning;
};
Result<void> run_run(const RunOptions& options);

struct CompileOptions {
  std::string model;
  std::string output;
  PlanOptions planning;
};
Result<void> run_compile(const CompileOptions& options);

struct BenchOptions {
  std::string model;
  std::string inputs;
  std::string state_in;
  std::string outputs;  // the first call's outputs, to check before trusting a time
  int threads = 0;
  int warmup = 10;
  int iters = 100;
  bool json = false;
  bool no_graphs = false;  // run every call step by step (LoadOptions::cuda_graphs off)
  bool device_io = false;  // inputs and outputs stay on the device (MeasureOptions::device_io)
  bool profile = false;    // also profile one call (Session::profile)
  int top = 20;            // profile rows the table shows (the JSON has all)
  PlanOptions planning;
};
Result<void> run_bench(const BenchOptions& options);

// The public API's LoadOptions from the command line's planning options.
Result<LoadOptions> to_load_options(const PlanOptions& planning, int threads);

}  // namespace splice::tools
