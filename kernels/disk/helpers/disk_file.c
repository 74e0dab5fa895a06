/* disk_file.c: the test file, its pattern, page-cache control and the parts
 * of a disk case the three backends share (see disk_file.h). */
#include "disk_file.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "formulas.h"
#include "host.h" /* mb_ram_available_bytes */
#include "pcie.h" /* mb_sysfs_root */
#include "services.h"

#define WORDS_PER_SECTOR (DISK_SECTOR / 8)
#define WRITE_CHUNK (8LL << 20)
/* Free space left to the file system beyond the test file. */
#define FREE_RESERVE (64LL << 20)
#define MAX_SHARED_FILES 16
#define LAT_CAP (1LL << 20)
#define ITER_CAP 4096
#define SAMPLE_BYTES (64LL << 20)
#define MIB(x) ((double)(x) / 1048576.0)

/* ---- the pattern --------------------------------------------------------------- */

static inline uint64_t stamp_word(uint64_t seed, uint64_t sector)
{
    uint64_t s = seed ^ (sector * 0xD6E8FEB86659FD93ull);
    return mb_splitmix64(&s);
}

static void fill_sector(uint64_t seed, uint64_t sector, uint64_t *w)
{
    w[0] = sector;
    w[1] = stamp_word(seed, sector);
    uint64_t state = w[1];
    for (int i = 2; i < WORDS_PER_SECTOR; i++)
        w[i] = mb_splitmix64(&state);
}

void mb_disk_pattern_fill(uint64_t seed, long long offset, void *buf, size_t len)
{
    uint64_t sector = (uint64_t)offset / DISK_SECTOR;
    unsigned char *p = buf;
    uint64_t w[WORDS_PER_SECTOR];
    for (size_t done = 0; done < len; done += DISK_SECTOR, sector++) {
        fill_sector(seed, sector, w);
        memcpy(p + done, w, DISK_SECTOR);
    }
}

static inline bool stamp_ok(uint64_t seed, uint64_t sector, const unsigned char *p)
{
    uint64_t w[2];
    memcpy(w, p, sizeof w);
    return w[0] == sector && w[1] == stamp_word(seed, sector);
}

long long mb_disk_pattern_check_stamps(uint64_t seed, long long offset, const void *buf, size_t len,
                                    size_t step)
{
    const unsigned char *p = buf;
    size_t n = len / DISK_SECTOR;
    uint64_t first = (uint64_t)offset / DISK_SECTOR;
    if (n == 0)
        return -1;
    if (step == 0)
        step = 1;
    for (size_t i = 0; i < n; i += step)
        if (!stamp_ok(seed, first + i, p + i * DISK_SECTOR))
            return (long long)(i * DISK_SECTOR);
    if ((n - 1) % step != 0 && !stamp_ok(seed, first + n - 1, p + (n - 1) * DISK_SECTOR))
        return (long long)((n - 1) * DISK_SECTOR);
    return -1;
}

long long mb_disk_pattern_compare(uint64_t seed, long long offset, const void *buf, size_t len)
{
    const unsigned char *p = buf;
    uint64_t sector = (uint64_t)offset / DISK_SECTOR;
    uint64_t w[WORDS_PER_SECTOR];
    for (size_t done = 0; done < len; done += DISK_SECTOR, sector++) {
        fill_sector(seed, sector, w);
        if (memcmp(p + done, w, DISK_SECTOR) != 0) {
            const unsigned char *e = (const unsigned char *)w;
            for (size_t i = 0; i < DISK_SECTOR; i++)
                if (p[done + i] != e[i])
                    return (long long)(done + i);
        }
    }
    return -1;
}

/* ---- small I/O helpers ------------------------------------------------------------- */

int mb_disk_pread_full(int fd, void *buf, size_t len, long long offset, mb_err *err)
{
    size_t done = 0;
    while (done < len) {
        ssize_t r = pread(fd, (char *)buf + done, len - done, offset + (long long)done);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return mb_errno(err, MB_ESYS, "read of %zu bytes at offset %lld", len, offset);
        if (r == 0)
            return mb_errf(err, MB_EVERIFY, "read at offset %lld ended after %zu of %zu bytes",
                           offset, done, len);
        done += (size_t)r;
    }
    return MB_OK;
}

static int write_full(int fd, const void *buf, size_t len, long long offset, mb_err *err,
                      const char *path)
{
    size_t done = 0;
    while (done < len) {
        ssize_t r = pwrite(fd, (const char *)buf + done, len - done, offset + (long long)done);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return mb_errno(err, errno == ENOSPC ? MB_ESKIP : MB_ESYS, "writing the test file %s",
                            path);
        done += (size_t)r;
    }
    return MB_OK;
}

/* The cleanup table must never hold a path we did not create, and a path we
 * created must be in it before a signal can end the process: both happen
 * with the signals that run the cleanup blocked. */
static void block_signals(sigset_t *old)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGPIPE);
    sigprocmask(SIG_BLOCK, &set, old);
}

static void restore_signals(const sigset_t *old)
{
    sigprocmask(SIG_SETMASK, old, NULL);
}

bool mb_disk_path_on_memory_fs(const char *path)
{
    struct statfs sf;
    if (statfs(path, &sf) != 0)
        return false;
    return sf.f_type == TMPFS_MAGIC || sf.f_type == RAMFS_MAGIC;
}

static void dir_of(const char *path, char *buf, size_t len)
{
    snprintf(buf, len, "%s", path);
    char *slash = strrchr(buf, '/');
    if (!slash)
        snprintf(buf, len, ".");
    else if (slash == buf)
        buf[1] = '\0';
    else
        *slash = '\0';
}

/* ---- the test file ----------------------------------------------------------------- */

