#pragma once

#include <QLabel>

namespace atlas {

// A form's label for `buddy`: its mnemonic focuses the field, and it shows the field's tooltip too.
inline QLabel *fieldLabel(const QString &text, QWidget *buddy)
{
    auto *label = new QLabel(text, buddy->parentWidget());
    label->setBuddy(buddy);
    label->setToolTip(buddy->toolTip());
    return label;
}

} // namespace atlas
