#pragma once

#include <QWidget>

#include <vector>

class QAbstractButton;
class QLabel;
class QListWidget;
class QPushButton;
class QScrollArea;
class QStackedWidget;
class QTextBrowser;
class QVBoxLayout;

namespace atlas {

class LessonPlayer;
class Session;
class TokenChipStrip;

// The Lessons panel. With no lesson open it lists the lessons (title, lecture, minutes, steps; a file that does not
// parse is listed with its problem). With one open it shows the step: counter, title, text, its questions
// (choose: tick and Check; predict: click the key you expect, then Reveal the model's row), and Previous / Reset
// step / Next. In presentation mode the speaker notes and the list controls are hidden.
class LessonPanel : public QWidget
{
    Q_OBJECT

public:
    LessonPanel(LessonPlayer *player, Session *session, QWidget *parent = nullptr);

    void refreshList(); // the lessons folder read again
    void setPresenting(bool on);
    QString stepText() const; // what the step's text area shows (plain text), for tests
    QString feedbackText() const; // the last answer's verdict and explanation
    // Answers the step's first question as a student would: ticks these choices (choose) or clicks this key
    // (predict), then presses Check / Reveal. For the window test and for keyboard users.
    void answer(const std::vector<int> &choicesOrKey);

signals:
    void openFileRequested();

protected:
    void changeEvent(QEvent *event) override; // a new zoom: the step's text at the new size

private:
    QWidget *createListPage();
    QWidget *createStepPage();
    void showLesson();
    void showStep();
    void addQuestion(int index);
    void check(int index);
    void revealPrediction(int index);
    void showAnswer(int index);
    void offerAnotherTry(int index, const QString &verdict); // a wrong try: the verdict and Show the Answer
    void openSelected();

    LessonPlayer *m_player;
    Session *m_session;
    QStackedWidget *m_pages = nullptr;
    QListWidget *m_list = nullptr;
    QLabel *m_lessonTitle = nullptr;
    QLabel *m_counter = nullptr;
    QLabel *m_stepTitle = nullptr;
    QWidget *m_resume = nullptr; // "Resume at step N" when the lesson was left there last time
    QPushButton *m_resumeButton = nullptr;
    QScrollArea *m_scroll = nullptr;
    QLabel *m_text = nullptr;
    QWidget *m_questions = nullptr;
    QVBoxLayout *m_questionLayout = nullptr;
    QTextBrowser *m_notes = nullptr;
    QLabel *m_notesLabel = nullptr;
    QPushButton *m_previous = nullptr;
    QPushButton *m_reset = nullptr;
    QPushButton *m_next = nullptr;
    QPushButton *m_close = nullptr;
    std::vector<std::vector<QAbstractButton *>> m_choiceBoxes; // per question
    std::vector<TokenChipStrip *> m_keyStrips; // per question (predict), else nullptr
    std::vector<int> m_guess; // per question (predict): the key clicked, −1 before
    std::vector<QLabel *> m_feedback; // per question
    std::vector<QPushButton *> m_showAnswer; // per question: shown after a wrong try
    std::vector<bool> m_revealed; // per question (predict): the model's row is shown
    bool m_presenting = false;
    QString m_markdown; // the step's text
};

} // namespace atlas
