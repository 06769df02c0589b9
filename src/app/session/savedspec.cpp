#include "session/savedspec.h"

#include "io/atomicfile.h"

#include <QDateTime>
#include <QDir>
#include <QSettings>

namespace atlas {

namespace {

constexpr const char *kKey = "session/spec";

} // namespace

RestoredSpec restoreSavedSpec(QSettings &settings, const QString &backupDirectory)
{
    RestoredSpec restored;
    const QString saved = settings.value(kKey).toString();
    if (saved.isEmpty())
        return restored;
    try {
        restored.spec = ViewSpec::fromJson(saved.toStdString(), "the saved session");
        return restored;
    } catch (const std::exception &e) {
        restored.problem = QObject::tr("The view saved when the app last closed could not be restored (%1).")
                               .arg(QString::fromStdString(e.what()));
    }
    settings.remove(kKey);
    const QString copy = QDir(backupDirectory)
                             .filePath(QStringLiteral("rejected-session-%1.json")
                                           .arg(QDateTime::currentDateTime().toString("yyyyMMdd-HHmmss")));
    try {
        if (!QDir().mkpath(backupDirectory))
            throw std::runtime_error(backupDirectory.toStdString() + ": cannot create the directory");
        writeFileAtomically(copy.toStdString(), saved.toStdString());
        restored.problem += QObject::tr(" Its text is kept in %1. The app starts from the default view.").arg(copy);
    } catch (const std::exception &e) {
        restored.problem += QObject::tr(" Its text could not be kept (%1). The app starts from the default view.")
                                .arg(QString::fromStdString(e.what()));
    }
    return restored;
}

void saveSpec(QSettings &settings, const ViewSpec &spec)
{
    settings.setValue(kKey, QString::fromStdString(spec.toJson()));
}

} // namespace atlas
