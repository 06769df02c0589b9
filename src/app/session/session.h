#pragma once

#include "engine/engine.h"
#include "engine/generator.h"
#include "engine/inputbuilder.h"
#include "features/steering.h"
#include "session/viewanalyses.h"
#include "tokenize/tokenizer.h"
#include "view/viewspec.h"
#include "viewmodel/viewinput.h"

#include <QFutureWatcher>
#include <QObject>
#include <QString>
#include <QThreadPool>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <utility>

namespace atlas {

// One token added by Session::generate.
struct GeneratedToken
{
    int id = 0;
    QString piece; // readable
    double probability = 0; // the model's own probability of it (temperature 1)
    int cachedPositions = 0; // rows of every layer's K and V cache after it
    double cacheKiB = 0; // the whole cache after it (an encoder-decoder's cross-attention keys and values included)
};

// What a generation did: the prompt, what it added, and why it stopped early, if it did.
struct GenerationReport
{
    QString prompt;
    QString continuation;
    std::vector<GeneratedToken> tokens;
    QString stopped; // empty when every requested token was generated
    // A steered generation's steering in words, and the model's own continuation of the prompt under the same
    // sampling options and seed; both empty when it was not steered.
    QString steering;
    QString unsteered;
};

// Where a steered generation's steering comes from (views/features' specSteering): it runs on the worker thread with
// the model and the prompt, since it may read a dictionary and run the model.
using SteeringSource = std::function<NamedSteering(std::shared_ptr<const Model> model, const std::vector<int> &prompt)>;

// The app's state: the model, the input, the engine stepping through it, the view spec on screen and its
// analysis. Every computation (loading, stepping, running, generating) runs on one worker thread, the spec's
// analysis (view/viewanalysis.h) on another; the GUI thread only receives snapshots of the trace (cheap:
// tensors share their data) and results, and draws them.
class Session : public QObject
{
    Q_OBJECT

public:
    explicit Session(QObject *parent = nullptr);
    ~Session() override;

    // Loads a built-in model by name or a model directory, then runs the current input on it, or the model's sample
    // input (config atlas_sample) when `sampleInput` is set and it has one. An input longer than the model's
    // context is cut to fit, and noticed() says so. On failure the previous model stays, and errorOccurred says why.
    void openModel(const QString &nameOrDirectory, bool sampleInput = false);
    // The input as text or token ids: an encoder-decoder's source, with `decoderBox` its decoder's input as the
    // Decoder box holds it (text, or "#ids"; ignored for a model with one stack). setTokens says whether it ran
    // (errorOccurred says why not).
    void setText(const QString &text, const QString &decoderBox = {});
    bool setTokens(const std::vector<int> &tokens, const QString &decoderBox = {});
    // The Input and Decoder boxes as typed: text, or token ids after '#' (engine/inputbuilder.h, readBoxInput).
    void submitBoxes(const QString &box, const QString &decoderBox);
    // A long document as the input (File ▸ Open Text File): read (engine/inputbuilder.h, readInputText) and tokenized
    // on the worker, then run as setText would; an encoder–decoder's source, its decoder's input the spec's.
    void openTextFile(const QString &path);
    // A typed or pasted text longer than this is tokenized on the worker too (GPT-2's BPE: 100 KB in about 50 ms).
    static constexpr size_t kTokenizeHereBytes = size_t(4) << 10;
    void togglePadding(int position);
    // The attention kernel and its "key=value" parameters, run by the listed layers (every layer when `layers` is
    // empty; the others run full attention); reruns the input.
    void setAttention(
        const std::string &kind, const std::vector<std::string> &params, const std::vector<int> &layers = {});
    void setMemoryBudget(size_t bytes) { m_memoryBudget = bytes; }
    size_t memoryBudget() const { return m_memoryBudget; }
    // Analyses on the least work (AnalysisContext::checkOnly): their code runs, their numbers are not for showing. For
    // the lesson walk under the sanitizers, which checks what a step's view meets, not what it says.
    void setAnalysesOnLeastWork(bool leastWork) { m_analysesOnLeastWork = leastWork; }

    void step();
    void back();
    void runTo(int cursor);
    void runToEnd();
    void rewind();
    void cancel();
    // Stops the analysis under way; the view says it was cancelled until its spec or the trace changes.
    void cancelAnalysis();
    // Runs the view's analysis that was refused over the work budget (util/workbudget.h), with progress and Cancel,
    // for this view and this trace; another view or a new run checks the budget again.
    void runAnalysisAnyway();
    // Generates `count` tokens with a KV cache, appending them to the input (an encoder-decoder's decoder input, its
    // encoder run once; it stops after the model's '.').
    // With `steering`, each position is steered as it is fed (the prompt's too), and the report carries the model's
    // own continuation beside it.
    void generate(int count, SamplingOptions options, SteeringSource steering = {});

    const ViewSpec &spec() const { return m_spec; }
    void setSpec(const ViewSpec &spec);
    // Shows `spec` whole, as a lesson step or a pasted spec asks: its model, input, padding, attention and stepper
    // position in one job, then its view settings. A job under way is cancelled first; `source` names the spec in
    // errors. On failure the previous state stays.
    void applySpec(const ViewSpec &spec, const QString &source);

