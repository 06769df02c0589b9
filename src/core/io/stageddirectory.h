#pragma once

#include <string>

namespace atlas {

// A directory of files written as a whole (a dump: tensors plus the manifest that lists them): readers see the
// previous directory or the complete new one, never a mix, even when the writer is killed or the disk fills.
//
// The files go into a fresh sibling, PARENT/.NAME.tmp-XXXXXX. commit() swaps it with the target in one atomic
// step (renameat2 RENAME_EXCHANGE; where the file system lacks it, two renames, so that for an instant the target
// is absent but never mixed) and removes the old content. A staging directory that was never committed is removed
// by the destructor, or, if the process died, by the next StagedDirectory for the same target.
//
// The target must be absent, empty, or a directory this program wrote before as the same kind of output: it holds
// the marker `.transformer-atlas-output.json`, written at each commit, which names the program, the output kind
// ("dump", "lesson render" …) and every file written. Any other directory is refused, and so is one where a file
// the marker does not list has appeared since (a user's notes beside a dump): nothing this program did not write is
// ever deleted.
class StagedDirectory
{
public:
    static constexpr const char *kMarker = ".transformer-atlas-output.json";

    // `kind` names the output in the marker and in messages: "dump", "lesson render", "new-model".
    StagedDirectory(const std::string &target, const std::string &kind);
    ~StagedDirectory();
    StagedDirectory(const StagedDirectory &) = delete;
    StagedDirectory &operator=(const StagedDirectory &) = delete;

    // Where to write the files.
    const std::string &path() const { return m_staging; }
    // Writes the marker, then replaces the target with the staged files. Throws atlas::Error naming the target;
    // the target is then unchanged.
    void commit();

    // Why `directory` may not be replaced by an output of `kind`, or "" when it may (it is absent or empty, or this
    // program's own output of that kind with no other file in it).
    static std::string refusal(const std::string &directory, const std::string &kind);

private:
    std::string m_kind;
    std::string m_target;
    std::string m_staging;
    bool m_committed = false;
};

} // namespace atlas
