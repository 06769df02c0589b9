#!/usr/bin/python3
"""Independent references for the RNN of the RNN vs attention view (src/views/recurrence/rnnreach.cpp, tst_rnnreach).

An Elman RNN, h_t = tanh(W h_{t-1} + U x_t) with h_{-1} = 0 (torch.nn.RNN's cell without biases), run in float64 on
float32-rounded weights and inputs, and the Jacobian of h_i with respect to every input x_j taken by PyTorch's
autograd (torch.autograd.functional.jacobian), not by the chain rule the engine multiplies out.

Run with Debian's interpreter (python3-torch, numpy):

    /usr/bin/python3 tests/tools/make_rnn_reference.py

It is deterministic and rewrites tests/data/rnn/: w.npy [n, n], u.npy [n, d], x.npy [T, d] (n = 6, d = 10, T = 14;
W a general matrix, not an orthogonal one, and x large enough to saturate tanh in places), states.npy [T, n] (h_t,
from torch.nn.RNN), and log10reach.npy [T], log10 of the Frobenius norm of dh_i/dx_j for i = 10 (the entries after
i are 0 in exact arithmetic and are written as NaN), all float32.
"""

import os

import numpy as np
import torch

OUT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "rnn"))
QUERY = 10


def rounded(tensor):
    return tensor.to(torch.float32).to(torch.float64)


def main():
    os.makedirs(OUT, exist_ok=True)
    generator = torch.Generator().manual_seed(7)
    n, d, tokens = 6, 10, 14
    w = rounded(torch.randn(n, n, generator=generator, dtype=torch.float64) * 0.35)
    u = rounded(torch.randn(n, d, generator=generator, dtype=torch.float64) / np.sqrt(d))
    x = rounded(torch.randn(tokens, d, generator=generator, dtype=torch.float64) * 1.5)

    rnn = torch.nn.RNN(d, n, bias=False, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        rnn.weight_ih_l0.copy_(u)
        rnn.weight_hh_l0.copy_(w)
    states, _ = rnn(x[None])
    states = states[0].detach()

    def last_state(inputs):
        out, _ = rnn(inputs[None])
        return out[0, QUERY]

    jacobian = torch.autograd.functional.jacobian(last_state, x)  # [n, T, d]
    norms = jacobian.permute(1, 0, 2).reshape(tokens, -1).norm(dim=1)
    assert torch.all(norms[QUERY + 1:] == 0)
    log10reach = torch.log10(norms)
    log10reach[QUERY + 1:] = float("nan")
    for name, tensor in (("w", w), ("u", u), ("x", x), ("states", states), ("log10reach", log10reach)):
        np.save(os.path.join(OUT, f"{name}.npy"), tensor.numpy().astype(np.float32))


if __name__ == "__main__":
    main()
