/* fuzz_datasheet: hardware datasheets (configs/hardware/NAME.ini) and the
 * look-ups the gap projection makes on them. */
#include "fuzz_util.h"
#include "hardware.h"

static const char *const keys[] = {
    "peak.fp64", "peak.fp32", "peak.tf32", "peak.fp16", "peak.bf16", "peak.fp8", "peak.int8",
    "memory.bandwidth_gbps", "memory.capacity_gib", "interconnect.nvlink_gbps",
    "interconnect.pcie_gen", "power.tdp_w", "product.kind", "nosection", ".", "",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    mb_err err = { 0 };
    mb_datasheet *d = NULL;
    int rc = mb_datasheet_load(path, &d, &err);
    fuzz_check_error(rc, &err);
    if (rc != MB_OK)
        return 0;
    (void)mb_datasheet_name(d);
    (void)mb_datasheet_file(d);
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        double v;
        const char *src;
        (void)mb_datasheet_get(d, keys[i], &v, &src);
    }
    mb_datasheet_free(d);
    return 0;
}
