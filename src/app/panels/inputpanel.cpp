#include "panels/inputpanel.h"

#include "engine/inputbuilder.h"
#include "io/limits.h"
#include "session/session.h"
#include "tokenize/tokenizer.h"
#include "util/text.h"
#include "views/tokenchipstrip.h"

#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QVBoxLayout>

namespace atlas {

InputPanel::InputPanel(Session *session, QWidget *parent)
    : QWidget(parent)
    , m_session(session)
    , m_text(new QLineEdit(this))
    , m_summary(new QLabel(this))
    , m_chips(new TokenChipStrip(TokenChipStrip::Layout::Row))
    , m_sourceLabel(new QLabel(tr("&Source"), this))
    , m_decoderLabel(new QLabel(tr("&Decoder"), this))
    , m_decoderText(new QLineEdit(this))
    , m_decoderChips(new TokenChipStrip(TokenChipStrip::Layout::Row))
{
    m_text->setPlaceholderText(tr("Type text, or token ids as #464,3290,318"));
    m_text->setToolTip(tr("The model's input. Press Enter to tokenize and run it.\n"
                          "Start with # to give token ids directly: #464,3290,318\n"
                          "A text that starts with # is written ##: ##1 is the text #1\n"
                          "File ▸ Open Text File (Ctrl+Shift+T) reads a long document"));
    m_text->setClearButtonEnabled(true);
    m_text->setMaxLength(int(limits::kInputTextBytes)); // a document from File ▸ Open Text File, not cut at 32767

    m_chips->setClickHint(true, tr("Click to toggle padding (no query attends a padding key)"));
    auto *run = new QPushButton(tr("Run"), this);
    run->setToolTip(tr("Tokenize the text and run the model to the end (Enter)"));
    m_sourceLabel->setBuddy(m_text);
    m_sourceLabel->setToolTip(tr("The encoder's input: every decoder step's cross-attention reads it"));
    m_decoderLabel->setBuddy(m_decoderText);
    m_decoderText->setToolTip(tr("The decoder's input: what it has written so far (teacher forcing: the target "
                                 "shifted right). Press Enter to run; Generate continues it.\n"
                                 "Start with # to give token ids directly: #0,7,12"));
    m_decoderText->setClearButtonEnabled(true);
    m_decoderText->setObjectName("decoderText");
    m_decoderChips->setClickHint(false, tr("The decoder's tokens"));
    m_scroll = chipRow(m_chips);
    m_decoderScroll = chipRow(m_decoderChips);
    m_summary->setToolTip(tr("Tokens in the input, padding positions, and the most the model can read"));

    auto *row = new QHBoxLayout;
    row->addWidget(m_sourceLabel);
    row->addWidget(m_text, 1);
    row->addWidget(m_decoderLabel);
    row->addWidget(m_decoderText, 1);
    row->addWidget(run);
    row->addWidget(m_summary);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 2, 6, 2);
    layout->setSpacing(2);
    layout->addLayout(row);
    auto *chips = new QHBoxLayout; // an encoder-decoder's two inputs side by side: the views keep their height
    chips->addWidget(m_scroll, 1);
    chips->addWidget(m_decoderScroll, 1);
    layout->addLayout(chips);
    for (QWidget *w : std::initializer_list<QWidget *> {m_sourceLabel, m_decoderLabel, m_decoderText, m_decoderScroll})
        w->setVisible(false); // an encoder-decoder's

    connect(m_text, &QLineEdit::returnPressed, this, &InputPanel::submit);
    connect(m_decoderText, &QLineEdit::returnPressed, this, &InputPanel::submit);
    connect(run, &QPushButton::clicked, this, &InputPanel::submit);
    connect(m_chips, &TokenChipStrip::chipClicked, m_session, &Session::togglePadding);
    connect(m_session, &Session::inputChanged, this, [this] {
        m_submitting = false;
        showInput();
    });
    // A refused input (too long, an id outside the vocabulary) leaves the views on the last input that ran: the
    // boxes show that input again, so that they never disagree with the chips and the views; the message says what
    // was refused.
    connect(m_session, &Session::errorOccurred, this, [this] {
        if (!m_submitting)
            return;
        m_submitting = false;
        m_text->setText(displayedInput());
        m_decoderText->setText(displayedDecoderInput());
    });
    connect(m_session, &Session::specChanged, this, [this] {
        if (!m_text->hasFocus())
            m_text->setText(displayedInput());
        if (!m_decoderText->hasFocus())
            m_decoderText->setText(displayedDecoderInput());
    });
}

