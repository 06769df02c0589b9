#include "dialogs/courseoutlinedialog.h"

#include "io/atomicfile.h"
#include "io/limits.h"

#include <QDialogButtonBox>
#include <QDir>
#include <QFileInfo>
#include <QTextBrowser>
#include <QUrl>
#include <QVBoxLayout>

namespace atlas {

CourseOutlineDialog::CourseOutlineDialog(const QString &path, QWidget *parent)
    : QDialog(parent)
    , m_text(new QTextBrowser(this))
{
    setWindowTitle(tr("Course Outline"));
    auto *layout = new QVBoxLayout(this);
    m_text->setOpenLinks(false); // a lesson's link opens the lesson, not the file's text
    try {
        m_text->setMarkdown(QString::fromStdString(readFile(path.toStdString(), limits::kLessonBytes)));
    } catch (const std::exception &e) { // atlas::Error: missing, too large, unreadable
        m_text->setPlainText(path.isEmpty() ? tr("No course outline: the lessons folder has no course.md.")
                                            : QString::fromStdString(e.what()));
    }
    const QDir folder = QFileInfo(path).dir();
    connect(m_text, &QTextBrowser::anchorClicked, this, [this, folder](const QUrl &url) {
        if (url.isRelative() && url.path().endsWith(QStringLiteral(".md")))
            emit lessonRequested(folder.filePath(url.path()));
    });
    layout->addWidget(m_text, 1);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(buttons);
    resize(fontMetrics().averageCharWidth() * 110, fontMetrics().height() * 36);
}

} // namespace atlas
