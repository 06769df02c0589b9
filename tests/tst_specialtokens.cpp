// A model's special tokens on top of its tokenizer: typed names encode to their ids, ids read as their names in
// chips and decoded text, and the ordinary text around them goes through the model's own tokenizer.
#include "model/model.h"
#include "model/modeltokenizer.h"
#include "testbundle.h"
#include "tokenize/specialtokenstokenizer.h"

#include <QTest>

using namespace atlas;

class TestSpecialTokens : public QObject
{
    Q_OBJECT

private slots:
    void namesEncodeAndIdsReadAsNames()
    {
        Model model;
        model.config.tokenizer = "bytes";
        model.config.vocab = 260;
        model.config.specialTokens = {{"[MASK]", 256}, {"[MASK2]", 257}, {"<extra_id_0>", 258}};
        const auto tokenizer = tokenizerForModel(model);
        QCOMPARE(tokenizer->kind(), std::string("bytes"));
        QCOMPARE(tokenizer->encode("a[MASK]c"), (std::vector<int> {'a', 256, 'c'}));
        QCOMPARE(tokenizer->encode("[MASK2]"), (std::vector<int> {257})); // the longest name wins
        QCOMPARE(tokenizer->encode("[MASK"), (std::vector<int> {'[', 'M', 'A', 'S', 'K'}));
        QCOMPARE(tokenizer->encode("<extra_id_0><extra_id_0>"), (std::vector<int> {258, 258}));
        QCOMPARE(tokenizer->piece(256), std::string("[MASK]"));
        QCOMPARE(tokenizer->piece(' '), ByteTokenizer().piece(' '));
        const std::string text = "h\xC3\xA9[MASK] x<extra_id_0>"; // a two-byte character beside a special token
        QCOMPARE(tokenizer->decode(tokenizer->encode(text)), text);
        model.config.specialTokens.clear();
        QCOMPARE(tokenizerForModel(model)->encode("[MASK]").size(), size_t(6)); // plain bytes without specials
    }
};

QTEST_GUILESS_MAIN(TestSpecialTokens)
#include "tst_specialtokens.moc"
