/* Platform layer: NIC discovery on a fake /sys/class/net tree, and the
 * "fits in 80% of available memory" rule at its boundary, with known answers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host.h"
#include "nic.h"

#define CLOSE(a, b) assert_true(fabs((double)(a) - (double)(b)) < 1e-9)

/* ---- a fake /sys/class/net ------------------------------------------------------ */

static char net[] = "/tmp/mb_test_nic_XXXXXX";

static void put(const char *nic, const char *file, const char *text)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", net, nic);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/%s/%s", net, nic, file);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* An interface: a device/ directory for a physical one, operstate, and a
 * speed file unless `speed` is NULL (a bridge's read fails). */
static void fake_nic(const char *name, bool physical, const char *state, const char *speed)
{
    put(name, "operstate", state);
    if (speed != NULL)
        put(name, "speed", speed);
    if (physical) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s/device", net, name);
        assert_int_equal(mkdir(path, 0755), 0);
    }
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static int make_net(void **s)
{
    (void)s;
    if (mkdtemp(net) == NULL)
        return -1;
    fake_nic("zeth", true, "up\n", "25000\n"); /* made first: sorting is checked */
    fake_nic("eth0", true, "up\n", "100000\n");
    fake_nic("eth1", true, "down\n", "100000\n");   /* down: left out */
    fake_nic("eth2", true, "up\n", "-1\n");         /* no speed */
    fake_nic("tun0", true, "unknown\n", "10000\n"); /* listed, but not an "up" link */
    fake_nic("veth1", false, "up\n", "10000\n");    /* virtual */
    fake_nic("br0", false, "up\n", NULL);           /* virtual, no speed */
    fake_nic("lo", false, "unknown\n", NULL);       /* loopback: left out */
    return 0;
}

static int remove_net(void **s)
{
    (void)s;
    return nftw(net, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void test_nics_listed_sorted(void **s)
{
    (void)s;
    mb_nic nics[MB_NICS_MAX];
    int n = mb_nics_at(net, nics, MB_NICS_MAX);
    assert_int_equal(n, 6);
    const char *names[] = { "br0", "eth0", "eth2", "tun0", "veth1", "zeth" };
    const long speeds[] = { -1, 100000, -1, 10000, 10000, 25000 };
    const bool virt[] = { true, false, false, false, true, false };
    const bool up[] = { true, true, true, false, true, true };
    for (int i = 0; i < n; i++) {
        assert_string_equal(nics[i].name, names[i]);
        assert_int_equal(nics[i].speed_mbps, speeds[i]);
        assert_int_equal(nics[i].is_virtual, virt[i]);
        assert_int_equal(nics[i].state_up, up[i]);
    }
    assert_int_equal(mb_nics_at(net, nics, 2), 2); /* at most `max` */
    assert_int_equal(mb_nics_at("/nonexistent/mlbench/net", nics, MB_NICS_MAX), 0);
}

static void test_nics_json(void **s)
{
    (void)s;
    cJSON *a = mb_nics_json_at(net);
    char *text = cJSON_PrintUnformatted(a);
    assert_string_equal(text,
                        "[{\"name\":\"br0\",\"speed_mbps\":null,\"virtual\":true},"
                        "{\"name\":\"eth0\",\"speed_mbps\":100000,\"virtual\":false},"
                        "{\"name\":\"eth2\",\"speed_mbps\":null,\"virtual\":false},"
                        "{\"name\":\"tun0\",\"speed_mbps\":10000,\"virtual\":false},"
                        "{\"name\":\"veth1\",\"speed_mbps\":10000,\"virtual\":true},"
                        "{\"name\":\"zeth\",\"speed_mbps\":25000,\"virtual\":false}]");
    free(text);
    cJSON_Delete(a);
}

/* Only physical links that are "up" with a speed count: eth0 + zeth =
 * 125000 Mb/s = 15.625 GB/s. */
static void test_nic_gbps(void **s)
{
    (void)s;
    char names[128];
    CLOSE(mb_nic_gbps_at(net, names, sizeof names), 15.625);
    assert_string_equal(names, "eth0 100000 Mb/s, zeth 25000 Mb/s");
    char small[10];
    CLOSE(mb_nic_gbps_at(net, small, sizeof small), 15.625); /* names cut, sum whole */
    assert_string_equal(small, "eth0 1000");
    CLOSE(mb_nic_gbps_at(net, NULL, 0), 15.625);
    CLOSE(mb_nic_gbps_at("/nonexistent/mlbench/net", names, sizeof names), 0);
    assert_string_equal(names, "");
}

static void test_nics_virtual_text(void **s)
{
    (void)s;
    char text[128];
    assert_int_equal(mb_nics_virtual_text_at(net, text, sizeof text), 2);
    assert_string_equal(text, "br0 (no speed), veth1 10000 Mb/s");
    assert_int_equal(mb_nics_virtual_text_at("/nonexistent/mlbench/net", text, sizeof text), 0);
    assert_string_equal(text, "");
}

/* ---- the memory fit rule ------------------------------------------------------- */

static void test_mem_fits_boundary(void **s)
{
    (void)s;
    mb_err err = { 0 };
    const long long mib = 1048576;
    /* 800 MiB of 1000 MiB is exactly 80%: fits; one byte more does not */
    assert_int_equal(mb_mem_fits_in(800.0 * mib, 1000 * mib, "A, B and C", &err), MB_OK);
    assert_int_equal(err.code, MB_OK);
    assert_int_equal(mb_mem_fits_in(800.0 * mib + 1, 1000 * mib, "A, B and C", &err), MB_ESKIP);
    assert_string_equal(err.msg, "does not fit: A, B and C need 800.0 MiB, 1000.0 MiB available "
                                 "(at most 80% may be used)");
    /* 80% of 1 TiB is 879609302220.8 bytes: ...220 fits, ...221 does not */
    const long long tib = 1LL << 40;
    assert_int_equal(mb_mem_fits_in(879609302220.0, tib, "x", NULL), MB_OK);
    assert_int_equal(mb_mem_fits_in(879609302221.0, tib, "x", NULL), MB_ESKIP);
    /* nothing known: no claim, it fits */
    assert_int_equal(mb_mem_fits_in(1e30, 0, "x", NULL), MB_OK);
    assert_int_equal(mb_mem_fits_in(1e30, -1, "x", NULL), MB_OK);
}

static void test_mem_fits_host(void **s)
{
    (void)s;
    long long avail = mb_ram_available_bytes();
    if (avail <= 0)
        avail = mb_ram_bytes();
    assert_true(avail > 0); /* /proc/meminfo is readable on Linux */
    mb_err err = { 0 };
    assert_int_equal(mb_mem_fits((double)avail * 2.0, "tensors", &err), MB_ESKIP);
    assert_non_null(strstr(err.msg, "does not fit: tensors need"));
    assert_int_equal(mb_mem_fits(4096.0, "tensors", NULL), MB_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nics_listed_sorted),
        cmocka_unit_test(test_nics_json),
        cmocka_unit_test(test_nic_gbps),
        cmocka_unit_test(test_nics_virtual_text),
        cmocka_unit_test(test_mem_fits_boundary),
        cmocka_unit_test(test_mem_fits_host),
    };
    return cmocka_run_group_tests(tests, make_net, remove_net);
}
