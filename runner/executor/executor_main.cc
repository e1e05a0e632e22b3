// opverify-executor: runs one operator's cases for its parent, in a process
// of its own, so that a crash, a hang or a poisoned device costs only this
// process. It embeds Python (pybind11), hands each request to
// opverify_runtime.executor.Session and ships the output tensors as raw bytes.
#include <pybind11/embed.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "runner/common/version.h"
#include "runner/embed/embedded_python.h"
#include "runner/executor/protocol.h"
#include "runner/executor/runtime_seal.h"
#include "runner/process/channel.h"

namespace py = pybind11;
namespace proto = opverify::executor_protocol;

namespace {

// Writes every tensor into the memory file and describes it in the reply.
opverify::Status ShipTensors(const py::list& tensors, nlohmann::json* reply, off_t* capacity) {
  nlohmann::json described = nlohmann::json::array();
  off_t offset = 0;
  for (py::handle tensor : tensors) {
    const auto nbytes = tensor.attr("numel")().cast<std::int64_t>() *
                        tensor.attr("element_size")().cast<std::int64_t>();
    std::vector<std::int64_t> shape;
    for (py::handle extent : tensor.attr("shape")) shape.push_back(extent.cast<std::int64_t>());
    const auto* data =
        reinterpret_cast<const char*>(tensor.attr("data_ptr")().cast<std::uintptr_t>());
    if (offset + nbytes > *capacity) {
      if (ftruncate(proto::kTensorFd, offset + nbytes) != 0) {
        return opverify::Status::IoError(std::string("growing the tensor file: ") +
                                         std::strerror(errno));
      }
      *capacity = offset + nbytes;
    }
    for (std::int64_t done = 0; done < nbytes;) {
      const ssize_t n = pwrite(proto::kTensorFd, data + done,
                               static_cast<std::size_t>(nbytes - done), offset + done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0)
        return opverify::Status::IoError(std::string("writing a tensor: ") + std::strerror(errno));
      done += n;
    }
    std::string dtype = py::str(tensor.attr("dtype"));
    if (dtype.rfind("torch.", 0) == 0) dtype.erase(0, 6);
    described.push_back(proto::TensorDescription{dtype, shape, offset, nbytes});
    offset += (nbytes + 63) / 64 * 64;  // each tensor 64-byte aligned
  }
  (*reply)["tensors"] = std::move(described);
  return opverify::Status::Ok();
}

// The runtime as the load found it before importing the implementation
// (runtime_seal.h); unset until then, and in a reference executor.
PyObject* g_session = nullptr;
std::optional<opverify::RuntimeIdentities> g_sealed;

// The reply instead of the request's when the implementation replaced a
// piece of the runtime: nothing the runtime said (or would ship) is believed.
std::optional<nlohmann::json> Tampered() {
  if (!g_sealed) return std::nullopt;
  const std::vector<std::string> changes =
      opverify::SealChanges(*g_sealed, opverify::TakeRuntimeIdentities(g_session));
  if (changes.empty()) return std::nullopt;
  return nlohmann::json{
      {"ok", false},
      {"error_type", std::string(proto::kRuntimeTampered)},
      {"error_msg", "the implementation replaced the runtime's own code that runs, times and "
                    "checks it (" + opverify::DescribeSealChanges(changes) +
                        "): its outputs, evidence and timings are not believed"},
      {"device_poisoned", true}};  // the process is not to be used again
}

}  // namespace

// opverify_seal.seal(): the runtime seals itself once, just before it imports
// an implementation (executor.py, op_load); later calls change nothing.
PYBIND11_EMBEDDED_MODULE(opverify_seal, module) {
  module.def("seal", [] {
    if (!g_sealed) g_sealed = opverify::TakeRuntimeIdentities(g_session);
  });
}

// opverify_channel.send(text): an event message to the parent ahead of the
// reply (protocol.h, "events"); compile_clock.py announces warm-ups with it.
PYBIND11_EMBEDDED_MODULE(opverify_channel, module) {
  module.def("send", [](const std::string& text) {
    py::gil_scoped_release unlocked;
    return opverify::SendMessage(proto::kReplyFd, text).ok();
  });
}

