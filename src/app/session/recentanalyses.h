#pragma once

#include "tensor/tensor.h"
#include "view/viewanalysis.h"

#include <algorithm>
#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace atlas {

// The last few analyses a session took long to compute, by request key: going back to a tab or a lesson step shows
// its result at once instead of computing it again (a memory sweep takes seconds). A result computed in less than
// kWorthMs is not kept: computing it again costs less than holding it. Each entry keeps alive the tensors its key
// names by address, so that no other tensor can take an address while a key with it is kept.
class RecentAnalyses
{
public:
    static constexpr size_t kEntries = 8;
    static constexpr double kWorthMs = 100;
    // What the entries may keep alive of traces no longer on screen, at most: an entry that alone pins more than the
    // limit add() is given is not kept.
    static constexpr size_t kPinnedBytes = size_t(512) << 20;

    struct Entry
    {
        std::string key;
        std::shared_ptr<const ViewAnalysis> result;
        std::vector<Tensor> pins;
    };

    const Entry *find(const std::string &key) const
    {
        for (const Entry &e : m_entries)
            if (e.key == key)
                return &e;
        return nullptr;
    }

    // Keeps `entry`, the entries together pinning at most `pinnedLimit` bytes (and never more than kPinnedBytes).
    void add(Entry entry, size_t pinnedLimit = kPinnedBytes)
    {
        pinnedLimit = std::min(pinnedLimit, kPinnedBytes);
        if (entry.key.empty() || !entry.result || entry.result->milliseconds < kWorthMs
            || pinnedBytes(entry) > pinnedLimit || find(entry.key))
            return;
        m_entries.push_front(std::move(entry));
        size_t bytes = 0, kept = 0;
        for (const Entry &e : m_entries) {
            bytes += pinnedBytes(e); // shared tensors counted twice: the bound errs low
            if (kept == kEntries || bytes > pinnedLimit)
                break;
            ++kept;
        }
        m_entries.resize(kept);
    }

    size_t size() const { return m_entries.size(); }

private:
    static size_t pinnedBytes(const Entry &e)
    {
        size_t bytes = 0;
        for (const Tensor &t : e.pins)
            bytes += t.bytes();
        return bytes;
    }

    std::deque<Entry> m_entries; // the newest first
};

} // namespace atlas
