"""A stand-in for Ascend's torch_npu, for tests on an NVIDIA machine.

opverify's npu backend (runner/executor/opverify_runtime/backend.py) calls
torch.npu.*; this package provides exactly those calls, mapped onto CUDA, so
that the backend's device binding, environment, clock sampling and locking,
and device-error classification run end to end where no NPU exists. Every
call below was checked against torch_npu's public source (Ascend/pytorch:
torch_npu/npu/__init__.py, utils.py, memory.py, streams.py, random.py, and
csrc/npu/Module.cpp for the device properties) for its name, arguments and
what it returns.

What differs from the real package, on purpose:
- tensors live on CUDA: the package says so in OPVERIFY_DEVICE_TYPE, which
  the npu backend reads (Ascend's torch_npu has no such name, so there the
  backend uses "npu");
- ASCEND_RT_VISIBLE_DEVICES (Ascend's device selection) becomes
  CUDA_VISIBLE_DEVICES before CUDA starts, so the runner's binding of a
  rank to a device is what picks the GPU;
- device errors raised by synchronize() carry the text torch_npu's
  NPU_CHECK_ERROR gives them (" NPU function error: ..., error code is N"
  followed by "ERR00100 PTA call acl api failed"), with the CUDA text kept.
"""
import os

if os.environ.get("ASCEND_RT_VISIBLE_DEVICES") is not None:
    os.environ["CUDA_VISIBLE_DEVICES"] = os.environ["ASCEND_RT_VISIBLE_DEVICES"]

import torch  # noqa: E402 - after the device variable, which CUDA reads when it starts

from . import npu  # noqa: E402

__version__ = "0.0.0+opverify.standin"
OPVERIFY_DEVICE_TYPE = "cuda"

# torch_npu registers its module as torch.npu (torch._register_device_module("npu", ...)).
torch.npu = npu
