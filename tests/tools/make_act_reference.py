#!/usr/bin/python3
"""Independent reference for adaptive computation time over a model's blocks (src/core/ops/adaptivecomputation.cpp,
tests/tst_adaptivecomputation.cpp).

Written from Graves 2016 ("Adaptive Computation Time for Recurrent Neural Networks"), section 2, in float64 with
PyTorch: the halting unit h_n = sigmoid(w . s_n + b) on the state after step n (eq. 6), the halting step
N = min{n : sum_{m<=n} h_m >= 1 - eps}, capped at the last step (eq. 8), the remainder R = 1 - sum_{n<N} h_n (eq. 9),
the halting probabilities p_n = R at N and h_n before it (eq. 10), the output y = sum_n p_n s_n (eq. 11) and the
ponder time rho = N + R (eq. 12). Here the steps are a model's blocks, each state a block's output, as the Universal
Transformer halts (Dehghani et al. 2019). N is found in float64 and then held fixed, as in the paper, so autograd's
gradients flow through R and the h before N but not through N; the loss is sum(y * dout) + tau * mean_t rho_t.

Run with Debian's interpreter (python3-torch, numpy):

    /usr/bin/python3 tests/tools/make_act_reference.py

It is deterministic and rewrites tests/data/act/: states.npy (L,T,D), w.npy (1,D), b.npy (1,), epsilon.npy (1,),
tau.npy (1,), dout.npy (T,D), halting.npy (T,L), weights.npy (T,L), steps.npy (T,), ponder.npy (T,), out.npy (T,D),
dstates.npy (L,T,D), dw.npy (1,D) and db.npy (1,).
"""

import os

import numpy as np
import torch

OUT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "act"))
L, T, D = 5, 12, 8
EPSILON, TAU = 0.01, 0.05


def main():
    torch.manual_seed(5)
    # Streams whose halting values spread over (0, 1): some tokens halt after one or two blocks, some run all five.
    states = (torch.randn(L, T, D, dtype=torch.float64) * 0.8).float().double().requires_grad_(True)
    w = (torch.randn(1, D, dtype=torch.float64) * 0.6).float().double().requires_grad_(True)
    b = torch.tensor([-0.4], dtype=torch.float64).float().double().requires_grad_(True)
    dout = torch.randn(T, D, dtype=torch.float64).float().double()
    halting = torch.sigmoid(states @ w.view(D) + b)  # (L,T)
    halting_t = halting.t()  # (T,L)
    weights, steps, ponder, out = [], [], [], []
    for t in range(T):
        h = halting_t[t]
        n, total = 0, 0.0
        while n < L - 1 and total + float(h[n]) < 1 - EPSILON:
            total += float(h[n])
            n += 1
        margin = abs(float(h[: n + 1].sum()) - (1 - EPSILON))
        assert margin > 1e-3, "token %d sits on the threshold: pick another seed" % t
        remainder = 1 - h[:n].sum()
        p = torch.cat([h[:n], remainder.view(1), torch.zeros(L - n - 1, dtype=torch.float64)])
        weights.append(p)
        steps.append(n + 1)
        ponder.append(n + 1 + remainder)
        out.append((p.view(L, 1) * states[:, t, :]).sum(0))
    weights, ponder, out = torch.stack(weights), torch.stack(ponder), torch.stack(out)
    assert len(set(steps)) >= 3, "the tokens should halt after different blocks"
    loss = (out * dout).sum() + TAU * ponder.mean()
    dstates, dw, db = torch.autograd.grad(loss, (states, w, b))
    os.makedirs(OUT, exist_ok=True)
    arrays = {"states": states.detach(), "w": w.detach(), "b": b.detach(), "epsilon": torch.tensor([EPSILON]),
              "tau": torch.tensor([TAU]), "dout": dout, "halting": halting_t.detach(), "weights": weights.detach(),
              "steps": torch.tensor(steps, dtype=torch.float64), "ponder": ponder.detach(), "out": out.detach(),
              "dstates": dstates, "dw": dw, "db": db}
    for name, value in arrays.items():
        np.save(os.path.join(OUT, name + ".npy"), np.ascontiguousarray(value.numpy().astype(np.float32)))
    print("steps per token:", steps)


if __name__ == "__main__":
    main()
