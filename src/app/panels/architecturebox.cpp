#include "panels/architecturebox.h"

#include "panels/fieldlabel.h"
#include "panels/trainingoptionfield.h"
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

#include <algorithm>

namespace atlas {

namespace {

// A field of the option `key`, its range and tooltip from the option table, starting at `special`: a value below
// the range ("task's", "off": the option not given), or the range's lowest ("dense": no experts), or none.
enum class Special { Below, Lowest };
QSpinBox *spinBox(const std::string &key, const QString &special, QWidget *parent, Special at = Special::Below)
{
    auto *s = new QSpinBox(parent);
    setTrainingOptionRange(s, key, special.isEmpty() || at == Special::Lowest ? 0 : 1);
    s->setValue(s->minimum());
    s->setSpecialValueText(special);
    return s;
}

QDoubleSpinBox *doubleSpinBox(const std::string &key, double step, int decimals, bool off, QWidget *parent)
{
    auto *s = new QDoubleSpinBox(parent);
    setTrainingOptionRange(s, key, decimals, off);
    s->setSingleStep(step);
    return s;
}

QComboBox *comboBox(const std::string &key, const std::vector<std::pair<QString, QString>> &items, QWidget *parent)
{
    auto *c = new QComboBox(parent);
    for (const auto &[text, data] : items)
        c->addItem(text, data);
    c->setToolTip(trainingOptionTip(key));
    return c;
}

QLabel *addSection(QGridLayout *grid, int &row, const QString &text)
{
    auto *label = new QLabel(QStringLiteral("<b>%1</b>").arg(text), grid->parentWidget());
    label->setContentsMargins(0, 4, 0, 0);
    grid->addWidget(label, row++, 0, 1, 2);
    return label;
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
    QLabel *name = fieldLabel(label, control);
    grid->addWidget(name, row, 0);
    if (key != "from")
        m_layoutRows.insert(m_layoutRows.end(), {name, control});
    allowNarrow(control);
    grid->addWidget(control, row++, 1);
}

void ArchitectureBox::addShapeFields(QGridLayout *grid, int &row)
{
    QWidget *box = grid->parentWidget();
    addSection(grid, row, tr("Weights")); // the one section a fine-tuning run shows
    addField(grid, row, "from", tr("Start &from"), comboBox("from", {{tr("random weights"), QString()}}, box));
    m_layoutRows.push_back(addSection(grid, row, tr("Shape")));
    addField(grid, row, "layers", tr("La&yers"), spinBox("layers", tr("task's"), box));
    addField(grid, row, "heads", tr("Heads"), spinBox("heads", tr("task's"), box));
    addField(grid, row, "d-model", tr("d_model"), spinBox("d-model", tr("task's"), box));
    addField(grid, row, "context", tr("Context"), spinBox("context", tr("task's"), box));
    addField(grid, row, "family", tr("Lay&out"),
        comboBox("family",
            {{tr("GPT-2"), QString()}, {tr("Llama"), QStringLiteral("llama")}, {tr("Qwen3"), QStringLiteral("qwen3")},
                {tr("OLMo 2"), QStringLiteral("olmo2")}, {tr("Gemma 2"), QStringLiteral("gemma2")},
                {tr("SmolLM3"), QStringLiteral("smollm3")}, {tr("Phi-3"), QStringLiteral("phi3")},
                {tr("gpt-oss"), QStringLiteral("gpt_oss")}, {tr("BERT"), QStringLiteral("bert")}},
            box));
    addField(grid, row, "kv-heads", tr("K/V heads"), spinBox("kv-heads", tr("one each"), box));
}

void ArchitectureBox::addAttentionFields(QGridLayout *grid, int &row)
{
    QWidget *box = grid->parentWidget();
    m_layoutRows.push_back(addSection(grid, row, tr("Attention")));
    std::vector<std::pair<QString, QString>> positions {{tr("task's"), QString()}};
    for (const std::string &name : positionKindNames())
        positions.emplace_back(QString::fromStdString(name), QString::fromStdString(name));
    addField(grid, row, "positions", tr("Pos&itions"), comboBox("positions", positions, box));
    addField(grid, row, "normaliser", tr("&Normaliser"),
        comboBox("normaliser",
            {{tr("softmax"), QString()}, {QStringLiteral("sparsemax"), QStringLiteral("sparsemax")},
                {QStringLiteral("entmax15"), QStringLiteral("entmax15")},
                {tr("entmax (learned α)"), QStringLiteral("entmax")}},
            box));
    auto *sinkhorn = spinBox("sinkhorn", tr("off"), box);
    sinkhorn->setSuffix(tr(" tokens"));
    addField(grid, row, "sinkhorn", tr("Sinkhorn blocks"), sinkhorn);
    auto *fourier = new QLineEdit(box);
    fourier->setPlaceholderText(tr("off, all, or layers: 0,1"));
    fourier->setValidator(new QRegularExpressionValidator(QRegularExpression("all|[0-9]*(,[0-9]*)*"), fourier));
    fourier->setToolTip(trainingOptionTip("fourier"));
    addField(grid, row, "fourier", tr("Fourier (FNet)"), fourier);
    auto *span = spinBox("adaptive-span", tr("off"), box);
    span->setSuffix(tr(" ramp"));
    addField(grid, row, "adaptive-span", tr("Adaptive span"), span);
    auto *penalty = doubleSpinBox("span-penalty", 0.001, 4, false, box);
    penalty->setValue(TrainingRun {}.spanPenalty);
    addField(grid, row, "span-penalty", tr("Span penalty"), penalty);
    addField(grid, row, "span-init", tr("Span start"), doubleSpinBox("span-init", 0.1, 2, false, box));
}

// The feed-forward's experts, the sequence's length (funnel, token retention), the depth each token runs (adaptive
// computation time) and the embeddings' scale.
void ArchitectureBox::addWidthAndLengthFields(QGridLayout *grid, int &row)
{
    QWidget *box = grid->parentWidget();
    m_layoutRows.push_back(addSection(grid, row, tr("Feed-forward")));
    addField(grid, row, "experts", tr("E&xperts"), spinBox("experts", tr("dense"), box, Special::Lowest));
    addField(grid, row, "expert-top-k", tr("Experts a token"), spinBox("expert-top-k", QString(), box));
    auto *capacity = doubleSpinBox("capacity-factor", 0.25, 2, true, box);
    capacity->setSpecialValueText(tr("1.25 (default)"));
    addField(grid, row, "capacity-factor", tr("Capacity factor"), capacity);

    m_layoutRows.push_back(addSection(grid, row, tr("Sequence length")));
    auto *funnel = new QLineEdit(box);
    funnel->setPlaceholderText(tr("off, or groups: 2,2"));
    funnel->setValidator(new QRegularExpressionValidator(QRegularExpression("[0-9]*(,[0-9]*)*"), funnel));
    funnel->setToolTip(trainingOptionTip("funnel"));
    addField(grid, row, "funnel", tr("&Funnel groups"), funnel);
    addField(grid, row, "funnel-decoder", tr("Funnel decoder"), spinBox("funnel-decoder", QString(), box));
    auto *retention = doubleSpinBox("token-retention", 0.05, 2, true, box);
    retention->setSpecialValueText(tr("off"));
    addField(grid, row, "token-retention", tr("Token retention"), retention);

    m_layoutRows.push_back(addSection(grid, row, tr("Depth")));
    auto *act = new QCheckBox(tr("Halt each token (ACT)"), box);
    act->setToolTip(trainingOptionTip("act"));
    addField(grid, row, "act", tr("Adaptive depth"), act);
    auto *shared = new QCheckBox(tr("One block at every layer"), box);
    shared->setToolTip(trainingOptionTip("shared-blocks"));
    addField(grid, row, "shared-blocks", tr("Shared blocks"), shared);
    auto *timestep = new QCheckBox(tr("Add the step's signal"), box);
    timestep->setToolTip(trainingOptionTip("timestep-signal"));
    addField(grid, row, "timestep-signal", tr("Step signal"), timestep);
    auto *ponder = doubleSpinBox("ponder-cost", 0.001, 4, false, box);
    ponder->setValue(TrainingRun {}.actPonderCost);
    addField(grid, row, "ponder-cost", tr("Ponder cost"), ponder);

    m_layoutRows.push_back(addSection(grid, row, tr("Embeddings")));
    auto *scale = new QCheckBox(tr("Scale by √d_model"), box);
    scale->setToolTip(trainingOptionTip("scale-embeddings"));
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
        if (field.key == "from" && !text.isEmpty() && c->findData(text) < 0) // a directory, or a model listed later
            c->addItem(text, text);
        if (const int i = c->findData(text == QLatin1String("gpt2") ? QString() : text); i >= 0)
            c->setCurrentIndex(i);
    } else if (auto *b = qobject_cast<QCheckBox *>(w)) {
        b->setChecked(text != QLatin1String("false"));
    } else if (auto *e = qobject_cast<QLineEdit *>(w)) {
        e->setText(text);
    }
}

void ArchitectureBox::setTaskShape(const ModelConfig &shape, bool takesContext)
{
    m_takesContext = takesContext;
    for (const Field &f : m_fields) {
        auto *s = qobject_cast<QSpinBox *>(f.control);
        if (s && f.key == "context" && !takesContext)
            s->setValue(s->minimum());
        const int own = f.key == "layers" ? shape.layers
            : f.key == "heads"            ? shape.heads
            : f.key == "d-model"          ? shape.dModel
            : f.key == "context"          ? shape.context
                                          : 0;
        if (s && own > 0)
            s->setSpecialValueText(tr("task's (%1)").arg(own));
        if (auto *c = qobject_cast<QComboBox *>(f.control); c && f.key == "positions")
            c->setItemData(0, tr("The task's own: %1").arg(QString::fromStdString(positionKindName(shape.positions))),
                Qt::ToolTipRole);
    }
    updateEnabled();
}

QComboBox *ArchitectureBox::startingModelBox() const
{
    for (const Field &f : m_fields)
        if (f.key == "from")
            return qobject_cast<QComboBox *>(f.control);
    return nullptr;
}

QString ArchitectureBox::startingModel() const
{
    return startingModelBox()->currentData().toString();
}

// The choice kept when the new list has it; a lesson's model that is not a built-in one (a directory) stays listed.
void ArchitectureBox::setStartingModels(const std::vector<std::string> &names)
{
    QComboBox *box = startingModelBox();
    const QString current = startingModel();
    QSignalBlocker blocker(box);
    while (box->count() > 1)
        box->removeItem(1);
    for (const std::string &name : names)
        box->addItem(QString::fromStdString(name), QString::fromStdString(name));
    box->setCurrentIndex(std::max(0, box->findData(current)));
    blocker.unblock();
    updateEnabled();
    updateHeader();
    if (startingModel() != current)
        emit changed();
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

// An option that only sets up another is off while that one is (its `needs`, train/trainingrunoptions.h): "experts"
// must be given, "family=llama" must have that value.
// A model to start from fixes every other field (the run refuses them), and the context is for a task of windows.
void ArchitectureBox::updateEnabled()
{
    const auto field = [this](const std::string &key) -> const Field * {
        for (const Field &f : m_fields)
            if (f.key == key)
                return &f;
        return nullptr;
    };
    const bool fineTuning = !startingModel().isEmpty();
    for (QWidget *w : m_layoutRows) // the start model's layout is the run's: nothing to change
        w->setVisible(!fineTuning);
    for (const Field &f : m_fields) {
        if (f.key != "from")
            f.control->setEnabled(!fineTuning && (f.key != "context" || m_takesContext));
        if (fineTuning)
            continue;
        const TrainingRunOption &option = trainingOption(f.key);
        const std::string &needs = option.needs;
        if (needs.empty())
            continue;
        const size_t eq = needs.find('=');
        const Field *other = field(needs.substr(0, eq));
        const QString now = other ? currentText(*other) : QString();
        f.control->setEnabled(eq != std::string::npos ? neededValueAccepts(option, now.toStdString())
                                                      : other && now != other->defaultText && !now.isEmpty());
    }
}

void ArchitectureBox::updateHeader()
{
    const Options changes = options();
    if (const QString from = startingModel(); !from.isEmpty()) {
        m_header->setText(tr("Model: fine-tuned from %1").arg(from));
        m_header->setToolTip(
            tr("The run starts from %1's weights, its shape and layout (as `train --from %1`)").arg(from));
        return;
    }
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
