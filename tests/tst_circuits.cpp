// Circuits (analysis/circuits.h): the residual graph, path patching and edge attribution patching against a PyTorch
// computation of each definition on llama_tiny, grouped-query attention included, gemma2_tiny, sandwich norms included,
// and olmo2_tiny, sub-layers reading the stream without a norm
// (tests/tools/make_circuits_reference.py); on the copy model's induction, the circuit keeping every edge gives the
// clean metric and keeping none the corrupted one, path patching with everything frozen is the edge's own patch, and
// EAP ranks the edges as exact patching does; on a model whose induction circuit is set by hand
// (tests/tools/make_induction_model.py), exact patching, path patching, EAP and the circuit's faithfulness find that
// circuit and nothing else; GPT-NeoX's parallel blocks give their feed-forwards no edge from their
// own layer's heads; the models whose blocks do not add into one stream are refused with the reason.
#include "analysis/circuits.h"
#include "model/builtinmodels.h"
#include "model/modeltokenizer.h"
#include "tensortesting.h"
#include "testbundle.h"
#include "tokenize/tokenizer.h"
#include "util/error.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace atlas;
using namespace atlas::testing;

namespace {

std::vector<int> ints(const QJsonValue &v)
{
    std::vector<int> out;
    for (const QJsonValue &x : v.toArray())
        out.push_back(x.toInt());
    return out;
}

std::vector<double> doubles(const QJsonValue &v)
{
    std::vector<double> out;
    for (const QJsonValue &x : v.toArray())
        out.push_back(x.toDouble());
    return out;
}

// float32 through two small layers against float64.
bool near(double got, double want)
{
    return std::abs(got - want) <= 2e-5 + 2e-4 * std::abs(want);
}

// The copy model's induction: after "hfjdlwqp|hfjd" it writes l; with the first copy's l changed to o, it writes o.
struct CopyCase
{
    std::shared_ptr<const Model> model;
    Input clean;
    Corruption corruption;
    PatchMetric metric;
};

CopyCase copyCase()
{
    CopyCase a;
    a.model = loadModel("copy");
    const auto tokenizer = tokenizerForModel(*a.model);
    a.clean.tokens = tokenizer->encode("hfjdlwqp|hfjd");
    a.corruption.tokens = tokenizer->encode("hfjdowqp|hfjd");
    a.metric.target = tokenizer->encode("l").front();
    a.metric.contrast = tokenizer->encode("o").front();
    return a;
}

} // namespace

class TestCircuits : public QObject
{
    Q_OBJECT

private slots:
    // The graph, path patching, EAP and EAP-IG against PyTorch on llama_tiny (4 query heads reading 2 K/V heads) and
    // gemma2_tiny (sandwich norms: a head writes its share of the normed sum of the heads' outputs) and olmo2_tiny (the
    // sub-layers read the stream itself; QK-norm over all heads together).
    void agreesWithPyTorch_data()
    {
        QTest::addColumn<QString>("name");
        QTest::newRow("llama_tiny") << "llama_tiny";
        QTest::newRow("gemma2_tiny") << "gemma2_tiny";
        QTest::newRow("olmo2_tiny") << "olmo2_tiny";
    }

