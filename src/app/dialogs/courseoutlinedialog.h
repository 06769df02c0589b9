#pragma once

#include <QDialog>

class QTextBrowser;

namespace atlas {

// Lessons ▸ Course Outline: the lessons folder's course.md (the lessons ordered into classes, lecture by lecture,
// with their times and what to prepare). A lesson's link opens it.
class CourseOutlineDialog : public QDialog
{
    Q_OBJECT

public:
    // `path`: the outline's file (lesson/lessonlibrary.h's courseOutlineIn); its problem is shown when it cannot be
    // read.
    explicit CourseOutlineDialog(const QString &path, QWidget *parent = nullptr);

    QTextBrowser *text() const { return m_text; }

signals:
    void lessonRequested(const QString &path);

private:
    QTextBrowser *m_text;
};

} // namespace atlas
