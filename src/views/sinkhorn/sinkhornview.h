#pragma once

#include "views/analysisplotview.h"

#include "sinkhorn/sinkhorn.h"

#include <QPointer>

namespace atlas {

struct SinkhornPicture;

// Sinkhorn (view kind "sinkhorn"; Sparse Sinkhorn attention, Tay et al. 2020): left, the chosen layer's sort matrix S,
// query blocks down and the blocks they read across, the largest of each row outlined; right, the chosen head's
// attention as the weight each value gets, the block grid drawn, each query block's own block and its sorted block
// outlined: a learned sparse pattern, as the LSH view draws a hashed one. The caption gives the share of pairs
// scored, how close S is to a permutation and the held-out scores (SinkhornAnalysis's numbers).
class SinkhornView : public ResultPlotView<SinkhornAnalysis>
{
    Q_OBJECT

public:
    explicit SinkhornView(QWidget *parent = nullptr);

protected:
    void resizeEvent(QResizeEvent *event) override;
    QString draw(const SinkhornAnalysis &result) override;
    QString pendingText() const override;

private:
    void drawSort(const SinkhornPicture &s);
    void drawAttention(const SinkhornPicture &s);
    void labelAxes();

    QPointer<QCPAxisRect> m_sort, m_attention; // while drawn
    QStringList m_blockLabels;
    int m_tokens = 0;
};

} // namespace atlas

namespace atlas::views::sinkhorn {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::sinkhorn
