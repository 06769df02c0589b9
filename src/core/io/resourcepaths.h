#pragma once

#include <string>
#include <vector>

namespace atlas {

// Where the data the app ships is found (built-in models, tokenizers, the corpus, lessons, benchmark tables), for
// each `kind` (a folder name: "models", "lessons" …), first match wins:
//   $<environment> when it is set (a developer's or a lab's override);
//   <exe dir>/../share/transformer-atlas/<kind>, the installed layout (/usr/bin beside /usr/share), which a build
//   tree has too: CMake links <build>/share/transformer-atlas/<kind> to the source tree's folder.
// Nothing is compiled in, so an installed tree that is moved, or a package unpacked anywhere, still finds its data.
std::vector<std::string> resourceSearchPath(const char *environment, const char *kind);
// The first folder of resourceSearchPath that exists, else the installed layout's (for a message naming it).
std::string resourceDirectory(const char *environment, const char *kind);
// Where work kept between runs is cached (the feature dashboards' corpus passes): $ATLAS_CACHE_DIR, else
// $XDG_CACHE_HOME/transformer-atlas, else ~/.cache/transformer-atlas; "" when none of them can be named.
std::string userCacheDirectory();

} // namespace atlas
