/* blockdev.c: the block device behind a file and its read counters (see
 * blockdev.h). */
#include "blockdev.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
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
    /* A device can keep its counters at zero (an NVMe multipath head does by
     * default): its stat would say no read reached it. */
    char line[16];
    snprintf(probe, sizeof probe, "%s/queue/iostats", dir);
    if (mb_read_first_line(probe, line, sizeof line) && line[0] == '0')
        return mb_errf(err, MB_ESKIP, "block device %s keeps no I/O counters (%s is 0)", name, probe);
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

/* The mount that holds `dir`: the longest mount point that prefixes its real
 * path, from /proc/self/mountinfo; then the block device's model from sysfs. */
void mb_disk_of_dir(const char *dir, mb_disk_info *out)
{
    memset(out, 0, sizeof *out);
    out->rotational = -1;
    char real[PATH_MAX];
    if (dir == NULL || realpath(dir, real) == NULL) {
        snprintf(out->dir, sizeof out->dir, "%s", dir ? dir : ".");
        return;
    }
    snprintf(out->dir, sizeof out->dir, "%s", real);
    out->resolved = true;
    FILE *f = fopen("/proc/self/mountinfo", "r");
    char line[4096], best_mp[PATH_MAX] = "", best_fs[64] = "", best_src[PATH_MAX] = "";
    unsigned best_major = 0, best_minor = 0;
    size_t best_len = 0;
    while (f && fgets(line, sizeof line, f)) {
        unsigned id, parent, major, minor;
        char root[PATH_MAX], mp[PATH_MAX];
        if (sscanf(line, "%u %u %u:%u %4095s %4095s", &id, &parent, &major, &minor, root, mp) != 6)
            continue;
        size_t l = strlen(mp);
        bool prefix = strncmp(real, mp, l) == 0 && (real[l] == '/' || real[l] == '\0' || l == 1);
        if (!prefix || l < best_len)
            continue;
        char *sep = strstr(line, " - ");
        char fs[64] = "", src[PATH_MAX] = "";
        if (sep)
            sscanf(sep + 3, "%63s %4095s", fs, src);
        best_len = l;
        snprintf(best_mp, sizeof best_mp, "%s", mp);
        snprintf(best_fs, sizeof best_fs, "%s", fs);
        snprintf(best_src, sizeof best_src, "%s", src);
        best_major = major;
        best_minor = minor;
    }
    if (f)
        fclose(f);
    snprintf(out->mount_point, sizeof out->mount_point, "%s", best_mp);
    snprintf(out->filesystem, sizeof out->filesystem, "%s", best_fs);
    snprintf(out->device, sizeof out->device, "%s", best_src);
    /* /sys/dev/block/M:m -> .../block/vda or .../block/nvme0n1/nvme0n1p1 */
    char p[PATH_MAX + 64], target[PATH_MAX], buf[256];
    snprintf(p, sizeof p, "/sys/dev/block/%u:%u", best_major, best_minor);
    if (realpath(p, target)) {
        char dev[PATH_MAX];
        snprintf(dev, sizeof dev, "%s", target);
        /* A partition has a "partition" file: its parent is the disk. */
        snprintf(p, sizeof p, "%.4000s/partition", target);
        struct stat st;
        if (stat(p, &st) == 0) {
            char *slash = strrchr(dev, '/');
            if (slash)
                *slash = '\0';
        }
        const char *name = strrchr(dev, '/');
        snprintf(out->block_device, sizeof out->block_device, "%.255s", name ? name + 1 : dev);
        snprintf(p, sizeof p, "%.4000s/device/model", dev);
        if (mb_read_first_line(p, buf, sizeof buf))
            snprintf(out->model, sizeof out->model, "%s", buf);
        snprintf(p, sizeof p, "%.4000s/queue/rotational", dev);
        if (mb_read_first_line(p, buf, sizeof buf))
            out->rotational = atoi(buf) != 0;
        snprintf(p, sizeof p, "%.4000s/queue/scheduler", dev);
        if (mb_read_first_line(p, buf, sizeof buf))
            snprintf(out->scheduler, sizeof out->scheduler, "%s", buf);
    }
    struct statvfs vfs;
    if (statvfs(real, &vfs) == 0) {
        out->have_space = true;
        out->size_bytes = (double)vfs.f_blocks * vfs.f_frsize;
        out->free_bytes = (double)vfs.f_bavail * vfs.f_frsize;
    }
}
