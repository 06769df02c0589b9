#!/usr/bin/python3
"""References for the sparse autoencoders (tests/tst_sparseautoencoder.cpp), from the definitions.

Encoding and decoding in NumPy, for each architecture, SAELens's layout (W_enc [d, F], W_dec [F, d]):
  pre = (x - b_dec) W_enc + b_enc (b_dec subtracted when apply_b_dec_to_input), x_hat = f W_dec + b_dec, and
  standard  f = max(pre, 0)
  topk      the k largest pre kept (a tie at the k-th value to the lower index: a stable sort of -pre), then max(., 0)
  jumprelu  f = pre * (pre > threshold)
The training objective's value and gradients by PyTorch's autograd, in float64:
  reconstruction (1/B) sum_b |x_hat_b - x_b|^2
  standard  + lam (1/B) sum_b sum_i f_bi |W_dec,i|
  jumprelu  + lam (1/B) sum_b sum_i [pre_bi > theta_i], theta = exp(log_threshold), through the straight-through
            estimator of Rajamanoharan et al. (2024) as SAELens writes it: d/dtheta of pre*[pre > theta] is
            -(theta/eps) K((pre - theta)/eps), of [pre > theta] -(1/eps) K((pre - theta)/eps), K the indicator of
            (-1/2, 1/2); pre's gradient through pre*[pre > theta] is [pre > theta].
Row 0 of the batch is b_dec itself, so that its pre-activations are b_enc, which holds a tie at TopK's k-th value.
The "auxk" cases add TopK's auxiliary loss for dead features (Gao et al. 2024, A.2) to case 1's objective:
  + alpha min(n_dead / k_aux, 1) (1/B) sum_b |e_hat_b - e_b|^2, e = x - x_hat detached, e_hat = z W_dec (no b_dec),
  z_b the ReLU of the k_aux largest pre-activations among the dead features (a tie to the lower index), at most
  n_dead of them; once with more dead features than k_aux, once with fewer.

    /usr/bin/python3 tests/tools/make_sae_reference.py

writes tests/data/sae/reference.json, and three of its cases as SAELens directories: saelens_v6_topk,
saelens_v5_topk (the same dictionary in version 5's cfg.json) and saelens_v6_jumprelu, cases 4 and 2 as SAELens
transcoders (transcoder_relu, transcoder_jumprelu) with their objectives when they predict other rows ("transcoders"),
and case 2 as Gemma Scope's
gemma_scope/params.npz (np.savez), compressed.npz (np.savez_compressed) and no_threshold.npz.
"""

import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_reference as ref  # noqa: E402  (its hand-written safetensors writer)

DATA = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "sae"))
D, F, B, K = 6, 10, 5, 3
LAMBDA, BANDWIDTH = 0.7, 0.5


def encode(arch, w, x, apply_b_dec):
    pre = ((x - w["b_dec"]) if apply_b_dec else x) @ w["W_enc"] + w["b_enc"]
    if arch == "standard":
        f = np.maximum(pre, 0)
    elif arch == "topk":
        f = np.zeros_like(pre)
        for n in range(pre.shape[0]):
            chosen = np.argsort(-pre[n], kind="stable")[:K]
            f[n, chosen] = np.maximum(pre[n, chosen], 0)
    else:
        f = pre * (pre > w["threshold"])
    return pre, f


class JumpReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, threshold):
        ctx.save_for_backward(x, threshold)
        return x * (x > threshold)

    @staticmethod
    def backward(ctx, grad):
        x, threshold = ctx.saved_tensors
        k = ((x - threshold) / BANDWIDTH).abs().lt(0.5).to(x)
        return (x > threshold) * grad, (-(threshold / BANDWIDTH) * k * grad).sum(0)


class Step(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, threshold):
        ctx.save_for_backward(x, threshold)
        return (x > threshold).to(x)

    @staticmethod
    def backward(ctx, grad):
        x, threshold = ctx.saved_tensors
        k = ((x - threshold) / BANDWIDTH).abs().lt(0.5).to(x)
        return None, (-(1.0 / BANDWIDTH) * k * grad).sum(0)


def objective(arch, w, x, apply_b_dec, y=None):
    p = {n: torch.tensor(v, dtype=torch.float64, requires_grad=True) for n, v in w.items() if n != "threshold"}
    if arch == "jumprelu":
        p["log_threshold"] = torch.tensor(np.log(w["threshold"]), dtype=torch.float64, requires_grad=True)
    xt = torch.tensor(x, dtype=torch.float64)
    pre = ((xt - p["b_dec"]) if apply_b_dec else xt) @ p["W_enc"] + p["b_enc"]
    sparsity = torch.zeros((), dtype=torch.float64)
    if arch == "standard":
        f = torch.relu(pre)
        sparsity = LAMBDA * (f * p["W_dec"].norm(dim=1)).sum(1).mean()
    elif arch == "topk":
        mask = torch.tensor(encode(arch, w, x, apply_b_dec)[1] != 0, dtype=torch.float64)
        f = torch.relu(pre) * mask
    else:
        theta = p["log_threshold"].exp()
        f = JumpReLU.apply(pre, theta)
        sparsity = LAMBDA * Step.apply(pre, theta).sum(1).mean()
    x_hat = f @ p["W_dec"] + p["b_dec"]
    target = xt if y is None else torch.tensor(y, dtype=torch.float64)
    reconstruction = (x_hat - target).pow(2).sum(1).mean()
    loss = reconstruction + sparsity
    loss.backward()
    return {"loss": loss.item(), "reconstruction": reconstruction.item(), "sparsity": sparsity.item(),
            "gradients": {n: t.grad.numpy().tolist() for n, t in p.items()}}


