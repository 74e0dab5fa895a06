/* PCIe link and NUMA node from sysfs (harness/platform/pcie.c), on fake sysfs trees
 * built in a temporary directory: known answers, odd values, missing files. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "pcie.h"

#define CLOSE(a, b) assert_true(fabs((a) - (b)) <= 1e-9 * fmax(1.0, fabs(b)))

static char root[256];

static void mkdirs(const char *path)
{
    char tmp[512];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            mkdir(tmp, 0755);
            *p = '/';
        }
    }
    mkdir(tmp, 0755);
}

/* Writes <root>/bus/pci/devices/<busid>/<name>; a NULL text creates only the directory. */
static void put(const char *busid, const char *name, const char *text)
{
    char dir[512], path[600];
    snprintf(dir, sizeof dir, "%s/bus/pci/devices/%s", root, busid);
    mkdirs(dir);
    if (name == NULL)
        return;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int make_root(void **s)
{
    (void)s;
    snprintf(root, sizeof root, "/tmp/mb_test_pcie_XXXXXX");
    assert_non_null(mkdtemp(root));
    return 0;
}

static int remove_root(void **s)
{
    (void)s;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_gen4_x16(void **s)
{
    (void)s;
    const char *id = "0000:3b:00.0";
    put(id, "current_link_speed", "16.0 GT/s PCIe\n");
    put(id, "current_link_width", "16\n");
    put(id, "max_link_speed", "32.0 GT/s PCIe\n");
    put(id, "max_link_width", "16\n");
    put(id, "numa_node", "1\n");
    mb_pcie_link l;
    mb_err err = { 0 };
    /* CUDA's spelling (upper-case hex) must find the sysfs directory. */
    assert_int_equal(mb_pcie_read(root, "0000:3B:00.0", &l, &err), MB_OK);
    assert_string_equal(l.busid, "0000:3b:00.0");
    assert_string_equal(l.cur_speed, "16.0 GT/s PCIe");
    assert_int_equal(l.cur_gen, 4);
    assert_int_equal(l.cur_width, 16);
    assert_int_equal(l.max_gen, 5);
    assert_int_equal(l.max_width, 16);
    assert_int_equal(l.numa_node, 1);
    /* 16 GT/s x 16 lanes x 128/130 / 8 = 31.51 GB/s; gen 5: 63.02. */
    CLOSE(mb_pcie_link_gbps(&l, 1), 16.0 * 16 * 128.0 / 130.0 / 8.0);
    assert_true(fabs(mb_pcie_link_gbps(&l, 1) - 31.5) < 0.01);
    CLOSE(mb_pcie_link_gbps(&l, 0), 32.0 * 16 * 128.0 / 130.0 / 8.0);
    char d[32];
    assert_string_equal(mb_pcie_describe(l.cur_gen, l.cur_width, d, sizeof d), "PCIe 4.0 x16");
}

static void test_nvml_busid_and_gen2(void **s)
{
    (void)s;
    const char *id = "0000:af:00.0";
    put(id, "current_link_speed", "5.0 GT/s PCIe\n"); /* a link trained down at idle */
    put(id, "current_link_width", "8\n");
    put(id, "max_link_speed", "64.0 GT/s PCIe\n");
    put(id, "max_link_width", "16\n");
    put(id, "numa_node", "-1\n"); /* single-node hosts say -1 */
    mb_pcie_link l;
    mb_err err = { 0 };
    assert_int_equal(mb_pcie_read(root, "00000000:AF:00.0", &l, &err), MB_OK); /* NVML's spelling */
    assert_int_equal(l.cur_gen, 2);
    assert_int_equal(l.max_gen, 6);
    assert_int_equal(l.numa_node, -1);
    CLOSE(mb_pcie_link_gbps(&l, 1), 5.0 * 8 * 0.8 / 8.0); /* 8b/10b: 4.0 GB/s */
}

static void test_missing_and_odd_files(void **s)
{
    (void)s;
    const char *id = "0000:01:00.0";
    put(id, NULL, NULL); /* the device, with no attribute files */
    mb_pcie_link l;
    mb_err err = { 0 };
    assert_int_equal(mb_pcie_read(root, id, &l, &err), MB_OK);
    assert_int_equal(l.cur_gen, 0);
    assert_int_equal(l.max_width, 0);
    assert_int_equal(l.numa_node, -1);
    assert_string_equal(l.cur_speed, "");
    CLOSE(mb_pcie_link_gbps(&l, 1), 0.0);

    const char *vm = "0000:02:00.0"; /* what some hypervisors expose */
    put(vm, "current_link_speed", "Unknown\n");
    put(vm, "current_link_width", "0\n");
    put(vm, "numa_node", "garbage\n");
    assert_int_equal(mb_pcie_read(root, vm, &l, &err), MB_OK);
    assert_int_equal(l.cur_gen, 0);
    assert_int_equal(l.cur_width, 0);
    assert_int_equal(l.numa_node, -1);
    char d[32];
    assert_string_equal(mb_pcie_describe(0, 16, d, sizeof d), "PCIe gen ? x16");
}

/* The unknown-NUMA note is said once per GPU, in the machine context (it was
 * on every copy row of the H100 run): present when numa_node is -1, absent,
 * or the device cannot be read; absent when the node is known. */
static void test_context_numa_note(void **s)
{
    (void)s;
    const char *known = "0000:41:00.0", *minus = "0000:42:00.0";
    put(known, "numa_node", "1\n");
    put(minus, "numa_node", "-1\n");
    const char *ids[] = { known, minus, "0000:99:00.0" };
    for (int i = 0; i < 3; i++) {
        cJSON *g = cJSON_CreateObject();
        mb_pcie_context_add(g, root, ids[i]);
        const cJSON *node = cJSON_GetObjectItemCaseSensitive(g, "numa_node");
        const cJSON *note = cJSON_GetObjectItemCaseSensitive(g, "numa_note");
        assert_non_null(node);
        assert_non_null(cJSON_GetObjectItemCaseSensitive(g, "pcie"));
        if (i == 0) {
            assert_true(cJSON_IsNumber(node) && node->valuedouble == 1);
            assert_null(note);
        } else {
            assert_true(cJSON_IsNull(node));
            assert_true(cJSON_IsString(note));
            assert_non_null(strstr(note->valuestring, "GPU NUMA node unknown"));
            assert_string_equal(note->valuestring, MB_PCIE_NUMA_UNKNOWN_NOTE);
        }
        cJSON_Delete(g);
    }
}

static void test_missing_device(void **s)
{
    (void)s;
    mb_pcie_link l;
    mb_err err = { 0 };
    assert_int_equal(mb_pcie_read(root, "0000:99:00.0", &l, &err), MB_ESKIP);
    assert_non_null(strstr(err.msg, "0000:99:00.0"));
    mb_err e2 = { 0 };
    char missing[300];
    snprintf(missing, sizeof missing, "%s/does-not-exist", root);
    assert_int_equal(mb_pcie_read(missing, "0000:3b:00.0", &l, &e2), MB_ESKIP);
}

static void test_normalize(void **s)
{
    (void)s;
    char out[32];
    mb_err err = { 0 };
    assert_int_equal(mb_pcie_normalize_busid("0000:3B:00.0", out, sizeof out, &err), MB_OK);
    assert_string_equal(out, "0000:3b:00.0");
    assert_int_equal(mb_pcie_normalize_busid("00000000:3B:00.0", out, sizeof out, &err), MB_OK);
    assert_string_equal(out, "0000:3b:00.0");
    assert_int_equal(mb_pcie_normalize_busid("3b:1f.7", out, sizeof out, &err), MB_OK);
    assert_string_equal(out, "0000:3b:1f.7");
    /* Behind Intel VMD the domain exceeds ffff: NVML "00010000", sysfs "10000". */
    assert_int_equal(mb_pcie_normalize_busid("00010000:3B:00.0", out, sizeof out, &err), MB_OK);
    assert_string_equal(out, "10000:3b:00.0");
    const char *bad[] = { "", "zz:00.0", "0000:3b:00", "0000:3b:00.8", "0000:3b:20.0", "0000:3b:00.0x",
                          "1:2:3:4.0", "100000000:3b:00.0" };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        mb_err e = { 0 };
        assert_int_equal(mb_pcie_normalize_busid(bad[i], out, sizeof out, &e), MB_EUSAGE);
        assert_non_null(strstr(e.msg, "PCI bus id"));
    }
}

/* The link a copy's peak is taken from, given what the copy measured. */
static void test_pick_peak(void **s)
{
    (void)s;
    mb_pcie_link l = { .cur_gen = 4, .cur_width = 16, .max_gen = 5, .max_width = 16 };
    int gen, width;
    /* 25 GB/s fits a Gen4 x16 link (31.5): the current link, below max. */
    assert_int_equal(mb_pcie_pick_peak(&l, 25.0, &gen, &width), MB_PCIE_PEAK_CURRENT);
    assert_int_equal(gen, 4);
    assert_int_equal(width, 16);
    /* Unknown measurement: the current link. */
    assert_int_equal(mb_pcie_pick_peak(&l, 0.0, &gen, &width), MB_PCIE_PEAK_CURRENT);
    /* 50 GB/s cannot have crossed Gen4 x16: the reading was of a link
     * trained down at idle; the maximum (Gen5 x16, 63.0) is the peak. */
    assert_int_equal(mb_pcie_pick_peak(&l, 50.0, &gen, &width), MB_PCIE_PEAK_MAX);
    assert_int_equal(gen, 5);
    assert_int_equal(width, 16);
    /* Above both (an emulated x1 link in a VM): neither; use the datasheet. */
    mb_pcie_link vm = { .cur_gen = 1, .cur_width = 1, .max_gen = 1, .max_width = 1 };
    assert_int_equal(mb_pcie_pick_peak(&vm, 20.0, &gen, &width), MB_PCIE_PEAK_NONE);
    assert_int_equal(gen, 0);
    assert_int_equal(width, 0);
    /* Current unknown ("Unknown" speed): the maximum. Nothing known: none. */
    mb_pcie_link nocur = { .max_gen = 5, .max_width = 16 };
    assert_int_equal(mb_pcie_pick_peak(&nocur, 0.0, &gen, &width), MB_PCIE_PEAK_MAX);
    mb_pcie_link none = { 0 };
    assert_int_equal(mb_pcie_pick_peak(&none, 0.0, &gen, &width), MB_PCIE_PEAK_NONE);

    assert_string_equal(mb_pcie_encoding(2), "8b/10b");
    assert_string_equal(mb_pcie_encoding(3), "128b/130b");
    assert_string_equal(mb_pcie_encoding(5), "128b/130b");
    assert_string_equal(mb_pcie_encoding(6), "242B/256B FLIT");
    assert_string_equal(mb_pcie_encoding(0), "unknown");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gen4_x16),
        cmocka_unit_test(test_nvml_busid_and_gen2),
        cmocka_unit_test(test_missing_and_odd_files),
        cmocka_unit_test(test_missing_device),
        cmocka_unit_test(test_context_numa_note),
        cmocka_unit_test(test_normalize),
        cmocka_unit_test(test_pick_peak),
    };
    return cmocka_run_group_tests(tests, make_root, remove_root);
}
