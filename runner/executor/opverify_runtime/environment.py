"""The environment fingerprint of the seed's verify_result.json: enough to
tell whether two runs used the same compiler, cache, runtime and device.
Every section is collected on its own; a failure becomes {"error": ...}."""
import datetime
import hashlib
import os
import sys


def _section(fn):
    try:
        return fn()
    except Exception as error:  # noqa: BLE001 - a fingerprint never fails the verification
        return {"error": f"{type(error).__name__}: {error}"}


def _sha256_file(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _triton():
    import triton
    key = None
    for where in ("triton.compiler.compiler", "triton.runtime.cache", "triton._C.libtriton"):
        try:
            module = __import__(where, fromlist=["triton_key"])
            key = module.triton_key()
            break
        except (ImportError, AttributeError):
            continue
    out = {"version": triton.__version__, "path": os.path.dirname(triton.__file__)}
    out["key_sha256"] = hashlib.sha256(key.encode()).hexdigest() if key else None
    return out


def _cache():
    directory = os.environ.get("TRITON_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".triton", "cache")
    remote = os.environ.get("TRITON_CACHE_MANAGER") or os.environ.get("TRITON_REMOTE_CACHE_BACKEND")
    always = os.environ.get("TRITON_ALWAYS_COMPILE", "0") not in ("", "0", "false", "False")
    return {"dir": directory, "fresh_effective": not remote, "always_compile": always,
            "inductor_dir": os.environ.get("TORCHINDUCTOR_CACHE_DIR")}


def _cuda(torch):
    out = {"version": torch.version.cuda}
    try:
        import pynvml
        pynvml.nvmlInit()
        driver = pynvml.nvmlSystemGetDriverVersion()
        out["driver_version"] = driver.decode() if isinstance(driver, bytes) else driver
    except Exception as error:  # noqa: BLE001
        out["driver_version_error"] = f"{type(error).__name__}: {error}"
    import ctypes.util
    for candidate in ("/usr/lib/x86_64-linux-gnu/libcuda.so.1", "/usr/local/nvidia/lib64/libcuda.so.1",
                      ctypes.util.find_library("cuda") or ""):
        if candidate and os.path.exists(candidate):
            out["libcuda_path"] = os.path.realpath(candidate)
            out["libcuda_sha256"] = _sha256_file(candidate)
            break
    return out


def _cann():
    home = os.environ.get("ASCEND_HOME_PATH")
    if not home:
        # The seed's words (Python's EnvironmentError is OSError by name).
        return {"error": "EnvironmentError: ASCEND_HOME_PATH is not set (source set_env.sh)"}
    info = os.path.join(home, f"{os.uname().machine}-linux", "ascend_toolkit_install.info")
    out = {"ascend_home_path": home, "info_file": info, "info_sha256": _sha256_file(info)}
    with open(info) as f:
        for line in f:
            if line.startswith("version="):
                out["version"] = line.split("=", 1)[1].strip()
    return out


def library_versions(packages):
    """{package: version} of the libraries under test (the manifest's "library"), for the
    nightly history: the imported module's __version__, else the installed distribution's,
    else None (a source tree without either)."""
    from importlib import metadata
    out = {}
    for name in packages:
        version = getattr(sys.modules.get(name), "__version__", None)
        if version is None:
            try:
                version = metadata.version(name)
            except Exception:  # noqa: BLE001 - not installed as a distribution
                version = None
        out[name] = str(version) if version is not None else None
    return out


def timestamp():
    return datetime.datetime.now().astimezone().isoformat(timespec="seconds")


def collect(torch, backend):
    env = {"timestamp": timestamp()}
    env["triton"] = _section(_triton)
    env["cache"] = _section(_cache)
    # The seed's fingerprint always has cann: off Ascend (ASCEND_HOME_PATH
    # unset) it is {"error": "EnvironmentError: ..."}, which says so.
    env["cann"] = _section(_cann)
    if backend is not None and backend.name == "cuda":
        env["cuda"] = _section(lambda: _cuda(torch))

    def torch_versions():
        out = {"version": torch.__version__}
        try:
            import torch_npu
            out["torch_npu_version"] = torch_npu.__version__
        except ImportError:
            out["torch_npu_version"] = None
        return out
    env["torch"] = _section(torch_versions) if torch is not None else {"error": "torch not loaded"}

    def device():
        out = {"backend": backend.name, "current_device": 0, "name": backend.device_name()}
        if backend.name == "npu":
            out["npu_name"] = out["name"]  # the seed's key on Ascend
        if backend.visible_devices_variable:
            out[backend.visible_devices_variable] = backend.visible_devices()
        uuid = backend.device_uuid()
        if uuid:
            out["uuid"] = uuid
        out["compute_units"], out["compute_unit"] = backend.compute_units()
        return out
    env["device"] = _section(device) if backend is not None else {"error": "no backend"}
    return env
