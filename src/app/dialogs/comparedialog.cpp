#include "dialogs/comparedialog.h"

#include "attention/attentionkernel.h"
#include "model/builtinmodels.h"
#include "util/commalist.h"
#include "view/comparison.h"
#include "view/viewkinds.h"
#include "views/palette.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>

#include <algorithm>

namespace atlas {

CompareDialog::CompareDialog(const ViewSpec &spec, QWidget *parent)
    : QDialog(parent)
    , m_spec(spec)
    , m_useModel(new QCheckBox(tr("Another &model:"), this))
    , m_useText(new QCheckBox(tr("Another &text:"), this))
    , m_useAttention(new QCheckBox(tr("Another &attention kernel:"), this))
    , m_model(new QComboBox(this))
    , m_attention(new QComboBox(this))
    , m_mode(new QComboBox(this))
    , m_text(new QLineEdit(this))
    , m_params(new QLineEdit(this))
    , m_error(new QLabel(this))
{
    setWindowTitle(tr("Compare Two Runs"));
    auto *intro = new QLabel(
        tr("Run A is the model and input on screen. Run B is the same with what you tick here "
           "changed. Both are drawn by the current view, with the same layer, head and position, or compared "
           "head by head."),
        this);
    intro->setWordWrap(true);

    m_model->setEditable(true); // a model directory or a GGUF file may be typed
    for (const BuiltinModel &model : builtinModels())
        m_model->addItem(QString::fromStdString(model.name));
    m_model->setToolTip(tr("A built-in model, or the path of a model directory or a GGUF file"));
    const std::string model
        = spec.compareModel.empty() ? (spec.model == "reverse" ? "reverse-rope" : spec.model) : spec.compareModel;
    m_model->setCurrentText(QString::fromStdString(model));
    m_useModel->setChecked(!spec.compareModel.empty());

    m_text->setText(QString::fromStdString(spec.compareText.empty() ? spec.text : spec.compareText));
    m_text->setToolTip(tr("Run B's input text; for A \u2212 B it must split into as many tokens as A's"));
    m_useText->setChecked(!spec.compareText.empty());

    for (const std::string &kind : attention::attentionKernelKinds())
        m_attention->addItem(QString::fromStdString(kind));
    m_attention->setCurrentText(QString::fromStdString(spec.compareAttention.empty() ? "lsh" : spec.compareAttention));
    m_params->setPlaceholderText(tr("e.g. window=4 (empty: defaults)"));
    m_params->setText(QString::fromStdString(joinedCommaList(spec.compareAttentionParams)));
    m_useAttention->setChecked(!spec.compareAttention.empty());

    const ViewKind *kind = findViewKind(spec.view);
    m_mode->addItem(tr("Side by side"), QStringLiteral("side"));
    if (kind && kind->drawsDifference)
        m_mode->addItem(tr("Difference A \u2212 B"), QStringLiteral("difference"));
    m_mode->addItem(tr("Every head and the next token"), QStringLiteral("heads"));
    m_mode->setToolTip(tr("Side by side: the view for each run. Difference: the attention's A \u2212 B. Every head: "
                          "how far B's attention is from A's in each layer and head, and how B's next-token "
                          "distributions differ from A's (two runs of one length and one model shape, such as a "
                          "GGUF file and its quantized copy)"));
    m_mode->setCurrentIndex(std::max(0, m_mode->findData(QString::fromStdString(spec.compare))));

    auto *browse = new QPushButton(tr("&Browse\u2026"), this);
    browse->setToolTip(tr("Choose a GGUF file for run B"));
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString file = QFileDialog::getOpenFileName(
            this, tr("Run B's GGUF model file"), QString(), tr("GGUF models (*.gguf);;All files (*)"));
        if (!file.isEmpty())
            m_model->setCurrentText(file);
    });
    auto *modelRow = new QHBoxLayout;
    modelRow->addWidget(m_model, 1);
    modelRow->addWidget(browse);

    auto *form = new QFormLayout;
    form->addRow(m_useModel, modelRow);
    form->addRow(m_useText, m_text);
    auto *attentionRow = new QHBoxLayout;
    attentionRow->addWidget(m_attention);
    attentionRow->addWidget(m_params, 1);
    form->addRow(m_useAttention, attentionRow);
    form->addRow(tr("Show:"), m_mode);

    m_error->setWordWrap(true);
    m_error->setStyleSheet(QStringLiteral("color: %1").arg(palette::alert.name()));
    m_error->hide();
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(intro);
    layout->addLayout(form);
    layout->addWidget(m_error);
    layout->addWidget(buttons);
    resize(640, sizeHint().height());

    // Typing in a field ticks its box.
    connect(m_model, &QComboBox::currentTextChanged, m_useModel, [this] { m_useModel->setChecked(true); });
    connect(m_text, &QLineEdit::textEdited, m_useText, [this] { m_useText->setChecked(true); });
    connect(m_attention, &QComboBox::activated, m_useAttention, [this] { m_useAttention->setChecked(true); });
    connect(m_params, &QLineEdit::textEdited, m_useAttention, [this] { m_useAttention->setChecked(true); });
}

ViewSpec CompareDialog::chosen() const
{
    ViewSpec spec = sideSpec(m_spec, Side::A);
    spec.compare = m_mode->currentData().toString().toStdString();
    if (m_useModel->isChecked())
        spec.compareModel = m_model->currentText().trimmed().toStdString();
    if (m_useText->isChecked())
        spec.compareText = m_text->text().toStdString();
    if (m_useAttention->isChecked()) {
        spec.compareAttention = m_attention->currentText().toStdString();
        spec.compareAttentionParams = splitCommaList(m_params->text().toStdString());
    }
    return spec;
}

void CompareDialog::accept()
{
    const ViewSpec spec = chosen();
    // The same checks as a pasted spec's: the JSON round trip runs the parser's rules on every key.
    try {
        m_spec = ViewSpec::fromJson(spec.toJson(), tr("the comparison").toStdString());
    } catch (const std::exception &e) {
        m_error->setText(QString::fromStdString(e.what()));
        m_error->show();
        return;
    }
    QDialog::accept();
}

} // namespace atlas
