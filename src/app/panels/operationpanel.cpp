#include "panels/operationpanel.h"

#include "trace/names.h"

#include "session/session.h"

#include <QEvent>
#include <QLabel>
#include <QListWidget>
#include <QVBoxLayout>

#include <algorithm>

namespace atlas {

OperationPanel::OperationPanel(Session *session, QWidget *parent)
    : QWidget(parent)
    , m_session(session)
    , m_list(new QListWidget(this))
    , m_details(new QLabel(this))
{
    m_list->setToolTip(tr("Click an operation to run the model up to and including it.\n"
                          "Space steps forward, Shift+Space steps back."));
    m_details->setWordWrap(true);
    m_details->setTextFormat(Qt::RichText);
    m_details->setTextInteractionFlags(Qt::TextSelectableByMouse);
    fitToFont();
    m_details->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_list, 1);
    layout->addWidget(m_details);
    connect(m_session, &Session::traceChanged, this, &OperationPanel::rebuild);
    connect(m_list, &QListWidget::itemClicked, this, [this](QListWidgetItem *item) {
        const int row = m_list->row(item);
        m_session->runTo(row + 1);
        const auto *program = m_session->program();
        if (program && !program->ops[size_t(row)].outputs.empty())
            emit tensorChosen(QString::fromStdString(program->ops[size_t(row)].outputs.front().name));
    });
}

// Wide enough for the longest label at the current zoom ("36. L11  weighted sum of V" and a scroll bar).
void OperationPanel::fitToFont()
{
    m_details->setMinimumHeight(fontMetrics().height() * 4);
    int widest = fontMetrics().horizontalAdvance(QStringLiteral("36. L11  weighted sum of V"));
    for (int i = 0; i < m_list->count(); ++i)
        widest = std::max(widest, fontMetrics().horizontalAdvance(m_list->item(i)->text()));
    // The dock's tabs (Generate, Operations, Train) share this width: they must not be cut either.
    const int tabs = fontMetrics().horizontalAdvance(tr("Generate") + tr("Operations") + tr("Train")) + 90;
    m_list->setMinimumWidth(std::max(widest + 40, tabs));
}

void OperationPanel::changeEvent(QEvent *event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::FontChange)
        fitToFont();
    if (event->type() == QEvent::PaletteChange && m_session->program())
        showCursor(); // the colours of run and not-yet-run operations come from the palette
}

void OperationPanel::rebuild()
{
    const Program *program = m_session->program();
    if (!program)
        return;
    if (m_list->count() != int(program->ops.size())) {
        m_list->clear();
        for (size_t i = 0; i < program->ops.size(); ++i)
            m_list->addItem(new QListWidgetItem);
    }
    for (size_t i = 0; i < program->ops.size(); ++i) {
        const Op &op = program->ops[i];
        // L0 …; an encoder-decoder's blocks E0 … (encoder) and D0 … (decoder)
        const QChar stack = op.stack == names::kEncoderStack ? 'E' : op.stack == names::kDecoderStack ? 'D' : 'L';
        const QString where = op.layer >= 0 ? QString("%1%2  ").arg(stack).arg(op.layer) : QString("     ");
        m_list->item(int(i))->setText(QString("%1. %2%3").arg(i + 1, 3).arg(where, QString::fromStdString(op.label)));
        m_list->item(int(i))->setToolTip(QString::fromStdString(op.name));
    }
    fitToFont();
    showCursor();
}

void OperationPanel::showCursor()
{
    const Program *program = m_session->program();
    const int cursor = m_session->cursor();
    for (int i = 0; i < m_list->count(); ++i) {
        QListWidgetItem *item = m_list->item(i);
        QFont f = item->font();
        f.setBold(i == cursor - 1);
        item->setFont(f);
        item->setForeground(i < cursor ? palette().color(QPalette::Text) : palette().color(QPalette::PlaceholderText));
    }
    if (cursor > 0) {
        m_list->setCurrentRow(cursor - 1);
        m_list->scrollToItem(m_list->item(cursor - 1));
    } else {
        m_list->setCurrentRow(-1); // rewound: no operation has run, none is highlighted
        m_list->clearSelection();
        m_list->scrollToTop();
    }
    QString html;
    if (cursor == 0) {
        html = tr("<b>Nothing run yet.</b> Press Space to run the first operation.");
    } else {
        const Op &op = program->ops[size_t(cursor - 1)];
        html = tr("<b>%1</b> (operation %2 of %3)")
                   .arg(QString::fromStdString(op.label))
                   .arg(cursor)
                   .arg(program->ops.size());
        for (const OpOutput &o : op.outputs)
            html += QString("<br><tt>%1</tt> %2<br>&nbsp;&nbsp;<i>%3</i>")
                        .arg(QString::fromStdString(o.name), QString::fromStdString(Tensor::shapeString(o.shape)),
                            QString::fromStdString(o.formula).toHtmlEscaped());
    }
    if (cursor < int(program->ops.size()))
        html += tr("<br><span style='color:gray'>Next: %1</span>")
                    .arg(QString::fromStdString(program->ops[size_t(cursor)].name));
    m_details->setText(html);
}

} // namespace atlas
