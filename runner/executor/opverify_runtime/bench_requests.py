"""The executor's benchmark requests (bench_prepare, bench_measure,
bench_release, bench_transfer), a part of executor.Session: one prepared case
timed side by side, with bench.py's timer."""
from . import bench, override
from .case_io import CaseError, clone_to, describe_inputs, flatten_outputs, input_dtypes, input_tensors, seed_everything


class BenchRequests:
    def op_bench_prepare(self, request):
        """Builds one case's inputs on the device and both models there, and
        warms both up. Kept until the next bench_prepare or bench_release."""
        torch = self.torch
        if self.task is None:
            raise CaseError("RuntimeError", "bench_prepare before load")
        self._bench = None
        index = int(request["index"])
        seed = int(request.get("seed", self.load_seed))
        device = self.backend.device()
        inputs = self.inputs_for(index, seed)
        self._known = {"input_desc": describe_inputs(inputs, torch), "input_dtypes": input_dtypes(inputs, torch)}
        reply = dict(self._known)
        sides = {}
        holds = {}  # what each side's forwards run inside, entered once (an override's enable context)
        resident = {}  # each side's inputs and model state: the cpu backend's peak memory starts there
        self.compile_clock.install()
        self.compile_clock.take()
        # One device copy of the inputs for both sides (correctness, with a
        # copy each, was the verify phase's job): the memory each side's
        # forward adds on top is then comparable.
        try:
            args = clone_to(inputs, device, torch)
        except BaseException as error:  # noqa: BLE001
            raise self.classify(error, f"copying the inputs to {device}") from error
        arg_tensors = [t for _, t in input_tensors(args, torch)]
        for side, build in (("framework", lambda: self.task.Model(*self.init_inputs)),
                            ("implementation", lambda: self.impl.ModelNew(*self.init_inputs))):
            if side == "framework" and request.get("skip_framework"):
                continue
            if side == "implementation" and self.impl is None:
                continue  # a reference executor (docs/SECURITY.md) times the framework alone
            try:
                seed_everything(seed, torch)
                model = build()
                if isinstance(model, torch.nn.Module):
                    model = model.to(device)
            except BaseException as error:  # noqa: BLE001
                raise self.classify(error, f"{side}: building the model on {device}") from error
            sides[side] = self._bench_callable(model, args)
            holds[side] = override.held_context(model)
            weights = list(model.parameters()) + list(model.buffers()) if isinstance(model, torch.nn.Module) else []
            resident[side] = bench.state_bytes(weights + arg_tensors)
        warmup = int(request.get("warmup", 5))
        for side, fn in sides.items():
            try:
                with holds[side]():
                    for _ in range(warmup):
                        fn()
                self.backend.synchronize()
            except BaseException as error:  # noqa: BLE001
                raise self.classify(error, f"{side}: warm-up") from error
        self.compile_clock.take()  # the warm-up's compilations; bench_measure warns about any after it
        # What the memory roofline needs: the bytes one forward must at least
        # read (its inputs) and write (its outputs), and the peak bandwidth.
        measured = "implementation" if "implementation" in sides else "framework"
        try:
            with torch.no_grad(), holds[measured]():
                outputs = flatten_outputs(sides[measured](), torch)
            self.backend.synchronize()
            reply["bytes_moved"] = sum(t.numel() * t.element_size() for t in arg_tensors + outputs)
            del outputs
        except BaseException as error:  # noqa: BLE001
            raise self.classify(error, f"{measured}: a forward after the warm-up") from error
        reply["memory_bandwidth_gbs"] = self.backend.memory_bandwidth_gbs()
        self._bench = {"sides": sides, "holds": holds, "resident": resident,
                       "timer": bench.Timer(torch, self.backend, bool(request.get("flush_l2", True)))}
        return reply, []

    def _bench_callable(self, model, args):
        torch = self.torch

        def forward():
            with torch.no_grad():
                return model(*args)
        return forward

    def op_bench_measure(self, request):
        """Times one side of the prepared case: repeats (adaptive on request),
        peak memory, and the per-kernel breakdown."""
        state = getattr(self, "_bench", None)
        if not state:
            raise CaseError("RuntimeError", "bench_measure before bench_prepare")
        side = request.get("side", "implementation")
        fn = state["sides"].get(side)
        if fn is None:
            raise CaseError("RuntimeError", f"bench_measure: side {side!r} was not prepared")
        timer = state["timer"]
        hold = state["holds"][side]
        self.compile_clock.take()
        try:
            with hold():
                peak_mb, added_mb = timer.peak_memory_mb(fn, state["resident"].get(side, 0))
                stats = timer.repeats(fn, int(request.get("repeats", 50)), adaptive=bool(request.get("adaptive")),
                                      max_repeats=request.get("max_repeats"),
                                      rse_target=float(request.get("rse_target", 0.01)),
                                      max_seconds=float(request.get("max_seconds", 60.0)))
                if self.override:  # the same call under triton.testing.do_bench, beside ours (docs/BENCH.md)
                    stats["do_bench_ms"] = bench.do_bench_ms(self.backend, fn)
        except BaseException as error:  # noqa: BLE001
            raise self.classify(error, f"{side}: timing") from error
        reply = {"side": side, "stats": stats, "peak_memory_mb": peak_mb, "added_memory_mb": added_mb,
                 "warnings": []}
        if stats.get("launch_not_hidden"):
            reply["warnings"].append(f"{side}: in {stats['launch_not_hidden']} of {stats['repeats']} repeats the "
                                     "host's launch outlasted the busy wait: those include launch latency")
        # The profiler may rebind torch functions of its own; what the
        # forward did is checked before it runs, then the baseline moves on.
        tainted_before = self._tainted()
        try:
            with hold():
                reply["operators"] = bench.kernel_breakdown(self.torch, self.backend, fn,
                                                            int(request.get("profile_iterations", 10)))
        except Exception as error:  # noqa: BLE001 - the profiler is optional; its failure is not the case's
            reply["operators"] = {}
            reply["warnings"].append(f"{side}: profiler failed: {type(error).__name__}: {error}")
        if not tainted_before:
            self._identities = self._torch_identities()
        compile_ms, kernels = self.compile_clock.take()
        if kernels:
            reply["warnings"].append(f"{side}: {kernels} kernel(s) compiled while being timed ({compile_ms:.1f} ms): "
                                     "the warm-up did not reach every specialisation")
        return reply, []

    def op_bench_release(self, request):
        state = getattr(self, "_bench", None)
        if state:
            state["timer"].release()
        self._bench = None
        self.backend.empty_cache()
        return {}, []

    def op_bench_transfer(self, request):
        """perf/executor_transfer.cc: ships `nbytes` of uint8 (made once) to
        measure the cost of the tensor hand-over itself."""
        import torch
        nbytes = int(request["nbytes"])
        if getattr(self, "_bench_tensor", None) is None or self._bench_tensor.numel() != nbytes:
            self._bench_tensor = torch.full((nbytes,), 7, dtype=torch.uint8)
        return {}, [self._bench_tensor]