def auxk_case(c, dead, k_aux, alpha):
    """Case c (TopK) with AuxK over the features `dead`: its objective and gradients by autograd."""
    w = {n: np.array(v, dtype=np.float64) for n, v in c["weights"].items()}
    x = np.array(c["x"], dtype=np.float64)
    pre, f = encode("topk", w, x, c["apply_b_dec_to_input"])
    p = {n: torch.tensor(v, dtype=torch.float64, requires_grad=True) for n, v in w.items()}
    xt = torch.tensor(x, dtype=torch.float64)
    pre_t = ((xt - p["b_dec"]) if c["apply_b_dec_to_input"] else xt) @ p["W_enc"] + p["b_enc"]
    f_t = torch.relu(pre_t) * torch.tensor(f != 0, dtype=torch.float64)
    x_hat = f_t @ p["W_dec"] + p["b_dec"]
    reconstruction = (x_hat - xt).pow(2).sum(1).mean()
    used = min(k_aux, len(dead))
    chosen = np.zeros_like(pre)
    for n in range(pre.shape[0]):
        order = np.argsort(-pre[n, dead], kind="stable")[:used]
        chosen[n, np.array(dead)[order]] = 1
    z = torch.relu(pre_t) * torch.tensor(chosen)
    e = (xt - x_hat).detach()
    auxiliary = alpha * min(len(dead) / k_aux, 1.0) * (z @ p["W_dec"] - e).pow(2).sum(1).mean()
    loss = reconstruction + auxiliary
    loss.backward()
    return {"case": 1, "dead": dead, "k_aux": k_aux, "alpha": alpha, "loss": loss.item(),
            "reconstruction": reconstruction.item(), "auxiliary": auxiliary.item(),
            "gradients": {n: t.grad.numpy().tolist() for n, t in p.items()}}


def transcoder_case(c, seed):
    """Case c read as a transcoder: its objective and gradients by autograd when it predicts rows y (another draw)
    from its rows x, y in place of x in the reconstruction."""
    assert not c["apply_b_dec_to_input"]
    w = {n: np.array(v, dtype=np.float64) for n, v in c["weights"].items()}
    y = np.random.default_rng(seed).normal(0, 1, (B, D)).astype(np.float32)
    out = {"case": c["index"], "y": y.tolist()}
    out.update(objective(c["architecture"], w, np.array(c["x"], dtype=np.float64), False, y.astype(np.float64)))
    return out


def case(arch, seed, apply_b_dec):
    rng = np.random.default_rng(seed)
    w = {"W_enc": rng.normal(0, 0.5, (D, F)).astype(np.float32), "b_enc": rng.normal(0, 0.2, F).astype(np.float32),
         "W_dec": rng.normal(0, 0.5, (F, D)).astype(np.float32), "b_dec": rng.normal(0, 0.3, D).astype(np.float32)}
    w["b_enc"][[1, 4, 7, 8]] = [0.9, 0.6, 0.4, 0.4]  # row 0's pre: TopK keeps 1, 4 and 7 (the tie's lower index), not 8
    w["b_enc"][[0, 2, 3, 5, 6, 9]] = np.minimum(w["b_enc"][[0, 2, 3, 5, 6, 9]], 0.3)
    if arch == "jumprelu":
        w["threshold"] = rng.uniform(0.05, 0.4, F).astype(np.float32)
    x = rng.normal(0, 1, (B, D)).astype(np.float32)
    x[0] = w["b_dec"] if apply_b_dec else 0
    w64 = {n: v.astype(np.float64) for n, v in w.items()}
    pre, f = encode(arch, w64, x.astype(np.float64), apply_b_dec)
    x_hat = f @ w64["W_dec"] + w64["b_dec"]
    out = {"architecture": arch, "k": K, "apply_b_dec_to_input": apply_b_dec, "lambda": LAMBDA,
           "bandwidth": BANDWIDTH, "weights": {n: v.tolist() for n, v in w.items()}, "x": x.tolist(),
           "pre": pre.tolist(), "f": f.tolist(), "x_hat": x_hat.tolist()}
    out.update(objective(arch, w64, x.astype(np.float64), apply_b_dec))
    return out


