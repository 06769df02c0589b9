#include "panels/lessonpanel.h"
#include "attentionmap/attentionmap.h"

#include "lesson/lessonlibrary.h"
#include "panels/wrappingchoice.h"
#include "session/lessonplayer.h"
#include "session/session.h"
#include "viewmodel/viewinput.h"
#include "views/tokenchipstrip.h"

#include <QAbstractItemView>
#include <QApplication>
#include <QButtonGroup>
#include <QEvent>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QPainter>
#include <QPushButton>
#include <QScrollArea>
#include <QStackedWidget>
#include <QStyledItemDelegate>
#include <QTextBlock>
#include <QTextBrowser>
#include <QTextCursor>
#include <QTextDocument>
#include <QTextDocumentFragment>
#include <QVBoxLayout>

namespace atlas {

namespace {

constexpr int kDetailsRole = Qt::UserRole + 1; // a lesson's lecture, minutes and steps, under its title

// A lesson in the list: its number and title in bold, its lecture, minutes and steps under it, smaller and muted, so
// that the titles read as titles.
class LessonItemDelegate : public QStyledItemDelegate
{
public:
    using QStyledItemDelegate::QStyledItemDelegate;

    void paint(QPainter *painter, const QStyleOptionViewItem &option, const QModelIndex &index) const override
    {
        QStyleOptionViewItem opt(option);
        initStyleOption(&opt, index);
        opt.text.clear(); // the background and the selection only
        const QWidget *widget = opt.widget;
        (widget ? widget->style() : QApplication::style())->drawControl(QStyle::CE_ItemViewItem, &opt, painter, widget);
        const bool selected = opt.state & QStyle::State_Selected;
        const QColor text = opt.palette.color(selected ? QPalette::HighlightedText : QPalette::Text);
        QColor muted = text;
        muted.setAlphaF(0.7f);
        const auto [titleRect, detailsRect] = rects(opt.rect, opt.font, index);
        painter->save();
        painter->setFont(titleFont(opt.font));
        painter->setPen(text);
        painter->drawText(titleRect, Qt::TextWordWrap, index.data(Qt::DisplayRole).toString());
        painter->setFont(detailsFont(opt.font));
        painter->setPen(muted);
        painter->drawText(detailsRect, Qt::TextWordWrap, index.data(kDetailsRole).toString());
        painter->restore();
    }

