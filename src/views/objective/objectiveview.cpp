#include "objective/objectiveview.h"

#include "analysis/maskedfills.h"
#include "analysis/objectiveexample.h"
#include "model/modeltokenizer.h"
#include "util/error.h"
#include "view/specrun.h"
#include "view/viewanalysis.h"
#include "views/heatmapplot.h"
#include "views/objectivecolors.h"
#include "views/viewfonts.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QTextDocument>
#include <QVBoxLayout>

#include <algorithm>
#include <iterator>
#include <limits>
#include <map>

namespace atlas {

namespace {

const QColor kMaskedFill = fateColor(CorruptedText::Fate::Masked), kRandomFill = fateColor(CorruptedText::Fate::Random),
             kUnchangedFill = fateColor(CorruptedText::Fate::Unchanged);

QString swatch(const QColor &c)
{
    return QStringLiteral("<span style=\"background:%1\">&nbsp;&nbsp;&nbsp;&nbsp;</span>").arg(c.name());
}

QString number(double value)
{
    return formatNumber(value, 2);
}

// The mask as the Mask view draws it (0 attended, −∞ not), or null when nothing is masked: a mask with no −∞ says
// only "both ways", which the strip's title says, and its panel would take the width the wrapped chips need (three
// strips of 89 tokens overflowed a 720-line projector beside it).
std::shared_ptr<const std::vector<float>> maskCells(const ObjectiveExample &example)
{
    if (std::find(example.mask.begin(), example.mask.end(), 0) == example.mask.end())
        return nullptr;
    auto cells = std::make_shared<std::vector<float>>(example.mask.size());
    for (size_t i = 0; i < cells->size(); ++i)
        (*cells)[i] = example.mask[i] ? 0.0f : -std::numeric_limits<float>::infinity();
    return cells;
}

} // namespace

ObjectiveView::ObjectiveView(QWidget *parent)
    : View(parent)
{
    m_controls = new QWidget(this);
    auto *row = new QHBoxLayout(m_controls);
    row->setContentsMargins(0, 0, 0, 0);
    m_objective = new QComboBox(m_controls);
    m_objective->addItem(tr("the model's own"), QString());
    m_objective->addItem(tr("next token (GPT)"), QStringLiteral("next"));
    m_objective->addItem(tr("masked LM (BERT)"), QStringLiteral("mlm"));
    m_objective->addItem(tr("span corruption (T5)"), QStringLiteral("span"));
    m_objective->addItem(tr("prefix LM"), QStringLiteral("prefix"));
    m_objective->addItem(tr("next sentence (BERT)"), QStringLiteral("nsp"));
    m_objective->setToolTip(tr("The pretraining objective applied to the input"));
    m_seed = new QSpinBox(m_controls);
    m_seed->setRange(0, std::numeric_limits<int>::max());
    m_seed->setToolTip(tr("The seed of the draw: which tokens are chosen, what they become, where spans and the prefix "
                          "end"));
    m_redraw = new QPushButton(tr("New draw"), m_controls);
    m_redraw->setToolTip(tr("Draw again with the next seed"));
    m_fill = new QPushButton(tr("Fill with the model \u25B8"), m_controls);
    m_fill->setToolTip(tr("Run the model on this corrupted input and show what it names at each chosen position "
                          "(the Masked fills view)"));
    row->addWidget(new QLabel(tr("Objective:"), m_controls));
    row->addWidget(m_objective);
    row->addWidget(new QLabel(tr("Seed:"), m_controls));
    row->addWidget(m_seed);
    row->addWidget(m_redraw);
    row->addWidget(m_fill);
    row->addStretch(1);
    connect(m_objective, &QComboBox::activated, this,
        [this](int index) { editSpec(m_objective->itemData(index).toString(), m_spec.seed); });
    connect(m_seed, &QSpinBox::valueChanged, this, [this](int seed) {
        if (seed != m_spec.seed)
            editSpec(QString::fromStdString(m_spec.objective), seed);
    });
    connect(m_redraw, &QPushButton::clicked, this, [this] {
        if (m_spec.seed < std::numeric_limits<int>::max())
            editSpec(QString::fromStdString(m_spec.objective), m_spec.seed + 1);
    });
    connect(m_fill, &QPushButton::clicked, this,
        [this] { editSpec(QStringLiteral("mlm"), m_spec.seed, QStringLiteral("fills")); });

    m_formula = newFormulaLabel();
    m_message = newMessageLabel();
    m_body = new QWidget(this);
    auto *rows = new QVBoxLayout;
    rows->setContentsMargins(0, 0, 0, 0);
    const std::pair<QLabel **, TokenChipStrip **> rowWidgets[]
        = {{&m_textTitle, &m_text}, {&m_readTitle, &m_read}, {&m_targetTitle, &m_targets}};
    for (auto [title, strip] : rowWidgets) {
        *title = new QLabel(m_body);
        (*title)->setWordWrap(true);
        *strip = new TokenChipStrip(TokenChipStrip::Layout::Wrap, m_body);
        (*strip)->setClickHint(false, QString());
        rows->addWidget(*title);
        rows->addWidget(*strip);
    }
    m_counts = new QLabel(m_body);
    m_counts->setTextFormat(Qt::RichText);
    rows->addWidget(m_counts);
    rows->addStretch(1);
    m_mask = new HeatmapPlot(m_body);
    m_mask->setMinimumSize(300, 260);
    m_mask->setMaskMode(true);
    m_mask->setMaskLabels(tr("masked"), tr("attended"));
    m_mask->setIndexInLabels(false);
    auto *body = new QHBoxLayout(m_body);
    body->setContentsMargins(0, 0, 0, 0);
    body->addLayout(rows, 5); // wrapped chips: the wider their rows, the fewer (a long text on 720 lines)
    body->addWidget(m_mask, 2);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_controls);
    layout->addWidget(m_formula);
    layout->addWidget(m_message, 1);
    layout->addWidget(m_body, 1);
    showMessage(QString::fromUtf8(kNothingComputed));
}

