#!/usr/bin/python3
"""Independent reference for FNet's token mixing (src/core/ops/fourier.cpp, tests/tst_fnet.cpp).

Written from Hugging Face's FNetBasicFourierTransform, which computes torch.fft.fftn(hidden_states, dim=(1, 2)).real
(Lee-Thorp et al. 2021, "FNet: Mixing Tokens with Fourier Transforms", eq. 3: Y = Re(F_seq(F_hidden(X)))), in float64
with PyTorch's FFT, not with the DFT matrices the program multiplies by. Two cases: T = N, the transform exactly as
Hugging Face's; and T < N, the program's convention for a text shorter than the model's context: the input padded
with zero rows to N positions (torch.fft.fftn's `s`), the first T rows of the real part kept. The gradient is
autograd's of sum(Y * dout).

Run with Debian's interpreter (python3-torch, numpy):

    /usr/bin/python3 tests/tools/make_fnet_reference.py

It is deterministic and rewrites tests/data/fnet/: for each case C in {full, padded}: C_x.npy (T,D), C_length.npy
(1,), C_y.npy (T,D), C_dout.npy (T,D), C_dx.npy (T,D).
"""

import os

import numpy as np
import torch

OUT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "fnet"))
CASES = {"full": (12, 12, 8), "padded": (9, 16, 6)}  # name: (T, N, D)


def main():
    torch.manual_seed(3)
    os.makedirs(OUT, exist_ok=True)
    for name, (tokens, length, width) in CASES.items():
        # Values a float32 holds exactly, so that the program reads what the reference computed from.
        x = torch.randn(tokens, width, dtype=torch.float64).float().double().requires_grad_(True)
        dout = torch.randn(tokens, width, dtype=torch.float64).float().double()
        y = torch.fft.fftn(x, s=(length, width), dim=(0, 1)).real[:tokens]
        (dx,) = torch.autograd.grad((y * dout).sum(), (x,))
        arrays = {"x": x.detach(), "length": torch.tensor([float(length)]), "y": y.detach(), "dout": dout, "dx": dx}
        for key, value in arrays.items():
            np.save(os.path.join(OUT, name + "_" + key + ".npy"),
                    np.ascontiguousarray(value.numpy().astype(np.float32)))
    print("wrote", OUT)


if __name__ == "__main__":
    main()
