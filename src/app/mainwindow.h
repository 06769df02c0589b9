#pragma once

#include <QMainWindow>
#include <QMap>

#include <memory>
#include <vector>

class QComboBox;
class QProgressBar;
class QSpinBox;
class QToolBar;
class QToolButton;

namespace Ui {
class MainWindow;
}

namespace atlas {

class LessonPanel;
class ModelChooser;
class LessonPlayer;
class PresentationMode;
class Session;
class TrainPanel;
class WelcomeDialog;
class View;
class ViewNavigator;
class ZoomController;

// The window: panels in docks around a tab of views. It wires actions to the Session and the Session's
// signals to the views; it computes nothing.
class MainWindow : public QMainWindow
{
    Q_OBJECT

public:
    explicit MainWindow(Session *session, QWidget *parent = nullptr);
    ~MainWindow() override;

    View *currentView() const;
    ZoomController *zoom() const { return m_zoom; }
    ViewNavigator *navigator() const { return m_navigator; }
    void showViewKind(const QString &kind);
    LessonPlayer *lessons() const { return m_lessons; }
    LessonPanel *lessonPanel() const { return m_lessonPanel; }
    PresentationMode *presentation() const { return m_presentation; }
    // A warning in the status bar and a window-modal box that does not block the event loop.
    void showProblem(const QString &title, const QString &message);

    // The welcome (dialogs/welcomedialog.h), unless it was dismissed before ("welcome/dismissed" in the settings) and
    // `always` is false; returns it while it is shown, else null.
    WelcomeDialog *showWelcome(bool always = false);
    // What `transformer-atlas PATH` and a file dropped on the window open besides a model.
    void openLesson(const QString &path); // in the Lessons panel, shown and raised
    bool openViewSpec(const QString &path); // false, with the problem shown, when the file is not a spec

protected:
    void closeEvent(QCloseEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;
    void showEvent(QShowEvent *event) override;
    void changeEvent(QEvent *event) override; // a new palette: the icons are drawn again
    // A model, lesson or view spec dropped on the window opens as `transformer-atlas PATH` opens it.
    void dragEnterEvent(QDragEnterEvent *event) override;
    void dropEvent(QDropEvent *event) override;

private:
    void createDocks();
    void createToolBarWidgets();
    void connectActions();
    void connectSession();
    void refreshCurrentView();
    void syncControls();
    void paintIcons();
    void moveSelection(int dLayer, int dHead);
    void exportCurrentView();
    void restoreSettings();
    void createTabActions();
    void setFullScreenView(bool on);
    void fitToolBars();
    void connectLessons();
    void openLessonFile();
    void quickOpen(); // View ▸ Go To… (Ctrl+K): any view, lesson or model by name
    void showViewHelp(); // Help ▸ About This View (Shift+F1)
    void addCurrentViewAsStep();

    std::unique_ptr<Ui::MainWindow> m_ui;
    Session *m_session;
    ViewNavigator *m_navigator = nullptr;
    ModelChooser *m_models = nullptr;
    QSpinBox *m_layer = nullptr;
    QSpinBox *m_head = nullptr;
    QProgressBar *m_progress = nullptr;
    QToolBar *m_attentionBar = nullptr;
    QToolButton *m_infoButton = nullptr;
    QToolButton *m_cancel = nullptr;
    ZoomController *m_zoom = nullptr;
    TrainPanel *m_train = nullptr;
    LessonPlayer *m_lessons = nullptr;
    LessonPanel *m_lessonPanel = nullptr;
    PresentationMode *m_presentation = nullptr;
    QByteArray m_windowedState; // docks and toolbars before full screen
    QMap<double, QByteArray> m_layoutAtZoom; // docks and toolbars as each zoom level was left
    bool m_firstStart = false; // no saved window state: lay the docks out on the first show
};

} // namespace atlas