static int check_free_space(const char *path, long long size, mb_err *err)
{
    char dir[4096];
    dir_of(path, dir, sizeof dir);
    struct statvfs sv;
    if (statvfs(dir, &sv) != 0)
        return mb_errno(err, MB_ESYS, "statvfs %s", dir);
    long long avail = (long long)sv.f_bavail * (long long)sv.f_frsize;
    if (avail < size + FREE_RESERVE)
        return mb_errf(err, MB_ESKIP,
                       "not enough free space in %s for the %.1f MiB test file: %.1f MiB free, "
                       "need %.1f MiB (file + %.0f MiB reserve); use --disk-dir or a smaller file_size",
                       dir, MIB(size), MIB(avail), MIB(size + FREE_RESERVE), MIB(FREE_RESERVE));
    return MB_OK;
}

static int fill_file(int fd, const char *path, long long size, uint64_t seed, mb_err *err)
{
    /* Reserve the blocks first so a full disk fails now, not after minutes. */
    int rc = posix_fallocate(fd, 0, size);
    if (rc == ENOSPC)
        return mb_errf(err, MB_ESKIP, "no space for the %.1f MiB test file %s", MIB(size), path);
    unsigned char *chunk = malloc(WRITE_CHUNK);
    if (!chunk)
        return mb_errf(err, MB_ESYS, "out of memory for the write buffer");
    rc = MB_OK;
    for (long long off = 0; off < size && rc == MB_OK; off += WRITE_CHUNK) {
        long long len = size - off < WRITE_CHUNK ? size - off : WRITE_CHUNK;
        /* A tail shorter than a sector is filled from a whole sector. */
        long long gen = (len + DISK_SECTOR - 1) / DISK_SECTOR * DISK_SECTOR;
        if (gen > WRITE_CHUNK) {
            rc = mb_errf(err, MB_EFAIL, "internal: chunk overflow");
            break;
        }
        mb_disk_pattern_fill(seed, off, chunk, (size_t)gen);
        rc = write_full(fd, chunk, (size_t)len, off, err, path);
    }
    free(chunk);
    if (rc != MB_OK)
        return rc;
    if (fsync(fd) != 0)
        return mb_errno(err, MB_ESYS, "fsync %s", path);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    return MB_OK;
}

int mb_disk_file_create(const char *path, long long size, uint64_t seed, disk_file *out, mb_err *err)
{
    memset(out, 0, sizeof *out);
    out->cleanup_slot = -1;
    out->lock_fd = -1;
    if (strlen(path) >= sizeof out->path)
        return mb_errf(err, MB_EUSAGE, "test file path too long: %s", path);
    int rc = check_free_space(path, size, err);
    if (rc != MB_OK)
        return rc;

    sigset_t old;
    block_signals(&old);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    int open_errno = errno;
    int slot = fd >= 0 ? mb_cleanup_add(path, false) : -1;
    restore_signals(&old);
    if (fd < 0) {
        errno = open_errno;
        if (errno == EEXIST)
            return mb_errf(err, MB_EUSAGE, "refusing to overwrite %s: it already exists", path);
        return mb_errno(err, (errno == EACCES || errno == EROFS) ? MB_ESKIP : MB_ESYS,
                        "cannot create the test file %s", path);
    }
    snprintf(out->path, sizeof out->path, "%s", path);
    out->cleanup_slot = slot;
    /* Held until the file is removed (or we exit): a later run's sweep never
     * takes a live file for a stale one, even across PID namespaces. */
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        rc = mb_errno(err, MB_ESYS, "cannot lock the test file %s", path);
        goto fail;
    }
    out->lock_fd = dup(fd);
    if (slot < 0) {
        rc = mb_errf(err, MB_ESYS, "cleanup table full: not creating %s", path);
        goto fail;
    }
    rc = fill_file(fd, path, size, seed, err);
    if (rc != MB_OK)
        goto fail;
    close(fd);
    out->size = size;
    out->seed = seed;
    out->owned = true;
    out->memory_fs = mb_disk_path_on_memory_fs(path);
    return MB_OK;

fail:
    close(fd);
    mb_disk_file_remove(out);
    return rc;
}

void mb_disk_file_remove(disk_file *f)
{
    if (f->path[0] && !f->kept)
        unlink(f->path);
    if (f->lock_fd >= 0)
        close(f->lock_fd);
    f->lock_fd = -1;
    if (f->cleanup_slot >= 0)
        mb_cleanup_forget(f->cleanup_slot);
    f->cleanup_slot = -1;
    f->path[0] = '\0';
}

/* The run's shared files: created on first use, kept until exit. */
static struct {
    disk_file files[MAX_SHARED_FILES];
    char dir_of_file[MAX_SHARED_FILES][4096];
    int n;
    char tmpdir[4096];
    int tmpdir_slot;
    disk_file user;
} shared = { .tmpdir_slot = -1 };

/* ---- stale files of killed runs ------------------------------------------------- */

/* Parses "<digits>" up to stop (or the end); -1 when it is not that. */
static long long parse_digits(const char *s, const char **rest)
{
    if (!isdigit((unsigned char)*s))
        return -1;
    long long v = 0;
    while (isdigit((unsigned char)*s)) {
        if (v > (LLONG_MAX - 9) / 10)
            return -1;
        v = v * 10 + (*s++ - '0');
    }
    *rest = s;
    return v;
}

/* "mlbench-disk-<pid>-<size>.dat": the pid, else -1. */
static long stale_file_pid(const char *name)
{
    static const char prefix[] = "mlbench-disk-";
    if (strncmp(name, prefix, sizeof prefix - 1) != 0)
        return -1;
    const char *p;
    long long pid = parse_digits(name + sizeof prefix - 1, &p);
    if (pid <= 0 || *p != '-')
        return -1;
    long long size = parse_digits(p + 1, &p);
    if (size <= 0 || strcmp(p, ".dat") != 0)
        return -1;
    return (long)pid;
}

/* "mlbench-disk-<pid>-XXXXXX" (mkdtemp's six characters): the pid, else -1. */
static long stale_dir_pid(const char *name)
{
    static const char prefix[] = "mlbench-disk-";
    if (strncmp(name, prefix, sizeof prefix - 1) != 0)
        return -1;
    const char *p;
    long long pid = parse_digits(name + sizeof prefix - 1, &p);
    if (pid <= 0 || *p != '-' || strlen(p + 1) != 6)
        return -1;
    for (const char *q = p + 1; *q; q++)
        if (!isalnum((unsigned char)*q))
            return -1;
    return (long)pid;
}

