#pragma once

#include <string>

namespace atlas {

// The character-level task's text: every .txt file in the corpus folder (resources/corpus, installed as
// share/transformer-atlas/corpus: public-domain texts, see the README there), joined in name order. The last tenth is
// held out for evaluation.
const std::string &corpusTraining();
const std::string &corpusHeldOut();
std::string corpusDirectory();

} // namespace atlas