// opverify-executor --compile-sources PATH...: each folder's (or file's)
// Python sources compiled to bytecode beside them (__pycache__), with this
// interpreter, isolated (the standard library's compileall alone: no site, no
// user code runs, none is imported). A batch rank runs it on the declared
// libraries carried as source before its first executor (library_bytecode.h).
// Exit 0 when every source compiled, 1 when one did not (a syntax error:
// importing it says so), 3 when Python cannot start.
namespace {
int CompileSources(const char* program, const std::vector<std::string>& paths) {
  opverify::EmbedOptions options;
  options.argv = {program};
  options.isolated = true;
  auto interpreter = opverify::EmbeddedPython::Start(options);
  if (!interpreter.ok()) {
    std::fprintf(stderr, "opverify-executor: %s\n", interpreter.status().ToString().c_str());
    return 3;
  }
  bool all = true;
  try {
    py::module_ compileall = py::module_::import("compileall");
    py::module_ os_path = py::module_::import("os.path");
    for (const std::string& path : paths) {
      const bool folder = os_path.attr("isdir")(path).cast<bool>();
      const py::object done = compileall.attr(folder ? "compile_dir" : "compile_file")(path, py::arg("quiet") = 1);
      if (!done.cast<bool>()) {
        std::fprintf(stderr, "opverify-executor: --compile-sources: %s: not every source compiled\n",
                     path.c_str());
        all = false;
      }
    }
  } catch (const py::error_already_set& e) {
    std::fprintf(stderr, "opverify-executor: --compile-sources: %s\n", e.what());
    return 1;
  }
  return all ? 0 : 1;
}
}  // namespace

int main(int argc, char** argv) {
  // Started by opverify with its pipes on fds 3 and 4; by hand, only these.
  if (argc > 1) {
    const std::string arg = argv[1];
    if (arg == "--compile-sources") return CompileSources(argv[0], {argv + 2, argv + argc});
    if (arg == "--version") {
      std::printf("%s\n", opverify::VersionLine().c_str());
      return 0;
    }
    std::fprintf(arg == "--help" ? stdout : stderr,
                 "usage: opverify-executor [--version | --compile-sources PATH...]\n"
                 "Runs one operator's cases for opverify, which starts it with its request\n"
                 "and reply pipes (docs/EXECUTOR.md); it takes no arguments.\n"
                 "--compile-sources: the Python sources under each PATH compiled to bytecode\n"
                 "beside them, by this interpreter (opverify-batch does it for the declared\n"
                 "libraries carried as source).\n");
    return arg == "--help" ? 0 : 2;
  }
  // The start-up split the load and ping replies carry (Session.startup).
  using Clock = std::chrono::steady_clock;
  const auto ms_since = [](Clock::time_point since) {
    return std::chrono::duration<double, std::milli>(Clock::now() - since).count();
  };
  const Clock::time_point main_started = Clock::now();
  opverify::EmbedOptions options;
  options.argv = {argv[0]};
  auto interpreter = opverify::EmbeddedPython::Start(options);
  if (!interpreter.ok()) {
    std::fprintf(stderr, "opverify-executor: %s\n", interpreter.status().ToString().c_str());
    return 3;
  }
  off_t capacity = 0;
  {
    py::object session;
    try {
      const double interpreter_ms = ms_since(main_started);
      const Clock::time_point runtime_started = Clock::now();
      py::object runtime = py::module_::import("opverify_runtime.executor");
      const double runtime_ms = ms_since(runtime_started);
      session = runtime.attr("Session")();  // imports torch (torch_ms)
      session.attr("startup")["interpreter_ms"] = interpreter_ms;
      session.attr("startup")["runtime_ms"] = runtime_ms;
      g_session = session.ptr();
      // A spare's head start: the library it was started for (OPVERIFY_PRELOAD),
      // imported after the runtime is sealed (executor.py, Session.preload).
      session.attr("preload")();
    } catch (const py::error_already_set& e) {
      std::fprintf(stderr, "opverify-executor: cannot load opverify_runtime.executor from %s: %s\n",
                   opverify::RuntimeDir().c_str(), e.what());
      return 3;
    }
    // Bound once: a method the implementation puts on the session later is not called.
    py::object handle_json = session.attr("handle_json");
    for (;;) {
      opverify::Received request = opverify::ReceiveMessage(proto::kRequestFd, -1);
      if (!request.ok) break;  // the parent closed the pipe: done
      nlohmann::json reply;
      try {
        py::tuple result = handle_json(request.message);
        reply = nlohmann::json::parse(result[0].cast<std::string>());
        if (std::optional<nlohmann::json> tampered = Tampered()) {
          reply = std::move(*tampered);
          reply["tensors"] = nlohmann::json::array();
        } else if (opverify::Status shipped =
                       ShipTensors(result[1].cast<py::list>(), &reply, &capacity);
                   !shipped.ok()) {
          reply = {
              {"ok", false}, {"error_type", "RuntimeError"}, {"error_msg", shipped.ToString()}};
        }
      } catch (const std::exception& e) {
        reply = {{"ok", false},
                 {"error_type", "RuntimeError"},
                 {"error_msg", std::string("executor: ") + e.what()}};
      }
      if (!opverify::SendMessage(proto::kReplyFd, reply.dump()).ok()) break;
    }
  }
  std::fflush(stdout);
  return 0;
}
