#!/usr/bin/python3
"""PyTorch references for the logit lens (tests/tst_logitlens.cpp), from its definition (nostalgebraist 2020).

The lens reads the residual stream after each block as if the model ended there: row 0 the embedding the first block
reads, row i the stream after block i, each through the model's final norm and unembedding. The final norm is
applied to every stream, the last included: Hugging Face's hidden_states[-1] is already normalised for GPT-2 and
Llama, so the lens reads the stream before it, as nostalgebraist's and TransformerLens's do, and its last row equals
the model's logits. Each family's head is written here from its modeling file:
  - llama, mistral, qwen2: lm_head(RMSNorm(h)) (the embedding when tied);
  - gpt_neox: embed_out(final_layer_norm(h));
  - bert: BertLMPredictionHead, LayerNorm(gelu(dense(h))) @ word_embeddings^T + bias;
  - t5 (the decoder's stack): lm_head(final_layer_norm(h)), times d_model^-0.5 first when tied to `shared`.
The streams come from the independent forwards of make_family_reference.py (same weights, same input), and the
logits are computed in float64 and saved as float32.

    /usr/bin/python3 tests/tools/make_lens_reference.py

writes tests/data/lens/<model>/lens.<row>.logits.npy for llama_tiny, neox_tiny, bert_mlm_tiny and t5_tiny.
"""

import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_family_reference as fam  # noqa: E402

LENS = os.path.join(fam.DATA, "lens")


def head(cfg, w, h):
    kind = cfg["model_type"]
    if kind in ("llama", "mistral", "qwen2", "mixtral"):
        out = w["model.embed_tokens.weight"] if cfg["tie_word_embeddings"] else w["lm_head.weight"]
        return fam.rms_norm(h, w["model.norm.weight"], cfg["rms_norm_eps"]) @ out.T
    if kind == "gpt_neox":
        return fam.layer_norm(h, w, "gpt_neox.final_layer_norm", cfg["layer_norm_eps"]) @ w["embed_out.weight"].T
    if kind == "bert":
        eps = cfg["layer_norm_eps"]
        dense = h @ w["cls.predictions.transform.dense.weight"].T + w["cls.predictions.transform.dense.bias"]
        normed = fam.layer_norm(torch.nn.functional.gelu(dense), w, "cls.predictions.transform.LayerNorm", eps)
        return normed @ w["bert.embeddings.word_embeddings.weight"].T + w["cls.predictions.bias"]
    if kind == "t5":
        normed = fam.rms_norm(h, w["decoder.final_layer_norm.weight"], cfg["layer_norm_epsilon"])
        if cfg["tie_word_embeddings"]:
            return (normed * cfg["d_model"] ** -0.5) @ w["shared.weight"].T
        return normed @ w["lm_head.weight"].T
    raise ValueError(kind)


def make(name):
    spec = fam.MODELS[name]
    cfg = spec["config"]
    kind = cfg["model_type"]
    if kind == "bert":
        weights = fam.bert_weights(cfg, spec["seed"], spec["nsp"])
    elif kind == "t5":
        weights = fam.t5_weights(cfg, spec["seed"])
    else:
        weights = fam.random_weights(cfg, spec["seed"])
    w = {n: fam.stored_bytes(t, spec["dtype"])[1] for n, t in weights.items()}
    if kind == "t5":
        trace, prefix, layers = fam.t5_forward(w, cfg, fam.T5_SOURCE, fam.T5_DECODER), "dec.", cfg["num_decoder_layers"]
    else:
        trace, prefix, layers = fam.forward(w, cfg, fam.TOKENS), "", cfg["num_hidden_layers"]
    directory = os.path.join(LENS, name)
    fam.fresh_dir(directory)
    for row in range(layers + 1):
        stream = trace[prefix + ("input" if row == 0 else f"layer.{row - 1}.out")]
        logits = head(cfg, w, stream.to(torch.float64))
        np.save(os.path.join(directory, f"lens.{row}.logits.npy"), logits.to(torch.float32).numpy().copy(order="C"))
    # The last row is the model's own logits, computed by the forward's own head.
    assert torch.allclose(head(cfg, w, trace[prefix + f"layer.{layers - 1}.out"]), trace["logits"], atol=1e-9)


def main():
    torch.set_grad_enabled(False)
    for name in ("llama_tiny", "neox_tiny", "bert_mlm_tiny", "t5_tiny"):
        make(name)
    print(f"wrote lens references under {LENS}")


if __name__ == "__main__":
    main()
