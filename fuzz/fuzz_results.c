/* fuzz_results: results files as every reader of them sees them:
 *   mlbench report FILE        mb_results_load + the four writers
 *   mlbench gap --ceilings     mb_ceilings_load (every case checked)
 *   mlbench compare A B        mb_compare_build + its writers and HTML page
 *                              (the file against itself and against a fixed
 *                              one), a datasheet filling what is not measured
 *   mlbench --baseline FILE    mb_baseline_check (fixed run vs the file, and
 *                              the file vs itself) + its printout */
#include "baseline.h"
#include "ceilings.h"
#include "compare.h"
#include "compare_page.h"
#include "compare_writers.h"
#include "fuzz_util.h"
#include "gapconfig.h"
#include "hardware.h"
#include "results.h"
#include "results_writers.h"

static const char *const formats[] = { "table", "json", "csv", "md" };
static mb_ceilings fixed;
static cJSON *fixed_doc;
static mb_ini keys;
static mb_datasheet *sheet;
static int ready;

static void setup(void)
{
    mb_err err = { 0 };
    const char *p = MB_FUZZ_SOURCE_DIR "/tests/data/gap_here.json";
    ready = (mb_ceilings_load(p, &fixed, &err) == MB_OK && mb_results_load(p, &fixed_doc, &err) == MB_OK &&
             mb_ini_load_gap("compare.ini", &keys, &err) == MB_OK &&
             mb_datasheet_find("h100-sxm", &sheet, &err) == MB_OK) ? 1 : -1;
    if (ready < 0)
        fprintf(stderr, "fuzz_results: compare/baseline against a fixed file not exercised: %s\n", err.msg);
}

static void baseline(const cJSON *run, const cJSON *base)
{
    cJSON *failures = NULL;
    mb_err err = { 0 };
    int rc = mb_baseline_check(run, base, 0.10, &failures, &err);
    if (rc == MB_EUSAGE)
        fuzz_check_error(rc, &err);
    else if (failures)
        mb_baseline_print(fuzz_null(), failures, 0.10);
    cJSON_Delete(failures);
}

static void compare(const mb_ceilings *a, const mb_ceilings *b)
{
    mb_ceilings m[2] = { *a, *b };
    mb_compare c;
    memset(&c, 0, sizeof c);
    mb_err err = { 0 };
    int rc = mb_compare_build(m, 2, NULL, 0, NULL, 0, &keys, &c, &err);
    fuzz_check_error(rc, &err);
    if (rc == MB_OK) {
        rc = mb_compare_fill_datasheet(&c, 1, sheet, &err);
        fuzz_check_error(rc, &err);
    }
    for (size_t i = 0; rc == MB_OK && i < sizeof formats / sizeof formats[0]; i++) {
        mb_err werr = { 0 };
        mb_compare_write(fuzz_null(), &c, formats[i], &werr);
    }
    if (rc == MB_OK) {
        mb_err herr = { 0 };
        mb_compare_html(fuzz_null(), &c, &herr);
    }
    mb_compare_free(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (ready == 0)
        setup();
    const char *path = fuzz_file(data, size);
    mb_err err = { 0 };
    cJSON *doc = NULL;
    int rc = mb_results_load(path, &doc, &err);
    fuzz_check_error(rc, &err);
    if (rc != MB_OK)
        return 0;
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
        mb_err werr = { 0 };
        mb_write_results(fuzz_null(), doc, formats[i], &werr);
    }
    baseline(doc, doc);
    if (ready > 0) {
        baseline(fixed_doc, doc);
        baseline(doc, fixed_doc);
    }
    cJSON_Delete(doc);

    mb_ceilings c;
    memset(&c, 0, sizeof c);
    mb_err cerr = { 0 };
    rc = mb_ceilings_load(path, &c, &cerr);
    fuzz_check_error(rc, &cerr);
    if (rc == MB_OK) {
        compare(&c, &c);
        if (ready > 0) {
            compare(&fixed, &c);
            compare(&c, &fixed);
        }
        mb_ceilings_free(&c);
    }
    return 0;
}