def write_saelens(directory, c, version):
    """The case as SAELens saves a dictionary: cfg.json in version 6's form (the hook under "meta", TopK's k beside
    the architecture) or version 5's (a top-level hook_name; TopK as activation_fn_str "topk" with its k in
    activation_fn_kwargs), and sae_weights.safetensors."""
    os.makedirs(directory, exist_ok=True)
    arch = c["architecture"]
    cfg = {"d_in": D, "d_sae": F, "dtype": "float32", "device": "cpu",
           "apply_b_dec_to_input": c["apply_b_dec_to_input"], "normalize_activations": "none"}
    if version == 6:
        cfg.update({"architecture": arch, "reshape_activations": "none",
                    "meta": {"model_name": "llama_tiny", "hook_name": "blocks.1.hook_resid_post", "hook_layer": 1}})
        if arch == "topk":
            cfg["k"] = K
    else:
        cfg.update({"architecture": "standard" if arch == "topk" else arch, "model_name": "llama_tiny",
                    "hook_name": "blocks.0.hook_mlp_out", "hook_layer": 0,
                    "activation_fn_str": "topk" if arch == "topk" else "relu",
                    "activation_fn_kwargs": {"k": K} if arch == "topk" else {}})
    with open(os.path.join(directory, "cfg.json"), "w") as f:
        json.dump(cfg, f, indent=2)
        f.write("\n")
    ref.write_safetensors(os.path.join(directory, "sae_weights.safetensors"),
                          {n: np.array(v, dtype=np.float32) for n, v in c["weights"].items()})


def write_transcoder(directory, c):
    """The case as SAELens saves a transcoder (sae_lens/saes/transcoder.py): "architecture" "transcoder" (ReLU) or
    "jumprelu_transcoder", reading blocks.1.ln2.hook_normalized and writing blocks.1.hook_mlp_out, d_out beside d_in;
    its input is never shifted by b_dec, so the case must not shift it either."""
    assert not c["apply_b_dec_to_input"]
    os.makedirs(directory, exist_ok=True)
    arch = {"standard": "transcoder", "jumprelu": "jumprelu_transcoder"}[c["architecture"]]
    cfg = {"architecture": arch, "d_in": D, "d_sae": F, "d_out": D, "dtype": "float32", "device": "cpu",
           "apply_b_dec_to_input": False, "normalize_activations": "none", "reshape_activations": "none",
           "hook_name_out": "blocks.1.hook_mlp_out", "hook_layer_out": 1,
           "metadata": {"model_name": "llama_tiny"},
           "meta": {"model_name": "llama_tiny", "hook_name": "blocks.1.ln2.hook_normalized", "hook_layer": 1}}
    with open(os.path.join(directory, "cfg.json"), "w") as f:
        json.dump(cfg, f, indent=2)
        f.write("\n")
    ref.write_safetensors(os.path.join(directory, "sae_weights.safetensors"),
                          {n: np.array(v, dtype=np.float32) for n, v in c["weights"].items()})


def main():
    os.makedirs(DATA, exist_ok=True)
    cases = [case("standard", 1, True), case("topk", 2, True), case("jumprelu", 3, False), case("jumprelu", 4, True),
             case("standard", 5, False)]
    write_saelens(os.path.join(DATA, "saelens_v6_topk"), cases[1], 6)
    write_saelens(os.path.join(DATA, "saelens_v5_topk"), cases[1], 5)
    write_saelens(os.path.join(DATA, "saelens_v6_jumprelu"), cases[3], 6)
    write_transcoder(os.path.join(DATA, "transcoder_relu"), cases[4])
    write_transcoder(os.path.join(DATA, "transcoder_jumprelu"), cases[2])
    # Gemma Scope's params.npz (np.savez: stored members), for case 2 (JumpReLU reading x itself), and the same
    # compressed, which the app refuses
    params = {n: np.array(v, dtype=np.float32) for n, v in cases[2]["weights"].items()}
    os.makedirs(os.path.join(DATA, "gemma_scope"), exist_ok=True)
    np.savez(os.path.join(DATA, "gemma_scope", "params.npz"), **params)
    np.savez_compressed(os.path.join(DATA, "gemma_scope", "compressed.npz"), **params)
    np.savez(os.path.join(DATA, "gemma_scope", "no_threshold.npz"), **{n: v for n, v in params.items() if n != "threshold"})
    path = os.path.join(DATA, "reference.json")
    with open(path, "w") as f:
        for i, c in enumerate(cases):
            c["index"] = i
        transcoders = [transcoder_case(cases[4], 6), transcoder_case(cases[2], 7)]
        for c in cases:
            del c["index"]
        json.dump({"cases": cases, "auxk": [auxk_case(cases[1], [0, 2, 5, 6, 9], 3, 0.5),
                                            auxk_case(cases[1], [3, 8], 3, 0.5)],
                   "transcoders": transcoders}, f, indent=1)
        f.write("\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
