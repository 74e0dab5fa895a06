/* Datasheets (harness/platform/hardware.c, configs/hardware/NAME.ini): every shipped file
 * parses, CUDA device names map to the right product (longest match on token
 * boundaries), dense peaks are the dense ones (never the sparsity figures),
 * and malformed files are rejected with FILE:LINE. Needs MLBENCH_CONFIG_DIR
 * (set by ctest) pointing at the source tree's configs/. */
#include <dirent.h>
#include <math.h>
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

#include "hardware.h"
#include "paths.h"

static char tmpdir[256];

static int make_tmpdir(void **s)
{
    (void)s;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/mb_test_hardware_XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int remove_tmpdir(void **s)
{
    (void)s;
    DIR *d = opendir(tmpdir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.')
                continue;
            char p[512];
            snprintf(p, sizeof p, "%s/%s", tmpdir, e->d_name);
            unlink(p);
        }
        closedir(d);
    }
    rmdir(tmpdir);
    return 0;
}

static const char *write_file(const char *name, const char *text)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static double peak_of(const mb_datasheet *d, const char *key)
{
    double v = -1;
    const char *src = NULL;
    assert_true(mb_datasheet_get(d, key, &v, &src));
    assert_non_null(src);
    assert_true(strlen(src) > 10);
    return v;
}

/* Every *.ini under configs/hardware loads and has a name, a kind and at
 * least one value with a source. */
static void test_all_shipped_parse(void **s)
{
    (void)s;
    char dir[4096];
    mb_config_path(dir, sizeof dir, "hardware");
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    int count = 0;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 5 || strcmp(e->d_name + n - 4, ".ini") != 0)
            continue;
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        mb_datasheet *ds = NULL;
        mb_err err = { 0 };
        int rc = mb_datasheet_load(path, &ds, &err);
        if (rc != MB_OK)
            fail_msg("%s: %s", path, err.msg);
        assert_non_null(mb_datasheet_name(ds));
        assert_string_equal(mb_datasheet_file(ds), path);
        double bw = 0;
        assert_true(mb_datasheet_get(ds, "memory.bandwidth_gbps", &bw, NULL));
        assert_true(bw > 100 && bw < 20000);
        mb_datasheet_free(ds);
        count++;
    }
    closedir(d);
    assert_true(count >= 14);
}

static void expect_match(const char *device, const char *product)
{
    mb_datasheet *d = NULL;
    mb_err err = { 0 };
    int rc = mb_datasheet_match(device, &d, &err);
    if (rc != MB_OK)
        fail_msg("'%s': %s", device, err.msg);
    if (strcmp(mb_datasheet_name(d), product) != 0)
        fail_msg("'%s' matched '%s', expected '%s'", device, mb_datasheet_name(d), product);
    mb_datasheet_free(d);
}

static void expect_no_match(const char *device)
{
    mb_datasheet *d = NULL;
    mb_err err = { 0 };
    int rc = mb_datasheet_match(device, &d, &err);
    if (rc != MB_ESKIP)
        fail_msg("'%s' matched '%s' (rc %d), expected no match", device,
                 d ? mb_datasheet_name(d) : "?", rc);
    assert_null(d);
    assert_non_null(strstr(err.msg, device));
    mb_datasheet_free(d);
}

