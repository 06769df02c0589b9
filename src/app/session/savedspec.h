#pragma once

#include "view/viewspec.h"

#include <QString>

class QSettings;

namespace atlas {

// The view the app showed when it was last closed, kept in QSettings under "session/spec".
struct RestoredSpec
{
    ViewSpec spec; // the saved spec, or the defaults when there was none or it could not be read
    QString problem; // empty, or what was wrong with the saved spec and where its copy was set aside
};

// Reads the saved spec. One that cannot be read (another version's, a damaged or hostile settings file) is
// dropped from the settings so that the next start is clean, and its text is kept in `backupDirectory` as
// rejected-session-<time>.json for whoever wants it back; the app then starts from the defaults and says so.
RestoredSpec restoreSavedSpec(QSettings &settings, const QString &backupDirectory);

// Saves `spec` as the one to restore at the next start.
void saveSpec(QSettings &settings, const ViewSpec &spec);

} // namespace atlas
