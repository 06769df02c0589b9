#include "views/viewexport.h"

#include "views/heatmapplot.h"
#include "views/view.h"

#include "io/atomicfile.h"
#include "util/error.h"
#include "views/palette.h"

#include <qcustomplot.h>

#include <QApplication>
#include <QBuffer>
#include <QFileInfo>
#include <QLayout>
#include <QPdfWriter>
#include <QSvgGenerator>

namespace atlas {

namespace {

[[noreturn]] void fail(const QString &path, const QString &reason)
{
    throw Error((path + QStringLiteral(": ") + reason).toStdString());
}

// Paints `widget` (at `offset` in painter coordinates) and, recursively, its visible children.
void paintVector(QCPPainter &painter, QWidget *widget, const QPoint &offset)
{
    if (auto *plot = qobject_cast<QCustomPlot *>(widget)) {
        painter.save();
        painter.translate(offset);
        plot->toPainter(&painter, plot->width(), plot->height());
        painter.restore();
        return;
    }
    widget->render(&painter, offset, QRegion(), QWidget::DrawWindowBackground);
    for (QObject *child : widget->children()) {
        auto *w = qobject_cast<QWidget *>(child);
        if (w != nullptr && !w->isWindow() && w->isVisibleTo(widget))
            paintVector(painter, w, offset + w->pos());
    }
}

void paintAll(QPaintDevice *device, QWidget *view, const QString &path)
{
    QCPPainter painter;
    if (!painter.begin(device))
        fail(path, QStringLiteral("cannot start painting"));
    painter.setMode(QCPPainter::pmVectorized);
    painter.setMode(QCPPainter::pmNoCaching);
    paintVector(painter, view, QPoint());
    painter.end();
}

QByteArray renderPng(QWidget *view, const QString &path)
{
    // Rendered into an image of exactly the view's size (grab() would scale by the screen's pixel ratio).
    QImage image(view->size(), QImage::Format_ARGB32_Premultiplied);
    image.fill(palette::paper);
    view->render(&image);
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    if (!image.save(&buffer, "PNG"))
        fail(path, QStringLiteral("cannot encode the PNG image"));
    return bytes;
}

void writeVector(QWidget *view, const QString &path, QBuffer &file, bool pdf)
{
    const QSize size = view->size();
    const int dpi = view->logicalDpiX() > 0 ? view->logicalDpiX() : 96;
    if (pdf) {
        QPdfWriter writer(&file);
        writer.setResolution(dpi); // one device unit per widget pixel, so fonts keep their on-screen size
        writer.setPageSize(QPageSize(QSizeF(size) * 72.0 / dpi, QPageSize::Point, QString(), QPageSize::ExactMatch));
        writer.setPageMargins(QMarginsF(0, 0, 0, 0));
        writer.setCreator(QStringLiteral("Transformer Atlas"));
        paintAll(&writer, view, path);
    } else {
        QSvgGenerator generator;
        generator.setOutputDevice(&file);
        generator.setResolution(dpi);
        generator.setSize(size);
        generator.setViewBox(QRect(QPoint(), size));
        generator.setTitle(QFileInfo(path).completeBaseName());
        generator.setDescription(QStringLiteral("Transformer Atlas view"));
        paintAll(&generator, view, path);
    }
}

void replotNow(QCustomPlot *plot)
{
    plot->setViewport(plot->rect()); // hidden plots get no resize event, so their viewport may be stale
    plot->replot(QCustomPlot::rpImmediateRefresh);
}

// Hides a view's controls (View::interfaceWidgets) for the export; shows again those that were shown.
class InterfaceHidden
{
public:
    explicit InterfaceHidden(QWidget *view)
    {
        if (const auto *v = qobject_cast<const View *>(view))
            for (QWidget *w : v->interfaceWidgets())
                if (w != nullptr && !w->isHidden()) {
                    w->hide();
                    m_hidden.push_back(w);
                }
    }
    ~InterfaceHidden()
    {
        for (QWidget *w : m_hidden)
            w->show();
    }
    InterfaceHidden(const InterfaceHidden &) = delete;
    InterfaceHidden &operator=(const InterfaceHidden &) = delete;

private:
    std::vector<QWidget *> m_hidden;
};

// Resizes the view (and lays out and replots everything in it) for the export, its controls hidden; restores it
// when destroyed.
class ExportSize
{
public:
    ExportSize(QWidget *view, QSize size)
        : m_interface(view)
        , m_view(view)
        , m_old(view->size())
        , m_oldMinimum(view->minimumSize())
    {
        if (QLayout *layout = m_view->layout()) {
            m_oldConstraint = layout->sizeConstraint();
            layout->setSizeConstraint(QLayout::SetNoConstraint); // the size asked for, even below the minimum
        }
        m_view->setMinimumSize(0, 0);
        if (!m_view->isVisible() && m_view->parentWidget() == nullptr) {
            // A window never shown (render, lesson render) is shown off screen while it is drawn: scroll areas
            // fit their widgets and scroll bars only to resize events, which a hidden widget does not get.
            m_view->setAttribute(Qt::WA_DontShowOnScreen, true);
            m_view->show();
            m_shownHere = true;
        }
        apply(size);
    }
    ~ExportSize()
    {
        if (QLayout *layout = m_view->layout())
            layout->setSizeConstraint(m_oldConstraint);
        m_view->setMinimumSize(m_oldMinimum);
        apply(m_old);
        if (m_shownHere) {
            m_view->hide();
            m_view->setAttribute(Qt::WA_DontShowOnScreen, false);
        }
    }
    ExportSize(const ExportSize &) = delete;
    ExportSize &operator=(const ExportSize &) = delete;

private:
    void apply(QSize size)
    {
        m_view->resize(size);
        // A hidden widget gets no resize event, so lay its children out explicitly.
        const QList<QLayout *> layouts = m_view->findChildren<QLayout *>();
        for (QLayout *layout : layouts)
            layout->invalidate();
        if (QLayout *layout = m_view->layout())
            layout->activate();
        QApplication::sendPostedEvents();
        if (auto *view = qobject_cast<View *>(m_view))
            view->finishDrawing(); // a head computed on a worker, drawn here
        for (HeatmapPlot *heatmap : m_view->findChildren<HeatmapPlot *>())
            heatmap->finishPooling(); // the picture drawn is the one of this size, complete
        const QList<QCustomPlot *> plots = m_view->findChildren<QCustomPlot *>();
        for (QCustomPlot *plot : plots)
            replotNow(plot);
        if (auto *plot = qobject_cast<QCustomPlot *>(m_view))
            replotNow(plot);
    }