/* Device names as CUDA (cudaDeviceProp.name / nvidia-smi) prints them. */
static void test_match_device_names(void **s)
{
    (void)s;
    expect_match("NVIDIA H100 80GB HBM3", "NVIDIA H100 SXM5 80GB");
    expect_match("NVIDIA H100 PCIe", "NVIDIA H100 PCIe 80GB");
    expect_match("NVIDIA H100 NVL", "NVIDIA H100 NVL 94GB");
    expect_match("NVIDIA H200", "NVIDIA H200 SXM 141GB");
    expect_match("NVIDIA H200 NVL", "NVIDIA H200 NVL 141GB"); /* longer match wins */
    expect_match("NVIDIA A100-SXM4-40GB", "NVIDIA A100 SXM4 40GB");
    expect_match("NVIDIA A100-SXM4-80GB", "NVIDIA A100 SXM4 80GB");
    expect_match("NVIDIA A100-PCIE-40GB", "NVIDIA A100 PCIe 40GB");
    expect_match("NVIDIA A100 80GB PCIe", "NVIDIA A100 PCIe 80GB");
    /* board names of A100 SXM4 modules (NVIDIA's open-gpu-kernel-modules list: PCI devices 20B0 and 20B2); Meta's
     * traces in ../shared/fixtures name the first */
    expect_match("NVIDIA A100-PG509-200", "NVIDIA A100 SXM4 40GB");
    expect_match("NVIDIA PG509-210", "NVIDIA A100 SXM4 80GB");
    expect_match("NVIDIA L40S", "NVIDIA L40S");
    expect_match("NVIDIA L4", "NVIDIA L4");
    expect_match("NVIDIA A10G", "NVIDIA A10G");
    expect_match("NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 4090");
    expect_match("Tesla V100-SXM2-16GB", "NVIDIA Tesla V100 SXM2");
    expect_match("Tesla V100-PCIE-32GB", "NVIDIA Tesla V100 PCIe");
    expect_match("Tesla T4", "NVIDIA T4");
    expect_match("nvidia h100 80gb hbm3", "NVIDIA H100 SXM5 80GB"); /* case-insensitive */
}

/* Substrings inside a longer token must not match: L4 is not L40 or L40S,
 * H200 is not GH200, A10G is not A10, V100 PCIe is not V100S. */
static void test_match_token_boundaries(void **s)
{
    (void)s;
    expect_no_match("NVIDIA L40");
    expect_no_match("NVIDIA GH200 480GB");
    expect_no_match("NVIDIA A10");
    expect_no_match("Tesla V100S-PCIE-32GB");
    expect_no_match("NVIDIA GeForce RTX 3090");
    expect_no_match("NVIDIA PG506-232"); /* another A100 board whose memory no source here gives */
    expect_no_match("Some Other Accelerator");
    mb_datasheet *d = NULL;
    mb_err err = { 0 };
    assert_int_equal(mb_datasheet_match("", &d, &err), MB_ESKIP);
}

/* Dense, not sparse: the figures NVIDIA prints with an asterisk are twice
 * these. */
static void test_dense_peaks(void **s)
{
    (void)s;
    mb_datasheet *d = NULL;
    mb_err err = { 0 };
    assert_int_equal(mb_datasheet_find("h100-sxm", &d, &err), MB_OK);
    assert_true(fabs(peak_of(d, "peak.bf16") - 989.4) <= 1.0);
    assert_true(fabs(peak_of(d, "peak.fp16") - 989.4) <= 1.0);
    assert_true(fabs(peak_of(d, "peak.tf32") - 494.7) <= 1.0);
    assert_true(fabs(peak_of(d, "peak.fp8") - 1978.9) <= 1.0);
    assert_true(fabs(peak_of(d, "peak.int8") - 1978.9) <= 1.0);
    assert_true(fabs(peak_of(d, "peak.fp64_tensor") - 67) <= 0.5);
    assert_true(fabs(peak_of(d, "peak.fp32") - 67) <= 0.5);
    assert_true(fabs(peak_of(d, "memory.bandwidth_gbps") - 3350) <= 1);
    assert_true(fabs(peak_of(d, "interconnect.nvlink_gbps") - 900) <= 1);
    /* A key with its own source overrides the section's. */
    const char *src = NULL;
    double v;
    assert_true(mb_datasheet_get(d, "power.tdp_w", &v, &src));
    assert_non_null(strstr(src, "700 W"));
    assert_false(mb_datasheet_get(d, "peak.fp4", &v, &src));
    assert_false(mb_datasheet_get(d, "bf16", &v, &src));
    mb_datasheet_free(d);

    assert_int_equal(mb_datasheet_find("a100-sxm-80gb", &d, &err), MB_OK);
    assert_true(fabs(peak_of(d, "peak.bf16") - 312) <= 1.0);
    assert_true(fabs(peak_of(d, "peak.tf32") - 156) <= 1.0);
    assert_false(mb_datasheet_get(d, "peak.fp8", &v, NULL)); /* no fp8 on Ampere */
    mb_datasheet_free(d);

    /* GeForce: fp32-accumulate tensor rate, half the fp16-accumulate one. */
    assert_int_equal(mb_datasheet_find("rtx-4090", &d, &err), MB_OK);
    assert_true(fabs(peak_of(d, "peak.bf16") - 165.2) <= 0.5);
    mb_datasheet_free(d);

    assert_int_equal(mb_datasheet_find("l4", &d, &err), MB_OK);
    assert_true(fabs(peak_of(d, "peak.bf16") - 121) <= 1.0);
    mb_datasheet_free(d);
}

