#include "fills/fillsview.h"

#include "fills/fills.h"
#include "tokenize/tokenizer.h"
#include "util/text.h"
#include "views/fillcards.h"
#include "views/objectivecolors.h"
#include "views/viewfonts.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QVBoxLayout>

namespace atlas {

namespace {

constexpr int kContext = 4; // tokens shown each side of a hidden one

} // namespace

FillsView::FillsView(QWidget *parent)
    : View(parent)
{
    m_controls = new QWidget(this);
    auto *row = new QHBoxLayout(m_controls);
    row->setContentsMargins(0, 0, 0, 0);
    m_mode = new QPushButton(m_controls);
    row->addWidget(m_mode);
    row->addStretch(1);
    connect(m_mode, &QPushButton::clicked, this, [this] {
        ViewSpec spec = m_spec;
        spec.objective = spec.objective == "mlm" ? std::string() : std::string("mlm");
        emit specEdited(spec);
    });
    m_formula = newFormulaLabel();
    m_message = newMessageLabel();
    m_cards = new FillCards;
    m_scroll = new QScrollArea(this);
    m_scroll->setWidgetResizable(true);
    m_scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff); // the cards wrap to the width
    m_scroll->setFrameShape(QFrame::NoFrame);
    m_scroll->setWidget(m_cards);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_controls);
    layout->addWidget(m_formula);
    layout->addWidget(m_message, 1);
    layout->addWidget(m_scroll, 1);
    showMessage(QString::fromUtf8(kNothingComputed));
}

QString FillsView::message() const
{
    return m_scroll->isHidden() ? m_message->text() : QString();
}

QString FillsView::formula() const
{
    return m_formula->text();
}

void FillsView::showMessage(const QString &text)
{
    m_drawn.reset();
    m_formula->clear();
    m_message->setFont(sizedFont(font(), 12));
    m_message->setText(text);
    m_message->show();
    m_scroll->hide();
}

void FillsView::setContext(FillCards::Card &card, const std::vector<int> &read, int position) const
{
    // WordPiece marks the pieces that continue a word (##ing), not the words' starts: those get a space back.
    const QString prefix
        = m_input.tokenizer ? QString::fromStdString(m_input.tokenizer->continuationPrefix()) : QString();
    const bool wordPieces = !prefix.isEmpty();
    const auto label = [this, &prefix](int id, bool first) {
        const QString piece = vocabularyLabel(m_input, id);
        if (prefix.isEmpty())
            return piece;
        return piece.startsWith(prefix) ? piece.mid(prefix.size()) : first ? piece : QLatin1Char(' ') + piece;
    };
    const int start = std::max(0, position - kContext);
    for (int t = start; t < position; ++t)
        card.before += label(read[size_t(t)], t == start);
    card.hidden = label(read[size_t(position)], true);
    if (wordPieces && !vocabularyLabel(m_input, read[size_t(position)]).startsWith(prefix))
        card.before += QLatin1Char(' ');
    for (int t = position + 1; t < std::min(int(read.size()), position + kContext + 1); ++t)
        card.after += label(read[size_t(t)], false);
}

void FillsView::refresh()
{
    m_formula->setFont(sizedFont(font(), 11));
    m_mode->setText(m_spec.objective == "mlm" ? tr("Fill the [MASK]s I typed")
                                              : tr("Corrupt as BERT does (seed %1)").arg(m_spec.seed));
    m_mode->setToolTip(m_spec.objective == "mlm"
            ? tr("Fill the [MASK]s the input holds, as typed")
            : tr("Hide 15 % of the input as BERT's pretraining does (the Objectives view shows the draw) and fill "
                 "every chosen position"));
    m_mode->setVisible(m_input.model && maskedFillsProblem(m_input.model->config, m_input.model->name).empty());
    const auto *analysis = currentAnalysis<FillsAnalysis>();
    if (analysis == nullptr)
        return showMessage(!m_input.analysis.problem.isEmpty() ? m_input.analysis.problem
                : m_input.analysis.pending                     ? tr("Computing…")
                                                               : QString::fromUtf8(kNothingComputed));
    m_drawn = std::make_shared<FillsAnalysis>(*analysis);
    const MaskedFills &f = m_drawn->fills;
    const auto label = [this](int id) { return vocabularyLabel(m_input, id); };
    std::vector<FillCards::Card> cards;
    for (const MaskedFill &fill : f.fills) {
        FillCards::Card card;
        card.title = fill.original < 0                 ? tr("position %1: [MASK]").arg(fill.position)
            : fill.fate == CorruptedText::Fate::Masked ? tr("position %1: [MASK]").arg(fill.position)
            : fill.fate == CorruptedText::Fate::Random ? tr("position %1: random token").arg(fill.position)
                                                       : tr("position %1: kept").arg(fill.position);
        card.fill = fateColor(fill.fate);
        setContext(card, f.read, fill.position);
        for (const auto &[id, p] : fill.top)
            card.rows.push_back({label(id), double(p), id == fill.original});
        if (fill.original >= 0)
            card.footer = fill.originalRank == 0
                ? tr("'%1' named first (%2)").arg(label(fill.original), formatPercent(fill.originalProbability))
                : tr("original '%1': rank %2, %3")
                      .arg(label(fill.original))
                      .arg(fill.originalRank + 1)
                      .arg(formatPercent(fill.originalProbability));
        cards.push_back(std::move(card));
    }
    m_cards->setFont(sizedFont(font(), 10));
    m_cards->setCards(std::move(cards));
    const QString logits = logitsFormula(m_input); // BERT's has a transform and an output bias before the softmax
    m_formula->setText(m_drawn->corrupted
            ? tr("BERT's corruption from seed %1 chose %2 positions; the model read the corrupted text both ways and "
                 "named the original first at %3 of them (%4). The bars are its output at each position, "
                 "softmax(Z) with %5: the token it believes belongs there.")
                  .arg(m_drawn->seed)
                  .arg(f.known)
                  .arg(f.named)
                  .arg(formatPercent(f.known ? double(f.named) / f.known : 0.0, 2))
                  .arg(logits)
            : tr("The input hides %1 behind [MASK]; the model reads the text both ways and its output at each "
                 "position, softmax(Z) with %2, names the token it believes belongs there.")
                  .arg(QString::fromStdString(countOf(f.fills.size(), "token")))
                  .arg(logits));
    m_message->hide();
    m_scroll->show();
}

} // namespace atlas

std::unique_ptr<atlas::View> atlas::views::fills::makeView(QWidget *parent)
{
    return std::make_unique<FillsView>(parent);
}
