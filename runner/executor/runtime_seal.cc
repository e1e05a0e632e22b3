#include "runner/executor/runtime_seal.h"

#include <algorithm>
#include <string_view>

namespace opverify {
namespace {

// Keys: "S:" for a strict namespace (the runtime's: a new callable in it is
// a change), "L:" for a lenient one (a third party's: new names are its lazy
// parts); the namespace's own entry is "<S|L>:<namespace>#ns", each name in it
// "<S|L>:<namespace>.<name>", a function's code and defaults "...#code",
// "...#defaults", "...#kwdefaults".
constexpr std::string_view kRuntime = "opverify_runtime";
constexpr const char* kLenientModules[] = {"builtins",   "time",       "json",     "math",
                                           "statistics", "contextlib", "functools"};
// torch's own clock: what bench.py times a device with.
constexpr const char* kTorchTimingNames[] = {"Event",  "synchronize",    "_sleep",
                                             "Stream", "current_stream", "elapsed_time"};

// torch.Tensor's methods the runtime reads an output or an input with (case_io.py): replaced
// (`torch.Tensor.detach = f`), they would show the judge other values than the tensor holds.
constexpr const char* kTensorMethods[] = {
    "detach", "contiguous", "cpu", "to", "clone", "numpy", "view", "reshape", "numel", "element_size",
    "data_ptr", "untyped_storage", "copy_", "size", "dim", "stride", "is_contiguous", "storage_offset",
    "tolist", "item", "__torch_function__", "__torch_dispatch__", "__array__", "__getitem__", "__len__"};

std::uintptr_t Address(PyObject* object) { return reinterpret_cast<std::uintptr_t>(object); }

std::string Text(PyObject* key) {
  if (!PyUnicode_Check(key)) return "?";
  const char* text = PyUnicode_AsUTF8(key);
  if (text == nullptr) {
    PyErr_Clear();
    return "?";
  }
  return text;
}

bool IsRuntimeName(std::string_view name) {
  return name == kRuntime || (name.size() > kRuntime.size() &&
                              name.substr(0, kRuntime.size() + 1) == std::string(kRuntime) + ".");
}

std::string ModuleName(PyObject* module) {
  const char* name = PyModule_GetName(module);
  if (name == nullptr) {
    PyErr_Clear();
    return "";
  }
  return name;
}

// Whether a class dictionary entry has behaviour: a function, a descriptor.
bool HasBehaviour(PyObject* value) {
  return PyCallable_Check(value) != 0 || Py_TYPE(value)->tp_descr_get != nullptr;
}

void AddFunctionParts(const std::string& key, PyObject* value, RuntimeIdentities* out) {
  PyObject* function = value;
  PyObject* inner = nullptr;
  if (!PyFunction_Check(function)) {  // a staticmethod's or classmethod's function
    if (PyCallable_Check(value) == 0 && Py_TYPE(value)->tp_descr_get == nullptr) return;
    inner = PyObject_GetAttrString(value, "__func__");
    if (inner == nullptr) {
      PyErr_Clear();
      return;
    }
    function = inner;
  }
  if (PyFunction_Check(function)) {
    (*out)[key + "#code"] = Address(PyFunction_GET_CODE(function));
    (*out)[key + "#defaults"] = Address(PyFunction_GET_DEFAULTS(function));
    (*out)[key + "#kwdefaults"] = Address(PyFunction_GET_KW_DEFAULTS(function));
  }
  Py_XDECREF(inner);
}

class Walker {
 public:
  explicit Walker(RuntimeIdentities* out, bool modules = true) : out_(out), modules_(modules) {}

  // Every entry with behaviour of `dict`, the namespace `name`.
  void Namespace(const std::string& prefix, const std::string& name, PyObject* owner,
                 PyObject* dict, bool walk_classes, const char* const* only = nullptr,
                 std::size_t only_count = 0) {
    (*out_)[prefix + name + "#ns"] = Address(owner);
    PyObject* key = nullptr;
    PyObject* value = nullptr;
    Py_ssize_t at = 0;
    while (PyDict_Next(dict, &at, &key, &value)) {
      const std::string entry = Text(key);
      if (only != nullptr &&
          std::none_of(only, only + only_count, [&](const char* n) { return entry == n; })) {
        continue;
      }
      const bool module = PyModule_Check(value) != 0;
      if (module ? !modules_ : !HasBehaviour(value)) continue;
      // A submodule of the runtime's, bound on its package when imported:
      // its own namespace is walked (and a lazily imported one is no change).
      if (module && IsRuntimeName(ModuleName(value))) continue;
      const std::string full = prefix + name + "." + entry;
      (*out_)[full] = Address(value);
      AddFunctionParts(full, value, out_);
      if (walk_classes && PyType_Check(value) && DefinedInRuntime(value)) {
        auto* type = reinterpret_cast<PyTypeObject*>(value);
        Namespace(prefix, name + "." + entry, value, type->tp_dict, false);
      }
    }
  }