ObjectiveView::~ObjectiveView() = default;

QString ObjectiveView::message() const
{
    return m_body->isHidden() ? m_message->text() : QString();
}

QString ObjectiveView::formula() const
{
    return m_formula->text();
}

QString ObjectiveView::counts() const
{
    if (m_counts->isHidden())
        return {};
    QTextDocument document;
    document.setHtml(m_counts->text());
    return document.toPlainText();
}

void ObjectiveView::showMessage(const QString &text)
{
    m_example.reset();
    m_formula->clear();
    m_message->setFont(sizedFont(font(), 12));
    m_message->setText(text);
    m_message->show();
    m_body->hide();
}

void ObjectiveView::editSpec(const QString &objective, int seed, const QString &view)
{
    ViewSpec spec = m_spec;
    spec.objective = objective.toStdString();
    spec.seed = seed;
    if (!view.isEmpty())
        spec.view = view.toStdString();
    if (spec != m_spec)
        emit specEdited(spec);
}

QString ObjectiveView::label(int id) const
{
    if (m_example)
        if (const auto it = m_example->specialNames.find(id); it != m_example->specialNames.end())
            return QString::fromStdString(it->second);
    return vocabularyLabel(m_input, id);
}

QStringList ObjectiveView::labels(const std::vector<int> &ids) const
{
    QStringList out;
    for (int id : ids)
        out << label(id);
    return out;
}

void ObjectiveView::setRow(QLabel *title, TokenChipStrip *strip, const QString &text, const std::vector<int> &ids,
    std::vector<TokenChipStrip::ChipMark> marks)
{
    setChipRow(title, strip, text, labels(ids), std::move(marks));
}

void ObjectiveView::setChipRow(QLabel *title, TokenChipStrip *strip, const QString &text, const QStringList &chips,
    std::vector<TokenChipStrip::ChipMark> marks)
{
    title->setVisible(!text.isEmpty());
    strip->setVisible(!text.isEmpty());
    if (text.isEmpty())
        return;
    title->setFont(sizedFont(font(), 11, true));
    title->setText(text);
    strip->setFont(sizedFont(font(), 10));
    strip->setTokens(chips, {}, {});
    strip->setMarks(std::move(marks));
}

