#include "tokenizer/tokenizerview.h"

#include "model/builtinmodels.h"
#include "tokenizer/tokenizer.h"
#include "views/tokenchipstrip.h"
#include "views/viewfonts.h"

#include <QComboBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QScrollArea>
#include <QToolButton>
#include <QVBoxLayout>

namespace atlas {

namespace {

// Light fills that keep black text readable in both themes (as the Objectives view's).
QColor roleColor(TokenRole role)
{
    switch (role) {
    case TokenRole::Special:
        return {0x9e, 0xca, 0xe1};
    case TokenRole::Unknown:
        return {0xfc, 0x92, 0x72};
    case TokenRole::Byte:
        return {0xfd, 0xd0, 0xa2};
    case TokenRole::Text:
        break;
    }
    return {};
}

QString roleNote(TokenRole role)
{
    switch (role) {
    case TokenRole::Special:
        return QObject::tr("a special token of the model");
    case TokenRole::Unknown:
        return QObject::tr("the unknown token: the vocabulary has nothing for this text");
    case TokenRole::Byte:
        return QObject::tr("a single byte: part of a character the vocabulary has no token for");
    case TokenRole::Text:
        break;
    }
    return {};
}

// "1 token", "19 tokens": the app ships no translations, so tr()'s %n plurals would read "token(s)".
QString counted(qint64 n, const QString &one, const QString &many)
{
    return QStringLiteral("%1 %2").arg(n).arg(n == 1 ? one : many);
}

QString swatch(TokenRole role, const QString &text)
{
    return QStringLiteral("<span style=\"background-color:%1; color:black\">&nbsp;%2&nbsp;</span>")
        .arg(roleColor(role).name(), text.toHtmlEscaped());
}

} // namespace

TokenizerView::TokenizerView(QWidget *parent)
    : View(parent)
{
    m_controls = new QWidget(this);
    auto *row = new QHBoxLayout(m_controls);
    row->setContentsMargins(0, 0, 0, 0);
    auto *label = new QLabel(tr("Compare with:"), m_controls);
    m_compare = new QComboBox(m_controls);
    m_compare->setEditable(true);
    m_compare->setInsertPolicy(QComboBox::NoInsert);
    m_compare->setMinimumContentsLength(24);
    m_compare->setToolTip(tr("The tokenizer shown beside the model's own: a built-in tokenizer or model, or the path "
                             "of a directory with tokenizer.json, a SentencePiece model, vocab.json + merges.txt "
                             "or vocab.txt (press Enter)"));
    label->setBuddy(m_compare);
    for (const std::string &name : builtinTokenizerNames())
        m_compare->addItem(QString::fromStdString(name));
    m_compare->insertSeparator(m_compare->count());
    for (const BuiltinModel &m : builtinModels())
        m_compare->addItem(QString::fromStdString(m.name));
    const auto choose = [this](const QString &text) {
        if (text.trimmed().isEmpty() || text.toStdString() == m_spec.get(views::tokenizer::kCompareTokenizer))
            return;
        ViewSpec spec = m_spec;
        spec.set(views::tokenizer::kCompareTokenizer, text.trimmed().toStdString());
        emit specEdited(spec);
    };
    connect(m_compare, &QComboBox::textActivated, this, choose);
    connect(
        m_compare->lineEdit(), &QLineEdit::returnPressed, this, [this, choose] { choose(m_compare->currentText()); });
    auto *browse = new QToolButton(m_controls);
    browse->setText(tr("Browse…"));
    browse->setToolTip(tr("Choose a directory whose tokenizer to compare with"));
    connect(browse, &QToolButton::clicked, this, [this, choose] {
        const QString dir = QFileDialog::getExistingDirectory(this, tr("Compare with the tokenizer in"));
        if (!dir.isEmpty())
            choose(dir);
    });
    row->addWidget(label);
    row->addWidget(m_compare);
    row->addWidget(browse);
    row->addStretch(1);

    m_summary = newFormulaLabel();
    m_message = newMessageLabel();
    auto *content = new QWidget;
    auto *column = new QVBoxLayout(content);
    column->setContentsMargins(0, 0, 0, 0);
    m_ownHeader = new QLabel(content);
    m_otherHeader = new QLabel(content);
    m_ownChips = new TokenChipStrip(TokenChipStrip::Layout::Wrap, content);
    m_otherChips = new TokenChipStrip(TokenChipStrip::Layout::Wrap, content);
    for (TokenChipStrip *chips : {m_ownChips, m_otherChips})
        chips->setClickHint(false, {});
    m_legend = new QLabel(content);
    m_legend->setTextFormat(Qt::RichText);
    m_legend->setText(tr("Marked: %1 %2 %3")
                          .arg(swatch(TokenRole::Special, tr("special token")),
                              swatch(TokenRole::Unknown, tr("unknown")), swatch(TokenRole::Byte, tr("single byte"))));
    for (QLabel *header : {m_ownHeader, m_otherHeader}) {
        header->setWordWrap(true);
        header->setTextInteractionFlags(Qt::TextSelectableByMouse);
    }
    column->addWidget(m_ownHeader);
    column->addWidget(m_ownChips);
    column->addSpacing(12);
    column->addWidget(m_otherHeader);
    column->addWidget(m_otherChips);
    column->addSpacing(8);
    column->addWidget(m_legend);
    column->addStretch(1);
    m_scroll = new QScrollArea(this);
    m_scroll->setWidgetResizable(true);
    m_scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff); // the chips wrap to the width
    m_scroll->setFrameShape(QFrame::NoFrame);
    m_scroll->setWidget(content);

    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_controls);
    layout->addWidget(m_summary);
    layout->addWidget(m_message, 1);
    layout->addWidget(m_scroll, 1);
    showMessage(QString::fromUtf8(kNothingComputed));
}