 private:
  static bool DefinedInRuntime(PyObject* type) {
    PyObject* module = PyObject_GetAttrString(type, "__module__");
    if (module == nullptr) {
      PyErr_Clear();
      return false;
    }
    const bool ours = PyUnicode_Check(module) && IsRuntimeName(Text(module));
    Py_DECREF(module);
    return ours;
  }

  RuntimeIdentities* out_;
  bool modules_;  // a module bound in a namespace counts (a module's globals)
};

}  // namespace

RuntimeIdentities TakeRuntimeIdentities(PyObject* session) {
  RuntimeIdentities out;
  Walker walker(&out);
  PyObject* modules = PyImport_GetModuleDict();  // the interpreter's own, not sys.modules' binding
  PyObject* key = nullptr;
  PyObject* module = nullptr;
  Py_ssize_t at = 0;
  while (PyDict_Next(modules, &at, &key, &module)) {
    const std::string name = Text(key);
    if (!IsRuntimeName(name) || !PyModule_Check(module)) continue;
    walker.Namespace("S:", name, module, PyModule_GetDict(module), true);
  }
  for (const char* name : kLenientModules) {
    PyObject* found = PyDict_GetItemString(modules, name);  // borrowed
    if (found != nullptr && PyModule_Check(found))
      walker.Namespace("L:", name, found, PyModule_GetDict(found), false);
  }
  if (PyObject* cuda = PyDict_GetItemString(modules, "torch.cuda");
      cuda != nullptr && PyModule_Check(cuda)) {
    walker.Namespace("L:", "torch.cuda", cuda, PyModule_GetDict(cuda), false, kTorchTimingNames,
                     std::size(kTorchTimingNames));
    if (PyObject* event = PyDict_GetItemString(PyModule_GetDict(cuda), "Event");
        event != nullptr && PyType_Check(event)) {
      walker.Namespace("L:", "torch.cuda.Event", event,
                       reinterpret_cast<PyTypeObject*>(event)->tp_dict, false);
    }
  }
  if (PyObject* torch = PyDict_GetItemString(modules, "torch"); torch != nullptr && PyModule_Check(torch)) {
    if (PyObject* tensor = PyDict_GetItemString(PyModule_GetDict(torch), "Tensor");
        tensor != nullptr && PyType_Check(tensor)) {
      // What each name finds on the class (its own or a base's): the lookup, as a call makes it.
      for (const char* name : kTensorMethods) {
        PyObject* found = PyObject_GetAttrString(tensor, name);
        if (found == nullptr) {
          PyErr_Clear();
          continue;
        }
        // (a classmethod's lookup makes a new bound method each time: its function is the identity)
        out[std::string("L:torch.Tensor.") + name] =
            Address(PyMethod_Check(found) != 0 ? PyMethod_GET_FUNCTION(found) : found);
        Py_DECREF(found);
      }
    }
  }
  if (session != nullptr) {
    PyObject** dict = _PyObject_GetDictPtr(session);
    if (dict != nullptr && *dict != nullptr) {
      // Its methods alone: the modules it holds (the task, the implementation) are its data.
      Walker methods(&out, false);
      methods.Namespace("S:", "session", session, *dict, false);
    }
  }
  return out;
}

std::vector<std::string> SealChanges(const RuntimeIdentities& sealed,
                                     const RuntimeIdentities& now) {
  std::vector<std::string> changes;
  for (const auto& [name, identity] : sealed) {
    auto found = now.find(name);
    if (found == now.end() || found->second != identity) changes.push_back(name.substr(2));
  }
  for (const auto& [name, identity] : now) {
    // A new name in a sealed strict namespace (a lazily imported runtime
    // module is a new namespace: none of its names are).
    if (name.rfind("S:", 0) != 0 || name.find('#') != std::string::npos || sealed.count(name) > 0)
      continue;
    const std::size_t dot = name.rfind('.');
    if (dot != std::string::npos && sealed.count(name.substr(0, dot) + "#ns") > 0)
      changes.push_back(name.substr(2));
  }
  std::sort(changes.begin(), changes.end());
  changes.erase(std::unique(changes.begin(), changes.end()), changes.end());
  return changes;
}

std::string DescribeSealChanges(const std::vector<std::string>& changes, std::size_t shown) {
  std::string line;
  for (std::size_t i = 0; i < changes.size() && i < shown; ++i)
    line += (i ? ", " : "") + changes[i];
  if (changes.size() > shown) line += " and " + std::to_string(changes.size() - shown) + " more";
  return line;
}

}  // namespace opverify
