#include "panels/generationpanel.h"

#include "session/session.h"

#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>

namespace atlas {

GenerationPanel::GenerationPanel(Session *session, QWidget *parent)
    : QWidget(parent)
    , m_session(session)
    , m_steps(new QSpinBox(this))
    , m_temperature(new QDoubleSpinBox(this))
    , m_topK(new QSpinBox(this))
    , m_seed(new QSpinBox(this))
    , m_log(new QPlainTextEdit(this))
{
    m_steps->setRange(1, 512);
    m_steps->setValue(8);
    m_steps->setToolTip(tr("How many tokens to add, one at a time"));
    m_temperature->setRange(0.0, 5.0);
    m_temperature->setSingleStep(0.1);
    m_temperature->setToolTip(tr("0 picks the most likely token (greedy); higher values sample more freely"));
    m_topK->setRange(0, 100000);
    m_topK->setSpecialValueText(tr("all"));
    m_topK->setToolTip(tr("Sample only among the k most likely tokens (all = no limit)"));
    m_seed->setRange(0, 1 << 30);
    m_seed->setToolTip(tr("Random seed: the same seed gives the same sample"));
    m_log->setReadOnly(true);
    m_log->setPlaceholderText(tr("Each generated token appears here with the KV cache size after it."));
    auto *generate = new QPushButton(tr("Generate"), this);
    generate->setToolTip(tr("Append tokens to the input using the KV cache, then trace the longer input (Ctrl+G)"));
    generate->setShortcut(QKeySequence(tr("Ctrl+G")));

    auto *form = new QFormLayout(this);
    form->addRow(tr("Tokens"), m_steps);
    form->addRow(tr("Temperature"), m_temperature);
    form->addRow(tr("Top-k"), m_topK);
    form->addRow(tr("Seed"), m_seed);
    form->addRow(generate);
    form->addRow(m_log);

    connect(generate, &QPushButton::clicked, this, [this] {
        SamplingOptions options;
        options.temperature = static_cast<float>(m_temperature->value());
        options.topK = m_topK->value();
        options.seed = static_cast<uint64_t>(m_seed->value());
        m_session->generate(m_steps->value(), options);
    });
    connect(m_session, &Session::generationFinished, m_log, &QPlainTextEdit::setPlainText);
}

} // namespace atlas