/* Removes path when it is a regular file whose owner is gone and whose lock
 * is free (an unlocked file of a live pid could be one being created). */
static bool remove_if_stale(const char *path, long pid)
{
    if (!mb_owner_gone(pid))
        return false;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return false;
    struct stat st;
    bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && flock(fd, LOCK_EX | LOCK_NB) == 0 &&
              unlink(path) == 0;
    close(fd);
    if (ok)
        mb_notice("removed %s, a stale test file of mlbench process %ld (no longer running)", path, pid);
    return ok;
}

int mb_disk_sweep_stale(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return 0;
    int removed = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char path[4096];
        if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path)
            continue;
        long pid = stale_file_pid(e->d_name);
        if (pid > 0) {
            removed += remove_if_stale(path, pid);
            continue;
        }
        pid = stale_dir_pid(e->d_name);
        struct stat st;
        if (pid <= 0 || !mb_owner_gone(pid) || lstat(path, &st) != 0 || !S_ISDIR(st.st_mode))
            continue;
        /* Our temporary directory: its test files, then the directory,
         * which rmdir removes only when nothing else is in it. */
        removed += mb_disk_sweep_stale(path);
        if (rmdir(path) == 0)
            mb_notice("removed %s, a stale temporary directory of mlbench process %ld", path, pid);
    }
    closedir(d);
    return removed;
}

/* Once per directory and run, before the first test file goes there. */
static void sweep_once(const char *dir)
{
    static char swept[MAX_SHARED_FILES][4096];
    static int n;
    for (int i = 0; i < n; i++)
        if (strcmp(swept[i], dir) == 0)
            return;
    if (n < MAX_SHARED_FILES)
        snprintf(swept[n++], sizeof swept[0], "%s", dir);
    mb_disk_sweep_stale(dir);
}

static int ensure_tmpdir(mb_err *err)
{
    if (shared.tmpdir[0])
        return MB_OK;
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd))
        return mb_errno(err, MB_ESYS, "getcwd");
    char tmpl[4096];
    if (snprintf(tmpl, sizeof tmpl, "%s/mlbench-disk-%ld-XXXXXX", cwd, (long)getpid()) >= (int)sizeof tmpl)
        return mb_errf(err, MB_EUSAGE, "current directory path too long");
    sigset_t old;
    block_signals(&old);
    char *made = mkdtemp(tmpl);
    int made_errno = errno;
    int slot = made ? mb_cleanup_add(made, true) : -1;
    restore_signals(&old);
    if (!made) {
        errno = made_errno;
        return mb_errno(err, (errno == EACCES || errno == EROFS) ? MB_ESKIP : MB_ESYS,
                        "cannot create a temporary directory in %s for the disk test file "
                        "(choose one with --disk-dir)", cwd);
    }
    if (slot < 0) {
        rmdir(made);
        return mb_errf(err, MB_ESYS, "cleanup table full: not creating a temporary directory");
    }
    snprintf(shared.tmpdir, sizeof shared.tmpdir, "%s", made);
    shared.tmpdir_slot = slot;
    return MB_OK;
}

static int acquire_user_file(const char *path, const disk_file **out, mb_err *err)
{
    if (strcmp(shared.user.path, path) == 0) {
        *out = &shared.user;
        return MB_OK;
    }
    if (strlen(path) >= sizeof shared.user.path)
        return mb_errf(err, MB_EUSAGE, "--disk-file path too long");
    /* O_RDONLY only: a user's file is never written, truncated or created. */
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return mb_errno(err, MB_EUSAGE, "--disk-file %s", path);
    struct stat st;
    int rc = fstat(fd, &st);
    close(fd);
    if (rc != 0)
        return mb_errno(err, MB_ESYS, "stat %s", path);
    if (!S_ISREG(st.st_mode))
        return mb_errf(err, MB_EUSAGE, "--disk-file %s: not a regular file", path);
    if (st.st_size < DISK_SECTOR)
        return mb_errf(err, MB_EUSAGE, "--disk-file %s: %lld bytes, too small", path,
                       (long long)st.st_size);
    memset(&shared.user, 0, sizeof shared.user);
    snprintf(shared.user.path, sizeof shared.user.path, "%s", path);
    shared.user.size = st.st_size;
    shared.user.owned = false;
    shared.user.cleanup_slot = -1;
    shared.user.lock_fd = -1;
    shared.user.memory_fs = mb_disk_path_on_memory_fs(path);
    *out = &shared.user;
    return MB_OK;
}

int mb_disk_file_acquire(long long size, const disk_file **out, mb_err *err)
{
    const char *user_file = mb_disk_file(), *user_dir = mb_disk_dir();
    if (user_file)
        return acquire_user_file(user_file, out, err);

    const char *dir;
    if (user_dir) {
        struct stat st;
        if (stat(user_dir, &st) != 0)
            return mb_errno(err, MB_EUSAGE, "--disk-dir %s", user_dir);
        if (!S_ISDIR(st.st_mode))
            return mb_errf(err, MB_EUSAGE, "--disk-dir %s: not a directory", user_dir);
        dir = user_dir;
        sweep_once(dir);
    } else {
        sweep_once(".");
        int rc = ensure_tmpdir(err);
        if (rc != MB_OK)
            return rc;
        dir = shared.tmpdir;
    }
    for (int i = 0; i < shared.n; i++) {
        if (shared.files[i].size == size && strcmp(shared.dir_of_file[i], dir) == 0) {
            *out = &shared.files[i];
            return MB_OK;
        }
    }
    if (shared.n == MAX_SHARED_FILES)
        return mb_errf(err, MB_EUSAGE, "more than %d different disk file sizes in one run",
                       MAX_SHARED_FILES);
    char path[4096];
    /* A file kept on purpose (MLBENCH_DISK_KEEP) is named apart, so that a
     * later run's sweep of stale mlbench-disk-* files leaves it alone. */
    const char *keep = getenv("MLBENCH_DISK_KEEP");
    bool keeping = keep && strcmp(keep, "1") == 0 && user_dir;
    if (snprintf(path, sizeof path, "%s/mlbench-%s-%ld-%lld.dat", dir, keeping ? "kept" : "disk",
                 (long)getpid(), size) >= (int)sizeof path)
        return mb_errf(err, MB_EUSAGE, "--disk-dir path too long");
    /* The seed makes files of different runs differ: a stale file from
     * another run can never pass verification by accident. */
    uint64_t seed = 0x6d6c62656e636830ull ^ ((uint64_t)getpid() << 20) ^ (uint64_t)size;
    disk_file *f = &shared.files[shared.n];
    int rc = mb_disk_file_create(path, size, seed, f, err);
    if (rc != MB_OK)
        return rc;
    snprintf(shared.dir_of_file[shared.n], sizeof shared.dir_of_file[0], "%s", dir);
    shared.n++;
    /* MLBENCH_DISK_KEEP=1 with --disk-dir keeps the finished file after exit
     * (its path is in each case's "file" info), so scripts/fio_compare.py can
     * run fio on the very file mlbench read. A partial file is still removed. */
    if (keeping) {
        mb_cleanup_forget(f->cleanup_slot);
        f->cleanup_slot = -1;
        f->kept = true;
    }
    *out = f;
    return MB_OK;
}

