#include "train/corpus.h"

#include "io/atomicfile.h"
#include "io/resourcepaths.h"
#include "util/error.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <vector>

namespace atlas {

namespace {

namespace fs = std::filesystem;

const std::string &wholeCorpus()
{
    static const std::string text = [] {
        std::vector<fs::path> files;
        std::error_code ec;
        for (const auto &entry : fs::directory_iterator(corpusDirectory(), ec))
            if (entry.path().extension() == ".txt")
                files.push_back(entry.path());
        std::sort(files.begin(), files.end());
        std::string all;
        for (const fs::path &f : files)
            all += readFile(f.string()) + "\n";
        if (all.size() < 2000)
            throw Error(corpusDirectory() + ": the character task needs its corpus (.txt files), found "
                + std::to_string(all.size()) + " bytes");
        return all;
    }();
    return text;
}

} // namespace

std::string corpusDirectory()
{
    return resourceDirectory("ATLAS_CORPUS_DIR", "corpus");
}

const std::string &corpusTraining()
{
    static const std::string part = wholeCorpus().substr(0, wholeCorpus().size() * 9 / 10);
    return part;
}

const std::string &corpusHeldOut()
{
    static const std::string part = wholeCorpus().substr(wholeCorpus().size() * 9 / 10);
    return part;
}

} // namespace atlas
