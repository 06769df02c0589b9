// The entry point of a test bundle (testbundle.h): `BUNDLE TEST [Qt Test's options]`.
#include "testbundle.h"

#include <QCoreApplication>

#include <cstdio>
#include <filesystem>
#include <map>
#include <string>

namespace atlas::testing {

namespace {

std::map<std::string, TestMain> &bundledTests()
{
    static std::map<std::string, TestMain> tests;
    return tests;
}

} // namespace

bool registerTest(const char *file, TestMain main)
{
    std::string name = file;
    name = name.substr(name.find_last_of('/') + 1);
    name = name.substr(0, name.find('.'));
    bundledTests()[name] = main;
    return true;
}

} // namespace atlas::testing

int main(int argc, char **argv)
{
    const auto &tests = atlas::testing::bundledTests();
    const auto test = argc > 1 ? tests.find(argv[1]) : tests.end();
    if (test == tests.end()) {
        std::fprintf(stderr, "usage: %s TEST [Qt Test's options]\nits tests:", argv[0]);
        for (const auto &[name, main] : tests)
            std::fprintf(stderr, " %s", name.c_str());
        std::fprintf(stderr, "\n");
        return 2;
    }
    // The tests name what they read relative to the source tree (tests/CMakeLists.txt says why): it is the working
    // directory, wherever the bundle is started from.
    std::error_code error;
    const std::filesystem::path bundle = std::filesystem::read_symlink("/proc/self/exe", error);
    if (!error)
        std::filesystem::current_path(bundle.parent_path() / ATLAS_SOURCE_FROM_BUNDLE, error);
    if (error) {
        std::fprintf(stderr, "%s: cannot enter the source tree (%s from the bundle): %s\n", argv[0],
            ATLAS_SOURCE_FROM_BUNDLE, error.message().c_str());
        return 2;
    }
    // The test's own name, as its own executable had: its settings and temporary files are its own, apart from the
    // bundle's other tests running beside it.
    QCoreApplication::setApplicationName(QString::fromUtf8(argv[1]));
    argv[1] = argv[0]; // the test sees the bundle as its program, and its own options after it
    return test->second(argc - 1, argv + 1);
}
