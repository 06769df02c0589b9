#!/usr/bin/python3
"""Independent PyTorch reference for Transformer Atlas's encoder-decoder (tests/tst_seq2seq.cpp).

This script shares no code with the C++ engine, and only the file writing of make_reference.py. Its attention is
PyTorch's own torch.nn.MultiheadAttention, loaded with the model's weights (Conv1D y = x W + b becomes Linear's W^T):
  - the encoder's self-attention: bidirectional, key_padding_mask = the source's padding;
  - the decoder's self-attention: attn_mask = the causal mask;
  - the decoder's cross-attention: queries from the decoder (LN_c of the stream), keys and values from the
    encoder's output Z (its ln_f), key_padding_mask = the source's padding, as Hugging Face GPT-2 with
    add_cross_attention (q_attn [D, D], c_attn [D, 2D] = K | V, c_proj).
Pre-LN blocks, learned positions shared by both stacks (each stack counts from 0), tanh GELU, logits tied to wte.
Autograd differentiates the mean cross-entropy F.cross_entropy(logits, targets, ignore_index=-1). Everything
runs in float64 from float32 weights and is saved as float32.

Run it with Debian's interpreter, which has python3-torch and numpy:

    /usr/bin/python3 tests/tools/make_seq2seq_reference.py

It is deterministic and rewrites, under tests/data/:
  seq2seq_tiny/      config.json + model.safetensors: 2 encoder and 2 decoder blocks, 2 heads, width 16
  seq2seq_tiny_ref/  input.json {"source", "source_padding", "tokens", "targets"}; <trace name>.npy for the
                     tensors listed in TRACED; loss.npy; grad.<parameter>.npy for every parameter
"""

import json
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_reference as ref  # noqa: E402  (file writing only)

DATA = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data"))

CFG = dict(enc_layers=2, dec_layers=2, heads=2, D=16, vocab=30, context=12)
SOURCE = [4, 9, 2, 7, 11, 0, 0]
SOURCE_PADDING = [5, 6]
TOKENS = [1, 7, 2, 9, 4, 7]  # the decoder's input; 7 twice makes the embedding's scatter-add accumulate
TARGETS = [7, 2, 9, 4, -1, 3]

def save_npy(path, t):
    np.save(path, t.detach().numpy().astype(np.float32).copy(order="C"))
    ref.written.append(path)


def parameters(seed):
    """Every parameter under its safetensors name, std 0.3 so that attention is far from uniform."""
    g = torch.Generator().manual_seed(seed)
    D, V, P = CFG["D"], CFG["vocab"], CFG["context"]
    shapes = {"wte.weight": (V, D), "wpe.weight": (P, D), "ln_f.weight": (D,), "ln_f.bias": (D,),
              "encoder.ln_f.weight": (D,), "encoder.ln_f.bias": (D,)}

    def block(prefix, cross):
        shapes.update({prefix + "ln_1.weight": (D,), prefix + "ln_1.bias": (D,),
                       prefix + "attn.c_attn.weight": (D, 3 * D), prefix + "attn.c_attn.bias": (3 * D,),
                       prefix + "attn.c_proj.weight": (D, D), prefix + "attn.c_proj.bias": (D,),
                       prefix + "ln_2.weight": (D,), prefix + "ln_2.bias": (D,),
                       prefix + "mlp.c_fc.weight": (D, 4 * D), prefix + "mlp.c_fc.bias": (4 * D,),
                       prefix + "mlp.c_proj.weight": (4 * D, D), prefix + "mlp.c_proj.bias": (D,)})
        if cross:
            c = prefix + "crossattention."
            shapes.update({prefix + "ln_cross_attn.weight": (D,), prefix + "ln_cross_attn.bias": (D,),
                           c + "q_attn.weight": (D, D), c + "q_attn.bias": (D,),
                           c + "c_attn.weight": (D, 2 * D), c + "c_attn.bias": (2 * D,),
                           c + "c_proj.weight": (D, D), c + "c_proj.bias": (D,)})

    for i in range(CFG["enc_layers"]):
        block(f"encoder.h.{i}.", False)
    for i in range(CFG["dec_layers"]):
        block(f"h.{i}.", True)
    out = {}
    for name in sorted(shapes):
        t = torch.randn(shapes[name], generator=g, dtype=torch.float32) * 0.3
        if name.split(".")[-2].startswith("ln_") and name.endswith("weight"):
            t = 1.0 + t  # LayerNorm gains around 1
        out[name] = t
    return out


