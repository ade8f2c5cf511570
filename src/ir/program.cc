// Names of signature kinds, as the text IR and `splice inspect` print them.
#include "ir/program.h"

namespace splice::ir {

const char* input_kind_name(InputKind kind) {
  switch (kind) {
    case InputKind::kUserInput:
      return "user_input";
    case InputKind::kParameter:
      return "parameter";
    case InputKind::kBuffer:
      return "buffer";
    case InputKind::kTensorConstant:
      return "tensor_constant";
    case InputKind::kConstantInput:
      return "constant_input";
    case InputKind::kCustomObj:
      return "custom_obj";
    case InputKind::kToken:
      return "token";
  }
  return "?";
}

const char* output_kind_name(OutputKind kind) {
  switch (kind) {
    case OutputKind::kUserOutput:
      return "user_output";
    case OutputKind::kBufferMutation:
      return "buffer_mutation";
    case OutputKind::kUserInputMutation:
      return "user_input_mutation";
    case OutputKind::kParameterMutation:
      return "parameter_mutation";
    case OutputKind::kLossOutput:
      return "loss_output";
    case OutputKind::kToken:
      return "token";
  }
  return "?";
}

}  // namespace splice::ir
