#include "clitesting.h"
#include "engine/engine.h"
#include "model/model.h"
#include "tensortesting.h"
#include "testbundle.h"

#include <QCryptographicHash>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>

using namespace atlas;
using namespace atlas::testing;

// A saved GGUF file's sliding window against llama.cpp at its real size (tests/data/gguf/saved/austen-long-window.json,
// made by tests/tools/gguf_window_reference.mjs); tst_ggufsave checks the other saved files.
class TestGgufWindow : public QObject
{
    Q_OBJECT

private slots:
    void llamaCppKeepsAustenLongsWindow();

private:
    QTemporaryDir m_dir;
};

// Named, not anonymous: the bundle compiles this file together with tst_ggufsave.cpp, whose helpers share the names.
namespace ggufwindow {

QJsonObject reference()
{
    QFile f(dataPath("gguf/saved/austen-long-window.json"));
    if (!f.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", qPrintable(f.fileName()));
    return QJsonDocument::fromJson(f.readAll()).object();
}

std::vector<int> idsOf(const QJsonArray &ids)
{
    std::vector<int> out;
    for (const QJsonValue &id : ids)
        out.push_back(id.toInt());
    return out;
}

Tensor logitsOf(const Model &model, const std::vector<int> &ids)
{
    Engine engine(std::make_shared<const Model>(model), Input {ids, {}});
    engine.runToEnd();
    return engine.trace().tensor("logits");
}

} // namespace ggufwindow

// austen-long's windowed layers (0 and 2) see the last 512 keys: llama.cpp's log-probabilities of each next
// character of the novel's first 1024 agree with this program's on the same F32 file, past the window's edge too
// (austen-long-window.json, gguf_window_reference.mjs; the file is saved again here and its SHA-256 checked).
// llama.cpp's GELU reads a table of half-precision values, so the two differ by up to 3.1e-3 (mean 2.1e-4), as `gpt2`
// files do; a window one key shorter or longer, the conventions a reader of "sliding_window" could take, is 7 and 10
// times further from llama.cpp past the edge (2.1e-2 and 3.1e-2): the check sees the window's edge. Whole rows on
// either side of the edge agree to 1.6e-3 (3.1e-3 at the first; logits up to 16.7).
void TestGgufWindow::llamaCppKeepsAustenLongsWindow()
{
    const QJsonObject reference = ggufwindow::reference();
    const QString out = m_dir.filePath("austen-long-f32.gguf");
    QFile::remove(out);
    const CliResult saved = runCli({"save", "--model", "austen-long", "--type", "f32", "--out", out});
    QVERIFY2(saved.code == 0, qPrintable(saved.err));
    QCOMPARE(QString(QCryptographicHash::hash(readFile(out), QCryptographicHash::Sha256).toHex()),
        reference["sha256"].toString());

    const std::vector<int> ids = ggufwindow::idsOf(reference["ids"].toArray());
    QCOMPARE(ids.size(), size_t(1024));
    const Model model = Model::load(out.toStdString());
    QCOMPARE(model.config.slidingWindow, 512);
    QVERIFY(model.config.windowed(0) && !model.config.windowed(1));

    // The largest difference from llama.cpp's log-probability of the next id, at the positions from `from` on.
    const QJsonArray theirs = reference["next_log_probs"].toArray();
    QCOMPARE(size_t(theirs.size()), ids.size() - 1);
    const auto worstFrom = [&](const Tensor &logits, size_t from) {
        const int64_t vocab = logits.dim(1);
        double worst = 0;
        for (size_t t = from; t + 1 < ids.size(); ++t) {
            const float *row = logits.data() + int64_t(t) * vocab;
            const double top = *std::max_element(row, row + vocab);
            double sum = 0;
            for (int64_t v = 0; v < vocab; ++v)
                sum += std::exp(double(row[v]) - top);
            const double ours = double(row[ids[t + 1]]) - top - std::log(sum);
            worst = std::max(worst, std::fabs(ours - theirs[qsizetype(t)].toDouble()));
        }
        return worst;
    };
    const Tensor logits = ggufwindow::logitsOf(model, ids);
    const double agreement = worstFrom(logits, 0);
    QVERIFY2(agreement <= 0.01, qPrintable(QString::number(agreement)));
    for (const int window : {511, 513}) {
        Model other = model;
        other.config.slidingWindow = window;
        const double pastTheEdge = worstFrom(ggufwindow::logitsOf(other, ids), 512);
        qInfo("next-token log-probabilities: the largest difference from llama.cpp %.3g; with a window of %d, past "
              "the edge %.3g",
            agreement, window, pastTheEdge);
        QVERIFY2(pastTheEdge > 3 * agreement, qPrintable(QString::number(pastTheEdge)));
    }

    // Whole rows either side of the edge, as llama.cpp wrote them.
    const QJsonObject rows = reference["rows"].toObject();
    QVERIFY(rows.contains("511") && rows.contains("512") && rows.contains("1023"));
    for (const QString &position : rows.keys()) {
        const QJsonArray row = rows[position].toArray();
        QCOMPARE(row.size(), qsizetype(model.config.vocab));
        const float *ours = logits.data() + position.toLongLong() * model.config.vocab;
        double worst = 0, range = 1;
        for (qsizetype v = 0; v < row.size(); ++v) {
            worst = std::max(worst, std::fabs(double(ours[v]) - row[v].toDouble()));
            range = std::max(range, std::fabs(row[v].toDouble()));
        }
        QVERIFY2(worst <= 1e-3 * range, qPrintable(position + ": " + QString::number(worst)));
    }
}

QTEST_GUILESS_MAIN(TestGgufWindow)
#include "tst_ggufwindow.moc"
