#pragma once

#include "util/error.h"

#include <QString>

#include <exception>
#include <functional>

namespace atlas::testing {

// The message of the atlas::Error `f` throws; empty when it throws nothing. Any other exception is marked, so a test
// expecting a message of ours fails on it.
inline QString errorFrom(const std::function<void()> &f)
{
    try {
        f();
    } catch (const Error &e) {
        return QString::fromStdString(e.what());
    } catch (const std::exception &e) {
        return QStringLiteral("[not an atlas::Error] ") + QString::fromUtf8(e.what());
    }
    return {};
}

} // namespace atlas::testing
