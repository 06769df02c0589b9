#include "headkinds/headkindsview.h"

#include "headkinds/headkinds.h"
#include "views/colormaps.h"
#include "views/headthumbnail.h"
#include "views/plottheme.h"
#include "views/viewfonts.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QHelpEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollArea>
#include <QSignalBlocker>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>

namespace atlas {

namespace {

constexpr int kPad = 8;

QString sentenceStart(QString text)
{
    if (!text.isEmpty())
        text[0] = text[0].toUpper();
    return text;
}

HeadClass kindNamed(const std::string &name)
{
    for (int k = 0; k < kHeadClassCount; ++k)
        if (name == headClassName(HeadClass(k)))
            return HeadClass(k);
    return HeadClass::Induction;
}

} // namespace

HeadGallery::HeadGallery(QWidget *parent)
    : QWidget(parent)
{
    setMouseTracking(true);
    QSizePolicy policy(QSizePolicy::Preferred, QSizePolicy::Preferred);
    policy.setHeightForWidth(true);
    setSizePolicy(policy);
}

void HeadGallery::setCards(std::vector<Card> cards, const std::string &theme)
{
    m_cards = std::move(cards);
    m_theme = theme;
    updateGeometry();
    update();
}

QSize HeadGallery::cardSize() const
{
    const QFontMetrics metrics(sizedFont(font(), 10));
    return {std::max(kHeadThumbnailPixels, metrics.horizontalAdvance(QStringLiteral("L88 H88  0.888"))) + 2 * kPad,
        kHeadThumbnailPixels + metrics.height() + 3 * kPad};
}

int HeadGallery::columns(int width) const
{
    return std::max(1, width / cardSize().width());
}

int HeadGallery::heightForWidth(int width) const
{
    const int rows = (int(m_cards.size()) + columns(width) - 1) / columns(width);
    return std::max(1, rows) * cardSize().height();
}

QRect HeadGallery::cardRect(int index) const
{
    const QSize size = cardSize();
    const int cols = columns(width());
    return {QPoint(index % cols * size.width(), index / cols * size.height()), size};
}

int HeadGallery::cardAt(const QPoint &pos) const
{
    for (int i = 0; i < int(m_cards.size()); ++i)
        if (cardRect(i).contains(pos))
            return i;
    return -1;
}

void HeadGallery::paintEvent(QPaintEvent *)
{
    const ThemeColors colors = themeColors(m_theme.empty() ? "light" : m_theme);
    QPainter p(this);
    p.fillRect(rect(), colors.background);
    p.setFont(sizedFont(font(), 10));
    const QFontMetrics metrics(p.font());
    for (int i = 0; i < int(m_cards.size()); ++i) {
        const Card &card = m_cards[size_t(i)];
        const QRect box = cardRect(i).adjusted(kPad / 2, kPad / 2, -kPad / 2, -kPad / 2);
        p.setPen(colors.frame);
        p.drawRect(box);
        const QRect picture(box.left() + (box.width() - kHeadThumbnailPixels) / 2, box.top() + kPad / 2,
            kHeadThumbnailPixels, kHeadThumbnailPixels);
        p.drawImage(picture, card.thumbnail);
        p.setPen(colors.text);
        p.drawText(QRect(box.left(), picture.bottom() + kPad / 2, box.width(), metrics.height()), Qt::AlignCenter,
            QStringLiteral("L%1 H%2  %3").arg(card.layer).arg(card.head).arg(card.score, 0, 'f', 3));
    }
}

void HeadGallery::mousePressEvent(QMouseEvent *event)
{
    const int i = cardAt(event->position().toPoint());
    if (event->button() == Qt::LeftButton && i >= 0 && onClick)
        onClick(m_cards[size_t(i)]);
}

bool HeadGallery::event(QEvent *event)
{
    if (event->type() == QEvent::ToolTip) {
        const auto *help = static_cast<QHelpEvent *>(event);
        const int i = cardAt(help->pos());
        if (i >= 0)
            QToolTip::showText(help->globalPos(), m_cards[size_t(i)].tooltip, this);
        else
            QToolTip::hideText();
        return true;
    }
    return QWidget::event(event);
}

HeadKindsView::HeadKindsView(QWidget *parent)
    : View(parent)
{
    m_controls = new QWidget(this);
    auto *row = new QHBoxLayout(m_controls);
    row->setContentsMargins(0, 0, 0, 0);
    m_kind = new QComboBox(m_controls);
    for (int k = 0; k < kHeadClassCount; ++k)
        m_kind->addItem(tr(headClassTitle(HeadClass(k))), QString::fromUtf8(headClassName(HeadClass(k))));
    m_kind->setToolTip(tr("The score the heads are sorted and filtered by (spec key head_kind)"));
    m_minimum = new QDoubleSpinBox(m_controls);
    m_minimum->setRange(0, 1);
    m_minimum->setSingleStep(0.05);
    m_minimum->setDecimals(2);
    m_minimum->setToolTip(tr("Show only the heads scoring at least this (spec key min_score)"));
    m_sequence = new QComboBox(m_controls);
    m_sequence->addItem(tr("random tokens, twice"), QStringLiteral("random"));
    m_sequence->addItem(tr("the input, twice"), QStringLiteral("input"));
    m_sequence->setToolTip(tr("What the heads read: 32 distinct random tokens then the same again, or the input's "
                              "tokens then the same again (spec key head_sequence)"));
    row->addWidget(new QLabel(tr("Kind:"), m_controls));
    row->addWidget(m_kind);
    row->addWidget(new QLabel(tr("At least:"), m_controls));
    row->addWidget(m_minimum);
    row->addWidget(new QLabel(tr("On:"), m_controls));
    row->addWidget(m_sequence);
    row->addStretch(1);
    connect(m_kind, &QComboBox::activated, this, [this](int i) {
        editSpec([this, i](ViewSpec &s) {
            s.set(views::headkinds::kHeadKind, m_kind->itemData(i).toString().toStdString());
        });
    });
    connect(m_sequence, &QComboBox::activated, this, [this](int i) {
        editSpec([this, i](ViewSpec &s) {
            s.set(views::headkinds::kHeadSequence, m_sequence->itemData(i).toString().toStdString());
        });
    });
    connect(m_minimum, &QDoubleSpinBox::valueChanged, this,
        [this](double v) { editSpec([v](ViewSpec &s) { s.set(views::headkinds::kMinScore, v); }); });

    m_formula = newFormulaLabel();
    m_message = newMessageLabel();
    m_gallery = new HeadGallery;
    m_gallery->onClick = [this](const HeadGallery::Card &card) {
        ViewSpec spec = m_spec;
        spec.view = "attention";
        spec.site = "self";
        spec.layer = card.layer;
        spec.head = card.head;
        emit specEdited(spec);
    };
    m_scroll = new QScrollArea(this);
    m_scroll->setWidget(m_gallery);
    m_scroll->setWidgetResizable(true);
    m_scroll->setFrameShape(QFrame::NoFrame);
    m_caption = new QLabel(this);
    m_caption->setWordWrap(true);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_controls);
    layout->addWidget(m_formula);
    layout->addWidget(m_message, 1);
    layout->addWidget(m_scroll, 1);
    layout->addWidget(m_caption);
    showMessage(QString::fromUtf8(kNothingComputed));
}

