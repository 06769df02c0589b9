#include "io/jsonread.h"
#include "tokenize/pipeline.h"
#include "tokenize/unicodetext.h"
#include "util/error.h"

#include <nlohmann/json.hpp>

#include <map>

namespace atlas::pipeline {

namespace {

int tokenIdMember(const Json &pair, const JsonPlace &where)
{
    // BertProcessing and RobertaProcessing write a token as ["[CLS]", 101].
    if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string() || !isIntegerUpTo(pair[1], 1 << 24))
        throw Error(where() + ": expected [\"token\", id], got " + shownJson(pair));
    return pair[1].get<int>();
}

// <cls> A <sep>: BertProcessing ([CLS] … [SEP]) and RobertaProcessing (<s> … </s>) for one sequence.
class AroundSequence : public PostProcessor
{
public:
    AroundSequence(const Json &json, const JsonPlace &where)
        : m_cls(tokenIdMember(json.contains("cls") ? json["cls"] : Json(), where.at("cls")))
        , m_sep(tokenIdMember(json.contains("sep") ? json["sep"] : Json(), where.at("sep")))
    {
    }
    void addSpecialTokens(std::vector<int> &ids) const override
    {
        ids.insert(ids.begin(), m_cls);
        ids.push_back(m_sep);
    }

private:
    int m_cls, m_sep;
};

// TemplateProcessing's "single" template: special tokens (each possibly several ids) around $A.
class Template : public PostProcessor
{
public:
    Template(const Json &json, const JsonPlace &where)
    {
        std::map<std::string, std::vector<int>> specials;
        const Json &table = json.contains("special_tokens") ? json["special_tokens"] : Json::object();
        if (!table.is_object())
            throw Error(where.at("special_tokens")() + ": expected an object");
        for (const auto &[name, entry] : table.items()) {
            const JsonPlace at = where.at("special_tokens").at(name.substr(0, 40));
            const auto ids = entry.is_object() ? entry.find("ids") : entry.end();
            if (ids == entry.end() || !ids->is_array())
                throw Error(at() + ": expected an object with an \"ids\" array");
            std::vector<int> &out = specials[name];
            for (const Json &id : *ids) {
                if (!isIntegerUpTo(id, 1 << 24))
                    throw Error(at.at("ids")() + ": " + shownJson(id) + " is not a token id");
                out.push_back(id.get<int>());
            }
        }
        for (const char *which : {"single", "pair"}) {
            const JsonPlace at = where.at(which);
            const auto it = json.find(which);
            if (it == json.end())
                throw Error(at() + ": missing");
            if (!it->is_array())
                throw Error(at() + ": expected an array of {\"SpecialToken\": …} and {\"Sequence\": …}");
            for (size_t i = 0; i < it->size(); ++i) {
                const Json &piece = (*it)[i];
                if (!piece.is_object() || piece.size() != 1)
                    throw Error(
                        at.at(i)() + ": expected {\"SpecialToken\": …} or {\"Sequence\": …}, got " + shownJson(piece));
                const std::string &kind = piece.begin().key(); // not items(): its proxy would die with this line
                const Json &body = piece.begin().value();
                const std::string id = body.is_object() ? jsonString(body, "id", at.at(i).at(kind)) : "";
                if (kind == "Sequence") {
                    if (id != "A" && id != "B")
                        throw Error(at.at(i).at(kind)() + ": the sequence id must be \"A\" or \"B\"");
                    if (which == std::string("single"))
                        m_single.push_back(kSequence);
                } else if (kind == "SpecialToken") {
                    const auto found = specials.find(id);
                    if (found == specials.end())
                        throw Error(at.at(i).at(kind)() + ": \"" + id.substr(0, 40) + "\" is not in special_tokens");
                    if (which == std::string("single"))
                        m_single.push_back(static_cast<int>(m_specials.size())), m_specials.push_back(found->second);
                } else {
                    throw Error(at.at(i)() + ": \"" + kind.substr(0, 40) + "\" is neither SpecialToken nor Sequence");
                }
            }
        }
    }
    void addSpecialTokens(std::vector<int> &ids) const override
    {
        std::vector<int> out;
        for (int part : m_single)
            if (part == kSequence)
                out.insert(out.end(), ids.begin(), ids.end());
            else
                out.insert(out.end(), m_specials[part].begin(), m_specials[part].end());
        ids = std::move(out);
    }

private:
    static constexpr int kSequence = -1;
    std::vector<int> m_single; // kSequence or an index into m_specials
    std::vector<std::vector<int>> m_specials;
};

// ByteLevel's post-processing only trims offsets, which this program does not keep.
class NoIds : public PostProcessor
{
public:
    void addSpecialTokens(std::vector<int> &) const override { }
};

class PostProcessorSequence : public PostProcessor
{
public:
    PostProcessorSequence(const Json &json, const JsonPlace &where)
        : m_steps(readSteps(json, "processors", where, &makePostProcessor))
    {
    }
    void addSpecialTokens(std::vector<int> &ids) const override
    {
        for (const auto &step : m_steps)
            step->addSpecialTokens(ids);
    }

private:
    std::vector<std::unique_ptr<PostProcessor>> m_steps;
};

} // namespace

std::unique_ptr<PostProcessor> makePostProcessor(const Json &json, const JsonPlace &where)
{
    if (json.is_null())
        return nullptr;
    static constexpr ComponentType<PostProcessor> kinds[]
        = {{"TemplateProcessing", madeFromJson<PostProcessor, Template>},
            {"BertProcessing", madeFromJson<PostProcessor, AroundSequence>},
            {"RobertaProcessing", madeFromJson<PostProcessor, AroundSequence>},
            {"ByteLevel", madeBare<PostProcessor, NoIds>},
            {"Sequence", madeFromJson<PostProcessor, PostProcessorSequence>}};
    return makeComponent(typeOf(json, where), kinds, "post-processor", json, where);
}

} // namespace atlas::pipeline
