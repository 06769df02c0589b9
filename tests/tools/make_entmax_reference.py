#!/usr/bin/python3
"""Independent references for the sparse attention normalisers (tests/tst_entmax.cpp, src/core/ops/entmax.cpp).

Written from the papers, in float64 with PyTorch:
  - sparsemax (Martins & Astudillo 2016, Algorithm 1): sort, the support size k(z), tau, [z - tau]+;
  - 1.5-entmax by the exact sort-based algorithm of Peters, Niculae & Martins 2019 (Algorithm 2), which the
    engine does not use (it bisects);
  - alpha-entmax for other alpha by bisection on tau (Peters et al. 2019, section 3) to 200 halvings.
Gradients with respect to the scores: autograd through the two closed forms (alpha 2 and 1.5: on a fixed support tau is
a smooth function of the scores), and central finite differences of the bisection for the other alphas. Gradients with
respect to alpha: central finite differences for every head (the engine uses the closed form of Correia et al. 2019).
Masked cells are -inf and take no part.

Run with Debian's interpreter (python3-torch, numpy):

    /usr/bin/python3 tests/tools/make_entmax_reference.py

It is deterministic and rewrites tests/data/entmax/: scores.npy (H,T,N) with -inf cells, alpha.npy (H,),
dout.npy (H,T,N), probs.npy, dscores.npy (H,T,N) and dalpha.npy (H,).
"""

import os

import numpy as np
import torch

OUT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "entmax"))
ALPHAS = [2.0, 1.5, 1.25, 1.75]
H, T, N = len(ALPHAS), 5, 7


def sparsemax(z):
    zs, _ = torch.sort(z, descending=True)
    k = torch.arange(1, z.numel() + 1, dtype=z.dtype)
    cumulative = torch.cumsum(zs, 0)
    support = int((1 + k * zs > cumulative).nonzero().max()) + 1
    tau = (cumulative[support - 1] - 1) / support
    return torch.clamp(z - tau, min=0)


def entmax15(z):
    z = z / 2  # (alpha - 1) z
    zs, _ = torch.sort(z, descending=True)
    k = torch.arange(1, z.numel() + 1, dtype=z.dtype)
    mean = torch.cumsum(zs, 0) / k
    mean_sq = torch.cumsum(zs * zs, 0) / k
    ss = k * (mean_sq - mean * mean)
    delta = (1 - ss) / k
    tau = mean - torch.sqrt(torch.clamp(delta, min=0))
    support = int((tau <= zs).nonzero().max()) + 1
    return torch.clamp(z - tau[support - 1], min=0) ** 2


def entmax_bisect(z, alpha):
    a1 = alpha - 1
    x = z * a1
    lo, hi = x.max() - 1, x.max() - z.numel() ** (-a1)
    for _ in range(200):
        mid = (lo + hi) / 2
        if torch.clamp(x - mid, min=0).pow(1 / a1).sum() >= 1:
            lo = mid
        else:
            hi = mid
    p = torch.clamp(x - lo, min=0).pow(1 / a1)
    return p / p.sum()


def normalise(z, alpha):
    """One row; -inf cells left out."""
    allowed = torch.isfinite(z)
    p = torch.zeros_like(z)
    zz = z[allowed]
    if alpha == 2.0:
        p[allowed] = sparsemax(zz)
    elif alpha == 1.5:
        p[allowed] = entmax15(zz)
    else:
        p[allowed] = entmax_bisect(zz, alpha)
    return p


def main():
    torch.set_default_dtype(torch.float64)
    g = torch.Generator().manual_seed(5)
    scores = torch.randn(H, T, N, generator=g) * 1.5
    scores[:, 0, 1:] = float("-inf")  # a causal first row: one key
    scores[:, 2, 5:] = float("-inf")
    scores[1, 3, 0] = float("-inf")
    scores[0, 4] = torch.tensor([3.0, 2.9, -1.0, 0.5, 2.95, -2.0, 0.0])  # near ties at the top
    scores = scores.to(torch.float32).to(torch.float64)  # what the engine reads
    dout = (torch.randn(H, T, N, generator=g)).to(torch.float32).to(torch.float64)
    alpha = torch.tensor(ALPHAS)

    probs = torch.zeros_like(scores)
    dscores = torch.zeros_like(scores)
    for h in range(H):
        for t in range(T):
            z = scores[h, t]
            probs[h, t] = normalise(z, ALPHAS[h])
            allowed = torch.isfinite(z)
            if ALPHAS[h] in (2.0, 1.5):
                leaf = z.clone().requires_grad_(True)
                with torch.enable_grad():
                    zz = leaf[allowed]
                    p = sparsemax(zz) if ALPHAS[h] == 2.0 else entmax15(zz)
                    (p * dout[h, t][allowed]).sum().backward()
                dscores[h, t][allowed] = leaf.grad[allowed]
            else:
                eps = 1e-6
                for j in torch.nonzero(allowed).flatten():
                    up, down = z.clone(), z.clone()
                    up[j] += eps
                    down[j] -= eps
                    dscores[h, t, j] = ((normalise(up, ALPHAS[h]) - normalise(down, ALPHAS[h])) * dout[h, t]).sum() / (
                        2 * eps)
    dalpha = torch.zeros(H)
    eps = 1e-6
    for h in range(H):
        a = ALPHAS[h]
        for t in range(T):
            z = scores[h, t]
            if a < 2.0:
                change = entmax_row_any(z, a + eps) - entmax_row_any(z, a - eps)
                dalpha[h] += (change * dout[h, t]).sum() / (2 * eps)
            else:  # alpha = 2 is the edge of (1, 2]: the difference from below
                dalpha[h] += ((probs[h, t] - entmax_row_any(z, a - eps)) * dout[h, t]).sum() / eps

    os.makedirs(OUT, exist_ok=True)
    for name, value in dict(scores=scores, alpha=alpha, dout=dout, probs=probs, dscores=dscores,
                            dalpha=dalpha).items():
        np.save(os.path.join(OUT, name + ".npy"), value.to(torch.float32).numpy())
    print("wrote", OUT)


def entmax_row_any(z, alpha):
    """alpha-entmax of one row by bisection, for any alpha (the finite differences in alpha)."""
    allowed = torch.isfinite(z)
    p = torch.zeros_like(z)
    p[allowed] = entmax_bisect(z[allowed], alpha)
    return p


if __name__ == "__main__":
    main()
