#include "attention/attentionsweep.h"

#include "io/atomicfile.h"
#include "io/jsonread.h"
#include "util/error.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>

namespace atlas::attention {

namespace {

using Json = nlohmann::json;

// Reads the members of one JSON object with io/jsonread.h's readers; every failure names the source and the path
// to the field.
class Fields
{
public:
    Fields(const Json &object, JsonPlace place)
        : m_object(object)
        , m_place(std::move(place))
    {
        if (!object.is_object())
            m_place.fail("must be an object, is " + shownJson(object));
    }

    [[noreturn]] void fail(const std::string &key, const std::string &what) const { m_place.at(key).fail(what); }

    std::string text(const std::string &key) const { return jsonString(m_object, key, m_place); }
    double number(const std::string &key) const
    {
        return jsonNumber(jsonMember(m_object, key, m_place), m_place.at(key), std::numeric_limits<double>::lowest(),
            std::numeric_limits<double>::max());
    }
    double nonNegative(const std::string &key) const
    {
        return jsonNumber(jsonMember(m_object, key, m_place), m_place.at(key), 0.0, std::numeric_limits<double>::max());
    }
    int64_t integer(const std::string &key, int64_t minimum) const
    {
        return jsonInteger(jsonMember(m_object, key, m_place), m_place.at(key), minimum, INT64_MAX);
    }
    bool boolean(const std::string &key) const { return jsonBool(jsonMember(m_object, key, m_place), m_place.at(key)); }
    const Json &array(const std::string &key) const
    {
        const Json &v = jsonMember(m_object, key, m_place);
        if (!v.is_array())
            fail(key, "must be an array, is " + shownJson(v));
        return v;
    }
    JsonPlace place(const std::string &key, size_t index) const { return m_place.at(key).at(index); }

private:
    const Json &m_object;
    JsonPlace m_place;
};

KernelSweep readKernel(const Json &json, const JsonPlace &place)
{
    const Fields f(json, place);
    KernelSweep k;
    k.kind = f.text("kind");
    k.description = f.text("description");
    k.causal = f.boolean("causal");
    k.repeat = int(f.integer("repeat", 1));
    k.slopeUpperHalf = f.number("slope_upper_half");
    const Json &points = f.array("points");
    for (size_t i = 0; i < points.size(); ++i) {
        const Fields p(points[i], f.place("points", i));
        SweepPoint point {
            p.integer("n", 1), p.nonNegative("median_ms"), p.nonNegative("min_ms"), p.nonNegative("max_ms")};
        if (!k.points.empty() && point.n <= k.points.back().n)
            p.fail("n", "must increase from point to point");
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
    const Fields f(root, JsonPlace {source, ""});
    AttentionSweepFile file;
    file.machine = f.text("machine");
    file.date = f.text("date");
    file.dHead = int(f.integer("d_head", 1));
    file.matrixBackend = f.text("matrix_backend");
    const Json &kernels = f.array("kernels");
    for (size_t i = 0; i < kernels.size(); ++i)
        file.kernels.push_back(readKernel(kernels[i], f.place("kernels", i)));
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
