"""Where ModelNew runs: the cuda, npu and cpu backends behind one interface.

The npu backend follows torch_npu's public source (Ascend/pytorch): the
torch.npu.* calls below and the text of its device errors. No NPU was
available: tests/support/npu_standin maps those calls onto CUDA, and the
H200 tests run the backend through it end to end.
"""
import os


class Backend:
    name = "cpu"
    visible_devices_variable = None

    def __init__(self, torch):
        self.torch = torch

    def device(self):
        return self.torch.device(self.name if self.name == "cpu" else f"{self.name}:0")

    def synchronize(self):
        pass

    def reset_peak_memory(self):
        pass

    def peak_memory_bytes(self):
        return None

    def allocated_bytes(self):
        return None

    def device_uuid(self):
        """The device's UUID as NVML writes it (GPU-...), where there is one."""
        return None

    def compute_units(self):
        """(how many, what they are called): CPU cores here, SMs on CUDA, AI cores on Ascend."""
        return os.cpu_count(), "CPU cores"

    def empty_cache(self):
        pass

    def memory_bandwidth_gbs(self):
        """The device memory's peak bandwidth (GB/s), where it can be known."""
        return None

    def device_name(self):
        """The CPU's model name (platform.processor() would spawn `uname -p`)."""
        try:
            with open("/proc/cpuinfo") as f:
                for line in f:
                    if line.startswith("model name"):
                        return line.split(":", 1)[1].strip()
        except OSError:
            pass
        import platform
        return platform.machine()

    def healthy(self):
        """False once the device context is poisoned (e.g. after an illegal memory access)."""
        return True

    def is_out_of_memory(self, error):
        return isinstance(error, MemoryError) or "can't allocate memory" in str(error) \
            or "not enough memory" in str(error)

    def is_device_error(self, error):
        return False

    def visible_devices(self):
        return os.environ.get(self.visible_devices_variable) if self.visible_devices_variable else None


class CudaBackend(Backend):
    name = "cuda"
    visible_devices_variable = "CUDA_VISIBLE_DEVICES"

    def synchronize(self):
        self.torch.cuda.synchronize()

    def reset_peak_memory(self):
        self.torch.cuda.reset_peak_memory_stats()

    def peak_memory_bytes(self):
        return int(self.torch.cuda.max_memory_allocated())

    def allocated_bytes(self):
        return int(self.torch.cuda.memory_allocated())

    def compute_units(self):
        return self.torch.cuda.get_device_properties(0).multi_processor_count, "SMs"

    def memory_bandwidth_gbs(self):
        """2 transfers per memory clock (DDR/HBM) x bus width: from torch's
        device properties where it has them, else from NVML."""
        properties = self.torch.cuda.get_device_properties(0)
        clock_khz = getattr(properties, "memory_clock_rate", None)
        bus_bits = getattr(properties, "memory_bus_width", None)
        if not (clock_khz and bus_bits):
            clock_khz, bus_bits = _nvml_memory(self.device_uuid())
        if not (clock_khz and bus_bits):
            return None
        return 2 * clock_khz * 1e3 * bus_bits / 8 / 1e9

    def device_uuid(self):
        uuid = getattr(self.torch.cuda.get_device_properties(0), "uuid", None)
        if uuid is None:
            return None
        text = str(uuid)
        return text if text.startswith("GPU-") else "GPU-" + text

    def empty_cache(self):
        self.torch.cuda.empty_cache()

    def device_name(self):
        return self.torch.cuda.get_device_name(0)

    def healthy(self):
        try:
            probe = self.torch.ones(1, device=self.device())
            self.torch.cuda.synchronize()
            return float(probe.item()) == 1.0
        except Exception:  # noqa: BLE001 - any failure means the context is unusable
            return False

    def is_out_of_memory(self, error):
        oom = getattr(self.torch, "OutOfMemoryError", None) or getattr(self.torch.cuda, "OutOfMemoryError", None)
        return (oom is not None and isinstance(error, oom)) or "out of memory" in str(error).lower()

    def is_device_error(self, error):
        accelerator_error = getattr(self.torch, "AcceleratorError", None)
        if accelerator_error is not None and isinstance(error, accelerator_error):
            return True
        text = str(error)
        return "CUDA error" in text or "Triton Error [CUDA]" in text or "cudaError" in text


