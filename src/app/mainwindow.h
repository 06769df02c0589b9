#pragma once

#include <QMainWindow>

#include <memory>
#include <vector>

class QComboBox;
class QProgressBar;
class QSpinBox;
class QToolButton;

namespace Ui {
class MainWindow;
}

namespace atlas {

class Session;
class View;

// The window: panels in docks around a tab of views. It wires actions to the Session and the Session's
// signals to the views; it computes nothing.
class MainWindow : public QMainWindow
{
    Q_OBJECT

public:
    explicit MainWindow(Session *session, QWidget *parent = nullptr);
    ~MainWindow() override;

    View *currentView() const;
    void showViewKind(const QString &kind);

protected:
    void closeEvent(QCloseEvent *event) override;

private:
    void createDocks();
    void createToolBarWidgets();
    void connectActions();
    void connectSession();
    void refreshCurrentView();
    void syncControls();
    void moveSelection(int dLayer, int dHead);
    void exportCurrentView();
    void restoreSettings();

    std::unique_ptr<Ui::MainWindow> m_ui;
    Session *m_session;
    std::vector<View *> m_views;
    QComboBox *m_models = nullptr;
    QSpinBox *m_layer = nullptr;
    QSpinBox *m_head = nullptr;
    QProgressBar *m_progress = nullptr;
    QToolButton *m_cancel = nullptr;
};

} // namespace atlas
