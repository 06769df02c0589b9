#pragma once

#include "lsh/lsh.h"
#include "viewmodel/latestjob.h"
#include "views/view.h"

#include <QTimer>

#include <memory>

namespace atlas {

// Reformer's LSH attention for one head of a layer that ran it (view kind "lsh"), in four panels:
//  1. the head's normalised keys projected on their first two principal directions, as points on a unit circle
//     coloured by their true bucket, over the bucket sectors of the round's rotation seen in that plane; the
//     rounds animate (about 1 s each), a click pauses;
//  2. every token's bucket in every round (layer.L.lsh.buckets);
//  3. the round's sorted-and-chunked matrix: LSH's effective weights with the tokens sorted by (bucket,
//     position), chunk boundaries as lines, cells the round does not allow greyed;
//  4. what LSH missed: full shared-QK attention (the kernel with one bucket, T ≤ 256), its heaviest pairs outside
//     LSH's mask and the share of its weight there.
// Every number comes from the session's LshAnalysis (view/viewanalysis.h, attention/lshanalysis.h); the view
// only draws it, building the sorted matrices' images on a worker for long inputs.
class LshView : public View
{
    Q_OBJECT

public:
    static constexpr int kMaxImageSide = 1024; // sorted matrices of longer inputs are drawn in blocks

    static constexpr int kRoundMilliseconds = 1000;

    static constexpr int kInlineTokens = 1024; // longer inputs are drawn on a worker thread

    explicit LshView(QWidget *parent = nullptr);
    bool building() const { return m_job.busy(); }

    QString message() const { return m_message; } // drawn instead of the panels; empty when they are drawn
    const attention::LshHeadAnalysis &data() const; // what is drawn (empty while nothing is)
    int rounds() const { return data().rounds; }
    int gridBucket(int round, int position) const; // the bucket panel 2 shows
    const std::vector<int> &sortedOrder(int round) const { return data().order.at(size_t(round)); }
    const std::vector<attention::LshMissedPair> &missedPairs() const { return data().missed; }
    double missedFraction() const { return data().missedFraction; }

    int currentRound() const { return m_round; }
    void setCurrentRound(int round);
    bool isAnimating() const { return m_timer.isActive(); }
    void setAnimating(bool on);

    QSize sizeHint() const override { return {1400, 900}; }
    QSize minimumSizeHint() const override;

    // Panel 3's sorted matrix of a round: one pixel per sorted pair, or per block of pairs above kMaxImageSide tokens.
    QImage sortedImage(int round) const
    {
        return size_t(round) < m_sortedImages.size() ? m_sortedImages[size_t(round)] : QImage();
    }

protected:
    void refresh() override;
    void paintEvent(QPaintEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;

private:
    struct Built
    {
        bool newData = true; // another analysis (not only another colour map)
        std::shared_ptr<const LshAnalysis> analysis;
        std::vector<QImage> images;
    };

    void startBuild(bool newData);
    void adopt(Built built);
    static std::vector<QImage> sortedImages(const attention::LshHeadAnalysis &data, const ViewSpec &spec);
    void paintSphere(QPainter &p, const QRect &area) const;
    void paintGrid(QPainter &p, const QRect &area) const;
    void paintSorted(QPainter &p, const QRect &area) const;
    void paintMissed(QPainter &p, const QRect &area) const;
    QRect paintTitle(QPainter &p, const QRect &area, const QString &title) const;
    QString caption(int panel) const;

    QTimer m_timer;
    int m_round = 0;
    QString m_message;
    std::shared_ptr<const LshAnalysis> m_analysis; // drawn
    std::vector<QImage> m_sortedImages; // per round
    std::shared_ptr<const LshAnalysis> m_requested; // what the images under way (or drawn) are of
    std::string m_cachedStyle;
    LatestJob<Built> m_job; // last: its destructor waits for the build in progress
};

// A distinct colour for bucket b of n (Tableau 10 up to 10 buckets, then evenly spaced hues).
QColor lshBucketColor(int b, int n);

} // namespace atlas

namespace atlas::views::lsh {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::lsh
