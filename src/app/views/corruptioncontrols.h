#pragma once

#include "view/viewspec.h"

#include <QWidget>

#include <functional>

class QGridLayout;
class QLineEdit;
class QSpinBox;

namespace atlas {

// The Patching and Circuit views' inputs (view/corruptionkeys.h): the corrupted run, as another input or noise at
// positions, and the metric, logit(target) − logit(contrast) or p(target) at a position. Each box edits its spec key
// through `edit`. Two rows of a grid whose columns 4 and 5 of the first row are left for the view's own control.
class CorruptionControls : public QWidget
{
    Q_OBJECT

public:
    using Edit = std::function<void(const std::function<void(ViewSpec &)> &)>;
    CorruptionControls(Edit edit, QWidget *parent);

    QGridLayout *grid() const { return m_grid; }
    // The boxes as the spec has them (a box being typed in keeps its text); the position up to the input's last.
    void showSpec(const ViewSpec &spec, int tokens);

private:
    Edit m_edit;
    QGridLayout *m_grid = nullptr;
    QLineEdit *m_corrupted = nullptr, *m_noise = nullptr, *m_target = nullptr, *m_contrast = nullptr;
    QSpinBox *m_position = nullptr;
};

} // namespace atlas