void mb_disk_files_release(void)
{
    for (int i = 0; i < shared.n; i++)
        mb_disk_file_remove(&shared.files[i]);
    shared.n = 0;
    if (shared.tmpdir[0]) {
        rmdir(shared.tmpdir);
        mb_cleanup_forget(shared.tmpdir_slot);
        shared.tmpdir[0] = '\0';
        shared.tmpdir_slot = -1;
    }
    memset(&shared.user, 0, sizeof shared.user);
}

void mb_disk_target_dir(char *buf, size_t len)
{
    const char *user_file = mb_disk_file(), *user_dir = mb_disk_dir();
    if (user_file)
        dir_of(user_file, buf, len);
    else if (user_dir)
        snprintf(buf, len, "%s", user_dir);
    else if (shared.tmpdir[0])
        snprintf(buf, len, "%s", shared.tmpdir);
    else if (!getcwd(buf, len))
        snprintf(buf, len, ".");
}

/* ---- page cache ---------------------------------------------------------------------- */

int mb_disk_resident_fraction(int fd, long long size, double *fraction, mb_err *err)
{
    long page = sysconf(_SC_PAGESIZE);
    void *map = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED)
        return mb_errno(err, MB_ESYS, "mmap for mincore");
    long long pages = (size + page - 1) / page, resident = 0;
    /* In slices, so the vector stays small for a large --disk-file. */
    const long long slice = 1LL << 18;
    unsigned char *vec = malloc((size_t)slice);
    int rc = MB_OK;
    if (!vec) {
        rc = mb_errf(err, MB_ESYS, "out of memory for mincore");
        goto out;
    }
    for (long long first = 0; first < pages; first += slice) {
        long long n = pages - first < slice ? pages - first : slice;
        if (mincore((char *)map + first * page, (size_t)(n * page), vec) != 0) {
            rc = mb_errno(err, MB_ESYS, "mincore");
            goto out;
        }
        for (long long i = 0; i < n; i++)
            resident += vec[i] & 1;
    }
    *fraction = (double)resident / (double)pages;
out:
    free(vec);
    munmap(map, (size_t)size);
    return rc;
}

int mb_disk_make_cold(int fd, long long size, double *resident, mb_err *err)
{
    /* Dirty pages cannot be dropped; fsync writes them back first. A
     * read-only descriptor may fsync on Linux; failure only leaves pages
     * resident, which the residency check reports. */
    fsync(fd);
    int rc = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    if (rc != 0) {
        errno = rc;
        return mb_errno(err, MB_ESYS, "posix_fadvise(DONTNEED)");
    }
    return mb_disk_resident_fraction(fd, size, resident, err);
}

int mb_disk_make_cached(int fd, long long size, double *resident, mb_err *err)
{
    unsigned char *buf = malloc(WRITE_CHUNK);
    if (!buf)
        return mb_errf(err, MB_ESYS, "out of memory for the read buffer");
    int rc = MB_OK;
    /* Reclaim can take pages back while the file is being read (memory
     * pressure, or proactive reclaim such as DAMON in some VMs): read it
     * again, at most three times, until 99% is resident. */
    for (int pass = 0; pass < 3 && rc == MB_OK; pass++) {
        for (long long off = 0; off < size && rc == MB_OK; off += WRITE_CHUNK) {
            long long len = size - off < WRITE_CHUNK ? size - off : WRITE_CHUNK;
            rc = mb_disk_pread_full(fd, buf, (size_t)len, off, err);
        }
        if (rc == MB_OK)
            rc = mb_disk_resident_fraction(fd, size, resident, err);
        if (rc == MB_OK && *resident >= 0.99)
            break;
    }
    free(buf);
    return rc;
}

/* ---- a disk case ------------------------------------------------------------------------ */

static int open_direct(disk_case *c, mb_err *err)
{
    const char *path = c->file->path;
    if (c->file->memory_fs)
        return mb_errf(err, MB_ESKIP,
                       "direct mode: %s is on tmpfs/ramfs, which has no device: O_DIRECT reads "
                       "would measure memory", path);
    struct statx stx;
    if (statx(AT_FDCWD, path, 0, STATX_DIOALIGN, &stx) == 0 && (stx.stx_mask & STATX_DIOALIGN)) {
        if (stx.stx_dio_mem_align == 0)
            return mb_errf(err, MB_ESKIP, "direct mode: the file system of %s does not support O_DIRECT",
                           path);
        if (stx.stx_dio_mem_align > DISK_BUF_ALIGN ||
            (stx.stx_dio_offset_align && c->bs % stx.stx_dio_offset_align))
            return mb_errf(err, MB_ESKIP,
                           "direct mode: block_size %lld is not a multiple of the O_DIRECT alignment "
                           "%u that the file system of %s requires", c->bs, stx.stx_dio_offset_align,
                           path);
    }
    c->fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
    if (c->fd < 0) {
        if (errno == EINVAL)
            return mb_errf(err, MB_ESKIP,
                           "direct mode: the file system of %s does not support O_DIRECT "
                           "(open: Invalid argument)", path);
        return mb_errno(err, MB_ESYS, "open %s with O_DIRECT", path);
    }
    return MB_OK;
}

