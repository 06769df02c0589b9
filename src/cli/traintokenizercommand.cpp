#include "arguments.h"
#include "commands.h"
#include "engine/inputbuilder.h"
#include "io/atomicfile.h"
#include "tokenize/sentencepiecetokenizer.h"
#include "tokenize/sentencepiecetraining.h"
#include "train/corpus.h"
#include "util/error.h"

#include <cstdio>
#include <filesystem>

namespace atlas {

namespace fs = std::filesystem;

// Trains a SentencePiece tokenizer on the built-in corpus's training part (or a text file) and writes
// DIR/tokenizer.model, which `tokenize --model DIR`, the Tokenizer view and the `words` task read. An existing
// tokenizer.model is never replaced. (The options: commandtable.cpp.)
int trainTokenizerCommand(const CommandArgs &argv)
{
    const Arguments args(argv, "train-tokenizer");
    const fs::path out = args.required("out");
    SentencePieceTraining o;
    o.vocab = args.intValue("vocab", o.vocab, SentencePieceTraining::kMinVocab, SentencePieceTraining::kMaxVocab);
    o.kind = args.value("kind", o.kind);
    const fs::path file = out / "tokenizer.model";
    std::error_code ec;
    if (fs::exists(fs::symlink_status(file, ec)))
        throw Error(file.string() + " exists: train-tokenizer writes a new tokenizer and replaces none");
    const std::string text = args.has("text-file") ? readInputText(args.value("text-file")) : corpusTraining();
    const std::string source = args.has("text-file") ? args.value("text-file") : "the built-in corpus (training part)";
    const std::string model = trainSentencePiece(text, o);
    fs::create_directories(out, ec);
    if (ec)
        throw Error(out.string() + ": cannot create the directory: " + ec.message());
    writeFileAtomically(file.string(), model);
    const SentencePieceTokenizer written(file.string());
    std::printf("%s: a SentencePiece tokenizer (%s) of %d pieces trained on %s (%zu bytes)\n", file.string().c_str(),
        o.kind.c_str(), written.vocabSize(), source.c_str(), text.size());
    return 0;
}

} // namespace atlas