    QSize sizeHint(const QStyleOptionViewItem &option, const QModelIndex &index) const override
    {
        const auto *view = qobject_cast<const QAbstractItemView *>(parent());
        const int width = view ? view->viewport()->width() : option.rect.width();
        const auto [titleRect, detailsRect] = rects(QRect(0, 0, width, 0), option.font, index);
        return {width, detailsRect.bottom() + kMargin + 1};
    }

private:
    static constexpr int kMargin = 5;
    static QFont titleFont(QFont font)
    {
        font.setBold(true);
        return font;
    }
    static QFont detailsFont(QFont font)
    {
        font.setPointSizeF(font.pointSizeF() * 0.9);
        return font;
    }
    static std::pair<QRect, QRect> rects(const QRect &cell, const QFont &font, const QModelIndex &index)
    {
        const QRect area = cell.adjusted(kMargin, kMargin, -kMargin, 0);
        const QRect title = QFontMetrics(titleFont(font))
                                .boundingRect(QRect(area.left(), area.top(), area.width(), 10000), Qt::TextWordWrap,
                                    index.data(Qt::DisplayRole).toString());
        const QRect details = QFontMetrics(detailsFont(font))
                                  .boundingRect(QRect(area.left(), title.bottom() + 2, area.width(), 10000),
                                      Qt::TextWordWrap, index.data(kDetailsRole).toString());
        return {QRect(area.left(), area.top(), area.width(), title.height()),
            QRect(area.left(), title.bottom() + 2, area.width(), details.height())};
    }
};

// Markdown as HTML for a label, with code spans (token pieces, formulas) at the text's size: Qt's Markdown reader
// gives them the system's fixed font, which does not follow the app's zoom.
QString markdownToHtml(const QString &markdown, const QFont &font)
{
    QTextDocument document;
    document.setDefaultFont(font);
    document.setMarkdown(markdown);
    QTextCursor cursor(&document);
    for (QTextBlock block = document.begin(); block.isValid(); block = block.next())
        for (auto it = block.begin(); !it.atEnd(); ++it) {
            const QTextFragment fragment = it.fragment();
            QTextCharFormat format = fragment.charFormat();
            if (!format.fontFixedPitch())
                continue;
            format.setFontPointSize(font.pointSizeF());
            format.setFontWeight(QFont::DemiBold);
            cursor.setPosition(fragment.position());
            cursor.setPosition(fragment.position() + fragment.length(), QTextCursor::KeepAnchor);
            cursor.setCharFormat(format);
        }
    return document.toHtml();
}

QString escaped(const std::string &text)
{
    return QString::fromStdString(text).toHtmlEscaped();
}

} // namespace

LessonPanel::LessonPanel(LessonPlayer *player, Session *session, QWidget *parent)
    : QWidget(parent)
    , m_player(player)
    , m_session(session)
{
    m_pages = new QStackedWidget(this);
    m_pages->addWidget(createListPage());
    m_pages->addWidget(createStepPage());
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_pages);
    connect(m_player, &LessonPlayer::lessonChanged, this, &LessonPanel::showLesson);
    connect(m_player, &LessonPlayer::stepChanged, this, &LessonPanel::showStep);
    connect(m_session, &Session::inputChanged, this, [this] {
        const ViewInput input = m_session->viewInput();
        for (TokenChipStrip *strip : m_keyStrips)
            if (strip)
                strip->setTokens(input.tokens, m_session->input().tokens, m_session->input().padding);
    });
    refreshList();
    showLesson();
}

QWidget *LessonPanel::createListPage()
{
    auto *page = new QWidget(this);
    auto *layout = new QVBoxLayout(page);
    auto *intro = new QLabel(tr("Lessons walk a class through the lectures one step at a time. Each step sets "
                                "up the views; everything stays interactive."),
        page);
    intro->setWordWrap(true);
    m_list = new QListWidget(page);
    m_list->setWordWrap(true);
    m_list->setItemDelegate(new LessonItemDelegate(m_list));
    m_list->setResizeMode(QListView::Adjust); // the titles wrap anew at every width
    m_list->setToolTip(tr("Double-click a lesson to open it (at its start; where you left it is offered)"));
    connect(m_list, &QListWidget::itemActivated, this, &LessonPanel::openSelected);
    auto *open = new QPushButton(tr("Open"), page);
    open->setToolTip(tr("Open the selected lesson"));
    connect(open, &QPushButton::clicked, this, &LessonPanel::openSelected);
    auto *file = new QPushButton(tr("Open File…"), page);
    file->setToolTip(tr("Open a lesson file from anywhere (Lessons ▸ Open Lesson File)"));
    connect(file, &QPushButton::clicked, this, &LessonPanel::openFileRequested);
    auto *buttons = new QHBoxLayout;
    buttons->addWidget(open);
    buttons->addWidget(file);
    buttons->addStretch();
    layout->addWidget(intro);
    layout->addWidget(m_list, 1);
    layout->addLayout(buttons);
    return page;
}

