"""Row sum whose reference runs only on the device (as references built on
device-only operators do), so the verifier computes the golden there. The
implementation launches a kernel that stores nothing and returns
torch.empty(rows): the caching allocator hands it the block the golden just
gave back, still holding the right sums. Caught because the golden stays
alive while ModelNew runs and the allocator's free blocks are filled with
NaN first."""
import torch

EXPECTED_ERROR_TYPE = "NaNMismatch"
# The block torch.empty hands out is the allocator's choice: where it is not one of the poisoned
# free blocks (H200, torch 2.11, 2026-12-04: the 1024-row case), it holds other stale bytes, not the
# sums, and the case fails on accuracy instead. Caught either way; NaN on at least one case.
ALSO_ACCEPTED = ["AccuracyError"]
CAUGHT_BY = "golden kept alive, free device memory poisoned"
CASES = [dict(rows=4096, cols=512), dict(rows=1024, cols=1000)]


class Model(torch.nn.Module):
    def forward(self, x):
        if not x.is_cuda:
            raise RuntimeError("this reference needs the device")
        return x.sum(dim=-1)


def get_init_inputs():
    return []


def get_inputs(rows=4096, cols=512):
    return [torch.randn(rows, cols)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
