#include "session/session.h"

#include "engine/inputbuilder.h"
#include "tokenize/encodingprogress.h"

#include <algorithm>

// The session's input: the Input and Decoder boxes as typed or pasted, a text file, token ids, padding clicked on a
// chip. A long text is read and tokenized on the worker before it runs.
namespace atlas {

void Session::setText(const QString &text, const QString &decoderBox)
{
    runBoxes({text.toStdString(), {}}, decoderBox);
}

bool Session::setTokens(const std::vector<int> &tokens, const QString &decoderBox)
{
    return runBoxes({{}, tokens}, decoderBox);
}

void Session::submitBoxes(const QString &box, const QString &decoderBox)
{
    try {
        runBoxes(readBoxInput(box.toStdString()), decoderBox);
    } catch (const std::exception &e) {
        emit errorOccurred(QString::fromStdString(e.what()));
    }
}

void Session::openTextFile(const QString &path)
{
    tokenizeThenRun([path] { return readInputText(path.toStdString()); },
        QString::fromStdString(boxInputText(m_spec.decoderText, m_spec.decoderTokens)));
}

void Session::tokenizeThenRun(std::function<std::string()> text, const QString &decoderBox)
{
    if (!m_model || !m_tokenizer)
        return;
    if (m_busy) { // after the job under way, as runInput waits
        m_startWhenFree = [this, text, decoderBox] { tokenizeThenRun(text, decoderBox); };
        return;
    }
    runJob([this, text, decoderBox, tokenizer = m_tokenizer]() -> Commit {
        BoxInput box {text(), {}};
        std::vector<int> tokens;
        try {
            const EncodingProgress progress(box.text.size(), [this](size_t done, size_t total) {
                QMetaObject::invokeMethod(this, [this, permille = int(done * 1000 / total)] {
                    emit progressChanged(permille, 1000, tr("Tokenizing"));
                });
                return !m_cancel.load();
            });
            tokens = boxTokens(*tokenizer, box);
        } catch (const EncodingCancelled &) {
        }
        if (m_cancel.load()) // Run ▸ Cancel while it was read or tokenized: nothing runs
            return [this] { emit noticed(tr("Cancelled while the text was tokenized: the input is as it was.")); };
        return [this, box = std::move(box), tokens = std::move(tokens), decoderBox] {
            runBoxes(box, decoderBox, &tokens);
        };
    });
}

bool Session::runBoxes(const BoxInput &box, const QString &decoderBox, const std::vector<int> *encoded)
{
    if (!m_model || !m_tokenizer)
        return false;
    if (!encoded && box.tokens.empty() && box.text.size() > kTokenizeHereBytes) { // a long paste: off this thread
        tokenizeThenRun([text = box.text] { return text; }, decoderBox);
        return true;
    }
    Input input;
    BoxInput decoder;
    const bool twoStacks = m_model->config.isEncoderDecoder();
    try {
        input.tokens = encoded ? *encoded : boxTokens(*m_tokenizer, box);
        if (twoStacks) {
            decoder = readBoxInput(decoderBox.toStdString());
            if (decoder.text.empty() && decoder.tokens.empty())
                throw Error(m_model->name + " is an encoder-decoder: its decoder needs an input too (the Decoder box; "
                    + (m_tokenizer->canEncode() ? "'" + m_model->config.decoderSample.substr(0, 1) + "'"
                                                : "#" + std::to_string(std::max(0, m_model->config.decoderStart)))
                    + " starts its output)");
            input.source = std::move(input.tokens);
            input.tokens = boxDecoderTokens(*m_tokenizer, decoder, m_model->config.decoderStart);
        }
    } catch (const std::exception &e) {
        emit errorOccurred(QString::fromStdString(e.what()));
        return false;
    }
    runInput(input, [box, decoder, twoStacks](ViewSpec &spec) {
        if (twoStacks) {
            spec.decoderText = decoder.text;
            spec.decoderTokens = decoder.tokens;
        }
        spec.tokens = box.tokens;
        spec.text = box.tokens.empty() ? box.text : std::string();
        spec.padding.clear();
    });
    return true;
}

void Session::togglePadding(int position)
{
    Input input = m_input;
    std::vector<int> &padding = m_model && m_model->config.isEncoderDecoder() ? input.sourcePadding : input.padding;
    auto it = std::find(padding.begin(), padding.end(), position);
    it == padding.end() ? padding.push_back(position) : void(padding.erase(it));
    std::sort(padding.begin(), padding.end());
    m_spec.padding = padding;
    runInput(input);
}

} // namespace atlas
