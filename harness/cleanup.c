#include "cleanup.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MB_CLEANUP_SLOTS 64
#define MB_CLEANUP_PATH 4096

/* Written only outside signal context; the handler only reads. `used` is set
 * last so the handler never sees a half-written path. */
static struct {
    char path[MB_CLEANUP_PATH];
    volatile sig_atomic_t used;
    bool is_dir;
} slots[MB_CLEANUP_SLOTS];

int mb_cleanup_add(const char *path, bool is_dir)
{
    if (strlen(path) >= MB_CLEANUP_PATH)
        return -1;
    for (int i = 0; i < MB_CLEANUP_SLOTS; i++) {
        if (!slots[i].used) {
            strcpy(slots[i].path, path);
            slots[i].is_dir = is_dir;
            slots[i].used = 1;
            return i;
        }
    }
    return -1;
}

void mb_cleanup_forget(int slot)
{
    if (slot >= 0 && slot < MB_CLEANUP_SLOTS)
        slots[slot].used = 0;
}

static void remove_all(void)
{
    for (int pass = 0; pass < 2; pass++) {
        for (int i = MB_CLEANUP_SLOTS - 1; i >= 0; i--) {
            if (!slots[i].used || slots[i].is_dir != (pass == 1))
                continue;
            if (slots[i].is_dir)
                rmdir(slots[i].path);
            else
                unlink(slots[i].path);
            slots[i].used = 0;
        }
    }
}

void mb_cleanup_run(void)
{
    remove_all();
}

static void on_signal(int sig)
{
    remove_all();
    signal(sig, SIG_DFL);
    raise(sig);
}

void mb_cleanup_install(void)
{
    static bool installed;
    if (installed)
        return;
    installed = true;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    /* `mlbench 2>&1 | head`: the reader goes, the next progress line raises
     * SIGPIPE, whose default action would leave the test files behind. */
    sigaction(SIGPIPE, &sa, NULL);
    atexit(mb_cleanup_run);
}

bool mb_owner_gone(long pid)
{
    if (pid <= 0 || pid == (long)getpid())
        return false;
    /* EPERM: the process exists (another user's): not gone. */
    return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}
