/* pcie.c: PCIe link and NUMA node from sysfs (see pcie.h). */
#include "pcie.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "formulas.h"
#include "paths.h"

const char *mb_sysfs_root(void)
{
    const char *env = getenv("MLBENCH_SYSFS");
    return env && *env ? env : "/sys";
}

/* Parses one hex field ending at `stop` (or at the end of the string when
 * stop is '\0'); advances *p past the terminator. */
static int hex_field(const char **p, char stop, unsigned long max, unsigned long *out)
{
    const char *s = *p;
    if (!isxdigit((unsigned char)*s))
        return -1;
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 16);
    if (errno || v > max || *end != stop)
        return -1;
    *out = v;
    *p = stop ? end + 1 : end;
    return 0;
}

int mb_pcie_normalize_busid(const char *in, char *out, size_t len, mb_err *err)
{
    if (in == NULL)
        return mb_errf(err, MB_EUSAGE, "PCI bus id missing");
    while (isspace((unsigned char)*in))
        in++;
    /* A domain is present when there are two colons. */
    int colons = 0;
    for (const char *c = in; *c; c++)
        colons += *c == ':';
    unsigned long dom = 0, bus, dev, fn;
    const char *p = in;
    int bad = colons < 1 || colons > 2;
    if (!bad && colons == 2)
        bad = hex_field(&p, ':', 0xFFFFFFFFul, &dom) != 0;
    if (!bad)
        bad = hex_field(&p, ':', 0xFF, &bus) || hex_field(&p, '.', 0x1F, &dev) ||
              hex_field(&p, '\0', 0x7, &fn);
    /* NVML prints 8 domain digits, the kernel at least 4 ("%04x"): a VMD
     * domain 0x10000 is "00010000" to NVML and "10000" in sysfs. */
    if (bad)
        return mb_errf(err, MB_EUSAGE, "not a PCI bus id (expected DOMAIN:BUS:DEV.FN in hex): '%s'", in);
    snprintf(out, len, "%04lx:%02lx:%02lx.%lx", dom, bus, dev, fn);
    return MB_OK;
}

/* The first line of <dir>/<name>, trimmed; 0 on success. */
static int read_attr(const char *dir, const char *name, char *buf, size_t len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return mb_read_first_line(path, buf, len) ? 0 : -1;
}

/* A width file holds a decimal lane count; anything else is unknown (0). */
static int parse_width(const char *text)
{
    char *end;
    long v = strtol(text, &end, 10);
    return end != text && v > 0 && v <= 32 ? (int)v : 0;
}

int mb_pcie_read(const char *sysfs_root, const char *busid, mb_pcie_link *out, mb_err *err)
{
    memset(out, 0, sizeof *out);
    out->numa_node = -1;
    int rc = mb_pcie_normalize_busid(busid, out->busid, sizeof out->busid, err);
    if (rc != MB_OK)
        return rc;
    char dir[384];
    snprintf(dir, sizeof dir, "%s/bus/pci/devices/%s", sysfs_root ? sysfs_root : mb_sysfs_root(),
             out->busid);
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return mb_errno(err, MB_ESKIP, "PCI device %s not in sysfs (%s)", out->busid, dir);

    char text[64];
    if (read_attr(dir, "current_link_speed", out->cur_speed, sizeof out->cur_speed) == 0)
        out->cur_gen = mb_pcie_gen_from_speed(out->cur_speed);
    if (read_attr(dir, "max_link_speed", out->max_speed, sizeof out->max_speed) == 0)
        out->max_gen = mb_pcie_gen_from_speed(out->max_speed);
    if (read_attr(dir, "current_link_width", text, sizeof text) == 0)
        out->cur_width = parse_width(text);
    if (read_attr(dir, "max_link_width", text, sizeof text) == 0)
        out->max_width = parse_width(text);
    if (read_attr(dir, "numa_node", text, sizeof text) == 0) {
        char *end;
        long v = strtol(text, &end, 10);
        out->numa_node = end != text && v >= 0 && v < 4096 ? (int)v : -1;
    }
    return MB_OK;
}

double mb_pcie_link_gbps(const mb_pcie_link *l, int current)
{
    return current ? mb_pcie_gbps(l->cur_gen, l->cur_width) : mb_pcie_gbps(l->max_gen, l->max_width);
}

char *mb_pcie_describe(int gen, int width, char *buf, size_t len)
{
    if (gen >= 1 && gen <= 6)
        snprintf(buf, len, "PCIe %d.0 x%d", gen, width);
    else
        snprintf(buf, len, "PCIe gen ? x%d", width);
    return buf;
}

const char *mb_pcie_encoding(int gen)
{
    /* Must match what mb_pcie_gbps() (formulas.c) applies. */
    return gen >= 1 && gen <= 2 ? "8b/10b" : gen >= 3 && gen <= 5 ? "128b/130b" : gen == 6 ? "242B/256B FLIT" : "unknown";
}

mb_pcie_peak mb_pcie_pick_peak(const mb_pcie_link *l, double measured_gbps, int *gen, int *width)
{
    double cur = mb_pcie_link_gbps(l, 1), max = mb_pcie_link_gbps(l, 0);
    *gen = 0, *width = 0;
    if (cur > 0 && measured_gbps <= cur) {
        *gen = l->cur_gen, *width = l->cur_width;
        return MB_PCIE_PEAK_CURRENT;
    }
    if (max > 0 && measured_gbps <= max) {
        *gen = l->max_gen, *width = l->max_width;
        return MB_PCIE_PEAK_MAX;
    }
    return MB_PCIE_PEAK_NONE;
}

const char MB_PCIE_NUMA_UNKNOWN_NOTE[] =
    "GPU NUMA node unknown (sysfs numa_node absent or -1: single-node host or firmware does not say): "
    "the copy benchmark's thread and pinned buffers are not bound to a NUMA node";

void mb_pcie_context_add(cJSON *g, const char *sysfs_root, const char *busid)
{
    mb_pcie_link l;
    mb_err err = { 0 };
    if (mb_pcie_read(sysfs_root, busid, &l, &err) != MB_OK) {
        cJSON_AddStringToObject(g, "pcie", err.msg);
        cJSON_AddNullToObject(g, "numa_node");
        cJSON_AddStringToObject(g, "numa_note", MB_PCIE_NUMA_UNKNOWN_NOTE);
        return;
    }
    cJSON *p = cJSON_AddObjectToObject(g, "pcie");
    char d[32];
    cJSON_AddStringToObject(p, "current", mb_pcie_describe(l.cur_gen, l.cur_width, d, sizeof d));
    cJSON_AddStringToObject(p, "max", mb_pcie_describe(l.max_gen, l.max_width, d, sizeof d));
    cJSON_AddStringToObject(p, "current_link_speed", l.cur_speed);
    cJSON_AddStringToObject(p, "max_link_speed", l.max_speed);
    cJSON_AddNumberToObject(p, "current_width", l.cur_width);
    cJSON_AddNumberToObject(p, "max_width", l.max_width);
    cJSON_AddNumberToObject(p, "max_gbps_per_direction", mb_pcie_link_gbps(&l, 0));
    cJSON_AddStringToObject(p, "note", "the current link speed drops when the GPU idles; max is what it trains to");
    if (l.numa_node >= 0) {
        cJSON_AddNumberToObject(g, "numa_node", l.numa_node);
    } else {
        cJSON_AddNullToObject(g, "numa_node");
        cJSON_AddStringToObject(g, "numa_note", MB_PCIE_NUMA_UNKNOWN_NOTE);
    }
}