// One row of chips that scrolls sideways: the input never takes the views' height (every view shows every token
// anyway).
QScrollArea *InputPanel::chipRow(TokenChipStrip *chips)
{
    auto *scroll = new QScrollArea(this);
    scroll->setWidget(chips);
    scroll->setWidgetResizable(false);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    return scroll;
}

void InputPanel::submit()
{
    emit submitted(); // the window moves the focus to the view, so Space, Home and the arrows step again
    m_submitting = true;
    m_session->submitBoxes(m_text->text(), m_decoderText->text());
}

// The spec's input as the box shows it: its text, or "#ids" when explicit ids are not what the text encodes to.
QString InputPanel::displayedInput() const
{
    const ViewSpec &spec = m_session->spec();
    const Tokenizer *tokenizer = m_session->tokenizer();
    try {
        if (!spec.tokens.empty() && tokenizer && tokenizer->canEncode() && !spec.text.empty()
            && tokenizer->encodeWithSpecialTokens(spec.text) == spec.tokens)
            return QString::fromStdString(boxInputText(spec.text, {}));
    } catch (const std::exception &) {
    }
    return QString::fromStdString(boxInputText(spec.text, spec.tokens));
}

QString InputPanel::displayedDecoderInput() const
{
    const ViewSpec &spec = m_session->spec();
    return QString::fromStdString(boxInputText(spec.decoderText, spec.decoderTokens));
}

void InputPanel::showInput()
{
    const Input &input = m_session->input();
    const bool twoStacks = m_session->model()->config.isEncoderDecoder();
    const auto show = [this](TokenChipStrip *chips, QScrollArea *scroll, const std::vector<int> &ids,
                          const std::vector<int> &padding) {
        QStringList pieces;
        for (int id : ids)
            pieces << QString::fromStdString(m_session->tokenizer()->piece(id));
        chips->setTokens(pieces, ids, padding);
        scroll->setFixedHeight(chips->sizeHint().height() + scroll->horizontalScrollBar()->sizeHint().height() + 2);
    };
    for (QWidget *w : std::initializer_list<QWidget *> {m_sourceLabel, m_decoderLabel, m_decoderText, m_decoderScroll})
        w->setVisible(twoStacks);
    const std::vector<int> &first = twoStacks ? input.source : input.tokens;
    const std::vector<int> &padding = twoStacks ? input.sourcePadding : input.padding;
    show(m_chips, m_scroll, first, padding);
    if (twoStacks)
        show(m_decoderChips, m_decoderScroll, input.tokens, {});
    QString summary = twoStacks ? tr("source %1 · decoder %2 · %3 padding · context %4")
                                      .arg(first.size())
                                      .arg(input.tokens.size())
                                      .arg(padding.size())
                                      .arg(m_session->model()->config.context)
                                : tr("%1 · %2 padding · context %3")
                                      .arg(QString::fromStdString(countOf(first.size(), "token")))
                                      .arg(padding.size())
                                      .arg(m_session->model()->config.context);
    const Tokenizer *tokenizer = m_session->tokenizer();
    const bool idsOnly = tokenizer && !tokenizer->canEncode();
    if (idsOnly) // said where the ids are typed, not only in the status bar
        summary += tr(" · ids only: no tokenizer");
    m_summary->setText(summary);
    m_summary->setToolTip(idsOnly ? tr("This model has no tokenizer this program reads (%1): type token ids, as "
                                       "#0,1,2")
                                        .arg(QString::fromStdString(tokenizer->noTextReason()))
                                  : tr("Tokens in the input, padding positions, and the most the model can read"));
}

} // namespace atlas
