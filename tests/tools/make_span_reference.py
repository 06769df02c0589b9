#!/usr/bin/python3
"""Independent reference for adaptive attention span (tests/tst_adaptivespan.cpp, src/core/ops/adaptivespan.cpp).

Written from Sukhbaatar et al. 2019 ("Adaptive Attention Span in Transformers"), section 3.1, in float64 with PyTorch:
the soft mask m_z(x) = clamp((R + z - x) / R, 0, 1) of a head with span z at distance x = i - j, and the weights
a_ij = m_z(i - j) exp(s_ij) / sum_k m_z(i - k) exp(s_ik) (eq. 3; the authors' code takes softmax, multiplies by the
mask and renormalises, the same quantity; it adds 1e-8 to the denominator, which is left out here as in the paper).
Keys after the query are masked (-inf), as in a causal model. Gradients with respect to the scores and to each head's
span by autograd; the spans are not whole numbers, so no cell sits on a corner of the clamp.

Run with Debian's interpreter (python3-torch, numpy):

    /usr/bin/python3 tests/tools/make_span_reference.py

It is deterministic and rewrites tests/data/span/: scores.npy (H,T,T) with -inf above the diagonal, spans.npy (H,),
ramp.npy (1,), dout.npy (H,T,T), mask.npy, probs.npy, dscores.npy (H,T,T) and dspans.npy (H,).
"""

import os

import numpy as np
import torch

OUT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "span"))
SPANS = [0.4, 2.7, 5.3]
RAMP = 3.0
H, T = len(SPANS), 9


def main():
    torch.manual_seed(11)
    scores = (torch.randn(H, T, T, dtype=torch.float64) * 1.5).float().double()
    causal = torch.ones(T, T, dtype=torch.bool).tril()
    scores = scores.masked_fill(~causal, float("-inf")).requires_grad_(True)
    spans = torch.tensor(SPANS, dtype=torch.float64, requires_grad=True)
    distance = (torch.arange(T).view(T, 1) - torch.arange(T).view(1, T)).double()  # x = i - j
    mask = torch.clamp((RAMP + spans.view(H, 1, 1) - distance) / RAMP, 0, 1) * causal
    weighted = mask * torch.exp(scores - scores.max(dim=-1, keepdim=True).values)
    probs = weighted / weighted.sum(dim=-1, keepdim=True)
    dout = torch.randn(H, T, T, dtype=torch.float64).float().double()
    dscores, dspans = torch.autograd.grad((probs * dout).sum(), (scores, spans))
    os.makedirs(OUT, exist_ok=True)
    arrays = {"scores": scores.detach(), "spans": spans.detach(), "ramp": torch.tensor([RAMP]), "dout": dout,
              "mask": mask.detach(), "probs": probs.detach(),
              "dscores": torch.nan_to_num(dscores, nan=0.0), "dspans": dspans}
    for name, value in arrays.items():
        np.save(os.path.join(OUT, name + ".npy"), value.numpy().astype(np.float32))


if __name__ == "__main__":
    main()
