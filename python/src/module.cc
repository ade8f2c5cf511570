// splice._core: the public C++ API (include/splice/splice.h) as a Python extension, for the
// package in python/splice/ (which gives it its Pythonic shape: Engine, errors, torch/numpy
// conversion). Only the public API is used, so the binding is what any C++ caller can do.
//
// Tensors cross as DLPack arrays (nanobind's ndarray): an input is read where it lives (a numpy
// array's or a torch tensor's own memory, host or CUDA; no copy), an output is handed over
// with its memory (a HostTensor's bytes or a DeviceTensor's owner stay alive as the array's
// owner), so the only copies are the ones the C++ API itself makes. A failed call raises the
// splice.Error subclass of its ErrorKind (python/splice/_errors.py) with the CLI's message.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "splice/splice.h"

namespace nb = nanobind;

namespace splice::python {

namespace {

// A failed Result on its way to Python: the exception translator raises the package's class
// for `kind` (splice._errors.error_class).
struct Failure {
  ErrorKind kind;
  std::string message;
};

[[noreturn]] void fail(ErrorKind kind, std::string message) {
  throw Failure{kind, std::move(message)};
}

template <typename T>
T unwrap(Result<T> r) {
  if (!r.ok()) fail(r.error().kind(), r.error().message());
  return std::move(r).value();
}

void unwrap(const Result<void>& r) {
  if (!r.ok()) fail(r.error().kind(), r.error().message());
}

// DType <-> DLPack. Every splice dtype has a DLPack code; a DLPack dtype splice lacks (complex,
// uint16, ...) is a bad input naming it.
struct DTypeEntry {
  DType dtype;
  nb::dlpack::dtype_code code;
  uint8_t bits;
  const char* name;
};

constexpr DTypeEntry kDTypes[] = {
    {DType::kUInt8, nb::dlpack::dtype_code::UInt, 8, "uint8"},
    {DType::kInt8, nb::dlpack::dtype_code::Int, 8, "int8"},
    {DType::kInt16, nb::dlpack::dtype_code::Int, 16, "int16"},
    {DType::kInt32, nb::dlpack::dtype_code::Int, 32, "int32"},
    {DType::kInt64, nb::dlpack::dtype_code::Int, 64, "int64"},
    {DType::kFloat16, nb::dlpack::dtype_code::Float, 16, "float16"},
    {DType::kFloat32, nb::dlpack::dtype_code::Float, 32, "float32"},
    {DType::kFloat64, nb::dlpack::dtype_code::Float, 64, "float64"},
    {DType::kBool, nb::dlpack::dtype_code::Bool, 8, "bool"},
    {DType::kBFloat16, nb::dlpack::dtype_code::Bfloat, 16, "bfloat16"},
};

const DTypeEntry& entry_of(DType d) {
  for (const auto& e : kDTypes)
    if (e.dtype == d) return e;
  fail(ErrorKind::kInternal, "a dtype without a DLPack code");
}

nb::dlpack::dtype dlpack_dtype(DType d) {
  const DTypeEntry& e = entry_of(d);
  return nb::dlpack::dtype{static_cast<uint8_t>(e.code), e.bits, 1};
}

DType splice_dtype(const std::string& input, nb::dlpack::dtype d) {
  for (const auto& e : kDTypes)
    if (static_cast<uint8_t>(e.code) == d.code && e.bits == d.bits && d.lanes == 1) return e.dtype;
  fail(ErrorKind::kBadInput, "input '" + input + "': DLPack dtype (code " + std::to_string(d.code) +
                                 ", " + std::to_string(d.bits) +
                                 " bits) is not a dtype splice runs");
}

// A caller's array as a TensorArg over its own memory. It must be C-contiguous (the package
// makes a contiguous copy first where it is not, and writes a mutated input back itself).
// `bf16_bits`: a uint16 array holds bfloat16 values (numpy has no bfloat16 of its own).
TensorArg tensor_arg(const std::string& name, const nb::ndarray<nb::ro>& a, bool bf16_bits) {
  TensorArg arg;
  const nb::dlpack::dtype uint16{static_cast<uint8_t>(nb::dlpack::dtype_code::UInt), 16, 1};
  arg.dtype = bf16_bits && a.dtype() == uint16 ? DType::kBFloat16 : splice_dtype(name, a.dtype());
  // Row-major: each dim's stride the product of the sizes after it, except where the stride
  // cannot matter (a dim of size 1, or an array without elements).
  int64_t expected = 1;
  const bool empty = a.size() == 0;
  for (size_t i = a.ndim(); i-- > 0 && !empty;) {
    const auto size = static_cast<int64_t>(a.shape(i));
    if (size != 1 && a.stride(i) != expected)
      fail(ErrorKind::kBadInput, "input '" + name + "' is not contiguous (row-major)");
    expected *= size;
  }
  for (size_t i = 0; i < a.ndim(); ++i) arg.shape.push_back(static_cast<int64_t>(a.shape(i)));
  arg.data = const_cast<void*>(a.data());
  if (a.device_type() == nb::device::cuda::value) {
    arg.device = Device{DeviceType::kCUDA, a.device_id()};
  } else if (a.device_type() != nb::device::cpu::value) {
    fail(ErrorKind::kBadInput, "input '" + name + "' lives on a DLPack device of type " +
                                   std::to_string(a.device_type()) + " (only CPU and CUDA)");
  }
  return arg;
}

using Arrays = std::map<std::string, nb::ndarray<nb::ro>>;

std::map<std::string, TensorArg> tensor_args(const Arrays& in,
                                             const std::vector<std::string>& bf16_bits) {
  std::map<std::string, TensorArg> args;
  for (const auto& [name, a] : in) {
    const bool bits = std::find(bf16_bits.begin(), bf16_bits.end(), name) != bf16_bits.end();
    args.emplace(name, tensor_arg(name, a, bits));
  }
  return args;
}

// An array over `data` that `owner` keeps alive, as the caller's framework's own type: a torch
// tensor (nanobind hands it over through DLPack) or a numpy array.
nb::object framework_array(void* data, const std::vector<int64_t>& shape, nb::handle owner,
                           nb::dlpack::dtype dtype, int device_type, int device_id, bool torch) {
  const std::vector<size_t> sizes(shape.begin(), shape.end());
  if (torch)
    return nb::cast(nb::ndarray<nb::pytorch>(data, sizes.size(), sizes.data(), owner, nullptr,
                                             dtype, device_type, device_id));
  return nb::cast(nb::ndarray<nb::numpy>(data, sizes.size(), sizes.data(), owner, nullptr, dtype,
                                         device_type, device_id));
}

// A HostTensor handed to Python: the array owns it. For numpy (`torch` false) a bfloat16
// tensor comes as its uint16 bits: numpy has no bfloat16 (the package views them as
// ml_dtypes.bfloat16 where it can).
nb::object host_array(HostTensor&& h, bool torch) {
  auto* owned = new HostTensor(std::move(h));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<HostTensor*>(p); });
  nb::dlpack::dtype dtype = dlpack_dtype(owned->dtype);
  if (!torch && owned->dtype == DType::kBFloat16)
    dtype = nb::dlpack::dtype{static_cast<uint8_t>(nb::dlpack::dtype_code::UInt), 16, 1};
  // An empty tensor still needs an address that is not null.
  static std::byte empty_byte;
  void* data = owned->bytes.empty() ? &empty_byte : owned->bytes.data();
  return framework_array(data, owned->shape, owner, dtype, nb::device::cpu::value, 0, torch);
}

