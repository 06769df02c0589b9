// The parameters the toolbar's attention chooser fills in scale with the input: on 17 tokens Longformer's window
// is not 512 (which would be full attention), and on long inputs every kind stays sparse or low-rank.
#include "attention/attentionkernel.h"
#include "attention/attentionpattern.h"
#include "attention/patternparams.h"
#include "testbundle.h"

#include <QTest>

using namespace atlas;
using namespace atlas::attention;

class TestSuggestedKernels : public QObject
{
    Q_OBJECT

private slots:
    void patternsStaySparseAtEveryLength()
    {
        for (int T : {17, 64, 512, 4096})
            for (const char *kind : {"longformer", "bigbird", "strided", "fixed"}) {
                const AttentionKernelSpec spec = suggestedKernelSpec(kind, T);
                QCOMPARE(spec.kind, std::string(kind));
                const PatternSummary s = attentionPattern(spec, T, true, {}, 64);
                QVERIFY2(s.allowedFraction() > 0.0 && s.allowedFraction() < 0.9,
                    qPrintable(QString("%1 on %2 tokens: density %3").arg(kind).arg(T).arg(s.allowedFraction())));
            }
        QCOMPARE(suggestedKernelSpec("longformer", 17).params.at("window"), std::string("2"));
    }

    void lshAndLowRankFitTheLength()
    {
        for (int T : {1, 17, 300, 8192}) {
            const LshParams lsh = lshParams(suggestedKernelSpec("lsh", T)); // validated by the kernel's own check
            QVERIFY(lsh.buckets >= 2 && lsh.buckets <= 64 && lsh.buckets % 2 == 0);
            QVERIFY(lsh.chunk >= 2 && lsh.chunk <= 64);
            QVERIFY(T < 16 || lsh.buckets * lsh.chunk >= T || lsh.chunk == 64);
            const LinformerParams linformer = linformerParams(suggestedKernelSpec("linformer", T));
            QVERIFY(linformer.k >= 1 && (linformer.k <= T || T < 4) && linformer.k <= 256);
            const PerformerParams performer = performerParams(suggestedKernelSpec("performer", T));
            QCOMPARE(performer.features, T >= 1024 ? 256 : 64);
        }
        QVERIFY(suggestedKernelSpec("full", 100).params.empty());
    }
};

QTEST_MAIN(TestSuggestedKernels)
#include "tst_suggestedkernels.moc"
