#pragma once

#include <functional>
#include <string>
#include <vector>

namespace atlas {

// A directory of files written as a whole (a dump: tensors plus the manifest that lists them): readers see the
// previous directory or the complete new one, never a mix, even when the writer is killed or the disk fills.
//
// The files go into a fresh sibling, PARENT/.NAME.tmp-XXXXXX. commit() swaps it with the target in one atomic
// step (renameat2 RENAME_EXCHANGE; where the file system lacks it, two renames, so that for an instant the target
// is absent but never mixed) and removes the old content. A staging directory that was never committed is removed
// by the destructor, or, if the process died, by the next StagedDirectory for the same target.
//
// The target must be absent, empty, or a directory this program wrote before (it holds `marker`): a directory of
// other files is refused rather than replaced. Where the marker's name is common (a model's config.json), give the
// whole list instead: then the target may hold those files only.
class StagedDirectory
{
public:
    StagedDirectory(const std::string &target, const std::string &marker);
    StagedDirectory(const std::string &target, const std::vector<std::string> &ownFiles);
    ~StagedDirectory();
    StagedDirectory(const StagedDirectory &) = delete;
    StagedDirectory &operator=(const StagedDirectory &) = delete;

    // Where to write the files.
    const std::string &path() const { return m_staging; }
    // Replaces the target with the staged files. Throws atlas::Error naming the target; the target is then unchanged.
    void commit();

private:
    // Resolves the target, refuses one `acceptable` says is not ours, and makes the staging directory.
    void stage(const std::string &target, const std::function<std::string(const std::string &)> &refusal);

    std::string m_target;
    std::string m_staging;
    bool m_committed = false;
};

} // namespace atlas
