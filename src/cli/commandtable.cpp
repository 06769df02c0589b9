#include "commandtable.h"

#include "attention/attentionkernel.h"
#include "train/task.h"
#include "train/trainingrunoptions.h"

#include <algorithm>
#include <string_view>

// The subcommands and their options, each written once. Options several commands share (the model and its input,
// an attention kernel, a memory strategy, expert routing, switched-off heads) are groups below and in commandtable.h.
namespace atlas {

namespace {

using namespace cli;

const Options kInput = {
    {"tokens", "1,2,3", "the input as token ids"},
    {"text", "\"...\"", "the input as text, read by the model's tokenizer (an encoder–decoder: its source)"},
    {"text-file", "FILE", "the same text read from a UTF-8 file (at most 4 MiB): a long document"},
    {"padding", "5,6", "positions treated as padding: no query attends to them"},
    {"decoder-text", "\"...\"", "an encoder–decoder's decoder input, as text"},
    {"decoder-tokens", "4,5", "an encoder–decoder's decoder input, as token ids"},
};

const Options kMemoryBudget
    = {{"memory-budget", "GIB", "the largest trace kept in memory, in GiB (default 8): a longer run is refused"}};

const Options kAttentionTrace = {{"attention-trace", "auto|whole|on-demand|checkpoints|inputs",
    "how the trace keeps attention: every head's [H, T, T] matrices whole, or on demand (q, k and each row's "
    "log-sum-exp, any head recomputed exactly), or on demand with each block keeping only its checkpoints (the "
    "residual stream, what each sub-layer adds, q, k; the rest recomputed when read), or only its input (a layer's q "
    "and k recomputed when its attention is read); auto (the default): the first that fits --memory-budget"}};

const Options kAttention = {
    {"attention", "KIND", "run an efficient attention kernel instead of full attention (see bench-attention)"},
    {"attention-param", "key=value", "one of the kernel's parameters (repeat the option for more), e.g. window=16"},
    {"attention-layers", "0,2", "the layers that run the kernel (default: every layer)"},
};

const Options kMemoryStrategy = {
    {"memory-strategy", "plain|checkpoint|reversible", "how a training pass keeps its activations for backward"},
    {"checkpoint-every", "K", "checkpointing keeps every K-th block boundary (default ⌈√L⌉)"},
    {"ffn-chunks", "C", "run each feed-forward sub-layer in C chunks of rows"},
};

const Options kRouting = {
    {"capacity-factor", "X", "a mixture-of-experts model routes with room for X · T / E tokens an expert"},
    {"expert-top-k", "K", "… and sends each token to K experts"},
};

const Options kAblation = {
    {"ablate-heads", "0.1,1.3", "switch these heads off (layer.head)"},
    {"ablation", "zero|mean", "how a head is switched off: its output zeroed, or its mean output"},
};

// `train`'s options for the run and its model, from their one table (train/trainingrunoptions.h).
Options trainingRunCliOptions()
{
    Options out;
    for (const TrainingRunOption &o : trainingRunOptions())
        out.push_back({o.name, o.valueName, o.help});
    return out;
}

// How a continuation samples (modelinput.h's samplingArgument).
const Options kSampling = {{"temperature", "T", "0 (default): the most probable token; above 0: sample softmax(z / T)"},
    {"top-k", "K", "sample among the K most probable tokens (0: all)"},
    {"top-p", "P", "then among the fewest most probable whose probabilities sum to P (1: all)"},
    {"seed", "S", "the sampler's seed"}};
const Options kBenchShape = {
    {"shape", "gpt2-small", "random weights of GPT-2 small's shape instead of a model"},
    {"length", "N", "the input's length in tokens"},
    {"repeat", "R", "timed runs after untimed warm-ups; the median is reported"},
};

std::string kernelList(bool (*keep)(const attention::AttentionKernelKind &), const char *separator)
{
    std::string out;
    for (const attention::AttentionKernelKind &k : attention::attentionKernels())
        if (keep(k))
            out += (out.empty() ? "" : separator) + k.kind;
    return out;
}

// "reverse, copy, … or retrieval-ends": every task `train --task` takes.
std::string taskList()
{
    const std::vector<std::string> names = Task::names();
    std::string out;
    for (size_t i = 0; i < names.size(); ++i)
        out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
    return out;
}

std::vector<CliCommand> makeTable()
{
    using K = attention::AttentionKernelKind;
    const std::string kernels = kernelList([](const K &) { return true; }, ", ");
    const std::string approximations = kernelList([](const K &k) { return !k.approximation.key.empty(); }, "|");
    const std::string patterns = kernelList([](const K &k) { return k.fixedPattern; }, ", ");
    return {
        {"dump",
            {{"--model M (--tokens 1,2,3 | --text \"...\") --out DIR [--padding 5,6]",
                 "write every traced tensor as .npy plus manifest.json"},
                {"... [--targets 3290,318,-1 --grads [--memory-strategy S]]",
                    "also write loss.npy and grad.<parameter>.npy (one target per token)"},
                {"... [--attention KIND --attention-param key=value ...] [--positions KIND]",
                    "an efficient attention kernel, or another positional encoding"},
                {"... [--ablate-heads 0.1,1.3] [--objective next|mlm|span|prefix|nsp] [--logit-lens] [--early-exit]",
                    "heads switched off, a pretraining objective's input, the logit lens, early exit"}},
            kModel + kInput
                + Options {{"out", "DIR", "the directory written (replaced whole, only if dump wrote it)"},
                    {"targets", "3290,318,-1", "one target id per token (-1: left out of the loss), with --grads"},
                    {"grads", "", "also write loss.npy and grad.<parameter>.npy"}}
                + kMemoryStrategy + kAttention
                + Options {{"positions", "sinusoidal|rope|rope-half|alibi|none",
                    "the same weights with another positional encoding"}}
                + kRouting + kAblation
                + Options {{"objective", "next|mlm|span|prefix|nsp",
                               "+ the objective's corrupted input, targets, loss and attention masks"},
                    {"seed", "S", "the draw of the objective's corruption"},
                    {"logit-lens", "",
                        "+ the residual stream after each block read through the output head (lens.top_ids, "
                        "lens.top_probs, lens.entropy)"},
                    {"early-exit", "",
                        "+ early exit's sweeps in manifest.json: blocks run and accuracy for every confidence "
                        "threshold and patience"},
                    {"token-retention", "0.7",
                        "PoWER-BERT: keep this share after each layer (r, r², …, or one per layer but the last); "
                        "+ layer.{i}.attn.significance and .kept"},
                    {"lens-top-k", "K", "the logit lens's tokens per cell (default 5)"},
                    {"lens-full", "", "+ every row's logits, lens.{row}.logits"},
                    {"heads", "3.1,5.*",
                        "+ those heads' attention probabilities, layer.{l}.attn.probs.head{h} [T, T] (recomputed "
                        "when the trace keeps attention on demand)"},
                    {"logits-at", "0,17,last",
                        "+ the model's logits and probabilities at those positions, logits.at and next_probs.at [n, V] "
                        "(a run kept on demand keeps no [T, V] tensor: it writes the last position's unless told)"}}
                + kMemoryBudget + kAttentionTrace,
            dumpCommand},
        {"render",
            {{"--spec FILE.json --out FILE.png|.svg|.pdf [--size 1200x800]",
                "draw a view described by a view spec, headless"}},
            Options {{"spec", "FILE.json", "the view spec (docs/view-spec.md)"},
                {"out", "FILE", "the picture: .png, .svg or .pdf"},
                {"size", "WxH", "its size in pixels (default 1200x800)"}}
                + kMemoryBudget + kWorkBudget,
            renderCommand},
        {"bench",
            {{"(--model M | --shape gpt2-small) --length N --repeat R [--no-trace]",
                "time the forward pass and print the median"}},
            kModel + kBenchShape
                + Options {{"no-trace", "", "keep no intermediate tensors"},
                    {"per-op", "", "also print each operation's share of the time"}}
                + kMemoryBudget + kAttentionTrace,
            benchCommand},
        {"bench-view",
            {{"[--model M] --length N --repeat R", "time switching a view's layer or head (its analysis made first)"}},
            kModel
                + Options {{"length", "N", "the input's length in tokens (default 2048)"},
                    {"repeat", "R", "switches timed (default 20)"}, {"view", "KIND", "the view (default attention)"},
                    {"size", "WxH", "the window's size"}}
                + kMemoryBudget,
            benchViewCommand},
        {"bench-train",
            {{"(--model M | --shape gpt2-small) --length N --repeat R",
                "time one training step: forward, backward, AdamW"}},
            kModel + kBenchShape, benchTrainCommand},
        {"generate",
            {{"--model M --text \"...\" [--steps N --temperature T --top-k K --top-p P --seed S]",
                "generate with a KV cache, printing its growth"}},
            kModel + kInput + Options {{"steps", "N", "tokens to generate (default 20; fewer when the context fills)"}}
                + kSampling,
            generateCommand},
        {"train",
            {{"--task T --out DIR [--steps N --lr LR --seed S --resume]",
                 "train a model, saving a resumable state in DIR every --save-every steps"},
                {"... [--reversible] [--positions KIND] [--experts E] [--memory-strategy S]",
                    "reversible blocks, a positional encoding, experts, a memory strategy"}},
            Options {{"task", "T", "the task: " + taskList() + " (typos fine-tunes a masked LM: give --from)"},
                {"out", "DIR", "where the training state and the model are saved"},
                {"eval-every", "K", "evaluate every K steps (default 250)"},
                {"eval-examples", "N", "held-out examples an evaluation (default 256)"},
                {"save-every", "K", "save the state every K steps (default 500)"},
                {"resume", "", "go on from the state saved in --out"}}
                + trainingRunCliOptions() + kMemoryStrategy,
            trainCommand},
        {"train-sae",
            {{"--model M --site HOOK --out DIR [--architecture topk|standard|jumprelu] [--width F] [--k K]",
                "train a sparse autoencoder on the activations at one site over the built-in corpus (or a text "
                "file), and save it as SAELens does: cfg.json and sae_weights.safetensors"}},
            kModel
                + Options {{"site", "HOOK",
                               "where it reads: blocks.L.hook_resid_pre, hook_resid_mid, hook_resid_post, "
                               "hook_attn_out, hook_mlp_out or ln2.hook_normalized (the feed-forward's input)"},
                    {"writes", "HOOK",
                        "train a transcoder: what it predicts from --site's rows, a site made after it "
                        "(blocks.L.hook_mlp_out from blocks.L.ln2.hook_normalized); standard or jumprelu (the "
                        "default)"},
                    {"out", "DIR", "where the dictionary is saved (absent, empty, or an earlier train-sae output)"},
                    {"architecture", "A",
                        "topk (the default: the k largest features), standard (ReLU with an L1 "
                        "penalty) or jumprelu (a learned threshold per feature)"},
                    {"width", "F", "features in the dictionary (default 8 · d_model)"},
                    {"k", "K", "topk: features active per row (default 8)"},
                    {"sparsity", "L", "standard and jumprelu: the sparsity penalty's coefficient (2, 0.5)"},
                    {"bandwidth", "E", "jumprelu: the threshold's straight-through kernel width (default 0.05)"},
                    {"threshold", "T", "jumprelu: every feature's threshold at the start (default 0.1)"},
                    {"auxk", "A",
                        "topk: the coefficient of AuxK, the auxiliary loss that gives dead features a gradient "
                        "(SAELens's is 1; default 0, none)"},
                    {"auxk-k", "K", "topk: the dead features AuxK reads in each row (default d_model / 2)"},
                    {"dead-after", "N", "a feature that fired in none of the last N steps is dead (default 100)"},
                    {"steps", "N", "Adam steps (default 2000)"}, {"batch", "B", "rows a step (default 256)"},
                    {"lr", "LR", "the peak learning rate (default 0.004)"},
                    {"seed", "S", "the dictionary's draw and the batches' order (default 0)"},
                    {"rows", "N", "activations to train on (default 100000)"},
                    {"text-file", "FILE", "read this text instead of the built-in corpus (its last tenth held out)"},
                    {"checkpoint-every", "N",
                        "save the dictionary so far and the run's state to --out every N steps (default a tenth of "
                        "the steps)"},
                    {"resume", "", "go on from the state saved in --out (the same command as the run it continues)"}},
            trainSaeCommand},
        {"features",
            {{"--model M --sae DIR|params.npz (--text \"...\" | --tokens 1,2) [--site HOOK] [--top K]",
                 "a sparse autoencoder's strongest features at each position of the input"},
                {"... --feature N [--json FILE]", "one feature's activation on every token"}},
            kModel
                + Options {{"sae", "DIR|FILE",
                               "a SAELens directory (cfg.json, sae_weights.safetensors), Gemma Scope's params.npz, "
                               "or the name of one the model ships (austen: blocks.2.hook_resid_post)"},
                    {"site", "HOOK", "where a params.npz reads (blocks.L.hook_resid_post …); a directory says it"},
                    {"tokens", "1,2,3", "the input as token ids"}, {"text", "\"...\"", "the input as text"},
                    {"text-file", "FILE", "the input read from a UTF-8 file"},
                    {"top", "K", "features listed at each position (default 5)"},
                    {"feature", "N", "one feature's activation on every token instead"},
                    {"json", "FILE", "also write what is listed as JSON"}},
            featuresCommand},
        {"feature-dashboard",
            {{"--model M --sae DIR|params.npz --feature N [--tokens N] [--text-file FILE] [--no-cache] [--json FILE]",
                "one feature's dashboard over a corpus: its strongest examples, how often and how strongly it fires, "
                "the tokens it raises and lowers, the nearest features; the corpus pass is timed and kept in the "
                "user's cache"}},
            kModel
                + Options {{"sae", "DIR|FILE", "the dictionary (as for features)"},
                    {"site", "HOOK", "where a params.npz reads (blocks.L.hook_resid_post …); a directory says it"},
                    {"feature", "N", "the feature (default 0)"},
                    {"tokens", "N", "corpus tokens the pass reads (default 100000, at most 10000000)"},
                    {"text-file", "FILE", "the corpus read from a UTF-8 file instead of the built-in one"},
                    {"top", "K", "examples kept per feature (default 20)"},
                    {"no-cache", "", "run the pass whatever is kept (to time it); it is kept again"},
                    {"json", "FILE", "also write what is listed as JSON"}},
            featureDashboardCommand},
        {"steer",
            {{"--model M --text \"...\" --sae DIR --feature N [--strength S | --clamp C] [--new-tokens N]",
                 "the model's continuation with and without a feature's decoder row added to the stream at the "
                 "dictionary's site (or the feature clamped at C), both greedy or sampled from the same seed"},
                {"--model M --text \"...\" --site HOOK --means-a \"a|b\" --means-b \"c|d\" [--strength S]",
                    "the same with the difference of the site's mean over two sets of prompts"}},
            kModel
                + Options {{"text", "\"...\"", "the prompt"}, {"tokens", "1,2,3", "the prompt as token ids"},
                    {"sae", "DIR|FILE", "the dictionary whose feature steers (as for features)"},
                    {"feature", "N", "the feature"},
                    {"strength", "S", "how many times the direction is added (default 4; 1 for means)"},
                    {"clamp", "C", "set the feature's activation to C instead of adding its direction"},
                    {"site", "HOOK", "where a difference of means (or a params.npz) reads"},
                    {"means-a", "\"a|b\"", "prompts whose mean site row is added"},
                    {"means-b", "\"c|d\"", "prompts whose mean site row is taken away"},
                    {"new-tokens", "N", "tokens to continue with (default 40)"}}
                + kSampling,
            steerCommand},
        {"memory",
            {{"(--model M | --shape LxHxD) --length T [--batch B] [--strategy S] [--json FILE]",
                 "one training step under a memory strategy, every allocation recorded"},
                {"--sweep-depth 2,4,8,16 --shape HxD --length T",
                    "peak activation bytes and step time against depth, every strategy"},
                {"--inversion-error (--model M | --shape LxHxD) --length T",
                    "a reversible model's rebuild error per block in float64/32/16, bfloat16"}},
            kModel
                + Options {{"shape", "LxHxD", "a byte-level model of L layers, H heads, width D (4x4x64)"},
                    {"length", "T", "tokens a sequence (an encoder-decoder: T source and T target tokens)"},
                    {"batch", "B", "sequences a step (default 1)"},
                    {"strategy", "plain|checkpoint|reversible", "the memory strategy"},
                    {"checkpoint-every", "K", "checkpointing keeps every K-th block boundary (default ⌈√L⌉)"},
                    {"ffn-chunks", "C", "run each feed-forward sub-layer in C chunks of rows"},
                    {"repeat", "R", "timed steps (default 3)"},
                    {"json", "FILE", "also write the recording, sweep or errors as JSON"},
                    {"sweep-depth", "2,4,8", "the depths swept"},
                    {"inversion-error", "", "measure a reversible model's rebuild error"}},
            memoryCommand},
        {"evaluate",
            {{"--model M --task T [--examples N --length-scale S --ablate-heads 0.1,1.3]",
                 "held-out loss and accuracy, on examples S times as long as training's"},
                {"--model M --head-importance [--ablation zero|mean --examples N]",
                    "each head switched off alone: the loss increase, layer × head"},
                {"--model M --layer-sweep [--examples N]",
                    "blocks pruned (LayerDrop): accuracy keeping the first k, or k spread evenly"},
                {"--model M --step-sweep [--examples N]",
                    "a shared block (the Universal Transformer) applied 1 … 2L times: accuracy at every depth"},
                {"--model M --token-sweep [--examples N]",
                    "tokens eliminated (PoWER-BERT): accuracy against work, by significance and at random"},
                {"--model M --by-position [--examples N]",
                    "lost in the middle: a retrieval model's accuracy by where the asked pair stands"}},
            kModel
                + Options {{"task", "T", "the task the examples come from"},
                    {"examples", "N", "held-out examples (default 256)"},
                    {"length-scale", "S", "examples S times as long as training's (extrapolation)"},
                    {"seed", "S", "the examples' seed"},
                    {"head-importance", "", "switch each head off alone and report what it costs"},
                    {"drop-layers", "1,3", "also score the model with these blocks left out"},
                    {"layer-sweep", "", "score the model's own task with 1 … L blocks kept, two ways"},
                    {"step-sweep", "", "score a shared model's own task with its block applied 1 … 2L times"},
                    {"token-sweep", "", "score a masked LM with tokens eliminated layer by layer, three ways"},
                    {"by-position", "", "a retrieval model's accuracy by the position of the asked pair"}}
                + kAblation,
            evaluateCommand},
        {"analyze-heads",
            {{"--model M --task T", "how much each head attends where a task's patterns say"},
                {"--model M --classify [--half N] [--seed S | --text \"...\"] [--json FILE]",
                    "what kind each head is: previous token, induction, duplicate token, first token, self, local "
                    "and copying scores on a repeated random sequence, or on a text and the same text again"}},
            kModel
                + Options {{"task", "T", "the task whose patterns are measured"},
                    {"examples", "N", "held-out examples (default 200)"},
                    {"classify", "", "every head's scores for each kind of head (analysis/headclasses.h)"},
                    {"half", "N", "with --classify: tokens in each half of the repeated sequence (default 32)"},
                    {"seed", "S", "with --classify: the draw of the sequence's tokens (default 0)"},
                    {"text", "\"...\"", "with --classify: the sequence's first half, instead of random tokens"},
                    {"json", "FILE", "with --classify: also write the scores as JSON"}},
            analyzeHeadsCommand},
        {"lesson",
            {{"check [FILE|DIR ...]",
                 "check lessons (default: the app's own, as the Lessons menu finds them); problems as file:line: "
                 "message"},
                {"render FILE --out DIR [--size 1200x800]", "every step's view as a PNG"},
                {"export FILE --out FILE.pdf | --out DIR --html [--no-answers]",
                    "the lesson to read offline: a PDF page per step, or a web page"}},
            Options {{"out", "PATH", "render: the directory; export: the PDF, or the page's directory with --html"},
                {"size", "WxH", "render: each picture's size (default 1200x800)"},
                {"html", "", "export an interactive web page instead of a PDF"},
                {"no-answers", "", "the students' copy: each question without its answer"}}
                + kMemoryBudget + kWorkBudget,
            lessonCommand},
        {"models", {{"", "list the built-in models"}}, {{"paths", "", "also print where each is"}}, modelsCommand},
        {"new-model",
            {{"--out DIR [--layers L --heads H --d-model D ... --seed S]",
                 "make a model with GPT-2's initialisation from a fixed seed"},
                {"--out DIR --family "
                 "llama|mistral|mixtral|qwen2|qwen3|qwen3_moe|olmo2|gemma2|gemma3_text|smollm3|phi3|gpt_oss|gpt_neox|"
                 "gpt_neo|t5 [--kv-heads N --tied]",
                    "the same in another family's layout, as its Hugging Face classes save it"}},
            {{"out", "DIR", "the model directory written"}, {"layers", "L", "blocks (default 2)"},
                {"heads", "H", "attention heads (default 4)"}, {"d-model", "D", "width (default 64)"},
                {"d-ff", "F", "the feed-forward width (default 4·D)"}, {"vocab", "V", "vocabulary size (default 256)"},
                {"context", "N", "positions (default 1024)"}, {"seed", "S", "the initialisation's seed"},
                {"activation", "gelu_new|relu", "the feed-forward activation"},
                {"layer-norm", "pre|post", "where the layer norms sit"},
                {"positions", "KIND", "the positional encoding (docs/models.md)"},
                {"bidirectional", "", "no causal mask (an encoder)"},
                {"tokenizer", "bytes|gpt2", "the tokenizer the model reads text with"},
                {"description", "TEXT", "the model's description"},
                {"family",
                    "llama|mistral|mixtral|qwen2|qwen3|qwen3_moe|olmo2|gemma2|gemma3_text|smollm3|phi3|gpt_oss|gpt_"
                    "neox|"
                    "gpt_neo|t5",
                    "another family's layout"},
                {"kv-heads", "N", "K/V heads (grouped-query attention)"},
                {"tied", "", "the output head tied to the embedding (T5: v1.0's ReLU)"},
                {"rope-theta", "X", "RoPE's base (default 10000)"},
                {"window", "W",
                    "gpt_neo's local layers' window (default 256), gemma2's and gemma3_text's sliding window (default "
                    "4096), gpt_oss's on every other layer (default 128), smollm3's on its NoPE layers, phi3's and "
                    "mixtral's on every layer (default none)"},
                {"experts", "E", "gpt_oss, mixtral, qwen3_moe: experts per layer (default 4), each --d-ff wide"},
                {"top-k", "K", "gpt_oss, mixtral, qwen3_moe: experts per token (default 2)"},
                {"nope-every", "N", "smollm3: every N-th layer does not turn q and k (default 4)"},
                {"partial-rotary", "F", "phi3: the fraction of each head's dimensions RoPE turns (default 1)"}},
            newModelCommand},
        {"save",
            {{"--model M --out FILE.gguf [--type f32|f16|q8_0|q4_0|q4_k]",
                "write the model as a GGUF file llama.cpp runs (built-in, trained, Hugging Face or GGUF models)"}},
            {{"model", "M", "the model: a built-in name, a model directory or a GGUF file"},
                {"out", "FILE.gguf", "the file written (an existing file only if save wrote it)"},
                {"format", "gguf", "the format (gguf, the default and only one)"},
                {"description", "TEXT", "the file's general.description (a built-in model's description)"},
                {"type", "f32|f16|q8_0|q4_0|q4_k",
                    "the matrices' type (default f32); norms, biases and positions stay f32, and rows that are not "
                    "a whole number of blocks fall back to q4_0 or f16"}},
            saveCommand},
        {"tokenize",
            {{"--model M|TOKENIZER --text \"...\" [--special] [--pieces]",
                "print the token ids; TOKENIZER: a built-in one (gpt2, mistral-7b, bert-base-uncased), any "
                "tokenizer directory or a GGUF file"}},
            {{"model", "M|TOKENIZER", "a model, a built-in tokenizer, a tokenizer directory or a GGUF file"},
                {"text", "\"...\"", "the text"}, {"special", "", "with the model's own special tokens"},
                {"pieces", "", "each token's readable text too"}},
            tokenizeCommand},
        {"train-tokenizer",
            {{"--out DIR [--vocab N] [--kind bpe|unigram] [--text-file FILE]",
                "train a SentencePiece tokenizer (byte fallback, NFKC) on the built-in corpus's training part or a "
                "text file, and write DIR/tokenizer.model"}},
            {{"out", "DIR", "where tokenizer.model is written (an existing one is never replaced)"},
                {"vocab", "N", "pieces, the 256 byte pieces and <unk> <s> </s> among them (default 2048)"},
                {"kind", "bpe|unigram", "BPE's merges (the default) or the Unigram language model"},
                {"text-file", "FILE", "train on this text instead of the built-in corpus (one sentence a line)"}},
            trainTokenizerCommand},
        {"bench-tokenizer",
            {{"--model M [--file TEXT] [--repeat R]", "measure the model's tokenizer: loading time, MB/s"}},
            kModel
                + Options {{"file", "TEXT", "the text encoded (default: 1 MiB of English prose)"},
                    {"repeat", "R", "timed passes (default 10)"}},
            benchTokenizerCommand},
        {"bench-attention",
            {{"--kernel KIND --length N --repeat R [--attention-param key=value ...] [--causal] [--sweep]",
                "time one attention head (d_head 64) with an efficient-attention kernel, KIND one of " + kernels
                    + "; --sweep times N = 256 … 16384 and fits the log-log slope"}},
            {{"kernel", "KIND", "the kernel: " + kernels}, {"length", "N", "tokens (default 4096)"},
                {"repeat", "R", "timed runs (default 5)"},
                {"attention-param", "key=value", "one of the kernel's parameters (repeat for more)"},
                {"causal", "", "under a causal mask"},
                {"sweep", "",
                    "time N = 256 … 16384, fit the log-log slope; another kernel than full is timed against full "
                    "attention at each N in the same process (its speed-up)"},
                {"json", "FILE", "with --sweep: write or merge the sweep into FILE"}},
            benchAttentionCommand},
        {"bench-approximation",
            {{"--kernel " + approximations + " [--length N --repeat R --seeds S] [--head-dim D] [--causal]",
                "time the approximation view's sweep (every k or feature count, S seeds each, against exact "
                "softmax) on N random tokens"}},
            {{"kernel", approximations, "the approximation swept"}, {"length", "N", "tokens (default 128)"},
                {"repeat", "R", "timed sweeps (default 5)"}, {"seeds", "S", "seeds a size (default 5)"},
                {"head-dim", "D", "the head's width (default 64)"}, {"causal", "", "a causal model's head"}},
            benchApproximationCommand},
        {"bench-pattern",
            {{"--kernel KIND [--length N --repeat R --cells G --causal --attention-param k=v]",
                "time computing a fixed sparse pattern as the pattern editor does, with its density and work; "
                "KIND one of "
                    + patterns}},
            {{"kernel", "KIND", "the pattern: " + patterns}, {"length", "N", "tokens (default 16384)"},
                {"repeat", "R", "timed runs (default 10)"},
                {"cells", "G", "the editor's picture, G × G cells (default 512)"},
                {"causal", "", "under a causal mask"},
                {"attention-param", "key=value", "one of the kernel's parameters (repeat for more)"}},
            benchPatternCommand},
        {"bench-gui",
            {{"[--quick]",
                "the longest time the window's event loop is blocked during heavy actions (a model load, "
                "a long run, every tab, training, pattern edits)"}},
            {{"quick", "", "smaller sizes, for a quick check"},
                {"same-priority", "", "run the app's background work at the window's priority (for comparison)"}},
            nullptr},
    };
}

// `text` broken into lines of at most `width` characters (counted as UTF-8 code points), each after `indent`. A
// synopsis breaks only between bracketed groups ("[--head-dim D]" stays whole).
// Columns on a terminal: one per UTF-8 character, not per byte ("λ", "…" and "⌈√L⌉" are one column each).
size_t columns(std::string_view s)
{
    return size_t(
        std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string wrapped(const std::string &text, size_t indent, size_t width, bool synopsis = false)
{
    std::vector<std::string> words {""};
    int depth = 0;
    for (char c : text) {
        if (c == ' ' && depth == 0) {
            words.emplace_back();
            continue;
        }
        if (synopsis)
            depth += (c == '[' || c == '(') - (c == ']' || c == ')');
        words.back() += c;
    }
    std::string out, line;
    for (const std::string &word : words) {
        if (!line.empty() && columns(line) + 1 + columns(word) > width) {
            out += line + "\n" + std::string(indent, ' ');
            line.clear();
        }
        line += (line.empty() ? "" : " ") + word;
    }
    return out + line + "\n";
}

constexpr size_t kHelpColumn = 42, kWidth = 118;

// From column `at` to the help column: spaces, or a new line when `at` leaves less than two spaces before it.
std::string toHelpColumn(size_t at)
{
    if (at + 2 > kHelpColumn)
        return std::string(1, '\n').append(kHelpColumn, ' ');
    return std::string(kHelpColumn - at, ' ');
}

// "  transformer-atlas NAME SYNOPSIS" and the summary in the help column (on the next line when it does not fit).
std::string formLines(const CliCommand &command, const CliForm &form)
{
    std::string head = "  "
        + wrapped("transformer-atlas " + command.name + (form.synopsis.empty() ? "" : " " + form.synopsis), 6,
            kWidth - 6, true);
    head.pop_back(); // its newline
    if (form.summary.empty())
        return head + "\n";
    const size_t lastLine = head.rfind('\n') == std::string::npos ? 0 : head.rfind('\n') + 1;
    return head + toHelpColumn(columns(std::string_view(head).substr(lastLine)))
        + wrapped(form.summary, kHelpColumn, kWidth - kHelpColumn);
}

const char *kModelsNote
    = "\nM is a built-in model name (see `models`) or a Hugging Face model directory (config.json and safetensors; "
      "the\nfamilies it reads, GPT-2, Llama, Qwen2, Qwen3, OLMo 2, Gemma 2 and 3, Mistral, Mixtral, BERT, T5, GPT-NeoX "
      "and "
      "GPT-Neo, are in "
      "docs/models.md).\n";

} // namespace

const std::vector<CliCommand> &cliCommands()
{
    static const std::vector<CliCommand> table = [] {
        std::vector<CliCommand> all = makeTable();
        // The view folders' subcommands (src/views/NAME/, their CLI part) follow the analyses' own.
        const auto research
            = std::find_if(all.begin(), all.end(), [](const CliCommand &c) { return c.name == "analyze-heads"; });
        std::vector<CliCommand> folders = viewFolderCommands();
        all.insert(research == all.end() ? all.end() : research + 1, folders.begin(), folders.end());
        return all;
    }();
    return table;
}

const CliCommand *findCliCommand(const std::string &name)
{
    for (const CliCommand &c : cliCommands())
        if (c.name == name)
            return &c;
    return nullptr;
}

std::string usageText()
{
    std::string out = "transformer-atlas: run small transformers one operation at a time.\n\n"
                      "  transformer-atlas                       open the desktop app on the built-in model\n";
    for (const CliCommand &c : cliCommands())
        for (const CliForm &form : c.forms)
            out += formLines(c, form);
    return out + "\n`transformer-atlas help COMMAND` (or COMMAND --help) lists every option of a command.\n"
        + kModelsNote;
}

std::string commandUsage(const std::string &name)
{
    const CliCommand *c = findCliCommand(name);
    if (!c)
        return {};
    std::string out = "transformer-atlas " + name + ":\n\n";
    for (const CliForm &form : c->forms)
        out += formLines(*c, form);
    out += "\nOptions:\n";
    for (const CliOption &o : c->options) {
        const std::string head = "    --" + o.name + (o.value.empty() ? "" : " " + o.value);
        out += head + toHelpColumn(columns(head)) + wrapped(o.help, kHelpColumn, kWidth - kHelpColumn);
    }
    return out + kModelsNote;
}

} // namespace atlas
