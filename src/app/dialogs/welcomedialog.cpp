#include "dialogs/welcomedialog.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

namespace atlas {

WelcomeDialog::WelcomeDialog(const QString &modelName, QWidget *parent)
    : QDialog(parent)
    , m_lesson(new QPushButton(tr("Start the first lesson"), this))
    , m_open(new QPushButton(tr("Open a model directory\u2026"), this))
    , m_explore(new QPushButton(tr("Explore"), this))
{
    setWindowTitle(tr("Welcome to Transformer Atlas"));
    auto *text = new QLabel(this);
    text->setWordWrap(true);
    text->setTextFormat(Qt::RichText);
    text->setText(
        tr("<h2>Welcome to Transformer Atlas</h2>"
           "<p>It runs a transformer one operation at a time and shows what each operation computes: every head's "
           "attention, the masks, the residual stream, the experts, the memory of a training step.</p>"
           "<p>The window has opened <b>%1</b>, a small model trained by this project, on a sample of the text it "
           "learned from. Space steps one operation, Home goes back to the start, Ctrl+K finds any view, lesson or "
           "model by name, and F1 lists every key.</p>"
           "<p>The lessons walk through the lectures step by step, with questions; any Hugging Face checkpoint "
           "directory (GPT-2, Llama, Qwen2, Mistral, BERT, T5, Pythia …) opens with File \u25B8 Open Model "
           "Directory, and a llama.cpp .gguf file (Ollama's, LM Studio's) with File \u25B8 Open GGUF File.</p>")
            .arg(modelName.toHtmlEscaped()));
    m_lesson->setDefault(true);
    m_lesson->setToolTip(tr("Lesson 1, the self-attention recipe, in the Lessons panel"));
    m_open->setToolTip(tr("A directory with config.json and safetensors weights"));
    m_explore->setToolTip(tr("Close this and look around the model on screen"));
    auto *buttons = new QHBoxLayout;
    buttons->addWidget(m_lesson);
    buttons->addWidget(m_open);
    buttons->addStretch(1);
    buttons->addWidget(m_explore);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(text);
    layout->addLayout(buttons);
    setMinimumWidth(560);
    connect(m_lesson, &QPushButton::clicked, this, [this] {
        accept();
        emit lessonChosen();
    });
    connect(m_open, &QPushButton::clicked, this, [this] {
        accept();
        emit openChosen();
    });
    connect(m_explore, &QPushButton::clicked, this, &QDialog::accept);
}

} // namespace atlas
