/* reference.h: reference machines: measured results of machines mlbench has
 * run on, shipped under results/reference/NAME/ for people who have no such
 * machine to run it on (a buyer deciding on GPUs).
 *
 * One directory per machine, holding its results files as mlbench wrote them
 * and a reference.ini:
 *   [reference]
 *   label = H100 SXM 80GB (1 GPU)        ; shown in tables
 *   files = all.json, gpu-verify.json     ; in priority order
 *   datasheet = h100-sxm                  ; configs/hardware/NAME.ini, for what was not measured
 *   [provenance]                          ; checked against the files' own context by the tests
 *   measured_utc = ...  mlbench_commit = ...  driver = ...  cuda = ...  gpu = ...  source = ...
 * The cases of all files are joined by id (the first file that has an id
 * wins). Figures are measured first; a datasheet figure is used only where no
 * measurement exists, and every output says which each number is. */
#ifndef MB_REFERENCE_H
#define MB_REFERENCE_H

#include <stdbool.h>
#include <stddef.h>

#include "ceilings.h"
#include "gapconfig.h"
#include "hardware.h"

typedef struct mb_reference {
    char *name;            /* directory name, e.g. "h100-sxm" */
    char *dir;             /* its path */
    mb_ini ini;            /* reference.ini */
    mb_ceilings measured;  /* every file's cases, joined */
    mb_datasheet *sheet;   /* NULL when reference.ini names none */
} mb_reference;

/* Where the references are: $MLBENCH_REFERENCE_DIR, else results/reference
 * beside the config directory (source tree and install alike). */
const char *mb_reference_root(void);
/* True when `name` is a reference: a name under the root, or the path of a
 * directory with a reference.ini. */
bool mb_reference_exists(const char *name);
/* Measured results wherever results are expected (`gap --ceilings`,
 * `compare`, `--baseline`): a results file, or a reference machine by name or
 * directory (its files joined in their priority order). A directory without
 * a reference.ini, a datasheet, a trace or a stage file is an MB_EUSAGE
 * error saying what it is and what to pass. *label (may be NULL) gets a
 * reference's "<label> (reference)", else NULL; the caller frees it and *doc. */
int mb_results_open(const char *what, cJSON **doc, char **label, mb_err *err);
/* The same as ceilings (mb_ceilings_from_json). */
int mb_ceilings_open(const char *what, mb_ceilings *out, mb_err *err);
/* The reference machines' names, "h100-sxm, ...", into buf ("" when none). */
void mb_reference_names(char *buf, size_t len);
/* Loads a reference by name. MB_EUSAGE naming the known references when there
 * is none of that name, or with the file and field when a file is malformed. */
int mb_reference_load(const char *name, mb_reference *out, mb_err *err);
void mb_reference_free(mb_reference *r);
/* [reference] label, else the name. Its measured results are labelled
 * "<label> (reference)" in tables. */
const char *mb_reference_label(const mb_reference *r);
/* A [provenance] value, or NULL. */
const char *mb_reference_get(const mb_reference *r, const char *key);

/* The datasheet figure for work of `component` (dtype for math, direction for
 * copies) that ran on `device` ("gpu" | "cpu"), in work units per second
 * (FLOP/s, bytes/s); 0 = none, with the reason in `what`, else the key used.
 * A device-to-device copy gets the memory bandwidth: each byte is read and
 * written, so only ratios of it are meaningful (docs/gap.md). */
double mb_datasheet_figure(const mb_datasheet *d, bool target_is_gpu, const char *component, const char *dtype,
                           const char *direction, const char *device, char *what, size_t len, const char **source);

#endif
