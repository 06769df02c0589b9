#pragma once

#include "panels/trainpanel.h"

#include <QComboBox>
#include <QPushButton>
#include <QSpinBox>
#include <QTest>

namespace atlas::testing {

// The Train panel set to train `taskName` for `steps` steps of `batch` examples, evaluating every `evalEvery`.
inline void configure(TrainPanel &panel, int steps, int batch, int evalEvery, const char *taskName = "reverse")
{
    auto *task = panel.findChild<QComboBox *>("trainTask");
    task->setCurrentIndex(task->findData(taskName));
    panel.findChild<QSpinBox *>("trainSteps")->setValue(steps);
    panel.findChild<QSpinBox *>("trainBatch")->setValue(batch);
    panel.findChild<QSpinBox *>("trainEvalEvery")->setValue(evalEvery);
}

// Clicks the panel's button `name`, which must be there and enabled.
inline void click(TrainPanel &panel, const char *name)
{
    auto *b = panel.findChild<QPushButton *>(name);
    QVERIFY(b && b->isEnabled());
    b->click();
}

} // namespace atlas::testing
