#pragma once

#include <QImage>
#include <QSize>
#include <QString>

class QWidget;

namespace atlas {

// Writes `view` at `size` pixels to `path`, in the format its extension names: .png (a grab), .svg or .pdf
// (vector: QCustomPlot children are painted with toPainter so axes and text stay vector; other widgets with
// QWidget::render). The view is resized to `size` while it is drawn and restored afterwards. The file is
// written through a temporary file and renamed, so a failure never leaves a half-written file.
// Throws atlas::Error("<path>: <reason>") for an unknown extension or a write failure.
// The view's controls (View::interfaceWidgets) are hidden while it is drawn: a figure carries no interface.
void exportView(QWidget *view, const QString &path, QSize size);
// The same drawing as an image (lessons' pages).
QImage renderViewImage(QWidget *view, QSize size);

} // namespace atlas
