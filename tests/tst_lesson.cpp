// The lesson format (docs/lessons.md): parsing, the file:line errors of malformed lessons, the semantic check
// against the models, a step's view after its actions, and appending a step.
#include "attentionmap/attentionmap.h"
#include "lesson/lesson.h"
#include "lesson/lessoncheck.h"
#include "testbundle.h"
#include "train/trainingsetup.h"
#include "util/error.h"

#include <QTest>

using namespace atlas;

namespace {

const char *kGood = R"(---
title: Heads
lecture: Deep dive (002)
minutes: 12
models: [reverse, tiny-bytes]
---

Intro text.

## The mirror head

Layer 0 reads the letter to copy.

```view
{"view": "attention", "model": "reverse", "text": "abcdefgh>hgfedcba", "layer": 0, "head": 3}
```

```actions
run-to layer.0.attn.probs
pad 5,6
param window=4
```

```question
predict: Which key does head 3 read from 'd'?
query: 13
answer: 2
explain: the mirror of 13 is 2
```

```question
choose: Why divide by √d?
- [ ] speed
- [x] variance
explain: q·k sums d terms.
```

```notes
Say it slowly.
```

## Mechanics

```python
print("a code block is text")
```

```view
{"view": "mask", "model": "tiny-bytes"}
```

```actions
generate 5 temperature=0.8 seed=3
train reverse steps=50 seed=2
```
)";

// The error parseLesson throws for `text`, or "" when it parses.
QString parseError(const std::string &text)
{
    try {
        parseLesson(text, "l.md");
    } catch (const Error &e) {
        return QString::fromStdString(e.what());
    }
    return {};
}

std::string withStep(const std::string &step)
{
    return "---\ntitle: t\nlecture: l\nminutes: 5\nmodels: reverse\n---\n\n## S\n\n" + step;
}

std::string repeated(const std::string &line, int times)
{
    std::string out;
    for (int i = 0; i < times; ++i)
        out += line;
    return out;
}

const std::string kView = "```view\n{\"view\": \"attention\", \"model\": \"reverse\", \"text\": \"abcd>dcba\"}\n```\n";

} // namespace

class TestLesson : public QObject
{
    Q_OBJECT

private slots:
    void parsesEveryPart()
    {
        const Lesson l = parseLesson(kGood, "l.md");
        QCOMPARE(l.title, std::string("Heads"));
        QCOMPARE(l.minutes, 12);
        QCOMPARE(l.models, (std::vector<std::string> {"reverse", "tiny-bytes"}));
        QCOMPARE(l.introduction, std::string("\nIntro text.\n\n"));
        QCOMPARE(l.steps.size(), size_t(2));
        const LessonStep &s = l.steps[0];
        QCOMPARE(s.title, std::string("The mirror head"));
        QCOMPARE(s.line, 10);
        QCOMPARE(s.specLine, 15);
        QCOMPARE(s.text, std::string("Layer 0 reads the letter to copy."));
        QCOMPARE(s.spec.head, 3);
        QCOMPARE(s.actions.size(), size_t(3));
        QCOMPARE(s.actions[1].positions, (std::vector<int> {5, 6}));
        QCOMPARE(s.questions.size(), size_t(2));
        QCOMPARE(int(s.questions[0].kind), int(LessonQuestion::Kind::Predict));
        QCOMPARE(s.questions[0].answer, 2);
        QCOMPARE(s.questions[1].correct, (std::vector<int> {1}));
        QCOMPARE(s.notes, std::string("Say it slowly.\n"));
        const LessonStep &m = l.steps[1];
        QVERIFY(m.text.find("print(") != std::string::npos); // an ordinary code block stays text
        QCOMPARE(m.actions[0].count, 5);
        QCOMPARE(m.actions[0].temperature, 0.8);
        QCOMPARE(m.actions[1].count, 50);
        QCOMPARE(m.actions[1].target, std::string("reverse"));

        // A train action's model options, as `train`'s, in order; lessonTrainingRun makes the run of them.
        std::string withModel = kGood;
        withModel.replace(withModel.find("steps=50"), 8, "steps=50 positions=alibi scale-embeddings experts=2");
        const LessonAction a = parseLesson(withModel, "l.md").steps[1].actions[1];
        QCOMPARE(a.trainOptions,
            (std::vector<std::pair<std::string, std::string>> {
                {"positions", "alibi"}, {"scale-embeddings", ""}, {"experts", "2"}}));
        const TrainingRun run = lessonTrainingRun(a);
        QCOMPARE(run.task, std::string("reverse"));
        QCOMPARE(run.options.steps, 50);
        QCOMPARE(run.options.seed, uint64_t(2));
        QCOMPARE(run.positions, std::string("alibi"));
        QVERIFY(run.scaleEmbeddings);
        QCOMPARE(run.experts, 2);
    }