class NpuBackend(Backend):
    name = "npu"
    visible_devices_variable = "ASCEND_RT_VISIBLE_DEVICES"

    def __init__(self, torch):
        super().__init__(torch)
        import torch_npu  # registers torch.npu
        self.npu = torch.npu
        # Where tensors live: "npu" with Ascend's torch_npu; the test stand-in
        # maps the npu calls onto CUDA and says so.
        self.device_type = getattr(torch_npu, "OPVERIFY_DEVICE_TYPE", "npu")

    def device(self):
        return self.torch.device(f"{self.device_type}:0")

    def synchronize(self):
        self.npu.synchronize()

    def reset_peak_memory(self):
        self.npu.reset_peak_memory_stats()

    def peak_memory_bytes(self):
        return int(self.npu.max_memory_allocated())

    def allocated_bytes(self):
        return int(self.npu.memory_allocated())

    def empty_cache(self):
        self.npu.empty_cache()

    def device_name(self):
        return self.npu.get_device_name(0)

    def compute_units(self):
        properties = self.npu.get_device_properties(0)
        for name in ("cube_core_num", "multi_processor_count"):
            if getattr(properties, name, None):
                return int(getattr(properties, name)), "AI cores"
        return None, "AI cores"

    def healthy(self):
        try:
            probe = self.torch.ones(1, device=self.device())
            self.npu.synchronize()
            return float(probe.item()) == 1.0
        except Exception:  # noqa: BLE001
            return False

    def is_out_of_memory(self, error):
        return "out of memory" in str(error).lower()

    def is_device_error(self, error):
        # torch_npu's NPU_CHECK_ERROR: "<api>:<file>:<line> NPU function error: ..., error code is N"
        # and, unless compact, "ERR00100 PTA call acl api failed"; copies: "ACL stream synchronize
        # failed"; CANN's own codes: EZ9999 (inner error), E39999 and the like.
        text = str(error)
        return any(marker in text for marker in ("NPU function error", "call acl api failed", "ACL stream",
                                                 "NPU error", "EZ9999", "E39999"))


def _nvml_memory(uuid):
    """(max memory clock in kHz, bus width in bits) from NVML, or (None, None)."""
    import ctypes
    try:
        nvml = ctypes.CDLL("libnvidia-ml.so.1")
        if nvml.nvmlInit_v2() != 0:
            return None, None
        handle = ctypes.c_void_p()
        if uuid:
            found = nvml.nvmlDeviceGetHandleByUUID(uuid.encode(), ctypes.byref(handle)) == 0
        else:
            found = nvml.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(handle)) == 0
        clock, width = ctypes.c_uint(), ctypes.c_uint()
        ok = found and nvml.nvmlDeviceGetMaxClockInfo(handle, 2, ctypes.byref(clock)) == 0 \
            and nvml.nvmlDeviceGetMemoryBusWidth(handle, ctypes.byref(width)) == 0  # 2: NVML_CLOCK_MEM
        nvml.nvmlShutdown()
        return (clock.value * 1000, width.value) if ok else (None, None)
    except (OSError, AttributeError):
        return None, None


def select(torch, requested="auto"):
    """The backend named, or for "auto" the first available of cuda, npu, cpu."""
    if requested == "cuda" or (requested == "auto" and torch.cuda.is_available()):
        if not torch.cuda.is_available():
            raise RuntimeError("backend cuda requested but torch sees no CUDA device")
        return CudaBackend(torch)
    if requested == "npu" or requested == "auto":
        try:
            backend = NpuBackend(torch)
            if torch.npu.is_available():
                return backend
        except ImportError:
            pass
        if requested == "npu":
            raise RuntimeError("backend npu requested but torch_npu is missing or sees no NPU")
    return Backend(torch)
