#include "panels/inputpanel.h"

#include "session/session.h"
#include "tokenize/tokenizer.h"
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
{
    m_text->setPlaceholderText(tr("Type text, or token ids as #464,3290,318"));
    m_text->setToolTip(tr("The model's input. Press Enter to tokenize and run it.\n"
                          "Start with # to give token ids directly: #464,3290,318"));
    m_text->setClearButtonEnabled(true);
    m_chips->setClickHint(true, tr("Click to toggle padding (no query attends a padding key)"));
    auto *run = new QPushButton(tr("Run"), this);
    run->setToolTip(tr("Tokenize the text and run the model to the end (Enter)"));
    // One row of chips that scrolls sideways: the input never takes the views' height (every view shows every
    // token anyway).
    m_scroll = new QScrollArea(this);
    m_scroll->setWidget(m_chips);
    m_scroll->setWidgetResizable(false);
    m_scroll->setFrameShape(QFrame::NoFrame);
    m_scroll->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_summary->setToolTip(tr("Tokens in the input, padding positions, and the most the model can read"));

    auto *row = new QHBoxLayout;
    row->addWidget(m_text, 1);
    row->addWidget(run);
    row->addWidget(m_summary);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 2, 6, 2);
    layout->setSpacing(2);
    layout->addLayout(row);
    layout->addWidget(m_scroll);

    connect(m_text, &QLineEdit::returnPressed, this, &InputPanel::submit);
    connect(run, &QPushButton::clicked, this, &InputPanel::submit);
    connect(m_chips, &TokenChipStrip::chipClicked, m_session, &Session::togglePadding);
    connect(m_session, &Session::inputChanged, this, &InputPanel::showInput);
    connect(m_session, &Session::specChanged, this, [this] {
        if (!m_text->hasFocus())
            m_text->setText(displayedInput());
    });
}

void InputPanel::submit()
{
    emit submitted(); // the window moves the focus to the view, so Space, Home and the arrows step again
    const QString text = m_text->text();
    if (text.startsWith('#')) {
        try {
            m_session->setTokens(parseTokenList(text.mid(1).toStdString()));
        } catch (const std::exception &e) {
            emit m_session->errorOccurred(QString::fromStdString(e.what()));
        }
        return;
    }
    m_session->setText(text);
}

// The spec's input as the box shows it: its text, or "#ids" when explicit ids are not what the text encodes to.
QString InputPanel::displayedInput() const
{
    const ViewSpec &spec = m_session->spec();
    if (spec.tokens.empty())
        return QString::fromStdString(spec.text);
    const Tokenizer *tokenizer = m_session->tokenizer();
    try {
        if (tokenizer && tokenizer->canEncode() && tokenizer->encode(spec.text) == spec.tokens)
            return QString::fromStdString(spec.text);
    } catch (const std::exception &) {
    }
    QStringList ids;
    for (int id : spec.tokens)
        ids << QString::number(id);
    return "#" + ids.join(',');
}

void InputPanel::showInput()
{
    const Input &input = m_session->input();
    QStringList pieces;
    for (int id : input.tokens)
        pieces << QString::fromStdString(m_session->tokenizer()->piece(id));
    m_chips->setTokens(pieces, input.tokens, input.padding);
    m_scroll->setFixedHeight(m_chips->sizeHint().height() + m_scroll->horizontalScrollBar()->sizeHint().height() + 2);
    m_summary->setText(tr("%n token(s) · %1 padding · context %2", nullptr, int(input.tokens.size()))
                           .arg(input.padding.size())
                           .arg(m_session->model()->config.context));
}

} // namespace atlas
