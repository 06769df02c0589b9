#include "views/corruptioncontrols.h"

#include "tokenize/tokenizer.h"
#include "view/corruptionkeys.h"
#include "views/palette.h"

#include <QGridLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSignalBlocker>
#include <QSpinBox>

namespace atlas {

CorruptionControls::CorruptionControls(Edit edit, QWidget *parent)
    : QWidget(parent)
    , m_edit(std::move(edit))
{
    m_grid = new QGridLayout(this);
    m_grid->setContentsMargins(0, 0, 0, 0);
    const auto lineEdit = [this](const QString &placeholder, const QString &tip) {
        auto *e = new QLineEdit(this);
        e->setPlaceholderText(placeholder);
        e->setToolTip(tip);
        e->setClearButtonEnabled(true);
        return e;
    };
    m_corrupted = lineEdit(tr("the input with one thing changed (text, or #ids)"),
        tr("The corrupted run's input: as many tokens as the input, differing where the information you trace "
           "enters. Text, or token ids as the Input box takes them (#464,3290). Shared by the Patching and Circuit "
           "views (spec key corrupted_text)"));
    m_noise = lineEdit(tr("positions, e.g. 2,3"),
        tr("With no corrupted input: the positions whose embedding gets Gaussian noise (3 × the embedding's "
           "standard deviation, Meng et al. 2022), the corrupted run of a model without a tokenizer too "
           "(spec key noise_positions)"));
    m_target = lineEdit(tr("a token, or #id"),
        tr("The token whose logit (or probability) the metric reads at the position (spec key target)"));
    m_contrast = lineEdit(tr("none: p(target)"),
        tr("With a second token the metric is logit(target) − logit(contrast), the logit difference of the IOI "
           "work; empty: the target's probability (spec key contrast)"));
    m_position = new QSpinBox(this);
    m_position->setRange(-1, 0);
    m_position->setSpecialValueText(tr("last"));
    m_position->setToolTip(tr("The position whose output the metric reads (spec key position)"));
    m_grid->addWidget(new QLabel(tr("Corrupted:"), this), 0, 0);
    m_grid->addWidget(m_corrupted, 0, 1);
    m_grid->addWidget(new QLabel(tr("or noise at:"), this), 0, 2);
    m_grid->addWidget(m_noise, 0, 3);
    m_grid->addWidget(new QLabel(tr("Target:"), this), 1, 0);
    m_grid->addWidget(m_target, 1, 1);
    m_grid->addWidget(new QLabel(tr("Contrast:"), this), 1, 2);
    m_grid->addWidget(m_contrast, 1, 3);
    m_grid->addWidget(new QLabel(tr("Position:"), this), 1, 4);
    m_grid->addWidget(m_position, 1, 5);
    m_grid->setColumnStretch(1, 1);
    m_grid->setColumnStretch(3, 1);
    connect(m_corrupted, &QLineEdit::editingFinished, this, [this] {
        m_edit([this](ViewSpec &s) { s.set(corruptionkeys::kCorruptedText, m_corrupted->text().toStdString()); });
    });
    connect(m_noise, &QLineEdit::editingFinished, this, [this] {
        try {
            const std::vector<int> positions = parseTokenList(m_noise->text().toStdString());
            m_noise->setStyleSheet({});
            m_edit([&positions](ViewSpec &s) { s.set(corruptionkeys::kNoisePositions, positions); });
        } catch (const std::exception &e) { // said at the box; the spec keeps its positions
            m_noise->setStyleSheet(QStringLiteral("color: %1").arg(palette::alert.name()));
            m_noise->setToolTip(QString::fromStdString(e.what()));
        }
    });
    connect(m_target, &QLineEdit::editingFinished, this,
        [this] { m_edit([this](ViewSpec &s) { s.target = m_target->text().toStdString(); }); });
    connect(m_contrast, &QLineEdit::editingFinished, this, [this] {
        m_edit([this](ViewSpec &s) { s.set(corruptionkeys::kContrast, m_contrast->text().toStdString()); });
    });
    connect(m_position, &QSpinBox::valueChanged, this, [this](int p) { m_edit([p](ViewSpec &s) { s.position = p; }); });
}

void CorruptionControls::showSpec(const ViewSpec &spec, int tokens)
{
    const auto setText = [](QLineEdit *e, const std::string &text) {
        if (!e->hasFocus())
            e->setText(QString::fromStdString(text));
    };
    setText(m_corrupted, spec.get(corruptionkeys::kCorruptedText));
    QStringList noise;
    for (int t : spec.get(corruptionkeys::kNoisePositions))
        noise << QString::number(t);
    if (!m_noise->hasFocus())
        m_noise->setText(noise.join(','));
    setText(m_target, spec.target);
    setText(m_contrast, spec.get(corruptionkeys::kContrast));
    const QSignalBlocker block(m_position);
    m_position->setRange(-1, std::max(0, tokens - 1));
    m_position->setValue(spec.position);
}

} // namespace atlas
