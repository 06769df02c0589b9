#pragma once

#include "attention/attentionkernel.h"
#include "engine/headablation.h"
#include "engine/tokenretention.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace atlas {

// What the engine runs on: token ids, which positions are padding (no query attends to a padding key), and
// which attention kernel each layer uses, and which heads are switched off.
struct Input
{
    std::vector<int> tokens; // what the model reads and predicts from; an encoder–decoder's decoder input
    std::vector<int> padding; // positions, each in [0, tokens.size())
    // Per layer; empty = exact softmax attention everywhere; a single entry applies to every layer.
    std::vector<attention::AttentionKernelSpec> attention;
    HeadAblation ablation; // heads switched off in the merge (none by default)
    // An encoder–decoder's source, read by its encoder (empty for a model with one stack), and the source's
    // padding positions, which neither the encoder's self-attention nor the decoder's cross-attention attends.
    std::vector<int> source;
    std::vector<int> sourcePadding;
    // LayerDrop (Fan et al. 2019): blocks left out of this run, ascending. A dropped block passes its input stream
    // on unchanged (layer.{i}.out = its input), in training (each step drops each block with probability p) and at
    // inference (a model pruned to fewer blocks). One stack, not reversible (Program::build checks).
    std::vector<int> droppedLayers;
    // PoWER-BERT: tokens eliminated layer by layer by the attention they receive (engine/tokenretention.h); empty:
    // every token goes through every layer.
    TokenRetention retention;
    // Sparse Sinkhorn attention in training: the seed of the Gumbel noise added to each layer's sorting scores (layer i
    // draws from seed + i); 0: none, as at inference (model/sinkhorn.h).
    uint64_t sortingNoiseSeed = 0;
    // Sparse Sinkhorn attention with the sort switched off: every block's sorted half is the block itself (S = I), so
    // each query reads its own block only. What the learned sort adds is the difference.
    bool sortSwitchedOff = false;

    bool drops(int layer) const { return std::binary_search(droppedLayers.begin(), droppedLayers.end(), layer); }

    const attention::AttentionKernelSpec *kernelFor(int layer) const
    {
        if (attention.empty())
            return nullptr;
        const auto &spec = attention.size() == 1 ? attention.front() : attention.at(size_t(layer));
        return attention::isExactAttention(spec) ? nullptr : &spec;
    }
};

} // namespace atlas
