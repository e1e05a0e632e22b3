"""torch.npu of the stand-in: the calls opverify's npu backend makes, on CUDA.

Names and signatures follow torch_npu/npu/{__init__,utils,memory,streams,random}.py
of Ascend/pytorch; the device properties carry the fields of its
_NPUDeviceProperties (csrc/npu/Module.cpp) that opverify reads.
"""
import collections
import time

import torch

# Ascend's runtime error for a kernel that touched memory it must not
# (ACL_ERROR_RT_AICORE_EXCEPTION); any device error is reported as it here.
_AICORE_EXCEPTION = 507015

DeviceProperties = collections.namedtuple(
    "DeviceProperties", "name total_memory cube_core_num vector_core_num multi_processor_count major minor")


def is_available():
    return torch.cuda.is_available()


def device_count():
    return torch.cuda.device_count()


def current_device():
    return torch.cuda.current_device()


def set_device(device):
    torch.cuda.set_device(device)


def _npu_error(function, error):
    """The text torch_npu's NPU_CHECK_ERROR gives a failed ACL call."""
    stamp = time.strftime("%Y-%m-%d-%H:%M:%S")
    return RuntimeError(f"{function}:torch_npu/csrc/npu/Module.cpp:0 NPU function error: {function}, "
                        f"error code is {_AICORE_EXCEPTION}\n[ERROR] {stamp} (PID:0, Device:0, RankID:-1) "
                        f"ERR00100 PTA call acl api failed\n(stand-in for: {error})")


def synchronize(device=None):
    try:
        torch.cuda.synchronize(device)
    except RuntimeError as error:
        raise _npu_error("aclrtSynchronizeDevice", error) from None


def get_device_name(device_name=None):
    return "Ascend910B-standin (" + torch.cuda.get_device_name(device_name) + ")"


def get_device_properties(device_name=None):
    cuda = torch.cuda.get_device_properties(device_name if device_name is not None else current_device())
    return DeviceProperties(get_device_name(device_name), cuda.total_memory, cuda.multi_processor_count,
                            2 * cuda.multi_processor_count, cuda.multi_processor_count, cuda.major, cuda.minor)


def memory_allocated(device=None):
    return torch.cuda.memory_allocated(device)


def max_memory_allocated(device=None):
    return torch.cuda.max_memory_allocated(device)


def reset_peak_memory_stats(device=None):
    torch.cuda.reset_peak_memory_stats(device)


def empty_cache():
    torch.cuda.empty_cache()


def manual_seed(seed):
    torch.cuda.manual_seed(seed)


def manual_seed_all(seed):
    torch.cuda.manual_seed_all(seed)


class Event(torch.cuda.Event):
    """torch_npu.npu.Event(enable_timing=False, blocking=False, interprocess=False)."""
