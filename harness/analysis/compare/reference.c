/* reference.c: loading a reference machine (reference.h). */
#include "reference.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "case_identity.h"
#include "formulas.h"
#include "paths.h"
#include "results.h"
#include "run_read.h"

const char *mb_reference_root(void)
{
    static char root[PATH_MAX];
    const char *env = getenv("MLBENCH_REFERENCE_DIR");
    if (env && *env)
        snprintf(root, sizeof root, "%s", env);
    else
        snprintf(root, sizeof root, "%s/../results/reference", mb_config_dir());
    return root;
}

/* A name, not a path: references are looked up by name only, so that a file
 * called like a reference is never mistaken for one. */
static bool plain_name(const char *name)
{
    return name && *name && strchr(name, '/') == NULL && strcmp(name, ".") && strcmp(name, "..");
}

/* A reference's reference.ini: by name under the root, or in a directory
 * given by its path (`--ceilings results/reference/h100-sxm`). */
static void ini_path(const char *name, char *buf, size_t len)
{
    if (plain_name(name))
        snprintf(buf, len, "%s/%s/reference.ini", mb_reference_root(), name);
    else
        snprintf(buf, len, "%s/reference.ini", name ? name : "");
}

static bool is_dir(const char *path)
{
    struct stat st;
    return path && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

bool mb_reference_exists(const char *name)
{
    char p[PATH_MAX + 64];
    struct stat st;
    if (!plain_name(name) && !is_dir(name))
        return false;
    ini_path(name, p, sizeof p);
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* In name order (scandir's alphasort): the directory's own order changes
 * with the file system and with every reference added. */
void mb_reference_names(char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    struct dirent **list = NULL;
    int n_list = scandir(mb_reference_root(), &list, NULL, alphasort);
    for (int i = 0; i < n_list; i++) {
        const char *name = list[i]->d_name;
        if (name[0] != '.' && mb_reference_exists(name) && used < len) {
            int n = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", name);
            used = n < 0 ? len : used + (size_t)n;
        }
        free(list[i]);
    }
    free(list);
}

/* "a, b" — the references there are, for the message when a name is unknown. */
static void known_names(char *buf, size_t len)
{
    mb_reference_names(buf, len);
    if (buf[0] == '\0')
        snprintf(buf, len, "none under %s", mb_reference_root());
}

/* By case_identity.h's rule: an older file's case whose id lacks a newer
 * parameter is the same measurement as the newer file's, not a second one. */
static bool has_case(const cJSON *cases, const cJSON *c)
{
    return mb_case_find_same(cases, c) != NULL;
}

/* Marks every case of `cases` with the file it came from. */
static int mark_origin(cJSON *cases, const char *file, mb_err *err)
{
    cJSON *c;
    cJSON_ArrayForEach(c, cases)
    {
        if (cJSON_IsObject(c) && !cJSON_HasObjectItem(c, "reference_file") &&
            cJSON_AddStringToObject(c, "reference_file", file) == NULL)
            return mb_errf(err, MB_ESYS, "out of memory");
    }
    return MB_OK;
}

/* Moves the cases of `from` whose id `into` lacks into `into`. */
static int join_cases(cJSON *into, cJSON *from, const char *file, mb_err *err)
{
    cJSON *dst = cJSON_GetObjectItemCaseSensitive(into, "cases");
    cJSON *src = cJSON_GetObjectItemCaseSensitive(from, "cases");
    if (!cJSON_IsArray(dst) || !cJSON_IsArray(src))
        return mb_errf(err, MB_EUSAGE, "%s: no cases array", file);
    if (mark_origin(src, file, err))
        return err->code;
    while (src->child) {
        cJSON *c = cJSON_DetachItemViaPointer(src, src->child);
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(c, "id");
        if (cJSON_IsString(id) && !has_case(dst, c))
            cJSON_AddItemToArray(dst, c);
        else
            cJSON_Delete(c);
    }
    return MB_OK;
}

/* Next comma-separated item of *list into buf (trimmed); false at the end. */
static bool next_item(const char **list, char *buf, size_t len)
{
    const char *s = *list;
    while (*s == ' ' || *s == '\t' || *s == ',')
        s++;
    if (*s == '\0')
        return false;
    const char *e = strchr(s, ',');
    size_t n = e ? (size_t)(e - s) : strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    snprintf(buf, len, "%.*s", (int)n, s);
    *list = e ? e : s + strlen(s);
    return true;
}

static int load_files(mb_reference *r, mb_err *err)
{
    const char *files = mb_ini_get(&r->ini, "reference", "files");
    if (files == NULL)
        return mb_errf(err, MB_EUSAGE, "%s: [reference] files = is missing (the results files, in priority order)",
                       r->ini.path);
    cJSON *joined = NULL;
    char file[256], path[PATH_MAX + 300];
    int rc = MB_OK;
    while (rc == MB_OK && next_item(&files, file, sizeof file)) {
        if (strchr(file, '/'))
            rc = mb_errf(err, MB_EUSAGE, "%s: files: '%s' must be a file name in the reference's directory",
                         r->ini.path, file);
        cJSON *root = NULL;
        snprintf(path, sizeof path, "%s/%s", r->dir, file);
        if (rc == MB_OK)
            rc = mb_results_load(path, &root, err);
        if (rc == MB_OK && joined == NULL) {
            joined = root;
            rc = mark_origin(cJSON_GetObjectItemCaseSensitive(joined, "cases"), file, err);
        } else if (rc == MB_OK) {
            rc = join_cases(joined, root, file, err);
            cJSON_Delete(root);
        }
    }
    if (rc == MB_OK && joined == NULL)
        rc = mb_errf(err, MB_EUSAGE, "%s: files = names no file", r->ini.path);
    if (rc != MB_OK) {
        cJSON_Delete(joined);
        return rc;
    }
    return mb_ceilings_from_json(joined, r->dir, &r->measured, err);
}

const char *mb_reference_label(const mb_reference *r)
{
    const char *label = mb_ini_get(&r->ini, "reference", "label");
    return label ? label : r->name;
}

static int set_label(mb_reference *r, mb_err *err)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s (reference)", mb_reference_label(r));
    r->measured.label = strdup(buf);
    return r->measured.label ? MB_OK : mb_errf(err, MB_ESYS, "out of memory");
}

int mb_reference_load(const char *name, mb_reference *out, mb_err *err)
{
    memset(out, 0, sizeof *out);
    char p[PATH_MAX + 64];
    if (!mb_reference_exists(name)) {
        char known[1024];
        known_names(known, sizeof known);
        return mb_errf(err, MB_EUSAGE, "no reference machine '%s' (known: %s)", name ? name : "", known);
    }
    ini_path(name, p, sizeof p);
    const char *base = strrchr(name, '/'); /* a directory's name is the reference's */
    while (base && base[1] == '\0' && base > name) /* "h100-sxm/" */
        base = NULL;
    out->name = strdup(base ? base + 1 : name);
    out->dir = strdup(p);
    if (out->name == NULL || out->dir == NULL) {
        mb_reference_free(out);
        return mb_errf(err, MB_ESYS, "out of memory");
    }
    *strrchr(out->dir, '/') = '\0';
    int rc = mb_ini_load(p, &out->ini, err);
    if (rc == MB_OK)
        rc = load_files(out, err);
    if (rc == MB_OK)
        rc = set_label(out, err);
    const char *sheet = rc == MB_OK ? mb_ini_get(&out->ini, "reference", "datasheet") : NULL;
    if (sheet) {
        mb_err why = { 0 };
        if (mb_datasheet_find(sheet, &out->sheet, &why))
            rc = mb_errf(err, MB_EUSAGE, "%s: datasheet = %s: %s", out->ini.path, sheet, why.msg);
    }
    if (rc != MB_OK)
        mb_reference_free(out);
    return rc;
}

/* ---- measured results where results are expected ------------------------------------ */

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* What `what` is when it is no results file: a clear error naming what to pass. */
static int not_results(const char *what, mb_err *err)
{
    char known[1024];
    known_names(known, sizeof known);
    struct stat st;
    if (is_dir(what))
        return mb_errf(err, MB_EUSAGE,
                       "%s: a directory, not a results file: pass one of its results files (mlbench --suite ... "
                       "--out FILE.json), or a reference machine's name or directory (one with a reference.ini; known: %s)",
                       what, known);
    if (stat(what, &st) == 0) {
        mb_file_kind k = mb_run_file_kind(what);
        if (k == MB_FILE_TRACE || k == MB_FILE_STAGES)
            return mb_errf(err, MB_EUSAGE, "%s: a %s, not a results file: it is a run: pass it as `mlbench gap --run %s`",
                           what, k == MB_FILE_TRACE ? "PyTorch trace" : "stage-metrics file", what);
        if (ends_with(what, ".ini"))
            return mb_errf(err, MB_EUSAGE,
                           "%s: a datasheet or configuration file (.ini), not measured results: a datasheet is a "
                           "`gap --target`; ceilings are what `mlbench --suite all --out FILE.json` measured, or a "
                           "reference machine (known: %s)",
                           what, known);
        return MB_OK; /* a file: the results reader says what is wrong with it */
    }
    mb_datasheet *sheet = NULL;
    mb_err why = { 0 };
    if (mb_datasheet_find(what, &sheet, &why) == MB_OK) {
        mb_datasheet_free(sheet);
        return mb_errf(err, MB_EUSAGE,
                       "%s: a datasheet (configs/hardware), not measured results: pass it as `gap --target %s`; "
                       "measured ceilings are a results file or a reference machine (known: %s)",
                       what, what, known);
    }
    return mb_errf(err, MB_EUSAGE, "%s: no such results file, and no reference machine of that name (known: %s)", what,
                   known);
}

int mb_results_open(const char *what, cJSON **doc, char **label, mb_err *err)
{
    *doc = NULL;
    if (label)
        *label = NULL;
    if (mb_reference_exists(what)) {
        mb_reference r;
        if (mb_reference_load(what, &r, err))
            return err->code;
        *doc = r.measured.root; /* the files joined in their priority order */
        r.measured.root = NULL;
        if (label)
            *label = r.measured.label ? strdup(r.measured.label) : NULL;
        mb_reference_free(&r);
        return MB_OK;
    }
    if (not_results(what, err))
        return err->code;
    return mb_results_load(what, doc, err);
}

int mb_ceilings_open(const char *what, mb_ceilings *out, mb_err *err)
{
    memset(out, 0, sizeof *out);
    cJSON *doc = NULL;
    char *label = NULL;
    if (mb_results_open(what, &doc, &label, err))
        return err->code;
    int rc = mb_ceilings_from_json(doc, what, out, err);
    if (rc == MB_OK && label) {
        out->label = label;
        label = NULL;
    }
    free(label);
    return rc;
}

void mb_reference_free(mb_reference *r)
{
    if (r == NULL)
        return;
    free(r->name);
    free(r->dir);
    mb_ini_free(&r->ini);
    mb_ceilings_free(&r->measured);
    mb_datasheet_free(r->sheet);
    memset(r, 0, sizeof *r);
}

const char *mb_reference_get(const mb_reference *r, const char *key)
{
    return mb_ini_get(&r->ini, "provenance", key);
}

double mb_datasheet_figure(const mb_datasheet *d, bool target_is_gpu, const char *component, const char *dtype,
                           const char *direction, const char *device, char *what, size_t len, const char **source)
{
    double v = 0;
    *source = NULL;
    if (strcmp(device, "gpu") == 0 && !target_is_gpu) {
        snprintf(what, len, "the datasheet describes a CPU, this work ran on a GPU");
        return 0;
    }
    if (strcmp(device, "cpu") == 0 && target_is_gpu) {
        snprintf(what, len, "a GPU datasheet has no figure for %s work on the host", component);
        return 0;
    }
    /* attention is matmuls on the same tensor cores (configs/gap/matching.ini) */
    bool math = strcmp(component, "gemm") == 0 || strcmp(component, "conv") == 0 || strcmp(component, "peak") == 0 ||
                strcmp(component, "attention") == 0;
    if (math && dtype) {
        char key[64];
        if (strcmp(dtype, "fp64") == 0 && target_is_gpu && strcmp(component, "peak") != 0) {
            snprintf(key, sizeof key, "peak.fp64_tensor");
            if (mb_datasheet_get(d, key, &v, source)) {
                snprintf(what, len, "%s", key);
                return v * 1e12;
            }
        }
        snprintf(key, sizeof key, "peak.%s", dtype);
        snprintf(what, len, "%s", key);
        return mb_datasheet_get(d, key, &v, source) ? v * 1e12 : 0;
    }
    if (strcmp(component, "membw") == 0 || strcmp(component, "hostmem") == 0) {
        snprintf(what, len, "memory.bandwidth_gbps");
        return mb_datasheet_get(d, "memory.bandwidth_gbps", &v, source) ? v * 1e9 : 0;
    }
    if (strcmp(component, "copy") == 0 && direction && strcmp(direction, "d2d") != 0) {
        double gen, width;
        const char *src2;
        snprintf(what, len, "interconnect.pcie_gen x pcie_width");
        if (mb_datasheet_get(d, "interconnect.pcie_gen", &gen, source) &&
            mb_datasheet_get(d, "interconnect.pcie_width", &width, &src2))
            return mb_pcie_gbps((int)gen, (int)width) * 1e9;
        return 0;
    }
    if (strcmp(component, "copy") == 0) {
        /* device-to-device: bounded by memory bandwidth (each byte read and
         * written); only the ratio to here's peak matters, see docs/gap.md */
        snprintf(what, len, "memory.bandwidth_gbps");
        return mb_datasheet_get(d, "memory.bandwidth_gbps", &v, source) ? v * 1e9 : 0;
    }
    snprintf(what, len, "a datasheet has no figure for %s", component);
    return 0;
}
