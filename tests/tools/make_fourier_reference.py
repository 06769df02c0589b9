#!/usr/bin/python3
"""Independent references for FNet's token mixing (src/views/fourier/fouriermixing.cpp, tst_fouriermixing).

Y is what Hugging Face's FNetBasicFourierTransform computes, torch.fft.fftn(X, dim=(positions, hidden)).real, in
float64. The share of row i that token j writes is computed from the complex numbers directly: with z_j = FFT(x_j)
over the hidden units, Y[i] = sum_j Re(F_T[i, j] z_j), F_T[i, j] = exp(-2 pi i ij/T), and the share is
|Re(F_T[i, j] z_j)| / sum_j' |Re(F_T[i, j'] z_j')| (the engine uses cosines and sines instead).

Run with Debian's interpreter (python3-torch, numpy):

    /usr/bin/python3 tests/tools/make_fourier_reference.py

It is deterministic and rewrites tests/data/fourier/: for each case NAME (odd9x6: T = 9, d = 6; even8x5: T = 8,
d = 5), NAME_x.npy [T, d], NAME_y.npy [T, d] and NAME_share.npy [T, T], all float32.
"""

import os

import numpy as np
import torch

OUT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "fourier"))


def case(name, tokens, width, seed):
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(tokens, width, generator=generator, dtype=torch.float64)
    x = x.to(torch.float32).to(torch.float64)  # the engine's input is float32
    y = torch.fft.fftn(x, dim=(0, 1)).real
    z = torch.fft.fft(x, dim=1)  # [T, d] complex: each token's transform over the hidden units
    i = torch.arange(tokens, dtype=torch.float64)
    f = torch.exp(-2j * np.pi * torch.outer(i, i) / tokens)  # F_T
    terms = (f[:, :, None] * z[None, :, :]).real  # [T, T, d]: row i's term from token j
    assert torch.allclose(terms.sum(dim=1), y, atol=1e-9)
    norms = terms.norm(dim=2)
    share = norms / norms.sum(dim=1, keepdim=True)
    for part, tensor in (("x", x), ("y", y), ("share", share)):
        np.save(os.path.join(OUT, f"{name}_{part}.npy"), tensor.numpy().astype(np.float32))


def main():
    os.makedirs(OUT, exist_ok=True)
    case("odd9x6", 9, 6, 1)
    case("even8x5", 8, 5, 2)


if __name__ == "__main__":
    main()
