#pragma once

#include "attention/kernelcomparison.h"
#include "views/view.h"

#include <QImage>

class QPainter;

#include <memory>
#include <vector>

class QCustomPlot;

namespace atlas {

// One head under every attention kernel (view kind "kernels"): the effective weights of each kernel as small heat
// maps, titled with its errors against full attention (max and mean |ΔC| of the context, mean KL of the rows),
// and a log-log plot of measured time against N per kernel with Tay et al.'s complexity in the legend, read from
// a `bench-attention --sweep --json` file (resources/benchmarks/attention-sweep.json by default).
//
// The comparison (KernelComparisonAnalysis, kernels/kernels.h) reruns the head's Q, K, V densely through eight
// kernels (up to ~40 ms at T = 512, docs/benchmarks.md); the session runs it off the GUI thread and the view
// draws the result. The time plot reads the sweep file through the core's parser (attention/attentionsweep.h).
class KernelCompareView : public View
{
    Q_OBJECT

public:
    explicit KernelCompareView(QWidget *parent = nullptr);

    static QString defaultBenchmarkFile();
    void setBenchmarkFile(const QString &path); // reloads the time plot

    const std::vector<attention::KernelComparisonEntry> &entries() const { return m_entries; }
    int panelCount() const { return static_cast<int>(m_entries.size()); }
    QString panelTitle(int i) const;
    QString errorText(int i) const; // "max |ΔC| 0.12 · mean 0.03 · KL 0.41", or why the kernel was skipped
    QString message() const { return m_message; } // drawn instead of the panels, empty when they are drawn
    QString benchmarkMessage() const { return m_benchMessage; } // drawn over the time plot when it has no data
    QCustomPlot *timePlot() const { return m_plot; }
    double computeMilliseconds() const { return m_computeMs; }

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void refresh() override;
    void paintEvent(QPaintEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;

private:
    void adoptAnalysis();
    void rebuildImages();
    static void hatchMaskedCells(QPainter &p, const QRect &thumb, const Tensor &mask, const QColor &hatch);
    void loadBenchmarks();
    void layoutPlot();
    QRect panelArea() const;
    void paintPanel(QPainter &p, int i, const QRect &cell);
    QString panelText(int i) const;

    QCustomPlot *m_plot = nullptr;
    QString m_benchFile;
    QString m_benchMessage;
    std::vector<attention::KernelComparisonEntry> m_entries;
    std::vector<QImage> m_images;
    QColor m_maskedColor; // the colour map's masked grey (ColorLut::masked), hatched darker
    QString m_message;
    double m_computeMs = 0;
    int m_textHeight = 0; // of the tallest panel text, at the last paint
    std::string m_drawn; // what the images were drawn from, to redraw them only when it changes
};

} // namespace atlas

namespace atlas::views::kernels {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::kernels
