#include "tokenize/specialtokenstokenizer.h"

#include "tokenize/encodingprogress.h"

namespace atlas {

SpecialTokensTokenizer::SpecialTokensTokenizer(
    std::unique_ptr<Tokenizer> inner, std::vector<std::pair<std::string, int>> specials)
    : m_inner(std::move(inner))
    , m_specials(std::move(specials))
{
}

const std::string *SpecialTokensTokenizer::nameOf(int id) const
{
    for (const auto &[name, special] : m_specials)
        if (special == id)
            return &name;
    return nullptr;
}

std::vector<int> SpecialTokensTokenizer::encode(const std::string &text) const
{
    std::vector<int> ids;
    size_t plain = 0; // where the text not yet encoded starts
    auto flush = [&](size_t end) {
        if (end > plain) {
            const EncodingProgress::Part progress(plain, end, text.size());
            const std::vector<int> part = m_inner->encode(text.substr(plain, end - plain));
            ids.insert(ids.end(), part.begin(), part.end());
        }
    };
    for (size_t at = 0; at < text.size();) {
        const std::pair<std::string, int> *match = nullptr; // the longest name starting here
        for (const auto &special : m_specials)
            if (text.compare(at, special.first.size(), special.first) == 0
                && (!match || special.first.size() > match->first.size()))
                match = &special;
        if (!match) {
            ++at;
            continue;
        }
        flush(at);
        ids.push_back(match->second);
        at += match->first.size();
        plain = at;
    }
    flush(text.size());
    return ids;
}

std::string SpecialTokensTokenizer::decode(const std::vector<int> &ids) const
{
    std::string text;
    std::vector<int> run; // ordinary ids, decoded together (a multi-byte character spans several)
    for (int id : ids) {
        if (const std::string *name = nameOf(id)) {
            text += m_inner->decode(run) + *name;
            run.clear();
        } else {
            run.push_back(id);
        }
    }
    return text + m_inner->decode(run);
}

std::string SpecialTokensTokenizer::piece(int id) const
{
    const std::string *name = nameOf(id);
    return name ? *name : m_inner->piece(id);
}

} // namespace atlas
