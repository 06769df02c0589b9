#include "panels/generationpanel.h"

#include "features/features.h"
#include "session/session.h"
#include "style/theme.h"
#include "viewmodel/viewinput.h"
#include "views/byteunits.h"

#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QTableWidget>
#include <QTextDocument>

namespace atlas {

GenerationPanel::GenerationPanel(Session *session, QWidget *parent)
    : QWidget(parent)
    , m_session(session)
    , m_steps(new QSpinBox(this))
    , m_temperature(new QDoubleSpinBox(this))
    , m_topK(new QSpinBox(this))
    , m_topP(new QDoubleSpinBox(this))
    , m_seed(new QSpinBox(this))
    , m_steer(new QCheckBox(this))
    , m_text(new QLabel(this))
    , m_table(new QTableWidget(0, 4, this))
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
    m_topP->setRange(0.01, 1.0);
    m_topP->setSingleStep(0.05);
    m_topP->setValue(1.0);
    m_topP->setToolTip(tr("Nucleus sampling: only the fewest most likely tokens whose probabilities (after the "
                          "temperature and top-k) sum to p; 1 = no limit. The Next token view draws the cut"));
    m_seed->setRange(0, 1 << 30);
    m_seed->setToolTip(tr("Random seed: the same seed gives the same sample"));
    m_steer->setToolTip(tr("Steer each position as it is fed, the prompt's too, as the Features view's Steer page sets "
                           "it (its dictionary, feature, strength, clamp or prompts), and show the model's own "
                           "continuation under the same settings beside it"));
    const QSettings settings;
    m_steps->setValue(settings.value("generate/tokens", m_steps->value()).toInt());
    m_temperature->setValue(settings.value("generate/temperature", 0.0).toDouble());
    m_topK->setValue(settings.value("generate/top_k", 0).toInt());
    m_topP->setValue(settings.value("generate/top_p", 1.0).toDouble());
    m_seed->setValue(settings.value("generate/seed", 0).toInt());
    m_steer->setChecked(settings.value("generate/steer", false).toBool());
    m_text->setWordWrap(true);
    m_text->setTextFormat(Qt::RichText);
    m_text->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_text->setText(tr("<i>The prompt and what the model adds to it appear here.</i>"));
    m_table->setHorizontalHeaderLabels({tr("token"), tr("p"), tr("KV cache"), tr("id")});
    m_table->setToolTip(tr("Each generated token, the model's probability of it (before any temperature or "
                           "top-k), and the KV cache after it: positions × layers × (K, V)"));
    m_table->verticalHeader()->setVisible(false);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    auto *generate = new QPushButton(tr("Generate"), this);
    generate->setToolTip(tr("Append tokens to the input using the KV cache, then trace the longer input (Ctrl+G)"));
    generate->setShortcut(QKeySequence(tr("Ctrl+G")));

    auto *form = new QFormLayout(this);
    form->addRow(tr("Tokens"), m_steps);
    form->addRow(tr("Temperature"), m_temperature);
    form->addRow(tr("Top-k"), m_topK);
    form->addRow(tr("Top-p"), m_topP);
    form->addRow(tr("Seed"), m_seed);
    form->addRow(tr("Steer"), m_steer);
    form->addRow(generate);
    form->addRow(m_text);
    form->addRow(m_table);

    connect(generate, &QPushButton::clicked, this, &GenerationPanel::generate);
    connect(m_session, &Session::generationFinished, this, &GenerationPanel::showReport);
    connect(m_session, &Session::specChanged, this, &GenerationPanel::updateSteer);
    connect(m_session, &Session::modelChanged, this, &GenerationPanel::updateSteer);
    updateSteer();
}

void GenerationPanel::generate()
{
    keepSettings();
    SamplingOptions options;
    options.temperature = static_cast<float>(m_temperature->value());
    options.topK = m_topK->value();
    options.topP = m_topP->value();
    options.seed = static_cast<uint64_t>(m_seed->value());
    SteeringSource steering;
    if (m_steer->isEnabled() && m_steer->isChecked())
        steering = [spec = m_session->spec()](std::shared_ptr<const Model> model, const std::vector<int> &prompt) {
            return views::features::specSteering(std::move(model), spec, prompt);
        };
    m_session->generate(m_steps->value(), options, std::move(steering));
}

void GenerationPanel::updateSteer()
{
    const Model *model = m_session->model();
    const bool predicts = model && model->config.causal && !model->config.isEncoderDecoder();
    m_steer->setEnabled(predicts);
    m_steer->setText(predicts ? QString::fromStdString(views::features::steeringSummary(m_session->spec()))
                              : tr("(a model that predicts the next token)"));
}

void GenerationPanel::keepSettings() const
{
    QSettings settings;
    settings.setValue("generate/tokens", m_steps->value());
    settings.setValue("generate/temperature", m_temperature->value());
    settings.setValue("generate/top_k", m_topK->value());
    settings.setValue("generate/top_p", m_topP->value());
    settings.setValue("generate/seed", m_seed->value());
    settings.setValue("generate/steer", m_steer->isChecked());
}

QString GenerationPanel::continuationText() const
{
    QTextDocument doc;
    doc.setHtml(m_text->text());
    return doc.toPlainText();
}

void GenerationPanel::showReport(const GenerationReport &report)
{
    const auto visible = [](QString text) { return text.replace('\n', QStringLiteral("⏎")).toHtmlEscaped(); };
    QString html = visible(report.prompt)
        + QStringLiteral("<b style='color:%1'>%2</b>").arg(accentTextColor().name(), visible(report.continuation));
    if (!report.steering.isEmpty())
        html += "<br><i>" + tr("Steered by %1.").arg(report.steering.toHtmlEscaped()) + "</i><br><i>"
            + tr("Without it:") + "</i> " + visible(report.prompt) + "<b>" + visible(report.unsteered) + "</b>";
    if (!report.stopped.isEmpty())
        html += "<br><i>" + report.stopped.toHtmlEscaped() + "</i>";
    m_text->setText(html);
    m_table->setRowCount(int(report.tokens.size()));
    for (size_t i = 0; i < report.tokens.size(); ++i) {
        const GeneratedToken &t = report.tokens[i];
        const QStringList cells = {QStringLiteral("'%1'").arg(t.piece), formatNumber(t.probability, 3),
            tr("%1 pos · %2").arg(t.cachedPositions).arg(byteAmount(t.cacheKiB * 1024)), QString::number(t.id)};
        for (int c = 0; c < cells.size(); ++c)
            m_table->setItem(int(i), c, new QTableWidgetItem(cells[c]));
    }
}

} // namespace atlas