void ObjectiveView::refresh()
{
    m_formula->setFont(sizedFont(font(), 11));
    {
        const QSignalBlocker blockObjective(m_objective), blockSeed(m_seed);
        m_objective->setCurrentIndex(std::max(0, m_objective->findData(QString::fromStdString(m_spec.objective))));
        m_seed->setValue(m_spec.seed);
    }
    if (!m_input.model || m_input.tokenIds.empty()) {
        m_job.drop();
        return showMessage(QString::fromUtf8(kNothingComputed));
    }
    const ModelConfig &config = m_input.model->config;
    const Objective objective = objectiveOf(m_spec, config);
    std::vector<int> text = objectiveText(config, objective, m_input.tokenIds, m_input.sourceIds);
    const std::shared_ptr<const Tokenizer> tokenizer
        = m_input.tokenizer ? m_input.tokenizer : tokenizerForModel(*m_input.model);
    const int64_t cells = int64_t(text.size()) * int64_t(text.size());
    auto build = [model = m_input.model, tokenizer, text = std::move(text), objective, seed = uint64_t(m_spec.seed)](
                     const std::atomic<bool> &) {
        ObjectiveDrawing out;
        try {
            auto example
                = std::make_shared<const ObjectiveExample>(objectiveExample(*model, *tokenizer, text, objective, seed));
            out.maskCells = maskCells(*example);
            out.example = std::move(example);
        } catch (const std::exception &e) {
            out.problem = tr("The %1 objective cannot take this input: %2.")
                              .arg(QString::fromUtf8(objectiveName(objective)), QString::fromUtf8(e.what()));
        }
        return out;
    };
    if (cells > HeatmapPlot::kPoolOnWorkerCells && !drawnHeadless(this)) {
        showMessage(tr("Drawing the example…"));
        m_job.start(std::move(build));
    } else {
        m_job.runNow(build);
    }
}

void ObjectiveView::adopt(const ObjectiveDrawing &drawing)
{
    if (!drawing.example)
        return showMessage(drawing.problem);
    m_example = drawing.example;
    m_maskCells = drawing.maskCells;
    const ModelConfig &config = m_input.model->config;
    const Objective objective = m_example->text.objective;
    m_fill->setVisible(objective == Objective::MaskedLm && maskedFillsProblem(config, m_input.model->name).empty());
    m_message->hide();
    m_body->show();
    m_counts->hide();
    switch (objective) {
    case Objective::MaskedLm:
        drawMaskedLm();
        break;
    case Objective::SpanCorruption:
        drawSpans();
        break;
    case Objective::NextToken:
    case Objective::PrefixLm:
        drawPrefixOrNext();
        break;
    case Objective::NextSentence:
        drawNextSentence();
        break;
    }
    if (!m_example->specialsInVocabulary)
        m_formula->setText(m_formula->text()
            + tr(" Model %1 has no %2: it is shown by name, past the model's vocabulary, and this model cannot read "
                 "the input.")
                  .arg(QString::fromStdString(m_input.model->name),
                      objective == Objective::MaskedLm           ? tr("[MASK] token")
                          : objective == Objective::NextSentence ? tr("[CLS] and [SEP] tokens")
                                                                 : tr("sentinels")));
    drawMask();
}

