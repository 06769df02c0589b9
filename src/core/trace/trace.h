#pragma once

#include "tensor/tensor.h"

#include <map>
#include <string>
#include <vector>

namespace atlas {

// One recorded tensor: the output of one operation of the program.
struct TraceEntry
{
    std::string name; // "layer.0.attn.probs"
    std::string formula; // "P = softmax(S_masked) over keys"
    int op = -1; // index of the operation that produced it
    Tensor tensor;
};

// The named tensors produced so far by an Engine, in the order they were produced. It is the engine's whole
// state: an operation reads its inputs from here and writes its outputs here; stepping back removes them.
class Trace
{
public:
    void put(std::string name, std::string formula, int op, Tensor tensor);
    void removeOutputsOf(int op);
    void drop(const std::string &name); // frees the data, keeps nothing (used by untraced runs)
    void clear();

    bool contains(const std::string &name) const { return m_index.count(name) != 0; }
    const TraceEntry *find(const std::string &name) const;
    const Tensor &tensor(const std::string &name) const; // throws atlas::Error when missing
    const std::vector<TraceEntry> &entries() const { return m_entries; }
    size_t bytes() const;

private:
    void reindex();

    std::vector<TraceEntry> m_entries;
    std::map<std::string, size_t> m_index;
};

} // namespace atlas
