/* gap_test_util.h: helpers shared by the analysis tests (test_gap.c,
 * test_stagefile.c, test_compare.c): paths of tests/data, scratch files, and
 * running a command entry point with its stdout/stderr captured. */
#ifndef MB_GAP_TEST_UTIL_H
#define MB_GAP_TEST_UTIL_H

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef MB_TEST_DATA
#error "MB_TEST_DATA (the tests/data directory) must be defined by CMake"
#endif

#define CLOSE(a, b) assert_true(fabs((double)(a) - (double)(b)) <= 1e-9 * fmax(1.0, fabs((double)(b))))

static inline const char *data_path(const char *name)
{
    static char buf[8][4096];
    static int slot;
    char *p = buf[slot++ % 8];
    snprintf(p, 4096, "%s/%s", MB_TEST_DATA, name);
    return p;
}

/* A scratch directory for the whole test program, removed by the caller
 * with rm_scratch(). */
static inline const char *scratch_dir(void)
{
    static char dir[256];
    if (dir[0] == '\0') {
        snprintf(dir, sizeof dir, "/tmp/mb_gap_test.XXXXXX");
        if (mkdtemp(dir) == NULL)
            abort();
    }
    return dir;
}

static inline const char *scratch_file(const char *name, const char *text)
{
    static char buf[8][512];
    static int slot;
    char *p = buf[slot++ % 8];
    snprintf(p, 512, "%s/%s", scratch_dir(), name);
    FILE *f = fopen(p, "w");
    if (f == NULL)
        abort();
    fputs(text, f);
    fclose(f);
    return p;
}

static inline void rm_scratch(void)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch_dir());
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", scratch_dir());
}

static inline char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *t = malloc((size_t)n + 1);
    if (t && fread(t, 1, (size_t)n, f) != (size_t)n) {
        free(t);
        t = NULL;
    }
    if (t)
        t[n] = '\0';
    fclose(f);
    return t;
}

/* Runs cmd(argc, argv) with stdout and stderr sent to files; returns the
 * exit status and the captured texts (caller frees). */
static inline int run_captured(int (*cmd)(int, char **), int argc, char **argv, char **out, char **err)
{
    char po[512], pe[512];
    snprintf(po, sizeof po, "%s/stdout.txt", scratch_dir());
    snprintf(pe, sizeof pe, "%s/stderr.txt", scratch_dir());
    fflush(stdout);
    fflush(stderr);
    int so = dup(1), se = dup(2);
    int fo = open(po, O_WRONLY | O_CREAT | O_TRUNC, 0644), fe = open(pe, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fo, 1);
    dup2(fe, 2);
    close(fo);
    close(fe);
    int rc = cmd(argc, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(so, 1);
    dup2(se, 2);
    close(so);
    close(se);
    *out = read_text(po);
    *err = read_text(pe);
    return rc;
}

#endif