    bool busy() const { return m_busy; }
    // The tensors prefetchNeighbours made for the layers beside the one on screen, not yet shown.
    std::vector<std::string> prefetched() const;
    const Tensor *prefetchedTensor(const std::string &name) const;
    bool hasModel() const { return m_model != nullptr; }
    const Model *model() const { return m_model.get(); }
    const Tokenizer *tokenizer() const { return m_tokenizer.get(); }
    const Input &input() const { return m_input; }
    // The blocks of the stack whose attention the spec shows (an encoder-decoder's encoder or decoder).
    int layersShown() const;
    const Program *program() const { return m_program.get(); }
    int cursor() const { return m_cursor; }
    std::shared_ptr<const Trace> trace() const { return m_trace; }
    // What the views draw: the trace snapshot, its program, token labels and the spec's analysis.
    ViewInput viewInput() const;
    const AnalysisState &analysis() const { return m_analyses.state(); }
    // Analyses running: the view on screen's, and one a tab switch left behind.
    int analysesUnderWay() const { return m_analyses.underWay(); }

signals:
    void modelChanged();
    void inputChanged();
    void traceChanged(); // new snapshot: cursor, program or tensors changed
    void specChanged();
    void analysisChanged(); // the spec's analysis finished, failed or was started
    void busyChanged(bool busy);
    // `done` of `total` steps of the job under way; `what` names it when it is not the forward ("Tokenizing").
    void progressChanged(int done, int total, const QString &what = QString());
    void errorOccurred(const QString &message);
    void generationFinished(const atlas::GenerationReport &report);
    void noticed(const QString &message); // something the user should know that is not an error

private:
    // A job runs on the worker and returns what to apply on the GUI thread afterwards. An atlas::Error
    // inside it is reported through errorOccurred and the previous state is kept.
    using Commit = std::function<void()>;
    using Job = std::function<Commit()>;
    // `quiet`: work the user did not ask for (prefetchNeighbours), shown with no progress bar.
    void runJob(Job job, bool quiet = false);
    names::AttentionSite viewSite() const; // the attention the spec's view draws (viewSiteOf)
    void finishJob();
    // A new engine on `input`, run to the end; `ran` then updates the spec to name that input (set with the result,
    // so that a refused input never becomes the spec the views are said to show).
    void runInput(Input input, std::function<void(ViewSpec &)> ran = {});
    // Reads `text` (a file, or a long paste) and tokenizes it on the worker, then runs it as runBoxes does.
    void tokenizeThenRun(std::function<std::string()> text, const QString &decoderBox);
    // `encoded`: the box's text tokenized already (tokenizeThenRun did it on the worker).
    bool runBoxes(const BoxInput &box, const QString &decoderBox, const std::vector<int> *encoded = nullptr);
    void rerun(); // runInput(m_input) now, or when the job in progress is done
    // The spec's layer moved to the one the stepper's last op ran, unless the user pinned one; whether it moved.
    bool followStepperLayer();
    Commit snapshot(); // on the worker: what the GUI thread publishes after an engine change
    // A checkpointed trace (engine/recompute.h): the tensors the spec's view reads that it freed, and whether the
    // published trace lacks some; recomputeForView computes them on the worker and publishes the kept trace with them
    // (session/sessionrecompute.cpp).
    std::vector<std::string> recomputedForView() const;
    bool awaitsRecompute() const;
    void recomputeForView();
    // A run keeping only block inputs, a view of one layer on screen and nothing else to do: the scored queries and
    // keys of the layers on either side are computed on the worker, within the budget, so that a step to the next
    // layer finds them made.
    void prefetchNeighbours();
    // Why the view's tensors `names` (recomputedForView) are not recomputed: they would take the trace past its budget
    // (the figures); empty when they fit.
    std::string recomputeRefusal(const std::vector<std::string> &names) const;
    // Starts the analysis the spec's view needs for the current trace, unless the one on hand or under way fits.
    void updateAnalysis();

    std::shared_ptr<const Model> m_model;
    std::shared_ptr<const Tokenizer> m_tokenizer;
    Input m_input;
    ViewSpec m_spec;
    std::map<std::string, ViewSpec> m_viewSettings; // each view's spec when it was last on screen: its own settings
    size_t m_memoryBudget = size_t(8) << 30;

    std::unique_ptr<Engine> m_engine; // touched only by the worker while busy
    std::shared_ptr<const Program> m_program;
    std::shared_ptr<const Trace> m_trace; // what the views read: m_keptTrace and the tensors m_recomputed names
    std::shared_ptr<const Trace> m_keptTrace; // the engine's own, as the last snapshot took it
    std::vector<std::string> m_recomputed;
    std::vector<std::string> m_recomputeAsked; // for m_keptTrace: asked once, not again after a failure or Cancel
    std::shared_ptr<const Trace> m_prefetched; // prefetchNeighbours' tensors, of m_keptTrace
    std::vector<std::string> m_prefetchAsked; // for m_keptTrace, as m_recomputeAsked
    int m_cursor = 0;

    QThreadPool m_worker;
    QFutureWatcher<void> m_watcher;
    Commit m_commit;
    QString m_error;
    std::atomic<bool> m_cancel {false};
    bool m_busy = false;
    bool m_analysesOnLeastWork = false;
    std::pair<std::string, const Trace *> m_budgetLifted; // the view and trace runAnalysisAnyway was asked for
    bool m_layerPinned = false; // a layer chosen while stepping: the views stay on it as the stepper moves
    bool m_rerunWhenFree = false; // the spec's attention changed during a job
    std::optional<std::pair<ViewSpec, QString>> m_applyWhenFree; // applySpec during a job: the latest waits
    std::function<void()> m_startWhenFree; // tokenizeThenRun during a job
    bool m_quietJob = false; // the job under way is unasked (prefetchNeighbours)
    Job m_afterQuiet; // a job asked while a quiet one ran: it runs next
    std::optional<std::pair<Input, std::function<void(ViewSpec &)>>> m_runWhenFree; // runInput during a job

    ViewAnalyses m_analyses; // last: its destructor waits for the analyses in progress
};

} // namespace atlas
