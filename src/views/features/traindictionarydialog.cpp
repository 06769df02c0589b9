#include "features/traindictionarydialog.h"

#include "util/error.h"
#include "views/plottheme.h"

#include <qcustomplot.h>

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QStandardPaths>
#include <QThread>
#include <QVBoxLayout>

#include <chrono>

namespace atlas {

namespace {

constexpr const char *kSettings = "features/trainDictionary/";

const SaeSiteKind kKinds[] = {SaeSiteKind::ResidualPre, SaeSiteKind::ResidualMid, SaeSiteKind::ResidualPost,
    SaeSiteKind::AttentionOut, SaeSiteKind::MlpIn, SaeSiteKind::MlpOut};
constexpr int kWritesRole = Qt::UserRole + 1; // a transcoder's output site, on its item of the site box

} // namespace

TrainDictionaryDialog::TrainDictionaryDialog(
    std::shared_ptr<const Model> model, const std::string &theme, QWidget *parent)
    : QDialog(parent)
    , m_model(std::move(model))
{
    setWindowTitle(tr("Train a dictionary on %1").arg(QString::fromStdString(m_model->name)));
    const int d = m_model->config.dModel;
    auto *form = new QFormLayout;
    m_site = new QComboBox(this);
    for (int layer = 0; layer < m_model->config.layers; ++layer)
        for (const SaeSiteKind kind : kKinds) {
            const SaeSite site {kind, layer};
            try {
                (void)saeSiteTensor(*m_model, site);
                m_site->addItem(QString::fromStdString(site.hookName()), QString::fromStdString(site.hookName()));
            } catch (const Error &) { // a site this model's trace does not have
            }
        }
    for (int layer = 0; layer < m_model->config.layers; ++layer) { // transcoders of each feed-forward
        const SaeSite in {SaeSiteKind::MlpIn, layer}, out {SaeSiteKind::MlpOut, layer};
        try {
            (void)saeSiteTensor(*m_model, in);
            (void)saeSiteTensor(*m_model, out);
            m_site->addItem(tr("%1 \u2192 %2 (transcoder)")
                                .arg(QString::fromStdString(in.hookName()), QString::fromStdString(out.hookName())),
                QString::fromStdString(in.hookName()));
            m_site->setItemData(m_site->count() - 1, QString::fromStdString(out.hookName()), kWritesRole);
        } catch (const Error &) {
        }
    }
    m_site->setCurrentText(
        QString::fromStdString(SaeSite {SaeSiteKind::ResidualPost, m_model->config.layers / 2}.hookName()));
    m_site->setToolTip(tr("Where the dictionary reads the model, as SAELens names it: the stream entering (resid_pre), "
                          "inside (resid_mid) or leaving (resid_post) a block, what its attention or feed-forward "
                          "adds (attn_out, mlp_out), or what its feed-forward reads (ln2.hook_normalized). A "
                          "transcoder reads the feed-forward's input and learns to predict its output"));
    m_architecture = new QComboBox(this);
    m_architecture->addItem(tr("TopK"), QStringLiteral("topk"));
    m_architecture->addItem(tr("ReLU with an L1 penalty"), QStringLiteral("standard"));
    m_architecture->addItem(tr("JumpReLU"), QStringLiteral("jumprelu"));
    m_architecture->setToolTip(tr("TopK keeps the k largest features of each row (Gao et al. 2024); ReLU is trained "
                                  "with an L1 penalty (Bricken et al. 2023); JumpReLU with an L0 penalty and a "
                                  "threshold per feature (Rajamanoharan et al. 2024)"));
    m_width = new QSpinBox(this);
    m_width->setRange(1, 1 << 20);
    m_width->setToolTip(tr("How many features the dictionary has"));
    m_k = new QSpinBox(this);
    m_k->setRange(1, 4096);
    m_k->setToolTip(tr("TopK: the features active on each row"));
    m_auxK = new QCheckBox(tr("Revive dead features (AuxK)"), this);
    m_auxK->setToolTip(tr("TopK: the auxiliary loss of Gao et al. (AuxK, SAELens's coefficient 1): the features that "
                          "fired on no row of the last 100 steps are asked to explain what the live ones miss, which "
                          "gives them a gradient again (train-sae --auxk 1)"));
    m_sparsity = new QDoubleSpinBox(this);
    m_sparsity->setRange(0, 1e6);
    m_sparsity->setDecimals(3);
    m_sparsity->setToolTip(tr("The sparsity coefficient λ (ReLU's L1, JumpReLU's L0)"));
    m_steps = new QSpinBox(this);
    m_steps->setRange(1, 10'000'000);
    m_steps->setGroupSeparatorShown(true);
    m_steps->setToolTip(tr("Adam steps of 256 rows"));
    m_rows = new QSpinBox(this);
    m_rows->setRange(16, 100'000'000);
    m_rows->setGroupSeparatorShown(true);
    m_rows->setToolTip(tr("How many of the site's rows (one a token) are read to train on; a tenth as many are held "
                          "out to measure the result"));
    m_seed = new QSpinBox(this);
    m_seed->setRange(0, 1 << 30);
    m_seed->setToolTip(tr("The dictionary's first draw and the batches' order"));
    m_source = new QComboBox(this);
    m_source->addItem(tr("The built-in corpus"));
    m_source->addItem(tr("A text file\u2026"));
    m_source->setToolTip(tr("The text the site's rows are read from: the built-in corpus's training part (its "
                            "held-out part measures the result), or a UTF-8 file whose last tenth is held out"));
    m_directory = new QLineEdit(this);
    m_directory->setMinimumWidth(fontMetrics().averageCharWidth() * 36);
    m_directory->setToolTip(tr("Where the dictionary is saved (cfg.json, sae_weights.safetensors): a new or empty "
                               "folder, or one a dictionary was saved to before"));
    m_browse = new QPushButton(tr("Browse\u2026"), this);
    m_goOn = new QCheckBox(tr("Go on from a run saved there"), this);
    m_goOn->setToolTip(tr("When the folder holds the saved state of a run with these same options (one cancelled, or "
                          "one that finished), train from it; cleared, the run starts afresh and replaces it "
                          "(train-sae --resume)"));
    auto *where = new QHBoxLayout;
    where->addWidget(m_directory, 1);
    where->addWidget(m_browse);
    form->addRow(tr("Site:"), m_site);
    form->addRow(tr("Architecture:"), m_architecture);
    form->addRow(tr("Width:"), m_width);
    form->addRow(tr("k:"), m_k);
    form->addRow(QString(), m_auxK);
    form->addRow(tr("Sparsity:"), m_sparsity);
    form->addRow(tr("Steps:"), m_steps);
    form->addRow(tr("Rows:"), m_rows);
    form->addRow(tr("Seed:"), m_seed);
    form->addRow(tr("Text:"), m_source);
    form->addRow(tr("Save to:"), where);
    form->addRow(QString(), m_goOn);

    m_progress = new QProgressBar(this);
    m_progress->setTextVisible(true);
    m_progress->setValue(0);
    m_status = new QLabel(tr("Choose the options and press Train."), this);
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_curve = new QCustomPlot(this);
    m_curve->setMinimumSize(360, 200);
    m_curve->addGraph();
    m_curve->xAxis->setLabel(tr("step"));
    m_curve->yAxis->setLabel(tr("training loss"));
    m_curve->yAxis->setScaleType(QCPAxis::stLogarithmic);
    m_curve->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
    applyPlotTheme(m_curve, theme);
    m_curve->graph(0)->setPen(QPen(themeColors(theme).accent, 1.5));

    auto *buttons = new QDialogButtonBox(this);
    m_train = buttons->addButton(tr("Train"), QDialogButtonBox::ActionRole);
    m_train->setDefault(true);
    m_open = buttons->addButton(tr("Open in the view"), QDialogButtonBox::AcceptRole);
    m_open->setEnabled(false);
    m_open->setToolTip(tr("Show the trained dictionary in the Features view"));
    m_close = buttons->addButton(QDialogButtonBox::Close);
    m_close->setToolTip(tr("Close; a run under way is cancelled (Esc)"));

    auto *layout = new QVBoxLayout(this);
    auto *top = new QHBoxLayout;
    top->addLayout(form);
    top->addWidget(m_curve, 1);
    layout->addLayout(top, 1);
    layout->addWidget(m_progress);
    layout->addWidget(m_status);
    layout->addWidget(buttons);
    resize(fontMetrics().averageCharWidth() * 130, fontMetrics().height() * 26);

    const QSettings settings;
    const QString k = kSettings;
    m_architecture->setCurrentIndex(std::max(0, m_architecture->findData(settings.value(k + "architecture", "topk"))));
    m_width->setValue(settings.value(k + "width", 4 * d).toInt());
    m_k->setValue(settings.value(k + "k", 16).toInt());
    m_auxK->setChecked(settings.value(k + "auxk", false).toBool());
    m_goOn->setChecked(settings.value(k + "go_on", true).toBool());
    m_steps->setValue(settings.value(k + "steps", 2000).toInt());
    m_rows->setValue(settings.value(k + "rows", 50'000).toInt());
    m_seed->setValue(settings.value(k + "seed", 0).toInt());
    architectureChanged();
    m_directory->setText(defaultDirectory());

    connect(m_architecture, &QComboBox::currentIndexChanged, this, &TrainDictionaryDialog::architectureChanged);
    connect(m_site, &QComboBox::currentIndexChanged, this, &TrainDictionaryDialog::siteChanged);
    connect(m_width, &QSpinBox::valueChanged, this, [this] { m_directory->setText(defaultDirectory()); });
    connect(m_browse, &QPushButton::clicked, this, &TrainDictionaryDialog::chooseDirectory);
    connect(m_source, &QComboBox::activated, this, [this](int index) {
        if (index == 1)
            chooseTextFile();
    });
    connect(m_train, &QPushButton::clicked, this, [this] {
        if (running())
            m_cancel = true;
        else
            train();
    });
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(m_close, &QPushButton::clicked, this, &TrainDictionaryDialog::reject);
}

TrainDictionaryDialog::~TrainDictionaryDialog()
{
    m_cancel = true;
    if (m_thread)
        m_thread->wait();
}

void TrainDictionaryDialog::architectureChanged()
{
    const QString a = m_architecture->currentData().toString();
    m_k->setEnabled(a == "topk");
    m_auxK->setEnabled(a == "topk");
    m_sparsity->setEnabled(a != "topk");
    m_sparsity->setValue(
        QSettings().value(QString(kSettings) + "sparsity/" + a, a == "jumprelu" ? 0.5 : 2.0).toDouble());
    m_directory->setText(defaultDirectory());
}

void TrainDictionaryDialog::siteChanged()
{
    const bool transcoder = chosenOutput().has_value();
    if (auto *items = qobject_cast<QStandardItemModel *>(m_architecture->model()))
        items->item(m_architecture->findData(QStringLiteral("topk")))->setEnabled(!transcoder);
    if (transcoder && m_architecture->currentData().toString() == "topk")
        m_architecture->setCurrentIndex(m_architecture->findData(QStringLiteral("jumprelu")));
    m_directory->setText(defaultDirectory());
}

SaeSite TrainDictionaryDialog::chosenSite() const
{
    return saeSiteFromHook(m_site->currentData().toString().toStdString());
}

std::optional<SaeSite> TrainDictionaryDialog::chosenOutput() const
{
    const QString writes = m_site->currentData(kWritesRole).toString();
    return writes.isEmpty() ? std::nullopt : std::optional(saeSiteFromHook(writes.toStdString()));
}

QString TrainDictionaryDialog::defaultDirectory() const
{
    const QString root = QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation);
    const QString name = QStringLiteral("%1-%2-%3%4")
                             .arg(QString::fromStdString(m_model->name),
                                 m_site->currentData().toString() + (chosenOutput() ? "-transcoder" : ""),
                                 m_architecture->currentData().toString())
                             .arg(m_width->value());
    return QDir(root.isEmpty() ? QDir::homePath() : root).filePath(QStringLiteral("dictionaries/") + name);
}

void TrainDictionaryDialog::chooseDirectory()
{
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Save the dictionary in"), m_directory->text());
    if (!dir.isEmpty())
        m_directory->setText(dir);
}

void TrainDictionaryDialog::chooseTextFile()
{
    const QString file = QFileDialog::getOpenFileName(
        this, tr("Train on a text file"), m_textFile, tr("Text (*.txt *.md);;All files (*)"));
    if (file.isEmpty()) {
        m_source->setCurrentIndex(m_textFile.isEmpty() ? 0 : 1);
        return;
    }
    m_textFile = file;
    m_source->setItemText(1, QFileInfo(file).fileName());
}

void TrainDictionaryDialog::saveSettings() const
{
    QSettings settings;
    const QString k = kSettings;
    const QString a = m_architecture->currentData().toString();
    settings.setValue(k + "architecture", a);
    settings.setValue(k + "width", m_width->value());
    settings.setValue(k + "k", m_k->value());
    settings.setValue(k + "auxk", m_auxK->isChecked());
    settings.setValue(k + "go_on", m_goOn->isChecked());
    settings.setValue(k + "steps", m_steps->value());
    settings.setValue(k + "rows", m_rows->value());
    settings.setValue(k + "seed", m_seed->value());
    if (a != "topk")
        settings.setValue(k + "sparsity/" + a, m_sparsity->value());
}

void TrainDictionaryDialog::setOptions(
    const QString &site, int width, int k, int steps, int rows, const QString &directory)
{
    m_architecture->setCurrentIndex(0);
    m_site->setCurrentText(site);
    siteChanged(); // a transcoder's site takes JumpReLU for TopK
    m_width->setValue(width);
    m_k->setValue(k);
    m_steps->setValue(steps);
    m_rows->setValue(rows);
    m_directory->setText(directory);
}

int TrainDictionaryDialog::stepsDrawn() const
{
    return m_curve->graph(0)->dataCount();
}

QString TrainDictionaryDialog::status() const
{
    return m_status->text();
}

void TrainDictionaryDialog::train()
{
    saveSettings();
    SaeTrainingOptions o;
    o.architecture = saeArchitectureFromName(m_architecture->currentData().toString().toStdString());
    o.width = m_width->value();
    o.k = std::min(m_k->value(), o.width);
    o.objective.sparsity = m_sparsity->value();
    o.objective.auxiliary = m_auxK->isChecked() ? 1.0 : 0.0;
    o.steps = m_steps->value();
    o.seed = uint64_t(m_seed->value());
    o.checkpointEvery = std::max(1, o.steps / 10);
    const SaeSite site = chosenSite();
    const std::optional<SaeSite> writes = chosenOutput();
    const int64_t rows = m_rows->value();
    const std::string directory = m_directory->text().trimmed().toStdString();
    const std::string textFile = m_source->currentIndex() == 1 ? m_textFile.toStdString() : std::string();
    if (directory.empty()) {
        m_status->setText(tr("Choose where to save the dictionary."));
        return;
    }
    m_cancel = false;
    m_saved.clear();
    m_resumedAt = 0;
    m_checkpoint = 0;
    m_open->setEnabled(false);
    m_curve->graph(0)->data()->clear();
    m_curve->xAxis->setRange(0, o.steps);
    m_curve->replot();
    m_progress->setRange(0, int(rows));
    m_progress->setValue(0);
    m_progress->setFormat(tr("reading the site's rows: %v of %m"));
    m_status->setText(tr("Reading %1's %2 over the text\u2026")
                          .arg(QString::fromStdString(m_model->name), QString::fromStdString(site.hookName())));
    m_train->setText(tr("Cancel"));
    m_train->setToolTip(tr("Stop the run: the state it saved at its last tenth of the steps stays"));
    auto result = std::make_shared<TrainedDictionary>();
    m_result = result;
    // Every report is queued to the GUI thread; steps are gathered and sent about twenty times a second.
    const auto post = [this](std::function<void()> onGui) {
        QMetaObject::invokeMethod(this, std::move(onGui), Qt::QueuedConnection);
    };
    m_thread = QThread::create(
        [this, o, site, writes, rows, directory, textFile, result, post, goOn = m_goOn->isChecked()] {
            QString problem;
            try {
                const DictionaryText text = textFile.empty() ? builtInCorpusText() : textFileText(textFile);
                auto last = std::chrono::steady_clock::now();
                QVector<double> steps, losses;
                DictionaryTrainingProgress progress;
                progress.reading = [&](int64_t done, int64_t total) {
                    post([this, done, total] {
                        m_progress->setMaximum(int(total));
                        m_progress->setValue(int(done));
                    });
                    return true;
                };
                progress.resumed = [&](int step) {
                    post([this, step] {
                        m_resumedAt = step;
                        m_checkpoint = step;
                    });
                };
                progress.saved = [&](int step) { post([this, step] { m_checkpoint = step; }); };
                progress.step = [&](const SaeTrainingStep &s) {
                    steps.push_back(s.step);
                    losses.push_back(s.loss);
                    const auto now = std::chrono::steady_clock::now();
                    if (now - last > std::chrono::milliseconds(50) || s.step == o.steps) {
                        last = now;
                        post([this, steps, losses, step = s.step, total = o.steps, l0 = s.l0, dead = s.dead,
                                 width = o.width] {
                            m_curve->graph(0)->addData(steps, losses, true);
                            m_curve->graph(0)->rescaleValueAxis(false, true);
                            m_curve->replot(QCustomPlot::rpQueuedReplot);
                            m_progress->setFormat(tr("training: step %v of %m"));
                            m_progress->setMaximum(total);
                            m_progress->setValue(step);
                            m_status->setText(
                                (m_resumedAt > 0 ? tr("Training, from the state saved at step %1: ").arg(m_resumedAt)
                                                 : tr("Training: "))
                                + tr("L0 %1 on the last batch; %2 of %3 features dead (fired on no row of the last 100 "
                                     "steps)")
                                      .arg(l0, 0, 'f', 2)
                                      .arg(dead)
                                      .arg(width));
                        });
                        steps.clear();
                        losses.clear();
                    }
                    return true;
                };
                *result = trainDictionary(m_model, site, o, text, rows, progress, &m_cancel, WorkBudget::process(),
                    {directory, goOn ? DictionaryCheckpoints::Resume::IfSameRun : DictionaryCheckpoints::Resume::No},
                    writes);
                post([this] { m_status->setText(tr("Saving\u2026")); });
                saveSaeDirectory(directory, result->directory);
            } catch (const std::exception &e) {
                problem = QString::fromStdString(e.what());
            }
            post([this, problem] { finished(problem); });
        });
    connect(m_thread, &QThread::finished, m_thread, &QObject::deleteLater);
    m_thread->start();
}

void TrainDictionaryDialog::finished(const QString &problem)
{
    if (m_thread)
        m_thread->wait();
    m_thread = nullptr;
    m_train->setText(tr("Train"));
    m_train->setToolTip(QString());
    if (!problem.isEmpty()) {
        if (m_cancel && m_checkpoint > 0)
            m_status->setText(tr("Cancelled. The dictionary of step %1 and the run's state are saved in %2: Train "
                                 "with the same options goes on from there.")
                                  .arg(m_checkpoint)
                                  .arg(m_directory->text().trimmed()));
        else
            m_status->setText(m_cancel ? tr("Cancelled: nothing was saved.") : tr("Not trained: %1").arg(problem));
        m_progress->setValue(0);
        return;
    }
    const TrainedDictionary &t = *m_result;
    const HeldOutMeasures &h = t.heldOut;
    m_saved = m_directory->text().trimmed();
    QString text = tr("Trained on %1 rows in %2 s. On %3 held-out rows it leaves %4 % of the variance unexplained "
                      "(L0 %5; %6 dead and %7 dense features)")
                       .arg(QLocale().toString(qlonglong(t.rows)))
                       .arg(t.trainSeconds, 0, 'f', 1)
                       .arg(QLocale().toString(qlonglong(h.rows)))
                       .arg(100 * h.quality.unexplained, 0, 'f', 2)
                       .arg(h.quality.l0, 0, 'f', 2)
                       .arg(h.quality.dead)
                       .arg(h.quality.dense);
    if (h.hasLosses)
        text += tr(", and spliced into the model it recovers %1 % of the loss")
                    .arg(100 * h.losses.recovered(), 0, 'f', 1);
    if (m_resumedAt > 0)
        text += tr(" (from the state saved at step %1)").arg(m_resumedAt);
    m_status->setText(text + tr(". Saved to %1.").arg(m_saved));
    m_open->setEnabled(true);
    m_open->setFocus();
}

void TrainDictionaryDialog::reject()
{
    if (m_thread) {
        m_cancel = true;
        m_thread->wait();
    }
    QDialog::reject();
}

} // namespace atlas
