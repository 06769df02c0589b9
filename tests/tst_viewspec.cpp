#include "ablation/ablation.h"
#include "attentionmap/attentionmap.h"
#include "heads/heads.h"
#include "testbundle.h"
#include "tokenlines/tokenlines.h"
#include "util/error.h"
#include "view/viewanalysis.h"
#include "view/viewkinds.h"
#include "view/viewspec.h"

#include <QtTest>

#include <algorithm>
#include <fstream>
#include <string>

using atlas::ViewSpec;

class TestViewSpec : public QObject
{
    Q_OBJECT

private:
    // The message of the atlas::Error thrown by parsing `json`, or "" when nothing was thrown.
    static std::string errorOf(const std::string &json, const std::string &source = "lesson.json")
    {
        try {
            ViewSpec::fromJson(json, source);
        } catch (const atlas::Error &e) {
            return e.what();
        }
        return {};
    }

    static bool contains(const std::string &haystack, const std::string &needle)
    {
        return haystack.find(needle) != std::string::npos;
    }

private slots:
    // Every view of this list is there once (each from its folder, src/views/NAME/), and the tabs keep the order they
    // had before the views moved into folders, but for the Fourier view placed among the approximations and Sinkhorn
    // moved to end the Efficiency group, before the Adaptive group's views.
    void viewKinds()
    {
        const auto kinds = ViewSpec::viewKinds();
        QVERIFY(kinds.size() >= 37);
        for (const char *k : {"approximation", "attention", "heads", "kernels", "lines", "lsh", "mask", "next-token",
                 "pattern", "scaling", "tensor", "memory-timeline", "positions", "experts", "sparse-ffn", "sparsity",
                 "memory-graph", "memory-depth", "memory-tradeoff", "inversion-error", "neuron", "architecture",
                 "ablation", "objective", "fills", "tokenizer", "logit-lens", "rollout", "patching", "funnel",
                 "qk-norm", "early-exit", "layerdrop", "token-reduction", "sinkhorn", "lost-in-the-middle",
                 "adaptive-span", "quantization", "fourier", "needle", "halting", "steps", "position-loss"})
            QVERIFY2(std::count(kinds.begin(), kinds.end(), k) == 1, k);
        const auto mask = std::find(kinds.begin(), kinds.end(), "mask");
        QVERIFY(kinds.end() - mask > 3);
        QCOMPARE(std::vector<std::string>(mask, mask + 4),
            std::vector<std::string>({"mask", "scaling", "qk-norm", "neuron"}));
        const auto next = std::find(kinds.begin(), kinds.end(), "next-token");
        QVERIFY(kinds.end() - next > 8);
        QCOMPARE(std::vector<std::string>(next, next + 9),
            std::vector<std::string>({"next-token", "tokenizer", "tensor", "positions", "experts", "sparse-ffn",
                "quantization", "objective", "fills"}));
        const auto approximation = std::find(kinds.begin(), kinds.end(), "approximation");
        QVERIFY(kinds.end() - approximation > 10);
        QCOMPARE(std::vector<std::string>(approximation, approximation + 11),
            std::vector<std::string>({"approximation", "fourier", "pattern", "sinkhorn", "sparsity", "adaptive-span",
                "token-reduction", "funnel", "halting", "steps", "memory-timeline"}));
        const auto fills = std::find(kinds.begin(), kinds.end(), "fills");
        QVERIFY(kinds.end() - fills > 17);
        QCOMPARE(std::vector<std::string>(fills, fills + 18),
            std::vector<std::string>({"fills", "gradients", "norms", "recurrence", "position-loss", "logit-lens",
                "early-exit", "layerdrop", "lost-in-the-middle", "needle", "rollout", "logit-attribution", "head-kinds",
                "circuit", "patching", "features", "kernels", "lsh"}));
    }

