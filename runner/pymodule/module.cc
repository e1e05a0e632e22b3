// opverify.compare(golden, actual, ...) for Python: numpy arrays and CPU
// torch tensors are judged in place (no copy) with the GIL released.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "runner/common/version.h"
#include "runner/judge/judge.h"
#include "runner/judge/verdict_json.h"
#include "runner/pymodule/load_run.h"
#include "runner/tensor_io/tensor_file.h"

namespace py = pybind11;

namespace opverify {
namespace {

// A tensor borrowed from a Python object, with what keeps its memory alive.
struct Borrowed {
  TensorView view;
  py::object owner;
};

bool IsTorchTensor(const py::handle& obj) {
  py::object type = py::type::of(obj);
  return py::str(type.attr("__module__")).cast<std::string>().rfind("torch", 0) == 0 &&
         py::hasattr(obj, "data_ptr") && py::hasattr(obj, "stride");
}

Borrowed FromTorch(py::object tensor, const char* which) {
  const std::string device = py::str(tensor.attr("device").attr("type"));
  if (device != "cpu") {
    throw py::value_error(std::string(which) + ": tensor is on '" + device +
                          "'; move it to the CPU (tensor.cpu()) first");
  }
  const std::string layout = py::str(tensor.attr("layout"));
  if (layout != "torch.strided") {
    throw py::value_error(std::string(which) + ": only dense (strided) tensors can be judged, not " + layout);
  }
  // Lazy conjugation/negation bits are views whose bytes do not hold the values.
  if (py::hasattr(tensor, "resolve_conj")) tensor = tensor.attr("resolve_conj")().attr("resolve_neg")();
  const std::string dtype_name = py::str(tensor.attr("dtype"));
  const std::optional<DType> dtype = ParseDType(dtype_name);
  if (!dtype) throw py::type_error(std::string(which) + ": unsupported torch dtype " + dtype_name);
  Borrowed b;
  b.view.dtype = *dtype;
  const auto element_size = static_cast<std::int64_t>(DTypeSize(*dtype));
  for (py::handle extent : tensor.attr("shape")) b.view.shape.push_back(extent.cast<std::int64_t>());
  for (py::handle stride : tensor.attr("stride")()) {
    b.view.strides.push_back(stride.cast<std::int64_t>() * element_size);
  }
  b.view.data = reinterpret_cast<const std::byte*>(tensor.attr("data_ptr")().cast<std::uintptr_t>());
  b.owner = tensor;
  return b;
}

std::optional<DType> NumpyDType(const py::dtype& dt) {
  const std::string name = py::str(static_cast<const py::handle&>(dt));  // ml_dtypes: "bfloat16", ...
  if (name == "bfloat16" || name == "float8_e4m3fn" || name == "float8_e5m2") return ParseDType(name);
  const char kind = dt.kind();
  const auto size = dt.itemsize();
  switch (kind) {
    case 'b':
      return DType::kBool;
    case 'i':
      return size == 1 ? DType::kInt8 : size == 2 ? DType::kInt16 : size == 4 ? DType::kInt32 : DType::kInt64;
    case 'u':
      return size == 1 ? DType::kUInt8 : size == 2 ? DType::kUInt16 : size == 4 ? DType::kUInt32 : DType::kUInt64;
    case 'f':
      if (size == 2) return DType::kFloat16;
      if (size == 4) return DType::kFloat32;
      if (size == 8) return DType::kFloat64;
      return std::nullopt;
    case 'c':
      if (size == 8) return DType::kComplex64;
      if (size == 16) return DType::kComplex128;
      return std::nullopt;
    case 'V':  // raw bytes: bfloat16/float8 named by dtype=
      if (size == 2) return DType::kUInt16;
      if (size == 1) return DType::kUInt8;
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

Borrowed FromNumpy(const py::handle& obj, const char* which) {
  py::array array = py::array::ensure(obj);
  if (!array) throw py::type_error(std::string(which) + ": expected a numpy array or a torch tensor");
  // Only data in the other byte order is copied (into native order).
  if (array.dtype().attr("byteorder").cast<std::string>() == ">") {
    array = array.attr("astype")(array.dtype().attr("newbyteorder")("="));
  }
  const std::optional<DType> dtype = NumpyDType(array.dtype());
  if (!dtype) {
    throw py::type_error(std::string(which) + ": unsupported numpy dtype " +
                         py::str(static_cast<py::object>(array.dtype())).cast<std::string>());
  }
  Borrowed b;
  b.view.dtype = *dtype;
  for (py::ssize_t d = 0; d < array.ndim(); ++d) {
    b.view.shape.push_back(array.shape(d));
    b.view.strides.push_back(array.strides(d));
  }
  b.view.data = static_cast<const std::byte*>(array.data());
  b.owner = array;
  return b;
}

Borrowed Borrow(const py::object& obj, std::optional<DType> logical, const char* which) {
  Borrowed b = IsTorchTensor(obj) ? FromTorch(obj, which) : FromNumpy(obj, which);
  if (logical) {
    Status status = ApplyLogicalDType(&b.view, *logical, which);
    if (!status.ok()) throw py::type_error(status.ToString());
  }
  return b;
}

template <typename T>
T ParseOr(const std::optional<std::string>& text, std::optional<T> (*parse)(std::string_view), T fallback,
          const char* what) {
  if (!text) return fallback;
  std::optional<T> value = parse(*text);
  if (!value) throw py::value_error(std::string("unknown ") + what + " '" + *text + "'");
  return *value;
}

// JSON to Python; the strings standing for non-finite numbers become floats.
py::object ToPython(const nlohmann::json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::null:
      return py::none();
    case nlohmann::json::value_t::boolean:
      return py::bool_(j.get<bool>());
    case nlohmann::json::value_t::number_integer:
      return py::int_(j.get<std::int64_t>());
    case nlohmann::json::value_t::number_unsigned:
      return py::int_(j.get<std::uint64_t>());
    case nlohmann::json::value_t::number_float:
      return py::float_(j.get<double>());
    case nlohmann::json::value_t::string: {
      const auto& s = j.get_ref<const std::string&>();
      if (s == "NaN") return py::float_(std::numeric_limits<double>::quiet_NaN());
      if (s == "Infinity") return py::float_(std::numeric_limits<double>::infinity());
      if (s == "-Infinity") return py::float_(-std::numeric_limits<double>::infinity());
      return py::str(s);
    }
    case nlohmann::json::value_t::array: {
      py::list list;
      for (const auto& item : j) list.append(ToPython(item));
      return list;
    }
    case nlohmann::json::value_t::object: {
      py::dict dict;
      for (const auto& [key, value] : j.items()) dict[py::str(key)] = ToPython(value);
      return dict;
    }
    default:
      return py::none();
  }
}

py::dict Compare(const py::object& golden, const py::object& actual, const std::optional<std::string>& dtype,
                 const std::optional<std::string>& input_type, bool non_compute, const std::string& standard,
                 const std::optional<std::string>& precision_mode, int worst, int threads) {
  std::optional<DType> logical;
  if (dtype) logical = ParseOr<DType>(dtype, ParseDType, DType::kFloat32, "dtype");
  JudgeOptions options;
  options.standard = ParseOr<Standard>(standard, ParseStandard, Standard::kEco, "standard");
  options.input_type = ParseOr<InputType>(input_type, ParseInputType, InputType::kUnknown, "input_type");
  options.precision_mode = ParseOr<PrecisionMode>(precision_mode, ParsePrecisionMode, PrecisionMode::kNone,
                                                  "precision_mode");
  options.non_compute = non_compute;
  options.worst_count = worst;
  options.threads = threads;
  const Borrowed g = Borrow(golden, logical, "golden");
  const Borrowed a = Borrow(actual, logical, "actual");
  Verdict verdict;
  {
    py::gil_scoped_release release;
    verdict = Judge(g.view, a.view, options);
  }
  return ToPython(VerdictToJson(verdict));
}

// Reads every byte of both (contiguous) tensors once, on `threads` threads,
// and returns a checksum: the memory floor that perf/judge_throughput.py
// measures the judge's throughput against.
std::uint64_t ReadOnce(const py::object& golden, const py::object& actual, int threads) {
  const Borrowed g = Borrow(golden, std::nullopt, "golden");
  const Borrowed a = Borrow(actual, std::nullopt, "actual");
  for (const Borrowed* b : {&g, &a}) {
    if (!b->view.IsCContiguous()) throw py::value_error("_read_once needs C-contiguous tensors");
  }
  const int n = threads > 0 ? threads : static_cast<int>(std::thread::hardware_concurrency());
  std::vector<std::uint64_t> sums(static_cast<std::size_t>(n));
  py::gil_scoped_release release;
  auto work = [&](int t) {
    std::uint64_t sum = 0;
    for (const Borrowed* b : {&g, &a}) {
      const auto bytes = static_cast<std::size_t>(b->view.NumElements()) * DTypeSize(b->view.dtype);
      const std::size_t words = bytes / sizeof(std::uint64_t);
      const std::size_t begin = words * t / n, end = words * (t + 1) / n;
      const auto* p = reinterpret_cast<const std::uint64_t*>(b->view.data);
      for (std::size_t i = begin; i < end; ++i) sum += p[i];
    }
    sums[static_cast<std::size_t>(t)] = sum;
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < n; ++t) pool.emplace_back(work, t);
  work(0);
  for (auto& th : pool) th.join();
  std::uint64_t total = 0;
  for (std::uint64_t s : sums) total += s;
  return total;
}

}  // namespace
}  // namespace opverify

PYBIND11_MODULE(opverify, m) {
  m.doc() = "opverify's precision judge (PRECISION.md) for numpy arrays and CPU torch tensors";
  m.def("compare", &opverify::Compare, py::arg("golden"), py::arg("actual"), py::kw_only(),
        py::arg("dtype") = py::none(), py::arg("input_type") = py::none(), py::arg("non_compute") = false,
        py::arg("standard") = "eco", py::arg("precision_mode") = py::none(), py::arg("worst") = 8,
        py::arg("threads") = 0,
        R"doc(Judge `actual` against `golden`; returns the dict of `opverify compare --json`.

golden, actual: numpy arrays or CPU torch tensors (any strides; not copied).
dtype: logical dtype of raw storage ("bfloat16", "float8_e4m3fn", "float8_e5m2"
    held in uint16/uint8 or void arrays).
input_type: "float", "int" or "no_tensor": routes integer outputs (default: exact).
non_compute: data-movement operator; raw bits must match.
standard: "eco", "npu_benchmark", "mere_mare" or "strict".
precision_mode: "hf32" or "tf32": float32 outputs use the hifloat32 rows.)doc");
  m.attr("__version__") = opverify::Version();
  m.attr("__commit__") = opverify::GitCommit();
  m.def(
      "load_run", &opverify::LoadRun, py::arg("run_dir"),
      R"doc(Read a run folder (opverify-batch's, or opverify-reduce --merge's) back, without pandas.

Returns a dict: run_info (what the batch recorded), totals {operators, cases,
passed, failed}, cases (a dict per case: case_id, op, index from 0, number from
1, passed, error_type, error_msg, params, input_desc, route, verdicts (the
judge's per output, with metrics), timings, rank, device, ab), verdicts
{case_id: "passed" or its error type}, metrics (numpy arrays in the order of
cases: case_id, passed, wall_ms, max_abs_diff, max_rel_diff; nan where
nothing was judged), operators {name: {passed, failed, cases, error_types,
repro, performance: {speedup, framework_ms, implementation_ms,
geomean_latency_ms, device, shapes}}}, performance (summary.json's), skipped
(cases not run, with why) and problems (records the store could not read).)doc");
  m.def("_read_once", &opverify::ReadOnce, py::arg("golden"), py::arg("actual"), py::arg("threads") = 0,
        "Benchmark baseline: read both tensors once (the memory floor); returns a checksum.");
}
