#pragma once

#include <QLabel>

#include <algorithm>

namespace atlas {

// A form's label for `buddy`: its mnemonic focuses the field, and it shows the field's tooltip too.
inline QLabel *fieldLabel(const QString &text, QWidget *buddy)
{
    auto *label = new QLabel(text, buddy->parentWidget());
    label->setBuddy(buddy);
    label->setToolTip(buddy->toolTip());
    return label;
}

// Lets a form's field be narrower than its widest text (a spin box's range, a combo box's longest item) down to about
// ten characters, so that a form fits a dock beside the views instead of scrolling sideways.
inline void allowNarrow(QWidget *field)
{
    field->setMinimumWidth(std::min(field->minimumSizeHint().width(), 10 * field->fontMetrics().averageCharWidth()));
}

// The label column's width of the Train panel's forms, so that the fields of its sections line up.
inline int trainFormLabelWidth(const QWidget *form)
{
    return form->fontMetrics().horizontalAdvance(QStringLiteral("Checkpoint every")) + 8;
}

} // namespace atlas
