#include "views/view.h"

#include "model/builtinmodels.h"
#include "views/plottheme.h"

#include <QRegularExpression>

#include <QEvent>
#include <QLabel>
#include <QLayout>

namespace atlas {

View::View(QWidget *parent)
    : QWidget(parent)
{
    setFocusPolicy(Qt::ClickFocus); // a click (or Enter in the Input box) gives the stepping keys back to the window
}

View::~View()
{
    for (QObject *child : findChildren<QObject *>())
        QObject::disconnect(child, nullptr, this, nullptr);
}

int View::heightForWidth(int width) const
{
    if (const QLayout *l = layout(); l && l->hasHeightForWidth())
        return l->totalMinimumHeightForWidth(width);
    return QWidget::heightForWidth(width);
}

void View::editSpec(const std::function<void(ViewSpec &)> &change)
{
    ViewSpec spec = m_spec;
    change(spec);
    if (spec != m_spec)
        emit specEdited(spec);
}

void View::changeEvent(QEvent *event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::FontChange)
        refresh();
}

void View::setInput(const ViewInput &input)
{
    m_input = input;
    refresh();
    updateGeometry(); // what it shows decides the room it asks for (a message needs little)
}

void View::setSpec(const ViewSpec &spec)
{
    m_spec = spec;
    // The whole page in the theme's colours, so that no view leaves its formula or caption on the application's
    // palette: white text on the light grey under a dark plot was unreadable (the Scaling view's caption).
    applyThemeBackground(this, spec.theme);
    refresh();
    updateGeometry();
}

void View::setInputAndSpec(const ViewInput &input, const ViewSpec &spec)
{
    m_input = input;
    m_spec = spec;
    applyThemeBackground(this, spec.theme);
    refresh();
    updateGeometry();
}

QLabel *View::newFormulaLabel()
{
    auto *label = new QLabel(this);
    label->setWordWrap(true);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    return label;
}

QLabel *View::newMessageLabel()
{
    auto *label = new QLabel(this);
    label->setAlignment(Qt::AlignCenter);
    label->setWordWrap(true);
    label->setMargin(20);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::LinksAccessibleByMouse);
    connect(label, &QLabel::linkActivated, this, [this](const QString &link) {
        if (link.startsWith(QStringLiteral("model:")))
            emit modelRequested(link.mid(6));
        else if (link == QStringLiteral("run-anyway:"))
            emit runAnywayRequested();
    });
    return label;
}

void View::setMessageText(QLabel *label, const QString &shown)
{
    // Work over the budget (util/workbudget.h) names the command line's option and the app's link; here, the link.
    static const QRegularExpression bothWays(
        QStringLiteral(" \\(--(work|memory)-budget [^)]*, Run anyway in the app\\)"));
    QString text = shown;
    text.replace(bothWays, QStringLiteral(": Run anyway"));
    static const QRegularExpression names(QStringLiteral("the built-in ([a-z0-9-]+(?:(?:, | or | and )[a-z0-9-]+)*)"));
    QStringList builtin;
    for (const BuiltinModel &m : builtinModels())
        builtin << QString::fromStdString(m.name);
    // Qt's rich text colours a link with the application's palette, not the label's: the label's link colour (its
    // view's theme, applyThemeBackground) is written into each link.
    const QString linkStyle = QStringLiteral("color: %1").arg(label->palette().color(QPalette::Link).name());
    QString html;
    qsizetype done = 0;
    bool linked = false;
    for (const QRegularExpressionMatch &match : names.globalMatch(text)) {
        html += text.mid(done, match.capturedStart(1) - done).toHtmlEscaped();
        static const QRegularExpression word(QStringLiteral("[a-z0-9-]+"));
        QString list = match.captured(1);
        QString linkedList;
        qsizetype at = 0;
        for (const QRegularExpressionMatch &name : word.globalMatch(list)) {
            linkedList += list.mid(at, name.capturedStart() - at).toHtmlEscaped();
            const QString n = name.captured();
            const bool isModel = builtin.contains(n);
            linked = linked || isModel;
            linkedList += isModel ? QStringLiteral("<a href=\"model:%1\" style=\"%2\">%1</a>").arg(n, linkStyle)
                                  : n.toHtmlEscaped();
            at = name.capturedEnd();
        }
        html += linkedList + list.mid(at).toHtmlEscaped();
        done = match.capturedEnd(1);
    }
    html += text.mid(done).toHtmlEscaped();
    // Work over the budget (util/workbudget.h) says "Run anyway in the app": here that is the link that runs it.
    static const QString runAnyway = QStringLiteral("Run anyway");
    if (text.contains(runAnyway)) {
        html.replace(runAnyway,
            QStringLiteral("<a href=\"run-anyway:\" style=\"%2\">%1</a>")
                .arg(tr("Run anyway").replace(' ', QStringLiteral("&nbsp;")), linkStyle));
        linked = true;
    }
    label->setTextFormat(linked ? Qt::RichText : Qt::PlainText);
    label->setText(linked ? html : text);
}

void layOutHidden(QWidget *view)
{
    if (view->isVisible() || view->layout() == nullptr)
        return;
    view->layout()->invalidate();
    view->layout()->activate();
}

} // namespace atlas
