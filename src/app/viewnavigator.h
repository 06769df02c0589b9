#pragma once

#include <QWidget>

#include <string>
#include <vector>

class QScrollArea;
class QTabWidget;

namespace atlas {

class ComparisonView;
class View;

// Every view of viewKinds() in two rows of tabs: the groups on top (Attention, Model, Efficiency, Adaptive
// …), the group's views below. Two short rows stay readable on a projector at any zoom where one row
// of every view would not. Indices count views in the table's order.
class ViewNavigator : public QWidget
{
    Q_OBJECT

public:
    explicit ViewNavigator(QWidget *parent = nullptr);

    const std::vector<View *> &views() const { return m_views; }
    int count() const { return int(m_views.size()); }
    int currentIndex() const;
    View *currentView() const;
    std::string currentKind() const;
    void setCurrentIndex(int index);
    void setCurrentKind(const std::string &kind); // ignored for an unknown kind
    // Presentation mode shows the view alone: the tab rows hide, Ctrl+1 … Ctrl+9 and Ctrl+PgUp/PgDn still switch.
    void setTabsVisible(bool visible);
    // The view on screen scrolled back to its top left corner (a lesson step opens its view from the start).
    void scrollToOrigin();
    // While a spec compares two runs, the tab on screen holds the comparison (views/comparisonview.h) in place of its
    // view, and currentView() is the comparison; it follows the tab switches.
    void setComparing(bool comparing);
    ComparisonView *comparison() const { return m_comparison; }

signals:
    void currentChanged(int index); // another view is on screen

private:
    QScrollArea *currentScroll() const;
    void placeComparison();

    QTabWidget *m_groups;
    std::vector<View *> m_views;
    std::vector<QScrollArea *> m_scrolls; // per view: the scroll area of its tab
    ComparisonView *m_comparison;
    bool m_comparing = false;
    int m_hostIndex = -1; // the view whose tab holds the comparison
    std::vector<QTabWidget *> m_groupOf; // per view: the inner tab widget holding it
};

} // namespace atlas
