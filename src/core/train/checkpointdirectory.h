#pragma once

#include <string>

namespace atlas {

// Where a training run keeps its checkpoints, so that a checkpoint is always resumable as a whole: a save
// never overwrites the last good checkpoint, and a crash at any moment leaves either the old one or the new one.
//
//   DIR/checkpoint.json                    {"checkpoint": "checkpoints/step-000079-Ab12Cd", "step": 79}
//   DIR/checkpoints/step-000079-Ab12Cd/    config.json, model.safetensors, optimizer.safetensors, trainer.json
//   DIR/config.json, DIR/model.safetensors the latest model, so DIR opens as a model directory
//
// A save writes a fresh directory DIR/checkpoints/.tmp-XXXXXX, renames it to step-N-XXXXXX (an atomic rename to a
// name never used before), then replaces checkpoint.json atomically: that rename is the moment the new checkpoint
// becomes current. Only then are the top-level model files replaced (hard links to the checkpoint's files, each
// renamed into place) and older checkpoints removed. Orphans of an interrupted save (.tmp-* entries, checkpoints
// checkpoint.json does not name) are removed at the next save and when a run starts (removeStale).
//
// DIR may be a directory the user chose for other things too, so nothing is replaced or removed there that this
// program did not write: DIR must not hold a model unless it holds a training run's state (checkpoint.json, or
// trainer.json beside the model from before checkpoint sets), and a directory in checkpoints/ is removed only when
// it carries the checkpoint mark (.transformer-atlas-checkpoint, written first into every staged checkpoint) and
// holds nothing but a checkpoint's files.
class CheckpointDirectory
{
public:
    explicit CheckpointDirectory(std::string directory);

    const std::string &path() const { return m_directory; }
    // The directory holding the current checkpoint's four files: the one checkpoint.json names, or DIR itself for
    // a checkpoint written before checkpoint sets (trainer.json beside the model). Throws atlas::Error naming
    // checkpoint.json when it is unreadable or points outside DIR/checkpoints.
    std::string current() const;
    // Refuses a DIR that holds a model or checkpoints without a training run's state (a downloaded model, a user's
    // project), then creates DIR (if needed) and checks that files can be created in it, so that a run fails before
    // its first step rather than at its first save. Throws atlas::Error naming DIR and the reason.
    void checkWritable() const;
    // The same refusal alone (every save checks it): throws atlas::Error naming DIR and the file it would replace.
    void checkOwned() const;
    // A new directory for the next checkpoint's files, holding only the checkpoint mark.
    std::string stage() const;
    // Makes `staged` (from stage(), complete and flushed) the current checkpoint at `step`, then updates the
    // top-level model and removes older checkpoints. Throws atlas::Error; the previous checkpoint stays current.
    void commit(const std::string &staged, int step) const;
    // Removes what interrupted saves left behind. Never touches the current checkpoint or the user's other files.
    void removeStale() const;

private:
    std::string m_directory;
};

} // namespace atlas
