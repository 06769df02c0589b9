#include "view/specrun.h"
#include "view/viewkinds.h"

// The Objectives view (a pretraining objective applied to the input): its descriptor.
namespace atlas::views::objective {

ViewKind kind()
{
    return {.kind = "objective",
        .title = "Objectives",
        .summary
        = "a pretraining objective applied to the input: GPT's next token, BERT's masked LM, T5's span corruption, "
          "the prefix LM; what the model reads, what it must predict, and the mask it implies",
        .group = "Training",
        .showsEncoderDecoder = true,
        .alsoReads = {"objective", "seed"},
        .checkInput = objectiveInputProblem,
        .after = "quantization"};
}

} // namespace atlas::views::objective