QString TokenizerView::message() const
{
    return m_scroll->isHidden() ? m_message->text() : QString();
}

QString TokenizerView::summary() const
{
    return m_summary->text();
}

QString TokenizerView::header(int row) const
{
    return (row == 0 ? m_ownHeader : m_otherHeader)->text();
}

void TokenizerView::showMessage(const QString &text)
{
    m_summary->clear();
    m_message->setFont(sizedFont(font(), 12));
    m_message->setText(text);
    m_message->show();
    m_scroll->hide();
}

void TokenizerView::showSplit(const TextSplit &split, size_t bytes, QLabel *header, TokenChipStrip *chips)
{
    QFont bold = sizedFont(font(), 11);
    bold.setBold(true);
    header->setFont(bold);
    const QString name = QString::fromStdString(split.name), kind = QString::fromStdString(split.kind);
    if (!split.problem.empty()) {
        header->setText(tr("%1 (%2): %3").arg(name, kind, QString::fromStdString(split.problem)));
        chips->setTokens({}, {}, {});
        return;
    }
    QStringList parts {counted(qint64(split.ids.size()), tr("token"), tr("tokens"))};
    if (!split.ids.empty()) {
        const QString perToken = formatNumber(double(bytes) / double(split.ids.size()), 3);
        parts << (perToken == QStringLiteral("1") ? tr("1 byte per token") : tr("%1 bytes per token").arg(perToken));
    }
    for (TokenRole role : {TokenRole::Special, TokenRole::Unknown, TokenRole::Byte})
        if (const int n = split.count(role))
            parts << (role == TokenRole::Special ? counted(n, tr("special"), tr("special"))
                    : role == TokenRole::Unknown ? counted(n, tr("unknown"), tr("unknown"))
                                                 : counted(n, tr("single byte"), tr("single bytes")));
    header->setText(tr("%1 · %2 · %3").arg(name, kind, parts.join(QStringLiteral(" · "))));
    QStringList labels;
    std::vector<TokenChipStrip::ChipMark> marks;
    for (size_t i = 0; i < split.ids.size(); ++i) {
        labels << QString::fromStdString(split.pieces[i]);
        marks.push_back({roleColor(split.roles[i]), {}, roleNote(split.roles[i])});
    }
    chips->setFont(sizedFont(font(), 10));
    chips->setTokens(labels, split.ids, {});
    chips->setMarks(std::move(marks));
}

void TokenizerView::refresh()
{
    m_compare->setCurrentText(QString::fromStdString(m_spec.get(views::tokenizer::kCompareTokenizer)));
    m_summary->setFont(sizedFont(font(), 11));
    const auto *analysis = currentAnalysis<TokenizerAnalysis>();
    if (analysis == nullptr)
        return showMessage(!m_input.analysis.problem.isEmpty() ? m_input.analysis.problem
                : m_input.analysis.pending                     ? tr("Computing…")
                                                               : QString::fromUtf8(kNothingComputed));
    const TokenizerComparison &c = analysis->comparison;
    showSplit(c.own, c.bytes, m_ownHeader, m_ownChips);
    showSplit(c.other, c.bytes, m_otherHeader, m_otherChips);
    m_summary->setText(
        tr("A tokenizer cuts text into pieces of its vocabulary, and the model sees only their ids. The same %1 (%2 of "
           "UTF-8) make %3 tokens for %4 and %5 for %6: fewer tokens fit more text into the context, and each piece is "
           "one row of the embedding.")
            .arg(counted(qint64(c.characters), tr("character"), tr("characters")),
                counted(qint64(c.bytes), tr("byte"), tr("bytes")))
            .arg(c.own.problem.empty() ? QString::number(c.own.ids.size()) : tr("no"))
            .arg(QString::fromStdString(c.own.name))
            .arg(c.other.problem.empty() ? QString::number(c.other.ids.size()) : tr("no"))
            .arg(QString::fromStdString(c.other.name)));
    m_message->hide();
    m_scroll->show();
}

} // namespace atlas

std::unique_ptr<atlas::View> atlas::views::tokenizer::makeView(QWidget *parent)
{
    return std::make_unique<TokenizerView>(parent);
}