void ObjectiveView::drawMaskedLm()
{
    const ObjectiveExample &e = *m_example;
    const CorruptedText &c = e.text;
    const int T = int(e.original.size());
    std::vector<TokenChipStrip::ChipMark> text(static_cast<size_t>(T)), read(static_cast<size_t>(T)), targets;
    std::vector<int> targetIds;
    for (int t = 0; t < T; ++t) {
        const CorruptedText::Fate fate = c.fates[size_t(t)];
        if (fate == CorruptedText::Fate::Kept)
            continue;
        const bool masked = fate == CorruptedText::Fate::Masked, random = fate == CorruptedText::Fate::Random;
        const QColor fill = fateColor(fate);
        const QString became = masked ? tr("[MASK]") : random ? tr("random") : tr("kept");
        const QString note = tr("Chosen: the model reads %1 here and must name '%2'")
                                 .arg(label(c.input[size_t(t)]), label(e.original[size_t(t)]));
        text[size_t(t)] = {fill, QStringLiteral("\u2192 ") + became, note};
        read[size_t(t)] = {fill, QString(), note};
        targetIds.push_back(e.original[size_t(t)]);
        targets.push_back({fill, QStringLiteral("@%1").arg(t), tr("Position %1").arg(t)});
    }
    setRow(m_textTitle, m_text, tr("The text: %1 of %2 tokens chosen").arg(e.chosen.measured).arg(T), e.original,
        std::move(text));
    setRow(m_readTitle, m_read, tr("What the model reads (both ways)"), c.input, std::move(read));
    setRow(
        m_targetTitle, m_targets, tr("What it must name, at the chosen positions only"), targetIds, std::move(targets));
    m_formula->setText(tr("BERT's masked LM (Devlin et al. 2019): round(0.15 \u00B7 %1) = %2 positions are chosen "
                          "(seed %3); each becomes [MASK] with probability 0.8, a random token with 0.1, or stays "
                          "with 0.1. The model reads the whole corrupted text both ways, and the loss counts its "
                          "prediction at the %2 chosen positions only.")
                           .arg(T)
                           .arg(e.chosen.measured)
                           .arg(m_spec.seed));
    const auto line = [](const QColor &c, const QString &what, const QString &rule, const RuleCount &n) {
        return QStringLiteral("<tr><td>%1 %2</td><td>%3</td><td align=\"right\">%4 \u00B1 %5</td>"
                              "<td align=\"right\"><b>%6</b></td></tr>")
            .arg(c.isValid() ? swatch(c) : QString(), what, rule, number(n.expected), number(n.spread))
            .arg(n.measured);
    };
    m_counts->setFont(sizedFont(font(), 10));
    m_counts->setText(QStringLiteral("<table cellspacing=\"0\" cellpadding=\"3\"><tr><th align=\"left\">%1</th>"
                                     "<th align=\"left\">%2</th><th align=\"right\">%3</th><th align=\"right\">%4</th>"
                                     "</tr>")
                          .arg(tr("Drawn"), tr("rule"), tr("expected"), tr("this draw"))
        + QStringLiteral("<tr><td>%1</td><td>%2</td><td align=\"right\">%3</td><td align=\"right\"><b>%4</b></td></tr>")
              .arg(tr("chosen"), tr("15 % of %1 tokens").arg(T), number(e.chosen.expected))
              .arg(e.chosen.measured)
        + line(kMaskedFill, tr("[MASK]"), tr("80 % of the chosen"), e.masked)
        + line(kRandomFill, tr("random token"), tr("10 % of the chosen"), e.random)
        + line(kUnchangedFill, tr("kept"), tr("10 % of the chosen"), e.unchanged) + QStringLiteral("</table>")
        + tr("<small>expected \u00B1 one binomial standard deviation \u221A(n p (1 \u2212 p)) over the %1 "
             "chosen</small>")
              .arg(e.chosen.measured));
    m_counts->show();
}

