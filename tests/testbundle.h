#pragma once

#include <QTest>

// The suite's test files are compiled together into a few executables, one per kind of test (the core's, the app's),
// each a bundle that runs the test named by its first argument: `atlas_core_tests tst_npy -v2` runs tst_npy.cpp as
// its own executable did. Compiling the files together is what makes the suite's build cheap (they share the headers'
// code, and one link replaces eighty); ctest runs each test in its own process as before. A bundle runs in the
// source tree, wherever it is started from: a test names what it reads relative to it (ATLAS_TEST_DATA "/gpt2_tiny",
// ATLAS_SOURCE_DIR "/lessons", ATLAS_BINARY), so that no compile holds a clone's own path (tests/CMakeLists.txt).
//
// Every test file includes this header and ends in Qt Test's QTEST_MAIN, QTEST_GUILESS_MAIN or QTEST_APPLESS_MAIN.
// All three expand Qt's QTEST_MAIN_WRAPPER, which defines `main`; here it defines the file's entry in the bundle
// instead, with the same body as Qt 6's.
namespace atlas::testing {

using TestMain = int (*)(int argc, char **argv);

// Enters FILE's test in this bundle under the file's base name (tst_npy). Returns true.
bool registerTest(const char *file, TestMain main);

} // namespace atlas::testing

#undef QTEST_MAIN_WRAPPER
#define QTEST_MAIN_WRAPPER(TestObject, ...)                                                                            \
    static int atlasTestMain##TestObject(int argc, char *argv[])                                                       \
    {                                                                                                                  \
        QT_PREPEND_NAMESPACE(QTest::Internal::callInitMain)<TestObject>();                                             \
        __VA_ARGS__                                                                                                    \
        TestObject tc;                                                                                                 \
        QTEST_SET_MAIN_SOURCE_PATH                                                                                     \
        return QTest::qExec(&tc, argc, argv);                                                                          \
    }                                                                                                                  \
    static const bool atlasTestRegistered##TestObject                                                                  \
        = atlas::testing::registerTest(__FILE__, atlasTestMain##TestObject);

// A test that makes its application itself (its own screens, its own QApplication subclass) writes
// `ATLAS_TEST_OWN_MAIN(TestObject) { ... }` where it would have written `int main(int argc, char **argv)`.
#define ATLAS_TEST_OWN_MAIN(TestObject)                                                                                \
    static int atlasTestMain##TestObject(int argc, char **argv);                                                       \
    static const bool atlasTestRegistered##TestObject                                                                  \
        = atlas::testing::registerTest(__FILE__, atlasTestMain##TestObject);                                           \
    static int atlasTestMain##TestObject(int argc, char **argv)
