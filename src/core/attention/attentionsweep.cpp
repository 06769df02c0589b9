#include "attention/attentionsweep.h"

#include "io/atomicfile.h"
#include "io/jsonread.h"
#include "util/error.h"

#include <nlohmann/json.hpp>

#include <cmath>

namespace atlas::attention {

namespace {

using Json = nlohmann::json;

// Reads the members of one JSON object; every failure names the source and the path to the field.
class Fields
{
public:
    Fields(const Json &object, std::string source, std::string path)
        : m_object(object)
        , m_source(std::move(source))
        , m_path(std::move(path))
    {
        if (!object.is_object())
            fail("", "expected an object");
    }

    [[noreturn]] void fail(const std::string &key, const std::string &what) const
    {
        const std::string field = m_path.empty() ? key : key.empty() ? m_path : m_path + "." + key;
        throw Error(m_source + ": " + (field.empty() ? std::string() : "field '" + field + "': ") + what);
    }

    const Json &at(const std::string &key) const
    {
        const auto it = m_object.find(key);
        if (it == m_object.end())
            fail(key, "missing");
        return *it;
    }

    std::string text(const std::string &key) const
    {
        const Json &v = at(key);
        if (!v.is_string())
            fail(key, "expected a string");
        return v.get<std::string>();
    }

    double number(const std::string &key) const
    {
        const Json &v = at(key);
        if (!v.is_number() || !std::isfinite(v.get<double>()))
            fail(key, "expected a finite number");
        return v.get<double>();
    }

    double nonNegative(const std::string &key) const
    {
        const double v = number(key);
        if (v < 0)
            fail(key, "must not be negative");
        return v;
    }

    int64_t integer(const std::string &key, int64_t minimum) const
    {
        const Json &v = at(key);
        if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX))
            || v.get<int64_t>() < minimum)
            fail(key, "expected an integer of at least " + std::to_string(minimum));
        return v.get<int64_t>();
    }

    bool boolean(const std::string &key) const
    {
        const Json &v = at(key);
        if (!v.is_boolean())
            fail(key, "expected true or false");
        return v.get<bool>();
    }

    const Json &array(const std::string &key) const
    {
        const Json &v = at(key);
        if (!v.is_array())
            fail(key, "expected an array");
        return v;
    }

    std::string path(const std::string &key, size_t index) const
    {
        return (m_path.empty() ? key : m_path + "." + key) + "[" + std::to_string(index) + "]";
    }

private:
    const Json &m_object;
    std::string m_source;
    std::string m_path;
};

KernelSweep readKernel(const Json &json, const std::string &source, const std::string &path)
{
    const Fields f(json, source, path);
    KernelSweep k;
    k.kind = f.text("kind");
    k.description = f.text("description");
    k.causal = f.boolean("causal");
    k.repeat = int(f.integer("repeat", 1));
    k.slopeUpperHalf = f.number("slope_upper_half");
    const Json &points = f.array("points");
    for (size_t i = 0; i < points.size(); ++i) {
        const Fields p(points[i], source, f.path("points", i));
        SweepPoint point {
            p.integer("n", 1), p.nonNegative("median_ms"), p.nonNegative("min_ms"), p.nonNegative("max_ms")};
        if (!k.points.empty() && point.n <= k.points.back().n)
            p.fail("n", "lengths must increase");
        k.points.push_back(point);
    }
    return k;
}

} // namespace

void AttentionSweepFile::put(const KernelSweep &sweep)
{
    std::erase_if(kernels, [&](const KernelSweep &k) { return k.kind == sweep.kind && k.causal == sweep.causal; });
    kernels.push_back(sweep);
}

AttentionSweepFile parseAttentionSweep(const std::string &json, const std::string &source)
{
    const Json root = parseJson(json, source);
    const Fields f(root, source, "");
    AttentionSweepFile file;
    file.machine = f.text("machine");
    file.date = f.text("date");
    file.dHead = int(f.integer("d_head", 1));
    file.matrixBackend = f.text("matrix_backend");
    const Json &kernels = f.array("kernels");
    for (size_t i = 0; i < kernels.size(); ++i)
        file.kernels.push_back(readKernel(kernels[i], source, f.path("kernels", i)));
    return file;
}

AttentionSweepFile readAttentionSweep(const std::string &path)
{
    return parseAttentionSweep(readFile(path), path);
}

void writeAttentionSweep(const std::string &path, const AttentionSweepFile &file)
{
    Json root = {{"machine", file.machine}, {"date", file.date}, {"d_head", file.dHead},
        {"matrix_backend", file.matrixBackend}, {"kernels", Json::array()}};
    for (const KernelSweep &k : file.kernels) {
        Json entry = {{"kind", k.kind}, {"description", k.description}, {"causal", k.causal}, {"repeat", k.repeat},
            {"slope_upper_half", k.slopeUpperHalf}, {"points", Json::array()}};
        for (const SweepPoint &p : k.points)
            entry["points"].push_back(
                {{"n", p.n}, {"median_ms", p.medianMs}, {"min_ms", p.minMs}, {"max_ms", p.maxMs}});
        root["kernels"].push_back(entry);
    }
    writeFileAtomically(path, root.dump(2) + "\n");
}

} // namespace atlas::attention
