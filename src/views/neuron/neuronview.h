#pragma once

#include "analysis/querykeyterms.h"
#include "views/view.h"

class QCustomPlot;
class QLabel;
class QSpinBox;
class QStackedLayout;

namespace atlas {

// BertViz's neuron view (view kind "neuron"): for head `head` of layer `layer`, one query (spec "query"; −1: the
// last token) and one key (spec "key"; −1: the key it weights most), the vectors q_i and k_j component by component
// and their product q_i ∘ k_j, whose sum is the score before 1/√d; the caption adds 1/√d, the position bias of the
// kinds that have one, the traced score and the weight. The numbers are queryKeyTerms's
// (analysis/querykeyterms.h); the spin boxes choose the pair. An encoder-decoder's: the spec's site, so for
// cross-attention a decoder query against a source key.
class NeuronView : public View
{
    Q_OBJECT

public:
    explicit NeuronView(QWidget *parent = nullptr);

    QString message() const; // drawn instead of the plots; empty when they are drawn
    QString formula() const;
    QString caption() const;
    const QueryKeyTerms &terms() const { return m_terms; }
    QCustomPlot *plot() const { return m_plot; }
    QSpinBox *queryBox() const { return m_query; }
    QSpinBox *keyBox() const { return m_key; }
    std::vector<QWidget *> interfaceWidgets() const override { return {m_controls}; }

protected:
    void refresh() override;

private:
    void showMessage(const QString &text);
    void draw();
    void drawSoftcap(double cap);

    QStackedLayout *m_stack;
    QLabel *m_message;
    QWidget *m_page;
    QWidget *m_controls;
    QSpinBox *m_query, *m_key;
    QLabel *m_formula;
    QCustomPlot *m_plot;
    QLabel *m_caption;
    QueryKeyTerms m_terms;
};

} // namespace atlas

namespace atlas::views::neuron {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::neuron