// A DeviceTensor handed to torch: the tensor keeps its owner (splice's allocation) alive.
nb::object device_array(DeviceTensor&& d) {
  auto* owned = new DeviceTensor(std::move(d));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<DeviceTensor*>(p); });
  const bool cuda = owned->device.type == DeviceType::kCUDA;
  return framework_array(owned->data, owned->shape, owner, dlpack_dtype(owned->dtype),
                         cuda ? nb::device::cuda::value : nb::device::cpu::value,
                         owned->device.index, true);
}

PlanMode plan_mode_of(const std::string& mode) {
  if (mode == "planned") return PlanMode::kPlanned;
  if (mode == "naive") return PlanMode::kNaive;
  fail(ErrorKind::kBadUsage, "plan_mode must be 'planned' or 'naive', not '" + mode + "'");
}

LoadOptions load_options(const std::string& device, int threads, const std::string& plan_mode,
                         bool cuda_graphs, const std::string& cache_dir) {
  LoadOptions o;
  o.device = device;
  o.threads = threads;
  o.plan_mode = plan_mode_of(plan_mode);
  o.cuda_graphs = cuda_graphs;
  o.cache_dir = cache_dir;
  return o;
}

// One call's results: the user outputs in order (None where the program returns None) and the
// new values of the user inputs it mutated, by name; torch tensors (`torch`) or numpy arrays.
nb::tuple run(Session& session, const Arrays& inputs, const std::vector<std::string>& bf16_inputs,
              uintptr_t stream, bool outputs_on_device, bool torch) {
  const std::map<std::string, TensorArg> args = tensor_args(inputs, bf16_inputs);
  RunOptions options;
  options.stream = reinterpret_cast<void*>(stream);
  options.outputs_on_device = outputs_on_device;
  Result<RunResult> result = [&] {
    nb::gil_scoped_release unlocked;  // other Python threads run during the call
    return session.run(args, options);
  }();
  RunResult r = unwrap(std::move(result));
  nb::list outputs;
  for (size_t i = 0; i < r.present.size(); ++i) {
    if (!r.present[i])
      outputs.append(nb::none());
    else if (outputs_on_device)
      outputs.append(device_array(std::move(r.device_outputs[i])));
    else
      outputs.append(host_array(std::move(r.outputs[i]), torch));
  }
  nb::dict mutated;
  for (auto& [name, h] : r.mutated_inputs) mutated[name.c_str()] = host_array(std::move(h), torch);
  return nb::make_tuple(outputs, mutated);
}

