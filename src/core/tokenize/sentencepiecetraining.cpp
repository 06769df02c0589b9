#include "tokenize/sentencepiecetraining.h"

#include "util/error.h"

#include <sentencepiece_trainer.h>

#include <sstream>
#include <unordered_map>
#include <vector>

namespace atlas {

namespace {

class LineIterator : public sentencepiece::SentenceIterator
{
public:
    explicit LineIterator(const std::string &text)
    {
        std::istringstream in(text);
        for (std::string line; std::getline(in, line);)
            if (line.find_first_not_of(" \t\r") != std::string::npos)
                m_lines.push_back(line);
    }
    bool done() const override { return m_next >= m_lines.size(); }
    void Next() override { ++m_next; }
    const std::string &value() const override { return m_lines[m_next]; }
    sentencepiece::util::Status status() const override { return {}; }
    size_t count() const { return m_lines.size(); }

private:
    std::vector<std::string> m_lines;
    size_t m_next = 0;
};

} // namespace

std::string trainSentencePiece(const std::string &text, const SentencePieceTraining &options)
{
    if (options.vocab < SentencePieceTraining::kMinVocab || options.vocab > SentencePieceTraining::kMaxVocab)
        throw Error("a SentencePiece vocabulary has " + std::to_string(SentencePieceTraining::kMinVocab) + ".."
            + std::to_string(SentencePieceTraining::kMaxVocab) + " pieces (the 256 byte pieces among them); got "
            + std::to_string(options.vocab));
    if (options.kind != "bpe" && options.kind != "unigram")
        throw Error("a SentencePiece model is bpe or unigram; got '" + options.kind + "'");
    LineIterator lines(text);
    if (lines.count() == 0)
        throw Error("no text to train a tokenizer on (every line is empty)");
    const std::unordered_map<std::string, std::string> args = {
        {"model_type", options.kind}, {"vocab_size", std::to_string(options.vocab)},
        {"normalization_rule_name", "nmt_nfkc"}, {"character_coverage", "1.0"}, {"byte_fallback", "true"},
        {"num_threads", "1"}, {"shuffle_input_sentence", "false"}, {"input_sentence_size", "0"},
        {"max_sentence_length", "65536"},
        {"minloglevel", "2"}, // the library's progress lines are not the user's business
    };
    std::string model;
    const sentencepiece::util::Status status = sentencepiece::SentencePieceTrainer::Train(args, &lines, &model);
    if (!status.ok()) { // its message starts with the library's own source line and check, which mean nothing here
        const std::string message(status.message());
        const size_t check = message.find("] ");
        throw Error("SentencePiece's trainer refused: "
            + (message.starts_with("./src/") && check != std::string::npos ? message.substr(check + 2) : message));
    }
    return model;
}

} // namespace atlas