    InterfaceHidden m_interface; // first: shown again after the old size is back
    QWidget *m_view;
    QSize m_old;
    QSize m_oldMinimum;
    QLayout::SizeConstraint m_oldConstraint = QLayout::SetDefaultConstraint;
    bool m_shownHere = false;
};

} // namespace

QImage renderViewImage(QWidget *view, QSize size)
{
    ExportSize resized(view, size);
    QImage image(view->size(), QImage::Format_ARGB32_Premultiplied);
    image.fill(palette::paper);
    view->render(&image);
    return image;
}

void exportView(QWidget *view, const QString &path, QSize size)
{
    const QString ext = QFileInfo(path).suffix().toLower();
    if (ext != QLatin1String("png") && ext != QLatin1String("svg") && ext != QLatin1String("pdf"))
        fail(path, QStringLiteral("unknown export format '.%1' (expected .png, .svg or .pdf)").arg(ext));
    if (view == nullptr || size.width() <= 0 || size.height() <= 0)
        fail(path, QStringLiteral("nothing to export (no view or an empty size)"));

    // The whole file is made in memory, then written by the core's one atomic writer: a full disk is reported with
    // its reason, a device such as /dev/stdout is written into rather than replaced (io/atomicfile.h).
    QByteArray bytes;
    {
        ExportSize resized(view, size);
        if (ext == QLatin1String("png")) {
            bytes = renderPng(view, path);
        } else {
            QBuffer file(&bytes);
            file.open(QIODevice::WriteOnly);
            writeVector(view, path, file, ext == QLatin1String("pdf"));
        }
    }
    writeFileAtomically(path.toStdString(), std::string_view(bytes.constData(), size_t(bytes.size())));
}

} // namespace atlas