static void test_find_by_name_and_path(void **s)
{
    (void)s;
    mb_datasheet *d = NULL;
    mb_err err = { 0 };
    assert_int_equal(mb_datasheet_find("NVIDIA H100 PCIe 80GB", &d, &err), MB_OK);
    assert_non_null(strstr(mb_datasheet_file(d), "h100-pcie.ini"));
    mb_datasheet_free(d);
    assert_int_equal(mb_datasheet_find("H200-SXM", &d, &err), MB_OK); /* stem, any case */
    mb_datasheet_free(d);
    mb_err_clear(&err);
    assert_int_equal(mb_datasheet_find("no-such-gpu", &d, &err), MB_EUSAGE);
    assert_null(d);
    assert_non_null(strstr(err.msg, "no-such-gpu"));
    assert_non_null(strstr(err.msg, "h100-sxm")); /* lists the known ones */

    const char *path = write_file("custom.ini", "[product]\nname = Custom\nkind = gpu\n"
                                                "source = test\n[peak]\nbf16 = 12.5\n");
    assert_int_equal(mb_datasheet_find(path, &d, &err), MB_OK);
    double v = 0;
    const char *src = NULL;
    assert_true(mb_datasheet_get(d, "peak.bf16", &v, &src));
    assert_true(v == 12.5);
    assert_string_equal(src, "test"); /* falls back to [product] source */
    mb_datasheet_free(d);
}

/* Each malformed file fails with FILE:LINE naming the bad line. */
static void expect_bad(const char *text, int line, const char *words)
{
    const char *path = write_file("bad.ini", text);
    mb_datasheet *d = NULL;
    mb_err err = { 0 };
    int rc = mb_datasheet_load(path, &d, &err);
    if (rc != MB_EUSAGE)
        fail_msg("expected MB_EUSAGE for:\n%s\ngot %d (%s)", text, rc, err.msg);
    assert_null(d);
    char where[600];
    if (line > 0)
        snprintf(where, sizeof where, "%s:%d: ", path, line);
    else
        snprintf(where, sizeof where, "%s: ", path);
    if (strncmp(err.msg, where, strlen(where)) != 0)
        fail_msg("message '%s' does not start with '%s'", err.msg, where);
    if (!strstr(err.msg, words))
        fail_msg("message '%s' does not say '%s'", err.msg, words);
}

