#pragma once

#include "view/viewspec.h"
#include "viewmodel/viewinput.h"

#include <QWidget>

namespace atlas {

// Base of every view: draws a ViewSpec from a ViewInput. Views never compute model numbers: they read the
// trace, the program and the spec's analysis (downsampling for display is drawing, not computing).
class View : public QWidget
{
    Q_OBJECT

public:
    explicit View(QWidget *parent = nullptr);

    virtual void setInput(const ViewInput &input);
    virtual void setSpec(const ViewSpec &spec);
    const ViewSpec &spec() const { return m_spec; }
    const ViewInput &input() const { return m_input; }

signals:
    // The user changed what the view shows from inside it (clicked a head, moved a slider): the Session
    // adopts the new spec so the rest of the window follows.
    void specEdited(const atlas::ViewSpec &spec);

protected:
    // Called after the input or the spec changed; redraw from m_input and m_spec.
    virtual void refresh() = 0;

    ViewInput m_input;
    ViewSpec m_spec;
};

// A view drawn headless (`render`, export of a hidden view) is neither shown nor parented: it draws at once
// instead of on a worker, so the picture is complete.
inline bool drawnHeadless(const QWidget *view)
{
    return view->parentWidget() == nullptr && !view->isVisible();
}

} // namespace atlas
