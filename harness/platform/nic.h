/* nic.h: this node's network interfaces (platform layer), from
 * /sys/class/net: the one walk behind the results context
 * (context.dist.nics and nic_total_gbps) and the collectives' link peak and
 * notes (coll_mpi.c, coll_nccl.c). Best effort: an unreadable directory is
 * no interface, never an error. */
#ifndef MB_NIC_H
#define MB_NIC_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#define MB_NICS_MAX 256

typedef struct mb_nic {
    char name[256];
    long speed_mbps; /* as the driver reports it; <= 0: none */
    /* No device/ link: a veth, bridge, bond or tunnel, whose speed is what
     * the driver says (a veth always 10000 Mb/s), not what the wire carries. */
    bool is_virtual;
    bool state_up; /* operstate "up"; false: "unknown" (tun and similar) */
} mb_nic;

/* The interfaces that are up (operstate "up", or "unknown": tun and similar
 * devices carry traffic without a state), loopback left out, sorted by name
 * (the same order on every run), from a /sys/class/net-like directory.
 * Stores up to `max` and returns how many it stored. */
int mb_nics_at(const char *sysfs_net, mb_nic *out, int max);

/* Those interfaces as JSON, [{name, speed_mbps (null when none), virtual}]:
 * context.dist.nics. */
cJSON *mb_nics_json_at(const char *sysfs_net);
cJSON *mb_nics_json(void);

/* Sum of the link speeds of the physical interfaces (not virtual, operstate
 * "up", a speed > 0) in GB/s of one direction. `names` (may be NULL)
 * receives "eth0 100000 Mb/s, ib0 400000 Mb/s". */
double mb_nic_gbps_at(const char *sysfs_net, char *names, size_t len);
double mb_nic_gbps(char *names, size_t len);

/* "br0 (no speed), veth0 10000 Mb/s" for the virtual interfaces that are up;
 * returns how many. */
size_t mb_nics_virtual_text_at(const char *sysfs_net, char *out, size_t len);
size_t mb_nics_virtual_text(char *out, size_t len);

#endif
