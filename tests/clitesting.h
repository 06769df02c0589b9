#pragma once
// The command line as a test runs it: the binary (ATLAS_BINARY) with arguments, its exit code and output.
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QString>
#include <QStringList>

namespace atlas::testing {

struct CliResult
{
    int code; // the exit code; -1 when it ran past two minutes, -2 when it crashed
    QString out, err;
};

inline CliResult runCli(const QStringList &args)
{
    QProcess p;
    p.start(ATLAS_BINARY, args);
    if (!p.waitForFinished(120000))
        return {-1, {}, "timed out"};
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2, QString::fromUtf8(p.readAllStandardOutput()),
        QString::fromUtf8(p.readAllStandardError())};
}

// `render` of a spec given as JSON, written to DIR/spec.json first; the picture goes to DIR/OUT.
inline CliResult renderSpec(
    const QString &dir, const QByteArray &json, const QString &out, const QStringList &options = {})
{
    QFile spec(QDir(dir).filePath("spec.json"));
    if (!spec.open(QIODevice::WriteOnly | QIODevice::Truncate) || spec.write(json) != json.size())
        return {1, {}, "the test cannot write " + spec.fileName()};
    spec.close();
    return runCli(QStringList {"render", "--spec", spec.fileName(), "--out", QDir(dir).filePath(out)} + options);
}

} // namespace atlas::testing