QWidget *LessonPanel::createStepPage()
{
    auto *page = new QWidget(this);
    auto *layout = new QVBoxLayout(page);
    m_lessonTitle = new QLabel(page);
    m_lessonTitle->setWordWrap(true);
    m_counter = new QLabel(page);
    m_counter->setToolTip(tr("PageDown / PageUp (or a presentation clicker) move between steps"));
    auto *header = new QHBoxLayout;
    header->addWidget(m_lessonTitle, 1);
    header->addWidget(m_counter, 0, Qt::AlignTop);
    // A lesson opens at its start; where it was left last time is one click away.
    m_resume = new QWidget(page);
    auto *resumeRow = new QHBoxLayout(m_resume);
    resumeRow->setContentsMargins(0, 0, 0, 0);
    m_resumeButton = new QPushButton(m_resume);
    m_resumeButton->setToolTip(tr("Go on from the step this lesson was left at last time"));
    connect(m_resumeButton, &QPushButton::clicked, this, [this] { m_player->goTo(m_player->leftAt()); });
    auto *fromStart = new QPushButton(tr("Start Over"), m_resume);
    fromStart->setToolTip(tr("Stay at the first step"));
    connect(fromStart, &QPushButton::clicked, m_resume, &QWidget::hide);
    resumeRow->addWidget(m_resumeButton);
    resumeRow->addWidget(fromStart);
    resumeRow->addStretch(1);
    m_resume->hide();
    m_stepTitle = new QLabel(page);
    m_stepTitle->setWordWrap(true);
    // The step's text and its questions scroll together; the step's title and the buttons stay in place.
    auto *scroll = new QScrollArea(page);
    m_scroll = scroll;
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    auto *body = new QWidget(scroll);
    auto *bodyLayout = new QVBoxLayout(body);
    bodyLayout->setContentsMargins(0, 0, 0, 0);
    m_text = new QLabel(body);
    m_text->setWordWrap(true);
    m_text->setTextFormat(Qt::RichText);
    m_text->setOpenExternalLinks(true);
    m_text->setTextInteractionFlags(Qt::TextBrowserInteraction);
    m_text->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    m_questions = new QWidget(body);
    m_questionLayout = new QVBoxLayout(m_questions);
    m_questionLayout->setContentsMargins(0, 0, 0, 0);
    bodyLayout->addWidget(m_text);
    bodyLayout->addWidget(m_questions);
    bodyLayout->addStretch(1);
    scroll->setWidget(body);
    m_notesLabel = new QLabel(tr("<b>Speaker notes</b>"), page);
    m_notes = new QTextBrowser(page);
    m_notes->setMaximumHeight(140);
    m_notes->setToolTip(
        tr("For the lecturer; hidden in presentation mode (shown on a second screen when there is one)"));
    m_previous = new QPushButton(tr("◀ Previous"), page);
    m_previous->setToolTip(tr("The previous step (PageUp)"));
    m_reset = new QPushButton(tr("Reset step"), page);
    m_reset->setToolTip(tr("Set the views back to what this step shows (Ctrl+Shift+R)"));
    m_next = new QPushButton(tr("Next ▶"), page);
    m_next->setToolTip(tr("The next step (PageDown)"));
    m_close = new QPushButton(tr("Close"), page);
    m_close->setToolTip(tr("Close the lesson and list the lessons again"));
    connect(m_previous, &QPushButton::clicked, m_player, &LessonPlayer::previous);
    connect(m_reset, &QPushButton::clicked, m_player, &LessonPlayer::resetStep);
    connect(m_next, &QPushButton::clicked, m_player, &LessonPlayer::next);
    connect(m_close, &QPushButton::clicked, m_player, &LessonPlayer::close);
    auto *nav = new QHBoxLayout;
    nav->addWidget(m_previous);
    nav->addWidget(m_reset);
    nav->addWidget(m_next);
    nav->addStretch();
    nav->addWidget(m_close);
    layout->addLayout(header);
    layout->addWidget(m_resume);
    layout->addWidget(m_stepTitle);
    layout->addWidget(scroll, 1);
    layout->addWidget(m_notesLabel);
    layout->addWidget(m_notes);
    layout->addLayout(nav);
    return page;
}

