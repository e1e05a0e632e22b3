"""Launch helpers shared by the operators: how a tensor is seen as rows, and
the block sizes and warp counts the row kernels use."""
import triton

MAX_ROW_BLOCK = 4096


def as_rows(x, dim=-1):
    """(rows [R, n], moved shape, moved): x with `dim` moved last, contiguous, as R rows of n."""
    dim = dim % x.dim() if x.dim() else 0
    moved = dim != x.dim() - 1 and x.dim() > 1
    y = x.movedim(dim, -1) if moved else x
    y = y.contiguous()
    n = y.shape[-1] if y.dim() else 1
    return y.view(-1, n), y.shape, moved


def from_rows(y2, moved_shape, dim, moved):
    """The inverse of as_rows: rows back to the original layout (contiguous)."""
    y = y2.view(moved_shape)
    return y.movedim(-1, dim).contiguous() if moved else y


def row_block(n, cap=MAX_ROW_BLOCK):
    block = triton.next_power_of_2(max(int(n), 1))
    return max(16, min(block, cap))


def warps_for(block):
    return 4 if block <= 1024 else (8 if block <= 4096 else 16)
