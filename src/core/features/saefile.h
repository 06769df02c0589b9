#pragma once

#include "features/saesite.h"
#include "features/saetraining.h"
#include "features/sparseautoencoder.h"
#include "model/model.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

// A dictionary on disk as SAELens saves one: a directory with cfg.json and sae_weights.safetensors (W_enc, b_enc,
// W_dec, b_dec, and threshold for JumpReLU). Both of SAELens's cfg.json forms are read: version 6's (the hook in
// "meta": {"hook_name"}, TopK's "k" beside "architecture": "topk") and version 5's (a top-level "hook_name"; TopK as
// "activation_fn_str": "topk" with "activation_fn_kwargs": {"k"}). Activations normalised at run time
// ("normalize_activations" other than "none") and hook_z reshaping are refused by name, as are gated SAEs.
// SAELens's transcoders ("architecture": "transcoder" or "jumprelu_transcoder", with "hook_name_out" and "d_out") are
// read too: their input is never shifted by b_dec; a skip transcoder's W_skip is refused by name.
namespace atlas {

struct SaeDirectory
{
    SparseAutoencoder sae;
    SaeSite site; // where it reads
    std::string modelName; // meta.model_name as written ("" when absent)
    nlohmann::json training; // what the app records of how it trained it ("atlas_training"; null when absent)
    // A transcoder's (Dunefsky et al. 2024; Gemma Scope's): where it writes, its prediction of that site's rows made
    // from `site`'s (the feed-forward's output from its input). None for a dictionary that rebuilds what it reads.
    std::optional<SaeSite> writes;
    const SaeSite &output() const { return writes ? *writes : site; }
    std::string sitesName() const { return atlas::sitesName(site, writes); }
    std::string kindName() const; // "topk", "jumprelu transcoder"
};

SaeDirectory loadSaeDirectory(const std::string &directory);
// Gemma Scope's params.npz (W_enc [d, F], W_dec [F, d], b_enc, b_dec, threshold): a JumpReLU dictionary whose input
// is not shifted by b_dec. The archive does not say where it reads: `site` does (Gemma Scope's "res" folders are
// hook_resid_post, "mlp" hook_mlp_out). At blocks.L.ln2.hook_normalized it is one of Gemma Scope's transcoders,
// writing blocks.L.hook_mlp_out.
SaeDirectory loadGemmaScope(const std::string &npz, const SaeSite &site);
// A dictionary at `path`: a SAELens directory, or Gemma Scope's params.npz, which reads at `site` (required for it:
// the archive does not say). Throws atlas::Error naming the path for anything else.
SaeDirectory loadDictionary(const std::string &path, const std::optional<SaeSite> &site = std::nullopt);

// The dictionaries shipped beside a model: the folders of <its directory>/saes, by name, sorted
// ("blocks.2.hook_resid_post"); none for a model made in memory or a GGUF file.
std::vector<std::string> modelDictionaries(const Model &model);
// Where the dictionary `sae` is: the path itself when it names a file or folder, else the model's own dictionary of
// that name (modelDictionaries), else `sae` unchanged (for the loader's message).
std::string dictionaryPath(const Model &model, const std::string &sae);

// What a dictionary's files are now: its absolute path, and the sizes and times of cfg.json and the weights (or of the
// archive). A dictionary trained again in the same place stamps otherwise, so it is read again and its corpus pass
// run again.
std::string dictionaryStamp(const std::string &path);

// Writes cfg.json (version 6's form, with "atlas_training") and sae_weights.safetensors into `directory`, which
// must be absent, empty or this program's earlier SAE output (io/stageddirectory.h): nothing else is replaced.
// With `state`, the dictionary is a training run's checkpoint: training_state.safetensors goes beside it, holding the
// state and `run`, what identifies the run (its options, site and rows), so that only the same run resumes it.
void saveSaeDirectory(const std::string &directory, const SaeDirectory &sae, const SaeTrainingState *state = nullptr,
    const std::string &run = {});
// The training state saveSaeDirectory left in `directory`; none when it holds no unfinished run. Throws atlas::Error
// naming the file and the problem when the state is damaged (a tensor missing or of the wrong shape, a moment that is
// not finite), and naming what differs when it belongs to another run than `run`.
std::optional<SaeTrainingState> readSaeTrainingState(const std::string &directory, const std::string &run);
// What identifies the run whose state `directory` holds ("" when it holds none, or its file cannot be read).
std::string savedTrainingRun(const std::string &directory);

} // namespace atlas