static int pick_samples(disk_case *c, uint64_t seed, mb_err *err)
{
    long long n = SAMPLE_BYTES / c->bs;
    if (n > 16)
        n = 16;
    if (n < 4)
        n = 4;
    c->n_samples = (int)n;
    c->sample_off = calloc((size_t)n, sizeof *c->sample_off);
    if (!c->sample_off)
        return mb_errf(err, MB_ESYS, "out of memory");
    uint64_t rng = seed ^ 0x5A5A5A5A12345678ull;
    for (long long i = 0; i < n; i++) {
        /* First and last block always: the ends are where offset bugs show. */
        long long block = i == 0 ? 0 : i == 1 ? c->nblocks - 1
                         : (long long)(((unsigned __int128)mb_splitmix64(&rng) * (uint64_t)c->nblocks) >> 64);
        c->sample_off[i] = block * c->bs;
    }
    if (c->file->owned)
        return MB_OK;
    /* A user's file has no pattern: a first reference read through the page
     * cache is what the benchmark's reads are compared with. */
    if (posix_memalign((void **)&c->sample_ref, DISK_BUF_ALIGN, (size_t)(n * c->bs)) != 0) {
        c->sample_ref = NULL;
        return mb_errf(err, MB_ESYS, "out of memory for the reference blocks");
    }
    for (long long i = 0; i < n; i++) {
        int rc = mb_disk_pread_full(c->ref_fd, c->sample_ref + i * c->bs, (size_t)c->bs,
                                 c->sample_off[i], err);
        if (rc != MB_OK)
            return rc;
    }
    return MB_OK;
}

static int read_params(const mb_params *p, unsigned has, disk_case *c, mb_err *err)
{
    c->bs = mb_param_int(p, "block_size");
    if (c->bs % DISK_SECTOR)
        return mb_errf(err, MB_EUSAGE, "parameter block_size: %lld is not a multiple of %d", c->bs,
                       DISK_SECTOR);
    c->random = strcmp(mb_param_str(p, "pattern"), "random") == 0;
    c->mode = DISK_MMAP;
    if (has & DISK_HAS_MODE)
        c->mode = strcmp(mb_param_str(p, "mode"), "direct") == 0 ? DISK_DIRECT : DISK_CACHED;
    c->qd = (has & DISK_HAS_QD) ? (int)mb_param_int(p, "qd") : 1;
    c->advice = MADV_NORMAL;
    if (has & DISK_HAS_ADVICE) {
        const char *a = mb_param_str(p, "advice");
        c->advice = strcmp(a, "random") == 0       ? MADV_RANDOM
                    : strcmp(a, "sequential") == 0 ? MADV_SEQUENTIAL
                                                   : MADV_NORMAL;
    }
    if ((long long)c->qd * c->bs > (1LL << 30))
        return mb_errf(err, MB_EUSAGE, "parameters qd x block_size: %lld bytes of buffers, at most 1 GiB",
                       (long long)c->qd * c->bs);
    /* seed 0: fresh offsets every case (like fio's randrepeat=0), so blocks
     * an earlier run read are not warm in a device or hypervisor cache. */
    c->seed = (uint64_t)mb_param_int(p, "seed");
    if (c->seed == 0) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t mix = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^ ((uint64_t)getpid() << 12);
        c->seed = mb_splitmix64(&mix) & ((1ull << 53) - 1);
        if (c->seed == 0)
            c->seed = 1;
    }
    c->rng = c->seed;
    c->ios_per_iter = mb_param_int(p, "ios_per_iter");
    return MB_OK;
}

/* The device behind the file, for its read counters. Not finding one
 * (overlay, tmpfs, NFS) is no error: the report says why there are none. */
static void blockdev_find(disk_case *c)
{
    mb_err why = { 0 };
    if (mb_blockdev_of_path(mb_sysfs_root(), c->file->path, c->dev_name, sizeof c->dev_name, c->dev_stat,
                            sizeof c->dev_stat, &why) != MB_OK) {
        c->dev_stat[0] = '\0';
        snprintf(c->dev_note, sizeof c->dev_note, "no block device counters for %.40s: %.240s", c->file->path,
                 why.msg);
    }
}

static bool blockdev_sample(const disk_case *c, mb_blockdev_stat *out)
{
    mb_err ignored = { 0 };
    return c->dev_stat[0] && mb_blockdev_read(c->dev_stat, out, &ignored) == MB_OK;
}

