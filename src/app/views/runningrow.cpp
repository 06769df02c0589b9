#include "views/runningrow.h"

#include "views/view.h"

#include <QHBoxLayout>
#include <QProgressBar>
#include <QPushButton>

namespace atlas {

RunningRow::RunningRow(View *view, const QString &format, const QString &cancelTip, QWidget *parent)
    : QWidget(parent)
    , m_bar(new QProgressBar(this))
    , m_cancel(new QPushButton(tr("Cancel"), this))
{
    m_bar->setFormat(format);
    m_cancel->setToolTip(cancelTip);
    connect(m_cancel, &QPushButton::clicked, view, &View::analysisCancelled);
    auto *row = new QHBoxLayout(this);
    row->addStretch(1);
    row->addWidget(m_bar, 2);
    row->addWidget(m_cancel);
    row->addStretch(1);
}

void RunningRow::setProgress(int done, int total)
{
    m_bar->setRange(0, std::max(0, total));
    m_bar->setValue(done);
}

} // namespace atlas
