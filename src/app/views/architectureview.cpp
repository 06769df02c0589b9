#include "views/architectureview.h"

#include "views/plottheme.h"
#include "views/viewfonts.h"

#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>

namespace atlas {

namespace {

constexpr int kMargin = 10;

// "Layer 0"; an encoder-decoder's "Encoder layer 0", "Decoder embedding" …: the diagram's column names capitalised.
QString columnTitle(const std::string &column)
{
    QString title = QString::fromStdString(column);
    if (!title.isEmpty())
        title[0] = title[0].toUpper();
    return title;
}

bool isResidual(const DiagramBox &box)
{
    return box.label.find("residual") != std::string::npos;
}

} // namespace

ArchitectureView::ArchitectureView(QWidget *parent)
    : View(parent)
{
    setMouseTracking(true);
    m_message = tr("Nothing to show yet: run the model");
}

ArchitectureView::Layout ArchitectureView::layout() const
{
    const QFontMetrics label(sizedFont(font(), 9));
    const QFontMetrics title(sizedFont(font(), 12, true));
    Layout l;
    l.left = kMargin;
    l.gap = std::max(6, label.height() / 2);
    l.top = kMargin + title.height() + label.height() + 2 * l.gap + label.height();
    l.boxHeight = label.height() + 6;
    l.rowPitch = l.boxHeight + std::max(3, label.height() / 4);
    const int columns = std::max(1, int(m_diagram.columns.size()));
    int widest = label.horizontalAdvance(QStringLiteral("Embedding"));
    for (const DiagramBox &b : m_diagram.boxes) // the widest label beside its shape, as painted
        widest = std::max(widest,
            label.horizontalAdvance(QStringLiteral("⊕ ") + QString::fromStdString(b.label))
                + label.horizontalAdvance(QString::fromStdString(b.shape)) + 24);
    l.columnWidth = std::max(widest, (width() - 2 * kMargin - (columns - 1) * l.gap) / columns);
    return l;
}

QSize ArchitectureView::sizeHint() const
{
    return {1200, 800};
}

QSize ArchitectureView::minimumSizeHint() const
{
    const Layout l = layout();
    const int columns = std::max(1, int(m_diagram.columns.size()));
    return {2 * kMargin + columns * l.columnWidth + (columns - 1) * l.gap,
        l.top + std::max(1, m_diagram.rows) * l.rowPitch + kMargin};
}

QRect ArchitectureView::boxRect(int op) const
{
    if (op < 0 || op >= int(m_diagram.boxes.size()) || !m_message.isEmpty())
        return {};
    const Layout l = layout();
    const DiagramBox &b = m_diagram.boxes[size_t(op)];
    return {l.left + b.column * (l.columnWidth + l.gap), l.top + b.row * l.rowPitch, l.columnWidth, l.boxHeight};
}

int ArchitectureView::boxAt(const QPoint &point) const
{
    for (const DiagramBox &b : m_diagram.boxes)
        if (boxRect(b.op).contains(point))
            return b.op;
    return -1;
}

void ArchitectureView::refresh()
{
    if (!m_input.program) {
        m_diagram = {};
        m_message = tr("Nothing to show yet: run the model");
    } else {
        m_diagram = architectureDiagram(*m_input.program, m_input.trace.get());
        m_message.clear();
    }
    updateGeometry();
    update();
}

void ArchitectureView::paintEvent(QPaintEvent *)
{
    clearClipped();
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const ThemeColors colors = themeColors(m_spec.theme);
    const bool dark = m_spec.theme == "dark";
    p.fillRect(rect(), colors.background);
    p.setPen(colors.text);
    if (!m_message.isEmpty()) {
        p.setFont(sizedFont(font(), 12));
        p.drawText(rect().adjusted(20, 20, -20, -20), Qt::AlignCenter | Qt::TextWordWrap, m_message);
        return;
    }
    const Layout l = layout();
    const QFont titleFont = sizedFont(font(), 12, true), labelFont = sizedFont(font(), 9),
                headFont = sizedFont(font(), 10, true);
    p.setFont(titleFont);
    const int current = m_diagram.current;
    const QString stepper = current >= 0 ? tr("the stepper is after op %1, %2")
                                               .arg(current + 1)
                                               .arg(QString::fromStdString(m_diagram.boxes[size_t(current)].label))
                                         : tr("nothing run yet");
    p.drawText(QPoint(kMargin, kMargin + QFontMetrics(titleFont).ascent()), tr("The model, operation by operation"));
    p.setFont(labelFont);
    QColor muted = colors.text;
    muted.setAlphaF(0.7f);
    p.setPen(muted);
    p.drawText(QPoint(kMargin, kMargin + QFontMetrics(titleFont).height() + QFontMetrics(labelFont).ascent() + 2),
        tr("%1 · click an operation to step there · ⊕ a residual add").arg(stepper));
    p.setFont(headFont);
    p.setPen(colors.text);
    for (size_t c = 0; c < m_diagram.columns.size(); ++c)
        p.drawText(QRect(l.left + int(c) * (l.columnWidth + l.gap), l.top - l.gap - QFontMetrics(headFont).height(),
                       l.columnWidth, QFontMetrics(headFont).height()),
            Qt::AlignCenter, columnTitle(m_diagram.columns[c]));
    const QColor accent = dark ? QColor(0x4ea3ff) : QColor(0x1f77b4);
    QColor doneFill = accent;
    doneFill.setAlpha(dark ? 70 : 40);
    p.setFont(labelFont);
    const QFontMetrics fm(labelFont);
    for (const DiagramBox &b : m_diagram.boxes) {
        const QRect r = boxRect(b.op);
        const bool isCurrent = b.op == current;
        QPen pen(isCurrent ? accent : colors.axis, isCurrent ? 2.5 : 1, b.done ? Qt::SolidLine : Qt::DashLine);
        p.setPen(pen);
        p.setBrush(isCurrent ? accent : b.done ? doneFill : QBrush(Qt::NoBrush));
        p.drawRoundedRect(r.adjusted(1, 1, -1, -1), 4, 4);
        p.setPen(isCurrent ? QColor(Qt::white) : colors.text);
        const QString shape = QString::fromStdString(b.shape);
        const int shapeWidth = fm.horizontalAdvance(shape);
        const QRect text = r.adjusted(6, 0, -6, 0);
        const QString name = (isResidual(b) ? QStringLiteral("⊕ ") : QString()) + QString::fromStdString(b.label);
        const QString shown = fm.elidedText(name, Qt::ElideRight, text.width() - shapeWidth - 6);
        if (shown != name)
            noteClipped(name);
        p.drawText(text, Qt::AlignLeft | Qt::AlignVCenter, shown);
        p.drawText(text, Qt::AlignRight | Qt::AlignVCenter, shape);
    }
}

void ArchitectureView::mousePressEvent(QMouseEvent *event)
{
    const int op = boxAt(event->position().toPoint());
    if (event->button() != Qt::LeftButton || op < 0)
        return View::mousePressEvent(event);
    m_spec.op = m_diagram.boxes[size_t(op)].name;
    emit specEdited(m_spec);
}

void ArchitectureView::mouseMoveEvent(QMouseEvent *event)
{
    const int op = boxAt(event->position().toPoint());
    if (op < 0)
        return QToolTip::hideText();
    const DiagramBox &b = m_diagram.boxes[size_t(op)];
    QToolTip::showText(event->globalPosition().toPoint(),
        tr("%1 (%2)\n%3\nclick to step here")
            .arg(QString::fromStdString(b.label), QString::fromStdString(b.name), QString::fromStdString(b.formula)),
        this);
}

} // namespace atlas
