#include "panels/inputpanel.h"

#include "session/session.h"
#include "tokenize/tokenizer.h"
#include "views/tokenchipstrip.h"

#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QVBoxLayout>

namespace atlas {

InputPanel::InputPanel(Session *session, QWidget *parent)
    : QWidget(parent)
    , m_session(session)
    , m_text(new QLineEdit(this))
    , m_summary(new QLabel(this))
    , m_chips(new TokenChipStrip(TokenChipStrip::Layout::Wrap, this))
{
    m_text->setPlaceholderText(tr("Type text, or token ids as #464,3290,318"));
    m_text->setToolTip(tr("The model's input. Press Enter to tokenize and run it.\n"
                          "Start with # to give token ids directly: #464,3290,318"));
    m_text->setClearButtonEnabled(true);
    m_chips->setClickHint(true, tr("Click to toggle padding (no query attends a padding key)"));
    auto *run = new QPushButton(tr("Run"), this);
    run->setToolTip(tr("Tokenize the text and run the model to the end (Enter)"));
    auto *scroll = new QScrollArea(this);
    scroll->setWidget(m_chips);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setMaximumHeight((fontMetrics().height() * 2 + 10) * 3); // three rows of chips, then scroll

    auto *row = new QHBoxLayout;
    row->addWidget(m_text, 1);
    row->addWidget(run);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(row);
    layout->addWidget(m_summary);
    layout->addWidget(scroll, 1);

    connect(m_text, &QLineEdit::returnPressed, this, &InputPanel::submit);
    connect(run, &QPushButton::clicked, this, &InputPanel::submit);
    connect(m_chips, &TokenChipStrip::chipClicked, m_session, &Session::togglePadding);
    connect(m_session, &Session::inputChanged, this, &InputPanel::showInput);
    connect(m_session, &Session::specChanged, this, [this] {
        if (!m_text->hasFocus() && m_session->spec().tokens.empty())
            m_text->setText(QString::fromStdString(m_session->spec().text));
    });
}

void InputPanel::submit()
{
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

void InputPanel::showInput()
{
    const Input &input = m_session->input();
    QStringList pieces;
    for (int id : input.tokens)
        pieces << QString::fromStdString(m_session->tokenizer()->piece(id));
    m_chips->setTokens(pieces, input.tokens, input.padding);
    m_summary->setText(tr("%n token(s) · %1 padding · context %2", nullptr, int(input.tokens.size()))
                           .arg(input.padding.size())
                           .arg(m_session->model()->config.context));
}

} // namespace atlas
