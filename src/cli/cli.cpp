#include "commands.h"

#include "attention/attentionkernel.h"
#include "util/commalist.h"
#include "util/error.h"

#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <new>
#include <string_view>

namespace atlas {

namespace {

const char *usageTemplate = R"(transformer-atlas: run small transformers one operation at a time.

  transformer-atlas                       open the desktop app on the built-in model
  transformer-atlas dump --model M (--tokens 1,2,3 | --text "...") --out DIR [--padding 5,6]
                                          write every traced tensor as .npy plus manifest.json
      [--targets 3290,318,-1 --grads]     also write loss.npy and grad.<parameter>.npy (one target per token)
      [--memory-strategy S --checkpoint-every K --ffn-chunks C]
                                          the gradients from a training pass under memory strategy S
      [--attention KIND --attention-param key=value ... --attention-layers 0,2]
                                          an efficient attention kernel, in the listed layers (default: all)
      [--positions sinusoidal|rope|rope-half|alibi|none]
                                          the same weights with another positional encoding
      [--capacity-factor X --expert-top-k K]
                                          a mixture-of-experts model routing with room for X · T / E tokens, to k experts
      [--ablate-heads 0.1,1.3 --ablation zero|mean]
                                          with those heads switched off; prints the next token and the task
                                          scores with and without them
      [--objective next|mlm|span|prefix|nsp --seed S]
                                          + the objective's corrupted input, targets, loss and attention masks
      [--logit-lens [--lens-top-k K] [--lens-full]]
                                          + the residual stream after each block read through the output head:
                                          top-K tokens per cell (lens.top_ids/top_probs, lens.entropy), or every
                                          row's logits (lens.{row}.logits)
  transformer-atlas render --spec FILE.json --out FILE.png|.svg|.pdf [--size 1200x800]
                                          draw a view described by a view spec, headless
  transformer-atlas bench (--model M | --shape gpt2-small) --length N --repeat R [--no-trace]
                                          time the forward pass and print the median
  transformer-atlas bench-view [--model M] --length N --repeat R
                                          time switching the attention view's layer or head
  transformer-atlas bench-train (--model M | --shape gpt2-small) --length N --repeat R
                                          time one training step: forward, backward, AdamW
  transformer-atlas generate --model M --text "..." [--steps N --temperature T --top-k K --seed S]
                                          generate with a KV cache, printing its growth
  transformer-atlas train --task reverse|copy|sort|parens|chars|mlm --out DIR [--steps N --lr LR --seed S --resume]
      [--reversible] [--positions KIND] [--scale-embeddings] [--experts E --expert-top-k K --capacity-factor X]
      [--memory-strategy plain|checkpoint|reversible --checkpoint-every K --ffn-chunks C]
                                          train a model, saving a resumable state in DIR every --save-every steps
  transformer-atlas memory (--model M | --shape LxHxD) --length T [--batch B] [--strategy S]
      [--checkpoint-every K --ffn-chunks C --repeat R --json FILE]
                                          one training step under a memory strategy, every allocation recorded
  transformer-atlas memory --sweep-depth 2,4,8,16 --shape HxD --length T
                                          peak activation bytes and step time against depth, every strategy
  transformer-atlas memory --inversion-error (--model M | --shape LxHxD) --length T
                                          a reversible model's rebuild error per block in float64/32/16, bfloat16
  transformer-atlas evaluate --model M --task T [--examples N --length-scale S --ablate-heads 0.1,1.3]
                                          held-out loss and accuracy, on examples S times as long as training's
  transformer-atlas evaluate --model M --head-importance [--ablation zero|mean --examples N]
                                          each head switched off alone: the loss increase, layer × head
  transformer-atlas analyze-heads --model M --task T
                                          how much each head attends where a task's patterns say
  transformer-atlas patch (--model M --text "..." | --shape gpt2-small --tokens 1,2)
      (--corrupted-text "..." | --corrupted-tokens 1,2 | --noise-positions 3,4 [--seed S])
      --target TOKEN [--contrast TOKEN] [--position P] [--site residual|heads|mlp] [--json FILE]
                                          activation patching: how much of logit(target) - logit(contrast) (or
                                          p(target)) each clean activation restores in the corrupted run
  transformer-atlas lesson check [FILE|DIR ...]
                                          check lessons (default: lessons/); problems as file:line: message
  transformer-atlas lesson render FILE --out DIR [--size 1200x800]
                                          every step's view as a PNG
  transformer-atlas lesson export FILE --out FILE.pdf | --out DIR --html [--no-answers]
                                          the lesson to read offline: a PDF page per step, or a web page
                                          (--no-answers: the students' copy, each question without its answer)
  transformer-atlas models                list the built-in models
  transformer-atlas new-model --out DIR [--layers L --heads H --d-model D ... --seed S]
                                          make a model with GPT-2's initialisation from a fixed seed
  transformer-atlas tokenize --model M|TOKENIZER --text "..." [--special] [--pieces]
                                          print the token ids (--special: with the model's own special tokens;
                                          --pieces: each token's readable text); TOKENIZER: a built-in
                                          one (gpt2, mistral-7b, bert-base-uncased) or any tokenizer directory
  transformer-atlas bench-tokenizer --model M [--file TEXT] [--repeat R]
                                          measure the model's tokenizer: loading time, MB/s
  transformer-atlas bench-attention --kernel KIND --length N --repeat R [--attention-param key=value ...]
      [--causal] [--sweep]                time one attention head (d_head 64) with an efficient-attention
                                          kernel, KIND one of
                                          {KERNELS};
                                          --sweep times N = 256 … 16384 and fits the log-log slope
                                          (--sweep --json FILE also writes or merges it into FILE)
  transformer-atlas bench-approximation --kernel {APPROXIMATIONS} [--length N --repeat R --seeds S]
      [--head-dim D] [--causal]           time the "approximation" view's sweep (every k or feature count,
                                          S seeds each, against exact softmax) on N random tokens
  transformer-atlas bench-pattern --kernel KIND [--length N --repeat R --cells G --causal --attention-param k=v]
                                          time computing a fixed sparse pattern as the pattern editor
                                          does, with its density and work; KIND one of
                                          {PATTERNS}
  transformer-atlas bench-gui [--quick]   the longest time the window's event loop is blocked during heavy
                                          actions (a model load, a long run, every tab, training, pattern edits)

M is a built-in model name (see `models`) or a Hugging Face model directory (config.json and safetensors; the
families it reads, GPT-2, Llama, Qwen2, Mistral, Mixtral, BERT, T5, GPT-NeoX and GPT-Neo, are in docs/models.md).
)";

// The usage with the kernels' names as attentionKernels() lists them: every kind, the approximations with a size to
// sweep, the fixed patterns.
const std::string &usageText()
{
    static const std::string text = [] {
        std::vector<std::string> all, approximations, patterns;
        for (const attention::AttentionKernelKind &k : attention::attentionKernels()) {
            all.push_back(k.kind);
            if (!k.approximation.key.empty())
                approximations.push_back(k.kind);
            if (k.fixedPattern)
                patterns.push_back(k.kind);
        }
        std::string out = usageTemplate;
        const auto put = [&out](const std::string &slot, const std::string &value) {
            out.replace(out.find(slot), slot.size(), value);
        };
        put("{KERNELS}", joinedCommaList(all));
        std::string alternatives;
        for (const std::string &kind : approximations)
            alternatives += (alternatives.empty() ? "" : "|") + kind;
        put("{APPROXIMATIONS}", alternatives);
        put("{PATTERNS}", joinedCommaList(patterns));
        return out;
    }();
    return text;
}

// The usage's section for one subcommand: each of its lines ("  transformer-atlas NAME …" and the option lines
// under it), then the closing note. Empty for a name the usage does not list.
std::string commandUsage(const std::string &name)
{
    const std::string &usage = usageText(), head = "  transformer-atlas " + name;
    std::string section;
    bool inside = false;
    for (size_t start = 0; start < usage.size();) {
        const size_t end = usage.find('\n', start);
        const std::string line = usage.substr(start, end - start + 1);
        start = end == std::string::npos ? usage.size() : end + 1;
        if (line.starts_with("  transformer-atlas"))
            inside = line.starts_with(head + " ") || line == head + "\n";
        else if (line == "\n")
            inside = false;
        if (inside)
            section += line;
    }
    if (section.empty())
        return {};
    const size_t note = usage.rfind("\nM is ");
    return "transformer-atlas " + name + ":\n\n" + section + usage.substr(note);
}

const std::map<std::string, std::function<int(const CommandArgs &)>> &commands()
{
    static const std::map<std::string, std::function<int(const CommandArgs &)>> table = {
        {"dump", dumpCommand},
        {"render", renderCommand},
        {"bench", benchCommand},
        {"bench-view", benchViewCommand},
        {"generate", generateCommand},
        {"models", modelsCommand},
        {"new-model", newModelCommand},
        {"train", trainCommand},
        {"analyze-heads", analyzeHeadsCommand},
        {"evaluate", evaluateCommand},
        {"tokenize", tokenizeCommand},
        {"bench-tokenizer", benchTokenizerCommand},
        {"bench-train", benchTrainCommand},
        {"bench-attention", benchAttentionCommand},
        {"bench-approximation", benchApproximationCommand},
        {"bench-pattern", benchPatternCommand},
        {"lesson", lessonCommand},
        {"memory", memoryCommand},
        {"patch", patchCommand},
    };
    return table;
}

bool asksForHelp(char **first, char **last)
{
    for (char **arg = first; arg != last; ++arg)
        if (std::string_view(*arg) == "--help" || std::string_view(*arg) == "-h")
            return true;
    return false;
}

} // namespace

std::vector<std::string> commandNames()
{
    std::vector<std::string> names {"bench-gui"}; // run by main() before the others: it needs the window
    for (const auto &[name, command] : commands())
        names.push_back(name);
    return names;
}

int runCommandLine(int argc, char **argv)
{
    if (argc < 2)
        return -1;
    const std::string name = argv[1];
    if (name == "help" || name == "--help" || name == "-h") {
        if (argc > 2 && !commandUsage(argv[2]).empty()) { // help SUBCOMMAND
            std::fputs(commandUsage(argv[2]).c_str(), stdout);
            return 0;
        }
        std::fputs(usageText().c_str(), stdout);
        return 0;
    }
    // SUBCOMMAND --help, anywhere after the subcommand (lesson export --help): its part of the usage, nothing run.
    if (const std::string help = commandUsage(name); !help.empty() && asksForHelp(argv + 2, argv + argc)) {
        std::fputs(help.c_str(), stdout);
        return 0;
    }
    auto it = commands().find(name);
    if (it == commands().end()) {
        if (name.starts_with("-"))
            return -1; // Qt's own options (-platform, -style …) go to the app
        std::fprintf(stderr, "transformer-atlas: unknown command '%s'\n\n%s", name.c_str(), usageText().c_str());
        return 2;
    }
    try {
        return it->second(CommandArgs(argv + 2, argv + argc));
    } catch (const Error &e) {
        std::fprintf(stderr, "transformer-atlas %s: error: %s\n", name.c_str(), e.what());
        return 1;
    } catch (const std::filesystem::filesystem_error &e) { // a symbolic link loop, an unreadable directory …
        const std::string path = e.path1().empty() ? std::string("a path") : e.path1().string();
        std::fprintf(
            stderr, "transformer-atlas %s: error: %s: %s\n", name.c_str(), path.c_str(), e.code().message().c_str());
        return 1;
    } catch (const std::bad_alloc &) {
        std::fprintf(stderr,
            "transformer-atlas %s: error: out of memory (an input, a model or a size too large for this machine)\n",
            name.c_str());
        return 1;
    } catch (const std::exception &e) { // a bug: every failure a user can cause is an atlas::Error
        std::fprintf(stderr, "transformer-atlas %s: unexpected error: %s\n", name.c_str(), e.what());
        return 1;
    } catch (...) {
        std::fprintf(stderr, "transformer-atlas %s: unexpected error of unknown type\n", name.c_str());
        return 1;
    }
}

} // namespace atlas
