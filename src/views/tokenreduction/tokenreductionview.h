#pragma once

#include "views/analysisplotview.h"

#include "tokenreduction/tokenreduction.h"

#include <QPointer>

namespace atlas {

struct ReductionSweep;
struct TokenSurvival;

// Token reduction (view kind "token-reduction"; PoWER-BERT, Goyal et al. 2020): after each layer only the tokens that
// receive the most attention go on. Top: the input's tokens across, one row per layer, each cell coloured by the
// token's significance there (× the layer's average), a cross where that layer eliminates it, grey once it is gone.
// Bottom: the model's task held out, accuracy against the work left, ranked by significance, at random and by the
// targets' attention, for the spec's model and `baseline_model`. The numbers are TokenReductionAnalysis's.
class TokenReductionView : public ResultPlotView<TokenReductionAnalysis>
{
    Q_OBJECT

public:
    explicit TokenReductionView(QWidget *parent = nullptr);

protected:
    void resizeEvent(QResizeEvent *event) override;
    QString draw(const TokenReductionAnalysis &result) override;
    QString pendingText() const override;

private:
    void drawSurvival(const TokenSurvival &s);
    void drawSweeps(const std::vector<const ReductionSweep *> &sweeps, double inputWork);
    void labelTokens(); // as many token labels under the map as its width holds

    QPointer<QCPAxisRect> m_map; // the survival map's panel, while drawn
    int m_tokens = 0;
};

} // namespace atlas

namespace atlas::views::tokenreduction {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::tokenreduction
