#pragma once

#include "view/viewspec.h"
#include "viewmodel/viewinput.h"

#include <QWidget>

class QLabel;

#include <functional>
#include <vector>

namespace atlas {

constexpr int kViewMargin = 10; // pixels between a painted view's edge and what it draws

// Base of every view: draws a ViewSpec from a ViewInput. Views never compute model numbers: they read the
// trace, the program and the spec's analysis (downsampling for display is drawing, not computing).
class View : public QWidget
{
    Q_OBJECT

public:
    explicit View(QWidget *parent = nullptr);
    // Disconnects its children from the view first: a child's signal while QWidget deletes the children (a line
    // edit's editingFinished on losing focus as the window goes) must not reach a view whose own part is gone.
    ~View() override;

    virtual void setInput(const ViewInput &input);
    virtual void setSpec(const ViewSpec &spec);
    // Both, drawn once: what the window hands the view on screen, so that a result never meets the spec before the
    // one it was made for (which would draw a message, then the picture).
    void setInputAndSpec(const ViewInput &input, const ViewSpec &spec);
    const ViewSpec &spec() const { return m_spec; }
    const ViewInput &input() const { return m_input; }
    // Text the last paint had to cut short or leave out for lack of room (a title, a caption): empty when
    // everything fit. The classroom test holds every view to it at projector sizes and zooms.
    const QStringList &clippedTexts() const { return m_clipped; }
    // The view's controls (sliders, switches, spin boxes, clickable token strips): hidden while the view is exported,
    // so a figure carries its title, axes, legend and captions only. Every interactive child lies inside one.
    virtual std::vector<QWidget *> interfaceWidgets() const { return {}; }
    // Work for the picture still under way on a worker (a head computed on demand, a large matrix pooled): the view
    // shows the previous picture or a message until it lands. `bench-view` waits for it.
    virtual bool drawing() const { return false; }
    // Completes that work here (an export draws the finished picture).
    virtual void finishDrawing() { }
    // The least height the view needs at `width`: wrapped text at its height for that width, plots at their minimum.
    // A scroll area makes a view at least its height for width; Qt's is the height the view would like, which
    // scrolled views that fit by their minimums (on a 720-line projector, most of them).
    int heightForWidth(int width) const override;

signals:
    // The user changed what the view shows from inside it (clicked a head, moved a slider): the Session
    // adopts the new spec so the rest of the window follows.
    void specEdited(const atlas::ViewSpec &spec);
    // The user stopped the view's analysis under way (a long patching sweep).
    void analysisCancelled();
    // The user clicked a built-in model named in the view's message ("the built-in austen-mlm-funnel").
    void modelRequested(const QString &model);
    // The user clicked "Run anyway" in a message of work over the budget (util/workbudget.h).
    void runAnywayRequested();

protected:
    // Called after the input or the spec changed, and when the font changed (the app's zoom); redraw from m_input
    // and m_spec, sizing text with sizedFont (views/viewfonts.h).
    virtual void refresh() = 0;
    void changeEvent(QEvent *event) override;
    // The spec shown with `change` made to it, adopted (specEdited) when it differs: what a control of the view calls.
    void editSpec(const std::function<void(ViewSpec &)> &change);

    // A selectable, wrapping line for the formula above a view's plots.
    QLabel *newFormulaLabel();
    // A centred, wrapping message, shown instead of the plots (nothing computed, a layer without …).
    QLabel *newMessageLabel();
    // `text` in a message label, each built-in model it names after "the built-in" a link that opens it
    // (modelRequested), and "Run anyway" a link that runs work over the budget (runAnywayRequested).
    static void setMessageText(QLabel *label, const QString &text);

    // A painted view calls these: clearClipped() when a paint starts, noteClipped(text) for text it elided.
    void clearClipped() { m_clipped.clear(); }
    void noteClipped(const QString &text) { m_clipped.append(text); }

    // The session's analysis as an A, when it was made for this view's settings (analysisSettings of m_spec): null
    // while it runs, when it failed, or while the input still holds the result of the spec before the last edit.
    template <class A> const A *currentAnalysis() const
    {
        return m_input.analysis.settings == analysisSettings(m_spec) ? m_input.analysisAs<A>() : nullptr;
    }

    ViewInput m_input;
    ViewSpec m_spec;

private:
    QStringList m_clipped;
};

// A view drawn headless (`render`, export of a hidden view) is neither shown nor parented: it draws at once
// instead of on a worker, so the picture is complete.
inline bool drawnHeadless(const QWidget *view)
{
    return view->parentWidget() == nullptr && !view->isVisible();
}

// Lays out the children of a hidden view at its current size (a hidden widget gets no resize event), so
// plots pool to the size they will be drawn at.
void layOutHidden(QWidget *view);

} // namespace atlas
