#pragma once

#include "train/trainingrunoptions.h"

#include <QAbstractSpinBox>
#include <QDoubleSpinBox>
#include <QSpinBox>
#include <QString>

namespace atlas {

// The Train panel's fields take their range and tooltip from the training run's option table
// (train/trainingrunoptions.h), the one `train` and lessons read: a value the panel offers is one they accept.
inline const TrainingRunOption &trainingOption(const std::string &name)
{
    static const TrainingRunOption none;
    const TrainingRunOption *o = findTrainingRunOption(name);
    return o ? *o : none;
}

// The option's help as a tooltip: a sentence.
inline QString trainingOptionTip(const std::string &name)
{
    QString help = QString::fromStdString(trainingOption(name).help);
    if (!help.isEmpty())
        help[0] = help[0].toUpper();
    return help;
}

// The option's range on a spin box, below it `offValues` more for the panel's own values ("task's", "off", "auto").
inline void setTrainingOptionRange(QSpinBox *spin, const std::string &name, int offValues = 0)
{
    const TrainingRunOption &o = trainingOption(name);
    spin->setRange(int(o.low) - offValues, int(o.high));
    spin->setToolTip(trainingOptionTip(name));
}

// A double spin box shows `decimals` places: its range starts at the smallest value it can show above the option's
// lowest, unless `off` keeps 0 for the panel's own value.
inline void setTrainingOptionRange(QDoubleSpinBox *spin, const std::string &name, int decimals, bool off = false)
{
    const TrainingRunOption &o = trainingOption(name);
    double smallest = 1;
    for (int i = 0; i < decimals; ++i)
        smallest /= 10;
    spin->setDecimals(decimals);
    spin->setRange(off || o.low == 0 ? 0.0 : std::max(o.low, smallest), o.high);
    spin->setToolTip(trainingOptionTip(name));
}

} // namespace atlas