int mb_disk_case_setup(const mb_params *p, unsigned has, disk_case **out, mb_err *err)
{
    disk_case *c = calloc(1, sizeof *c);
    if (!c)
        return mb_errf(err, MB_ESYS, "out of memory");
    c->fd = c->ref_fd = -1;
    int rc = read_params(p, has, c, err);
    if (rc != MB_OK)
        goto fail;
    /* Refuse tmpfs before a test file is written there for nothing. */
    rc = mb_disk_case_probe(p, has, err);
    if (rc != MB_OK)
        goto fail;
    rc = mb_disk_file_acquire(mb_param_int(p, "file_size"), &c->file, err);
    if (rc != MB_OK)
        goto fail;
    blockdev_find(c);
    c->nblocks = c->file->size / c->bs;
    if (c->nblocks < 1) {
        rc = mb_errf(err, MB_ESKIP, "%s has %lld bytes, less than one block of %lld", c->file->path,
                     c->file->size, c->bs);
        goto fail;
    }
    if (c->ios_per_iter == 0) {
        /* 16 MiB makes the clock and the harness negligible; 32 x qd bounds
         * what the queue's drain at the end of an io_uring batch can cost
         * (under qd/2 reads' time of 32 qd: < 2%). */
        long long n = (16LL << 20) / c->bs;
        if (n < 16)
            n = 16;
        if (c->qd > 1 && n < 32LL * c->qd)
            n = 32LL * c->qd;
        c->ios_per_iter = n;
    }
    c->ref_fd = open(c->file->path, O_RDONLY | O_CLOEXEC);
    if (c->ref_fd < 0) {
        rc = mb_errno(err, MB_ESYS, "open %s", c->file->path);
        goto fail;
    }
    if (c->mode == DISK_MMAP && c->file->memory_fs) {
        rc = mb_errf(err, MB_ESKIP,
                     "mmap: %s is on tmpfs/ramfs: its pages cannot leave memory, so a cold "
                     "mapping is impossible", c->file->path);
        goto fail;
    }
    if (c->mode == DISK_DIRECT) {
        rc = open_direct(c, err);
        if (rc != MB_OK)
            goto fail;
    } else {
        c->fd = open(c->file->path, O_RDONLY | O_CLOEXEC);
        if (c->fd < 0) {
            rc = mb_errno(err, MB_ESYS, "open %s", c->file->path);
            goto fail;
        }
    }
    size_t nbuf = (size_t)c->qd * (size_t)c->bs;
    if (posix_memalign((void **)&c->bufs, DISK_BUF_ALIGN, nbuf) != 0) {
        c->bufs = NULL;
        rc = mb_errf(err, MB_ESKIP, "cannot allocate %zu bytes of read buffers", nbuf);
        goto fail;
    }
    /* Touch the buffers now so no page fault lands in a timed read; the
     * fill value is not a valid stamp, so a read that never lands is caught. */
    memset(c->bufs, 0xA5, nbuf);
    c->check = malloc((size_t)c->bs);
    c->slot_off = malloc((size_t)c->qd * sizeof *c->slot_off);
    c->lat.cap = LAT_CAP;
    c->lat.us = malloc((size_t)c->lat.cap * sizeof *c->lat.us);
    c->iter_iops = calloc(ITER_CAP, sizeof *c->iter_iops);
    if (!c->check || !c->slot_off || !c->lat.us || !c->iter_iops) {
        rc = mb_errf(err, MB_ESYS, "out of memory");
        goto fail;
    }
    memset(c->lat.us, 0, (size_t)c->lat.cap * sizeof *c->lat.us); /* preallocated: no faults later */
    for (int i = 0; i < c->qd; i++)
        c->slot_off[i] = -1;
    rc = pick_samples(c, c->rng, err);
    if (rc != MB_OK)
        goto fail;

    if (c->mode == DISK_CACHED) {
        /* Not mb_mem_fits: the file is held by the page cache, not allocated
         * by the process, and a tenth of what is available is kept back. */
        long long avail = mb_ram_available_bytes();
        if (avail > 0 && c->file->size > avail / 10 * 9) {
            rc = mb_errf(err, MB_ESKIP,
                         "cached mode: the %.1f MiB file does not fit in the page cache (%.1f MiB "
                         "of memory available)", MIB(c->file->size), MIB(avail));
            goto fail;
        }
        rc = mb_disk_make_cached(c->ref_fd, c->file->size, &c->resident, err);
        if (rc == MB_OK && c->resident < 0.99)
            snprintf(c->note, sizeof c->note,
                     "only %.1f%% of the file stayed in the page cache after reading it all: "
                     "part of this is device time", 100.0 * c->resident);
    } else {
        rc = mb_disk_make_cold(c->ref_fd, c->file->size, &c->resident, err);
        if (rc == MB_OK && c->mode == DISK_MMAP && c->resident > 0.01)
            snprintf(c->note, sizeof c->note,
                     "the page cache could not be made cold: %.1f%% of the file stayed resident",
                     100.0 * c->resident);
    }
    if (rc != MB_OK)
        goto fail;
    *out = c;
    return MB_OK;

fail:
    mb_disk_case_free(c);
    return rc;
}

void mb_disk_case_free(disk_case *c)
{
    if (!c)
        return;
    if (c->fd >= 0)
        close(c->fd);
    if (c->ref_fd >= 0)
        close(c->ref_fd);
    free(c->bufs);
    free(c->check);
    free(c->slot_off);
    free(c->sample_off);
    free(c->sample_ref);
    free(c->lat.us);
    free(c->iter_iops);
    free(c);
}

int mb_disk_case_probe(const mb_params *p, unsigned has, mb_err *why)
{
    if (!p)
        return MB_OK;
    bool direct = (has & DISK_HAS_MODE) && strcmp(mb_param_str(p, "mode"), "direct") == 0;
    bool mmap_mode = (has & DISK_HAS_ADVICE) != 0;
    if (!direct && !mmap_mode)
        return MB_OK;
    const char *user_file = mb_disk_file();
    char dir[4096];
    mb_disk_target_dir(dir, sizeof dir);
    const char *where = user_file ? user_file : dir;
    if (mb_disk_path_on_memory_fs(where)) {
        if (direct)
            return mb_errf(why, MB_ESKIP,
                           "direct mode: %s is on tmpfs/ramfs, which has no device: O_DIRECT reads "
                           "would measure memory", where);
        return mb_errf(why, MB_ESKIP,
                       "mmap: %s is on tmpfs/ramfs: its pages cannot leave memory, so a cold "
                       "mapping is impossible", where);
    }
    if (direct && user_file) {
        int fd = open(user_file, O_RDONLY | O_DIRECT | O_CLOEXEC);
        if (fd < 0 && errno == EINVAL)
            return mb_errf(why, MB_ESKIP,
                           "direct mode: the file system of %s does not support O_DIRECT "
                           "(open: Invalid argument)", user_file);
        if (fd >= 0)
            close(fd);
    }
    return MB_OK;
}

