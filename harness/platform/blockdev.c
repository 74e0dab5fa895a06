/* blockdev.c: the block device behind a file and its read counters (see
 * blockdev.h). */
#include "blockdev.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "paths.h"

int mb_blockdev_parse_stat(const char *line, mb_blockdev_stat *out, mb_err *err)
{
    unsigned long long v[4];
    int n = sscanf(line, "%llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3]);
    if (n != 4)
        return mb_errf(err, MB_EFAIL, "not a block device stat line: '%.80s'", line);
    *out = (mb_blockdev_stat){ .reads = v[0], .read_merges = v[1], .read_sectors = v[2], .read_ticks = v[3] };
    return MB_OK;
}

void mb_blockdev_diff(const mb_blockdev_stat *before, const mb_blockdev_stat *after, mb_blockdev_delta *out)
{
    /* The counters only grow; a smaller value means a device reset (or
     * wrapped 32-bit counters on old kernels): count nothing then. */
#define D(f) (after->f >= before->f ? (double)(after->f - before->f) : 0.0)
    *out = (mb_blockdev_delta){ .reads = D(reads), .merges = D(read_merges), .sectors = D(read_sectors) };
#undef D
    if (out->reads > 0) {
        out->avg_request_kib = out->sectors * 512.0 / out->reads / 1024.0;
        out->merged_per_read = out->merges / out->reads;
    }
}

/* The last path component of a directory, into name. */
static void base_name(const char *dir, char *name, size_t len)
{
    const char *slash = strrchr(dir, '/');
    snprintf(name, len, "%s", slash ? slash + 1 : dir);
}

int mb_blockdev_of_devnum(const char *sysfs_root, unsigned major, unsigned minor, char *name, size_t name_len,
                          char *stat_path, size_t stat_len, mb_err *err)
{
    char link[PATH_MAX], dir[PATH_MAX], probe[PATH_MAX + 16];
    snprintf(link, sizeof link, "%s/dev/block/%u:%u", sysfs_root, major, minor);
    if (realpath(link, dir) == NULL)
        return mb_errf(err, MB_ESKIP, "no block device %u:%u (%s: %s)%s", major, minor, link, strerror(errno),
                       major == 0 ? ": an anonymous device (overlay, tmpfs, a network file system)" : "");
    snprintf(probe, sizeof probe, "%s/partition", dir);
    if (access(probe, F_OK) == 0) { /* a partition: the disk is its parent directory */
        char *slash = strrchr(dir, '/');
        if (slash)
            *slash = '\0';
    }
    base_name(dir, name, name_len);
    if ((size_t)snprintf(stat_path, stat_len, "%s/stat", dir) >= stat_len)
        return mb_errf(err, MB_EFAIL, "path too long: %s/stat", dir);
    if (access(stat_path, R_OK) != 0)
        return mb_errf(err, MB_ESKIP, "block device %s has no readable %s", name, stat_path);
    return MB_OK;
}

int mb_blockdev_of_path(const char *sysfs_root, const char *path, char *name, size_t name_len, char *stat_path,
                        size_t stat_len, mb_err *err)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return mb_errf(err, MB_ESYS, "stat %s: %s", path, strerror(errno));
    return mb_blockdev_of_devnum(sysfs_root, major(st.st_dev), minor(st.st_dev), name, name_len, stat_path,
                                 stat_len, err);
}

int mb_blockdev_read(const char *stat_path, mb_blockdev_stat *out, mb_err *err)
{
    char line[512];
    if (!mb_read_first_line(stat_path, line, sizeof line))
        return mb_errf(err, MB_ESYS, "cannot read %s", stat_path);
    return mb_blockdev_parse_stat(line, out, err);
}
