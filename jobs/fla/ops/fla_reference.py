"""The step-by-step recurrence the linear-attention tasks of jobs/fla are judged against (each
<op>_torch.py imports it): written from the operators' definitions, in float32 or wider."""
import torch


def recurrence(q, k, v, decay=None, beta=None, scale=None):
    """o_t = scale * q_t S_t over [B, T, H, *] tensors, S_t (K x V) the state after step t:
    first S = S * exp(decay_t) (decay [B, T, H]: one per head; [B, T, H, K]: one per key row),
    then S += k_t v_t^T, or with beta [B, T, H] the delta rule's S += k_t (beta_t (v_t - S^T k_t))^T.
    Computed in float32, or float64 when the inputs are; scale defaults to 1/sqrt(K)."""
    wide = torch.promote_types(q.dtype, torch.float32)
    q, k, v = q.to(wide), k.to(wide), v.to(wide)
    B, T, H, K = q.shape
    scale = K ** -0.5 if scale is None else scale
    S = q.new_zeros(B, H, K, v.shape[-1])
    out = []
    for t in range(T):
        if decay is not None:
            d = decay[:, t].to(wide).exp()
            S = S * (d[..., None, None] if d.dim() == 2 else d[..., None])
        kt, vt = k[:, t], v[:, t]
        if beta is not None:
            vt = beta[:, t].to(wide)[..., None] * (vt - torch.einsum("bhk,bhkv->bhv", kt, S))
        S = S + kt[..., :, None] * vt[..., None, :]
        out.append(torch.einsum("bhk,bhkv->bhv", q[:, t] * scale, S))
    return torch.stack(out, 1)


def wide(x):
    """x in float32, or kept in float64 (the fp64 golden and reference trust run the task on
    float64 inputs: a reference must not round them to float32)."""
    return x.to(torch.promote_types(x.dtype, torch.float32))


class Decayed(torch.nn.Module):
    """Linear attention with a decayed state, g the log decays (per head, or per key channel)."""

    def forward(self, q, k, v, g):
        return recurrence(q, k, v, decay=g).to(q.dtype)


class DeltaRule(torch.nn.Module):
    """The delta rule, with log decays g applied to the state first when given."""

    def forward(self, q, k, v, beta, g=None):
        return recurrence(q, k, v, decay=g, beta=beta).to(q.dtype)


def qkv(batch, seq, heads, dim, dtype, kv_heads=None):
    """Queries, keys and values [B, T, H, D] of the case's dtype, standard normal (keys and values
    with kv_heads heads when given)."""
    dt = getattr(torch, dtype)
    kv = heads if kv_heads is None else kv_heads
    return [torch.randn(batch, seq, heads, dim).to(dt), torch.randn(batch, seq, kv, dim).to(dt),
            torch.randn(batch, seq, kv, dim).to(dt)]


def norm_inputs(rows, cols, dtype, gate=False):
    """A norm's x [rows, cols] (scaled by 2), the gate g when gate (standard normal), a weight in
    [0.5, 1.5) and a small bias [cols], all of the case's dtype."""
    dt = getattr(torch, dtype)
    gates = [torch.randn(rows, cols).to(dt)] if gate else []
    return [(torch.randn(rows, cols) * 2.0).to(dt), *gates, (torch.rand(cols) + 0.5).to(dt),
            (torch.randn(cols) * 0.1).to(dt)]


def delta_inputs(batch, seq, heads, dim, dtype, gated=False):
    """q, k (L2-normalised), v, beta in (0, 1) of the case's dtype, and with gated the log decays
    g [B, T, H] in float32."""
    q, k, v = qkv(batch, seq, heads, dim, dtype)
    k = torch.nn.functional.normalize(k.float(), p=2, dim=-1).to(k.dtype)
    extra = [torch.nn.functional.logsigmoid(torch.randn(batch, seq, heads))] if gated else []
    return [q, k, v, torch.sigmoid(torch.randn(batch, seq, heads)).to(q.dtype), *extra]


def normalized(x, eps, rms=False):
    """x over its last dimension, in float32 or wider: x * rsqrt(mean(x^2) + eps) with rms, else
    (x - mean) * rsqrt(var + eps), the biased variance (fla's norms compute so in their kernels)."""
    xf = wide(x)
    if rms:
        return xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
    mean = xf.mean(-1, keepdim=True)
    return (xf - mean) * torch.rsqrt((xf - mean).pow(2).mean(-1, keepdim=True) + eps)


def gla_inputs(batch, seq, heads, dim, dtype):
    """q, k, v of the case's dtype and GLA's log decays per key channel, logsigmoid(N(0, 1)) / 16
    in float32 (a mild decay: the state spans many steps)."""
    return qkv(batch, seq, heads, dim, dtype) + [torch.nn.functional.logsigmoid(torch.randn(batch, seq, heads, dim)) / 16]