int mb_disk_case_check_read(disk_case *c, const unsigned char *buf, long long offset, size_t step,
                         mb_err *err)
{
    if (!c->file->owned)
        return MB_OK;
    long long at = mb_disk_pattern_check_stamps(c->file->seed, offset, buf, (size_t)c->bs, step);
    if (at < 0)
        return MB_OK;
    uint64_t got[2];
    memcpy(got, buf + at, sizeof got);
    long long sector = (offset + at) / DISK_SECTOR;
    mb_err e = { 0 };
    mb_errf(&e, MB_EVERIFY,
            "read of %lld bytes at offset %lld: the sector at file offset %lld carries stamp "
            "(%#llx, %#llx), expected sector %lld (%#llx, %#llx)",
            c->bs, offset, offset + at, (unsigned long long)got[0], (unsigned long long)got[1],
            sector, (unsigned long long)sector, (unsigned long long)stamp_word(c->file->seed, (uint64_t)sector));
    if (!c->bad) {
        c->bad = 1;
        c->bad_err = e;
    }
    return mb_errf(err, MB_EVERIFY, "%s", e.msg);
}

/* Compares bytes [start, start + len) of a block read at `offset` (buf
 * holds the whole block) with ref (len bytes), or with the pattern. */
static int compare_range(disk_case *c, const unsigned char *buf, long long offset, long long start,
                         long long len, const unsigned char *ref, const char *against, mb_err *err)
{
    const unsigned char *got = buf + start;
    long long at = -1;
    unsigned expected = 0;
    if (ref) {
        if (memcmp(got, ref, (size_t)len) != 0) {
            for (at = 0; got[at] == ref[at]; at++)
                ;
            expected = ref[at];
        }
    } else {
        at = mb_disk_pattern_compare(c->file->seed, offset + start, got, (size_t)len);
        if (at >= 0) {
            unsigned char sector[DISK_SECTOR];
            long long pos = offset + start + at;
            long long first = pos / DISK_SECTOR * DISK_SECTOR;
            mb_disk_pattern_fill(c->file->seed, first, sector, DISK_SECTOR);
            expected = sector[pos - first];
        }
    }
    if (at < 0) {
        c->checked_bytes_full += len;
        return MB_OK;
    }
    at += start;
    mb_err e = { 0 };
    mb_errf(&e, MB_EVERIFY,
            "read of %lld bytes at offset %lld: byte %lld (file offset %lld) is %#x, %s has %#x",
            c->bs, offset, at, offset + at, buf[at], against, expected);
    if (!c->bad) {
        c->bad = 1;
        c->bad_err = e;
    }
    return mb_errf(err, MB_EVERIFY, "%s", e.msg);
}

int mb_disk_case_check_slots(disk_case *c, mb_err *err)
{
    /* One buffer per iteration, and a window of at most 64 KiB of it, moving
     * on every iteration: the device must not idle long between timed
     * batches (a device or hypervisor reading ahead meanwhile would make the
     * next batch look faster), and over many iterations every part of a
     * block and every buffer gets compared. */
    const long long window = c->bs < DISK_CHECK_WINDOW ? c->bs : DISK_CHECK_WINDOW;
    long long n = c->n_iters > 0 ? c->n_iters - 1 : 0;
    int slot = (int)(n % c->qd);
    long long start = (n / c->qd) % (c->bs / window) * window;
    long long off = c->slot_off[slot];
    if (off < 0)
        return MB_OK;
    const unsigned char *buf = c->bufs + (size_t)slot * (size_t)c->bs;
    const unsigned char *ref = NULL;
    if (!c->file->owned) {
        int rc = mb_disk_pread_full(c->ref_fd, c->check, (size_t)window, off + start, err);
        if (rc != MB_OK)
            return rc;
        ref = c->check;
    }
    return compare_range(c, buf, off, start, window, ref,
                         ref ? "a buffered re-read of the same offset" : "the written pattern", err);
}

int mb_disk_case_verify(disk_case *c, disk_read_fn read, void *ctx, mb_err *err)
{
    if (c->bad)
        return mb_errf(err, MB_EVERIFY, "%s", c->bad_err.msg);
    if (c->total_ios == 0)
        return mb_errf(err, MB_ESKIP, "no reads were timed");
    for (int i = 0; i < c->n_samples; i++) {
        long long off = c->sample_off[i];
        /* The read goes into the case's first buffer (aligned for O_DIRECT). */
        unsigned char *buf = c->bufs;
        memset(buf, 0xA5, (size_t)c->bs); /* a read that never lands must not pass */
        int rc = read(ctx, c, buf, off, err);
        if (rc != MB_OK)
            return rc;
        const unsigned char *ref = c->sample_ref ? c->sample_ref + (size_t)i * (size_t)c->bs : NULL;
        rc = compare_range(c, buf, off, 0, c->bs, ref,
                           ref ? "the reference read made at setup" : "the written pattern", err);
        if (rc != MB_OK)
            return rc;
    }
    return MB_OK;
}

int mb_disk_case_sync_read_done(disk_case *c, const unsigned char *buf, long long off, double seconds,
                                mb_err *err)
{
    disk_lat_record(&c->lat, seconds);
    return mb_disk_case_check_read(c, buf, off, DISK_STAMP_STEP, err);
}

int mb_disk_case_sync_iteration_done(disk_case *c, double start, long long last_off, double *seconds,
                                     mb_err *err)
{
    double timed = mb_now() - start;
    c->slot_off[0] = last_off;
    mb_disk_case_account(c, timed);
    *seconds = timed;
    return mb_disk_case_check_slots(c, err);
}

void mb_disk_case_account(disk_case *c, double seconds)
{
    c->total_ios += c->ios_per_iter;
    c->total_seconds += seconds;
    if (seconds > 0)
        c->iter_iops[c->n_iters++ % ITER_CAP] = (double)c->ios_per_iter / seconds;
    if (c->have_dev_before) {
        c->have_dev_after = blockdev_sample(c, &c->dev_after);
        c->ios_at_dev_after = c->total_ios;
    }
}

double mb_disk_case_work(const disk_case *c)
{
    return (double)c->ios_per_iter * (double)c->bs;
}

void mb_disk_case_timing_start(disk_case *c)
{
    c->lat.count = 0;
    c->n_iters = 0;
    c->have_dev_before = blockdev_sample(c, &c->dev_before);
    c->ios_at_dev_before = c->total_ios;
    c->have_dev_after = false;
}

