/* fuzz_stagefile: stage-metrics files, JSON and CSV (picked by content as
 * `mlbench gap` does), then the gap model on what was read against a fixed
 * results file, so odd but accepted values (huge, tiny, zero seconds) go
 * through the arithmetic and the writers too. */
#include "ceilings.h"
#include "fuzz_util.h"
#include "gap.h"
#include "gapconfig.h"
#include "stages.h"

static mb_ceilings here;
static mb_ini matching;
static int ready; /* 1 = loaded, -1 = could not (fuzz the reader alone) */

static void setup(void)
{
    mb_err err = { 0 };
    const char *ceil = getenv("MLBENCH_FUZZ_CEILINGS");
    if (ceil == NULL)
        ceil = MB_FUZZ_SOURCE_DIR "/tests/data/gap_here.json";
    ready = (mb_ceilings_load(ceil, &here, &err) == MB_OK &&
             mb_ini_load_gap("matching.ini", &matching, &err) == MB_OK) ? 1 : -1;
    if (ready < 0)
        fprintf(stderr, "fuzz_stagefile: gap model not exercised: %s\n", err.msg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (ready == 0)
        setup();
    const char *path = fuzz_file(data, size);
    mb_err err = { 0 };
    mb_run run;
    int rc = mb_stagefile_read(path, &run, &err);
    fuzz_check_error(rc, &err);
    if (rc != MB_OK)
        return 0;
    if (ready > 0) {
        mb_gap g;
        memset(&g, 0, sizeof g);
        mb_err gerr = { 0 };
        rc = mb_gap_build(&run, &here, &matching, &g, &gerr);
        fuzz_check_error(rc, &gerr);
        mb_gap_free(&g);
    }
    mb_run_free(&run);
    return 0;
}
