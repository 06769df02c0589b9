#pragma once

#include "analysis/activationpatching.h"
#include "analysis/residualgraph.h"
#include "engine/input.h"
#include "model/model.h"
#include "util/workbudget.h"

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

// Circuits: the model's residual stream as a graph (Elhage et al. 2021), whose edges run from what writes into the
// stream (the embedding, each head, each feed-forward) to what reads it later (each head's queries, keys and values,
// each feed-forward, the logits), and the effect of each edge on a metric:
//  - exact edge patching: the corrupted run with one receiver reading the sender's clean output in place of its
//    corrupted one, everything else as it falls out;
//  - path patching (Wang et al. 2022): the sender's clean output reaching the receivers with every other head frozen
//    at its corrupted output (and the feed-forwards recomputed, or frozen too), then the receivers' inputs patched
//    into the corrupted run;
//  - edge attribution patching (EAP, Syed et al. 2023): every edge at once, linearly, as the sender's
//    clean − corrupted output times the metric's gradient at the receiver's input, from one forward–backward pair;
//    EAP-IG (Hanna et al. 2024) averages that gradient over inputs on the line from the corrupted to the clean
//    embedding;
//  - a circuit's faithfulness: the metric when the kept edges carry what their senders compute in this run and every
//    other edge its sender's corrupted output.
// Convention: as the Patching view, the corrupted run is the base and clean values are patched in, so an edge's
// effect is the metric it restores: recovered = (m − m_corrupted) / (m_clean − m_corrupted).
namespace atlas {

enum class AttributionMethod { Eap, EapIg };
const char *attributionMethodName(AttributionMethod method); // "eap" | "eap-ig"
AttributionMethod attributionMethodFromName(const std::string &name); // throws atlas::Error

struct EdgeAttribution
{
    AttributionMethod method = AttributionMethod::Eap;
    int steps = 1;
    std::vector<double> score; // per edge: the estimated metric change, m − m_corrupted
    int forwardPasses = 0, backwardPasses = 0; // beyond the clean and corrupted runs (EAP: 0 and 1)
};

// The work of a circuit analysis: three traces held at once (clean, corrupted, the run being edited), each sender's
// output in both runs, and the gradients' parameter buffers of the backward pass.
struct CircuitWork
{
    double flops = 0, bytes = 0;
    std::string what;
};
CircuitWork circuitWork(const Model &model, int tokens, double tracedBytes, int gradientSteps);

using CircuitProgress = std::function<bool(int, int)>; // (done, total); false stops the work ("cancelled")

// The clean and corrupted runs of one input pair and metric, kept for every question asked of them. Not for two
// threads at once.
class CircuitAnalysis
{
public:
    // Throws atlas::Error with circuitProblem's or patchingProblem's text, the work budget's refusal, or when both
    // runs give the same metric.
    CircuitAnalysis(std::shared_ptr<const Model> model, const Input &clean, const Corruption &corruption,
        const PatchMetric &metric, const WorkBudget &budget = WorkBudget::process());
    ~CircuitAnalysis();
    CircuitAnalysis(const CircuitAnalysis &) = delete;
    CircuitAnalysis &operator=(const CircuitAnalysis &) = delete;

    const CircuitGraph &graph() const;
    double clean() const;
    double corrupted() const;
    int position() const; // the metric's, resolved
    const std::vector<int> &corruptedTokens() const;
    double recovered(double metric) const { return (metric - corrupted()) / (clean() - corrupted()); }

    // EAP: the gradient at the corrupted run (steps ignored); EAP-IG: averaged at α = (k − ½)/steps, k = 1 … steps,
    // of the embedding corrupted + α (clean − corrupted). One forward and one backward pass per gradient.
    EdgeAttribution attribute(AttributionMethod method, int steps = 1, const CircuitProgress &progress = {},
        const std::atomic<bool> *cancel = nullptr);
    // The metric with edge `edge` alone patched.
    double edgePatched(int edge);
    // Every edge patched alone, in the graph's order (a forward pass from each receiver's layer).
    std::vector<double> everyEdgePatched(
        const CircuitProgress &progress = {}, const std::atomic<bool> *cancel = nullptr);
    // The metric of the circuit keeping `kept` (one flag per edge): all kept gives the clean metric, none the
    // corrupted one.
    double circuitMetric(const std::vector<bool> &kept);
    // Path patching from `sender` to `receivers` (Wang et al. 2022's two passes): the metric of the corrupted run
    // whose receivers read what they would if only the sender had its clean output, every other head keeping its
    // corrupted one and the feed-forwards recomputed (`throughMlps`) or frozen too. Frozen, one receiver: the same
    // as edgePatched on that edge. Throws when a receiver reads before the sender writes.
    double pathPatched(int sender, const std::vector<int> &receivers, bool throughMlps);

private:
    struct Impl;
    std::unique_ptr<Impl> m;
};

// Spearman's rank correlation of two equally long lists (ties get their mean rank); NaN when either is constant.
double rankCorrelation(const std::vector<double> &a, const std::vector<double> &b);

} // namespace atlas
