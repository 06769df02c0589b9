#pragma once

#include "viewmodel/viewinput.h"
#include "views/view.h"

#include <QSize>
#include <QTest>

// A view opened in a test as the app opens it in a tab.
namespace atlas::testing {

// Resizes `view` to `size`, sets `spec` and then `input` (testing::forSpec's, or a trace of the test's own), shows it
// and waits until its window is exposed, which is what draws it; false when it never was.
inline bool shown(View &view, const ViewSpec &spec, const ViewInput &input, QSize size = {1280, 720})
{
    view.resize(size);
    view.setSpec(spec);
    view.setInput(input);
    view.show();
    return QTest::qWaitForWindowExposed(&view);
}

} // namespace atlas::testing