def multihead(w, prefix, D, H, kv_from_separate):
    """torch.nn.MultiheadAttention holding the Conv1D weights of one attention sub-layer (float64)."""
    mha = torch.nn.MultiheadAttention(D, H, bias=True, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        if kv_from_separate:  # cross-attention: q_attn, then c_attn = K | V
            in_w = torch.cat([w[prefix + "q_attn.weight"], w[prefix + "c_attn.weight"]], dim=1)
            in_b = torch.cat([w[prefix + "q_attn.bias"], w[prefix + "c_attn.bias"]])
        else:
            in_w, in_b = w[prefix + "c_attn.weight"], w[prefix + "c_attn.bias"]
        mha.in_proj_weight.copy_(in_w.T)
        mha.in_proj_bias.copy_(in_b)
        mha.out_proj.weight.copy_(w[prefix + "c_proj.weight"].T)
        mha.out_proj.bias.copy_(w[prefix + "c_proj.bias"])
    return mha


def attend(w, prefix, query, keys, key_padding, causal, cross):
    """One attention sub-layer through nn.MultiheadAttention, whose parameters are views of w (so autograd reaches
    w): functional form, which takes the weights as tensors."""
    D, H = CFG["D"], CFG["heads"]
    if cross:
        in_w = torch.cat([w[prefix + "q_attn.weight"], w[prefix + "c_attn.weight"]], dim=1)
        in_b = torch.cat([w[prefix + "q_attn.bias"], w[prefix + "c_attn.bias"]])
    else:
        in_w, in_b = w[prefix + "c_attn.weight"], w[prefix + "c_attn.bias"]
    T, S = query.shape[0], keys.shape[0]
    mask = torch.triu(torch.ones(T, S, dtype=torch.bool), diagonal=1) if causal else None
    pad = torch.zeros(1, S, dtype=torch.bool)
    for j in key_padding:
        pad[0, j] = True
    out, probs = F.multi_head_attention_forward(
        query.unsqueeze(1), keys.unsqueeze(1), keys.unsqueeze(1), D, H, in_w.T, in_b, None, None, False, 0.0,
        w[prefix + "c_proj.weight"].T, w[prefix + "c_proj.bias"], training=False, key_padding_mask=pad,
        need_weights=True, attn_mask=mask, average_attn_weights=False)
    return out.squeeze(1), probs.squeeze(0)  # (T, D), (H, T, S)


def check_against_module(w, prefix, query, keys, key_padding, causal, cross, out, probs):
    """The functional call above must agree with an nn.MultiheadAttention module loaded with the same weights."""
    mha = multihead({k: v.detach() for k, v in w.items()}, prefix, CFG["D"], CFG["heads"], cross)
    T, S = query.shape[0], keys.shape[0]
    mask = torch.triu(torch.ones(T, S, dtype=torch.bool), diagonal=1) if causal else None
    pad = torch.zeros(1, S, dtype=torch.bool)
    for j in key_padding:
        pad[0, j] = True
    with torch.no_grad():
        o, p = mha(query.detach().unsqueeze(0), keys.detach().unsqueeze(0), keys.detach().unsqueeze(0),
                   key_padding_mask=pad, attn_mask=mask, need_weights=True, average_attn_weights=False)
    assert torch.allclose(o.squeeze(0), out.detach(), atol=1e-12), prefix
    assert torch.allclose(p.squeeze(0), probs.detach(), atol=1e-12), prefix


def layer_norm(x, w, name):
    return F.layer_norm(x, (x.shape[-1],), w[name + ".weight"], w[name + ".bias"], eps=1e-5)


def forward(w):
    trace = {}
    D, H = CFG["D"], CFG["heads"]

    def embed(stack, ids):
        x = w["wte.weight"][torch.tensor(ids)] + w["wpe.weight"][: len(ids)]
        trace[stack + "input"] = x
        return x

    def block(stack, prefix, i, x, self_padding, causal, z=None):
        p = f"{stack}layer.{i}."
        ln1 = layer_norm(x, w, prefix + "ln_1")
        o, probs = attend(w, prefix + "attn.", ln1, ln1, self_padding, causal, False)
        check_against_module(w, prefix + "attn.", ln1, ln1, self_padding, causal, False, o, probs)
        trace[p + "attn.probs"] = probs
        x = x + o
        trace[p + "mid"] = x
        if z is not None:
            lnc = layer_norm(x, w, prefix + "ln_cross_attn")
            c = prefix + "crossattention."
            o, probs = attend(w, c, lnc, z, SOURCE_PADDING, False, True)
            check_against_module(w, c, lnc, z, SOURCE_PADDING, False, True, o, probs)
            T, S, d = lnc.shape[0], z.shape[0], D // H
            trace[p + "cross.q"] = (lnc @ w[c + "q_attn.weight"] + w[c + "q_attn.bias"]).reshape(T, H, d).transpose(0, 1)
            kv = z @ w[c + "c_attn.weight"] + w[c + "c_attn.bias"]
            trace[p + "cross.k"] = kv[:, :D].reshape(S, H, d).transpose(0, 1)
            trace[p + "cross.v"] = kv[:, D:].reshape(S, H, d).transpose(0, 1)
            trace[p + "cross.probs"] = probs
            x = x + o
            trace[p + "mid_cross"] = x
        ln2 = layer_norm(x, w, prefix + "ln_2")
        up = ln2 @ w[prefix + "mlp.c_fc.weight"] + w[prefix + "mlp.c_fc.bias"]
        x = x + F.gelu(up, approximate="tanh") @ w[prefix + "mlp.c_proj.weight"] + w[prefix + "mlp.c_proj.bias"]
        trace[p + "out"] = x
        return x

    x = embed("enc.", SOURCE)
    for i in range(CFG["enc_layers"]):
        x = block("enc.", f"encoder.h.{i}.", i, x, SOURCE_PADDING, False)
    z = layer_norm(x, w, "encoder.ln_f")
    trace["enc.ln_f"] = z
    y = embed("dec.", TOKENS)
    for i in range(CFG["dec_layers"]):
        y = block("dec.", f"h.{i}.", i, y, [], True, z)
    trace["ln_f"] = layer_norm(y, w, "ln_f")
    trace["logits"] = trace["ln_f"] @ w["wte.weight"].T
    trace["next_probs"] = torch.softmax(trace["logits"], dim=-1)
    return trace


def config_json():
    return {
        "architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_layer": CFG["dec_layers"],
        "n_head": CFG["heads"], "n_embd": CFG["D"], "n_inner": None, "n_positions": CFG["context"],
        "n_ctx": CFG["context"], "vocab_size": CFG["vocab"], "layer_norm_epsilon": 1e-5,
        "activation_function": "gelu_new", "add_cross_attention": True,
        "atlas_architecture": "encoder-decoder", "atlas_encoder_layers": CFG["enc_layers"],
    }


def main():
    torch.manual_seed(0)
    weights = parameters(seed=2468)
    model = os.path.join(DATA, "seq2seq_tiny")
    os.makedirs(model, exist_ok=True)
    ref.write_text(os.path.join(model, "config.json"), json.dumps(config_json(), indent=2) + "\n")
    ref.write_safetensors(os.path.join(model, "model.safetensors"), {k: v.numpy() for k, v in weights.items()})

    w = {k: v.to(torch.float64).requires_grad_(True) for k, v in weights.items()}
    trace = forward(w)
    loss = F.cross_entropy(trace["logits"], torch.tensor(TARGETS), ignore_index=-1)
    loss.backward()

    out = os.path.join(DATA, "seq2seq_tiny_ref")
    ref.fresh_dir(out)
    ref.write_text(os.path.join(out, "input.json"), json.dumps(
        {"source": SOURCE, "source_padding": SOURCE_PADDING, "tokens": TOKENS, "targets": TARGETS}) + "\n")
    for name, t in trace.items():
        save_npy(os.path.join(out, name + ".npy"), t)
    save_npy(os.path.join(out, "loss.npy"), loss)
    for name, t in w.items():
        save_npy(os.path.join(out, "grad." + name + ".npy"), t.grad)
    total = sum(os.path.getsize(p) for p in ref.written)
    print(f"{total} bytes in {len(ref.written)} files under {DATA}")


if __name__ == "__main__":
    main()
