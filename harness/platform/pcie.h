/* pcie.h: the PCIe link and NUMA node of a PCI device, read from sysfs.
 *
 * No CUDA here: the GPU side gets the bus id from CUDA or NVML and asks this
 * module what the kernel knows about the device. Every reader takes the sysfs
 * root as an argument so tests can point it at a fake tree.
 *
 *   <root>/bus/pci/devices/<bus id>/current_link_speed   "16.0 GT/s PCIe"
 *   <root>/bus/pci/devices/<bus id>/current_link_width   "16"
 *   <root>/bus/pci/devices/<bus id>/max_link_speed       "32.0 GT/s PCIe"
 *   <root>/bus/pci/devices/<bus id>/max_link_width       "16"
 *   <root>/bus/pci/devices/<bus id>/numa_node            "0" or "-1"
 */
#ifndef MB_PCIE_H
#define MB_PCIE_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "mb.h"

typedef struct mb_pcie_link {
    char busid[32];       /* normalised: "0000:3b:00.0" */
    char cur_speed[48];   /* sysfs text, "" when the file is absent */
    char max_speed[48];
    int cur_gen, max_gen; /* 1..6, 0 when unknown ("Unknown", absent) */
    int cur_width, max_width; /* lanes, 0 when unknown */
    int numa_node;        /* -1 when unknown (absent, or the kernel says -1) */
} mb_pcie_link;

/* The sysfs root: $MLBENCH_SYSFS when set (tests, containers), else "/sys". */
const char *mb_sysfs_root(void);

/* Normalises a PCI bus id as CUDA ("0000:3B:00.0") or NVML
 * ("00000000:3B:00.0") print it to the sysfs form "0000:3b:00.0" (domain at
 * least 4 digits as the kernel prints it, lower case; domains above ffff
 * exist behind Intel VMD: "10000:01:00.0"). A bus id without a domain
 * ("3b:00.0") gets 0000.
 * MB_EUSAGE for anything that is not DOMAIN:BUS:DEV.FN in hex. */
int mb_pcie_normalize_busid(const char *in, char *out, size_t len, mb_err *err);

/* Reads the link and NUMA node of `busid` under `sysfs_root`. MB_ESKIP when
 * the device directory does not exist (e.g. a VM that hides the PCI tree);
 * missing attribute files leave their fields unknown (0 / "" / -1) and are
 * not an error: not every kernel or device exposes every file. */
int mb_pcie_read(const char *sysfs_root, const char *busid, mb_pcie_link *out, mb_err *err);

/* Payload GB/s of one direction for the current (current != 0) or maximum
 * link, through mb_pcie_gbps(); 0 when gen or width is unknown. */
double mb_pcie_link_gbps(const mb_pcie_link *l, int current);

/* "PCIe 4.0 x16" (or "PCIe gen ? x16" when unknown) into buf; returns buf. */
char *mb_pcie_describe(int gen, int width, char *buf, size_t len);

/* The line encoding mb_pcie_gbps() applies to `gen`, for a peak's source
 * text: "8b/10b", "128b/130b", "242B/256B FLIT", or "unknown". */
const char *mb_pcie_encoding(int gen);

/* Which of the link's figures is the theoretical peak of a copy that reached
 * `measured_gbps` in one direction (0 = not known):
 *   CURRENT  the current link, when known and not below the measurement
 *   MAX      the maximum link: the current one is unknown, or was read below
 *            what the copies achieved (GPUs train the link down when idle,
 *            so a reading taken between copies can be stale)
 *   NONE     neither is known or both are below the measurement (an
 *            emulated link in a VM): use the datasheet.
 * *gen and *width get the chosen link (0 for NONE). A current link below the
 * maximum that does hold the measurement stays the peak: that is the link the
 * copies ran on (slot, riser, BIOS), and the caller says so. */
typedef enum mb_pcie_peak { MB_PCIE_PEAK_NONE, MB_PCIE_PEAK_CURRENT, MB_PCIE_PEAK_MAX } mb_pcie_peak;
mb_pcie_peak mb_pcie_pick_peak(const mb_pcie_link *l, double measured_gbps, int *gen, int *width);

/* The machine context's view of one GPU's link (context.gpus[]): "pcie" (an
 * object, or the reader's error text), "numa_node" (a number or null) and,
 * when the node is unknown, "numa_note" saying so and what it costs: the
 * copy benchmark then binds neither its thread nor its pinned buffers. Said
 * here once per GPU, not on every copy row. */
void mb_pcie_context_add(cJSON *gpu, const char *sysfs_root, const char *busid);
/* The text of that note. */
extern const char MB_PCIE_NUMA_UNKNOWN_NOTE[];

#endif
