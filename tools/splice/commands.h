#pragma once
// The CLI's subcommands, one function each.

#include <string>

#include "support/error.h"

namespace splice::tools {

struct InspectOptions {
  std::string model;
  bool no_graph = false;
  bool passes = false;
};
Result<void> run_inspect(const InspectOptions& options);

struct RunOptions {
  std::string model;
  std::string inputs;
  std::string outputs;
  std::string state_in;
  std::string state_out;
  std::string device = "cpu";
  int threads = 0;
  bool print = false;
  std::string compare;  // a safetensors file of expected outputs to print side by side
};
Result<void> run_run(const RunOptions& options);

}  // namespace splice::tools