static void test_malformed(void **s)
{
    (void)s;
    const char *head = "[product]\nname = X\nkind = gpu\nsource = s\n";
    char text[1024];
    snprintf(text, sizeof text, "%s[peak]\nbf16 = fast\n", head);
    expect_bad(text, 6, "not a number");
    snprintf(text, sizeof text, "%s[peak]\nbf16 = 1\nbf16 = 2\n", head);
    expect_bad(text, 7, "duplicate");
    snprintf(text, sizeof text, "%s[peek]\nbf16 = 1\n", head);
    expect_bad(text, 6, "unknown section");
    snprintf(text, sizeof text, "%s[peak]\nthis line has no equals sign\n", head);
    expect_bad(text, 6, "malformed line");
    snprintf(text, sizeof text, "%s[peak]\nbf16 = -3\n", head);
    expect_bad(text, 6, "negative");
    snprintf(text, sizeof text, "%scolour = green\n", head);
    expect_bad(text, 5, "unknown key");
    snprintf(text, sizeof text, "[product]\nname = X\nkind = tpu\n");
    expect_bad(text, 3, "gpu or cpu");
    snprintf(text, sizeof text, "%s[peak]\nbf16 = 1\nfp8_source = nowhere\n", head);
    expect_bad(text, 7, "names no key");
    snprintf(text, sizeof text, "bf16 = 1\n");
    expect_bad(text, 1, "before any [section]");
    snprintf(text, sizeof text, "[product]\nname = X\nkind = gpu\n[peak]\nbf16 = 1\n");
    expect_bad(text, 0, "no source");
    snprintf(text, sizeof text, "[product]\nkind = gpu\nsource = s\n");
    expect_bad(text, 0, "no name");
    /* A line longer than the parser's buffer is an error, not a silent split. */
    char longline[600];
    memset(longline, 'x', sizeof longline);
    longline[sizeof longline - 1] = 0;
    snprintf(text, sizeof text, "%s[peak]\nsource = %s\nbf16 = 1\n", head, longline);
    expect_bad(text, 6, "too long");

    mb_datasheet *d = NULL;
    mb_err err = { 0 };
    assert_int_equal(mb_datasheet_load("/nonexistent/x.ini", &d, &err), MB_EUSAGE);
    assert_non_null(strstr(err.msg, "/nonexistent/x.ini"));
}

/* A malformed file in the config directory makes matching fail loudly (it
 * is a configuration error), and two files matching equally well too.
 * mb_config_dir() is fixed for a process, so this runs in a fresh one: the
 * test binary re-executed with MLBENCH_CONFIG_DIR pointing at tmpdir. */
static int match_dir_child(const char *dir)
{
    char path[700];
    snprintf(path, sizeof path, "%s/hardware/b.ini", dir);
    mb_datasheet *d = NULL;
    mb_err err = { 0 };
    if (mb_datasheet_match("Vendor Foo 2 Pro", &d, &err) != MB_OK ||
        strcmp(mb_datasheet_name(d), "Beta GPU") != 0)
        return 1;
    mb_datasheet_free(d);
    FILE *f = fopen(path, "w"); /* b.ini now ties with a.ini on "Foo 1" */
    fputs("[product]\nname = Beta GPU\nmatch = Foo 1\nkind = gpu\nsource = t\n", f);
    fclose(f);
    mb_err err2 = { 0 };
    if (mb_datasheet_match("Vendor Foo 1", &d, &err2) != MB_EUSAGE || !strstr(err2.msg, "equally"))
        return 2;
    /* A longer match in a file listed after the tie wins: the tie between
     * weaker matches does not matter, whatever the directory order. */
    char cpath[700];
    snprintf(cpath, sizeof cpath, "%s/hardware/c.ini", dir);
    f = fopen(cpath, "w");
    fputs("[product]\nname = Gamma GPU\nmatch = Vendor Foo 1\nkind = gpu\nsource = t\n", f);
    fclose(f);
    mb_err err4 = { 0 };
    int rc4 = mb_datasheet_match("Vendor Foo 1", &d, &err4);
    int gamma = rc4 == MB_OK && strcmp(mb_datasheet_name(d), "Gamma GPU") == 0;
    mb_datasheet_free(d);
    unlink(cpath);
    if (!gamma)
        return 4;
    f = fopen(path, "w"); /* b.ini broken on line 6 */
    fputs("[product]\nname = Beta GPU\nkind = gpu\nsource = t\n[peak]\nx = y\n", f);
    fclose(f);
    mb_err err3 = { 0 };
    if (mb_datasheet_match("Vendor Foo 1", &d, &err3) != MB_EUSAGE || !strstr(err3.msg, "b.ini:6:"))
        return 3;
    return 0;
}

