/* test_services.c: harness/api/services.h, what the harness does for kernels.
 *
 * Proves: the scratch directory and the user's disk file come from the run
 * options, an empty option counting as none; a notice reaches the user on
 * stderr as "mlbench: <text>", long paths whole; a kernel's notice (the disk
 * sweep removing a stale file of a dead process) goes through it; the ranks
 * of a single process are rank 0 of 1 on one node; agreement, min and max
 * leave a single process's values as they are; the cleanup table removes
 * what a kernel registered and keeps what it forgot. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cleanup.h"
#include "disk_file.h"
#include "options.h"
#include "services.h"

static void set_options(const char *dir, const char *file)
{
    mb_run_options o = { .disk_dir = dir, .disk_file = file };
    mb_options_set(&o);
}

static void scratch_comes_from_the_options(void **state)
{
    (void)state;
    set_options(NULL, NULL);
    assert_null(mb_disk_dir());
    assert_null(mb_disk_file());
    set_options("", ""); /* "--disk-dir ''": as if not given */
    assert_null(mb_disk_dir());
    assert_null(mb_disk_file());
    set_options("/some/dir", "/some/file.dat");
    assert_string_equal(mb_disk_dir(), "/some/dir");
    assert_string_equal(mb_disk_file(), "/some/file.dat");
    set_options(NULL, NULL);
}

/* Runs fn with stderr sent to a temporary file; returns what it wrote
 * (caller frees). */
static char *stderr_of(void (*fn)(void *), void *arg)
{
    char path[] = "/tmp/test_services-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    unlink(path); /* ours alone; gone when closed */
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    assert_true(saved >= 0);
    assert_true(dup2(fd, STDERR_FILENO) >= 0);
    fn(arg);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    off_t len = lseek(fd, 0, SEEK_END);
    char *text = calloc(1, (size_t)len + 1);
    assert_non_null(text);
    assert_int_equal(pread(fd, text, (size_t)len, 0), len);
    close(fd);
    return text;
}

static void notice_short(void *arg)
{
    mb_notice("removed %s, %d files", (const char *)arg, 3);
}

static void notice_long(void *arg)
{
    mb_notice("removed %s", (const char *)arg);
}

static void notice_reaches_stderr(void **state)
{
    (void)state;
    char *text = stderr_of(notice_short, "/x/y");
    assert_string_equal(text, "mlbench: removed /x/y, 3 files\n");
    free(text);
    /* A path as long as the disk files' (4095 characters) arrives whole. */
    static char path[4096];
    memset(path, 'p', sizeof path - 1);
    path[0] = '/';
    text = stderr_of(notice_long, path);
    assert_int_equal(strlen(text), strlen("mlbench: removed ") + 4095 + 1);
    assert_non_null(strstr(text, path));
    free(text);
}

/* A pid that existed and no longer does: a child that has exited, reaped. */
static long dead_pid(void)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(0);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return (long)pid;
}

static void sweep(void *dir)
{
    assert_int_equal(mb_disk_sweep_stale(dir), 1);
}

static void kernel_notice_goes_through_the_harness(void **state)
{
    (void)state;
    char dir[] = "/tmp/test_services-sweep-XXXXXX";
    assert_non_null(mkdtemp(dir));
    long pid = dead_pid();
    assert_true(mb_owner_gone(pid));
    char stale[512], other[512];
    snprintf(stale, sizeof stale, "%s/mlbench-disk-%ld-4096.dat", dir, pid);
    snprintf(other, sizeof other, "%s/not-ours.dat", dir);
    FILE *f = fopen(stale, "w");
    assert_non_null(f);
    fclose(f);
    f = fopen(other, "w");
    assert_non_null(f);
    fclose(f);

    char *text = stderr_of(sweep, dir);
    char want[1024];
    snprintf(want, sizeof want, "mlbench: removed %s, a stale test file of mlbench process %ld (no longer running)\n",
             stale, pid);
    assert_string_equal(text, want);
    free(text);
    struct stat st;
    assert_int_not_equal(stat(stale, &st), 0);
    assert_int_equal(stat(other, &st), 0); /* anything else is never touched */
    unlink(other);
    rmdir(dir);
}

static void single_process_ranks(void **state)
{
    (void)state;
    /* Not started by an MPI launcher: one process, rank 0 of 1, one node. */
    assert_int_equal(mb_dist_rank(), 0);
    assert_int_equal(mb_dist_size(), 1);
    assert_int_equal(mb_dist_local_rank(), 0);
    assert_int_equal(mb_dist_local_size(), 1);
    assert_int_equal(mb_dist_nodes(), 1);
    assert_string_equal(mb_dist_host_of(1), "");
    assert_non_null(mb_dist_describe());
    assert_true(mb_dist_timeout() > 0);

    mb_err err = { 0 };
    mb_errf(&err, MB_ESKIP, "no GPU here");
    assert_int_equal(mb_dist_agree_err(MB_ESKIP, &err), MB_ESKIP);
    assert_string_equal(err.msg, "no GPU here");
    double v = 2.5;
    assert_int_equal(mb_dist_max_double(&v, NULL), MB_OK);
    assert_true(v == 2.5);
    assert_int_equal(mb_dist_min_double(&v, NULL), MB_OK);
    assert_true(v == 2.5);
}

static void cleanup_removes_registered_keeps_forgotten(void **state)
{
    (void)state;
    char dir[] = "/tmp/test_services-cleanup-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char gone[512], kept[512];
    snprintf(gone, sizeof gone, "%s/gone", dir);
    snprintf(kept, sizeof kept, "%s/kept", dir);
    fclose(fopen(gone, "w"));
    fclose(fopen(kept, "w"));
    int s_dir = mb_cleanup_add(dir, true);
    int s_gone = mb_cleanup_add(gone, false);
    int s_kept = mb_cleanup_add(kept, false);
    assert_true(s_dir >= 0 && s_gone >= 0 && s_kept >= 0);
    mb_cleanup_forget(s_kept);
    mb_cleanup_run();
    struct stat st;
    assert_int_not_equal(stat(gone, &st), 0);
    assert_int_equal(stat(kept, &st), 0);
    assert_int_equal(stat(dir, &st), 0); /* not empty: rmdir leaves it */
    unlink(kept);
    assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(scratch_comes_from_the_options),
        cmocka_unit_test(notice_reaches_stderr),
        cmocka_unit_test(kernel_notice_goes_through_the_harness),
        cmocka_unit_test(single_process_ranks),
        cmocka_unit_test(cleanup_removes_registered_keeps_forgotten),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
