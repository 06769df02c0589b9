#include "views/patternparamlabels.h"

#include <QtGlobal>

namespace atlas {

const std::vector<PatternParamInfo> &patternParamInfo()
{
    static const std::vector<PatternParamInfo> table = {
        {"window", QT_TRANSLATE_NOOP("PatternEditorView", "Window w"),
            QT_TRANSLATE_NOOP("PatternEditorView",
                "Longformer: each query attends the w/2 keys on each side of it "
                "(causal: the w keys before it), stepping by the dilation. Swin: positions per "
                "window (over a grid, the window's side in patches)")},
        {"dilation", QT_TRANSLATE_NOOP("PatternEditorView", "Dilation δ"),
            QT_TRANSLATE_NOOP("PatternEditorView",
                "Longformer: the window takes every δ-th key (i ± δ, i ± 2δ …), so "
                "the same number of keys reaches δ times further")},
        {"block", QT_TRANSLATE_NOOP("PatternEditorView", "Block size"),
            QT_TRANSLATE_NOOP("PatternEditorView",
                "BigBird: positions per block; the pattern is made of whole "
                "(query block × key block) squares")},
        {"window_blocks", QT_TRANSLATE_NOOP("PatternEditorView", "Window blocks"),
            QT_TRANSLATE_NOOP("PatternEditorView",
                "BigBird: a query block attends its own block and (n − 1)/2 blocks "
                "on each side (n is odd)")},
        {"global_blocks", QT_TRANSLATE_NOOP("PatternEditorView", "Global blocks"),
            QT_TRANSLATE_NOOP("PatternEditorView",
                "BigBird: the first blocks attend every key, and every query "
                "attends them")},
        {"random_blocks", QT_TRANSLATE_NOOP("PatternEditorView", "Random blocks"),
            QT_TRANSLATE_NOOP("PatternEditorView",
                "BigBird: extra key blocks for each query block, drawn at random "
                "(from the seed) among the blocks not already attended")},
        {"seed", QT_TRANSLATE_NOOP("PatternEditorView", "Random seed"),
            QT_TRANSLATE_NOOP("PatternEditorView", "BigBird: the seed the random blocks are drawn from")},
        {"stride", QT_TRANSLATE_NOOP("PatternEditorView", "Stride l"),
            QT_TRANSLATE_NOOP("PatternEditorView",
                "Strided: the band |i − j| ≤ l plus every l-th key before and after; "
                "fixed: blocks of l positions. The paper takes l ≈ √T")},
        {"summary", QT_TRANSLATE_NOOP("PatternEditorView", "Summary c"),
            QT_TRANSLATE_NOOP("PatternEditorView",
                "Fixed: the last c positions of every l-block, which every query "
                "attends (they summarise their block)")},
        {"shift", QT_TRANSLATE_NOOP("PatternEditorView", "Shift s"),
            QT_TRANSLATE_NOOP("PatternEditorView",
                "Swin: the windows of every odd layer start s positions earlier (over a grid, s rows and "
                "s columns), so they straddle the even layers' windows; Swin takes s = w/2")},
        {"grid", QT_TRANSLATE_NOOP("PatternEditorView", "Grid width"),
            QT_TRANSLATE_NOOP("PatternEditorView",
                "Swin: 0 for text; G > 0 reads the tokens as a grid of patches G wide, row by row (as a "
                "vision transformer's), with w × w windows")},
    };
    return table;
}

} // namespace atlas
