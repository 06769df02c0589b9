#include "views/headlessrender.h"
#include "views/viewexport.h"

#include "io/atomicfile.h"
#include "io/stageddirectory.h"
#include "lesson/lessoncheck.h"
#include "util/error.h"
#include "viewmodel/lessonpage.h"
#include "views/colormaps.h"
#include "views/view.h"

#include "lessonpageassets.h"

#include <QBuffer>
#include <QDir>
#include <QImage>
#include <QPainter>
#include <QPdfWriter>
#include <QTextDocument>

#include <filesystem>
#include <functional>

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

// The step's view (`spec`: stepViewSpec's, which runs a step's generation) drawn headless, as `render` draws it.
QImage stepImage(
    const Lesson &lesson, const LessonStep &step, const ViewSpec &spec, int width, int height, double zoom = 1.0)
{
    const std::unique_ptr<View> view
        = drawableView(spec, width, height, stepSource(lesson, step), size_t(8) << 30, zoom);
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
            pngBytes(stepImage(lesson, lesson.steps[i], stepViewSpec(lesson, lesson.steps[i]), width, height),
                directory + "/" + name));
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

int exportLessonPdf(const Lesson &lesson, const std::string &path, bool answers)
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
    QFont title = p.font();
    title.setPointSizeF(16);
    title.setBold(true);
    int pages = 0;
    const auto newPage = [&] {
        if (pages++ > 0)
            pdf.newPage();
    };
    // Each step on two pages: its view as large as the page holds (its smallest text at 9 pt or more), then its text
    // and questions. A step that shows the view of the step before, unchanged (lesson 06's four steps on the four
    // panels of one LSH view), has its text page only, which says where that view is.
    ViewSpec previous;
    int previousStep = 0, previousPage = 0;
    for (size_t i = 0; i < lesson.steps.size(); ++i) {
        const LessonStep &step = lesson.steps[i];
        const QString heading = QStringLiteral("%1 — %2 (%3/%4)")
                                    .arg(QString::fromStdString(lesson.title), QString::fromStdString(step.title))
                                    .arg(i + 1)
                                    .arg(lesson.steps.size());
        const QRect headingBox(page.left(), page.top(), page.width(), kPdfHeadingHeight);
        const ViewSpec spec = stepViewSpec(lesson, step);
        const bool sameView = i > 0 && spec == previous;
        if (!sameView) {
            newPage();
            p.setFont(title);
            p.drawText(headingBox, Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, heading);
            const QImage image = stepImage(lesson, step, spec, kPdfImageWidth, kPdfImageHeight, kPdfZoom);
            const QRect figure(
                QPoint(page.left() + (page.width() - layout.figure.width()) / 2, headingBox.bottom() + 1),
                layout.figure);
            p.drawImage(figure, image);
            previous = spec;
            previousStep = int(i) + 1;
            previousPage = pages;
        }
        newPage();
        p.setFont(title);
        p.drawText(headingBox, Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, heading);
        QTextDocument text;
        QFont textFont = p.font();
        textFont.setPointSizeF(12);
        textFont.setBold(false);
        text.setDefaultFont(textFont);
        const QString seeView = sameView
            ? QStringLiteral("*The view is step %1's, unchanged: page %2.*\n\n").arg(previousStep).arg(previousPage)
            : QString();
        text.setMarkdown(seeView + stepMarkdown(step, answers));
        text.setTextWidth(page.width());
        p.save();
        p.translate(page.left(), headingBox.bottom() + 1);
        text.drawContents(&p, QRectF(0, 0, page.width(), page.height() - kPdfHeadingHeight));
        p.restore();
    }
    if (!p.end())
        fail(path, "cannot finish the PDF");
    writeBytes(path, bytes);
    return pages;
}

namespace {

std::string hexColor(QRgb rgb)
{
    return QColor(rgb).name().toStdString();
}

nlohmann::json colorTable(const std::function<QRgb(double)> &color)
{
    nlohmann::json table = nlohmann::json::array();
    for (int i = 0; i < 256; ++i)
        table.push_back(hexColor(color(i / 255.0)));
    return table;
}

// Markdown as the HTML of a body, without QTextDocument's own page head.
QString markdownHtml(const QString &markdown)
{
    QTextDocument doc;
    doc.setMarkdown(markdown);
    const QString full = doc.toHtml();
    const qsizetype start = full.indexOf('>', full.indexOf("<body")) + 1, end = full.lastIndexOf("</body>");
    return full.mid(start, end - start);
}

QString escaped(const std::string &text)
{
    return QString::fromStdString(text).toHtmlEscaped();
}

} // namespace

