#include "viewnavigator.h"

#include "view/viewkinds.h"
#include "views/comparisonview.h"
#include "views/view.h"
#include "views/viewfactory.h"

#include <QScrollArea>
#include <QTabBar>
#include <QTabWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <map>

namespace atlas {

ViewNavigator::ViewNavigator(QWidget *parent)
    : QWidget(parent)
    , m_groups(new QTabWidget(this))
    , m_comparison(new ComparisonView(this))
{
    m_comparison->hide();
    m_groups->setObjectName("viewGroups");
    m_groups->setDocumentMode(true);
    std::map<std::string, QTabWidget *> inner;
    for (const ViewKind &kind : viewKinds()) {
        QTabWidget *&group = inner[kind.group];
        if (group == nullptr) {
            group = new QTabWidget(m_groups);
            group->setDocumentMode(true);
            m_groups->addTab(group, tr(kind.group.c_str()));
            connect(group, &QTabWidget::currentChanged, this, [this] {
                placeComparison();
                emit currentChanged(currentIndex());
            });
        }
        // Each view in a scroll area: where the window is smaller than what a view needs at this zoom (its font-
        // scaled minimum size), it scrolls instead of cutting its text or squeezing its plots.
        auto *scroll = new QScrollArea(group);
        scroll->setWidgetResizable(true);
        scroll->setFrameShape(QFrame::NoFrame);
        View *view = createView(kind.kind).release();
        scroll->setWidget(view);
        group->addTab(scroll, tr(kind.title.c_str()));
        group->setTabToolTip(group->count() - 1, tr(kind.summary.c_str()));
        m_views.push_back(view);
        m_scrolls.push_back(scroll);
        m_groupOf.push_back(group);
    }
    connect(m_groups, &QTabWidget::currentChanged, this, [this] {
        placeComparison();
        emit currentChanged(currentIndex());
    });
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_groups);
}

QScrollArea *ViewNavigator::currentScroll() const
{
    auto *group = qobject_cast<QTabWidget *>(m_groups->currentWidget());
    return group ? qobject_cast<QScrollArea *>(group->currentWidget()) : nullptr;
}

View *ViewNavigator::currentView() const
{
    QScrollArea *scroll = currentScroll();
    return scroll ? qobject_cast<View *>(scroll->widget()) : nullptr;
}

int ViewNavigator::currentIndex() const
{
    const auto it = std::find(m_scrolls.begin(), m_scrolls.end(), currentScroll());
    return it == m_scrolls.end() ? -1 : int(it - m_scrolls.begin());
}

void ViewNavigator::setComparing(bool comparing)
{
    if (comparing == m_comparing)
        return;
    m_comparing = comparing;
    placeComparison();
}

void ViewNavigator::placeComparison()
{
    const int index = m_comparing ? currentIndex() : -1;
    if (index == m_hostIndex)
        return;
    if (m_hostIndex >= 0) { // the view goes back to its tab; the comparison waits hidden
        QScrollArea *host = m_scrolls[size_t(m_hostIndex)];
        QWidget *comparison = host->takeWidget();
        comparison->setParent(this);
        comparison->hide();
        host->setWidget(m_views[size_t(m_hostIndex)]);
        m_views[size_t(m_hostIndex)]->show();
    }
    m_hostIndex = index;
    if (index >= 0) {
        QScrollArea *host = m_scrolls[size_t(index)];
        QWidget *view = host->takeWidget();
        view->setParent(this);
        view->hide();
        host->setWidget(m_comparison);
        m_comparison->show();
    }
}

std::string ViewNavigator::currentKind() const
{
    const int index = currentIndex();
    return index < 0 ? std::string() : viewKinds().at(size_t(index)).kind;
}

void ViewNavigator::setCurrentIndex(int index)
{
    if (index < 0 || index >= count() || index == currentIndex())
        return;
    QTabWidget *group = m_groupOf[size_t(index)];
    const QSignalBlocker block(group); // one currentChanged, from the outer switch or below
    group->setCurrentWidget(m_scrolls[size_t(index)]);
    if (m_groups->currentWidget() != group)
        m_groups->setCurrentWidget(group);
    else {
        placeComparison();
        emit currentChanged(index);
    }
}

void ViewNavigator::setCurrentKind(const std::string &kind)
{
    if (const int index = viewKindIndex(kind); index >= 0)
        setCurrentIndex(index);
}

void ViewNavigator::scrollToOrigin()
{
    if (auto *group = qobject_cast<QTabWidget *>(m_groups->currentWidget()))
        if (auto *scroll = qobject_cast<QScrollArea *>(group->currentWidget()))
            scroll->ensureVisible(0, 0, 0, 0);
}

void ViewNavigator::setTabsVisible(bool visible)
{
    m_groups->tabBar()->setVisible(visible);
    for (QTabWidget *group : m_groupOf)
        group->tabBar()->setVisible(visible);
}

} // namespace atlas
