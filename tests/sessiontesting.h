#pragma once

// What the tests of the Session share: waiting for its jobs and analyses, a session on the built-in tiny model, and
// the analysis computed at once from its trace.
#include "session/session.h"
#include "view/viewanalysis.h"

#include <QTest>

#include <memory>
#include <string>

namespace atlas::testing {

inline void waitIdle(Session &session)
{
    QTRY_VERIFY_WITH_TIMEOUT(!session.busy(), 20000);
}

// A bound on the wait, not a timing claim: the residual sweep (504 forward passes) takes 34 s under the sanitizers on a
// slow day of the 2-core CI machine.
inline void waitForAnalysis(Session &session)
{
    QTRY_VERIFY_WITH_TIMEOUT(!session.analysis().pending, 120000);
}

// A session on `model` with `text` as its input, run to the end, showing `view` (the default view when empty).
inline void openOn(Session &session, const std::string &model, const std::string &text, const std::string &view = {})
{
    ViewSpec spec;
    spec.text = text;
    if (!view.empty())
        spec.view = view;
    session.setSpec(spec);
    session.openModel(QString::fromStdString(model));
    QTRY_VERIFY_WITH_TIMEOUT(session.trace() != nullptr, 20000);
    waitIdle(session);
}

// A session on the built-in tiny model, run to the end, showing `view`.
inline void openTiny(Session &session, const std::string &view)
{
    openOn(session, "tiny-bytes", "The cat sat on the mat.", view);
}

// The same analysis computed at once from the session's own trace.
inline std::shared_ptr<const ViewAnalysis> directAnalysis(const Session &session)
{
    std::string problem;
    auto result = runAnalysisNow(analysisRequest(session.spec(), analysisContext(session.viewInput())), &problem);
    if (!result)
        qFatal("%s", problem.c_str());
    return result;
}

} // namespace atlas::testing
