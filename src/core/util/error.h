#pragma once

#include <stdexcept>
#include <string>

namespace atlas {

// Every failure the user can cause (bad file, bad shape, bad token, over budget) is an atlas::Error whose
// message names the file or field and the reason; the CLI prints it and exits non-zero, the app shows it.
class Error : public std::runtime_error
{
public:
    using std::runtime_error::runtime_error;
};

} // namespace atlas
