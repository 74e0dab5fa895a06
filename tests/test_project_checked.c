/* The `checked` figure of `gap --target` and the nearest checked class
 * (harness/analysis/project/project_checked.h), on a projection_error.ini written
 * here and the datasheets of configs/hardware (their [gpu]
 * compute_capability, gpu-arch.ini's names): each rule with its answer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "project_checked.h"

static char ini_path[64];

static void write_ini(const char *text)
{
    snprintf(ini_path, sizeof ini_path, "/tmp/mb_checked_XXXXXX");
    int fd = mkstemp(ini_path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static const char *const ini_text = "[datasheet]\n"
                                    "h100-sxm = 15.7 52\n"
                                    "a100-pcie-40gb = 20.5 38\n"
                                    "l4 = 19.5 43\n"
                                    "[pairs.datasheet]\n"
                                    "h100-sxm = 3.7 7 h200-sxm\n"
                                    "h200-sxm = 3.1 7 h100-sxm\n";

static mb_checked find(const char *mode, const char *target, const char *here)
{
    mb_ini ini;
    mb_err err = { 0 };
    write_ini(ini_text);
    assert_int_equal(mb_ini_load(ini_path, &ini, &err), MB_OK);
    mb_checked c;
    assert_int_equal(mb_checked_find(&ini, mode, target, here, &c, &err), MB_OK);
    mb_ini_free(&ini);
    unlink(ini_path);
    return c;
}

/* rule 1: the pairs' figure where the trace ran on the GPU they projected from */
static void test_pairs_from_here(void **s)
{
    (void)s;
    mb_checked c = find("datasheet", "h200-sxm", "h100-sxm");
    assert_true(c.n == 7 && c.pct == 3.1 && c.from_here);
    assert_string_equal(c.basis, "pairs");
    assert_string_equal(c.from, "h100-sxm");
    c = find("datasheet", "h100-sxm", "h200-sxm"); /* before the public line of the same GPU */
    assert_true(c.n == 7 && c.pct == 3.7 && c.from_here);
}

/* rule 2: the public figure from elsewhere; rule 3: the pairs' from another GPU of the trace's
 * architecture, said so; from another architecture or an unknown GPU the pairs measured nothing:
 * rule 4, with the pairs' figure beside it */
static void test_public_then_pairs(void **s)
{
    (void)s;
    mb_checked c = find("datasheet", "h100-sxm", "a100-pcie-40gb");
    assert_true(c.n == 52 && c.pct == 15.7 && !c.from_here);
    assert_string_equal(c.basis, "public");
    c = find("datasheet", "h200-sxm", "h100-nvl"); /* Hopper, as the H100 SXM the pairs projected from */
    assert_true(c.n == 7 && c.pct == 3.1 && !c.from_here && c.pairs_n == 0);
    assert_string_equal(c.basis, "pairs");
    assert_string_equal(c.from, "h100-sxm");
    c = find("datasheet", "h200-sxm", "a100-pcie-40gb"); /* Ampere: no pair crossed architectures */
    assert_true(c.n == 0 && c.pairs_n == 7 && c.pairs_pct == 3.1);
    assert_string_equal(c.from, "h100-sxm");
    assert_string_equal(c.here_arch, "Ampere");
    assert_string_equal(c.nearest, "H100 SXM5 80GB (Hopper)"); /* not itself: its own figure is not this trace's */
    assert_true(c.nearest_pct == 15.7);
    c = find("datasheet", "h200-sxm", NULL); /* the trace's GPU unknown */
    assert_true(c.n == 0 && c.pairs_n == 7);
    assert_string_equal(c.here_arch, "");
    c = find("datasheet", "h100-nvl", "v100-pcie"); /* for a Volta trace the H200 is no member of Hopper's class */
    assert_string_equal(c.nearest, "H100 SXM5 80GB (Hopper)");
}

/* rule 4: the checked GPUs of the same architecture only; an architecture none of whose GPUs was checked has no
 * class (from an H200's trace Hopper's was the pairs' 3%, said of every Blackwell part), its name kept for the note */
static void test_nearest_class(void **s)
{
    (void)s;
    mb_checked c = find("datasheet", "l40s", "a100-pcie-40gb"); /* Ada: the L4 */
    assert_int_equal(c.n, 0);
    assert_string_equal(c.nearest, "L4 (Ada)");
    assert_true(c.nearest_pct == 19.5);
    c = find("datasheet", "a10g", NULL); /* 8.6, Ampere (GA10x): the A100 is Ampere too */
    assert_string_equal(c.nearest, "A100 PCIe 40GB (Ampere)");
    /* Hopper: the worst figure of the class by rules 1-3 */
    c = find("datasheet", "h100-nvl", "h100-sxm"); /* the H200 by rule 1, the H100 by rule 2 */
    assert_string_equal(c.nearest, "H100 SXM5 80GB, H200 SXM 141GB (Hopper)");
    assert_true(c.nearest_pct == 15.7);
    /* Blackwell 10.0, none checked: no class, not Hopper's */
    c = find("datasheet", "b200", "h200-sxm");
    assert_int_equal(c.n, 0);
    assert_string_equal(c.nearest, "");
    assert_string_equal(c.arch, "Blackwell");
    c = find("datasheet", "b300", "h100-sxm"); /* 10.3: not in gpu-arch.ini, its major version's Blackwell */
    assert_string_equal(c.nearest, "");
    assert_string_equal(c.arch, "Blackwell");
    c = find("datasheet", "rtx-pro-6000-blackwell", NULL); /* 12.0 Blackwell (GB20x) */
    assert_string_equal(c.nearest, "");
    assert_string_equal(c.arch, "Blackwell");
    c = find("datasheet", "v100-pcie", NULL); /* Volta 7.0, none checked here: not Ampere's */
    assert_string_equal(c.nearest, "");
    assert_string_equal(c.arch, "Volta");
    c = find("measured", "b200", NULL); /* nothing checked in this mode: no class */
    assert_int_equal(c.n, 0);
    assert_string_equal(c.nearest, "");
    char arch[32];
    double cc = 0;
    assert_true(mb_checked_arch("p4", arch, sizeof arch, &cc)); /* no Pascal section: its major version */
    assert_string_equal(arch, "sm_6x");
    assert_true(cc > 6.09 && cc < 6.11);
}

static void test_malformed(void **s)
{
    (void)s;
    mb_ini ini;
    mb_err err = { 0 };
    write_ini("[pairs.datasheet]\nh200-sxm = 3.1 7\n"); /* no GPU projected from */
    assert_int_equal(mb_ini_load(ini_path, &ini, &err), MB_OK);
    mb_checked c;
    assert_int_equal(mb_checked_find(&ini, "datasheet", "h200-sxm", NULL, &c, &err), MB_EUSAGE);
    assert_non_null(strstr(err.msg, "[pairs.datasheet] h200-sxm = 3.1 7"));
    mb_ini_free(&ini);
    unlink(ini_path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pairs_from_here),
        cmocka_unit_test(test_public_then_pairs),
        cmocka_unit_test(test_nearest_class),
        cmocka_unit_test(test_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
