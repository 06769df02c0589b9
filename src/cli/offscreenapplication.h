#pragma once

#include <QApplication>

namespace atlas {

// A QApplication for headless subcommands (render, bench-view): the offscreen platform unless the user chose
// one, so they run on machines without a display.
class OffscreenApplication
{
private:
    // Runs before QApplication's constructor, which reads QT_QPA_PLATFORM.
    static int &choosePlatform(int &argc)
    {
        if (!qEnvironmentVariableIsSet("QT_QPA_PLATFORM"))
            qputenv("QT_QPA_PLATFORM", "offscreen");
        return argc;
    }

    int m_argc = 1;
    char m_name[18] = "transformer-atlas";
    char *m_argv[2] = {m_name, nullptr};
    QApplication m_app {choosePlatform(m_argc), m_argv};
};

} // namespace atlas