    void roundTrip()
    {
        ViewSpec s;
        s.view = "lines";
        s.model = "models/my-gpt";
        s.positions = "rope-half";
        s.text = "Héllo \"quoted\" world\n";
        s.tokens = {3, 1, 4, 1, 5};
        s.padding = {4};
        s.layer = 2;
        s.head = -1;
        s.tensor = "layer.1.attn.q";
        s.scale = "log";
        s.colormap = "magma";
        s.topK = 7;
        s.position = 3;
        s.theme = "dark";
        s.attention = "longformer";
        s.attentionParams = {"window=4"};
        s.attentionLayers = {0, 2};
        s.set(atlas::views::tokenlines::kHiddenHeads, {1, 3});
        s.set(atlas::views::ablation::kAblateHeads, "0.1,1.3");
        s.set(atlas::views::heads::kThumbnailSize, 240);
        s.set(atlas::views::ablation::kAblation, "mean");
        s.depth = 8;
        s.set(atlas::views::attentionmap::kVeilQuery, true);
        QVERIFY(!(s == ViewSpec()));

        const std::string json = s.toJson();
        const ViewSpec back = ViewSpec::fromJson(json, "roundtrip");
        QVERIFY(back == s);
        QCOMPARE(back.text, s.text);
        QCOMPARE(back.tokens, s.tokens);
        QCOMPARE(back.topK, 7);
        QCOMPARE(back.attentionLayers, (std::vector<int> {0, 2}));
        QCOMPARE(back.get(atlas::views::tokenlines::kHiddenHeads), (std::vector<int> {1, 3}));
        QCOMPARE(back.depth, 8);
        QVERIFY(back.get(atlas::views::attentionmap::kVeilQuery));
    }

    // docs/view-spec.md's table of keys is the one the schema makes: a key added to specKeys() is documented, and the
    // docs list no key the parser lacks. On a difference the table to paste is written beside the build.
    void theDocsTableIsTheSchemas()
    {
        std::ifstream docs(ATLAS_SOURCE_DIR "/docs/view-spec.md");
        QVERIFY(docs);
        std::string line, table;
        bool inside = false;
        while (std::getline(docs, line)) {
            inside = inside || line.starts_with("| key | type | default | read by | meaning |");
            if (inside && line.empty())
                break;
            if (inside)
                table += line + "\n";
        }
        const std::string expected = atlas::specKeysMarkdown();
        if (table != expected) {
            // Beside the test binary, not in the working directory (which may be a checkout).
            const QString path = QCoreApplication::applicationDirPath() + "/view-spec-keys.md";
            std::ofstream(path.toStdString()) << expected;
            QFAIL(qPrintable(
                "docs/view-spec.md's table of keys differs from specKeysMarkdown(): paste " + path + " over it"));
        }
    }

    // A key that lists the views reading it is left out of a lesson step's JSON for another view, and `lesson check`
    // names it (unreadKeys); the keys every view reads are always kept. Each listed view exists.
    void keysBelongToTheViewsThatReadThem()
    {
        for (const atlas::SpecKey &key : atlas::specKeys())
            for (const std::string &view : key.views)
                QVERIFY2(atlas::findViewKind(view), (key.name + ": " + view).c_str());
        ViewSpec spec;
        spec.view = "attention";
        spec.topK = 7; // the next-token view's
        spec.layer = 1; // every view's
        QCOMPARE(atlas::unreadKeys(spec), std::vector<std::string> {"top_k"});
        const std::string json = spec.toJson(true);
        QVERIFY2(!contains(json, "top_k") && contains(json, "\"layer\": 1"), json.c_str());
        spec.view = "next-token";
        QVERIFY(atlas::unreadKeys(spec).empty());
        QVERIFY(contains(spec.toJson(true), "\"top_k\": 7"));
        QCOMPARE(ViewSpec::fromJson(spec.toJson(true), "t"), spec);
    }

    // What an analysis was made for: the keys its request reads, which the view reads; no other key moves it.
    void analysesAreKeyedByTheKeysTheyRead()
    {
        for (const atlas::ViewKind &kind : atlas::viewKinds()) {
            QVERIFY2(kind.request || kind.analysisKeys.empty(), kind.kind.c_str());
            for (const std::string &name : kind.analysisKeys) {
                const atlas::SpecKey *key = atlas::findSpecKey(name);
                QVERIFY2(key && atlas::viewReadsKey(kind.kind, *key), (kind.kind + ": " + name).c_str());
            }
        }
        ViewSpec spec;
        spec.view = "fills";
        spec.seed = 3;
        const std::string settings = atlas::analysisSettings(spec);
        QVERIFY2(contains(settings, "\"seed\":3") && contains(settings, "fills"), settings.c_str());
        QVERIFY(!contains(settings, "layer"));
        QCOMPARE(atlas::analysisSettings(spec, {"seed"}).find("seed"), std::string::npos);
        spec.layer = 2; // not a key the fills read: the same settings
        QCOMPARE(atlas::analysisSettings(spec), settings);
        spec.view = "patching"; // the same values, another view: other settings
        QVERIFY(atlas::analysisSettings(spec) != settings);
    }

