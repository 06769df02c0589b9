#include "views/viewfactory.h"

#include "util/commalist.h"
#include "util/error.h"
#include "view/viewkinds.h"
#include "views/ablationview.h"
#include "views/architectureview.h"
#include "views/attentionview.h"
#include "views/headsgridview.h"
#include "views/inversionerrorview.h"
#include "views/maskview.h"
#include "views/memorydepthview.h"
#include "views/memorygraphview.h"
#include "views/memorytimelineview.h"
#include "views/memorytradeoffview.h"
#include "views/neuronview.h"
#include "views/nexttokenview.h"
#include "views/objectiveview.h"
#include "views/tensorview.h"
#include "views/tokenlinesview.h"

#include <map>

namespace atlas {

namespace {

// One widget per view descriptor (view/viewkinds.cpp, and each view folder's); tst_views holds the two lists to each
// other.
const std::map<std::string, ViewMaker> &makers()
{
    static const std::map<std::string, ViewMaker> table = [] {
        std::map<std::string, ViewMaker> made = {
            {"attention", [](QWidget *p) -> std::unique_ptr<View> { return std::make_unique<AttentionView>(p); }},
            {"objective", [](QWidget *p) -> std::unique_ptr<View> { return std::make_unique<ObjectiveView>(p); }},
            {"heads", [](QWidget *p) -> std::unique_ptr<View> { return std::make_unique<HeadsGridView>(p); }},
            {"lines", [](QWidget *p) -> std::unique_ptr<View> { return std::make_unique<TokenLinesView>(p); }},
            {"mask", [](QWidget *p) -> std::unique_ptr<View> { return std::make_unique<MaskView>(p); }},
            {"memory-timeline",
                [](QWidget *p) -> std::unique_ptr<View> { return std::make_unique<MemoryTimelineView>(p); }},
            {"architecture", [](QWidget *p) -> std::unique_ptr<View> { return std::make_unique<ArchitectureView>(p); }},
            {"neuron", [](QWidget *p) -> std::unique_ptr<View> { return std::make_unique<NeuronView>(p); }},
            {"ablation", [](QWidget *p) -> std::unique_ptr<View> { return std::make_unique<AblationView>(p); }},
            {"memory-graph", [](QWidget *p) -> std::unique_ptr<View> { return std::make_unique<MemoryGraphView>(p); }},
            {"memory-depth", [](QWidget *p) -> std::unique_ptr<View> { return std::make_unique<MemoryDepthView>(p); }},
            {"memory-tradeoff",
                [](QWidget *p) -> std::unique_ptr<View> { return std::make_unique<MemoryTradeoffView>(p); }},
            {"inversion-error",
                [](QWidget *p) -> std::unique_ptr<View> { return std::make_unique<InversionErrorView>(p); }},
            {"next-token", [](QWidget *p) -> std::unique_ptr<View> { return std::make_unique<NextTokenView>(p); }},
            {"tensor", [](QWidget *p) -> std::unique_ptr<View> { return std::make_unique<TensorView>(p); }},
        };
        for (const auto &[kind, make] : viewFolderMakers())
            if (!made.emplace(kind, make).second)
                throw Error("two widgets for the view kind '" + kind + "'");
        return made;
    }();
    return table;
}

} // namespace

std::vector<std::string> widgetKinds()
{
    std::vector<std::string> kinds;
    for (const auto &[kind, make] : makers())
        kinds.push_back(kind);
    return kinds;
}

std::unique_ptr<View> createView(const std::string &kind, QWidget *parent)
{
    const auto it = makers().find(kind);
    if (it != makers().end())
        return it->second(parent);
    std::vector<std::string> known;
    for (const ViewKind &k : viewKinds())
        known.push_back(k.kind);
    throw Error("unknown view kind '" + kind + "' (known kinds: " + joinedCommaList(known) + ")");
}

} // namespace atlas