nb::dict measure(Session& session, const Arrays& inputs,
                 const std::vector<std::string>& bf16_inputs, int warmup, int iters,
                 bool device_io) {
  const std::map<std::string, TensorArg> args = tensor_args(inputs, bf16_inputs);
  MeasureOptions options;
  options.warmup = warmup;
  options.iters = iters;
  options.device_io = device_io;
  Result<CallTimes> result = [&] {
    nb::gil_scoped_release unlocked;
    return session.measure(args, options);
  }();
  CallTimes t = unwrap(std::move(result));
  nb::dict d;
  d["ms"] = t.ms;
  d["clock"] = t.clock;
  d["counted"] = t.counted;
  d["kernels"] = t.kernels;
  d["memcpys"] = t.memcpys;
  d["memsets"] = t.memsets;
  d["count_note"] = t.count_note;
  return d;
}

}  // namespace

}  // namespace splice::python

NB_MODULE(_core, m) {
  using namespace splice;
  using namespace splice::python;
  m.doc() = "splice's C++ API; use the splice package (splice.compile, splice.load) instead";

  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const Failure& f) {
      nb::object cls =
          nb::module_::import_("splice._errors").attr("error_class")(error_kind_name(f.kind));
      PyErr_SetString(cls.ptr(), f.message.c_str());
    }
  });

  m.def("default_cache_dir", &default_cache_dir);
  // Every ErrorKind's name, for the package's test that each has its exception class.
  m.def("error_kind_names", [] {
    std::vector<std::string> names;
    for (ErrorKind k :
         {ErrorKind::kBadUsage, ErrorKind::kIo, ErrorKind::kBadArchive, ErrorKind::kUnsupportedOp,
          ErrorKind::kShapeMismatch, ErrorKind::kOutOfRange, ErrorKind::kBadInput,
          ErrorKind::kAssertFailed, ErrorKind::kBackend, ErrorKind::kInternal})
      names.emplace_back(error_kind_name(k));
    return names;
  });
  // Where an array's data is as the extension sees it (the tests check inputs are not copied).
  m.def("address_of",
        [](const nb::ndarray<nb::ro>& a) { return reinterpret_cast<uintptr_t>(a.data()); });
  m.def("dtype_names", [] {
    std::vector<std::string> names;
    for (const auto& e : kDTypes) names.emplace_back(e.name);
    return names;
  });

  nb::class_<Session>(m, "Session")
      .def("run", &run, nb::arg("inputs"), nb::arg("bf16_inputs") = std::vector<std::string>{},
           nb::arg("stream") = 0, nb::arg("outputs_on_device") = false, nb::arg("torch") = false)
      .def("measure", &measure, nb::arg("inputs"),
           nb::arg("bf16_inputs") = std::vector<std::string>{}, nb::arg("warmup") = 10,
           nb::arg("iters") = 100, nb::arg("device_io") = false)
      .def(
          "state",
          [](const Session& s, const std::string& name, bool torch) {
            return host_array(unwrap(s.state(name)), torch);
          },
          nb::arg("name"), nb::arg("torch") = false)
      .def(
          "set_state",
          [](Session& s, const std::string& name, const nb::ndarray<nb::ro>& value,
             bool bf16_bits) { unwrap(s.set_state(name, tensor_arg(name, value, bf16_bits))); },
          nb::arg("name"), nb::arg("value"), nb::arg("bf16_bits") = false)
      .def("reset_state", [](Session& s) { unwrap(s.reset_state()); })
      .def("graph_stats", [](const Session& s) {
        const GraphStats g = s.graph_stats();
        nb::dict d;
        d["recorded"] = g.recorded;
        d["replayed"] = g.replayed;
        d["refused"] = g.refused;
        d["refusal"] = g.refusal;
        return d;
      });

  nb::class_<Model>(m, "Model")
      .def_static(
          "load",
          [](const std::string& path, const std::string& device, int threads,
             const std::string& plan_mode, bool cuda_graphs, const std::string& cache_dir) {
            Result<Model> r = [&] {
              nb::gil_scoped_release unlocked;  // loading and planning take a while
              return Model::load(path,
                                 load_options(device, threads, plan_mode, cuda_graphs, cache_dir));
            }();
            return unwrap(std::move(r));
          },
          nb::arg("path"), nb::arg("device") = "cpu", nb::arg("threads") = 0,
          nb::arg("plan_mode") = "planned", nb::arg("cuda_graphs") = true,
          nb::arg("cache_dir") = "")
      .def_static(
          "compile",
          [](const std::string& pt2, const std::string& engine, const std::string& device,
             int threads, const std::string& plan_mode, bool cuda_graphs) {
            Result<void> r = [&] {
              nb::gil_scoped_release unlocked;
              return Model::compile(pt2, engine,
                                    load_options(device, threads, plan_mode, cuda_graphs, ""));
            }();
            unwrap(r);
          },
          nb::arg("pt2_path"), nb::arg("engine_path"), nb::arg("device") = "cpu",
          nb::arg("threads") = 0, nb::arg("plan_mode") = "planned", nb::arg("cuda_graphs") = true)
      .def("inputs",
           [](const Model& model) {
             nb::list out;
             for (const InputInfo& info : model.inputs()) {
               nb::dict d;
               d["name"] = info.name;
               d["dtype"] = entry_of(info.dtype).name;
               d["shape"] = info.shape;
               d["is_tensor"] = info.is_tensor;
               d["mutated"] = info.mutated;
               out.append(d);
             }
             return out;
           })
      .def("state_names", &Model::state_names)
      .def_prop_ro("device", &Model::device)
      .def_prop_ro("threads", &Model::threads)
      .def_prop_ro("from_cache", &Model::from_cache)
      .def_prop_ro("cache_note", &Model::cache_note)
      .def_prop_ro("warnings", &Model::warnings)
      .def("plan_json", &Model::plan_json)
      .def("open_session", [](const Model& model) { return unwrap(model.open_session()); });
}
