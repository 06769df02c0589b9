#pragma once

#include "analysis/circuits.h"
#include "view/corruptionkeys.h"
#include "view/viewanalysis.h"
#include "view/viewspec.h"

#include <limits>
#include <memory>

namespace atlas {

// What the circuit view draws of one input pair, metric and attribution method: every edge's estimated effect and
// the faithfulness of the circuits made of the largest ones.
struct CircuitScores
{
    CircuitGraph graph;
    EdgeAttribution attribution;
    double clean = 0, corrupted = 0;
    int position = 0;
    std::vector<int> corruptedTokens;
    std::vector<int> order; // the edges by |score|, largest first
    // The circuits of the `stops[i]` largest edges: their metric (analysis/circuits.h, circuitMetric). stops runs from
    // 0 (the corrupted run) to every edge (the clean one).
    std::vector<int> stops;
    std::vector<double> kept;
    double recovered(double metric) const { return (metric - corrupted) / (clean - corrupted); }
    // The stop nearest to `edges` edges.
    int nearestStop(int edges) const;
};

// The circuit view's analysis (view kind "circuit"): the scores, and the chosen edge patched exactly.
struct CircuitViewAnalysis : ViewAnalysis
{
    int target = 0, contrast = -1;
    std::shared_ptr<const CircuitScores> scores;
    int edge = -1; // the chosen edge, −1 none
    double edgeMetric = std::numeric_limits<double>::quiet_NaN(); // that edge alone patched
    double pathMetric = std::numeric_limits<double>::quiet_NaN(); // path patching, the feed-forwards recomputed
};

} // namespace atlas

// This view's own spec keys (documented by its descriptor's `keys`); the corrupted run's are shared with the Patching
// view (view/corruptionkeys.h).
namespace atlas::views::circuit {

inline const OwnKey<std::string> kAttribution {"attribution", "eap"};
inline const OwnKey<int> kIgSteps {"ig_steps", 8};
inline const OwnKey<int> kKeepEdges {"keep_edges", 20};
inline const OwnKey<std::string> kEdge {"edge", ""};

// The edges of `attribution` ranked, and the faithfulness curve (a circuit run at each stop); throws atlas::Error
// "cancelled".
std::shared_ptr<const CircuitScores> circuitScores(CircuitAnalysis &a, EdgeAttribution attribution,
    const CircuitProgress &progress = {}, const std::atomic<bool> *cancel = nullptr);

// The graph as JSON: the metrics, the senders and receivers, every edge with its estimate (and its exact effect where
// `exact` gives one per edge), whether the circuit of the `keptEdges` largest keeps it, and the faithfulness curve.
std::string circuitJson(const CircuitScores &s, int keptEdges, const std::vector<double> *exact = nullptr);

// Ids of an edge in the `edge` key: "a0.1>a1.2.q" (sender > receiver).
std::string edgeKey(const CircuitGraph &graph, int edge);
int edgeFromKey(const CircuitGraph &graph, const std::string &key); // −1 when the graph has no such edge

} // namespace atlas::views::circuit