static void test_match_dir_errors(void **s)
{
    (void)s;
    char hw[600];
    snprintf(hw, sizeof hw, "%s/hardware", tmpdir);
    assert_int_equal(mkdir(hw, 0700), 0);
    char a[700], b[700];
    snprintf(a, sizeof a, "%s/a.ini", hw);
    snprintf(b, sizeof b, "%s/b.ini", hw);
    FILE *f = fopen(a, "w");
    fputs("[product]\nname = Alpha GPU\nmatch = Foo 1\nkind = gpu\nsource = t\n", f);
    fclose(f);
    f = fopen(b, "w");
    fputs("[product]\nname = Beta GPU\nmatch = Foo 2\nkind = gpu\nsource = t\n", f);
    fclose(f);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setenv("MLBENCH_CONFIG_DIR", tmpdir, 1);
        execl("/proc/self/exe", "test_hardware", "--match-dir-child", tmpdir, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    unlink(a);
    unlink(b);
    rmdir(hw);
}

/* The B300 sheet carries the HGX B300 per-GPU dense figures (NVIDIA's board figures
 * / 8 GPUs, sparse ones / 2), NVIDIA's memory and NVLink figures, and leaves out what
 * no page publishes (int8: sources disagree; the shipped SM count). A CUDA name
 * "NVIDIA B300 SXM6 AC" finds it; a GB300 (another product) does not. */
static void test_b300_sheet(void **s)
{
    (void)s;
    mb_datasheet *d = NULL;
    mb_err err = { 0 };
    assert_int_equal(mb_datasheet_find("b300", &d, &err), MB_OK);
    assert_string_equal(mb_datasheet_name(d), "NVIDIA B300 (HGX)");
    assert_true(fabs(peak_of(d, "peak.fp64") - 1.25) <= 0.01);        /* 10 TFLOPS / 8 */
    assert_true(fabs(peak_of(d, "peak.fp64_tensor") - 1.25) <= 0.01); /* 10 TFLOPS / 8 */
    assert_true(fabs(peak_of(d, "peak.fp32") - 75) <= 0.01);          /* 600 TFLOPS / 8 */
    assert_true(fabs(peak_of(d, "peak.tf32") - 1125) <= 0.5);         /* 18 PF sparse / 8 / 2 */
    assert_true(fabs(peak_of(d, "peak.fp16") - 2250) <= 0.5);         /* 36 PF sparse / 8 / 2 */
    assert_true(fabs(peak_of(d, "peak.bf16") - 2250) <= 0.5);
    assert_true(fabs(peak_of(d, "peak.fp8") - 4500) <= 0.5); /* 72 PF sparse / 8 / 2 */
    assert_true(fabs(peak_of(d, "memory.bandwidth_gbps") - 8000) <= 1);
    assert_true(fabs(peak_of(d, "memory.capacity_gib") - 288) <= 0.5);
    assert_true(fabs(peak_of(d, "interconnect.nvlink_gbps") - 1800) <= 1);
    assert_true(fabs(peak_of(d, "power.tdp_w") - 1100) <= 1);
    const char *src = NULL;
    double v = 0;
    assert_true(mb_datasheet_get(d, "memory.bandwidth_gbps", &v, &src));
    assert_non_null(strstr(src, "https://developer.nvidia.com/")); /* NVIDIA's own page first */
    assert_true(mb_datasheet_get(d, "peak.fp8", &v, &src));
    assert_non_null(strstr(src, "https://")); /* the section source names its page */
    assert_false(mb_datasheet_get(d, "peak.int8", &v, NULL));
    assert_false(mb_datasheet_get(d, "gpu.sms", &v, NULL));
    assert_false(mb_datasheet_get(d, "interconnect.pcie_gen", &v, NULL));
    mb_datasheet_free(d);

    expect_match("NVIDIA B300 SXM6 AC", "NVIDIA B300 (HGX)");
    expect_no_match("NVIDIA GB300");
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--match-dir-child") == 0)
        return match_dir_child(argv[2]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_shipped_parse),
        cmocka_unit_test(test_match_device_names),
        cmocka_unit_test(test_match_token_boundaries),
        cmocka_unit_test(test_dense_peaks),
        cmocka_unit_test(test_find_by_name_and_path),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_match_dir_errors),
        cmocka_unit_test(test_b300_sheet),
    };
    return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