void ObjectiveView::drawSpans()
{
    const ObjectiveExample &e = *m_example;
    const CorruptedText &c = e.text;
    const int T = int(e.original.size());
    std::vector<TokenChipStrip::ChipMark> text(static_cast<size_t>(T)), read(c.input.size()), targets(c.targets.size());
    std::map<int, size_t> spanOfSentinel; // sentinel id → its span
    int noise = 0;
    for (size_t s = 0; s < c.spans.size(); ++s) {
        const QColor fill = spanColor(s);
        for (int t = c.spans[s].first; t < c.spans[s].second; ++t)
            text[size_t(t)] = {fill, tr("span %1").arg(s + 1), tr("In span %1").arg(s + 1)};
        noise += c.spans[s].second - c.spans[s].first;
    }
    int sentinelsSeen = 0;
    for (size_t i = 0; i < c.input.size(); ++i)
        if (e.specialNames.count(c.input[i]) && sentinelsSeen < int(c.spans.size()))
            spanOfSentinel[c.input[i]] = size_t(sentinelsSeen++);
    for (size_t i = 0; i < c.input.size(); ++i)
        if (const auto it = spanOfSentinel.find(c.input[i]); it != spanOfSentinel.end())
            read[i] = {spanColor(it->second), QString(), tr("Stands for span %1").arg(it->second + 1)};
    size_t current = c.spans.size(); // the span the targets are listing
    for (size_t i = 0; i < c.targets.size(); ++i) {
        if (const auto it = spanOfSentinel.find(c.targets[i]); it != spanOfSentinel.end())
            current = it->second;
        else if (e.specialNames.count(c.targets[i]))
            current = c.spans.size(); // the closing sentinel
        if (current < c.spans.size())
            targets[i] = {spanColor(current), QString(), tr("Span %1").arg(current + 1)};
    }
    setRow(m_textTitle, m_text, tr("The text: %1 spans, %2 of %3 tokens").arg(c.spans.size()).arg(noise).arg(T),
        e.original, std::move(text));
    setRow(m_readTitle, m_read,
        tr("What the encoder reads, both ways: each span replaced by one sentinel (%1 tokens)").arg(c.input.size()),
        c.input, std::move(read));
    setRow(m_targetTitle, m_targets,
        tr("What the decoder must write: each sentinel, then its span (%1 tokens)").arg(c.targets.size()), c.targets,
        std::move(targets));
    m_formula->setText(tr("T5's span corruption (Raffel et al. 2020): round(0.15 \u00B7 %1) = %2 tokens are noise, in "
                          "%3 spans of mean length 3 (seed %4). Each span becomes one sentinel in the encoder's input; "
                          "the decoder's target lists each sentinel followed by the span it hides, and a closing "
                          "sentinel. Filling the sentinels with the targets gives the text back.")
                           .arg(T)
                           .arg(noise)
                           .arg(c.spans.size())
                           .arg(m_spec.seed));
}

void ObjectiveView::drawPrefixOrNext()
{
    const ObjectiveExample &e = *m_example;
    const CorruptedText &c = e.text;
    const int T = int(e.original.size());
    const bool prefix = c.objective == Objective::PrefixLm;
    std::vector<TokenChipStrip::ChipMark> text(static_cast<size_t>(T)), targets;
    std::vector<int> targetIds;
    for (int t = 0; t < T; ++t) {
        if (prefix && t < c.prefix)
            text[size_t(t)] = {kMaskedFill, QString(), tr("In the prefix: seen both ways by every prefix position")};
        if (c.targets[size_t(t)] < 0)
            continue;
        targetIds.push_back(c.targets[size_t(t)]);
        targets.push_back({QColor(), QStringLiteral("@%1").arg(t), tr("Predicted at position %1").arg(t)});
    }
    setRow(m_textTitle, m_text,
        prefix ? tr("The text: a prefix of %1 tokens, then %2 to predict").arg(c.prefix).arg(T - c.prefix)
               : tr("The text: %1 tokens, read left to right").arg(T),
        e.original, std::move(text));
    setChipRow(m_readTitle, m_read, QString(), {}, {});
    setRow(m_targetTitle, m_targets,
        tr("What it must predict: the next token, at each position marked @ (%1)").arg(targetIds.size()), targetIds,
        std::move(targets));
    m_formula->setText(prefix
            ? tr("The prefix LM (Raffel et al. 2020, \u00A73.2.1): the first P = %1 tokens (drawn from seed %2) are a "
                 "prefix that sees itself both ways, as an encoder would; after it attention is causal, and each "
                 "position from P \u2212 1 on predicts the next token: %3 predictions count.")
                  .arg(c.prefix)
                  .arg(m_spec.seed)
                  .arg(T - c.prefix)
            : tr("GPT's next-token objective: the model reads the text as it is, and at every position t predicts "
                 "token t + 1; attention is causal (query i sees keys j \u2264 i), so no position sees what it must "
                 "predict: %1 predictions count.")
                  .arg(T - 1));
}

