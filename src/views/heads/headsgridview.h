#pragma once

#include "viewmodel/latestjob.h"
#include "views/view.h"

#include <QImage>

class QComboBox;

#include <memory>
#include <vector>

namespace atlas {

// Small multiples of every head's attention probabilities (`layer.{l}.attn.probs`): one row per layer, one
// column per head, each thumbnail pooled to at most 96 px and scaled to its own maximum. The head of the
// spec is outlined; clicking a thumbnail opens it in the attention view (emits specEdited). The thumbnails fit the
// view, or take the size the user picks (spec thumbnail_size, the view scrolling); once a token gets a row tall
// enough for text, each thumbnail is labelled with its query and key tokens.
class HeadsGridView : public View
{
    Q_OBJECT

public:
    explicit HeadsGridView(QWidget *parent = nullptr);
    bool pooling() const { return m_job.busy(); } // thumbnails of a long input are being made on a worker

    int layerCount() const { return m_layers; }
    int headCount() const { return m_heads; }
    // Where thumbnail (layer, head) is drawn, in widget coordinates (empty when out of range).
    QRect thumbnailRect(int layer, int head) const;
    // The cached thumbnail (null when that layer's probabilities are not computed yet).
    QImage thumbnail(int layer, int head) const;
    // The centred message drawn instead of the grid ("Not computed yet: …"), empty when the grid is drawn.
    QString message() const { return m_message; }
    // The share of attention drawn on head (layer, head)'s thumbnail, with the three largest in the subtitle: the mean
    // share its learned sink takes (gpt-oss, learnedSinks()), or else the mean weight on the first token over the
    // queries after it (firstKeyShare), the sink other models learn; −1 where none is drawn.
    float sinkShare(int layer, int head) const
    {
        const size_t i = size_t(layer * m_heads + head);
        return layer >= 0 && head >= 0 && head < m_heads && i < m_sinkShares.size() ? m_sinkShares[i] : -1.0f;
    }
    bool learnedSinks() const { return m_learnedSinks; }

    bool tokenLabelsShown() const { return grid().labels > 0; }
    std::vector<QWidget *> interfaceWidgets() const override;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

public:
    // The tooltip at `pos`: the head, and the (query, key) cell under it with its weight or "masked"; empty off the
    // thumbnails.
    QString toolTipAt(const QPoint &pos) const;

protected:
    void refresh() override;
    void paintEvent(QPaintEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void leaveEvent(QEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;

private:
    struct Grid
    {
        int left = 0; // x of the first column
        int top = 0; // y of the first row
        int cell = 0; // pitch of rows and columns
        int thumb = 0; // side of a thumbnail
        int labels = 0; // room for token labels left of and above each thumbnail; 0 = none
        QRect thumbnail(int layer, int head) const
        {
            return {left + head * cell + labels, top + layer * cell + labels, thumb, thumb};
        }
    };
    struct Hit
    {
        int layer = -1;
        int head = -1;
    };

    void rebuildThumbnails();
    void averageSinkShares();
    void countLayersAndHeads();
    Grid grid() const;
    Hit hitTest(const QPoint &pos) const;
    void paintLabels(QPainter &p, const Grid &g) const;
    void paintKeyValueGroups(QPainter &p, const Grid &g, int baseline) const;
    void paintThumbnails(QPainter &p, const Grid &g) const;
    void paintTokenLabels(QPainter &p, const Grid &g, const QRect &thumbnail) const;
    QFont tokenFont() const;
    int tokenCount() const; // queries
    int keyCount() const;
    int headerTop() const; // where the grid's column labels start, under the title and the size box
    QColor textColor() const;

    std::vector<QImage> m_thumbs; // [layer * heads + head]
    // sinkShare's, [layer * heads + head]; empty when no layer's probabilities are computed.
    std::vector<float> m_sinkShares;
    bool m_learnedSinks = false;
    QString sinkRanking() const; // "… most: L1 H3 72 %, L1 H2 68 %, L1 H1 61 %"
    QComboBox *m_size;

    int m_layers = 0;
    int m_heads = 0;
    QString m_message;
    Hit m_hover;
    // What the thumbnails were drawn from, to redraw them only when it changes.
    std::shared_ptr<const Trace> m_cachedTrace;
    std::string m_cachedColormap;
    std::string m_cachedScale;
    size_t m_cachedEntries = 0;
    names::AttentionSite m_cachedSite; // the thumbnails are of this attention (an encoder-decoder has three)
    LatestJob<std::vector<QImage>> m_job; // last: its destructor waits for the pooling in progress
};

} // namespace atlas

namespace atlas::views::heads {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::heads
