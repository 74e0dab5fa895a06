/* blockdev.h: the block device behind a file, and the read counters the
 * kernel keeps for it (/sys/block/DEV/stat, Documentation/block/stat.rst).
 *
 * The disk cases read these before and after their timed runs to report what
 * the device itself saw: how many read requests it completed, how many reads
 * the block layer merged into neighbours before they reached it, and so the
 * average request size. That is why mlbench and fio can differ on large
 * sequential reads of the same file (docs/disk.md).
 *
 * The device: stat(path).st_dev -> <sysfs>/dev/block/MAJ:MIN (a link into
 * /sys/devices/.../block/DISK[/PART]); a partition (it has a `partition`
 * file) counts on its own, but requests are merged and issued by the whole
 * disk, so its parent is used. overlay, tmpfs, NFS and the like have an
 * anonymous st_dev (major 0) with no such entry: no device, said in a note.
 */
#ifndef MB_BLOCKDEV_H
#define MB_BLOCKDEV_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "mb.h"

/* The disk behind a directory: its mount (the longest mount point prefixing
 * its real path, /proc/self/mountinfo), the block device's sysfs facts and
 * the file system's size. Best effort: what is unknown stays "" / -1. */
typedef struct mb_disk_info {
    char dir[PATH_MAX];          /* the real path, or the path given when it does not resolve */
    bool resolved;               /* the path resolved: the rest was looked up */
    char mount_point[PATH_MAX], filesystem[64], device[PATH_MAX];
    char block_device[256];      /* "vda", "nvme0n1" (a partition's disk); "" when none (tmpfs, overlay) */
    char model[256], scheduler[256];
    int rotational;              /* 1, 0; -1 unknown */
    bool have_space;
    double size_bytes, free_bytes;
} mb_disk_info;
void mb_disk_of_dir(const char *dir, mb_disk_info *out);

/* The read half of one stat line (field order of Documentation/block/stat.rst). */
typedef struct mb_blockdev_stat {
    unsigned long long reads;        /* read requests completed */
    unsigned long long read_merges;  /* reads merged into a neighbouring request */
    unsigned long long read_sectors; /* 512-byte sectors read */
    unsigned long long read_ticks;   /* ms spent on reads */
} mb_blockdev_stat;

/* Parses a /sys/block/DEV/stat line (at least its first 4 fields). MB_EFAIL
 * with the text for anything else. */
int mb_blockdev_parse_stat(const char *line, mb_blockdev_stat *out, mb_err *err);

/* What the device saw between two readings. */
typedef struct mb_blockdev_delta {
    double reads, merges, sectors;
    double avg_request_kib; /* sectors x 512 / reads / 1024; 0 without reads */
    double merged_per_read; /* merges / reads: reads folded into each request */
} mb_blockdev_delta;
void mb_blockdev_diff(const mb_blockdev_stat *before, const mb_blockdev_stat *after, mb_blockdev_delta *out);

/* The whole-disk device of a MAJ:MIN under sysfs_root: its name ("nvme0n1")
 * and the path of its stat file. MB_ESKIP when there is no such block device. */
int mb_blockdev_of_devnum(const char *sysfs_root, unsigned major, unsigned minor, char *name, size_t name_len,
                          char *stat_path, size_t stat_len, mb_err *err);
/* The same for the file system that holds `path`. */
int mb_blockdev_of_path(const char *sysfs_root, const char *path, char *name, size_t name_len, char *stat_path,
                        size_t stat_len, mb_err *err);
/* Reads and parses a stat file. */
int mb_blockdev_read(const char *stat_path, mb_blockdev_stat *out, mb_err *err);

#endif
