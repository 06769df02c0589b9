#pragma once

// Internal to the core (tests/tools/check_layers.py): how llama.cpp's converters lay a Hugging Face tensor out in a
// GGUF file, for the reader and the writer (model/ggufmodel.h).

#include "model/modelconfig.h"
#include "tensor/tensor.h"

#include <string>

namespace atlas {

enum class GgufDirection { FromGguf, ToGguf };

// Parameter tensor `t` of the GGUF tensor `key`, in a model of `c` stored as llama.cpp's `architecture`, moved from
// the file's layout to the model's (FromGguf) or back (ToGguf). The model holds every matrix as [out, in], as GGUF does
// (a GPT-2 checkpoint's Conv1D matrices are transposed at load, model/parameterlist.h); what differs is:
// - llama's and smollm3's attn_q and attn_k (weights and biases): LlamaModel.permute reorders each head's rows so that
//   RoPE turns adjacent pairs; GGUF row h·d + 2i + s holds Hugging Face row h·d + s·d/2 + i;
// - gptneox's attn_qkv: regrouped from [q_h k_h v_h] per head into [all q; all k; all v]; a GPT-2 layout with RoPE
//   written as gptneox keeps its [all q; all k; all v], and with RoPE on adjacent pairs each head's q and k rows are
//   regrouped for NeoX's rotation of halves: GGUF row h·d + s·d/2 + i holds the model's row h·d + 2i + s;
// - gemma2's and gemma3's norms: the file holds 1 + w where the checkpoint holds w.
// Every other tensor is returned as it is.
Tensor ggufLayout(const ModelConfig &c, const std::string &architecture, const std::string &key, const Tensor &t,
    GgufDirection direction);

} // namespace atlas