void LessonPanel::refreshList()
{
    m_list->clear();
    const std::string directory = lessonsDirectory();
    for (const LessonEntry &entry : directory.empty() ? std::vector<LessonEntry> {} : listLessons(directory)) {
        // Numbered as the files are ("01-self-attention.md" is lesson 1), the details under the title.
        const QString file = QFileInfo(QString::fromStdString(entry.path)).fileName();
        const int number = file.section('-', 0, 0).toInt();
        const QString title = number > 0 ? tr("%1. %2").arg(number).arg(QString::fromStdString(entry.title))
                                         : QString::fromStdString(entry.title);
        const QString details = entry.problem.empty()
            ? tr("%1 · %2 min · %3 steps")
                  .arg(QString::fromStdString(entry.lecture))
                  .arg(entry.minutes)
                  .arg(entry.steps)
            : tr("does not open: %1").arg(QString::fromStdString(entry.problem));
        auto *item = new QListWidgetItem(title, m_list);
        item->setData(kDetailsRole, details);
        item->setData(Qt::UserRole, QString::fromStdString(entry.path));
        item->setToolTip(QString::fromStdString(entry.problem.empty() ? entry.path : entry.problem));
    }
    if (m_list->count() == 0) {
        QStringList looked;
        for (const std::string &dir : lessonSearchPath())
            looked << QString::fromStdString(dir);
        new QListWidgetItem(tr("No lessons found (looked in %1)").arg(looked.join(QStringLiteral(", "))), m_list);
    }
    m_list->setCurrentRow(0);
}

void LessonPanel::openSelected()
{
    const QListWidgetItem *item = m_list->currentItem();
    if (item && !item->data(Qt::UserRole).toString().isEmpty())
        m_player->open(item->data(Qt::UserRole).toString());
}

void LessonPanel::showLesson()
{
    if (!m_player->isOpen()) {
        m_pages->setCurrentIndex(0);
        return;
    }
    m_pages->setCurrentIndex(1);
    const Lesson &lesson = m_player->lesson();
    m_lessonTitle->setText(QStringLiteral("<b>%1</b><br><small>%2 · %3 min</small>")
                               .arg(escaped(lesson.title), escaped(lesson.lecture))
                               .arg(lesson.minutes));
    m_lessonTitle->setToolTip(QString::fromStdString(lesson.path));
    m_resumeButton->setText(tr("Resume at Step %1").arg(m_player->leftAt() + 1));
    m_resume->setVisible(m_player->leftAt() > 0 && m_player->stepIndex() == 0);
    showStep();
}

void LessonPanel::showStep()
{
    if (!m_player->isOpen())
        return;
    const LessonStep &step = m_player->currentStep();
    const int index = m_player->stepIndex();
    if (index != 0) // moved on: the offer is taken or passed
        m_resume->hide();
    m_counter->setText(tr("Step %1 / %2").arg(index + 1).arg(m_player->stepCount()));
    m_stepTitle->setText(QStringLiteral("<h2>%1</h2>").arg(escaped(step.title)));
    m_markdown = QString::fromStdString(step.text);
    m_text->setText(markdownToHtml(m_markdown, font()));
    m_notes->setMarkdown(QString::fromStdString(step.notes));
    m_notes->setVisible(!m_presenting && !step.notes.empty());
    m_notesLabel->setVisible(m_notes->isVisible());
    m_previous->setEnabled(index > 0);
    m_next->setEnabled(index + 1 < m_player->stepCount());
    while (QLayoutItem *item = m_questionLayout->takeAt(0)) {
        delete item->widget();
        delete item;
    }
    m_choiceBoxes.assign(step.questions.size(), {});
    m_keyStrips.assign(step.questions.size(), nullptr);
    m_guess.assign(step.questions.size(), -1);
    m_feedback.assign(step.questions.size(), nullptr);
    m_showAnswer.assign(step.questions.size(), nullptr);
    m_revealed.assign(step.questions.size(), false);
    for (int q = 0; q < int(step.questions.size()); ++q)
        addQuestion(q);
}