void ObjectiveView::drawNextSentence()
{
    const ObjectiveExample &e = *m_example;
    const CorruptedText &c = e.text;
    const int T = int(e.original.size());
    std::vector<TokenChipStrip::ChipMark> text(static_cast<size_t>(T)), read(c.input.size());
    for (int t = c.sentenceA.first; t < c.sentenceA.second; ++t)
        text[size_t(t)] = {spanColor(0), tr("A"), tr("Sentence A")};
    for (int t = c.sentenceB.first; t < c.sentenceB.second; ++t)
        text[size_t(t)] = {spanColor(1), tr("B"), tr("Sentence B")};
    for (size_t i = 0; i < c.input.size(); ++i)
        read[i] = {spanColor(size_t(c.segments[i])), tr("seg %1").arg(c.segments[i]),
            tr("Segment %1: %2").arg(c.segments[i]).arg(c.segments[i] == 0 ? tr("[CLS] A [SEP]") : tr("B [SEP]"))};
    const QString label = c.isNext ? tr("IsNext") : tr("NotNext");
    setRow(m_textTitle, m_text,
        tr("The text: sentence A, and sentence B %1").arg(c.isNext ? tr("after it") : tr("from elsewhere")), e.original,
        std::move(text));
    setRow(m_readTitle, m_read,
        tr("What the model reads: [CLS] A [SEP] B [SEP] (%1 tokens, both ways)").arg(c.input.size()), c.input,
        std::move(read));
    setChipRow(m_targetTitle, m_targets, tr("What it must predict, from [CLS]'s output: one of two classes"), {label},
        {{QColor(), tr("@0"), tr("Read at position 0, [CLS]")}});
    m_formula->setText(tr("BERT's next-sentence prediction (Devlin et al. 2019): sentence A, then as sentence B its "
                          "successor with probability 0.5 (IsNext) or another sentence (NotNext; BERT draws it from "
                          "another document, here from the rest of the text), seed %1. The model reads [CLS] A [SEP] "
                          "B [SEP], each token tagged with its segment (BERT adds a segment embedding, 0 or 1; this "
                          "project's models have none), and predicts the class from [CLS]'s output. This draw: %2. "
                          "BERT trains it beside the masked LM; RoBERTa (Liu et al. 2019) found it could be dropped.")
                           .arg(m_spec.seed)
                           .arg(label));
}

void ObjectiveView::drawMask()
{
    const CorruptedText &c = m_example->text;
    const int T = int(c.input.size());
    m_mask->setVisible(m_maskCells != nullptr); // none: see maskCells
    if (!m_maskCells)
        return;
    const QStringList tokens = labels(c.input);
    m_mask->setTheme(m_spec.theme);
    m_mask->setLabels(tokens, tokens);
    m_mask->setMatrix(m_maskCells->data(), T, T, m_maskCells);
    m_mask->setAxisTitles(tr("key j"), tr("query i"));
    m_mask->setTitle(c.objective == Objective::NextToken ? tr("The mask it implies: causal")
            : c.objective == Objective::PrefixLm         ? tr("The mask it implies: both ways over the prefix, causal "
                                                                      "after")
            : c.objective == Objective::SpanCorruption   ? tr("The encoder's mask over its input: both ways")
                                                         : tr("The mask it implies: both ways"));
    m_mask->setHoverText([this, tokens](int row, int col) {
        if (!m_example || row >= int(tokens.size()) || col >= int(tokens.size()))
            return QString();
        const bool allowed = m_example->mask[size_t(row) * size_t(tokens.size()) + size_t(col)];
        return tr("query %1 '%2', key %3 '%4': %5")
            .arg(row)
            .arg(tokens[row])
            .arg(col)
            .arg(tokens[col], allowed ? tr("attended") : tr("masked (\u2212\u221E)"));
    });
}

} // namespace atlas

std::unique_ptr<atlas::View> atlas::views::objective::makeView(QWidget *parent)
{
    return std::make_unique<ObjectiveView>(parent);
}
