"""Quick standalone look at Liger-Kernel's forward kernels against torch on a CUDA device,
before the opverify qualification (jobs/liger.json). The source is carried, not installed:

    python3 jobs/liger/selfcheck.py [LIGER_SRC]   # default: jobs/liger/src

Prints one line per operator and dtype: the largest error against torch in float64."""
import os
import sys
import time
import traceback

src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "src")
sys.path.insert(0, src)

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

t0 = time.time()
import liger_kernel.ops  # noqa: E402,F401

print(f"liger_kernel.ops imported from {liger_kernel.ops.__file__} in {time.time() - t0:.1f}s", flush=True)
from liger_kernel.ops.cross_entropy import cross_entropy_forward  # noqa: E402
from liger_kernel.ops.dyt import liger_dyt_fwd  # noqa: E402
from liger_kernel.ops.geglu import geglu_forward  # noqa: E402
from liger_kernel.ops.group_norm import group_norm_forward  # noqa: E402
from liger_kernel.ops.jsd import jsd_forward  # noqa: E402
from liger_kernel.ops.kl_div import kldiv_forward_triton  # noqa: E402
from liger_kernel.ops.layer_norm import layer_norm_forward  # noqa: E402
from liger_kernel.ops.relu_squared import relu_squared_forward  # noqa: E402
from liger_kernel.ops.rms_norm import rms_norm_forward  # noqa: E402
from liger_kernel.ops.rope import rope_forward  # noqa: E402
from liger_kernel.ops.softmax import _softmax_forward  # noqa: E402
from liger_kernel.ops.swiglu import swiglu_forward  # noqa: E402

dev = "cuda"


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def cases(dt):
    x = torch.randn(37, 1000, device=dev).to(dt)
    w = torch.rand(1000, device=dev).to(dt) + 0.5
    b = torch.randn(1000, device=dev).to(dt)
    a2 = torch.randn(37, 1000, device=dev).to(dt)
    yield "rms_norm", lambda: rms_norm_forward(x, w, 1e-6, 0.0, "llama", None)[0], \
        lambda: w.double() * (x.double() * torch.rsqrt(x.double().pow(2).mean(-1, keepdim=True) + 1e-6))
    yield "layer_norm", lambda: layer_norm_forward(x, w, b, 1e-5)[0], \
        lambda: F.layer_norm(x.double(), [1000], w.double(), b.double(), 1e-5)
    yield "swiglu", lambda: swiglu_forward(x, a2)[2], lambda: F.silu(x.double()) * a2.double()
    yield "geglu", lambda: geglu_forward(x, a2)[2], lambda: F.gelu(x.double(), approximate="tanh") * a2.double()
    yield "softmax", lambda: _softmax_forward(x)[0], lambda: torch.softmax(x.double(), -1)
    yield "relu_squared", lambda: relu_squared_forward(x), lambda: F.relu(x.double()) ** 2
    yield "dyt", lambda: liger_dyt_fwd(x, torch.tensor([0.7], device=dev, dtype=dt), w, b), \
        lambda: w.double() * torch.tanh(0.7 * x.double()) + b.double()
    logits = torch.randn(64, 5003, device=dev).to(dt)
    target = torch.randint(0, 5003, (64,), device=dev)
    yield "cross_entropy none", lambda: cross_entropy_forward(logits, target, None, -100, 0.0, 0.0, "none", None, False)[0], \
        lambda: F.cross_entropy(logits.double(), target, reduction="none")
    yield "cross_entropy mean", lambda: cross_entropy_forward(logits, target, None, -100, 0.0, 0.0, "mean", None, False)[0], \
        lambda: F.cross_entropy(logits.double(), target, reduction="mean")
    lp = torch.log_softmax(torch.randn(64, 5003, device=dev), -1).to(dt)
    tp = torch.softmax(torch.randn(64, 5003, device=dev), -1).to(dt)
    yield "kl_div none", lambda: kldiv_forward_triton(lp, tp, False, "none", 1e-10), \
        lambda: F.kl_div(lp.double(), tp.double(), reduction="none")
    lq = torch.log_softmax(torch.randn(64, 5003, device=dev), -1).to(dt)
    def jsd_ref():
        P, Q = tp.double().log().exp(), lq.double().exp()
        M = 0.5 * (P + Q)
        return (0.5 * (P * (P.log() - M.log())).sum() + 0.5 * (Q * (Q.log() - M.log())).sum()) / 64
    ltp = tp.float().log().to(dt)
    yield "jsd", lambda: jsd_forward(lq, ltp, None, 0.5, -100, False)[0], jsd_ref
    X = torch.randn(8, 64, 7, 9, device=dev).to(dt)
    gw = torch.rand(64, device=dev).to(dt) + 0.5
    gb = torch.randn(64, device=dev).to(dt)
    yield "group_norm", lambda: group_norm_forward(X, 64, 8, gw, gb, 1e-5)[0], \
        lambda: F.group_norm(X.double(), 8, gw.double(), gb.double(), 1e-5)
    q = torch.randn(2, 8, 33, 64, device=dev).to(dt)
    k = torch.randn(2, 2, 33, 64, device=dev).to(dt)
    pos = torch.arange(33, device=dev).float()
    inv = 1.0 / (10000 ** (torch.arange(0, 64, 2, device=dev).float() / 64))
    emb = torch.cat([torch.outer(pos, inv)] * 2, -1)
    cos, sin = emb.cos()[None].to(dt), emb.sin()[None].to(dt)
    yield "rope q", lambda: rope_forward(q, k, cos, sin)[0], \
        lambda: q.double() * cos.double()[:, None] + rotate_half(q.double()) * sin.double()[:, None]
    yield "rope k", lambda: rope_forward(q, k, cos, sin)[1], \
        lambda: k.double() * cos.double()[:, None] + rotate_half(k.double()) * sin.double()[:, None]


for dt in (torch.float16, torch.bfloat16, torch.float32):
    torch.manual_seed(0)
    for name, impl, ref in cases(dt):
        try:
            t = time.time()
            got = impl()
            torch.cuda.synchronize()
            want = ref()
            err = (got.double() - want).abs()
            rel = float((err / (1 + want.abs())).max())
            print(f"{name:20s} {str(dt)[6:]:9s} out {str(got.dtype)[6:]:9s} {list(got.shape)} max abs {float(err.max()):.3g} "
                  f"max rel {rel:.3g} ({time.time() - t:.1f}s)", flush=True)
        except Exception:
            print(f"{name:20s} {str(dt)[6:]:9s} RAISED {traceback.format_exc()[-600:]}", flush=True)