void LessonPanel::addQuestion(int index)
{
    const LessonQuestion &question = m_player->currentStep().questions.at(size_t(index));
    auto *box = new QWidget(m_questions);
    auto *layout = new QVBoxLayout(box);
    layout->setContentsMargins(0, 6, 0, 6);
    auto *prompt = new QLabel(QStringLiteral("<b>%1</b> %2")
                                  .arg(question.kind == LessonQuestion::Kind::Choose ? tr("Question") : tr("Predict"),
                                      escaped(question.prompt)),
        box);
    prompt->setWordWrap(true);
    layout->addWidget(prompt);
    auto *button = new QPushButton(box);
    if (question.kind == LessonQuestion::Kind::Choose) {
        const bool single = question.correct.size() == 1;
        auto *group = new QButtonGroup(box); // each button sits in its own row widget: exclusive through the group
        group->setExclusive(single);
        for (const std::string &choice : question.choices) {
            auto *option = new WrappingChoice(QString::fromStdString(choice), single, box);
            group->addButton(option->button());
            layout->addWidget(option);
            m_choiceBoxes[size_t(index)].push_back(option->button());
        }
        button->setText(tr("Check"));
        button->setToolTip(single ? tr("Pick one answer, then check it") : tr("Tick every right answer, then check"));
        connect(button, &QPushButton::clicked, this, [this, index] { check(index); });
    } else {
        auto *hint = new QLabel(
            tr("Click the key you expect query %1 to attend to most, then Reveal.").arg(question.query), box);
        hint->setWordWrap(true);
        auto *strip = new TokenChipStrip(TokenChipStrip::Layout::Wrap, box);
        const ViewInput input = m_session->viewInput();
        strip->setTokens(input.tokens, m_session->input().tokens, m_session->input().padding);
        strip->setClickHint(true, tr("Click: your guess"));
        connect(strip, &TokenChipStrip::chipClicked, this, [this, index, strip](int key) {
            m_guess[size_t(index)] = key;
            strip->setHighlighted({key});
        });
        m_keyStrips[size_t(index)] = strip;
        layout->addWidget(hint);
        layout->addWidget(strip);
        button->setText(tr("Reveal"));
        button->setToolTip(tr("Show the head's real row: where query %1 attends").arg(question.query));
        connect(button, &QPushButton::clicked, this, [this, index] { revealPrediction(index); });
    }
    auto *feedback = new QLabel(box);
    feedback->setWordWrap(true);
    feedback->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_feedback[size_t(index)] = feedback;
    // After a wrong try the class may try again, or ask for the answer.
    auto *show = new QPushButton(tr("Show the Answer"), box);
    show->setToolTip(tr("The right answer and why"));
    show->hide();
    m_showAnswer[size_t(index)] = show;
    connect(show, &QPushButton::clicked, this, [this, index] { showAnswer(index); });
    auto *buttons = new QHBoxLayout;
    buttons->addWidget(button);
    buttons->addWidget(show);
    buttons->addStretch(1);
    layout->addLayout(buttons);
    layout->addWidget(feedback);
    m_questionLayout->addWidget(box);
}

void LessonPanel::showAnswer(int index)
{
    const LessonQuestion &question = m_player->currentStep().questions.at(size_t(index));
    m_showAnswer[size_t(index)]->hide();
    if (question.kind == LessonQuestion::Kind::Predict) {
        m_guess[size_t(index)] = -1; // the model's row, without a verdict on the last guess
        return revealPrediction(index);
    }
    QStringList answers;
    for (int c : question.correct)
        answers << QString::fromStdString(question.choices.at(size_t(c)));
    m_feedback[size_t(index)]->setText(
        tr("The answer is %1. ").arg(answers.join(tr(" and ")).toHtmlEscaped()) + escaped(question.explanation));
    m_scroll->ensureWidgetVisible(m_feedback[size_t(index)]);
}

void LessonPanel::offerAnotherTry(int index, const QString &verdict)
{
    m_feedback[size_t(index)]->setText(verdict);
    m_showAnswer[size_t(index)]->show();
    m_scroll->ensureWidgetVisible(m_feedback[size_t(index)]);
}

void LessonPanel::check(int index)
{
    const LessonQuestion &question = m_player->currentStep().questions.at(size_t(index));
    std::vector<int> selected;
    const auto &boxes = m_choiceBoxes[size_t(index)];
    for (int i = 0; i < int(boxes.size()); ++i)
        if (boxes[size_t(i)]->isChecked())
            selected.push_back(i);
    if (!LessonPlayer::isCorrect(question, selected))
        return offerAnotherTry(index,
            selected.empty() ? tr("Pick an answer first.") : tr("<b>Not quite.</b> Try again, or show the answer."));
    m_showAnswer[size_t(index)]->hide();
    m_feedback[size_t(index)]->setText(tr("<b>Right.</b> ") + escaped(question.explanation));
    m_scroll->ensureWidgetVisible(m_feedback[size_t(index)]);
}

