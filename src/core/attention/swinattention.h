#pragma once

#include "attention/attentionresult.h"

#include <vector>

namespace atlas::attention {

struct SwinParams
{
    int window = 64; // W: positions in a window over text, or a window's side in patches over a grid
    int shift = 0; // s: every window starts s positions (over a grid: s rows and s columns) earlier
    int grid = 0; // 0: the tokens are text, one line; G > 0: a grid G patches wide, read row by row (ViT's order)
};

// Swin Transformer's windows (Liu et al. 2021, §3.2), for one head: the tokens are cut into non-overlapping windows
// and each query attends only the keys of its own window. Over text (grid 0) window w holds positions t with
// ⌊(t + s) / W⌋ = w; over a grid G patches wide, patch t = (r, c) = (⌊t / G⌋, t mod G) lies in window
// (⌊(r + s) / W⌋, ⌊(c + s) / W⌋). Swin alternates s = 0 (W-MSA) and s = ⌊W/2⌋ (SW-MSA) between layers, so that the
// shifted windows straddle the edges of the regular ones; a model runs that alternation (the kernel's `shift` in
// every odd layer, 0 in the even ones). Swin computes the shifted windows by a cyclic shift with a mask that keeps
// the pieces wrapped round from different edges apart; that is exactly these windows, the ones at the edges cut
// short. Causal: within the window, j <= i. Padding keys are masked. The work is O(T · W · d) over text and
// O(T · W² · d) over a grid. q, k, v are (T,d); result.context is (T,d); no extras.
// Throws atlas::Error naming the parameter the kernel cannot run with.
void checkSwinParams(const SwinParams &params);

// The positions of every window over T tokens, each ascending, windows in order (row by row over a grid).
std::vector<std::vector<int>> swinWindows(const SwinParams &params, int64_t T);

AttentionResult swin_attention_forward(
    ConstMatrixMap q, ConstMatrixMap k, ConstMatrixMap v, const SwinParams &params, const AttentionOptions &options);

// The shift of a model's layer: Swin's s in the odd layers, 0 in the even ones.
SwinParams swinParamsAtLayer(SwinParams params, int layer);

} // namespace atlas::attention
