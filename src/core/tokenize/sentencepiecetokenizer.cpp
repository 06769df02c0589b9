#include "tokenize/sentencepiecetokenizer.h"

#include "io/atomicfile.h"
#include "io/jsonread.h"
#include "io/limits.h"
#include "io/modelfile.h"
#include "tokenize/pipeline.h"
#include "tokenize/unicodetext.h"
#include "util/error.h"

#include <nlohmann/json.hpp>
#include <sentencepiece_processor.h>

#include <filesystem>

namespace atlas {

namespace {

// Which special tokens the Hugging Face class of this directory puts around a sequence.
void readSpecialTokenPolicy(const std::string &modelPath, bool &addBos, bool &addEos)
{
    const std::string config = (std::filesystem::path(modelPath).parent_path() / "tokenizer_config.json").string();
    std::error_code ec;
    if (!std::filesystem::is_regular_file(config, ec))
        return;
    const nlohmann::json json = parseJson(readModelFile(config, limits::kTokenizerBytes), config);
    if (!json.is_object())
        return;
    const auto cls = json.find("tokenizer_class");
    const std::string name = cls != json.end() && cls->is_string() ? cls->get<std::string>() : "";
    addBos = name.starts_with("LlamaTokenizer");
    addEos = name.starts_with("T5Tokenizer");
    addBos = jsonBool(json, "add_bos_token", {config, ""}, addBos);
    addEos = jsonBool(json, "add_eos_token", {config, ""}, addEos);
}

} // namespace

SentencePieceTokenizer::SentencePieceTokenizer(const std::string &modelPath)
    : m_path(modelPath)
    , m_processor(std::make_unique<sentencepiece::SentencePieceProcessor>())
{
    // Read here, not by the library: readFile refuses special files and files past the size limit.
    const std::string bytes = readModelFile(modelPath, limits::kTokenizerBytes);
    if (bytes.empty())
        throw Error(modelPath + ": empty file, not a SentencePiece model");
    // The library's status names its own source file and line, which mean nothing to a user.
    if (!m_processor->LoadFromSerializedProto(bytes).ok())
        throw Error(modelPath + ": not a SentencePiece model (its " + std::to_string(bytes.size())
            + " bytes do not parse as one: truncated, or another kind of file)");
    if (m_processor->GetPieceSize() <= 0)
        throw Error(modelPath + ": the SentencePiece model has no pieces");
    readSpecialTokenPolicy(modelPath, m_addBos, m_addEos);
}

SentencePieceTokenizer::~SentencePieceTokenizer() = default;

std::string SentencePieceTokenizer::kind() const
{
    // Byte-fallback and the model type are in the proto; the pieces tell BPE from Unigram only by scores, so the
    // kind names the library.
    return "SentencePiece";
}

std::vector<int> SentencePieceTokenizer::encode(const std::string &text) const
{
    if (const size_t bad = unicode::firstInvalidUtf8(text); bad != std::string::npos)
        throw Error(
            "the text is not valid UTF-8 (byte " + std::to_string(bad) + "); " + m_path + " reads Unicode text");
    std::vector<int> ids;
    const auto status = m_processor->Encode(text, &ids);
    if (!status.ok())
        throw Error(m_path + ": cannot encode the text (" + status.ToString() + ")");
    return ids;
}

std::vector<int> SentencePieceTokenizer::encodeWithSpecialTokens(const std::string &text) const
{
    std::vector<int> ids = encode(text);
    if (m_addBos && m_processor->bos_id() >= 0)
        ids.insert(ids.begin(), m_processor->bos_id());
    if (m_addEos && m_processor->eos_id() >= 0)
        ids.push_back(m_processor->eos_id());
    return ids;
}

std::string SentencePieceTokenizer::decode(const std::vector<int> &ids) const
{
    for (int id : ids)
        if (id < 0 || id >= m_processor->GetPieceSize())
            throw Error("token id " + std::to_string(id) + " is not in " + m_path);
    std::string text;
    const auto status = m_processor->Decode(ids, &text);
    if (!status.ok())
        throw Error(m_path + ": cannot decode (" + status.ToString() + ")");
    return text;
}

std::string SentencePieceTokenizer::pieceString(int id) const
{
    if (id < 0 || id >= m_processor->GetPieceSize())
        throw Error("token id " + std::to_string(id) + " is not in " + m_path);
    return m_processor->IdToPiece(id);
}

SentencePieceTokenizer::StoredPiece SentencePieceTokenizer::storedPiece(int id) const
{
    StoredPiece p;
    p.text = pieceString(id);
    p.score = m_processor->GetScore(id);
    p.unknown = m_processor->IsUnknown(id);
    p.control = m_processor->IsControl(id);
    p.unused = m_processor->IsUnused(id);
    p.byte = m_processor->IsByte(id);
    return p;
}

int SentencePieceTokenizer::bosId() const
{
    return m_processor->bos_id();
}

int SentencePieceTokenizer::eosId() const
{
    return m_processor->eos_id();
}

std::string SentencePieceTokenizer::piece(int id) const
{
    if (id < 0 || id >= m_processor->GetPieceSize())
        return std::string("#").append(std::to_string(id));
    const std::string &p = m_processor->IdToPiece(id);
    if (m_processor->IsControl(id) || m_processor->IsUnknown(id))
        return p;
    if (m_processor->IsByte(id))
        if (const int b = pipeline::byteFallbackValue(p); b >= 0)
            return unicode::readableText(std::string(1, static_cast<char>(b)));
    static const std::string kMetaspace = "\xE2\x96\x81";
    std::string text;
    for (size_t pos = 0; pos < p.size();)
        if (p.compare(pos, kMetaspace.size(), kMetaspace) == 0) {
            text += ' ';
            pos += kMetaspace.size();
        } else {
            text += p[pos++];
        }
    return unicode::readableText(text);
}

TokenRole SentencePieceTokenizer::role(int id) const
{
    if (id < 0 || id >= m_processor->GetPieceSize())
        return TokenRole::Text;
    return m_processor->IsControl(id) ? TokenRole::Special
        : m_processor->IsUnknown(id)  ? TokenRole::Unknown
        : m_processor->IsByte(id)     ? TokenRole::Byte
                                      : TokenRole::Text;
}

int SentencePieceTokenizer::vocabSize() const
{
    return m_processor->GetPieceSize();
}

} // namespace atlas
