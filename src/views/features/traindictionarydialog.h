#pragma once

#include "features/dictionarytraining.h"

#include <QDialog>

#include <atomic>
#include <memory>
#include <optional>

class QCheckBox;
class QComboBox;
class QCustomPlot;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QThread;

namespace atlas {

// Train a dictionary… (the Features view): a sparse autoencoder trained on one site of the open model, as train-sae
// does (features/dictionarytraining.h), off the GUI thread: the rows read, then every step's loss drawn as it comes,
// Cancel at any time; then its held-out quality, and the directory it was saved to (cfg.json and
// sae_weights.safetensors, SAELens's form), which Open in the view shows. The options are kept between runs. A tenth of
// the way, and at each further tenth, the run saves its state there: a run cancelled (or the app closed) goes on from
// it when trained again with the same options into the same directory, unless "Go on from a run saved there" is
// cleared.
class TrainDictionaryDialog : public QDialog
{
    Q_OBJECT

public:
    // `theme`: the view's (light or dark), for the loss curve.
    TrainDictionaryDialog(std::shared_ptr<const Model> model, const std::string &theme, QWidget *parent = nullptr);
    ~TrainDictionaryDialog() override;

    QString savedDirectory() const { return m_saved; } // set when a run has saved its dictionary
    bool running() const { return m_thread != nullptr; }
    int stepsDrawn() const;
    // The options, for a test: the site, width, k, steps, rows and the directory to save to.
    void setOptions(const QString &site, int width, int k, int steps, int rows, const QString &directory);
    QPushButton *trainButton() const { return m_train; }
    QPushButton *openButton() const { return m_open; }
    QCheckBox *goOnBox() const { return m_goOn; }
    QString status() const;
    void reject() override; // Close or Esc: a run under way is cancelled first

private:
    void train();
    void finished(const QString &problem);
    void chooseDirectory();
    void chooseTextFile();
    void architectureChanged();
    void siteChanged(); // a transcoder has no TopK form
    SaeSite chosenSite() const; // where it reads
    std::optional<SaeSite> chosenOutput() const; // where a transcoder writes; none for a dictionary
    QString defaultDirectory() const;
    void saveSettings() const;

    std::shared_ptr<const Model> m_model;
    QComboBox *m_site, *m_architecture, *m_source;
    QSpinBox *m_width, *m_k, *m_steps, *m_rows, *m_seed;
    QDoubleSpinBox *m_sparsity;
    QCheckBox *m_auxK, *m_goOn;
    QLineEdit *m_directory;
    QPushButton *m_browse, *m_train, *m_open, *m_close;
    QProgressBar *m_progress;
    QLabel *m_status;
    QCustomPlot *m_curve;
    QString m_textFile;
    QThread *m_thread = nullptr;
    std::atomic<bool> m_cancel {false};
    std::shared_ptr<TrainedDictionary> m_result; // written by the run, read on the GUI thread once it has finished
    QString m_saved;
    int m_resumedAt = 0; // the step the run went on from (0: from the start)
    int m_checkpoint = 0; // the last step whose state the run saved
};

} // namespace atlas
