/* file_write.c: the one way mlbench writes a file a user keeps (results,
 * pages, gap and compare outputs): whole or not at all. A temporary file
 * beside the target, registered for removal on a signal, fsync'd, then
 * renamed (or linked, to claim a new name) over it, and the directory
 * fsync'd, so a crash or Ctrl-C never leaves half a file under the name. */
#include "file_write.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "services.h" /* mb_cleanup_add, mb_cleanup_forget */

static int fsync_dir_of(const char *path)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == dir)
        dir[1] = '\0';
    else if (slash)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

/* Writes text to a new temporary file next to path (registered for removal
 * on SIGINT/SIGTERM, so a signal during the write leaves no *.tmp.PID). */
static int write_temp(const char *tmp, const char *text, int *slot, mb_err *err)
{
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGPIPE);
    /* Created and registered with the cleanup signals blocked: the table
     * never lacks a file we made nor holds one we did not. */
    sigprocmask(SIG_BLOCK, &set, &old);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int open_errno = errno;
    *slot = fd >= 0 ? mb_cleanup_add(tmp, false) : -1;
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (fd < 0) {
        errno = open_errno;
        return mb_errno(err, MB_ESYS, "cannot create %s", tmp);
    }
    size_t len = strlen(text), off = 0;
    while (off < len) {
        ssize_t w = write(fd, text + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO;
            mb_errno(err, MB_ESYS, "cannot write %s", tmp);
            goto fail;
        }
        off += (size_t)w;
    }
    if (fsync(fd) != 0) {
        mb_errno(err, MB_ESYS, "fsync %s", tmp);
        goto fail;
    }
    int rc = close(fd);
    fd = -1;
    if (rc != 0) {
        mb_errno(err, MB_ESYS, "close %s", tmp);
        goto fail;
    }
    return MB_OK;
fail:
    if (fd >= 0)
        close(fd);
    return err ? err->code : MB_ESYS;
}

/* Moves the written tmp to path only when path does not exist yet: link()
 * fails on an existing name, atomically. File systems without hard links
 * (EPERM, ENOTSUP: vfat, some FUSE and SMB mounts) claim the name with an
 * O_EXCL placeholder instead, replaced at once by the rename. EEXIST in
 * errno when the name is taken. */
static int claim_name(const char *tmp, const char *path, mb_err *err)
{
    if (link(tmp, path) == 0) {
        unlink(tmp);
        return MB_OK;
    }
    int e = errno;
    if (e != EEXIST && (e == EPERM || e == ENOTSUP || e == EOPNOTSUPP || e == EMLINK || e == ENOSYS)) {
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        e = errno;
        if (fd >= 0) {
            close(fd);
            if (rename(tmp, path) == 0)
                return MB_OK;
            e = errno;
            unlink(path);
        }
    }
    int rc = mb_errno(err, e == EEXIST ? MB_EUSAGE : MB_ESYS, "cannot create %s", path);
    errno = e;
    return rc;
}

/* exclusive: link() instead of rename(), so an existing path is never
 * replaced (MB_EUSAGE with errno EEXIST): two runs that picked the same
 * default name cannot overwrite each other's results. */
static int write_file_atomic(const char *path, const char *text, bool exclusive, mb_err *err)
{
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof tmp)
        return mb_errf(err, MB_EUSAGE, "path too long: %s", path);
    int slot = -1;
    int rc = write_temp(tmp, text, &slot, err);
    if (rc != MB_OK)
        goto fail;
    if (exclusive) {
        rc = claim_name(tmp, path, err);
        if (rc != MB_OK)
            goto fail;
    } else if (rename(tmp, path) != 0) {
        rc = mb_errno(err, MB_ESYS, "cannot rename %s to %s", tmp, path);
        goto fail;
    }
    mb_cleanup_forget(slot);
    fsync_dir_of(path);
    return MB_OK;
fail: {
    int e = errno;
    unlink(tmp);
    mb_cleanup_forget(slot);
    errno = e;
    return rc;
}
}

int mb_write_file_atomic(const char *path, const char *text, mb_err *err)
{
    return write_file_atomic(path, text, false, err);
}

int mb_write_file_new(const char *path, const char *text, mb_err *err)
{
    return write_file_atomic(path, text, true, err);
}