    // Each view's help in the app is its folder's NAME.md: what it shows, then the keys it reads.
    void everyViewHasItsHelp()
    {
        for (const atlas::ViewKind &kind : atlas::viewKinds()) {
            QVERIFY2(contains(kind.help, "**Keys it reads:** "), kind.kind.c_str());
            QVERIFY2(!contains(kind.help, "Shows:") && !contains(kind.help, "# The"), kind.kind.c_str());
        }
        QVERIFY(contains(atlas::findViewKind("qk-norm")->help, "What QK-norm"));
    }

    void everyKeyIsWrittenAndReadBack()
    {
        const std::string json = ViewSpec().toJson();
        for (const atlas::SpecKey &key : atlas::specKeys())
            QVERIFY2(contains(json, "\n  \"" + key.name + "\": "), key.name.c_str());
    }

    void toJsonIsPrettyWithEveryKey()
    {
        const std::string json = ViewSpec().toJson();
        for (const char *key : {"view", "model", "text", "tokens", "padding", "layer", "head", "tensor", "scale",
                 "colormap", "top_k", "position", "theme"})
            QVERIFY2(contains(json, std::string("\n  \"") + key + "\": "), key);
        QVERIFY(json.starts_with("{\n  \"view\": \"attention\""));
        QVERIFY(ViewSpec::fromJson(json, "defaults") == ViewSpec());
    }

    void defaultsForMissingKeys()
    {
        const ViewSpec d;
        const ViewSpec s = ViewSpec::fromJson(R"({"view": "tensor", "layer": 1})", "x");
        QCOMPARE(s.view, std::string("tensor"));
        QCOMPARE(s.layer, 1);
        QCOMPARE(s.head, d.head);
        QCOMPARE(s.model, d.model);
        QCOMPARE(s.text, d.text);
        QCOMPARE(s.topK, d.topK);
        QCOMPARE(s.position, d.position);
        QCOMPARE(s.theme, d.theme);
        QCOMPARE(s.colormap, d.colormap);
        QVERIFY(ViewSpec::fromJson("{}", "empty") == d);
    }

    void boundaryValuesAccepted()
    {
        const ViewSpec s = ViewSpec::fromJson(R"({"head": -1, "layer": 0, "top_k": 1, "position": -1})", "x");
        QCOMPARE(s.head, -1);
        QCOMPARE(s.topK, 1);
    }

    void unknownKeySuggestsClosest()
    {
        const std::string m = errorOf(R"({"layr": 1})", "lessons/intro.json step 2");
        QVERIFY2(m.starts_with("lessons/intro.json step 2: key 'layr': "), m.c_str());
        QVERIFY2(contains(m, "did you mean 'layer'?"), m.c_str());

        const std::string m2 = errorOf(R"({"topk": 3})");
        QVERIFY2(contains(m2, "key 'topk'") && contains(m2, "did you mean 'top_k'?"), m2.c_str());
    }

    void wrongType_data()
    {
        QTest::addColumn<QString>("json");
        QTest::addColumn<QString>("key");
        QTest::newRow("layer string") << R"({"layer": "2"})"
                                      << "layer";
        QTest::newRow("head float") << R"({"head": 1.5})"
                                    << "head";
        QTest::newRow("view number") << R"({"view": 3})"
                                     << "view";
        QTest::newRow("tokens not array") << R"({"tokens": "1 2"})"
                                          << "tokens";
        QTest::newRow("tokens element") << R"({"tokens": [1, "a"]})"
                                        << "tokens";
        QTest::newRow("padding negative") << R"({"padding": [-1]})"
                                          << "padding";
        QTest::newRow("text null") << R"({"text": null})"
                                   << "text";
        QTest::newRow("top_k bool") << R"({"top_k": true})"
                                    << "top_k";
        QTest::newRow("layer huge") << R"({"layer": 99999999999})"
                                    << "layer";
        QTest::newRow("veil_query number") << R"({"veil_query": 1})"
                                           << "veil_query";
    }