/* What the device saw during the timed runs: its completed read requests,
 * the reads merged into neighbours and the average request size. */
static void report_blockdev(const disk_case *c, mb_report *r)
{
    if (!(c->have_dev_before && c->have_dev_after)) {
        if (c->dev_note[0])
            mb_report_note(r, "%s", c->dev_note);
        return;
    }
    mb_blockdev_delta d;
    mb_blockdev_diff(&c->dev_before, &c->dev_after, &d);
    /* Every direct read reaches the device as a request or merged into one;
     * fewer counted means these counters are not of the reads (a stacked
     * device counting elsewhere, a reset) or the file system served some from
     * its cache: no figure, a note with both numbers. */
    long long issued = c->ios_at_dev_after - c->ios_at_dev_before;
    if (c->mode == DISK_DIRECT && d.reads + d.merges < (double)issued) {
        mb_report_note(r, "no block device counters: %.63s counted %.0f requests and %.0f merges over the timed "
                          "runs for %lld direct reads (a device whose counters miss them, or a file system that "
                          "served some from its cache)",
                       c->dev_name, d.reads, d.merges, issued);
        return;
    }
    char info[700];
    snprintf(info, sizeof info, "%.63s (%.511s over the timed runs; device-wide: other I/O to it counts too)",
             c->dev_name, c->dev_stat);
    mb_report_info(r, "block_device", info);
    mb_report_metric(r, "device_reads", d.reads, "requests");
    mb_report_metric(r, "device_merges", d.merges, "reads");
    if (d.reads > 0) {
        mb_report_metric(r, "device_avg_request_kib", d.avg_request_kib, "KiB");
        /* Requests well above the read size: the block layer merged them. */
        if (c->mode == DISK_DIRECT && d.avg_request_kib > 1.5 * (double)c->bs / 1024.0)
            mb_report_note(r, "the device saw %.0f KiB requests on average for %.0f KiB reads: the block layer "
                              "merged neighbouring reads (%.2f merges per request); fio may not get these merges "
                              "(docs/disk.md)",
                           d.avg_request_kib, (double)c->bs / 1024.0, d.merged_per_read);
    }
}

void mb_disk_case_report(disk_case *c, mb_report *r, const char *engine_note)
{
    /* The median over iterations, like the rate the harness reports (the
     * latest ITER_CAP iterations; warm-up ones too when there are fewer). */
    long long ni = c->n_iters < ITER_CAP ? c->n_iters : ITER_CAP;
    if (ni > 0)
        mb_report_metric(r, "iops", mb_median(c->iter_iops, (int)ni), "IO/s");
    long long n = c->lat.count < c->lat.cap ? c->lat.count : c->lat.cap;
    if (n > 0) {
        mb_report_metric(r, "latency_p50", mb_percentile(c->lat.us, (int)n, 50.0), "us");
        mb_report_metric(r, "latency_p99", mb_percentile(c->lat.us, (int)n, 99.0), "us");
        mb_report_metric(r, "latency_p99.9", mb_percentile(c->lat.us, (int)n, 99.9), "us");
        mb_report_metric(r, "latency_samples", (double)n, "reads");
    }
    if (c->mode == DISK_CACHED) {
        mb_report_metric(r, "resident_fraction", c->resident, "fraction");
        /* Memory pressure or proactive reclaim (e.g. DAMON) can take pages
         * back while the case runs: look again at the end. */
        double end = 1;
        mb_err ignored = { 0 };
        if (mb_disk_resident_fraction(c->ref_fd, c->file->size, &end, &ignored) == MB_OK) {
            mb_report_metric(r, "resident_fraction_end", end, "fraction");
            if (end < 0.99 && c->resident >= 0.99)
                mb_report_note(r, "only %.1f%% of the file was still in the page cache at the end "
                                  "(reclaimed while the case ran): some reads went to the device",
                               100.0 * end);
        }
    }
    else if (c->mode == DISK_MMAP)
        mb_report_metric(r, "resident_fraction", c->resident_max > c->resident ? c->resident_max : c->resident,
                         "fraction");
    mb_report_metric(r, "file_size", (double)c->file->size, "byte");
    mb_report_info(r, "file", c->file->path);
    char seed[32];
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)c->seed);
    mb_report_info(r, "seed", seed);
    mb_report_info(r, "offsets", c->random ? "uniform random, block-aligned, with replacement"
                                           : "consecutive blocks, wrapping at the end of the file");
    if (c->file->owned)
        mb_report_info(r, "verification",
                       "pattern stamps checked on every read; last read of each buffer per iteration "
                       "and sample blocks in verify() compared byte for byte with the pattern");
    else
        mb_report_info(r, "verification",
                       "--disk-file: no known pattern; the last read of each buffer per iteration is "
                       "compared with a buffered re-read, sample blocks with a reference read made at setup");
    if (c->note[0])
        mb_report_note(r, "%s", c->note);
    report_blockdev(c, r);
    if (engine_note && engine_note[0])
        mb_report_note(r, "%s", engine_note);
    if (!c->file->owned)
        mb_report_note(r, "--disk-file %s read-only: verified against reference reads of the same "
                          "offsets, not a known pattern", c->file->path);
}

int mb_disk_case_check_window(disk_case *c, const unsigned char *buf, long long offset, mb_err *err)
{
    /* The window moves on with every iteration, as in mb_disk_case_check_slots,
     * so that over a run every part of a block is compared. */
    const long long window = c->bs < DISK_CHECK_WINDOW ? c->bs : DISK_CHECK_WINDOW;
    long long n = c->n_iters > 0 ? c->n_iters - 1 : 0;
    long long start = n % (c->bs / window) * window;
    if (offset < 0)
        return MB_OK;
    const unsigned char *ref = NULL;
    if (!c->file->owned) {
        int rc = mb_disk_pread_full(c->ref_fd, c->check, (size_t)window, offset + start, err);
        if (rc != MB_OK)
            return rc;
        ref = c->check;
    }
    return compare_range(c, buf, offset, start, window, ref,
                         ref ? "a buffered re-read of the same offset" : "the written pattern", err);
}
