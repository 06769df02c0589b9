#pragma once

#include <memory>
#include <mutex>
#include <string>

namespace atlas {

// The last value computed, kept under the key it was computed for and shared between threads: what the next caller
// with the same key reads instead of computing it again (a dictionary read once for every token clicked, a corpus
// pass for every feature's page). One value at a time: a new key replaces it.
template <typename T> class KeptValue
{
public:
    // The value kept under `key`, or null.
    std::shared_ptr<const T> find(const std::string &key) const
    {
        std::lock_guard lock(m_lock);
        return m_key == key ? m_value : nullptr;
    }
    void keep(const std::string &key, std::shared_ptr<const T> value)
    {
        std::lock_guard lock(m_lock);
        m_key = key;
        m_value = std::move(value);
    }

private:
    mutable std::mutex m_lock;
    std::string m_key;
    std::shared_ptr<const T> m_value;
};

} // namespace atlas
