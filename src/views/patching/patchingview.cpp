#include "patching/patchingview.h"

#include "patching/patching.h"
#include "views/corruptioncontrols.h"
#include "views/heatmapplot.h"
#include "views/runningrow.h"
#include "views/viewfonts.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSignalBlocker>
#include <QVBoxLayout>

namespace atlas {

PatchingView::PatchingView(QWidget *parent)
    : View(parent)
{
    m_controls = new CorruptionControls([this](const auto &change) { editSpec(change); }, this);
    m_site = new QComboBox(m_controls);
    m_site->addItem(tr("residual stream, by position"), QStringLiteral("residual"));
    m_site->addItem(tr("each head's output"), QStringLiteral("heads"));
    m_site->addItem(tr("each feed-forward output"), QStringLiteral("mlp"));
    m_site->setToolTip(tr("What one cell patches (spec key patch)"));
    m_controls->grid()->addWidget(new QLabel(tr("Patch:"), m_controls), 0, 4);
    m_controls->grid()->addWidget(m_site, 0, 5);
    connect(m_site, &QComboBox::activated, this, [this](int i) {
        editSpec(
            [this, i](ViewSpec &s) { s.set(views::patching::kPatch, m_site->itemData(i).toString().toStdString()); });
    });

    m_formula = newFormulaLabel();
    m_message = newMessageLabel();
    m_running = new RunningRow(
        this, tr("%v of %m patched forward passes"), tr("Stop the sweep; change a setting to run it again"), this);
    m_plot = new HeatmapPlot(this);
    m_plot->setValueLabel(tr("fraction of the clean metric restored"));
    m_caption = new QLabel(this);
    m_caption->setWordWrap(true);
    m_caption->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_controls);
    layout->addWidget(m_formula);
    layout->addWidget(m_message, 1);
    layout->addWidget(m_running);
    layout->addWidget(m_plot, 1);
    layout->addWidget(m_caption);
    showMessage(QString::fromUtf8(kNothingComputed));
}

QString PatchingView::message() const
{
    return m_plot->isHidden() ? m_message->text() : QString();
}

QString PatchingView::caption() const
{
    return m_caption->text();
}

void PatchingView::showMessage(const QString &text, bool running)
{
    m_message->setFont(sizedFont(font(), 12));
    setMessageText(m_message, text);
    m_message->show();
    m_running->setVisible(running);
    m_plot->hide();
    m_caption->hide();
}

void PatchingView::refresh()
{
    m_formula->setFont(sizedFont(font(), 11));
    m_caption->setFont(sizedFont(font(), 10));
    m_controls->showSpec(m_spec, int(m_input.tokens.size()));
    {
        const QSignalBlocker block(m_site);
        m_site->setCurrentIndex(
            std::max(0, m_site->findData(QString::fromStdString(m_spec.get(views::patching::kPatch)))));
    }
    const bool difference = !m_spec.get(views::patching::kContrast).empty();
    m_formula->setText(
        tr("The input is the clean run, the corrupted input (or the input with noise) the corrupted one. Each cell "
           "runs the corrupted input with "
           "one activation taken from the clean run, then the rest of the model again: recovered = (m − m_corrupted) "
           "/ (m_clean − m_corrupted), 1 where that activation alone brings the clean answer back. m = %1 at the "
           "position (Meng et al. 2022; Wang et al. 2022).")
            .arg(difference ? tr("logit(target) − logit(contrast)") : tr("p(target)")));
    const auto *a = currentAnalysis<PatchingAnalysis>();
    if (!a) {
        if (!m_input.analysis.problem.isEmpty())
            return showMessage(m_input.analysis.problem);
        if (!m_input.analysis.pending)
            return showMessage(QString::fromUtf8(kNothingComputed));
        m_running->setProgress(m_input.analysis.done, std::max(1, m_input.analysis.total));
        return showMessage(tr("Patching…"), true);
    }
    const PatchingResult &r = a->result;
    m_cells = std::make_shared<std::vector<float>>(r.recovered.begin(), r.recovered.end());
    QStringList rows, cols;
    for (int l = 0; l < r.rows; ++l)
        rows << (r.site == PatchSite::Residual ? tr("into block %1").arg(l) : tr("layer %1").arg(l));
    if (r.site == PatchSite::Residual)
        cols = tokenLabels(m_input, r.cols);
    else if (r.site == PatchSite::Heads)
        for (int h = 0; h < r.cols; ++h)
            cols << tr("head %1").arg(h);
    else
        cols << tr("feed-forward");
    m_plot->setTheme(m_spec.theme);
    m_plot->setColormap(m_spec.colormap);
    m_plot->setLabels(rows, cols);
    m_plot->setIndexInLabels(r.site == PatchSite::Residual);
    m_plot->setAxisTitles(r.site == PatchSite::Residual ? tr("position patched")
            : r.site == PatchSite::Heads                ? tr("head patched")
                                                        : QString(),
        r.site == PatchSite::Residual ? tr("the stream entering") : tr("layer"));
    const QString target = vocabularyLabel(m_input, a->target);
    m_plot->setTitle(difference ? tr("What restores logit('%1') − logit('%2') at position %3")
                                      .arg(target, vocabularyLabel(m_input, a->contrast))
                                      .arg(r.position)
                                : tr("What restores p('%1') at position %2").arg(target).arg(r.position));
    m_plot->setMatrix(m_cells->data(), r.rows, r.cols, m_cells);
    m_plot->setHoverText([r, rows, cols](int row, int col) {
        const size_t at = size_t(row) * size_t(r.cols) + size_t(col);
        return tr("%1, %2 patched: metric %3, recovered %4")
            .arg(rows.value(row), cols.value(col), formatNumber(r.metric[at], 3), formatNumber(r.recovered[at], 3));
    });
    m_caption->setText(tr("Clean run: %1; corrupted: %2. %3 patched forward passes in %4 s, each rerunning only the "
                          "operations after the patched one.")
                           .arg(formatNumber(r.clean, 4), formatNumber(r.corrupted, 4))
                           .arg(r.patches)
                           .arg(formatNumber(a->milliseconds / 1000.0, 3)));
    m_message->hide();
    m_running->hide();
    m_plot->show();
    m_caption->show();
}

} // namespace atlas

std::unique_ptr<atlas::View> atlas::views::patching::makeView(QWidget *parent)
{
    return std::make_unique<PatchingView>(parent);
}
