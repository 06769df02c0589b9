#include "util/threadpriority.h"

#include <atomic>

#ifdef __linux__
#include <cerrno>
#include <dirent.h>
#include <string>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace atlas {

namespace {

std::atomic<bool> s_enabled {true};

#ifdef __linux__
int threadId()
{
    return int(syscall(SYS_gettid));
}

// Raises the nice value of thread `tid` to at least `niceness` (raising it needs no privilege).
void lower(int tid, int niceness)
{
    errno = 0;
    const int current = getpriority(PRIO_PROCESS, id_t(tid));
    if (errno == 0 && current < niceness)
        setpriority(PRIO_PROCESS, id_t(tid), niceness);
}
#endif

} // namespace

void runAtBackgroundPriority()
{
#ifdef __linux__
    thread_local bool lowered = false;
    if (lowered || !s_enabled)
        return;
    lowered = true;
    lower(threadId(), backgroundNiceness);
#endif
}

void lowerThreadsStartedSoFar()
{
#ifdef __linux__
    if (!s_enabled)
        return;
    DIR *tasks = opendir("/proc/self/task");
    if (!tasks)
        return;
    const int self = threadId();
    while (const dirent *entry = readdir(tasks)) {
        const std::string name = entry->d_name;
        if (name.empty() || name[0] < '0' || name[0] > '9')
            continue;
        const int tid = std::stoi(name);
        if (tid != self)
            lower(tid, backgroundNiceness);
    }
    closedir(tasks);
#endif
}

void disableBackgroundPriority()
{
    s_enabled = false;
}

int currentThreadNiceness()
{
#ifdef __linux__
    errno = 0;
    const int current = getpriority(PRIO_PROCESS, id_t(threadId()));
    return errno == 0 ? current : 0;
#else
    return 0;
#endif
}

} // namespace atlas
