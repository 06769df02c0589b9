#include "trace/trace.h"

#include "util/error.h"

#include <algorithm>

namespace atlas {

void Trace::put(std::string name, std::string formula, int op, Tensor tensor)
{
    if (auto it = m_index.find(name); it != m_index.end()) {
        TraceEntry &e = m_entries[it->second];
        e.formula = std::move(formula);
        e.op = op;
        e.tensor = std::move(tensor);
        return;
    }
    m_index[name] = m_entries.size();
    m_entries.push_back({std::move(name), std::move(formula), op, std::move(tensor)});
}

void Trace::removeOutputsOf(int op)
{
    std::erase_if(m_entries, [op](const TraceEntry &e) { return e.op == op; });
    reindex();
}

void Trace::drop(const std::string &name)
{
    const auto it = m_index.find(name);
    if (it == m_index.end())
        return;
    const size_t index = it->second;
    m_index.erase(it);
    m_entries.erase(m_entries.begin() + std::ptrdiff_t(index));
    for (auto &[key, i] : m_index) // no rebuild: a training step drops a tensor after almost every op
        if (i > index)
            --i;
}

void Trace::clear()
{
    m_entries.clear();
    m_index.clear();
}

const TraceEntry *Trace::find(const std::string &name) const
{
    auto it = m_index.find(name);
    return it == m_index.end() ? nullptr : &m_entries[it->second];
}

const Tensor &Trace::tensor(const std::string &name) const
{
    if (const TraceEntry *e = find(name))
        return e->tensor;
    throw Error("the trace has no tensor named '" + name + "' (has that operation run yet?)");
}

size_t Trace::bytes() const
{
    size_t total = 0;
    for (const TraceEntry &e : m_entries)
        total += e.tensor.bytes();
    return total;
}

void Trace::reindex()
{
    m_index.clear();
    for (size_t i = 0; i < m_entries.size(); ++i)
        m_index[m_entries[i].name] = i;
}

} // namespace atlas
