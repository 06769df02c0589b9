#include "circuit/circuit.h"

#include "model/modeltokenizer.h"
#include "tokenize/tokenizer.h"
#include "util/error.h"
#include "util/text.h"
#include "view/analysishelpers.h"
#include "view/viewkinds.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <numeric>

namespace atlas {

int CircuitScores::nearestStop(int edges) const
{
    int best = 0;
    for (size_t i = 0; i < stops.size(); ++i)
        if (std::abs(stops[i] - edges) < std::abs(stops[size_t(best)] - edges))
            best = int(i);
    return best;
}

} // namespace atlas

// The Circuit view: its descriptor and its analysis request.
namespace atlas::views::circuit {

std::string edgeKey(const CircuitGraph &graph, int edge)
{
    const CircuitEdge &e = graph.edges.at(size_t(edge));
    return graph.senders[size_t(e.sender)].name() + ">" + graph.receivers[size_t(e.receiver)].name();
}

int edgeFromKey(const CircuitGraph &graph, const std::string &key)
{
    const size_t split = key.find('>');
    if (split == std::string::npos)
        return -1;
    return graph.findEdge(graph.senderNamed(key.substr(0, split)), graph.receiverNamed(key.substr(split + 1)));
}

std::string circuitJson(const CircuitScores &s, int keptEdges, const std::vector<double> *exact)
{
    using nlohmann::json;
    const CircuitGraph &g = s.graph;
    const char *kinds[] = {"embedding", "head", "mlp"};
    const char *ports[] = {"q", "k", "v", "mlp", "logits"};
    json senders = json::array(), receivers = json::array(), edges = json::array(), curve = json::array();
    for (const CircuitNode &n : g.senders)
        senders.push_back({{"name", n.name()}, {"kind", kinds[int(n.kind)]}, {"layer", n.layer}, {"head", n.head}});
    for (const CircuitReceiver &r : g.receivers)
        receivers.push_back({{"name", r.name()}, {"port", ports[int(r.port)]}, {"layer", r.layer}, {"head", r.head}});
    std::vector<bool> kept(g.edges.size(), false);
    for (int k = 0; k < std::min(keptEdges, int(s.order.size())); ++k)
        kept[size_t(s.order[size_t(k)])] = true;
    for (size_t e = 0; e < g.edges.size(); ++e) {
        const double score = s.attribution.score[e];
        json edge = {{"sender", g.senders[size_t(g.edges[e].sender)].name()},
            {"receiver", g.receivers[size_t(g.edges[e].receiver)].name()}, {"score", score},
            {"recovered", score / (s.clean - s.corrupted)}, {"kept", bool(kept[e])}};
        if (exact)
            edge["exact"] = (*exact)[e] - s.corrupted;
        edges.push_back(edge);
    }
    for (size_t i = 0; i < s.stops.size(); ++i)
        curve.push_back({{"edges", s.stops[i]}, {"metric", s.kept[i]}, {"recovered", s.recovered(s.kept[i])}});
    const json j = {{"clean", s.clean}, {"corrupted", s.corrupted}, {"position", s.position},
        {"method", attributionMethodName(s.attribution.method)}, {"steps", s.attribution.steps},
        {"kept_edges", keptEdges}, {"senders", senders}, {"receivers", receivers}, {"edges", edges},
        {"faithfulness", curve}};
    return j.dump(1) + "\n";
}

namespace {

// The faithfulness curve's stops: 0, 1, 2, 3, 5, 8, … (each about half again the last), and every edge.
std::vector<int> stopsFor(int edges)
{
    std::vector<int> stops {0};
    for (int k = 1; k < edges; k = std::max(k + 1, int(std::lround(k * 1.5))))
        stops.push_back(k);
    stops.push_back(edges);
    return stops;
}

} // namespace

std::shared_ptr<const CircuitScores> circuitScores(
    CircuitAnalysis &a, EdgeAttribution attribution, const CircuitProgress &progress, const std::atomic<bool> *cancel)
{
    auto s = std::make_shared<CircuitScores>();
    s->graph = a.graph();
    s->clean = a.clean();
    s->corrupted = a.corrupted();
    s->position = a.position();
    s->corruptedTokens = a.corruptedTokens();
    s->attribution = std::move(attribution);
    const int E = int(s->graph.edges.size());
    s->stops = stopsFor(E);
    s->order.resize(size_t(E));
    std::iota(s->order.begin(), s->order.end(), 0);
    const std::vector<double> &score = s->attribution.score;
    std::stable_sort(s->order.begin(), s->order.end(),
        [&](int x, int y) { return std::abs(score[size_t(x)]) > std::abs(score[size_t(y)]); });
    const int total = int(s->stops.size());
    for (size_t i = 0; i < s->stops.size(); ++i) {
        if ((cancel && cancel->load()) || (progress && !progress(int(i), total)))
            throw Error("circuits: cancelled");
        std::vector<bool> kept(size_t(E), false);
        for (int k = 0; k < s->stops[i]; ++k)
            kept[size_t(s->order[size_t(k)])] = true;
        s->kept.push_back(a.circuitMetric(kept));
    }
    if (progress)
        progress(total, total);
    return s;
}

namespace {

using namespace atlas::analysis;

// The runs, the attribution and the curve of the last analysis, kept so that choosing an edge patches it without
// making them again. One entry: another input, corruption, metric or method replaces it.
struct Memo
{
    std::mutex lock;
    std::string key;
    std::shared_ptr<CircuitAnalysis> analysis;
    std::shared_ptr<const CircuitScores> scores;
};

Memo &memo()
{
    static Memo m;
    return m;
}

// EAP or EAP-IG over every edge, the faithfulness curve, and the chosen edge patched exactly; each gradient and
// each circuit is a step of the progress the window shows.
AnalysisRequest request(const ViewSpec &spec, const AnalysisContext &c)
{
    if (!c.model || c.tokenIds.empty())
        return problem(kNothingComputed);
    if (const std::string why = circuitProblem(*c.model); !why.empty())
        return problem(
            "The circuit view draws the residual stream as a graph, and this model's is not one: " + why + ".");
    if (spec.target.empty())
        return problem("A circuit is found for one token at one position: name it in the Target box (a token, or "
                       "#id), and a second one in Contrast for a logit difference.");
    if (const std::string why = corruptionMissing(spec, "A circuit"); !why.empty())
        return problem(why);
    AttributionMethod method = AttributionMethod::Eap;
    try {
        method = attributionMethodFromName(spec.get(kAttribution));
    } catch (const Error &e) {
        return problem(e.what());
    }
    const int steps = method == AttributionMethod::Eap ? 1 : spec.get(kIgSteps);
    CircuitWork work = circuitWork(*c.model, c.tokens, double(c.program ? c.program->tracedBytes() : 0), steps);
    work.flops += 30 * Model::forwardFlopsOf(c.model->config, c.tokens); // the curve's circuits, about 30
    if (auto over = overBudgetRequest(c, work.what, work.flops, work.bytes))
        return *over;
    const std::string runs = "circuit/" + modelIdentity(*c.model) + "/" + inputKey(c);
    AnalysisRequest r;
    r.key = runs;
    r.pinned = {c.model->wte};
    r.progress = std::make_shared<AnalysisProgress>();
    const std::string memoKey = runs + "/" + spec.get(corruptionkeys::kCorruptedText) + "/" + std::to_string(spec.seed)
        + "/" + std::to_string(spec.position) + "/" + spec.target + "/" + spec.get(corruptionkeys::kContrast) + "/"
        + attributionMethodName(method) + "/" + std::to_string(steps);
    std::string noise;
    for (int t : spec.get(corruptionkeys::kNoisePositions))
        noise.append(",").append(std::to_string(t));
    r.run = [model = c.model, input = inputOf(c), spec, method, steps, key = memoKey + "/noise" + noise,
                progress = r.progress](const std::atomic<bool> &cancel) {
        return timedResult<CircuitViewAnalysis>([&](CircuitViewAnalysis &result) {
            const std::unique_ptr<Tokenizer> tokenizer = tokenizerForModel(*model);
            result.target = targetId("target", spec.target, *tokenizer, model->config.vocab);
            result.contrast
                = targetId("contrast", spec.get(corruptionkeys::kContrast), *tokenizer, model->config.vocab);
            Memo &m = memo();
            std::lock_guard lock(m.lock);
            if (m.key != key) {
                m.key.clear();
                m.analysis.reset();
                m.scores.reset();
                const Corruption corruption = corruptionOf(spec, *tokenizer, input.tokens.size());
                const PatchMetric metric {spec.position, result.target, result.contrast};
                auto analysis
                    = std::make_shared<CircuitAnalysis>(model, input, corruption, metric, WorkBudget::unbounded());
                const int gradients = method == AttributionMethod::Eap ? 1 : steps,
                          stops = int(stopsFor(int(analysis->graph().edges.size())).size());
                const auto report = [progress, gradients, stops](int offset) {
                    return [progress, gradients, stops, offset](int done, int) {
                        progress->total = gradients + stops;
                        progress->done = offset + done;
                        return true;
                    };
                };
                EdgeAttribution attribution = analysis->attribute(method, steps, report(0), &cancel);
                m.scores = circuitScores(*analysis, std::move(attribution), report(gradients), &cancel);
                m.analysis = std::move(analysis);
                m.key = key;
            }
            result.scores = m.scores;
            result.edge = spec.get(kEdge).empty() ? -1 : edgeFromKey(m.scores->graph, spec.get(kEdge));
            if (!spec.get(kEdge).empty() && result.edge < 0)
                throw Error("The edge \"" + spec.get(kEdge) + "\" is not one of this model's (sender>receiver, as "
                    + edgeKey(m.scores->graph, 0) + ")");
            if (result.edge >= 0) {
                const CircuitEdge e = m.scores->graph.edges[size_t(result.edge)];
                result.edgeMetric = m.analysis->edgePatched(result.edge);
                result.pathMetric = m.analysis->pathPatched(e.sender, {e.receiver}, true);
            }
        });
    };
    return r;
}

} // namespace

ViewKind kind()
{
    return {.kind = "circuit",
        .title = "Circuit",
        .summary = "the residual stream as a graph of heads and feed-forwards: every edge's effect on a logit "
                   "difference by edge attribution patching, the circuit of the largest edges and how much of the "
                   "clean run it keeps",
        .group = "Circuits",
        .request = request,
        .analysisKeys
        = {"position", "seed", "target", corruptionkeys::kCorruptedText.name, corruptionkeys::kNoisePositions.name,
            corruptionkeys::kContrast.name, kAttribution.name, kIgSteps.name, kEdge.name},
        .after = "head-kinds",
        .keys = {{.field = kAttribution,
                     .type = "string",
                     .meaning = "circuit view: how each edge's effect is estimated, `eap` (the gradient at the "
                                "corrupted run times each sender's clean − corrupted output: one forward and one "
                                "backward pass) or `eap-ig` (the gradient averaged over `ig_steps` inputs between "
                                "the corrupted and the clean embedding)",
                     .choices = {"eap", "eap-ig"},
                     .ownedByView = true},
            {.field = kIgSteps,
                .type = "int, 1 … 100",
                .meaning = "circuit view, `eap-ig`: the gradients averaged, at α = (k − ½)/steps",
                .minimum = 1,
                .rule = ">= 1",
                .check =
                    [](const ViewSpec &s) {
                        return s.get(kIgSteps) > 100 ? std::string("ig_steps is at most 100") : std::string();
                    },
                .ownedByView = true},
            {.field = kKeepEdges,
                .type = "int ≥ 0",
                .meaning = "circuit view: the circuit keeps this many of the largest edges (by |estimate|), taken "
                           "to the nearest stop of the faithfulness curve (0, 1, 2, 3, 5, 8, …, every edge)",
                .ownedByView = true},
            {.field = kEdge,
                .type = "string",
                .meaning = "circuit view: an edge patched exactly, `sender>receiver` (`a0.1>a1.2.q`: head 1 of layer "
                           "0 into the queries of head 2 of layer 1; senders `embed`, `aL.H`, `mL`; receivers "
                           "`aL.H.q|k|v`, `mL`, `logits`); `\"\"` = none",
                .ownedByView = true,
                .perModel = true}}};
}

} // namespace atlas::views::circuit
