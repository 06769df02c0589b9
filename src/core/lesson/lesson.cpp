#include "lesson/lesson.h"

#include "io/atomicfile.h"
#include "io/limits.h"
#include "train/trainingsetup.h"
#include "util/error.h"

#include <algorithm>
#include <charconv>
#include <set>
#include <sstream>

namespace atlas {

namespace {

std::string trimmed(const std::string &s)
{
    const size_t first = s.find_first_not_of(" \t\r\n");
    if (first == std::string::npos)
        return {};
    return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

std::vector<std::string> splitLines(const std::string &text)
{
    std::vector<std::string> lines;
    std::string line;
    std::istringstream in(text);
    while (std::getline(in, line))
        lines.push_back(line.ends_with('\r') ? line.substr(0, line.size() - 1) : line);
    return lines;
}

// Reads a lesson line by line; every error names the file and the line.
class Parser
{
public:
    Parser(const std::string &text, std::string path)
        : m_lines(splitLines(text))
        , m_path(std::move(path))
    {
        m_lesson.path = m_path;
    }

    Lesson parse()
    {
        frontMatter();
        while (m_at < m_lines.size()) {
            const std::string &line = m_lines[m_at];
            if (line.starts_with("## ")) {
                finishStep();
                if (m_lesson.steps.size() >= size_t(limits::kLessonSteps))
                    fail(lineNumber(),
                        "a lesson has at most " + std::to_string(limits::kLessonSteps)
                            + " steps (each is drawn for render and export); split it into several lessons");
                m_step = LessonStep {};
                m_step.title = trimmed(line.substr(3));
                m_step.line = lineNumber();
                m_inStep = true;
                ++m_at;
            } else if (line.starts_with("```") && isBlock(trimmed(line.substr(3)))) {
                block(trimmed(line.substr(3)));
            } else {
                std::string &text = m_inStep ? m_step.text : m_lesson.introduction;
                text += line + "\n";
                // Qt lays a step's Markdown out in time that grows with the square of its length (the panel, the
                // PDF and the HTML export alike): a step is one screen of text, and is bounded as one.
                if (text.size() > limits::kStepTextBytes)
                    fail(lineNumber(),
                        std::string(m_inStep ? "a step's text" : "the introduction") + " is longer than "
                            + std::to_string(limits::kStepTextBytes / 1024) + " KiB; split it into several steps");
                ++m_at;
            }
        }
        finishStep();
        if (m_lesson.steps.empty())
            fail(int(m_lines.size()), "the lesson has no step (a step starts with a '## ' heading)");
        return std::move(m_lesson);
    }

private:
    int lineNumber() const { return int(m_at) + 1; }

    [[noreturn]] void fail(int line, const std::string &what) const
    {
        throw Error(m_path + ":" + std::to_string(line) + ": " + what);
    }

    static bool isBlock(const std::string &info)
    {
        return info == "view" || info == "actions" || info == "question" || info == "notes";
    }

    int integer(const std::string &text, int line, const std::string &what, int minimum, int maximum) const
    {
        int value = 0;
        const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || value < minimum || value > maximum)
            fail(line,
                what + " must be an integer in [" + std::to_string(minimum) + ", " + std::to_string(maximum)
                    + "], got '" + text + "'");
        return value;
    }

    double number(const std::string &text, int line, const std::string &what) const
    {
        try {
            size_t used = 0;
            const double value = std::stod(text, &used);
            if (used == text.size() && value >= 0 && value < 1e6)
                return value;
        } catch (const std::exception &) {
        }
        fail(line, what + " must be a number >= 0, got '" + text + "'");
    }

    void frontMatter()
    {
        if (m_lines.empty() || trimmed(m_lines[0]) != "---")
            fail(1, "a lesson starts with front matter: a line '---', then title:, lecture:, minutes:, models:");
        bool closed = false;
        for (m_at = 1; m_at < m_lines.size(); ++m_at) {
            const std::string line = trimmed(m_lines[m_at]);
            if (line == "---") {
                closed = true;
                ++m_at;
                break;
            }
            if (line.empty() || line.starts_with('#'))
                continue;
            const size_t colon = line.find(':');
            if (colon == std::string::npos)
                fail(lineNumber(), "front matter lines are 'key: value', got '" + line + "'");
            frontMatterKey(trimmed(line.substr(0, colon)), trimmed(line.substr(colon + 1)));
        }
        if (!closed)
            fail(1, "the front matter is not closed by a line '---'");
        for (const auto &[key, set] :
            {std::pair {"title", !m_lesson.title.empty()}, std::pair {"lecture", !m_lesson.lecture.empty()},
                std::pair {"minutes", m_lesson.minutes > 0}, std::pair {"models", !m_lesson.models.empty()}})
            if (!set)
                fail(1, std::string("the front matter has no '") + key + "'");
    }

    void frontMatterKey(const std::string &key, std::string value)
    {
        if (key == "title") {
            m_lesson.title = value;
        } else if (key == "lecture") {
            m_lesson.lecture = value;
        } else if (key == "minutes") {
            m_lesson.minutes = integer(value, lineNumber(), "minutes", 1, 600);
        } else if (key == "models") {
            if (value.starts_with('[') && value.ends_with(']'))
                value = value.substr(1, value.size() - 2);
            std::istringstream list(value);
            for (std::string model; std::getline(list, model, ',');)
                if (!trimmed(model).empty())
                    m_lesson.models.push_back(trimmed(model));
        } else {
            fail(lineNumber(), "unknown front matter key '" + key + "' (expected title, lecture, minutes, models)");
        }
    }

    // The lines of the fenced block opening at m_at, up to its closing ```; m_at moves past it.
    std::vector<std::string> blockLines(int *firstLine)
    {
        const int opening = lineNumber();
        *firstLine = opening + 1;
        std::vector<std::string> lines;
        for (++m_at; m_at < m_lines.size(); ++m_at) {
            if (trimmed(m_lines[m_at]) == "```") {
                ++m_at;
                return lines;
            }
            lines.push_back(m_lines[m_at]);
        }
        fail(opening, "the block opened here is not closed by a line '```'");
    }

    // `info` is the fence's info string (CommonMark): view, actions, question or anything else (notes).
    void block(const std::string &info)
    {
        const int opening = lineNumber();
        int first = 0;
        const std::vector<std::string> lines = blockLines(&first);
        if (!m_inStep)
            fail(opening, "a ```" + info + " block belongs to a step: put a '## ' heading before it");
        if (info == "view") {
            if (m_step.specLine != 0)
                fail(opening,
                    "a step has one ```view block; this step has another at line "
                        + std::to_string(m_step.specLine - 1));
            std::string json;
            for (const std::string &l : lines)
                json += l + "\n";
            m_step.spec = ViewSpec::fromJson(json, m_path + ":" + std::to_string(first));
            m_step.specLine = first;
        } else if (info == "actions") {
            for (size_t i = 0; i < lines.size(); ++i) {
                if (trimmed(lines[i]).empty())
                    continue;
                // Each action may run a forward pass or train a model: a step's and a lesson's are bounded.
                if (m_step.actions.size() >= size_t(limits::kStepActions))
                    fail(first + int(i),
                        "a step has at most " + std::to_string(limits::kStepActions) + " actions; split the step");
                if (++m_lessonActions > limits::kLessonActions)
                    fail(first + int(i),
                        "a lesson has at most " + std::to_string(limits::kLessonActions)
                            + " actions; split the lesson");
                m_step.actions.push_back(action(trimmed(lines[i]), first + int(i)));
            }
        } else if (info == "question") {
            m_step.questions.push_back(question(lines, first));
        } else {
            for (const std::string &l : lines)
                m_step.notes += l + "\n";
            if (m_step.notes.size() > limits::kStepTextBytes)
                fail(opening,
                    "a step's notes are longer than " + std::to_string(limits::kStepTextBytes / 1024)
                        + " KiB; split them over several steps");
        }
    }

    LessonAction action(const std::string &line, int number) const;
    LessonQuestion question(const std::vector<std::string> &lines, int first) const;

    void finishStep()
    {
        if (!m_inStep)
            return;
        if (m_step.specLine == 0)
            fail(m_step.line, "step '" + m_step.title + "' has no ```view block (the view spec it shows)");
        m_step.text = trimmed(m_step.text);
        m_lesson.steps.push_back(std::move(m_step));
        m_inStep = false;
    }

    std::vector<std::string> m_lines;
    std::string m_path;
    size_t m_at = 0;
    Lesson m_lesson;
    LessonStep m_step;
    bool m_inStep = false;
    int m_lessonActions = 0;
};

// "key=value" words after an action's verb; unknown keys are errors.
std::vector<std::pair<std::string, std::string>> options(std::istringstream &words)
{
    std::vector<std::pair<std::string, std::string>> out;
    for (std::string word; words >> word;) {
        const size_t eq = word.find('=');
        out.emplace_back(word.substr(0, eq), eq == std::string::npos ? std::string() : word.substr(eq + 1));
    }
    return out;
}

// A run in class: at most this many steps, and this many examples in all (steps × batch; 100 000 of the default 16).
constexpr int kLessonSteps = 100000;
constexpr int64_t kLessonExamples = int64_t(kLessonSteps) * 16;

LessonAction Parser::action(const std::string &line, int at) const
{
    std::istringstream words(line);
    std::string verb, target;
    words >> verb;
    LessonAction a;
    a.line = at;
    const auto option = [&](const std::string &key, const std::string &value) {
        const bool train = a.kind == LessonAction::Kind::Train;
        if (key == "temperature" && a.kind == LessonAction::Kind::Generate)
            a.temperature = number(value, a.line, "temperature");
        else if (key == "top-k" && a.kind == LessonAction::Kind::Generate)
            a.topK = integer(value, a.line, "top-k", 0, 1 << 20);
        else if (key == "top-p" && a.kind == LessonAction::Kind::Generate) {
            a.topP = number(value, a.line, "top-p");
            if (!(a.topP > 0 && a.topP <= 1))
                fail(a.line, "top-p must be above 0 and at most 1, got '" + value + "'");
        } else if (key == "seed")
            a.seed = integer(value, a.line, "seed", 0, 1 << 30);
        else if (key == "steps" && train) // a run in class: shorter than `train` allows
            a.count = integer(value, a.line, "steps", 1, kLessonSteps);
        else if (train && key != "description" && findTrainingRunOption(key)) { // the model keeps the task's summary
            try {
                TrainingRun scratch; // the value is checked now; the combination by the lesson check
                setTrainingRunOption(scratch, key, value, "train: " + key);
            } catch (const Error &e) {
                fail(a.line, e.what());
            }
            a.trainOptions.emplace_back(key, value);
        } else
            fail(a.line, "action '" + verb + "': unknown option '" + key + "'");
    };
    if (verb == "run-to") {
        words >> a.target;
        if (a.target.empty())
            fail(at, "run-to needs an op or tensor name, e.g. 'run-to layer.0.attn.probs'");
    } else if (verb == "generate") {
        a.kind = LessonAction::Kind::Generate;
        words >> target;
        a.count = integer(target, at, "generate's token count", 1, 4096);
    } else if (verb == "pad") {
        a.kind = LessonAction::Kind::Pad;
        words >> target;
        std::istringstream list(target);
        for (std::string p; std::getline(list, p, ',');)
            a.positions.push_back(integer(p, at, "a padding position", 0, 1 << 20));
        if (a.positions.empty())
            fail(at, "pad needs positions, e.g. 'pad 5,6'");
    } else if (verb == "param") {
        a.kind = LessonAction::Kind::Param;
        words >> a.target;
        if (a.target.find('=') == std::string::npos || a.target.starts_with('='))
            fail(at, "param needs key=value, e.g. 'param window=4'");
    } else if (verb == "train") {
        a.kind = LessonAction::Kind::Train;
        a.count = 300;
        words >> a.target;
        if (a.target.empty())
            fail(at, "train needs a task, e.g. 'train reverse steps=300'");
    } else {
        fail(at, "unknown action '" + verb + "' (expected run-to, generate, pad, param, train)");
    }
    std::set<std::string> given;
    for (const auto &[key, value] : options(words)) {
        if (!given.insert(key).second)
            fail(a.line, "action '" + verb + "': option '" + key + "' is given twice");
        option(key, value);
    }
    if (a.kind == LessonAction::Kind::Train) {
        const TrainOptions o = lessonTrainingRun(a).options;
        if (int64_t(o.steps) * o.batch > kLessonExamples)
            fail(a.line,
                "train: " + std::to_string(o.steps) + " steps of " + std::to_string(o.batch)
                    + " examples is more than a lesson's run trains (" + std::to_string(kLessonExamples)
                    + " examples: fewer steps or a smaller batch)");
    }
    return a;
}

LessonQuestion Parser::question(const std::vector<std::string> &lines, int first) const
{
    LessonQuestion q;
    q.line = first - 1;
    bool kindSeen = false;
    for (size_t i = 0; i < lines.size(); ++i) {
        const std::string line = trimmed(lines[i]);
        const int at = first + int(i);
        if (line.empty())
            continue;
        if (line.starts_with("- [x] ") || line.starts_with("- [X] ") || line.starts_with("- [ ] ")) {
            if (line[3] != ' ')
                q.correct.push_back(int(q.choices.size()));
            q.choices.push_back(trimmed(line.substr(6)));
            continue;
        }
        const size_t colon = line.find(':');
        const std::string key = colon == std::string::npos ? line : line.substr(0, colon);
        const std::string value = colon == std::string::npos ? std::string() : trimmed(line.substr(colon + 1));
        if ((key == "choose" || key == "predict") && !kindSeen) {
            kindSeen = true;
            q.kind = key == "choose" ? LessonQuestion::Kind::Choose : LessonQuestion::Kind::Predict;
            q.prompt = value;
        } else if (key == "explain") {
            q.explanation = value;
        } else if (key == "query" || key == "layer" || key == "head" || key == "answer") {
            const int v = integer(value, at, key, 0, 1 << 20);
            (key == "query" ? q.query : key == "layer" ? q.layer : key == "head" ? q.head : q.answer) = v;
        } else {
            fail(at,
                "a question line is 'choose: …', 'predict: …', '- [x] …', '- [ ] …', 'query:', 'layer:', "
                "'head:', 'answer:' or 'explain: …', got '"
                    + line + "'");
        }
    }
    if (!kindSeen || q.prompt.empty())
        fail(q.line, "a question starts with 'choose: <prompt>' or 'predict: <prompt>'");
    if (q.explanation.empty())
        fail(q.line, "the question has no 'explain:' line (one line said after answering)");
    if (q.kind == LessonQuestion::Kind::Choose && (q.choices.size() < 2 || q.correct.empty()))
        fail(q.line, "a choose question needs at least two '- [ ]' options and an answer marked '- [x]'");
    if (q.kind == LessonQuestion::Kind::Predict && q.query < 0)
        fail(q.line, "a predict question needs 'query: <position>' (the row whose strongest key is the answer)");
    return q;
}

} // namespace

Lesson parseLesson(const std::string &text, const std::string &path)
{
    return Parser(text, path).parse();
}

Lesson readLesson(const std::string &path)
{
    return parseLesson(readFile(path, limits::kLessonBytes), path);
}

std::string stepToText(const LessonStep &step)
{
    std::string text = "\n## " + step.title + "\n\n";
    if (!step.text.empty())
        text += step.text + "\n\n";
    text += "```view\n" + step.spec.toJson(true) + "\n```\n";
    if (!step.notes.empty())
        text += "\n```notes\n" + step.notes + (step.notes.ends_with('\n') ? "" : "\n") + "```\n";
    return text;
}

TrainingRun lessonTrainingRun(const LessonAction &action)
{
    TrainingRun run;
    run.task = action.target;
    if (action.count > 0)
        run.options.steps = action.count;
    run.options.seed = uint64_t(action.seed);
    bool learningRateGiven = false;
    for (const auto &[key, value] : action.trainOptions) {
        setTrainingRunOption(run, key, value, "train: " + key);
        learningRateGiven = learningRateGiven || key == "lr";
    }
    applyFineTuningLearningRate(run, learningRateGiven);
    return run;
}

} // namespace atlas