void LessonPanel::revealPrediction(int index)
{
    const LessonQuestion &question = m_player->currentStep().questions.at(size_t(index));
    QLabel *feedback = m_feedback[size_t(index)];
    try {
        const PredictAnswer answer = m_player->reveal(question);
        const ViewInput input = m_session->viewInput();
        const QStringList labels = tokenLabels(input, int(answer.row.size()));
        const int guess = m_guess[size_t(index)];
        if (guess >= 0 && guess != answer.key && !m_revealed[size_t(index)]) // the row stays covered: another try
            return offerAnotherTry(index,
                tr("<b>Not this one</b>: query %1 attends more to another key than to %2. Click another key, or "
                   "show the answer.")
                    .arg(question.query)
                    .arg(labels.value(guess).toHtmlEscaped()));
        m_revealed[size_t(index)] = true;
        m_showAnswer[size_t(index)]->hide();
        QString verdict = guess < 0 ? QString()
            : guess == answer.key
            ? tr("<b>Right.</b> ")
            : tr("<b>Not this time</b>: you chose %1 (weight %2). ")
                  .arg(labels.value(guess).toHtmlEscaped())
                  .arg(formatNumber(guess < int(answer.row.size()) ? answer.row[size_t(guess)] : 0.0, 2));
        feedback->setText(verdict
            + tr("Query %1 attends most to key %2 %3 (weight %4). ")
                  .arg(question.query)
                  .arg(answer.key)
                  .arg(labels.value(answer.key).toHtmlEscaped())
                  .arg(formatNumber(answer.weight, 2))
            + escaped(question.explanation));
        if (TokenChipStrip *strip = m_keyStrips[size_t(index)])
            strip->setHighlighted({answer.key}); // the model's answer; the verdict names the guess
        m_scroll->ensureWidgetVisible(feedback);
        // The views single out the query's row of that head.
        ViewSpec spec = m_session->spec();
        spec.query = question.query;
        spec.set(views::attentionmap::kVeilQuery, false);
        if (question.layer >= 0)
            spec.layer = question.layer;
        if (question.head >= 0)
            spec.head = question.head;
        m_session->setSpec(spec);
    } catch (const std::exception &e) {
        feedback->setText(tr("Cannot reveal yet: %1").arg(QString::fromStdString(e.what()).toHtmlEscaped()));
    }
}

void LessonPanel::answer(const std::vector<int> &choicesOrKey)
{
    if (!m_player->isOpen() || m_player->currentStep().questions.empty())
        return;
    if (m_player->currentStep().questions.front().kind == LessonQuestion::Kind::Choose) {
        auto &boxes = m_choiceBoxes.front();
        for (int i = 0; i < int(boxes.size()); ++i)
            boxes[size_t(i)]->setChecked(std::find(choicesOrKey.begin(), choicesOrKey.end(), i) != choicesOrKey.end());
        check(0);
    } else {
        m_guess.front() = choicesOrKey.empty() ? -1 : choicesOrKey.front();
        revealPrediction(0);
    }
}

QString LessonPanel::stepText() const
{
    return QTextDocumentFragment::fromHtml(m_text->text()).toPlainText();
}

QString LessonPanel::feedbackText() const
{
    for (QLabel *label : m_feedback)
        if (label && !label->text().isEmpty())
            return QTextDocumentFragment::fromHtml(label->text()).toPlainText();
    return {};
}

void LessonPanel::changeEvent(QEvent *event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::FontChange && m_text)
        m_text->setText(markdownToHtml(m_markdown, font()));
}

void LessonPanel::setPresenting(bool on)
{
    m_presenting = on;
    m_close->setVisible(!on);
    showStep();
}

} // namespace atlas
