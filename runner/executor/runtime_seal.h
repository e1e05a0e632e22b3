// The runtime's code in an implementation's executor, sealed before the
// implementation is imported and checked after every request (the trust
// boundary, docs/SECURITY.md). The implementation runs in the same process
// as the runtime that runs it, times it and collects its runtime evidence:
// an implementation that replaces a piece of that code (a function of
// opverify_runtime, a method of its classes, a function's code, a function
// of the standard modules its timing and replies use, torch's timing
// events) must not be believed. The seal is taken and kept here, in C++,
// by walking the modules' dictionaries with Python's C API: nothing the
// implementation can reassign from Python holds it or does the comparing.
//
// Not covered (docs/SECURITY.md says so): the runtime's live objects made
// after the seal (a prepared benchmark's timer), torch's other functions
// (libraries replace some legitimately; the golden and the framework's
// timing are in another process for that reason), and anything done by
// writing the process's memory (ctypes).
#pragma once

#include <Python.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace opverify {

// name -> the identity (address) of what it named at the seal.
using RuntimeIdentities = std::map<std::string, std::uintptr_t>;

// What the seal covers, taken now (the GIL held). `session` (may be null):
// the executor's Session object, whose instance dictionary may not gain or
// change a callable (an instance attribute shadows a method).
RuntimeIdentities TakeRuntimeIdentities(PyObject* session);

// The names whose identity changed or that are gone, then the callables that
// appeared where the seal had none (a runtime module's global shadowing a
// builtin, a method shadowed on the session); sorted. New submodules and a
// third-party module's new names (lazily imported parts) are not changes.
std::vector<std::string> SealChanges(const RuntimeIdentities& sealed, const RuntimeIdentities& now);

// "a, b, c and N more": the changes as one line of a reply.
std::string DescribeSealChanges(const std::vector<std::string>& changes, std::size_t shown = 8);

}  // namespace opverify
