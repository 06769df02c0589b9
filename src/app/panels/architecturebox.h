#pragma once

#include "model/modelconfig.h"

#include <QWidget>

#include <string>
#include <utility>
#include <vector>

class QComboBox;
class QGridLayout;
class QToolButton;

namespace atlas {

// The Train panel's "Model" section: the changes to the task's model that `train` takes as options (layers,
// positions, experts, funnel …; train/trainingsetup.h). Its state is a list of key=value options, the same text a
// lesson's train action and the command line take, so the three cannot disagree: options() gives the controls'
// changes (a control at the task's own value, or disabled, gives nothing) and setOptions() shows a list. Collapsed
// under a header that says what is changed.
class ArchitectureBox : public QWidget
{
    Q_OBJECT

public:
    using Options = std::vector<std::pair<std::string, std::string>>;

    explicit ArchitectureBox(QWidget *parent = nullptr);

    // The task's own model: the fields' "task's" texts say its layers, heads, width and context. The context field is
    // off for a task whose examples have lengths of their own (Task::takesContext).
    void setTaskShape(const ModelConfig &shape, bool takesContext);
    // The models the task can start from (train/trainingsetup.h's startingModels), offered beside random weights.
    void setStartingModels(const std::vector<std::string> &names);
    QString startingModel() const; // empty: random weights
    Options options() const;
    // Every control back to the task's model, then `options` shown; an unknown key or a value a control cannot
    // show is left out (the run then refuses nothing it was not shown).
    void setOptions(const Options &options);
    static QString optionsText(const Options &options); // "positions=alibi experts=4", the lesson syntax
    static Options parseOptionsText(const QString &text);

    bool expanded() const;
    void setExpanded(bool expanded);

signals:
    void changed();

private:
    struct Field
    {
        std::string key;
        QWidget *control = nullptr;
        QString defaultText; // the control's text of the task's model: no option
    };

    QWidget *createControls();
    void addField(QGridLayout *grid, int &row, const std::string &key, const QString &label, QWidget *control);
    void addShapeFields(QGridLayout *grid, int &row);
    void addAttentionFields(QGridLayout *grid, int &row);
    void addWidthAndLengthFields(QGridLayout *grid, int &row);
    void connectFields();
    QString currentText(const Field &field) const;
    void setText(const Field &field, const QString &text);
    void updateEnabled();
    void updateHeader();
    QComboBox *startingModelBox() const;

    QToolButton *m_header = nullptr;
    QWidget *m_controls = nullptr;
    std::vector<Field> m_fields;
    bool m_takesContext = true; // the task's windows follow the context field (setTaskShape)
    std::vector<QWidget *>
        m_layoutRows; // the sections, labels and fields but the start model's, hidden while fine-tuning
};

} // namespace atlas
