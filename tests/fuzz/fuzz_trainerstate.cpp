// A checkpoint's trainer.json from a stranger, beside a valid model and optimiser state: resumed only when every
// field is valid, else refused with atlas::Error.
#include "io/atomicfile.h"
#include "train/checkpointdirectory.h"
#include "train/trainer.h"
#include "util/error.h"

#include <cstdlib>
#include <filesystem>
#include <string>

#include <unistd.h>

namespace {

// A checkpoint of the reverse task after one step, made once in /dev/shm (memory, not disk).
std::string checkpointDirectory()
{
    const std::string dir = "/dev/shm/atlas-fuzz-trainerstate-" + std::to_string(::getpid());
    std::filesystem::remove_all(dir);
    const auto task = atlas::Task::create("reverse");
    atlas::TrainOptions o;
    o.steps = 10;
    o.batch = 2;
    atlas::Trainer trainer(std::make_shared<atlas::Model>(atlas::Model::random(task->modelConfig(), 1)), "reverse", o);
    trainer.step();
    trainer.save(dir);
    std::atexit([] { std::filesystem::remove_all("/dev/shm/atlas-fuzz-trainerstate-" + std::to_string(::getpid())); });
    return dir;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const std::string dir = checkpointDirectory();
    static const std::string state = atlas::CheckpointDirectory(dir).current() + "/trainer.json";
    atlas::writeFileAtomically(state, std::string_view(reinterpret_cast<const char *>(data), size));
    try {
        const auto trainer = atlas::Trainer::resume(dir);
        if (trainer->stepCount() > trainer->options().steps || trainer->options().batch < 1)
            __builtin_trap();
    } catch (const atlas::Error &) {
    }
    return 0;
}
