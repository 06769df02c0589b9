#include "views/viewfactory.h"

#include "util/error.h"
#include "view/viewspec.h"
#include "views/approximationview.h"
#include "views/attentionview.h"
#include "views/headsgridview.h"
#include "views/kernelcompareview.h"
#include "views/lshview.h"
#include "views/maskview.h"
#include "views/nexttokenview.h"
#include "views/patterneditorview.h"
#include "views/tensorview.h"
#include "views/tokenlinesview.h"

namespace atlas {

std::unique_ptr<View> createView(const std::string &kind, QWidget *parent)
{
    if (kind == "approximation")
        return std::make_unique<ApproximationView>(parent);
    if (kind == "attention")
        return std::make_unique<AttentionView>(parent);
    if (kind == "heads")
        return std::make_unique<HeadsGridView>(parent);
    if (kind == "kernels")
        return std::make_unique<KernelCompareView>(parent);
    if (kind == "lines")
        return std::make_unique<TokenLinesView>(parent);
    if (kind == "lsh")
        return std::make_unique<LshView>(parent);
    if (kind == "mask")
        return std::make_unique<MaskView>(parent);
    if (kind == "next-token")
        return std::make_unique<NextTokenView>(parent);
    if (kind == "pattern")
        return std::make_unique<PatternEditorView>(parent);
    if (kind == "tensor")
        return std::make_unique<TensorView>(parent);
    std::string known;
    for (const std::string &k : ViewSpec::viewKinds())
        known += (known.empty() ? "" : ", ") + k;
    throw Error("unknown view kind '" + kind + "' (known kinds: " + known + ")");
}

} // namespace atlas
