/* write_fail_shim.c: an LD_PRELOAD library for tests/fault_resultsdir.sh on
 * machines where a test cannot mount a small file system. Once the file named
 * by MB_SHIM_TRIGGER exists, every write(2) to a file under the directory
 * MB_SHIM_DIR fails with MB_SHIM_ERRNO ("ENOSPC" or "EROFS"): the results
 * directory filling up or turning read-only in the middle of a run, as the
 * process sees it.
 *
 * With MB_SHIM_NO_LINK set, link(2) fails with EPERM, as on file systems
 * without hard links (vfat, some FUSE and SMB mounts), and each refusal is
 * appended to the file MB_SHIM_NO_LINK names: tests/fault_concurrent.sh uses
 * it to run the results writer's O_EXCL fallback and to see that it ran.
 * A test tool only: nothing in mlbench knows about it. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_NEXT */
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef ssize_t (*write_fn)(int, const void *, size_t);

/* True when fd is a file under dir (its /proc/self/fd link starts with it). */
static int under_dir(int fd, const char *dir)
{
    char link[64], target[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n <= 0)
        return 0;
    target[n] = '\0';
    size_t len = strlen(dir);
    return strncmp(target, dir, len) == 0 && (target[len] == '/' || target[len] == '\0');
}

ssize_t write(int fd, const void *buf, size_t count)
{
    static write_fn real;
    if (real == NULL)
        real = (write_fn)dlsym(RTLD_NEXT, "write");
    const char *dir = getenv("MB_SHIM_DIR");
    const char *trigger = getenv("MB_SHIM_TRIGGER");
    if (dir && trigger && fd > 2 && access(trigger, F_OK) == 0 && under_dir(fd, dir)) {
        const char *e = getenv("MB_SHIM_ERRNO");
        errno = e && strcmp(e, "EROFS") == 0 ? EROFS : ENOSPC;
        return -1;
    }
    return real(fd, buf, count);
}

typedef int (*link_fn)(const char *, const char *);

int link(const char *from, const char *to)
{
    const char *log = getenv("MB_SHIM_NO_LINK");
    if (log && *log) {
        int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd >= 0) {
            dprintf(fd, "link refused: %s\n", to);
            close(fd);
        }
        errno = EPERM;
        return -1;
    }
    static link_fn real;
    if (real == NULL)
        real = (link_fn)dlsym(RTLD_NEXT, "link");
    return real(from, to);
}