    void agreesWithPyTorch()
    {
        QFETCH(QString, name);
        QFile f(dataPath("circuits/" + name + ".json"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonObject ref = QJsonDocument::fromJson(f.readAll()).object();
        const auto model = std::make_shared<const Model>(Model::load(dataPath(name).toStdString()));
        Input clean;
        clean.tokens = ints(ref["clean"]);
        Corruption corruption;
        corruption.tokens = ints(ref["corrupted"]);
        PatchMetric metric;
        metric.target = ref["target"].toInt();
        metric.contrast = ref["contrast"].toInt();
        CircuitAnalysis a(model, clean, corruption, metric);
        QVERIFY(near(a.clean(), ref["clean_metric"].toDouble()));
        QVERIFY(near(a.corrupted(), ref["corrupted_metric"].toDouble()));

        const CircuitGraph &g = a.graph();
        const QJsonArray senders = ref["senders"].toArray(), receivers = ref["receivers"].toArray(),
                         edges = ref["edges"].toArray();
        QCOMPARE(int(g.senders.size()), int(senders.size()));
        for (int s = 0; s < int(senders.size()); ++s)
            QCOMPARE(QString::fromStdString(g.senders[size_t(s)].name()), senders[s].toString());
        QCOMPARE(int(g.receivers.size()), int(receivers.size()));
        for (int r = 0; r < int(receivers.size()); ++r)
            QCOMPARE(QString::fromStdString(g.receivers[size_t(r)].name()), receivers[r].toString());
        QCOMPARE(int(g.edges.size()), int(edges.size()));
        for (int e = 0; e < int(edges.size()); ++e) {
            QCOMPARE(g.edges[size_t(e)].sender, edges[e].toArray()[0].toInt());
            QCOMPARE(g.edges[size_t(e)].receiver, edges[e].toArray()[1].toInt());
        }

        for (const QJsonValue &v : ref["paths"].toArray()) {
            const QJsonObject p = v.toObject();
            const int s = g.senderNamed(p["sender"].toString().toStdString()),
                      r = g.receiverNamed(p["receiver"].toString().toStdString());
            QVERIFY(s >= 0 && r >= 0);
            const double got = a.pathPatched(s, {r}, p["through_mlps"].toBool()), want = p["metric"].toDouble();
            if (!near(got, want))
                QFAIL(qPrintable(QString("path %1 → %2 (MLPs %3): %4, PyTorch %5")
                                     .arg(p["sender"].toString(), p["receiver"].toString(),
                                         p["through_mlps"].toBool() ? "recomputed" : "frozen")
                                     .arg(got)
                                     .arg(want)));
        }

        const auto compare = [&](const EdgeAttribution &got, const std::vector<double> &want, const char *what) {
            QCOMPARE(got.score.size(), want.size());
            for (size_t e = 0; e < want.size(); ++e)
                if (!near(got.score[e], want[e]))
                    QFAIL(qPrintable(QString("%1 of %2: %3, PyTorch %4")
                                         .arg(what, QString::fromStdString(g.edgeName(int(e))))
                                         .arg(got.score[e])
                                         .arg(want[e])));
        };
        compare(a.attribute(AttributionMethod::Eap), doubles(ref["eap"]), "EAP");
        const EdgeAttribution ig = a.attribute(AttributionMethod::EapIg, ref["eap_ig_steps"].toInt());
        QCOMPARE(ig.forwardPasses, ref["eap_ig_steps"].toInt());
        compare(ig, doubles(ref["eap_ig"]), "EAP-IG");
    }

    // Every edge kept is the clean run, none the corrupted one; path patching with everything frozen patches the edge.
    void theCircuitSpansCleanAndCorrupted()
    {
        const CopyCase c = copyCase();
        CircuitAnalysis a(c.model, c.clean, c.corruption, c.metric);
        const size_t E = a.graph().edges.size();
        QCOMPARE(int(a.graph().senders.size()), 1 + 2 * 4 + 2);
        QCOMPARE(int(a.graph().receivers.size()), 2 * 12 + 2 + 1);
        QCOMPARE(int(E), 110); // Σ_l 12 (1 + 5l) + (5 + 5l), and the logits' 11
        QVERIFY(a.clean() > 5 && a.corrupted() < -5);
        const double all = a.circuitMetric(std::vector<bool>(E, true));
        QVERIFY2(std::abs(all - a.clean()) <= 1e-4 * (1 + std::abs(a.clean())),
            qPrintable(QString("all edges %1, clean %2").arg(all).arg(a.clean())));
        QCOMPARE(a.circuitMetric(std::vector<bool>(E, false)), a.corrupted());
        for (int e : {0, 17, 40, 70, 98, int(E) - 1}) {
            const CircuitEdge edge = a.graph().edges[size_t(e)];
            const double patched = a.edgePatched(e), path = a.pathPatched(edge.sender, {edge.receiver}, false);
            QVERIFY2(std::abs(patched - path) <= 1e-5 * (1 + std::abs(patched)),
                qPrintable(QString("%1: edge %2, path %3")
                               .arg(QString::fromStdString(a.graph().edgeName(e)))
                               .arg(patched)
                               .arg(path)));
        }
        const int late = a.graph().senderNamed("a2.1"), early = a.graph().receiverNamed("a1.0.q");
        QVERIFY_THROWS_EXCEPTION(atlas::Error, a.pathPatched(late, {early}, true));
    }

    // EAP's linear estimate ranks the edges as patching each one does (a rank correlation of 0.8 at least); EAP-IG's
    // estimates come closer to the exact effects as its steps grow.
    void attributionRanksEdgesAsPatchingDoes()
    {
        const CopyCase c = copyCase();
        CircuitAnalysis a(c.model, c.clean, c.corruption, c.metric);
        std::vector<double> exact = a.everyEdgePatched();
        for (double &m : exact)
            m -= a.corrupted();
        const EdgeAttribution eap = a.attribute(AttributionMethod::Eap);
        const EdgeAttribution ig1 = a.attribute(AttributionMethod::EapIg, 1),
                              ig4 = a.attribute(AttributionMethod::EapIg, 4);
        const auto error = [&](const std::vector<double> &s) {
            double sum = 0;
            for (size_t e = 0; e < s.size(); ++e)
                sum += std::abs(s[e] - exact[e]);
            return sum;
        };
        const double rEap = rankCorrelation(eap.score, exact);
        qInfo("against exact patching of %zu edges: EAP's rank correlation %.3f, summed error %.3f; EAP-IG's with 1 "
              "and 4 steps %.3f and %.3f, errors %.3f and %.3f",
            exact.size(), rEap, error(eap.score), rankCorrelation(ig1.score, exact), rankCorrelation(ig4.score, exact),
            error(ig1.score), error(ig4.score));
        QVERIFY(rEap >= 0.8);
        QVERIFY(error(ig4.score) < error(ig1.score));
        QVERIFY(error(ig1.score) < error(eap.score));
    }

    // induction_tiny's circuit is known by construction: head 0.0 writes each position's previous token, head 1.0's key
    // reads it (K-composition) to attend to the token after the earlier copy of the current one, and writes that
    // token into the logits. Corrupting the token before the answer's first copy breaks the match. Exactly three edges
    // carry the difference: the embedding into 0.0's value, 0.0 into 1.0's key, 1.0 into the logits. Each restores the
    // clean metric when patched alone, no other edge restores a tenth of it, EAP ranks the three first, path patching
    // finds 0.0 acting through 1.0's key and not its query, and the three alone are a faithful circuit.
    void theKnownInductionCircuitIsFound()
    {
        const auto model = std::make_shared<const Model>(Model::load(dataPath("induction_tiny").toStdString()));
        Input clean;
        clean.tokens = {3, 9, 14, 1, 7, 12, 5, 3, 9, 14, 1, 7}; // after the second 7, 12 follows as it did before
        Corruption corruption;
        corruption.tokens = clean.tokens;
        corruption.tokens[4] = 10; // no 7 comes before 12 any more
        PatchMetric metric {-1, 12, 0}; // 12 against a token the text does not hold
        CircuitAnalysis a(model, clean, corruption, metric);
        QVERIFY2(a.clean() > 5 && a.clean() - a.corrupted() > 5,
            qPrintable(QString("clean %1, corrupted %2").arg(a.clean()).arg(a.corrupted())));
        const CircuitGraph &g = a.graph();
        const int embed = g.senderNamed("embed"), prev = g.senderNamed("a0.0"), induction = g.senderNamed("a1.0");
        const std::vector<int> circuit = {g.findEdge(embed, g.receiverNamed("a0.0.v")),
            g.findEdge(prev, g.receiverNamed("a1.0.k")), g.findEdge(induction, g.receiverNamed("logits"))};
        QVERIFY(std::all_of(circuit.begin(), circuit.end(), [](int e) { return e >= 0; }));
        const auto inCircuit = [&](int e) { return std::find(circuit.begin(), circuit.end(), e) != circuit.end(); };

        const std::vector<double> exact = a.everyEdgePatched();
        for (int e = 0; e < int(exact.size()); ++e) {
            const double r = a.recovered(exact[size_t(e)]);
            QVERIFY2(inCircuit(e) ? r > 0.99 : std::abs(r) < 0.1,
                qPrintable(QString("%1 recovers %2").arg(QString::fromStdString(g.edgeName(e))).arg(r)));
        }
        const EdgeAttribution eap = a.attribute(AttributionMethod::Eap);
        double largestOther = 0;
        for (int e = 0; e < int(exact.size()); ++e)
            if (!inCircuit(e))
                largestOther = std::max(largestOther, std::abs(a.recovered(exact[size_t(e)])));
        qInfo(
            "clean %.3f, corrupted %.3f; the circuit's edges recover %.4f, %.4f and %.4f, the largest other %.2g; EAP "
            "scores them %.3f, %.3f and %.3f",
            a.clean(), a.corrupted(), a.recovered(exact[size_t(circuit[0])]), a.recovered(exact[size_t(circuit[1])]),
            a.recovered(exact[size_t(circuit[2])]), largestOther, eap.score[size_t(circuit[0])],
            eap.score[size_t(circuit[1])], eap.score[size_t(circuit[2])]);
        std::vector<int> order(eap.score.size());
        std::iota(order.begin(), order.end(), 0);
        std::sort(
            order.begin(), order.end(), [&](int x, int y) { return eap.score[size_t(x)] > eap.score[size_t(y)]; });
        for (int k = 0; k < 3; ++k)
            QVERIFY2(inCircuit(order[size_t(k)]), qPrintable(QString::fromStdString(g.edgeName(order[size_t(k)]))));

        QVERIFY(a.recovered(a.pathPatched(prev, {g.receiverNamed("a1.0.k")}, true)) > 0.99);
        QVERIFY(std::abs(a.recovered(a.pathPatched(prev, {g.receiverNamed("a1.0.q")}, true))) < 0.01);
        std::vector<bool> kept(g.edges.size(), false);
        for (int e : circuit)
            kept[size_t(e)] = true;
        QVERIFY(a.recovered(a.circuitMetric(kept)) > 0.99);
    }

    // Parallel blocks (GPT-NeoX): the feed-forward reads the stream the heads read, not their output.
    void parallelBlocksHaveNoEdgeFromTheirOwnHeads()
    {
        const auto model = std::make_shared<const Model>(Model::load(dataPath("neox_tiny").toStdString()));
        const CircuitGraph g = circuitGraph(*model);
        const int mlp = g.findReceiver(ReadPort::Mlp, 1, -1);
        QVERIFY(mlp >= 0);
        QCOMPARE(g.findEdge(g.findSender(CircuitNode::Kind::Head, 1, 0), mlp), -1);
        QVERIFY(g.findEdge(g.findSender(CircuitNode::Kind::Head, 0, 0), mlp) >= 0);
        QVERIFY(g.findEdge(g.findSender(CircuitNode::Kind::Mlp, 0, -1), mlp) >= 0);
        Input clean;
        clean.tokens = {3, 17, 42, 8, 0, 25, 63, 11};
        Corruption corruption;
        corruption.tokens = {3, 17, 42, 9, 0, 25, 63, 11};
        PatchMetric metric {-1, 5, 40};
        CircuitAnalysis a(model, clean, corruption, metric);
        const double all = a.circuitMetric(std::vector<bool>(g.edges.size(), true));
        QVERIFY(std::abs(all - a.clean()) <= 1e-4 * (1 + std::abs(a.clean())));
    }

    // Built-in models: those whose blocks add into one stream give a graph whose full circuit is the clean run; the
    // others are refused with the reason.
    void builtInModelsAreDrawnOrRefused()
    {
        for (const char *name :
            {"austen-bert", "reverse-rev", "seq2seq-sort", "austen-mlm-funnel", "austen-mlm-sinkhorn"}) {
            const std::string why = circuitProblem(*loadModel(name));
            QVERIFY2(!why.empty(), name);
        }
        QVERIFY(circuitProblem(Model::load(dataPath("gemma3_tiny").toStdString())).empty());
        for (const char *name :
            {"austen-switch", "reverse-llama", "reverse-qwen3", "reverse-gpt-oss", "reverse-gemma2", "copy"}) {
            const auto model = loadModel(name);
            QVERIFY2(circuitProblem(*model).empty(), name);
            Input clean;
            clean.tokens = {40, 41, 42, 43, 44, 45, 46};
            Corruption corruption;
            corruption.noisePositions = {2};
            PatchMetric metric {-1, 50, 51};
            CircuitAnalysis a(model, clean, corruption, metric);
            const double all = a.circuitMetric(std::vector<bool>(a.graph().edges.size(), true));
            QVERIFY2(std::abs(all - a.clean()) <= 1e-4 * (1 + std::abs(a.clean())),
                qPrintable(QString("%1: all edges %2, clean %3").arg(name).arg(all).arg(a.clean())));
            QCOMPARE(a.circuitMetric(std::vector<bool>(a.graph().edges.size(), false)), a.corrupted());
        }
    }
};

QTEST_GUILESS_MAIN(TestCircuits)
#include "tst_circuits.moc"