int exportLessonHtml(const Lesson &lesson, const std::string &directory, bool answers)
{
    StagedDirectory staged(directory, "lesson export");
    const std::string path = directory + "/index.html";
    nlohmann::json steps = nlohmann::json::array();
    QString sections, contents;
    int drawn = 0;
    for (size_t i = 0; i < lesson.steps.size(); ++i) {
        const LessonStep &step = lesson.steps[i];
        const ViewSpec spec = stepViewSpec(lesson, step);
        const ViewInput input = preparedViewInput(spec, stepSource(lesson, step));
        const LessonPageView *drawing = lessonPageView(spec);
        nlohmann::json figure = drawing ? drawing->figure(input, spec) : nlohmann::json(nullptr);
        QString figureHtml;
        if (figure.is_null()) {
            const std::unique_ptr<View> view = preparedView(spec, input, kImageWidth, kImageHeight);
            const QByteArray png = pngBytes(renderViewImage(view.get(), QSize(kImageWidth, kImageHeight)), path);
            figureHtml = QStringLiteral("<div class=\"figure\"><img alt=\"%1\" src=\"data:image/png;base64,%2\">"
                                        "<p class=\"note\">The app's picture of this view.</p></div>")
                             .arg(escaped(step.title), QString::fromLatin1(png.toBase64()));
        } else {
            const ColorLut lut(spec.colormap);
            figure["lut"] = colorTable([&lut](double t) { return lut.map(float(t)); });
            figure["maskedColor"] = hexColor(maskedColor(spec.colormap).rgb());
            figureHtml = QStringLiteral("<div class=\"figure\" data-draw=\"%1\"><div class=\"controls\"></div>"
                                        "<div class=\"panels\"></div><div class=\"readout\">%2</div></div>")
                             .arg(escaped(spec.view), QString::fromUtf8(drawing->readoutHint));
            ++drawn;
        }
        // The spec too: a reader can open the step in the app (File ▸ Open View Spec), a test can run it again.
        steps.push_back({{"figure", std::move(figure)}, {"questions", lessonPageQuestions(step, input, spec, answers)},
            {"spec", nlohmann::json::parse(spec.toJson(true))}});
        contents += QStringLiteral("<a href=\"#step-%1\">%1. %2</a> ").arg(i + 1).arg(escaped(step.title));
        sections += QStringLiteral("<section id=\"step-%1\"><h2>%1. %2</h2>\n%3\n%4<div class=\"questions\"></div>"
                                   "</section>\n")
                        .arg(i + 1)
                        .arg(escaped(step.title), figureHtml, markdownHtml(QString::fromStdString(step.text)));
    }
    QCPColorGradient diverging = divergingColormap();
    const nlohmann::json data {{"steps", std::move(steps)},
        {"diverging", colorTable([&diverging](double t) { return diverging.color(t, QCPRange(0, 1)); })},
        {"masked", hexColor(maskedColor("viridis").rgb())}};
    // "</" cannot end the script element early once written "<\/" (the same string to JSON).
    const QString json = QString::fromStdString(data.dump()).replace(QStringLiteral("</"), QStringLiteral("<\\/"));
    const QString page
        = QStringLiteral("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>%1</title>"
                         "<style>%2</style></head><body>\n<h1>%1</h1>\n<p class=\"note\">%3 · about %4 minutes · "
                         "made with Transformer Atlas from %5%6</p>\n%7\n<nav class=\"steps\">%8</nav>\n%9"
                         "<script type=\"application/json\" id=\"lesson-data\">%10</script>\n<script>%11</script>"
                         "</body></html>\n")
              .arg(escaped(lesson.title), QString::fromUtf8(lessonpage::kStyle), escaped(lesson.lecture),
                  QString::number(lesson.minutes), escaped(std::filesystem::path(lesson.path).filename().string()),
                  answers ? QString() : QStringLiteral(" · the students' copy: no answers"),
                  markdownHtml(QString::fromStdString(lesson.introduction)), contents, sections, json,
                  QString::fromUtf8(lessonpage::kScript));
    writeBytes(staged.path() + "/index.html", page.toUtf8());
    staged.commit();
    return drawn;
}

} // namespace atlas
