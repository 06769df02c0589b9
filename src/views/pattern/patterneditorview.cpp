#include "pattern/patterneditorview.h"

#include "pattern/pattern.h"

#include "trace/names.h"
#include "util/commalist.h"

#include "attention/patternparams.h"
#include "model/model.h"
#include "util/error.h"
#include "views/heatmapplot.h"
#include "views/patternparamlabels.h"
#include "views/tokenchipstrip.h"
#include "views/viewfonts.h"

#include <QComboBox>
#include <QGridLayout>
#include <QLabel>
#include <QLineEdit>
#include <QScrollArea>
#include <QScrollBar>
#include <QSlider>
#include <QSpinBox>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

namespace atlas {

namespace {

using attention::AttentionKernelSpec;
using attention::PatternSummary;

QString grouped(int64_t n)
{
    QString digits = QString::number(n);
    for (int at = digits.size() - 3; at > (n < 0 ? 1 : 0); at -= 3)
        digits.insert(at, ',');
    return digits;
}

QString compact(double n)
{
    static const char *units[] = {"", " k", " M", " G", " T"};
    int u = 0;
    for (; std::abs(n) >= 1000 && u < 4; ++u)
        n /= 1000;
    return formatNumber(u == 0 ? std::round(n) : n, 3) + units[u];
}

} // namespace

PatternEditorView::PatternEditorView(QWidget *parent)
    : View(parent)
    , m_plot(new HeatmapPlot(this))
{
    m_strip = new TokenChipStrip(TokenChipStrip::Layout::Row);
    m_stripArea = new QScrollArea(this);
    m_stripArea->setWidget(m_strip);
    m_stripArea->setWidgetResizable(false);
    m_stripArea->setFrameShape(QFrame::NoFrame);
    m_stripArea->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_stripArea->setFixedHeight(m_strip->sizeHint().height() + 16);
    m_stripArea->setToolTip(tr("The input's tokens: click one to make it global (Longformer)"));
    m_plot->setHoverText([this](int row, int col) { return hoverText(row, col); });

    auto *right = new QVBoxLayout;
    right->addWidget(m_stripArea);
    right->addWidget(m_plot, 1);
    auto *layout = new QHBoxLayout(this);
    // The controls scroll when the view is short (a projector at a large zoom); the pattern keeps the rest.
    auto *controls = new QScrollArea(this);
    controls->setWidget(buildControls());
    controls->setWidgetResizable(true);
    controls->setFrameShape(QFrame::NoFrame);
    controls->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_controls = controls;
    layout->addWidget(controls);
    layout->addLayout(right, 1);
    connect(m_strip, &TokenChipStrip::chipClicked, this, &PatternEditorView::toggleGlobal);
}

QWidget *PatternEditorView::buildControls()
{
    auto *panel = new QWidget(this);
    auto *grid = new QGridLayout(panel);
    grid->setContentsMargins(0, 0, 0, 0);
    m_kind = new QComboBox(panel);
    for (const std::string &kind : kinds())
        m_kind->addItem(QString::fromStdString(kind));
    m_kind->setToolTip(tr("The fixed sparse pattern: BigBird (window, global and random blocks), Longformer "
                          "(sliding, dilated window and global tokens), the Sparse Transformer's strided and fixed, "
                          "Swin's windows (shifted in every other layer)"));
    connect(m_kind, &QComboBox::activated, this, &PatternEditorView::kindChosen);
    grid->addWidget(new QLabel(tr("Pattern"), panel), 0, 0);
    grid->addWidget(m_kind, 0, 1, 1, 2);
    for (const PatternParamInfo &info : patternParamInfo())
        addParam(info.key, tr(info.label), tr(info.tip));
    m_globalRow = new QLabel(tr("Global"), panel);
    m_globalEdit = new QLineEdit(panel);
    m_globalEdit->setPlaceholderText(tr("positions, e.g. 0, 5, 9"));
    m_globalEdit->setToolTip(tr("Longformer's global tokens: they attend every key and every query attends them. "
                                "Click the token chips, or type positions and press Enter"));
    connect(m_globalEdit, &QLineEdit::editingFinished, this, &PatternEditorView::globalsTyped);
    const int row = grid->rowCount();
    grid->addWidget(m_globalRow, row, 0);
    grid->addWidget(m_globalEdit, row, 1, 1, 2);
    m_readout = new QLabel(panel);
    m_readout->setWordWrap(true);
    m_readout->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_readout->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    grid->addWidget(m_readout, row + 1, 0, 1, 3);
    auto *hint = new QLabel(tr("Every edit runs the model again with this pattern in every layer (the toolbar's "
                               "Attention box shows it), so the other tabs show what it does."),
        panel);
    hint->setWordWrap(true);
    hint->setForegroundRole(QPalette::PlaceholderText);
    grid->addWidget(hint, row + 2, 0, 1, 3);
    grid->setRowStretch(row + 3, 1);
    grid->setColumnStretch(1, 1);
    return panel;
}

void PatternEditorView::addParam(const std::string &key, const QString &label, const QString &tip)
{
    auto *grid = static_cast<QGridLayout *>(m_kind->parentWidget()->layout());
    Param p {new QLabel(label), new QSlider(Qt::Horizontal), new QSpinBox};
    for (QWidget *w :
        {static_cast<QWidget *>(p.label), static_cast<QWidget *>(p.slider), static_cast<QWidget *>(p.spin)})
        w->setToolTip(tip);
    p.spin->setKeyboardTracking(false);
    const int row = grid->rowCount();
    grid->addWidget(p.label, row, 0);
    grid->addWidget(p.slider, row, 1);
    grid->addWidget(p.spin, row, 2);
    connect(p.slider, &QSlider::valueChanged, this, [this, key](int v) { paramEdited(key, v); });
    connect(p.spin, &QSpinBox::valueChanged, this, [this, key](int v) { paramEdited(key, v); });
    m_params.emplace(key, p);
}

const std::vector<std::string> &PatternEditorView::kinds()
{
    static const std::vector<std::string> list = [] {
        std::vector<std::string> fixed;
        for (const attention::AttentionKernelKind &k : attention::attentionKernels())
            if (k.fixedPattern)
                fixed.push_back(k.kind);
        return fixed;
    }();
    return list;
}

std::vector<std::string> PatternEditorView::editedParams() const
{
    const AttentionKernelSpec spec = editedSpec();
    std::vector<std::string> params;
    for (const std::string &key : attention::patternParamKeys(spec.kind))
        params.push_back(key + "=" + spec.params.at(key));
    if (spec.params.count("global"))
        params.push_back("global=" + spec.params.at("global"));
    return params;
}

AttentionKernelSpec PatternEditorView::editedSpec() const
{
    AttentionKernelSpec spec {m_editedKind, {}};
    for (const std::string &key : attention::patternParamKeys(m_editedKind))
        spec.params[key] = std::to_string(m_values.count(key) ? m_values.at(key) : 1);
    std::string globals;
    for (int g : m_globals) {
        if (!globals.empty())
            globals += ',';
        globals += std::to_string(g);
    }
    if (!globals.empty())
        spec.params["global"] = globals;
    return spec;
}

QSlider *PatternEditorView::slider(const std::string &key) const
{
    return m_params.at(key).slider;
}

QSpinBox *PatternEditorView::spinBox(const std::string &key) const
{
    return m_params.at(key).spin;
}

void PatternEditorView::refresh()
{
    // About 42 characters of the current font: the readout's formulas fit, at any zoom.
    m_controls->setFixedWidth(
        fontMetrics().averageCharWidth() * 42 + m_controls->verticalScrollBar()->sizeHint().width());
    layOutHidden(this);
    m_message.clear();
    const auto *q = m_input.trace ? m_input.trace->find(names::layerTensor(m_spec.layer, "attn.q")) : nullptr;
    m_dHead = q && q->tensor.shape().size() == 3 ? int(q->tensor.shape()[2]) : 64;
    if (length() == 0) {
        showProblem(tr("No input yet: type some text in the Input box."));
        return;
    }
    adoptSpec();
    syncControls();
    if (!m_message.isEmpty()) {
        showProblem(m_message);
        return;
    }
    adoptAnalysis();
}

void PatternEditorView::adoptSpec()
{
    if (attention::hasFixedPattern(m_spec.attention)) {
        try {
            setEdited(attention::parseAttentionKernelSpec(m_spec.attention, m_spec.attentionParams));
            m_fromSpec = true;
        } catch (const Error &e) {
            m_message = QString::fromStdString(e.what());
        }
        return;
    }
    // The spec runs another kernel: show the layer's own sliding window if it has one, else the suggestion for this
    // length (the analysis draws the same), until the user edits it.
    const int window = ownWindow();
    if (m_fromSpec || m_suggestedFor != length() || m_suggestedWindow != window) {
        setEdited(window > 0 ? attention::slidingWindowPattern(window)
                             : attention::suggestedPatternSpec("longformer", length()));
        m_fromSpec = false;
        m_suggestedFor = length();
        m_suggestedWindow = window;
    }
}

int PatternEditorView::ownWindow() const
{
    const ModelConfig *c = m_input.model ? &m_input.model->config : nullptr;
    return c && c->causal && c->windowed(m_spec.layer) ? c->slidingWindow : 0;
}

void PatternEditorView::setEdited(const AttentionKernelSpec &spec)
{
    m_editedKind = spec.kind;
    m_values = attention::patternIntegerParams(spec, m_globals);
}

void PatternEditorView::syncControls()
{
    const int T = std::max(1, length());
    const QSignalBlocker blockKind(m_kind);
    m_kind->setCurrentText(QString::fromStdString(m_editedKind));
    const std::vector<std::string> keys = attention::patternParamKeys(m_editedKind);
    for (auto &[key, p] : m_params) {
        const bool used = std::find(keys.begin(), keys.end(), key) != keys.end();
        for (QWidget *w :
            {static_cast<QWidget *>(p.label), static_cast<QWidget *>(p.slider), static_cast<QWidget *>(p.spin)})
            w->setVisible(used);
        if (!used)
            continue;
        const QSignalBlocker b1(p.slider), b2(p.spin);
        const int value = m_values[key];
        const auto [lo, hi] = attention::patternParamRange(m_editedKind, key, T, m_values);
        p.slider->setRange(std::min(lo, value), std::max(hi, value));
        p.spin->setRange(std::min(lo, value), std::max(hi, value));
        p.slider->setPageStep(std::max(1, (hi - lo) / 16));
        p.slider->setValue(value);
        p.spin->setValue(value);
        p.spin->setSingleStep(key == "window_blocks" ? 2 : 1);
    }
    const attention::AttentionKernelKind &kernel = attention::attentionKernel(m_editedKind);
    const bool pickGlobals = kernel.globalPositions; // Longformer: global tokens by position
    const bool globalBlocks = m_values.contains("global_blocks"); // BigBird: the first blocks are global
    m_globalRow->setVisible(pickGlobals);
    m_globalEdit->setVisible(pickGlobals);
    QStringList globals;
    for (int g : m_globals)
        globals << QString::number(g);
    if (!m_globalEdit->hasFocus())
        m_globalEdit->setText(globals.join(", "));

    const QStringList labels = tokenLabels(m_input, length());
    m_strip->setTokens(labels, {}, m_input.padding);
    std::vector<int> shown = pickGlobals ? m_globals : std::vector<int> {};
    if (globalBlocks)
        for (int t = 0; t < std::min(T, m_values["global_blocks"] * m_values["block"]); ++t)
            shown.push_back(t);
    m_strip->setHighlighted(shown);
    m_strip->setClickHint(pickGlobals,
        pickGlobals        ? tr("Click to toggle it global")
            : globalBlocks ? tr("%1's global tokens are its first global blocks (see Global blocks)")
                                 .arg(QString::fromStdString(kernel.title))
                           : tr("%1 has no global tokens to pick").arg(QString::fromStdString(kernel.title)));
}

void PatternEditorView::paramEdited(const std::string &key, int value)
{
    if (key == "window_blocks" && value > 0 && value % 2 == 0) { // odd (own block and as many each side), or 0
        const int before = m_values[key];
        value = before == 0 && value == 2 ? 1 : value + (value > before ? 1 : -1);
    }
    m_values[key] = key == "window_blocks" ? std::max(0, value) : value;
    if (key == "stride" && m_values.count("summary"))
        m_values["summary"] = std::min(m_values["summary"], m_values["stride"]);
    userEdited();
}

void PatternEditorView::kindChosen(int index)
{
    setEdited(attention::suggestedPatternSpec(kinds()[size_t(index)], length()));
    userEdited();
}

void PatternEditorView::globalsTyped()
{
    std::set<int> positions;
    for (const std::string &item : splitTypedList(m_globalEdit->text().toStdString())) {
        const QString part = QString::fromStdString(item);
        bool ok = false;
        const int p = part.toInt(&ok);
        if (!ok || p < 0 || p >= length()) {
            m_readout->setText(tr("Global: '%1' is not a position in [0, %2)").arg(part).arg(length()));
            return;
        }
        positions.insert(p);
    }
    if (std::vector<int>(positions.begin(), positions.end()) == m_globals)
        return;
    m_globals.assign(positions.begin(), positions.end());
    userEdited();
}

void PatternEditorView::toggleGlobal(int position)
{
    if (!attention::attentionKernel(m_editedKind).globalPositions || position < 0 || position >= length())
        return;
    const auto it = std::lower_bound(m_globals.begin(), m_globals.end(), position);
    if (it != m_globals.end() && *it == position)
        m_globals.erase(it);
    else
        m_globals.insert(it, position);
    userEdited();
}

void PatternEditorView::userEdited()
{
    m_message.clear();
    m_fromSpec = true; // from now on the spec holds it
    syncControls();
    m_spec.attention = m_editedKind;
    m_spec.attentionParams = editedParams();
    updateReadout();
    emit specEdited(m_spec);
}

bool PatternEditorView::computing() const
{
    const auto *analysis = m_input.analysisAs<PatternAnalysis>();
    return !analysis || m_input.analysis.pending
        || attention::describeAttentionKernel(analysis->spec) != attention::describeAttentionKernel(editedSpec())
        || analysis->summary.length != length();
}

// The session's pattern for the spec, or the one drawn until it arrives.
void PatternEditorView::adoptAnalysis()
{
    if (!computing()) {
        const auto *analysis = m_input.analysisAs<PatternAnalysis>();
        m_summary = std::shared_ptr<const PatternSummary>(m_input.analysis.result, &analysis->summary);
        showSummary();
        return;
    }
    if (!m_input.analysis.pending && !m_input.analysis.problem.isEmpty()) {
        showProblem(m_input.analysis.problem);
        return;
    }
    updateReadout(); // "computing…": the previous pattern stays on screen meanwhile
}

void PatternEditorView::showSummary()
{
    const PatternSummary &s = *m_summary;
    const bool exact = s.cells == s.length;
    m_plot->setTheme(m_spec.theme);
    m_plot->setColormap(m_spec.colormap);
    m_plot->setLogScale(!exact); // a global row fills 1/32 of its block: visible only on a log scale
    // One cell per pair: a yes/no mask, drawn in the masked style of every view and a two-entry legend.
    m_plot->setMaskMode(exact);
    m_plot->setMaskLabels(tr("masked"), tr("attended"));
    if (exact) {
        auto shown = std::make_shared<std::vector<float>>(s.density);
        for (float &v : *shown)
            v = v > 0.0f ? v : -std::numeric_limits<float>::infinity();
        m_plot->setMatrix(shown->data(), s.cells, s.cells, shown);
    } else {
        // Empty blocks go below the emptiest non-empty one (half a pair), or the log scale would draw both alike.
        const double side = double(s.length / s.cells + 1), area = side * side; // at least the largest block
        auto shown = std::make_shared<std::vector<float>>(s.density);
        for (float &v : *shown)
            v = v > 0.0f ? v : float(0.5 / area);
        m_plot->setMatrix(shown->data(), s.cells, s.cells, shown);
    }
    if (exact)
        m_plot->setAxisTitles(tr("key position j"), tr("query position i"));
    else
        m_plot->setAxisTitles(tr("key position j (first of its block)"), tr("query position i (first of its block)"));
    QStringList labels;
    if (exact)
        labels = tokenLabels(m_input, s.cells);
    else
        for (int c = 0; c < s.cells; ++c)
            labels << QString::number(s.cellEdges[size_t(c)]);
    m_plot->setIndexInLabels(exact);
    m_plot->setLabels(labels, labels);
    m_plot->setValueLabel(exact ? QString() : tr("share of the block attended (log scale; darkest: none)"));
    QString params; // lines of about 36 characters, so that the title never squeezes the plot
    for (const std::string &p : editedParams()) {
        const int line = int(params.size() - params.lastIndexOf('\n') - 1);
        params += (params.isEmpty() ? "" : line + int(p.size()) > 36 ? "\n" : "   ") + QString::fromStdString(p);
    }
    QString title = tr("%1 · %2 tokens%3\n%4")
                        .arg(QString::fromStdString(m_editedKind))
                        .arg(s.length)
                        .arg(m_input.causal ? tr(" · causal") : QString(), params);
    if (!m_fromSpec && m_suggestedWindow > 0)
        title += tr("\nlayer %1's own sliding window: %2 keys").arg(m_spec.layer).arg(m_suggestedWindow);
    if (!exact)
        title += tr("\ndrawn in %1×%1 blocks of about %2 positions").arg(s.cells).arg(s.length / s.cells);
    m_plot->setTitle(title);
    updateReadout();
}

void PatternEditorView::showProblem(const QString &problem)
{
    m_message = problem;
    m_plot->showMessage(problem);
    updateReadout();
}

void PatternEditorView::updateReadout()
{
    // The first word of each paragraph in bold; lines break only between "  "-separated parts (of formulas).
    QStringList html;
    for (const QString &paragraph : readoutText().split("\n\n")) {
        const int space = std::max(0, int(paragraph.indexOf(' ')));
        QStringList parts = paragraph.mid(space).split("  ");
        for (QString &part : parts)
            part = parts.size() > 1 ? "<span style=\"white-space:nowrap\">" + part.toHtmlEscaped() + "</span>"
                                    : part.toHtmlEscaped();
        html << "<b>" + paragraph.left(space).toHtmlEscaped() + "</b>" + parts.join(" &nbsp;");
    }
    m_readout->setText("<p>" + html.join("</p><p>") + "</p>");
}

QString PatternEditorView::readoutText() const
{
    if (!m_message.isEmpty())
        return m_message;
    if (computing() || !m_summary)
        return tr("computing the pattern of %1 tokens…").arg(length());
    const PatternSummary &s = *m_summary;
    const int64_t ops = s.operations(m_dHead), fullOps = s.fullOperations(m_dHead);
    const double ratio = ops ? double(fullOps) / double(ops) : 0.0;
    QString text = tr("Density %1 %: %2 of %3 (query, key) pairs allowed, against full attention's %3%4.")
                       .arg(QString::number(100.0 * s.allowedFraction(), 'f', 2), grouped(s.allowedPairs),
                           grouped(s.fullPairs), m_input.causal ? tr(" (the causal triangle)") : QString());
    text += "\n\n"
        + tr("Work %1 multiply-adds against %2 for full attention: %3× %4. The kernel computes %5 scores "
             "(%6 of them masked inside its blocks), 2·d_head = %7 multiply-adds each.")
              .arg(compact(double(ops)), compact(double(fullOps)), formatNumber(ratio >= 1 ? ratio : 1 / ratio, 3),
                  ratio >= 1 ? tr("less") : tr("more"), grouped(s.computedPairs),
                  grouped(s.computedPairs - s.allowedPairs), QString::number(2 * m_dHead));
    if (ratio < 1)
        text += " " + tr("At this length its blocks of 64 queries hold more masked cells than the pattern saves.");
    try {
        const std::string formula = attention::patternFormula(editedSpec(), m_input.causal);
        text += "\n\n" + tr("Pattern: query i attends key j when  %1").arg(QString::fromStdString(formula));
    } catch (const Error &) {
    }
    if (!m_fromSpec && m_suggestedWindow > 0)
        text += "\n\n"
            + tr("Layer %1's own pattern: this model's sliding window of %2 keys (i − %2 < j ≤ i), written as "
                 "Longformer's causal window w = %3. Edit it to run another pattern in its place.")
                  .arg(m_spec.layer)
                  .arg(m_suggestedWindow)
                  .arg(m_suggestedWindow - 1);
    else if (!m_fromSpec)
        text += "\n\n"
            + tr("Suggested: the spec's attention is '%1', which has no fixed pattern; edit this one to set it.")
                  .arg(QString::fromStdString(m_spec.attention));
    return text;
}

std::vector<QWidget *> PatternEditorView::interfaceWidgets() const
{
    return {m_controls, m_stripArea};
}

QString PatternEditorView::hoverText(int row, int col) const
{
    if (!m_summary || row >= m_summary->cells || col >= m_summary->cells)
        return {};
    const PatternSummary &s = *m_summary;
    const size_t k = size_t(row) * size_t(s.cells) + size_t(col);
    if (s.cells == s.length) {
        if (s.cellAllowed[k])
            return cellPrefix(m_input, row, col) + tr(": attended");
        const bool padding = std::find(m_input.padding.begin(), m_input.padding.end(), col) != m_input.padding.end();
        const QString why = m_input.causal && col > row ? tr("a future key (causal)")
            : padding                                   ? tr("a padding key")
                                                        : tr("outside the pattern");
        return cellPrefix(m_input, row, col) + tr(": not attended, %1").arg(why);
    }
    const auto range = [&s](int c) {
        return QStringLiteral("%1–%2").arg(s.cellEdges[size_t(c)]).arg(s.cellEdges[size_t(c) + 1] - 1);
    };
    const int64_t area = (s.cellEdges[size_t(row) + 1] - s.cellEdges[size_t(row)])
        * (s.cellEdges[size_t(col) + 1] - s.cellEdges[size_t(col)]);
    return tr("queries %1 × keys %2: %3 attended (%4 of %5 pairs)")
        .arg(range(row), range(col), formatPercent(s.density[k]), grouped(s.cellAllowed[k]), grouped(area));
}

} // namespace atlas

std::unique_ptr<atlas::View> atlas::views::pattern::makeView(QWidget *parent)
{
    return std::make_unique<PatternEditorView>(parent);
}
