#pragma once

#include "views/analysisplotview.h"

#include "features/features.h"

class QCPItemText;
class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QMouseEvent;
class QPushButton;
class QSpinBox;

namespace atlas {

// Features (view kind "features"): a sparse autoencoder's features on the input. Above, one feature's activation on
// every token (spec "feature"; −1: the strongest at the chosen token); below, the strongest features at one token
// (spec "position"; −1: the last). A click on a token lists its features, a click on a feature draws it over the
// text; hovering a bar gives its numbers. The dictionary (spec "sae") is a directory train-sae wrote or SAELens saved,
// or Gemma Scope's params.npz with the site it reads (spec "sae_site"); Open dictionary… chooses one. Shown as a
// dashboard (spec "features_show"), the feature's page over the corpus instead (featuresdashboard.cpp): its strongest
// examples, its histogram, its logit effects and its nearest features; or the dictionary's quality
// (featuresquality.cpp); or the model steered by the feature or by a difference of means over two sets of prompts
// (featuressteering.cpp). The numbers are FeaturesAnalysis's.
class FeaturesView : public ResultPlotView<FeaturesAnalysis>
{
    Q_OBJECT

public:
    explicit FeaturesView(QWidget *parent = nullptr);
    QPushButton *trainDictionaryButton() const { return m_trainDictionary; }
    QPushButton *promptsButton() const { return m_prompts; }
    QComboBox *corpusSourceBox() const { return m_corpusSource; }

protected:
    QString draw(const FeaturesAnalysis &result) override;
    QString pendingText() const override;
    QString progressFormat() const override;
    bool eventFilter(QObject *watched, QEvent *event) override;
    bool keepsResultWhilePending() const override { return true; }

private:
    void refreshControls();
    void drawActivation(const FeaturesAnalysis &a);
    void drawStrongest(const FeaturesAnalysis &a);
    void chooseAt(QMouseEvent *event);
    // The bar under the pointer: (0, token) in the upper panel, (1, index) in the lower, or (−1, −1).
    std::pair<int, int> barAt(const QPoint &pos) const;
    void showValueAt(QMouseEvent *event);
    void openDictionary();
    void showPath(const QString &text); // the dictionary's name, elided to the label's width (its tooltip: the path)
    void trainDictionary(); // Train…: a TrainDictionaryDialog, whose dictionary then shows here
    void choosePrompts(); // Prompts…: the two sets of prompts a difference of means steers by
    void chooseCorpusFile(); // the corpus box's "A text file…"
    // The dashboard (featuresdashboard.cpp): its four panels, and what the pointer is over.
    QString drawDashboard(const FeaturesAnalysis &a);
    void drawExamples(const FeatureDashboard &d);
    void drawHistogram(const FeatureDashboard &d);
    void drawLogitEffects(const FeatureDashboard &d);
    void drawNearest(const FeatureDashboard &d);
    QString dashboardTipAt(const QPoint &pos) const;
    // The dictionary's quality (featuresquality.cpp).
    QString drawQuality(const FeaturesAnalysis &a);
    // The model steered by the feature (featuressteering.cpp).
    QString drawSteering(const FeaturesAnalysis &a);
    int nearestAt(const QPoint &pos) const; // the nearest feature's bar under the pointer, or −1

    QPushButton *m_open = nullptr, *m_trainDictionary = nullptr;
    QLabel *m_path = nullptr;
    QString m_pathText;
    QLabel *m_siteLabel = nullptr;
    QLineEdit *m_site = nullptr;
    QLabel *m_featureLabel = nullptr;
    QSpinBox *m_feature = nullptr;
    QComboBox *m_show = nullptr;
    QLabel *m_corpusLabel = nullptr;
    QSpinBox *m_corpusTokens = nullptr;
    QComboBox *m_corpusSource = nullptr; // the built-in corpus, or a text file (spec "corpus_file")
    QLabel *m_strengthLabel = nullptr;
    QDoubleSpinBox *m_strength = nullptr;
    QCheckBox *m_clamp = nullptr;
    QPushButton *m_prompts = nullptr;
    QDoubleSpinBox *m_temperature = nullptr; // 0: greedy
    QSpinBox *m_seed = nullptr; // shown when the continuations sample
    QCPAxisRect *m_tokens = nullptr, *m_features = nullptr;
    std::vector<int> m_drawnFeatures; // the lower panel's bars, left to right
    std::vector<float> m_drawnValues; // their activations
    std::vector<float> m_drawnActivation; // the upper panel's, per token
    std::vector<int> m_drawnActive; // features active at each token
    int m_drawnTokens = 0, m_drawnFeature = 0, m_drawnPosition = 0;
    bool m_drawnDashboard = false;
    QCPAxisRect *m_examples = nullptr, *m_histogram = nullptr, *m_logits = nullptr, *m_nearest = nullptr;
    FeatureDashboard m_drawnPage;
    std::vector<std::pair<QCPItemText *, std::pair<int, int>>> m_exampleTokens; // item → (example, token)
};

} // namespace atlas

namespace atlas::views::features {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::features
