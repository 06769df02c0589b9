#include "panels/architecturebox.h"

#include "panels/fieldlabel.h"
#include "train/trainingsetup.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QGridLayout>
#include <QLabel>
#include <QLineEdit>
#include <QRegularExpression>
#include <QRegularExpressionValidator>
#include <QSpinBox>
#include <QToolButton>
#include <QVBoxLayout>

namespace atlas {

namespace {

QSpinBox *spinBox(int low, int high, const QString &special, const QString &tip, QWidget *parent)
{
    auto *s = new QSpinBox(parent);
    s->setRange(low, high);
    s->setValue(low);
    s->setSpecialValueText(special);
    s->setToolTip(tip);
    return s;
}

QDoubleSpinBox *doubleSpinBox(double low, double high, double step, int decimals, const QString &tip, QWidget *parent)
{
    auto *s = new QDoubleSpinBox(parent);
    s->setRange(low, high);
    s->setSingleStep(step);
    s->setDecimals(decimals);
    s->setToolTip(tip);
    return s;
}

QComboBox *comboBox(const std::vector<std::pair<QString, QString>> &items, const QString &tip, QWidget *parent)
{
    auto *c = new QComboBox(parent);
    for (const auto &[text, data] : items)
        c->addItem(text, data);
    c->setToolTip(tip);
    return c;
}

void addSection(QGridLayout *grid, int &row, const QString &text)
{
    auto *label = new QLabel(QStringLiteral("<b>%1</b>").arg(text), grid->parentWidget());
    label->setContentsMargins(0, 4, 0, 0);
    grid->addWidget(label, row++, 0, 1, 2);
}

} // namespace

ArchitectureBox::ArchitectureBox(QWidget *parent)
    : QWidget(parent)
{
    m_header = new QToolButton(this);
    m_header->setObjectName("trainModelHeader");
    m_header->setCheckable(true);
    m_header->setAutoRaise(true);
    m_header->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    m_controls = createControls();
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addWidget(m_header);
    layout->addWidget(m_controls);
    connect(m_header, &QToolButton::toggled, this, &ArchitectureBox::setExpanded);
    setExpanded(false);
    updateEnabled();
    updateHeader();
}

QWidget *ArchitectureBox::createControls()
{
    auto *box = new QWidget(this);
    auto *grid = new QGridLayout(box);
    grid->setContentsMargins(0, 0, 0, 0);
    int row = 0;
    addShapeFields(grid, row);
    addAttentionFields(grid, row);
    addWidthAndLengthFields(grid, row);
    auto *reset = new QToolButton(box);
    reset->setObjectName("trainModelReset");
    reset->setText(tr("The task's model"));
    reset->setToolTip(tr("Every field back to the task's own model"));
    grid->addWidget(reset, row++, 0, 1, 2, Qt::AlignRight);
    grid->setColumnStretch(1, 1);
    grid->setColumnMinimumWidth(0, trainFormLabelWidth(this));
    connect(reset, &QToolButton::clicked, this, [this] { setOptions({}); });

    connectFields();
    return box;
}

void ArchitectureBox::addField(
    QGridLayout *grid, int &row, const std::string &key, const QString &label, QWidget *control)
{
    control->setObjectName(QString::fromStdString("trainModel-" + key));
    m_fields.push_back({key, control, currentText({key, control, {}})});
    grid->addWidget(fieldLabel(label, control), row, 0);
    allowNarrow(control);
    grid->addWidget(control, row++, 1);
}

void ArchitectureBox::addShapeFields(QGridLayout *grid, int &row)
{
    QWidget *box = grid->parentWidget();
    addSection(grid, row, tr("Shape"));
    addField(grid, row, "layers", tr("La&yers"),
        spinBox(0, 256, tr("task's"), tr("Blocks in the stack (the task's own by default)"), box));
    addField(grid, row, "heads", tr("Heads"),
        spinBox(0, 64, tr("task's"), tr("Attention heads a block; d_model must divide by them"), box));
    addField(grid, row, "d-model", tr("d_model"),
        spinBox(0, 1024, tr("task's"),
            tr("The residual stream's width; the feed-forward is 4 × as wide (the Llama layout's SwiGLU 8/3 ×)"), box));
    addField(grid, row, "family", tr("Lay&out"),
        comboBox(
            {{tr("GPT-2"), QString()}, {tr("Llama"), QStringLiteral("llama")}, {tr("BERT"), QStringLiteral("bert")}},
            tr("GPT-2: LayerNorm before each sub-layer, GELU, learned positions (the task's).\n"
               "Llama: RMSNorm, rotate-half RoPE, SwiGLU, no biases, an untied head (lesson 15).\n"
               "BERT: LayerNorm after each sub-layer, segments, exact GELU: a bidirectional task such as mlm"),
            box));
    addField(grid, row, "kv-heads", tr("K/V heads"),
        spinBox(0, 64, tr("one each"),
            tr("Grouped-query attention (Llama layout): this many K/V heads, each shared by a group of query heads"),
            box));
}

void ArchitectureBox::addAttentionFields(QGridLayout *grid, int &row)
{
    QWidget *box = grid->parentWidget();
    addSection(grid, row, tr("Attention"));
    std::vector<std::pair<QString, QString>> positions {{tr("task's"), QString()}};
    for (const std::string &name : positionKindNames())
        positions.emplace_back(QString::fromStdString(name), QString::fromStdString(name));
    addField(grid, row, "positions", tr("Pos&itions"),
        comboBox(positions,
            tr("How the model knows where each token is (lesson 10): added to the embedding (learned, sinusoidal), "
               "rotating queries and keys (rope, rope-half), a bias on every score (alibi, shaw, t5) or nothing"),
            box));
    addField(grid, row, "normaliser", tr("&Normaliser"),
        comboBox({{tr("softmax"), QString()}, {QStringLiteral("sparsemax"), QStringLiteral("sparsemax")},
                     {QStringLiteral("entmax15"), QStringLiteral("entmax15")},
                     {tr("entmax (learned α)"), QStringLiteral("entmax")}},
            tr("What turns scores into weights (lesson 19): sparsemax and entmax give exact zeros; entmax learns an α "
               "per head"),
            box));
    auto *sinkhorn = spinBox(0, 512, tr("off"),
        tr("Sparse Sinkhorn attention: blocks of this many tokens, each attending to itself and one learned, "
           "sorted block (lesson 6)"),
        box);
    sinkhorn->setSuffix(tr(" tokens"));
    addField(grid, row, "sinkhorn", tr("Sinkhorn blocks"), sinkhorn);
    auto *span = spinBox(0, 1024, tr("off"),
        tr("Adaptive attention span (lesson 21): each head learns how far back it reads, behind a mask ramp this "
           "many tokens wide"),
        box);
    span->setSuffix(tr(" ramp"));
    addField(grid, row, "adaptive-span", tr("Adaptive span"), span);
    auto *penalty = doubleSpinBox(0, 10, 0.001, 4, tr("The L1 penalty on the spans: λ · mean span per layer"), box);
    penalty->setValue(TrainingRun {}.spanPenalty);
    addField(grid, row, "span-penalty", tr("Span penalty"), penalty);
    addField(grid, row, "span-init", tr("Span start"),
        doubleSpinBox(0, 1, 0.1, 2,
            tr("Every span starts at this fraction of the context: 0 grows spans from nothing (the paper's), 1 lets "
               "the penalty shrink the spans no head needs"),
            box));
}

// The feed-forward's experts, the sequence's length (funnel, token retention) and the embeddings' scale.
void ArchitectureBox::addWidthAndLengthFields(QGridLayout *grid, int &row)
{
    QWidget *box = grid->parentWidget();
    addSection(grid, row, tr("Feed-forward"));
    addField(grid, row, "experts", tr("E&xperts"),
        spinBox(
            0, 64, tr("dense"), tr("A mixture of this many experts in each feed-forward sub-layer (lesson 11)"), box));
    addField(grid, row, "expert-top-k", tr("Experts a token"),
        spinBox(1, 64, QString(), tr("Each token goes to this many experts (Switch: 1)"), box));
    auto *capacity = doubleSpinBox(0, 16, 0.25, 2,
        tr("Room for this factor × tokens / experts in each expert; the tokens beyond are dropped"), box);
    capacity->setSpecialValueText(tr("1.25 (default)"));
    addField(grid, row, "capacity-factor", tr("Capacity factor"), capacity);

    addSection(grid, row, tr("Sequence length"));
    auto *funnel = new QLineEdit(box);
    funnel->setPlaceholderText(tr("off, or groups: 2,2"));
    funnel->setValidator(new QRegularExpressionValidator(QRegularExpression("[0-9]*(,[0-9]*)*"), funnel));
    funnel->setToolTip(
        tr("Funnel-Transformer (lesson 22): groups of this many layers, the sequence pooled by 2 between "
           "groups, then full-length layers after upsampling"));
    addField(grid, row, "funnel", tr("&Funnel groups"), funnel);
    addField(grid, row, "funnel-decoder", tr("Funnel decoder"),
        spinBox(1, 64, QString(), tr("The funnel's full-length layers after upsampling"), box));
    auto *retention = doubleSpinBox(0, 1, 0.05, 2,
        tr("PoWER-BERT (lesson 22): keep this fraction of the tokens after each layer, by significance, while "
           "training"),
        box);
    retention->setSpecialValueText(tr("off"));
    addField(grid, row, "token-retention", tr("Token retention"), retention);

    addSection(grid, row, tr("Embeddings"));
    auto *scale = new QCheckBox(tr("Scale by √d_model"), box);
    scale->setToolTip(tr("Multiply the token embeddings by √d_model, as Vaswani et al."));
    addField(grid, row, "scale-embeddings", tr("Embeddings"), scale);
}

// Any change: the dependent fields, the header and the panel follow.
void ArchitectureBox::connectFields()
{
    const auto follow = [this] {
        updateEnabled();
        updateHeader();
        emit changed();
    };
    for (const Field &f : m_fields) {
        QWidget *w = f.control;
        if (auto *s = qobject_cast<QSpinBox *>(w))
            connect(s, &QSpinBox::valueChanged, this, follow);
        else if (auto *d = qobject_cast<QDoubleSpinBox *>(w))
            connect(d, &QDoubleSpinBox::valueChanged, this, follow);
        else if (auto *c = qobject_cast<QComboBox *>(w))
            connect(c, &QComboBox::currentIndexChanged, this, follow);
        else if (auto *b = qobject_cast<QCheckBox *>(w))
            connect(b, &QCheckBox::toggled, this, follow);
        else if (auto *e = qobject_cast<QLineEdit *>(w))
            connect(e, &QLineEdit::textChanged, this, follow);
    }
}

QString ArchitectureBox::currentText(const Field &field) const
{
    QWidget *w = field.control;
    if (auto *s = qobject_cast<QSpinBox *>(w))
        return QString::number(s->value());
    if (auto *d = qobject_cast<QDoubleSpinBox *>(w))
        return QString::number(d->value(), 'g', 6);
    if (auto *c = qobject_cast<QComboBox *>(w))
        return c->currentData().toString();
    if (auto *b = qobject_cast<QCheckBox *>(w))
        return b->isChecked() ? QStringLiteral("true") : QStringLiteral("false");
    if (auto *e = qobject_cast<QLineEdit *>(w))
        return e->text().remove(' ');
    return {};
}

void ArchitectureBox::setText(const Field &field, const QString &text)
{
    QWidget *w = field.control;
    bool ok = false;
    if (auto *s = qobject_cast<QSpinBox *>(w)) {
        if (const int v = text.toInt(&ok); ok)
            s->setValue(v);
    } else if (auto *d = qobject_cast<QDoubleSpinBox *>(w)) {
        if (const double v = text.toDouble(&ok); ok)
            d->setValue(v);
    } else if (auto *c = qobject_cast<QComboBox *>(w)) {
        if (const int i = c->findData(text == QLatin1String("gpt2") ? QString() : text); i >= 0)
            c->setCurrentIndex(i);
    } else if (auto *b = qobject_cast<QCheckBox *>(w)) {
        b->setChecked(text != QLatin1String("false"));
    } else if (auto *e = qobject_cast<QLineEdit *>(w)) {
        e->setText(text);
    }
}

void ArchitectureBox::setTaskShape(const ModelConfig &shape)
{
    for (const Field &f : m_fields) {
        auto *s = qobject_cast<QSpinBox *>(f.control);
        const int own = f.key == "layers" ? shape.layers
            : f.key == "heads"            ? shape.heads
            : f.key == "d-model"          ? shape.dModel
                                          : 0;
        if (s && own > 0)
            s->setSpecialValueText(tr("task's (%1)").arg(own));
        if (auto *c = qobject_cast<QComboBox *>(f.control); c && f.key == "positions")
            c->setItemData(0, tr("The task's own: %1").arg(QString::fromStdString(positionKindName(shape.positions))),
                Qt::ToolTipRole);
    }
}

ArchitectureBox::Options ArchitectureBox::options() const
{
    Options out;
    for (const Field &f : m_fields)
        if (f.control->isEnabled())
            if (const QString text = currentText(f); text != f.defaultText && !text.isEmpty())
                out.emplace_back(f.key, text.toStdString());
    return out;
}

void ArchitectureBox::setOptions(const Options &options)
{
    QSignalBlocker blocker(this); // one changed() for the whole list
    for (const Field &f : m_fields)
        setText(f, f.defaultText);
    for (const auto &[key, value] : options)
        for (const Field &f : m_fields)
            if (f.key == key)
                setText(f, QString::fromStdString(value));
    updateEnabled();
    updateHeader();
    blocker.unblock();
    emit changed();
}

QString ArchitectureBox::optionsText(const Options &options)
{
    QStringList words;
    for (const auto &[key, value] : options)
        words << QString::fromStdString(key + "=" + value);
    return words.join(' ');
}

ArchitectureBox::Options ArchitectureBox::parseOptionsText(const QString &text)
{
    Options out;
    for (const QString &word : text.split(' ', Qt::SkipEmptyParts)) {
        const qsizetype eq = word.indexOf('=');
        out.emplace_back(word.left(eq < 0 ? word.size() : eq).toStdString(),
            eq < 0 ? std::string() : word.mid(eq + 1).toStdString());
    }
    return out;
}

// An option that only tunes another is off while that one is.
void ArchitectureBox::updateEnabled()
{
    const auto value = [this](const std::string &key) {
        for (const Field &f : m_fields)
            if (f.key == key)
                return currentText(f);
        return QString();
    };
    const auto enable = [this](const std::string &key, bool on) {
        for (const Field &f : m_fields)
            if (f.key == key)
                f.control->setEnabled(on);
    };
    enable("kv-heads", value("family") == QLatin1String("llama"));
    enable("span-penalty", value("adaptive-span") != QLatin1String("0"));
    enable("span-init", value("adaptive-span") != QLatin1String("0"));
    enable("expert-top-k", value("experts") != QLatin1String("0"));
    enable("capacity-factor", value("experts") != QLatin1String("0"));
    enable("funnel-decoder", !value("funnel").isEmpty());
}

void ArchitectureBox::updateHeader()
{
    const Options changes = options();
    m_header->setText(changes.empty() ? tr("Model: the task's own")
            : changes.size() == 1     ? tr("Model: 1 change")
                                      : tr("Model: %1 changes").arg(changes.size()));
    m_header->setToolTip(changes.empty()
            ? tr("Change the task's model: shape, layout, positions, normaliser, experts, funnel … (as `train`'s "
                 "options)")
            : tr("The task's model with %1 (as `train --%2`)")
                  .arg(optionsText(changes), optionsText(changes).replace(' ', QStringLiteral(" --"))));
}

bool ArchitectureBox::expanded() const
{
    return m_header->isChecked();
}

void ArchitectureBox::setExpanded(bool expanded)
{
    m_header->setChecked(expanded);
    m_header->setArrowType(expanded ? Qt::DownArrow : Qt::RightArrow);
    m_controls->setVisible(expanded);
}

} // namespace atlas