    void wrongType()
    {
        QFETCH(QString, json);
        QFETCH(QString, key);
        const std::string m = errorOf(json.toStdString(), "clipboard");
        QVERIFY2(m.starts_with("clipboard: key '" + key.toStdString()), m.c_str());
    }

    void badValues_data()
    {
        QTest::addColumn<QString>("json");
        QTest::addColumn<QString>("key");
        QTest::addColumn<QString>("reason");
        QTest::newRow("view kind") << R"({"view": "atention"})"
                                   << "view"
                                   << "did you mean 'attention'?";
        QTest::newRow("scale") << R"({"scale": "cubic"})"
                               << "scale"
                               << "unknown value 'cubic'";
        QTest::newRow("colormap") << R"({"colormap": "jet"})"
                                  << "colormap"
                                  << "unknown value 'jet'";
        QTest::newRow("theme") << R"({"theme": "blue"})"
                               << "theme"
                               << "unknown value 'blue'";
        QTest::newRow("negative layer") << R"({"layer": -1})"
                                        << "layer"
                                        << ">= 0";
        QTest::newRow("head -2") << R"({"head": -2})"
                                 << "head"
                                 << "got -2";
        QTest::newRow("top_k 0") << R"({"top_k": 0})"
                                 << "top_k"
                                 << ">= 1";
        QTest::newRow("position -2") << R"({"position": -2})"
                                     << "position"
                                     << "got -2";
        QTest::newRow("attention layer -1") << R"({"attention_layers": [0, -1]})"
                                            << "attention_layers"
                                            << "'attention_layers[1]' must be a non-negative integer";
        QTest::newRow("depth 65") << R"({"depth": 65})"
                                  << "depth"
                                  << "at most 64 blocks";
        QTest::newRow("depth -1") << R"({"depth": -1})"
                                  << "depth"
                                  << "got -1";
        QTest::newRow("hidden head text") << R"({"hidden_heads": ["h1"]})"
                                          << "hidden_heads"
                                          << "'hidden_heads[0]' must be a non-negative integer";
        QTest::newRow("ablated head without a dot") << R"({"ablate_heads": "0.1,3"})"
                                                    << "ablate_heads"
                                                    << "'3' is not layer.head";
        QTest::newRow("ablated head twice") << R"({"ablate_heads": "1.1,1.1"})"
                                            << "ablate_heads"
                                            << "listed twice";
        QTest::newRow("thumbnail 20") << R"({"thumbnail_size": 20})"
                                      << "thumbnail_size"
                                      << "48 … 1024 pixels";
        QTest::newRow("ablation") << R"({"ablation": "half"})"
                                  << "ablation"
                                  << "unknown value 'half'";
        // A number that may be 0 says so.
        QTest::newRow("steer_temperature 9") << R"({"steer_temperature": 9})"
                                             << "steer_temperature"
                                             << "must be at least 0 and at most 5.0, got 9";
        QTest::newRow("steer_temperature -0.5") << R"({"steer_temperature": -0.5})"
                                                << "steer_temperature"
                                                << "must be at least 0";
    }

    void badValues()
    {
        QFETCH(QString, json);
        QFETCH(QString, key);
        QFETCH(QString, reason);
        const std::string m = errorOf(json.toStdString(), "spec.json");
        QVERIFY2(m.starts_with("spec.json: key '" + key.toStdString()), m.c_str());
        QVERIFY2(contains(m, reason.toStdString()), m.c_str());
    }

    void badJson()
    {
        const std::string m = errorOf(R"({"layer": 1,})", "session.json");
        QVERIFY2(m.starts_with("session.json: not valid JSON: "), m.c_str());
        QVERIFY2(contains(m, "line 1"), m.c_str());
        QVERIFY2(!contains(m, "[json.exception"), m.c_str());

        QVERIFY(errorOf("", "empty.json").starts_with("empty.json: not valid JSON: "));
        const std::string notObject = errorOf("[1, 2]", "arr.json");
        QVERIFY2(notObject.starts_with("arr.json: ") && contains(notObject, "object"), notObject.c_str());
    }
};

QTEST_GUILESS_MAIN(TestViewSpec)
#include "tst_viewspec.moc"
