#include "tokenizer/tokenizer.h"

#include "model/modeltokenizer.h"
#include "view/analysishelpers.h"
#include "view/viewkinds.h"

#include <algorithm>

// The Tokenizer view: its descriptor and its analysis request.
namespace atlas::views::tokenizer {

namespace {

using namespace atlas::analysis;

// The input's text split by the model's tokenizer and by another; ids given instead of text are decoded first.
AnalysisRequest request(const ViewSpec &spec, const AnalysisContext &c)
{
    if (!c.model)
        return problem(kNothingComputed);
    AnalysisRequest r;
    r.key = "tokenizer/" + c.model->directory + "|" + c.model->name; // the text or the ids are keys it reads
    r.run = [model = c.model, other = spec.get(views::tokenizer::kCompareTokenizer), text = spec.text,
                tokens = spec.tokens](const std::atomic<bool> &) {
        return timedResult<TokenizerAnalysis>([&](TokenizerAnalysis &result) {
            const std::unique_ptr<Tokenizer> own = tokenizerForModel(*model);
            const std::string name = model->name.empty() ? model->directory : model->name;
            result.comparison = compareTokenizers(*own, name, other, tokens.empty() ? text : own->decode(tokens));
        });
    };
    return r;
}

} // namespace

ViewKind kind()
{
    return {.kind = "tokenizer",
        .title = "Tokenizer",
        .summary = "how the model's tokenizer splits the input, beside another tokenizer",
        .group = "Model",
        .showsEncoderDecoder = true,
        .request = request,
        .analysisKeys = {"text", "tokens", kCompareTokenizer.name},
        .after = "next-token",
        .keys = {{.field = kCompareTokenizer,
            .type = "string",
            .meaning = "tokenizer view: the tokenizer whose split of the input is shown beside the model's own: a "
                       "built-in tokenizer (`gpt2`, `mistral-7b`, `bert-base-uncased`), a built-in model or a "
                       "directory with a tokenizer (as `tokenize --model`)",
            .check =
                [](const ViewSpec &s) {
                    return s.get(kCompareTokenizer).empty() ? std::string("compare_tokenizer: name a tokenizer")
                                                            : std::string();
                },
            .ownedByView = true}}};
}

} // namespace atlas::views::tokenizer
