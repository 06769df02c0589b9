#include "views/headlessrender.h"
#include "views/viewexport.h"

#include "io/atomicfile.h"
#include "io/stageddirectory.h"
#include "lesson/lessoncheck.h"
#include "util/error.h"
#include "views/view.h"

#include <QBuffer>
#include <QDir>
#include <QImage>
#include <QPainter>
#include <QPdfWriter>
#include <QTextDocument>

namespace atlas {

namespace {

// Near the size the PDF page (A4 at 150 dpi) and the web page show them at, so the text stays readable.
constexpr int kImageWidth = 1100, kImageHeight = 700;
constexpr int kPdfHeadingHeight = 90; // a step's heading on its pages, in the PDF's pixels (two lines at 16 pt)
// The PDF draws the views with their text 1.25 times the app's (as at a zoom of 125 %), so that scaled onto the page
// their smallest labels print at 9 pt or more.
constexpr int kPdfImageWidth = 1100, kPdfImageHeight = 700;
constexpr double kPdfZoom = 1.25;

void configureLessonPdf(QPdfWriter &pdf)
{
    pdf.setPageSize(QPageSize(QPageSize::A4));
    pdf.setPageOrientation(QPageLayout::Landscape);
    pdf.setPageMargins(QMarginsF(10, 10, 10, 10), QPageLayout::Millimeter);
    pdf.setResolution(150);
    pdf.setCreator(QStringLiteral("Transformer Atlas"));
}

[[noreturn]] void fail(const std::string &path, const std::string &reason)
{
    throw Error(path + ": " + reason);
}

// The step's view drawn headless, as `render` draws it.
QImage stepImage(const Lesson &lesson, const LessonStep &step, int width, int height, double zoom = 1.0)
{
    const std::unique_ptr<View> view = drawableView(stepViewSpec(lesson, step), width, height,
        lesson.path + ":" + std::to_string(step.line), size_t(8) << 30, zoom);
    return renderViewImage(view.get(), QSize(width, height));
}

// The questions as Markdown: the teacher's copy with each answer (a reader offline has no one to ask), the students'
// with an empty box before each choice and no answer.
QString questionsMarkdown(const LessonStep &step, bool answers)
{
    QString md;
    for (const LessonQuestion &q : step.questions) {
        md += QStringLiteral("\n**Question.** %1\n\n").arg(QString::fromStdString(q.prompt));
        for (size_t i = 0; i < q.choices.size(); ++i) {
            const bool right = std::find(q.correct.begin(), q.correct.end(), int(i)) != q.correct.end();
            md += answers ? QStringLiteral("- %1%2\n").arg(QString::fromStdString(q.choices[i]), right ? " ✔" : "")
                          : QStringLiteral("- ☐ %1\n").arg(QString::fromStdString(q.choices[i]));
        }
        if (answers)
            md += QStringLiteral("\n*Answer:* %1\n").arg(QString::fromStdString(q.explanation));
    }
    return md;
}

QString stepMarkdown(const LessonStep &step, bool answers)
{
    return QString::fromStdString(step.text) + "\n" + questionsMarkdown(step, answers);
}

QByteArray pngBytes(const QImage &image, const std::string &path)
{
    QByteArray png;
    QBuffer buffer(&png);
    buffer.open(QIODevice::WriteOnly);
    if (!image.save(&buffer, "PNG"))
        fail(path, "cannot encode the PNG image");
    return png;
}

// Every file of an export is made in memory and written by the core's atomic writer, which checks each write and
// the close (a full disk fails with its reason, the previous file intact).
void writeBytes(const std::string &path, const QByteArray &bytes)
{
    writeFileAtomically(path, std::string_view(bytes.constData(), size_t(bytes.size())));
}

} // namespace

std::vector<std::string> renderLessonSteps(const Lesson &lesson, const std::string &directory, int width, int height)
{
    // The steps as a set (io/stageddirectory.h): a render that fails halfway, or a lesson with fewer steps than the
    // last one rendered there, never leaves old and new pictures side by side.
    StagedDirectory staged(directory, "lesson render");
    std::vector<std::string> paths;
    for (size_t i = 0; i < lesson.steps.size(); ++i) {
        const std::string name = QStringLiteral("step-%1.png").arg(i + 1, 2, 10, QChar('0')).toStdString();
        writeBytes(staged.path() + "/" + name,
            pngBytes(stepImage(lesson, lesson.steps[i], width, height), directory + "/" + name));
        paths.push_back(directory + "/" + name);
    }
    staged.commit();
    return paths;
}

PdfFigureLayout lessonPdfFigureLayout()
{
    QByteArray bytes;
    QBuffer file(&bytes);
    file.open(QIODevice::WriteOnly);
    QPdfWriter pdf(&file);
    configureLessonPdf(pdf);
    PdfFigureLayout layout;
    layout.page = QRect(0, 0, pdf.width(), pdf.height());
    layout.drawn = QSize(kPdfImageWidth, kPdfImageHeight);
    layout.zoom = kPdfZoom;
    layout.figure
        = layout.drawn.scaled(layout.page.width(), layout.page.height() - kPdfHeadingHeight, Qt::KeepAspectRatio);
    layout.pointsPerFigurePixel = double(layout.figure.width()) / kPdfImageWidth * 72.0 / pdf.resolution();
    return layout;
}

void exportLessonPdf(const Lesson &lesson, const std::string &path, bool answers)
{
    QByteArray bytes;
    QBuffer file(&bytes);
    file.open(QIODevice::WriteOnly);
    QPdfWriter pdf(&file);
    configureLessonPdf(pdf);
    pdf.setTitle(QString::fromStdString(lesson.title));
    const PdfFigureLayout layout = lessonPdfFigureLayout();
    QPainter p(&pdf);
    const QRect page = layout.page;
    // Each step on two pages: its view as large as the page holds (its smallest text at 9 pt or more), then its text
    // and questions.
    for (size_t i = 0; i < lesson.steps.size(); ++i) {
        const LessonStep &step = lesson.steps[i];
        if (i > 0)
            pdf.newPage();
        QFont title = p.font();
        title.setPointSizeF(16);
        title.setBold(true);
        p.setFont(title);
        const QString heading = QStringLiteral("%1 — %2 (%3/%4)")
                                    .arg(QString::fromStdString(lesson.title), QString::fromStdString(step.title))
                                    .arg(i + 1)
                                    .arg(lesson.steps.size());
        const QRect headingBox(page.left(), page.top(), page.width(), kPdfHeadingHeight);
        p.drawText(headingBox, Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, heading);
        const QImage image = stepImage(lesson, step, kPdfImageWidth, kPdfImageHeight, kPdfZoom);
        const QRect figure(
            QPoint(page.left() + (page.width() - layout.figure.width()) / 2, headingBox.bottom() + 1), layout.figure);
        p.drawImage(figure, image);

        pdf.newPage();
        p.setFont(title);
        p.drawText(headingBox, Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, heading);
        QTextDocument text;
        QFont textFont = p.font();
        textFont.setPointSizeF(12);
        textFont.setBold(false);
        text.setDefaultFont(textFont);
        text.setMarkdown(stepMarkdown(step, answers));
        text.setTextWidth(page.width());
        p.save();
        p.translate(page.left(), headingBox.bottom() + 1);
        text.drawContents(&p, QRectF(0, 0, page.width(), page.height() - kPdfHeadingHeight));
        p.restore();
    }
    if (!p.end())
        fail(path, "cannot finish the PDF");
    writeBytes(path, bytes);
}

void exportLessonHtml(const Lesson &lesson, const std::string &directory, bool answers)
{
    StagedDirectory staged(directory, "lesson export");
    const auto html = [](const QString &markdown) {
        QTextDocument doc;
        doc.setMarkdown(markdown);
        const QString full = doc.toHtml();
        const qsizetype start = full.indexOf('>', full.indexOf("<body")) + 1, end = full.lastIndexOf("</body>");
        return full.mid(start, end - start);
    };
    QString page
        = QStringLiteral("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>%1</title>"
                         "<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto;line-height:1.5}"
                         "img{width:100%;border:1px solid #ccc}section{margin-bottom:3em}</style></head><body>\n")
              .arg(QString::fromStdString(lesson.title).toHtmlEscaped());
    page += QStringLiteral("<h1>%1</h1>\n<p><i>%2 · about %3 minutes</i></p>\n%4\n")
                .arg(QString::fromStdString(lesson.title).toHtmlEscaped(),
                    QString::fromStdString(lesson.lecture).toHtmlEscaped())
                .arg(lesson.minutes)
                .arg(html(QString::fromStdString(lesson.introduction)));
    for (size_t i = 0; i < lesson.steps.size(); ++i) {
        const LessonStep &step = lesson.steps[i];
        const QByteArray png = pngBytes(stepImage(lesson, step, kImageWidth, kImageHeight), directory + "/index.html");
        page += QStringLiteral(
            "<section><h2>%1. %2</h2>\n<img alt=\"%2\" src=\"data:image/png;base64,%3\">\n%4</section>\n")
                    .arg(i + 1)
                    .arg(QString::fromStdString(step.title).toHtmlEscaped(), QString::fromLatin1(png.toBase64()),
                        html(stepMarkdown(step, answers)));
    }
    page += QStringLiteral("</body></html>\n");
    writeBytes(staged.path() + "/index.html", page.toUtf8());
    staged.commit();
}

} // namespace atlas