QString HeadKindsView::message() const
{
    return m_scroll->isHidden() ? m_message->text() : QString();
}

QString HeadKindsView::caption() const
{
    return m_caption->text();
}

void HeadKindsView::showMessage(const QString &text)
{
    m_message->setFont(sizedFont(font(), 12));
    setMessageText(m_message, text);
    m_message->show();
    m_scroll->hide();
    m_caption->hide();
}

void HeadKindsView::refresh()
{
    m_formula->setFont(sizedFont(font(), 11));
    m_caption->setFont(sizedFont(font(), 10));
    const HeadClass kind = kindNamed(m_spec.get(views::headkinds::kHeadKind));
    const double minimum = m_spec.get(views::headkinds::kMinScore);
    {
        const QSignalBlocker blockKind(m_kind), blockMinimum(m_minimum), blockSequence(m_sequence);
        m_kind->setCurrentIndex(int(kind));
        m_sequence->setCurrentIndex(
            std::max(0, m_sequence->findData(QString::fromStdString(m_spec.get(views::headkinds::kHeadSequence)))));
        m_minimum->setValue(minimum);
    }
    const auto *a = currentAnalysis<HeadKindsAnalysis>();
    if (!a)
        return showMessage(!m_input.analysis.problem.isEmpty()        ? m_input.analysis.problem
                : m_input.analysis.pending || m_input.analysis.result ? tr("Scoring every head…")
                                                                      : QString::fromUtf8(kNothingComputed));
    const HeadClasses &c = a->classes;
    const int T = 2 * c.half;
    std::vector<float> masked(size_t(T) * size_t(T), 0.0f);
    if (m_input.model->config.causal || m_input.model->config.isEncoderDecoder())
        for (int i = 0; i < T; ++i)
            for (int j = i + 1; j < T; ++j)
                masked[size_t(i) * size_t(T) + size_t(j)] = -std::numeric_limits<float>::infinity();
    const ColorLut lut(m_spec.colormap);
    std::vector<HeadGallery::Card> cards;
    for (int l = 0; l < c.layers; ++l)
        for (int h = 0; h < c.heads; ++h) {
            const double score = c.score(kind, l, h);
            if (score < minimum)
                continue;
            HeadGallery::Card card {l, h, score, {}, {}};
            card.thumbnail
                = headThumbnail(c.attention.data() + (size_t(l) * size_t(c.heads) + size_t(h)) * size_t(T) * size_t(T),
                    masked.data(), T, T, lut, m_spec.scale == "log");
            QStringList lines {tr("layer %1, head %2").arg(l).arg(h)};
            for (int k = 0; k < kHeadClassCount; ++k)
                lines << tr("%1: %2").arg(tr(headClassTitle(HeadClass(k)))).arg(c.score(HeadClass(k), l, h), 0, 'f', 3);
            lines << tr("click to open it in the Attention view");
            card.tooltip = lines.join(QLatin1Char('\n'));
            cards.push_back(std::move(card));
        }
    std::stable_sort(cards.begin(), cards.end(), [](const auto &x, const auto &y) { return x.score > y.score; });
    const int shown = int(cards.size());
    m_gallery->setCards(std::move(cards), m_spec.theme);
    const QString sequence = a->fromInput ? tr("the input's %1 tokens followed by the same %1 again").arg(c.half)
                                          : tr("%1 random tokens followed by the same %1 again").arg(c.half);
    m_formula->setText(tr("%1: %2. Each picture is the head's attention on %3, where a previous-token head draws the "
                          "line below the diagonal and an induction head a line %4 positions further left in the "
                          "second half.")
                           .arg(sentenceStart(tr(headClassTitle(kind))), tr(headClassDefinition(kind)), sequence)
                           .arg(c.half - 1));
    m_caption->setText(shown == 0 ? tr("No head scores at least %1 on %2.").arg(minimum).arg(tr(headClassTitle(kind)))
                                  : tr("%1 of %2 heads score at least %3, largest first; hover a head for all its "
                                       "scores, click it to open it in the Attention view.")
                                        .arg(shown)
                                        .arg(c.layers * c.heads)
                                        .arg(minimum));
    m_message->hide();
    m_scroll->show();
    m_caption->show();
}

} // namespace atlas

std::unique_ptr<atlas::View> atlas::views::headkinds::makeView(QWidget *parent)
{
    return std::make_unique<HeadKindsView>(parent);
}