    void malformedLessonsNameTheLineAndTheProblem_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("error");
        QTest::newRow("no front matter") << "## S\n"
                                         << "l.md:1: a lesson starts with front matter";
        QTest::newRow("front matter key") << "---\ntitle: t\nauthor: x\n---\n"
                                          << "l.md:3: unknown front matter key 'author'";
        QTest::newRow("minutes") << "---\ntitle: t\nminutes: soon\n---\n"
                                 << "l.md:3: minutes must be an integer";
        QTest::newRow("missing models") << "---\ntitle: t\nlecture: l\nminutes: 5\n---\n## S\n"
                                        << "l.md:1: the front matter has no 'models'";
        QTest::newRow("bad json") << QString::fromStdString(withStep("```view\n{\"layer\": }\n```\n"))
                                  << "l.md:11: not valid JSON";
        QTest::newRow("typo in a spec key") << QString::fromStdString(withStep("```view\n{\"layr\": 1}\n```\n"))
                                            << "l.md:11: key 'layr': unknown key (did you mean 'layer'?)";
        QTest::newRow("no view") << QString::fromStdString(withStep("Just text.\n"))
                                 << "l.md:8: step 'S' has no ```view block";
        QTest::newRow("two views") << QString::fromStdString(withStep(kView + kView))
                                   << "l.md:13: a step has one ```view block";
        QTest::newRow("unclosed") << QString::fromStdString(withStep("```view\n{}\n"))
                                  << "l.md:10: the block opened here";
        QTest::newRow("unknown action") << QString::fromStdString(withStep(kView + "```actions\nrewind\n```\n"))
                                        << "l.md:14: unknown action 'rewind'";
        QTest::newRow("train option out of range")
            << QString::fromStdString(withStep(kView + "```actions\ntrain reverse experts=100000\n```\n"))
            << "l.md:14: train: experts: 100000 is out of range (allowed: 0 to 1024)";
        QTest::newRow("train option unknown value")
            << QString::fromStdString(withStep(kView + "```actions\ntrain reverse positions=spiral\n```\n"))
            << "l.md:14: train: positions: unknown";
        QTest::newRow("an option given twice")
            << QString::fromStdString(withStep(kView + "```actions\ntrain reverse steps=10 steps=100000\n```\n"))
            << "l.md:14: action 'train': option 'steps' is given twice";
        QTest::newRow("33 actions in a step")
            << QString::fromStdString(withStep(kView + "```actions\n" + repeated("generate 1\n", 33) + "```\n"))
            << "l.md:46: a step has at most 32 actions; split the step";
        std::string manySteps; // 9 steps of 30 actions: the 257th action is the first too many
        for (int i = 0; i < 9; ++i)
            manySteps
                += "## S" + std::to_string(i) + "\n" + kView + "```actions\n" + repeated("generate 1\n", 30) + "```\n";
        QTest::newRow("257 actions in a lesson") << QString::fromStdString(withStep(kView) + manySteps)
                                                 << "a lesson has at most 256 actions; split the lesson";
        QTest::newRow("a step's text of 40 KiB")
            << QString::fromStdString(withStep(kView + repeated(std::string(79, 'x') + "\n", 512)))
            << "l.md:422: a step's text is longer than 32 KiB; split it into several steps";
        QTest::newRow("missing answer")
            << QString::fromStdString(
                   withStep(kView + "```question\nchoose: Why?\n- [ ] a\n- [ ] b\nexplain: x\n```\n"))
            << "l.md:13: a choose question needs at least two '- [ ]' options and an answer marked '- [x]'";
        QTest::newRow("no explanation") << QString::fromStdString(
            withStep(kView + "```question\npredict: Which?\nquery: 3\n```\n"))
                                        << "l.md:13: the question has no 'explain:' line";
        QTest::newRow("predict without query")
            << QString::fromStdString(withStep(kView + "```question\npredict: Which?\nexplain: x\n```\n"))
            << "l.md:13: a predict question needs 'query: <position>'";
        QTest::newRow("block before a step")
            << "---\ntitle: t\nlecture: l\nminutes: 5\nmodels: m\n---\n```view\n{}\n```\n"
            << "l.md:7: a ```view block belongs to a step";
    }

    void malformedLessonsNameTheLineAndTheProblem()
    {
        QFETCH(QString, text);
        QFETCH(QString, error);
        const QString actual = parseError(text.toStdString());
        QVERIFY2(
            actual.startsWith(error) || (!error.startsWith("l.md:") && actual.contains(error)), qPrintable(actual));
    }

    void theCheckHoldsStepsToTheirModels()
    {
        std::string text = kGood;
        const Lesson good = parseLesson(text, "l.md");
        QVERIFY(checkLesson(good).empty() == false); // param window=4 on full attention is not a kernel parameter
        text.replace(text.find("param window=4\n"), 15, "");
        const std::vector<std::string> none = checkLesson(parseLesson(text, "l.md"));
        QVERIFY2(none.empty(), none.empty() ? "" : none.front().c_str());

        const auto problems = [&](std::string from, const std::string &to) {
            text.replace(text.find(from), from.size(), to);
            const std::vector<std::string> found = checkLesson(parseLesson(text, "l.md"));
            text.replace(text.find(to), to.size(), from);
            return found.empty() ? std::string() : found.front();
        };
        QCOMPARE(problems("answer: 2", "answer: 4"),
            std::string(
                "l.md:23: the lesson says the answer is key 4, but the model's strongest key from query 13 is 2"));
        QCOMPARE(problems("run-to layer.0.attn.probs", "run-to layer.0.sofmax"),
            std::string("l.md:19: run-to: no operation or tensor 'layer.0.sofmax' in this model's program"));
        QCOMPARE(problems("\"head\": 3", "\"head\": 7"),
            std::string("l.md:15: head 7 does not exist: model 'reverse' has 4 heads"));
        QCOMPARE(problems("\"head\": 3", "\"head\": 3, \"top_k\": 5"),
            std::string("l.md:15: key 'top_k' is not read by the attention view (docs/view-spec.md: who reads it)"));
        QVERIFY(problems("\"model\": \"tiny-bytes\"", "\"model\": \"tiny-bites\"").starts_with("l.md:48: "));
        QVERIFY(problems("models: [reverse, tiny-bytes]", "models: [reverse, tiny-bytes, gpt5]")
                    .starts_with("l.md:1: model 'gpt5'"));
        QCOMPARE(
            problems("pad 5,6", "pad 5,60"), std::string("l.md:20: pad: position 60 is outside the input's 17 tokens"));
        // The answer is held to the step as it opens, its actions applied: with the mirrored key padded, the
        // head cannot read it, and a lesson still expecting it is wrong.
        QCOMPARE(problems("pad 5,6", "pad 2,3"),
            std::string(
                "l.md:23: the lesson says the answer is key 2, but the model's strongest key from query 13 is 13"));
        // A train action's model options: the lesson check makes the model the Train panel would, so a combination
        // the layouts do not have is found before class.
        QCOMPARE(problems("train reverse", "train reverse family=bert"),
            std::string("l.md:53: train: family bert: BERT's layout is a bidirectional encoder"
                        " with learned absolute positions, or with positions shaw its relative_key (a task such as mlm;"
                        " no other positions, no kv-heads, experts or reversible blocks)"));
        QCOMPARE(problems("train reverse", "train reverse span-penalty=0.1"),
            std::string("l.md:53: train: span-penalty needs adaptive-span: give adaptive-span R too"));
        QCOMPARE(problems("train reverse", "train reverse positions=alibi experts=2 layers=3"), std::string());
        QCOMPARE(problems("train reverse", "train reverso"), std::string("l.md:53: train: unknown task 'reverso'"));
        // A param action changes a parameter the spec already sets (as stepViewSpec shows the step), rather than
        // giving it twice.
        std::string longformer = text;
        longformer.replace(longformer.find("\"head\": 3}"), 10,
            "\"head\": 3, \"attention\": \"longformer\", \"attention_params\": [\"window=2\"], "
            "\"attention_layers\": [1]}");
        longformer.replace(longformer.find("pad 5,6\n"), 8, "pad 5,6\nparam window=4\n");
        const std::vector<std::string> replaced = checkLesson(parseLesson(longformer, "l.md"));
        QVERIFY2(replaced.empty(), replaced.empty() ? "" : replaced.front().c_str());
        QCOMPARE(
            stepViewSpec(parseLesson(longformer, "l.md"), parseLesson(longformer, "l.md").steps[0]).attentionParams,
            (std::vector<std::string> {"window=4"}));
    }

    void aStepsViewIsItsSpecAfterItsActions()
    {
        std::string text = kGood;
        text.replace(text.find("param window=4\n"), 15, "");
        const Lesson l = parseLesson(text, "l.md");
        const ViewSpec first = stepViewSpec(l, l.steps[0]);
        QCOMPARE(first.op, std::string("layer.0.attn.probs"));
        QCOMPARE(first.padding, (std::vector<int> {5, 6}));
        const ViewSpec second = stepViewSpec(l, l.steps[1]);
        QCOMPARE(second.tokens.size(), size_t(23 + 5)); // "The cat sat on the mat." and 5 generated bytes
        QCOMPARE(stepViewSpec(l, l.steps[1]).tokens, second.tokens); // sampled from the action's seed: repeatable
    }

    // A predict question's step opens with the question's row veiled (and its query singled out); other steps as
    // they are.
    void aPredictStepOpensVeiled()
    {
        const Lesson l = parseLesson(kGood, "l.md");
        const ViewSpec veiled = beforeReveal(l.steps[0].spec, l.steps[0]);
        QVERIFY(veiled.get(views::attentionmap::kVeilQuery));
        QCOMPARE(veiled.query, 13);
        QCOMPARE(veiled.head, 3);
        QVERIFY(!beforeReveal(l.steps[1].spec, l.steps[1]).get(views::attentionmap::kVeilQuery));
        QVERIFY(beforeReveal(l.steps[1].spec, l.steps[1]) == l.steps[1].spec);
    }

    void anAppendedStepReadsBack()
    {
        LessonStep step;
        step.title = "Added";
        step.spec.view = "heads";
        step.spec.model = "reverse";
        step.spec.layer = 1;
        step.notes = "n";
        const Lesson l = parseLesson(std::string(kGood) + stepToText(step), "l.md");
        QCOMPARE(l.steps.size(), size_t(3));
        QCOMPARE(l.steps[2].title, std::string("Added"));
        QCOMPARE(l.steps[2].spec, step.spec);
        QCOMPARE(l.steps[2].notes, std::string("n\n"));
        QVERIFY(stepToText(step).find("\"head\"") == std::string::npos); // only the keys that differ
    }
};

QTEST_GUILESS_MAIN(TestLesson)
#include "tst_lesson.moc"
