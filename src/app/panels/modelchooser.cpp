#include "panels/modelchooser.h"

#include "model/builtinmodels.h"
#include "session/session.h"

#include <QComboBox>
#include <QDir>
#include <QFileInfo>
#include <QMainWindow>
#include <QMenu>
#include <QSettings>

namespace atlas {

namespace {

constexpr char kRecentKey[] = "models/recentDirectories";

} // namespace

bool ModelChooser::isBuiltinName(const QString &name) const
{
    for (const BuiltinModel &m : m_builtins)
        if (QString::fromStdString(m.name) == name)
            return true;
    return false;
}

QString ModelChooser::modelKey(const std::string &model) const
{
    const QString name = QString::fromStdString(model);
    if (isBuiltinName(name))
        return name;
    if (const auto it = m_builtinByDirectory.find(QFileInfo(name).canonicalFilePath());
        it != m_builtinByDirectory.end() && !it->first.isEmpty())
        return it->second;
    return QDir::cleanPath(QFileInfo(name).absoluteFilePath());
}

ModelChooser::ModelChooser(Session *session, QMainWindow *window, QMenu *recentMenu)
    : QObject(window)
    , m_builtins(builtinModels())
    , m_session(session)
    , m_box(new QComboBox(window))
    , m_recentMenu(recentMenu)
{
    for (const BuiltinModel &m : m_builtins)
        m_builtinByDirectory[QFileInfo(QString::fromStdString(m.directory)).canonicalFilePath()]
            = QString::fromStdString(m.name);
    m_box->setToolTip(tr("The built-in models, and the model directories opened lately; File ▸ Open Model Directory "
                         "opens another, or drop its folder or file on the window"));
    m_box->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    for (const QString &dir : QSettings().value(kRecentKey).toStringList())
        if (m_recent.size() < kRecentCount && !dir.isEmpty() && !m_recent.contains(dir))
            m_recent << dir;
    fillBox();
    fillRecentMenu();
    connect(m_box, &QComboBox::activated, this, [this](int index) {
        const QString model = m_box->itemData(index).toString();
        if (!model.isEmpty())
            m_session->openModel(model, true); // with the model's sample input
    });
    connect(m_session, &Session::modelChanged, this, [this] {
        const QString model = modelKey(m_session->spec().model);
        if (!isBuiltinName(model))
            remember(model);
        sync();
    });
    connect(m_session, &Session::errorOccurred, this, &ModelChooser::sync); // a model that failed is not on screen
}

void ModelChooser::remember(const QString &directory)
{
    m_recent.removeAll(directory);
    m_recent.prepend(directory);
    while (m_recent.size() > kRecentCount)
        m_recent.removeLast();
    QSettings().setValue(kRecentKey, m_recent);
    fillBox();
    fillRecentMenu();
}

void ModelChooser::fillBox()
{
    const QSignalBlocker block(m_box);
    m_box->clear();
    for (const BuiltinModel &m : m_builtins) {
        m_box->addItem(QString::fromStdString(m.name), QString::fromStdString(m.name));
        m_box->setItemData(m_box->count() - 1, QString::fromStdString(m.description), Qt::ToolTipRole);
    }
    if (!m_recent.isEmpty())
        m_box->insertSeparator(m_box->count());
    for (const QString &dir : m_recent) {
        const QFileInfo info(dir); // a directory, or a GGUF file
        m_box->addItem(info.isFile() ? info.fileName() : QDir(dir).dirName() + QStringLiteral("/"), dir);
        m_box->setItemData(m_box->count() - 1, dir, Qt::ToolTipRole);
    }
    sync();
}

void ModelChooser::fillRecentMenu()
{
    m_recentMenu->clear();
    for (int i = 0; i < m_recent.size(); ++i) {
        const QString dir = m_recent[i];
        QAction *open = m_recentMenu->addAction(QStringLiteral("&%1  %2").arg(i + 1).arg(dir));
        open->setToolTip(tr("Open the model in %1").arg(dir));
        connect(open, &QAction::triggered, this, [this, dir] { m_session->openModel(dir, true); });
    }
    if (m_recent.isEmpty())
        m_recentMenu->addAction(tr("No model directory opened yet"))->setEnabled(false);
    else {
        m_recentMenu->addSeparator();
        connect(m_recentMenu->addAction(tr("Clear the List")), &QAction::triggered, this, [this] {
            m_recent.clear();
            QSettings().remove(kRecentKey);
            fillBox();
            fillRecentMenu();
        });
    }
}

void ModelChooser::sync()
{
    if (!m_session->hasModel())
        return;
    const QSignalBlocker block(m_box);
    const int index = m_box->findData(modelKey(m_session->spec().model));
    m_box->setCurrentIndex(index);
    m_box->setPlaceholderText(QString::fromStdString(m_session->model()->name));
}

} // namespace atlas
