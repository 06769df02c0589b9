#pragma once

#include "views/analysisplotview.h"

#include "sparsity/sparsity.h"

class QCPAxisRect;
class QMouseEvent;

namespace atlas {

// Sparse attention (view kind "sparsity"): sparsemax and α-entmax (Correia et al. 2019) give many query–key pairs
// exactly 0, which softmax never does. On the left, every layer × head: its α and the share of the pairs its mask
// allows that it gives exactly 0; a click chooses a head. On the right, that head's keys per query: how many the
// mask allows, and how many get more than 0. The numbers are SparseAttentionAnalysis's (sparsity/sparsity.h).
class SparsityView : public ResultPlotView<SparseAttentionAnalysis>
{
    Q_OBJECT

public:
    explicit SparsityView(QWidget *parent = nullptr);

protected:
    QString draw(const SparseAttentionAnalysis &result) override;
    QString pendingText() const override;

private:
    void drawGrid(const struct AttentionSparsity &s, int layer, int head);
    void drawSupport(const struct AttentionSparsity &s, int layer, int head);
    void chooseHeadAt(QMouseEvent *event);

    QCPAxisRect *m_grid = nullptr; // the layer × head table of the last draw
};

} // namespace atlas

namespace atlas::views::sparsity {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::sparsity
