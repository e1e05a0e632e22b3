"""The npu backend's pieces that need no device, on the CPU: which torch_npu
errors it takes for device errors (texts as torch_npu's NPU_CHECK_ERROR and
copy kernels write them, Ascend/pytorch csrc/core/npu/NPUException.h and
csrc/aten/common/CopyKernel.cpp), and where its tensors live with Ascend's
torch_npu and with the test stand-in. The backend end to end runs on the
H200 in test_npu_standin.py."""
import sys
import types

import pytest

from opverify_runtime import backend as backends

torch = pytest.importorskip("torch")


@pytest.fixture
def npu_backend(monkeypatch):
    """An NpuBackend over a fake torch_npu module (none is installed here)."""
    def make(**attributes):
        module = types.ModuleType("torch_npu")
        for name, value in attributes.items():
            setattr(module, name, value)
        monkeypatch.setitem(sys.modules, "torch_npu", module)
        monkeypatch.setattr(torch, "npu", types.SimpleNamespace(), raising=False)
        return backends.NpuBackend(torch)
    return make


@pytest.mark.parametrize("text", [
    "synchronize:torch_npu/csrc/npu/Module.cpp:312 NPU function error: aclrtSynchronizeDevice, error code is "
    "507015\n[ERROR] 2026-12-01-10:00:00 (PID:1, Device:0, RankID:-1) ERR00100 PTA call acl api failed",
    " NPU function error: call aclnnAdd failed, error code is 561103",  # compact error output
    "ACL stream synchronize failed, error code:507015",
    "EZ9999: Inner Error!\nThe error from device(chipId:0, dieId:0), serial number is 1, there is an aivec error",
])
def test_torch_npus_device_errors_are_device_errors(npu_backend, text):
    assert npu_backend().is_device_error(RuntimeError(text))


@pytest.mark.parametrize("text", ["shape mismatch", "expected scalar type Float but found Half",
                                  "NPU out of memory. Tried to allocate 2.00 GiB"])
def test_other_errors_are_not(npu_backend, text):
    assert not npu_backend().is_device_error(RuntimeError(text))


def test_out_of_memory_is_recognised(npu_backend):
    assert npu_backend().is_out_of_memory(RuntimeError("NPU out of memory. Tried to allocate 2.00 GiB"))


def test_tensors_live_on_npu_unless_a_stand_in_says_otherwise(npu_backend):
    assert npu_backend().device_type == "npu"
    assert npu_backend(OPVERIFY_DEVICE_TYPE="cuda").device() == torch.device("cuda:0")
