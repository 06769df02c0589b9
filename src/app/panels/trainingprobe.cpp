#include "panels/trainingprobe.h"

#include "attentionmap/attentionview.h"
#include "panels/attentionsitebox.h"
#include "panels/fieldlabel.h"
#include "view/specrun.h"
#include "views/heatmapplot.h"
#include "views/viewfonts.h"

#include <QComboBox>
#include <QEvent>
#include <QGridLayout>
#include <QLabel>
#include <QSpinBox>

#include <algorithm>

namespace atlas {

TrainingProbe::TrainingProbe(QWidget *parent)
    : QWidget(parent)
{
    m_probe = new QLabel(tr("<b>Probe</b>: a held-out example of the task, shown once training starts"), this);
    m_probe->setWordWrap(true);
    m_probe->setTextFormat(Qt::RichText);
    m_probe->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_probe->setToolTip(tr("A held-out example, the same every run: the heat map shows the attention of the "
                           "chosen head on it, redrawn a few times a second while the model trains"));
    m_site = new QComboBox(this);
    m_site->setObjectName("trainSite");
    addAttentionSites(m_site);
    m_site->setToolTip(tr("Which attention of the encoder-decoder the heat map shows"));
    m_layer = new QSpinBox(this);
    m_layer->setObjectName("trainLayer");
    m_layer->setToolTip(tr("Layer whose attention the heat map shows"));
    m_head = new QSpinBox(this);
    m_head->setObjectName("trainHead");
    m_head->setToolTip(tr("Head whose attention the heat map shows"));
    m_attention = new AttentionView(this);
    fitAttentionHeight();
    // The view's title font suits the main window; in a dock it would be clipped.
    for (QCPLayoutElement *e : m_attention->plot()->plotLayout()->elements(false))
        if (auto *title = qobject_cast<QCPTextElement *>(e))
            title->setFont(sizedFont(font(), 10, true));
    // The title says "attention probabilities": the colour bar's label would take the width a probe of 100 tokens
    // needs for its axes in the narrow dock.
    m_attention->plot()->setValueLabel(QString());
    m_attention->plot()->showMessage(tr("Start training to watch this head's attention form."));

    // The example above its controls, one row each: the dock is narrow beside the views.
    auto *grid = new QGridLayout(this);
    grid->setContentsMargins(0, 4, 0, 0);
    grid->addWidget(m_probe, 0, 0, 1, 4);
    m_siteLabel = fieldLabel(tr("&Show"), m_site);
    grid->addWidget(m_siteLabel, 1, 0);
    grid->addWidget(m_site, 1, 1, 1, 3);
    grid->addWidget(fieldLabel(tr("&Layer"), m_layer), 2, 0);
    grid->addWidget(m_layer, 2, 1);
    grid->addWidget(fieldLabel(tr("H&ead"), m_head), 2, 2);
    grid->addWidget(m_head, 2, 3);
    grid->addWidget(m_attention, 3, 0, 1, 4);
    grid->setColumnStretch(1, 1);
    grid->setColumnStretch(3, 1);
    grid->setRowStretch(3, 1);

    connect(m_site, &QComboBox::currentIndexChanged, this, [this] {
        updateRanges();
        refresh();
    });
    connect(m_layer, &QSpinBox::valueChanged, this, &TrainingProbe::refresh);
    connect(m_head, &QSpinBox::valueChanged, this, &TrainingProbe::refresh);
    setShape(m_shape);
}

// In a narrow dock the heat map's title takes three lines and its key labels several more: room for them and for
// the axes, in lines of the current font (the window's zoom changes it).
void TrainingProbe::fitAttentionHeight()
{
    m_attention->setMinimumHeight(20 * fontMetrics().height());
}

void TrainingProbe::changeEvent(QEvent *event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::FontChange && m_attention)
        fitAttentionHeight();
}

void TrainingProbe::setShape(const ModelConfig &shape)
{
    m_shape = shape;
    const bool twoStacks = shape.isEncoderDecoder();
    m_site->setVisible(twoStacks);
    m_siteLabel->setVisible(twoStacks);
    updateRanges();
}

void TrainingProbe::updateRanges()
{
    ViewSpec spec;
    spec.site = site();
    const int layers = siteLayers(attentionSiteOf(spec, m_shape, "the probe"), m_shape);
    m_layer->setRange(0, std::max(0, layers - 1));
    m_head->setRange(0, std::max(0, m_shape.heads - 1));
}

int TrainingProbe::layer() const
{
    return m_layer->value();
}

int TrainingProbe::head() const
{
    return m_head->value();
}

std::string TrainingProbe::site() const
{
    return m_shape.isEncoderDecoder() ? m_site->currentData().toString().toStdString() : std::string("self");
}

void TrainingProbe::showRun(const ProbeRun &run)
{
    m_run = run;
    m_hasRun = true;
    const auto shown = [](const QString &text) {
        QString escaped = text.toHtmlEscaped();
        return escaped.replace('\n', QChar(0x21B5));
    };
    m_probe->setText(run.sourceText.isEmpty()
            ? tr("<b>Probe</b> (held-out example) after step %1:<br><code>%2</code>").arg(run.step).arg(shown(run.text))
            : tr("<b>Probe</b> (held-out example) after step %1:<br>source <code>%2</code> · decoder <code>%3</code>")
                  .arg(run.step)
                  .arg(shown(run.sourceText), shown(run.text)));
    if (run.viewInput.model)
        setShape(run.viewInput.model->config);
    refresh();
}

void TrainingProbe::clear()
{
    m_hasRun = false;
}

void TrainingProbe::applyTheme(const std::string &theme, const std::string &colormap)
{
    if (theme != m_theme)
        m_attention->plot()->setTheme(theme);
    m_theme = theme;
    m_colormap = colormap;
    refresh();
}

void TrainingProbe::refresh()
{
    if (!m_hasRun)
        return;
    ViewSpec spec;
    spec.view = "attention";
    spec.site = site();
    spec.layer = m_layer->value();
    spec.head = m_head->value();
    spec.theme = m_theme;
    spec.colormap = m_colormap;
    const names::AttentionSite attentionSite = attentionSiteOf(spec, m_shape, "the probe");
    if (m_attention->input().trace != m_run.trace || !(m_attention->input().site == attentionSite))
        m_attention->setInput(attentionSite == m_run.viewInput.site
                ? m_run.viewInput // as the worker made it
                : makeViewInput(
                    m_run.viewInput.model, m_run.input, m_run.viewInput.program, m_run.trace, attentionSite));
    if (!(spec == m_attention->spec()))
        m_attention->setSpec(spec);
}

} // namespace atlas
