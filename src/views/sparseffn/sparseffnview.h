#pragma once

#include "views/view.h"

#include <memory>

class QComboBox;
class QCustomPlot;
class QCPTextElement;
class QLabel;

namespace atlas {

class HeatmapPlot;
struct SparseFfnAnalysis;

// Sparse is Enough (Jaszczur et al. 2021) on a dense feed-forward layer (view kind "sparse-ffn"): left, every
// neuron's activation for every token; right, what a sparse layer keeps of it: one neuron per block of N (spec
// "block_size"), the one of largest |activation| (an oracle controller: the paper trains a small one). Below, the
// error the sparse layer makes against the dense output as fewer neurons are kept: the top-k per token and one per
// block for each N. The numbers are SparseFfnAnalysis's (sparseffn/sparseffn.h); the view draws them.
class SparseFfnView : public View
{
    Q_OBJECT

public:
    explicit SparseFfnView(QWidget *parent = nullptr);

    QString message() const; // drawn instead of the plots; empty when they are drawn
    QString formula() const;
    const SparseFfnAnalysis *drawnAnalysis() const { return m_drawn.get(); }
    HeatmapPlot *densePlot() const { return m_dense; }
    HeatmapPlot *sparsePlot() const { return m_sparse; }
    QCustomPlot *errorPlot() const { return m_error; }
    QComboBox *blockBox() const { return m_block; }
    std::vector<QWidget *> interfaceWidgets() const override { return {m_controls}; }
    QSize sizeHint() const override { return {1200, 800}; }

protected:
    void refresh() override;

private:
    void showMessage(const QString &text);
    void drawError();
    void chooseBlock(int index);

    QLabel *m_formula, *m_message;
    QWidget *m_controls, *m_plots;
    QComboBox *m_block;
    HeatmapPlot *m_dense, *m_sparse;
    QCustomPlot *m_error;
    QCPTextElement *m_errorTitle;
    std::shared_ptr<const SparseFfnAnalysis> m_drawn;
};

} // namespace atlas

namespace atlas::views::sparseffn {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::sparseffn
