#pragma once

#include "view/viewspec.h"

#include <QDialog>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;

namespace atlas {

// View ▸ Compare Two Runs: how run B differs from the run on screen (another model, text or attention kernel) and
// whether to draw the two side by side or A − B. The result is the spec's comparison keys (view/comparison.h).
class CompareDialog : public QDialog
{
    Q_OBJECT

public:
    CompareDialog(const ViewSpec &spec, QWidget *parent = nullptr);
    // The spec with the comparison chosen; valid after the dialog was accepted.
    const ViewSpec &spec() const { return m_spec; }

    void accept() override;

private:
    ViewSpec chosen() const;

    ViewSpec m_spec;
    QCheckBox *m_useModel, *m_useText, *m_useAttention;
    QComboBox *m_model, *m_attention, *m_mode;
    QLineEdit *m_text, *m_params;
    QLabel *m_error;
};

} // namespace atlas
