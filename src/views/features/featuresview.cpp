#include "features/featuresview.h"

#include "features/traindictionarydialog.h"
#include "viewmodel/viewinput.h"
#include "views/palette.h"
#include "views/plottheme.h"

#include <qcustomplot.h>

#include <QCheckBox>
#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMouseEvent>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QShortcut>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace atlas {

using namespace views::features;

FeaturesView::FeaturesView(QWidget *parent)
    : ResultPlotView(parent)
{
    QWidget *controls = controlRow();
    auto *row = static_cast<QHBoxLayout *>(controls->layout());
    m_open = new QPushButton(tr("Open dictionary\u2026"), controls);
    m_open->setToolTip(tr("Choose a sparse autoencoder: the cfg.json of a directory train-sae wrote or SAELens saved, "
                          "or Gemma Scope's params.npz (spec key sae)"));
    m_trainDictionary = new QPushButton(tr("Train\u2026"), controls);
    m_trainDictionary->setToolTip(tr("Train a sparse autoencoder on a site of this model, with its loss drawn as it "
                                     "goes, then open it here"));
    connect(m_trainDictionary, &QPushButton::clicked, this, &FeaturesView::trainDictionary);
    m_path = new QLabel(controls);
    m_path->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_path->installEventFilter(this);
    m_site = new QLineEdit(controls);
    m_site->setPlaceholderText(tr("blocks.L.hook_resid_post"));
    m_site->setMinimumWidth(m_site->fontMetrics().horizontalAdvance(m_site->placeholderText()) + 24);
    m_site->setToolTip(tr("Where a params.npz reads, as SAELens names it; a directory's cfg.json says it (spec key "
                          "sae_site)"));
    m_feature = new QSpinBox(controls);
    m_feature->setRange(-1, 1 << 24);
    m_feature->setSpecialValueText(tr("strongest"));
    m_feature->setToolTip(tr("The feature drawn over every token; \"strongest\" is the strongest at the chosen "
                             "token (spec key feature)"));
    // The path gives way first (its tooltip has it whole); the site is asked for only where the dictionary does not say
    // it (a params.npz).
    m_path->setMinimumWidth(0);
    m_path->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_siteLabel = new QLabel(tr("Site:"), controls);
    row->addWidget(m_open);
    row->addWidget(m_trainDictionary);
    row->addWidget(m_path, 1);
    row->addWidget(m_siteLabel);
    row->addWidget(m_site);
    m_featureLabel = new QLabel(tr("Feature:"), controls);
    row->addWidget(m_featureLabel);
    row->addWidget(m_feature);
    m_show = new QComboBox(controls);
    m_show->addItem(tr("On the text"), QStringLiteral("text"));
    m_show->addItem(tr("Dashboard"), QStringLiteral("dashboard"));
    m_show->addItem(tr("Quality"), QStringLiteral("quality"));
    m_show->addItem(tr("Steer"), QStringLiteral("steer"));
    m_show->setToolTip(tr("On the text: the features at each token of the input. Dashboard: the feature's page over "
                          "the built-in corpus, its strongest examples, histogram, logit effects and nearest features. "
                          "Quality: the dictionary's dead and dense features, the variance it leaves unexplained and "
                          "the loss it recovers. Steer: the model's continuation with and without the feature added "
                          "(spec key features_show; Ctrl+D goes to the next)"));
    auto *toggle = new QShortcut(QKeySequence(tr("Ctrl+D")), this);
    toggle->setContext(Qt::WidgetWithChildrenShortcut);
    connect(toggle, &QShortcut::activated, this,
        [this] { m_show->setCurrentIndex((m_show->currentIndex() + 1) % m_show->count()); });
    m_corpusLabel = new QLabel(tr("Corpus:"), controls);
    m_corpusTokens = new QSpinBox(controls);
    m_corpusTokens->setRange(1, 10'000'000);
    m_corpusTokens->setSingleStep(10'000);
    m_corpusTokens->setGroupSeparatorShown(true);
    m_corpusTokens->setToolTip(tr("How much of the corpus the dashboard's pass reads; each pass is kept on "
                                  "disk, so it runs once (spec key corpus_tokens)"));
    m_corpusSource = new QComboBox(controls);
    m_corpusSource->addItem(tr("Built-in corpus"));
    m_corpusSource->addItem(tr("A text file\u2026"));
    m_corpusSource->setToolTip(tr("What the dashboard's and the quality page's pass reads: the built-in corpus, or a "
                                  "UTF-8 text file (spec key corpus_file)"));
    connect(m_corpusSource, &QComboBox::activated, this, [this](int index) {
        if (index == 1)
            chooseCorpusFile();
        else if (!m_spec.get(kCorpusFile).empty())
            editSpec([](ViewSpec &s) { s.set(kCorpusFile, std::string()); });
    });
    m_strengthLabel = new QLabel(tr("Strength:"), controls);
    m_strength = new QDoubleSpinBox(controls);
    m_strength->setRange(0, 10'000);
    m_strength->setDecimals(1);
    m_strength->setToolTip(tr("How many times the feature's decoder row is added to the stream at every position; "
                              "clamped: the value the feature is set to (spec key steer_strength)"));
    m_clamp = new QCheckBox(tr("Clamp"), controls);
    m_clamp->setToolTip(tr("Set the feature's activation to the strength instead of adding its row: 0 switches it "
                           "off (spec key steer_clamp)"));
    m_prompts = new QPushButton(controls);
    m_prompts->setToolTip(tr("Steer by the difference of the site's mean rows over two sets of prompts instead of a "
                             "feature (spec keys steer_means_a and steer_means_b)"));
    connect(m_prompts, &QPushButton::clicked, this, &FeaturesView::choosePrompts);
    m_temperature = new QDoubleSpinBox(controls);
    m_temperature->setRange(0, 5);
    m_temperature->setSingleStep(0.1);
    m_temperature->setDecimals(2);
    m_temperature->setPrefix(tr("T = "));
    m_temperature->setSpecialValueText(tr("greedy"));
    m_temperature->setToolTip(tr("Greedy: both continuations take the most likely token. Above 0: both sample "
                                 "softmax(z / T) from the same seed, so they part where the steering moves the odds "
                                 "(spec key steer_temperature)"));
    m_seed = new QSpinBox(controls);
    m_seed->setRange(0, 1 << 30);
    m_seed->setPrefix(tr("seed "));
    m_seed->setToolTip(tr("The seed both sampled continuations draw from: another seed, another pair of samples "
                          "(spec key steer_seed)"));
    row->addWidget(m_show);
    row->addWidget(m_strengthLabel);
    row->addWidget(m_strength);
    row->addWidget(m_clamp);
    row->addWidget(m_prompts);
    row->addWidget(m_temperature);
    row->addWidget(m_seed);
    connect(m_temperature, &QDoubleSpinBox::editingFinished, this, [this] {
        if (m_temperature->value() != m_spec.get(kSteerTemperature))
            editSpec([this](ViewSpec &s) { s.set(kSteerTemperature, m_temperature->value()); });
    });
    connect(m_seed, &QSpinBox::editingFinished, this, [this] {
        if (m_seed->value() != m_spec.get(kSteerSeed))
            editSpec([this](ViewSpec &s) { s.set(kSteerSeed, m_seed->value()); });
    });
    connect(m_strength, &QDoubleSpinBox::editingFinished, this, [this] {
        if (m_strength->value() != m_spec.get(kSteerStrength))
            editSpec([this](ViewSpec &s) { s.set(kSteerStrength, m_strength->value()); });
    });
    connect(m_clamp, &QCheckBox::toggled, this, [this](bool on) {
        if (on != m_spec.get(kSteerClamp))
            editSpec([on](ViewSpec &s) { s.set(kSteerClamp, on); });
    });
    row->addWidget(m_corpusLabel);
    row->addWidget(m_corpusSource);
    row->addWidget(m_corpusTokens);
    connect(m_show, &QComboBox::currentIndexChanged, this, [this] {
        const std::string show = m_show->currentData().toString().toStdString();
        if (show != m_spec.get(kShow))
            editSpec([show](ViewSpec &s) { s.set(kShow, show); });
    });
    connect(m_corpusTokens, &QSpinBox::editingFinished, this, [this] {
        if (m_corpusTokens->value() != m_spec.get(kCorpusTokens))
            editSpec([this](ViewSpec &s) { s.set(kCorpusTokens, m_corpusTokens->value()); });
    });
    connect(m_open, &QPushButton::clicked, this, &FeaturesView::openDictionary);
    connect(m_site, &QLineEdit::editingFinished, this, [this] {
        const std::string site = m_site->text().trimmed().toStdString();
        if (site != m_spec.get(kSaeSite))
            editSpec([site](ViewSpec &s) { s.set(kSaeSite, site); });
    });
    connect(m_feature, &QSpinBox::editingFinished, this, [this] {
        if (m_feature->value() != m_spec.get(kFeature))
            editSpec([this](ViewSpec &s) { s.set(kFeature, m_feature->value()); });
    });
    connect(plot(), &QCustomPlot::mousePress, this, &FeaturesView::chooseAt);
    connect(plot(), &QCustomPlot::mouseMove, this, &FeaturesView::showValueAt);
    plot()->setMouseTracking(true);
    plot()->setToolTip(tr("Click a token to list its strongest features, a feature to draw it over the text"));
}

QString FeaturesView::pendingText() const
{
    if (m_spec.get(kShow) == "steer")
        return tr("Continuing the input with and without the steering\u2026");
    if (m_spec.get(kShow) != "text")
        return tr("Reading the corpus through the model to the dictionary's site, every feature at once (once for each "
                  "dictionary, corpus and size: the pass is kept on disk)\u2026");
    return tr("Reading the dictionary and encoding the input\u2026");
}

void FeaturesView::showPath(const QString &text)
{
    m_pathText = text;
    m_path->setText(m_path->fontMetrics().elidedText(text, Qt::ElideMiddle, std::max(1, m_path->width())));
}

bool FeaturesView::eventFilter(QObject *watched, QEvent *event)
{
    if (watched == m_path && event->type() == QEvent::Resize) // the name, shortened in the middle to what fits
        m_path->setText(m_path->fontMetrics().elidedText(m_pathText, Qt::ElideMiddle, std::max(1, m_path->width())));
    return ResultPlotView::eventFilter(watched, event);
}

QString FeaturesView::progressFormat() const
{
    return tr("%v of %m tokens");
}

void FeaturesView::refreshControls()
{
    const QSignalBlocker b1(m_site), b2(m_feature), b3(m_show), b4(m_corpusTokens), b5(m_strength), b6(m_clamp),
        b7(m_corpusSource), b8(m_temperature), b9(m_seed);
    const bool steer = m_spec.get(kShow) == "steer";
    const bool dashboard = m_spec.get(kShow) == "dashboard" || m_spec.get(kShow) == "quality";
    m_strength->setValue(m_spec.get(kSteerStrength));
    m_clamp->setChecked(m_spec.get(kSteerClamp));
    m_strengthLabel->setVisible(steer);
    m_strength->setVisible(steer);
    const std::vector<std::string> a = steeringPrompts(m_spec.get(kSteerMeansA)),
                                   b = steeringPrompts(m_spec.get(kSteerMeansB));
    const bool byMeans = !a.empty() && !b.empty();
    m_clamp->setVisible(steer && !byMeans);
    m_prompts->setVisible(steer);
    m_temperature->setValue(m_spec.get(kSteerTemperature));
    m_seed->setValue(m_spec.get(kSteerSeed));
    m_temperature->setVisible(steer);
    m_seed->setVisible(steer && m_spec.get(kSteerTemperature) > 0);
    m_prompts->setText(byMeans ? tr("Prompts %1 \u2212 %2\u2026").arg(a.size()).arg(b.size()) : tr("Prompts\u2026"));
    // the quality page is the whole dictionary's; steering by prompts needs no feature
    const bool perFeature = m_spec.get(kShow) != "quality" && !(steer && byMeans);
    m_featureLabel->setVisible(perFeature);
    m_feature->setVisible(perFeature);
    m_show->setCurrentIndex(std::max(0, m_show->findData(QString::fromStdString(m_spec.get(kShow)))));
    m_corpusTokens->setValue(m_spec.get(kCorpusTokens));
    m_corpusLabel->setVisible(dashboard);
    m_corpusTokens->setVisible(dashboard);
    m_corpusSource->setVisible(dashboard);
    const QString corpusFile = QString::fromStdString(m_spec.get(kCorpusFile));
    m_corpusSource->setItemText(1, corpusFile.isEmpty() ? tr("A text file\u2026") : QFileInfo(corpusFile).fileName());
    m_corpusSource->setItemData(1, corpusFile, Qt::ToolTipRole);
    m_corpusSource->setCurrentIndex(corpusFile.isEmpty() ? 0 : 1);
    const QString path = QString::fromStdString(m_spec.get(kSae));
    showPath(path.isEmpty() ? tr("no dictionary") : QFileInfo(path).fileName());
    m_path->setToolTip(path);
    m_site->setText(QString::fromStdString(m_spec.get(kSaeSite)));
    const bool asksSite = path.endsWith(QStringLiteral(".npz")) || !m_spec.get(kSaeSite).empty();
    m_siteLabel->setVisible(asksSite);
    m_site->setVisible(asksSite);
    m_feature->setValue(m_spec.get(kFeature));
}

void FeaturesView::chooseCorpusFile()
{
    const QString now = QString::fromStdString(m_spec.get(kCorpusFile));
    const QString file = QFileDialog::getOpenFileName(
        this, tr("Read the corpus from a text file"), now, tr("Text (*.txt *.md);;All files (*)"));
    if (file.isEmpty()) { // kept as it was
        const QSignalBlocker blocker(m_corpusSource);
        m_corpusSource->setCurrentIndex(now.isEmpty() ? 0 : 1);
        return;
    }
    editSpec([path = file.toStdString()](ViewSpec &s) { s.set(kCorpusFile, path); });
}

void FeaturesView::choosePrompts()
{
    QDialog dialog(this);
    dialog.setWindowTitle(tr("Steer by a difference of means"));
    auto *layout = new QVBoxLayout(&dialog);
    auto *explain = new QLabel(tr("The steering adds the strength times the difference between the site's mean row "
                                  "over the first prompts and over the second (every position of every prompt), in "
                                  "place of a feature's decoder row. One prompt a line; clear both to steer by the "
                                  "feature again."),
        &dialog);
    explain->setWordWrap(true);
    layout->addWidget(explain);
    QPlainTextEdit *sides[2];
    const QString titles[2] = {tr("Toward (their mean is added):"), tr("Away from (their mean is taken away):")};
    const std::string texts[2] = {m_spec.get(kSteerMeansA), m_spec.get(kSteerMeansB)};
    for (int i = 0; i < 2; ++i) {
        layout->addWidget(new QLabel(titles[i], &dialog));
        sides[i] = new QPlainTextEdit(&dialog);
        QStringList lines;
        for (const std::string &p : steeringPrompts(texts[i]))
            lines << QString::fromStdString(p);
        sides[i]->setPlainText(lines.join(QLatin1Char('\n')));
        sides[i]->setPlaceholderText(
            i == 0 ? tr("I love this\nWhat a wonderful day") : tr("I hate this\nWhat an awful day"));
        layout->addWidget(sides[i]);
    }
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &dialog);
    connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    layout->addWidget(buttons);
    dialog.resize(dialog.fontMetrics().averageCharWidth() * 70, dialog.fontMetrics().height() * 22);
    if (dialog.exec() != QDialog::Accepted)
        return;
    std::string joined[2];
    for (int i = 0; i < 2; ++i) {
        QStringList kept;
        for (QString line : sides[i]->toPlainText().split(QLatin1Char('\n'))) {
            line = line.trimmed().replace(QLatin1Char('|'), QLatin1Char('/')); // | separates the prompts
            if (!line.isEmpty())
                kept << line;
        }
        joined[i] = kept.join(QLatin1Char('|')).toStdString();
    }
    // A feature's row is added about 8 times, a difference of means once (steer's default for it).
    const bool wasByMeans = !steeringPrompts(texts[0]).empty() && !steeringPrompts(texts[1]).empty();
    const bool byMeans = !joined[0].empty() && !joined[1].empty();
    editSpec([&](ViewSpec &s) {
        s.set(kSteerMeansA, joined[0]);
        s.set(kSteerMeansB, joined[1]);
        if (byMeans != wasByMeans)
            s.set(kSteerStrength, byMeans ? 1.0 : kSteerStrength.fallback);
        if (byMeans)
            s.set(kSteerClamp, false);
    });
}

void FeaturesView::trainDictionary()
{
    if (!m_input.model)
        return;
    auto *dialog = new TrainDictionaryDialog(m_input.model, m_spec.theme, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QDialog::accepted, this, [this, dialog] {
        if (const std::string path = dialog->savedDirectory().toStdString(); !path.empty())
            editSpec([path](ViewSpec &s) {
                s.set(kSae, path);
                s.set(kSaeSite, "");
                s.set(kFeature, -1);
            });
    });
    dialog->open();
}

void FeaturesView::openDictionary()
{
    const QString start = QString::fromStdString(m_spec.get(kSae));
    const QString file = QFileDialog::getOpenFileName(this, tr("Open a sparse autoencoder"), start,
        tr("Dictionaries (cfg.json *.npz);;SAELens configuration (cfg.json);;Gemma Scope parameters (*.npz)"));
    if (file.isEmpty())
        return;
    const QFileInfo info(file);
    const std::string path
        = (info.fileName() == QStringLiteral("cfg.json") ? info.absolutePath() : info.absoluteFilePath()).toStdString();
    editSpec([path](ViewSpec &s) {
        s.set(kSae, path);
        s.set(kFeature, -1);
    });
}

QString FeaturesView::draw(const FeaturesAnalysis &a)
{
    refreshControls();
    const QString path = QString::fromStdString(a.path);
    showPath(m_spec.get(kSae).empty() ? tr("%1 (the model's own)").arg(QFileInfo(path).fileName())
                                      : QFileInfo(path).fileName());
    m_path->setToolTip(path);
    const QString model = m_input.model ? QString::fromStdString(m_input.model->name) : QString();
    setTitle(tr("Features \u00B7 %1 \u00B7 %2").arg(model, QString::fromStdString(a.dictionary)));
    m_drawnDashboard = a.showsDashboard;
    m_tokens = m_features = m_examples = m_histogram = m_logits = m_nearest = nullptr;
    m_exampleTokens.clear();
    if (a.showsDashboard)
        return drawDashboard(a);
    if (a.showsQuality)
        return drawQuality(a);
    if (a.showsSteering)
        return drawSteering(a);
    drawActivation(a);
    drawStrongest(a);
    const int T = int(a.activation.size());
    const int on = int(std::count_if(a.activation.begin(), a.activation.end(), [](float v) { return v > 0; }));
    const auto most = std::max_element(a.activation.begin(), a.activation.end());
    const int mostAt = int(most - a.activation.begin());
    QString text = tr("Dictionary: %1").arg(QString::fromStdString(a.dictionary));
    if (!a.trainedOn.empty())
        text += tr(", trained on %1").arg(QString::fromStdString(a.trainedOn));
    if (!a.quality.empty())
        text += tr(" (%1)").arg(QString::fromStdString(a.quality));
    text += tr(". Feature #%1 (%2) is active on %3 of %4 tokens")
                .arg(a.feature)
                .arg(a.featureChosen ? tr("chosen") : tr("the strongest at token %1").arg(a.position))
                .arg(on)
                .arg(T);
    if (on > 0)
        text += tr(", most at token %1 '%2' (%3)").arg(mostAt).arg(tokenLabel(m_input, mostAt), formatNumber(*most, 4));
    text += tr(". At token %1 '%2' %3 features are active; the strongest are drawn below. Click a token to list its "
               "features, a feature to draw it over the text.")
                .arg(a.position)
                .arg(tokenLabel(m_input, a.position))
                .arg(a.active.empty() ? 0 : a.active[size_t(a.position)]);
    return text;
}

void FeaturesView::drawActivation(const FeaturesAnalysis &a)
{
    m_tokens = addAxisRect(0, 0);
    QCPAxis *x = m_tokens->axis(QCPAxis::atBottom), *y = m_tokens->axis(QCPAxis::atLeft);
    auto *bars = new QCPBars(x, y), *chosen = new QCPBars(x, y);
    auto ticks = QSharedPointer<QCPAxisTickerText>::create();
    const int T = int(a.activation.size());
    // Every token's label when they fit side by side, else every step-th one (and the chosen one).
    const QFontMetrics metrics(x->tickLabelFont());
    int widest = 1;
    for (int t = 0; t < T; ++t)
        widest = std::max(widest, metrics.horizontalAdvance(tokenLabel(m_input, t)) + metrics.averageCharWidth());
    const int room = std::max(1, std::max(plot()->width(), width()) - 8 * metrics.height());
    const int step = std::max(1, (T * widest + room - 1) / room);
    double top = 1e-6;
    for (int t = 0; t < T; ++t) {
        (t == a.position ? chosen : bars)->addData(t, a.activation[size_t(t)]);
        top = std::max(top, double(a.activation[size_t(t)]));
        if (t % step == 0 || t == a.position)
            ticks->addTick(t, tokenLabel(m_input, t));
    }
    for (auto [b, color] : {std::pair {bars, palette::tableauBlue}, std::pair {chosen, palette::tableauOrange}}) {
        b->setWidth(0.8);
        b->setPen(Qt::NoPen);
        b->setBrush(color);
    }
    x->setTicker(ticks);
    x->setRange(-0.6, T - 0.4);
    x->grid()->setVisible(false);
    x->setLabel(tr("token (click one: its features below)"));
    y->setRange(0, top * 1.12);
    y->setLabel(tr("activation"));
    setPanelTitle(m_tokens, tr("Feature #%1 on every token").arg(a.feature));
    m_drawnTokens = T;
    m_drawnFeature = a.feature;
    m_drawnActivation = a.activation;
    m_drawnActive = a.active;
}

void FeaturesView::drawStrongest(const FeaturesAnalysis &a)
{
    m_features = addAxisRect(1, 0);
    QCPAxis *x = m_features->axis(QCPAxis::atBottom), *y = m_features->axis(QCPAxis::atLeft);
    auto *bars = new QCPBars(x, y), *chosen = new QCPBars(x, y);
    auto ticks = QSharedPointer<QCPAxisTickerText>::create();
    m_drawnFeatures.clear();
    m_drawnValues.clear();
    m_drawnPosition = a.position;
    double top = 1e-6;
    for (size_t i = 0; i < a.strongest.size(); ++i) {
        const auto [feature, value] = a.strongest[i];
        (feature == a.feature ? chosen : bars)->addData(double(i), value);
        ticks->addTick(double(i), QStringLiteral("#%1").arg(feature));
        top = std::max(top, double(value));
        m_drawnFeatures.push_back(feature);
        m_drawnValues.push_back(value);
    }
    for (auto [b, color] : {std::pair {bars, palette::tableauGreen}, std::pair {chosen, palette::tableauOrange}}) {
        b->setWidth(0.7);
        b->setPen(Qt::NoPen);
        b->setBrush(color);
    }
    x->setTicker(ticks);
    x->setRange(-0.6, std::max<double>(1, double(a.strongest.size())) - 0.4);
    x->grid()->setVisible(false);
    x->setLabel(a.strongest.empty() ? tr("no feature is active here") : tr("feature (click one: it is drawn above)"));
    y->setRange(0, top * 1.12);
    y->setLabel(tr("activation"));
    setPanelTitle(
        m_features, tr("The strongest features at token %1 '%2'").arg(a.position).arg(tokenLabel(m_input, a.position)));
}

std::pair<int, int> FeaturesView::barAt(const QPoint &pos) const
{
    const auto indexIn = [&](QCPAxisRect *rect, int count) {
        if (!rect || count < 1 || !rect->rect().contains(pos))
            return -1;
        const int i = int(std::lround(rect->axis(QCPAxis::atBottom)->pixelToCoord(pos.x())));
        return i >= 0 && i < count ? i : -1;
    };
    if (const int t = indexIn(m_tokens, m_drawnTokens); t >= 0)
        return {0, t};
    if (const int i = indexIn(m_features, int(m_drawnFeatures.size())); i >= 0)
        return {1, i};
    return {-1, -1};
}

void FeaturesView::chooseAt(QMouseEvent *event)
{
    if (m_drawnDashboard) {
        if (const int f = nearestAt(event->pos()); f >= 0)
            editSpec([f](ViewSpec &s) { s.set(kFeature, f); });
        return;
    }
    const auto [panel, i] = barAt(event->pos());
    if (panel == 0 && i != m_spec.position)
        editSpec([t = i](ViewSpec &s) { s.position = t; });
    else if (panel == 1)
        editSpec([f = m_drawnFeatures[size_t(i)]](ViewSpec &s) { s.set(kFeature, f); });
}

void FeaturesView::showValueAt(QMouseEvent *event)
{
    const auto [panel, i] = m_drawnDashboard ? std::pair(-1, -1) : barAt(event->pos());
    QString text = m_drawnDashboard ? dashboardTipAt(event->pos()) : QString();
    if (panel == 0)
        text = tr("Token %1 '%2': feature #%3 = %4; %5 features active")
                   .arg(i)
                   .arg(tokenLabel(m_input, i))
                   .arg(m_drawnFeature)
                   .arg(formatNumber(m_drawnActivation[size_t(i)], 4))
                   .arg(m_drawnActive[size_t(i)]);
    else if (panel == 1)
        text = tr("Feature #%1 = %2 at token %3 '%4' (click to draw it over the text)")
                   .arg(m_drawnFeatures[size_t(i)])
                   .arg(formatNumber(m_drawnValues[size_t(i)], 4))
                   .arg(m_drawnPosition)
                   .arg(tokenLabel(m_input, m_drawnPosition));
    if (text.isEmpty())
        QToolTip::hideText();
    else
        QToolTip::showText(event->globalPosition().toPoint(), text, plot());
}

} // namespace atlas

std::unique_ptr<atlas::View> atlas::views::features::makeView(QWidget *parent)
{
    return std::make_unique<FeaturesView>(parent);
}
