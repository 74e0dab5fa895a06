/* results_page.c: the run/report page of a results document (the page frame
 * and the generic charts are in report/html.c). */
#include "results_page.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "results.h"
#include "vocabulary.h"
#include "svg.h"
#include "results_writers.h"

/* ---- results documents ----------------------------------------------------------------- */

static const char *str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const cJSON *obj(const cJSON *o, const char *k)
{
    return cJSON_GetObjectItemCaseSensitive(o, k);
}

static double param(const cJSON *c, const char *k)
{
    const char *v = str(obj(c, "params"), k);
    return v ? strtod(v, NULL) : NAN;
}

static const char *param_s(const cJSON *c, const char *k)
{
    const char *v = str(obj(c, "params"), k);
    return v ? v : "";
}

/* The case's one ceiling (results.h): the number every view shows. */
static double ceiling_of(const cJSON *c)
{
    mb_ceiling ce;
    mb_case_ceiling(c, &ce);
    return ce.value;
}

/* A case that can be drawn: status ok, verification passed, a ceiling. */
static bool usable(const cJSON *c)
{
    const char *st = str(c, "status"), *ver = str(obj(c, "verification"), "status");
    return st && strcmp(st, "ok") == 0 && ver && strcmp(ver, "passed") == 0 && ceiling_of(c) > 0;
}

static bool is(const cJSON *c, const char *component)
{
    const char *s = str(c, "component");
    return s && strcmp(s, component) == 0;
}

static void row_kv(FILE *o, const char *k, const char *v)
{
    if (v == NULL || *v == '\0')
        return;
    fputs("<tr><th>", o);
    mb_html_escape(o, k);
    fputs("</th><td>", o);
    mb_html_escape(o, v);
    fputs("</td></tr>\n", o);
}

static void row_kn(FILE *o, const char *k, double v, const char *fmt)
{
    if (!isfinite(v))
        return;
    char b[64];
    snprintf(b, sizeof b, fmt, v);
    row_kv(o, k, b);
}

static void machine_card(FILE *o, const cJSON *doc)
{
    const cJSON *ctx = obj(doc, "context"), *cpu = obj(ctx, "cpu"), *mem = obj(ctx, "memory"), *os = obj(ctx, "os");
    const cJSON *build = obj(ctx, "build"), *disk = obj(ctx, "disk"), *sw = obj(ctx, "gpu_software");
    fputs("<h2>Machine</h2>\n<table class=\"card\">\n", o);
    row_kv(o, "host", str(obj(ctx, "host"), "name"));
    row_kv(o, "suite", str(doc, "suite"));
    row_kv(o, "started (UTC)", str(doc, "started_utc"));
    char b[256];
    if (mb_results_unfinished(doc, b, sizeof b))
        row_kv(o, "run", b);
    row_kv(o, "CPU", str(cpu, "model"));
    snprintf(b, sizeof b, "%.0f sockets, %.0f cores, %.0f logical CPUs, %.0f NUMA nodes", num(cpu, "sockets"),
             num(cpu, "physical_cores"), num(cpu, "logical_cpus"), num(cpu, "numa_nodes"));
    if (cpu)
        row_kv(o, "CPU topology", b);
    row_kn(o, "memory (GiB)", num(mem, "total_bytes") / 1073741824.0, "%.1f");
    const cJSON *g;
    int i = 0;
    cJSON_ArrayForEach(g, obj(ctx, "gpus"))
    {
        char k[32];
        snprintf(k, sizeof k, "GPU %d", i++);
        snprintf(b, sizeof b, "%s, %.0f GiB, %.0f SMs, compute capability %s", str(g, "name") ? str(g, "name") : "?",
                 num(g, "memory_bytes") / 1073741824.0, num(g, "sms"),
                 str(g, "compute_capability") ? str(g, "compute_capability") : "?");
        row_kv(o, k, b);
        const cJSON *pcie = obj(g, "pcie");
        if (pcie) {
            snprintf(k, sizeof k, "GPU %d PCIe", i - 1);
            snprintf(b, sizeof b, "%s (max %s), %.1f GB/s per direction",
                     str(pcie, "current") ? str(pcie, "current") : "?", str(pcie, "max") ? str(pcie, "max") : "?",
                     num(pcie, "max_gbps_per_direction"));
            row_kv(o, k, b);
        }
    }
    if (os) {
        snprintf(b, sizeof b, "%s, kernel %s, %s", str(os, "name") ? str(os, "name") : "?",
                 str(os, "kernel") ? str(os, "kernel") : "?", str(os, "arch") ? str(os, "arch") : "?");
        row_kv(o, "OS", b);
    }
    if (disk) {
        snprintf(b, sizeof b, "%s (%s, %s), %s", str(disk, "device") ? str(disk, "device") : "?",
                 str(disk, "filesystem") ? str(disk, "filesystem") : "?",
                 cJSON_IsTrue(obj(disk, "rotational")) ? "reports rotational" : "non-rotational",
                 str(disk, "mount_point") ? str(disk, "mount_point") : "?");
        row_kv(o, "disk", b);
    }
    if (build) {
        snprintf(b, sizeof b, "mlbench %s (git %s), %s, %s",
                 str(build, "mlbench_version") ? str(build, "mlbench_version") : "?",
                 str(build, "git_revision") ? str(build, "git_revision") : "?",
                 str(build, "compiler") ? str(build, "compiler") : "?",
                 str(build, "build_type") ? str(build, "build_type") : "?");
        row_kv(o, "build", b);
    }
    if (sw) {
        snprintf(b, sizeof b, "driver %s, CUDA runtime %s, cuBLASLt %s, cuDNN %s, NCCL %s",
                 str(sw, "driver") ? str(sw, "driver") : "-", str(sw, "cuda_runtime") ? str(sw, "cuda_runtime") : "-",
                 str(sw, "cublaslt") ? str(sw, "cublaslt") : "-", str(sw, "cudnn") ? str(sw, "cudnn") : "-",
                 str(sw, "nccl") ? str(sw, "nccl") : "-");
        row_kv(o, "GPU software", b);
    }
    fputs("</table>\n", o);
}

/* ---- ceiling vs peak --------------------------------------------------------------------- */

typedef struct bars_buf {
    int n_cat, cap;
    double label_px;
    char **cats;
    double *lo, *hi, *elo, *ehi;
    char **titles;
    const char **ids; /* per bar: the case it shows (not owned), or NULL */
} bars_buf;

static int bb_add(bars_buf *b, int n_group, const char *cat)
{
    if (b->n_cat == b->cap) {
        int cap = b->cap ? 2 * b->cap : 16;
        char **c = realloc(b->cats, sizeof *c * (size_t)cap);
        if (c)
            b->cats = c;
        double *p[4] = { realloc(b->lo, sizeof(double) * (size_t)(cap * n_group)),
                         realloc(b->hi, sizeof(double) * (size_t)(cap * n_group)),
                         realloc(b->elo, sizeof(double) * (size_t)(cap * n_group)),
                         realloc(b->ehi, sizeof(double) * (size_t)(cap * n_group)) };
        if (p[0])
            b->lo = p[0];
        if (p[1])
            b->hi = p[1];
        if (p[2])
            b->elo = p[2];
        if (p[3])
            b->ehi = p[3];
        char **t = realloc(b->titles, sizeof *t * (size_t)(cap * n_group));
        if (t)
            b->titles = t;
        const char **ids = realloc(b->ids, sizeof *ids * (size_t)(cap * n_group));
        if (ids)
            b->ids = ids;
        if (!c || !p[0] || !p[1] || !p[2] || !p[3] || !t || !ids)
            return -1;
        b->cap = cap;
    }
    int k = b->n_cat++;
    b->cats[k] = strdup(cat);
    for (int g = 0; g < n_group; g++) {
        int i = k * n_group + g;
        b->lo[i] = 0;
        b->hi[i] = -1;
        b->elo[i] = b->ehi[i] = -1;
        b->titles[i] = NULL;
        b->ids[i] = NULL;
    }
    return b->cats[k] ? k : -1;
}

static void bb_free(bars_buf *b, int n_group)
{
    for (int k = 0; k < b->n_cat; k++) {
        free(b->cats[k]);
        for (int g = 0; g < n_group; g++)
            free(b->titles[k * n_group + g]);
    }
    free(b->cats);
    free(b->lo);
    free(b->hi);
    free(b->elo);
    free(b->ehi);
    free(b->titles);
    free(b->ids);
    memset(b, 0, sizeof *b);
}

static void bb_chart(FILE *o, const bars_buf *b, int n_group, const char *id, const char *title, const char *x_label,
                     const char *const *groups, const int *colors, bool log)
{
    if (b->n_cat == 0)
        return;
    mb_html_bars hb = { .id = id,
                        .title = title,
                        .x_label = x_label,
                        .n_cat = b->n_cat,
                        .n_group = n_group,
                        .cats = (const char *const *)b->cats,
                        .groups = groups,
                        .lo = b->lo,
                        .hi = b->hi,
                        .err_lo = b->elo,
                        .err_hi = b->ehi,
                        .titles = (const char *const *)b->titles,
                        .colors = colors,
                        .log = log,
                        .label_px = b->label_px,
                        .case_ids = b->ids };
    mb_html_bar_chart(o, &hb);
}

/* The distinct components in file order. */
static int components(const cJSON *cases, const char **out, int max)
{
    int n = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cases)
    {
        const char *comp = str(c, "component");
        bool seen = comp == NULL;
        for (int i = 0; i < n && !seen; i++)
            seen = strcmp(out[i], comp) == 0;
        if (!seen && n < max)
            out[n++] = comp;
    }
    return n;
}

static void ceiling_chart(FILE *o, const cJSON *cases, const char *comp, const char *unit, bool by_unit);

static void ceiling_vs_peak(FILE *o, const cJSON *cases)
{
    fputs("<h2>Ceilings against peaks</h2>\n<p class=\"note\">Per component: the measured ceiling (the "
          "sustained phase for compute cases, else the repetitions' median; error bar &plusmn; the repetitions' "
          "coefficient of variation) next to the theoretical peak where one is "
          "known; the label gives the efficiency (ceiling / peak).</p>\n",
          o);
    const char *comps[64];
    int nc = components(cases, comps, 64);
    for (int k = 0; k < nc; k++) {
        /* one chart per unit: GFLOP/s of a CPU and TFLOP/s of a GPU do not share an axis */
        const char *units[8];
        int nu = 0;
        const cJSON *c;
        cJSON_ArrayForEach(c, cases)
        {
            const char *u = str(c, "rate_unit");
            bool seen = u == NULL || !is(c, comps[k]) || !usable(c);
            for (int i = 0; i < nu && !seen; i++)
                seen = strcmp(units[i], u) == 0;
            if (!seen && nu < 8)
                units[nu++] = u;
        }
        for (int ui = 0; ui < nu; ui++)
            ceiling_chart(o, cases, comps[k], units[ui], nu > 1);
    }
}

static bool in_ceiling_chart(const cJSON *c, const char *comp, const char *unit)
{
    const char *u = str(c, "rate_unit");
    return is(c, comp) && usable(c) && u != NULL && strcmp(u, unit) == 0;
}

static bool has_word(const char *text, const char *word, size_t len)
{
    for (const char *p = text; (p = strstr(p, word)) != NULL; p++)
        if ((p == text || p[-1] == ' ') && (p[len] == ' ' || p[len] == '\0'))
            return true;
    return false;
}

/* The parameters ("file_size=512m") in the label of every case of the
 * chart, space-separated: said once in the title instead of in each row, so
 * the rows' labels keep the parameters that tell them apart. */
static void shared_params(const cJSON *cases, const char *comp, const char *unit, char *out, size_t len)
{
    out[0] = '\0';
    const cJSON *first = NULL, *c;
    int n = 0;
    cJSON_ArrayForEach(c, cases)
        if (in_ceiling_chart(c, comp, unit) && n++ == 0)
            first = c;
    if (n < 2)
        return;
    char label[256];
    mb_case_label(first, label, sizeof label);
    char *save = NULL;
    for (char *w = strtok_r(label, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
        if (strchr(w, '=') == NULL)
            continue;
        bool everywhere = true;
        cJSON_ArrayForEach(c, cases)
        {
            char other[256];
            if (!in_ceiling_chart(c, comp, unit))
                continue;
            mb_case_label(c, other, sizeof other);
            everywhere = everywhere && has_word(other, w, strlen(w));
        }
        size_t used = strlen(out);
        if (everywhere)
            snprintf(out + used, len - used, "%s%s", used ? " " : "", w);
    }
}

/* label without the words of `drop` (space-separated). */
static void drop_words(char *label, const char *drop)
{
    char out[256] = "", copy[256];
    snprintf(copy, sizeof copy, "%s", label);
    char *save = NULL;
    for (char *w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
        if (has_word(drop, w, strlen(w)))
            continue;
        size_t used = strlen(out);
        snprintf(out + used, sizeof out - used, "%s%s", used ? " " : "", w);
    }
    strcpy(label, out);
}

static void ceiling_chart(FILE *o, const cJSON *cases, const char *comp, const char *unit, bool by_unit)
{
    static const char *const groups[] = { "ceiling", "peak" };
    static const int colors[] = { 0, 7 };
    {
        bars_buf b = { 0 };
        char common[256];
        shared_params(cases, comp, unit, common, sizeof common);
        const cJSON *c;
        cJSON_ArrayForEach(c, cases)
        {
            if (!in_ceiling_chart(c, comp, unit))
                continue;
            char label[256], row[256], cat[300];
            mb_case_label(c, label, sizeof label);
            snprintf(row, sizeof row, "%s", label);
            drop_words(row, common);
            double rate = ceiling_of(c), cv = num(obj(c, "rate"), "cv");
            double peak = num(obj(c, "peak"), "value");
            if (peak > 0)
                snprintf(cat, sizeof cat, "%.0f%% %s", 100 * rate / peak, row);
            else
                snprintf(cat, sizeof cat, "%s", row);
            int i = bb_add(&b, 2, cat);
            if (i < 0)
                break;
            b.hi[2 * i] = rate;
            b.ids[2 * i] = str(c, "id");
            if (cv > 0) {
                b.elo[2 * i] = rate * (1 - cv);
                b.ehi[2 * i] = rate * (1 + cv);
            }
            char t[512], fig[64];
            mb_fmt_case_rate(c, rate, fig, sizeof fig);
            snprintf(t, sizeof t, "%s: %s, cv %.1f%%%s", label, fig, 100 * (cv > 0 ? cv : 0),
                     strcmp(mb_case_state(c), "noisy") ? "" : ", noisy: not a reliable ceiling");
            b.titles[2 * i] = strdup(t);
            if (peak > 0) {
                b.hi[2 * i + 1] = peak;
                mb_fmt_case_rate(c, peak, fig, sizeof fig);
                snprintf(t, sizeof t, "peak %s: %s", fig,
                         str(obj(c, "peak"), "source") ? str(obj(c, "peak"), "source") : "");
                b.titles[2 * i + 1] = strdup(t);
            }
        }
        char id[96], title[384];
        snprintf(id, sizeof id, "ceiling-%s%s%s", comp, by_unit ? "-" : "", by_unit ? unit : "");
        snprintf(title, sizeof title, "%s: ceiling vs peak%s%s%s%s%s", comp, by_unit ? ", " : "", by_unit ? unit : "",
                 common[0] ? " (every case: " : "", common, common[0] ? ")" : "");
        b.label_px = 440;
        bb_chart(o, &b, 2, id, title, unit, groups, colors, false);
        bb_free(&b, 2);
    }
}

/* ---- roofline ----------------------------------------------------------------------- */

static double dtype_bytes(const char *d)
{
    if (!d)
        return NAN;
    if (!strcmp(d, "fp64"))
        return 8;
    if (!strcmp(d, "fp32") || !strcmp(d, "tf32") || !strcmp(d, "float"))
        return 4;
    if (!strcmp(d, "fp16") || !strcmp(d, "bf16"))
        return 2;
    if (!strcmp(d, "fp8") || !strcmp(d, "int8"))
        return 1;
    return NAN;
}

double mb_case_intensity(const cJSON *c)
{
    double e = dtype_bytes(param_s(c, "dtype"));
    if (is(c, "gemm")) {
        double m = param(c, "m"), n = param(c, "n"), k = param(c, "k");
        const char *shape = param_s(c, "shape");
        if (!(m > 0) && sscanf(shape, "%lfx%lfx%lf", &m, &n, &k) != 3)
            return NAN;
        return 2 * m * n * k / (e * (m * k + k * n + m * n));
    }
    if (is(c, "conv")) {
        double n = param(c, "n"), ch = param(c, "c"), h = param(c, "h"), w = param(c, "w"), k = param(c, "k");
        double r = param(c, "r"), s = param(c, "s");
        double pad = isfinite(param(c, "pad")) ? param(c, "pad") : param(c, "pad_h");
        double st = isfinite(param(c, "stride")) ? param(c, "stride") : param(c, "stride_h");
        if (!isfinite(pad))
            pad = 0;
        if (!(st > 0))
            st = 1;
        double p = floor((h + 2 * pad - r) / st) + 1, q = floor((w + 2 * pad - s) / st) + 1;
        double flops = 2 * n * k * p * q * ch * r * s;
        return flops / (e * (n * ch * h * w + k * ch * r * s + n * k * p * q));
    }
    return NAN;
}

static const char *device_of(const cJSON *c)
{
    const char *b = str(c, "backend");
    return b && (strstr(b, "cu") == b || strcmp(b, "nccl") == 0) ? "gpu" : "cpu";
}

static double abs_rate(const cJSON *c)
{
    double s = num(c, "rate_scale");
    return ceiling_of(c) * (s > 0 ? s : 1);
}

static double abs_peak(const cJSON *c)
{
    double s = num(c, "rate_scale");
    return num(obj(c, "peak"), "value") * (s > 0 ? s : 1);
}

/* A dtype's compute peak, and the roof it is drawn on. */
typedef struct dtype_peak {
    char dtype[16];
    double peak;
    int roof;
} dtype_peak;

/* One roof line: the dtypes whose peaks are equal share it (one line, one
 * label "fp64, fp32 peak ..."), and their cases its colour. */
typedef struct roof {
    char dtypes[96];
    double peak;
    int color;
    bool ints, floats;
} roof;

/* Roof colours: the palette without the measured slope's blue (0) and the
 * datasheet slope's grey (7); black (6) is for cases without a peak. */
static const int ROOF_COLORS[] = { 1, 2, 3, 4, 8, 9, 10, 11, 5 };
enum { NO_PEAK_COLOR = 6, MAX_DTYPES = 16 };

static int collect_peaks(const cJSON *cases, const char *device, dtype_peak *dt)
{
    int n = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cases)
    {
        if (strcmp(device_of(c), device) != 0 || !(is(c, "gemm") || is(c, "conv") || is(c, "peak")) ||
            !(abs_peak(c) > 0))
            continue;
        const char *d = param_s(c, "dtype");
        int k = 0;
        while (k < n && strcmp(dt[k].dtype, d) != 0)
            k++;
        if (k == n) {
            if (n == MAX_DTYPES)
                continue;
            snprintf(dt[n].dtype, sizeof dt[n].dtype, "%s", d);
            dt[n++].peak = 0;
        }
        dt[k].peak = fmax(dt[k].peak, abs_peak(c));
    }
    return n;
}

/* Groups the dtypes into roofs of equal peaks (to 1e-6), in file order. */
static int group_roofs(dtype_peak *dt, int nd, roof *roofs)
{
    int nr = 0;
    for (int i = 0; i < nd; i++) {
        int k = 0;
        while (k < nr && fabs(roofs[k].peak - dt[i].peak) > 1e-6 * roofs[k].peak)
            k++;
        if (k == nr) {
            roofs[nr] = (roof){ .peak = dt[i].peak,
                                .color = ROOF_COLORS[nr % (int)(sizeof ROOF_COLORS / sizeof *ROOF_COLORS)] };
            nr++;
        }
        size_t l = strlen(roofs[k].dtypes);
        snprintf(roofs[k].dtypes + l, sizeof roofs[k].dtypes - l, "%s%s", l ? ", " : "", dt[i].dtype);
        roofs[k].ints |= mb_dtype_is_integer(dt[i].dtype);
        roofs[k].floats |= !mb_dtype_is_integer(dt[i].dtype);
        dt[i].roof = k;
    }
    return nr;
}

static const char *roof_unit(const roof *r)
{
    return r->ints && r->floats ? "FLOP/s or OP/s" : r->ints ? "OP/s" : "FLOP/s";
}

static int roof_of(const dtype_peak *dt, int nd, const char *dtype)
{
    for (int i = 0; i < nd; i++)
        if (strcmp(dt[i].dtype, dtype) == 0)
            return dt[i].roof;
    return -1;
}

typedef struct roof_point {
    const cJSON *c;
    double ai, rate;
    int roof;
} roof_point;

static int collect_points(const cJSON *cases, const char *device, const dtype_peak *dt, int nd, roof_point *pts,
                          int max)
{
    int n = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cases)
    {
        if (!(is(c, "gemm") || is(c, "conv")) || strcmp(device_of(c), device) != 0 || !usable(c) || n == max)
            continue;
        double ai = mb_case_intensity(c);
        if (isfinite(ai) && ai > 0)
            pts[n++] = (roof_point){ c, ai, abs_rate(c), roof_of(dt, nd, param_s(c, "dtype")) };
    }
    return n;
}

/* The hover text of a case's dot: which case, its rate (the table's figure
 * of its ceiling, in the case's unit) and intensity in FLOP or (integer
 * dtypes) OP. */
static void point_title(const roof_point *p, char *t, size_t len)
{
    char label[256], r[48], ai[32];
    const char *d = param_s(p->c, "dtype");
    const char *w = mb_dtype_is_integer(d) ? "OP" : "FLOP";
    mb_case_label(p->c, label, sizeof label);
    mb_fmt_case_rate(p->c, ceiling_of(p->c), r, sizeof r);
    mb_svg_fmt_si(ai, sizeof ai, p->ai);
    snprintf(t, len, "%s: %s at %s %s/byte%s", label, r, ai, w,
             strcmp(mb_case_state(p->c), "noisy") ? "" : " (noisy: not a reliable ceiling)");
}

static void roofline_legend(mb_chart *ch, const roof *roofs, int nr, bool meas, bool sheet, bool no_peak)
{
    const char *names[24];
    int cols[24], n = 0;
    char texts[16][128];
    if (meas) {
        names[n] = "measured memory slope";
        cols[n++] = 0;
    }
    if (sheet) {
        names[n] = "datasheet memory slope";
        cols[n++] = 7;
    }
    for (int k = 0; k < nr && k < 16; k++) {
        snprintf(texts[k], sizeof texts[k], "%.100s: roof and cases", roofs[k].dtypes);
        names[n] = texts[k];
        cols[n++] = roofs[k].color;
    }
    if (no_peak) {
        names[n] = "cases without a known peak";
        cols[n++] = NO_PEAK_COLOR;
    }
    mb_chart_legend(ch, n, names, cols);
}

static void roofline_points(mb_chart *ch, const roof *roofs, int nr, const roof_point *pts, int np)
{
    /* one series per roof, then the cases without a peak */
    for (int k = -1; k < nr; k++) {
        int in = 0;
        for (int i = 0; i < np; i++)
            in += pts[i].roof == k;
        if (in == 0)
            continue;
        mb_chart_series_begin(ch, k >= 0 ? roofs[k].dtypes : "no peak");
        for (int i = 0; i < np; i++) {
            if (pts[i].roof != k)
                continue;
            char t[512];
            point_title(&pts[i], t, sizeof t);
            double s = num(pts[i].c, "rate_scale");
            mb_chart_point(ch, pts[i].ai, pts[i].rate, k >= 0 ? roofs[k].color : NO_PEAK_COLOR, t,
                           str(pts[i].c, "id"), pts[i].rate / (s > 0 ? s : 1));
        }
        mb_chart_series_end(ch);
    }
}

/* Where a memory slope enters the plot: at its left edge, or where it
 * crosses the bottom edge (the rounded x domain can start below it, and a
 * line below the x axis is drawn outside the chart). */
static double slope_start(const mb_chart *ch, double bw)
{
    return fmax(ch->x.d0, ch->y.d0 / bw);
}

static void roofline(FILE *o, const cJSON *cases, const char *device)
{
    dtype_peak dt[MAX_DTYPES];
    roof roofs[MAX_DTYPES];
    int nd = collect_peaks(cases, device, dt);
    int nr = group_roofs(dt, nd, roofs);
    double bw_meas = 0, bw_sheet = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cases)
    {
        if (strcmp(device_of(c), device) != 0)
            continue;
        bool gpu_mem = is(c, "membw"), cpu_mem = is(c, "hostmem") && !strcmp(param_s(c, "kernel"), "triad");
        if ((gpu_mem || cpu_mem) && usable(c)) {
            bw_meas = fmax(bw_meas, abs_rate(c));
            if (abs_peak(c) > 0)
                bw_sheet = fmax(bw_sheet, abs_peak(c));
        }
    }
    roof_point pts[256];
    int np = collect_points(cases, device, dt, nd, pts, 256);
    /* no case to place (a page of peak and membw cases only): no chart of roofs alone */
    if (nr == 0 || np == 0 || !(bw_meas > 0 || bw_sheet > 0))
        return;
    double top = 0, bw = fmax(bw_meas, bw_sheet);
    for (int k = 0; k < nr; k++)
        top = fmax(top, roofs[k].peak);
    double min_peak = top;
    for (int k = 0; k < nr; k++)
        min_peak = fmin(min_peak, roofs[k].peak);
    double xmax = 4 * top / (bw_meas > 0 ? bw_meas : bw_sheet);
    for (int i = 0; i < np; i++)
        xmax = fmax(xmax, 2 * pts[i].ai);
    double xmin = 0.1 * min_peak / bw;
    for (int i = 0; i < np; i++)
        xmin = fmin(xmin, pts[i].ai / 2);
    bool ints = false, floats = false, no_peak = false;
    for (int k = 0; k < nr; k++) {
        ints |= roofs[k].ints;
        floats |= roofs[k].floats;
    }
    for (int i = 0; i < np; i++)
        no_peak |= pts[i].roof < 0;
    char title[128], id[32];
    snprintf(title, sizeof title, "Roofline (%s): compute peaks per dtype, memory bandwidth slope", device);
    snprintf(id, sizeof id, "roofline-%s", device);
    mb_chart ch;
    mb_chart_begin(&ch, o, id, title, MB_HTML_WIDTH, 520, 90, 48);
    ch.x = (mb_scale){ xmin, xmax, ch.left, ch.right, true };
    /* low enough for the slowest case too: a case far below its roof is the point of the chart */
    double ymin = mb_roofline_at(xmin, min_peak, bw) / 2;
    for (int i = 0; i < np; i++)
        ymin = fmin(ymin, pts[i].rate / 2);
    ch.y = (mb_scale){ ymin, top * 2, ch.bottom, ch.top, true };
    mb_scale_nice(&ch.x);
    mb_scale_nice(&ch.y);
    roofline_legend(&ch, roofs, nr, bw_meas > 0, bw_sheet > 0, no_peak);
    mb_chart_x_axis(&ch, ints && floats ? "arithmetic intensity (FLOP, for int8 OP, per byte of operands)"
                         : ints         ? "arithmetic intensity (OP per byte of operands)"
                                        : "arithmetic intensity (FLOP per byte of operands)");
    mb_chart_y_axis(&ch, ints && floats ? "FLOP/s (integer dtypes: OP/s)" : ints ? "OP/s" : "FLOP/s");
    /* labels from the highest roof down: each moves clear of those above it */
    int order[MAX_DTYPES];
    for (int k = 0; k < nr; k++)
        order[k] = k;
    for (int i = 1; i < nr; i++)
        for (int j = i; j > 0 && roofs[order[j]].peak > roofs[order[j - 1]].peak; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    for (int i = 0; i < nr; i++) {
        const roof *r = &roofs[order[i]];
        char l[256], v[48];
        mb_fmt_si(v, sizeof v, r->peak, roof_unit(r));
        snprintf(l, sizeof l, "%s peak %s", r->dtypes, v);
        double ridge = mb_roofline_ridge(r->peak, bw_meas > 0 ? bw_meas : bw_sheet);
        mb_chart_segment(&ch, fmax(ridge, ch.x.d0), r->peak, ch.x.d1, r->peak, r->color, false, l);
    }
    /* slopes: from the left edge to where the highest roof begins */
    if (bw_meas > 0) {
        char l[128], v[48];
        mb_fmt_si(v, sizeof v, bw_meas, "B/s");
        snprintf(l, sizeof l, "measured %s", v);
        double x1 = fmin(ch.x.d1, mb_roofline_ridge(top, bw_meas)), x0 = slope_start(&ch, bw_meas);
        mb_chart_segment(&ch, x0, x0 * bw_meas, x1, x1 * bw_meas, 0, false, l);
    }
    if (bw_sheet > 0) {
        double x1 = fmin(ch.x.d1, mb_roofline_ridge(top, bw_sheet)), x0 = slope_start(&ch, bw_sheet);
        mb_chart_segment(&ch, x0, x0 * bw_sheet, x1, x1 * bw_sheet, 7, true, NULL);
    }
    roofline_points(&ch, roofs, nr, pts, np);
    mb_chart_end(&ch);
}

/* The roofline section: its heading only where a roofline is drawn (a page
 * of disk cases has no roof, and a heading over nothing misleads). */
static int rooflines(FILE *o, const cJSON *cases, mb_err *err)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (mem == NULL)
        return mb_errno(err, MB_ESYS, "open_memstream");
    roofline(mem, cases, "gpu");
    roofline(mem, cases, "cpu");
    if (fclose(mem) != 0) {
        free(text);
        return mb_errno(err, MB_ESYS, "formatting the roofline");
    }
    if (len > 0) {
        fputs("<h2>Roofline</h2>\n<p class=\"note\">Compute roofs are the peaks per dtype (datasheet or computed, as "
              "the cases report them; dtypes of equal peaks share one roof); the solid slope is the measured "
              "memory-bandwidth ceiling, the dashed one the datasheet's. GEMM and convolution cases sit at their "
              "arithmetic intensity (operands read and result written once), in their dtype's roof colour; "
              "integer dtypes count operations (OP/s), not FLOP/s. Hover a dot for its case.</p>\n",
              o);
        fwrite(text, 1, len, o);
    }
    free(text);
    return MB_OK;
}

/* ---- curves (bandwidth vs size, disk by block size) ------------------------------------- */

typedef struct curve {
    char name[96];
    double x[64], y[64], elo[64], ehi[64];
    int n;
} curve;

/* The most curves one chart draws and names in its legend (the disk suite's
 * chart, the largest, has 20: io_uring with sqpoll off and on, submit batch
 * and each, iopoll). */
#define MAX_CURVES 32

static curve *curve_for(curve *cs, int *n, int max, const char *name)
{
    for (int i = 0; i < *n; i++)
        if (strcmp(cs[i].name, name) == 0)
            return &cs[i];
    if (*n == max)
        return NULL;
    curve *c = &cs[(*n)++];
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "%s", name);
    return c;
}

/* Sorts each curve by x so that lines go left to right. */
static void sort_curve(curve *c)
{
    for (int i = 1; i < c->n; i++)
        for (int j = i; j > 0 && c->x[j] < c->x[j - 1]; j--) {
            double t;
#define SWAP(a)                                                                                                        \
    t = a[j];                                                                                                          \
    a[j] = a[j - 1];                                                                                                   \
    a[j - 1] = t
            SWAP(c->x);
            SWAP(c->y);
            SWAP(c->elo);
            SWAP(c->ehi);
#undef SWAP
        }
}

/* A horizontal reference line on a curve chart: a link's or memory's peak. */
typedef struct ref_line {
    double y;
    char label[160];
} ref_line;

/* Neighbouring sizes of a sweep further apart than this are two points, not
 * a line: a line between 4 KiB and 256 MiB draws a curve nobody measured. */
static const double SWEEP_JOIN = 16;

typedef struct curve_view {
    const char *id, *title, *x_label, *y_label, *y_unit;
    bool log_y;         /* false: a linear axis from 0 (bandwidths that saturate read true there) */
    const ref_line *refs;
    int n_refs;
} curve_view;

static void curve_chart(FILE *o, curve *cs, int n, const curve_view *v)
{
    double x0 = INFINITY, x1 = 0, y1 = 0, y0 = INFINITY;
    int pts = 0;
    for (int i = 0; i < n; i++) {
        sort_curve(&cs[i]);
        for (int k = 0; k < cs[i].n; k++) {
            x0 = fmin(x0, cs[i].x[k]);
            x1 = fmax(x1, cs[i].x[k]);
            y0 = fmin(y0, cs[i].y[k]);
            y1 = fmax(y1, cs[i].ehi[k] > cs[i].y[k] ? cs[i].ehi[k] : cs[i].y[k]);
            pts++;
        }
    }
    if (pts == 0)
        return;
    for (int r = 0; r < v->n_refs; r++)
        y1 = fmax(y1, v->refs[r].y * 1.05);
    mb_chart ch;
    mb_chart_begin(&ch, o, v->id, v->title, MB_HTML_WIDTH, 420, 90, 48);
    ch.x = (mb_scale){ x0, x1 > x0 ? x1 : x0 * 10, ch.left, ch.right, true };
    ch.y = (mb_scale){ v->log_y ? y0 / 2 : 0, y1, ch.bottom, ch.top, v->log_y };
    mb_scale_nice(&ch.x);
    mb_scale_nice(&ch.y);
    const char *names[MAX_CURVES];
    int cols[MAX_CURVES];
    for (int i = 0; i < n && i < MAX_CURVES; i++) {
        names[i] = cs[i].name;
        cols[i] = i;
    }
    mb_chart_legend(&ch, n < MAX_CURVES ? n : MAX_CURVES, names, cols);
    mb_chart_x_axis(&ch, v->x_label);
    mb_chart_y_axis(&ch, v->y_label);
    for (int r = 0; r < v->n_refs; r++)
        mb_chart_segment(&ch, ch.x.d0, v->refs[r].y, ch.x.d1, v->refs[r].y, 6, true, v->refs[r].label);
    for (int i = 0; i < n; i++)
        mb_chart_sweep(&ch, cs[i].name, i, cs[i].n, cs[i].x, cs[i].y, cs[i].elo, cs[i].ehi, SWEEP_JOIN, v->y_unit,
                       "B");
    mb_chart_end(&ch);
}

static void add_point(curve *c, const cJSON *cs, double x)
{
    if (c == NULL || c->n == 64 || !(x > 0))
        return;
    double y = ceiling_of(cs), cv = num(obj(cs, "rate"), "cv");
    c->x[c->n] = x;
    c->y[c->n] = y;
    c->elo[c->n] = cv > 0 ? y * (1 - cv) : -1;
    c->ehi[c->n] = cv > 0 ? y * (1 + cv) : -1;
    c->n++;
}

/* The benchmarked GPU's PCIe link: its generation and width, and its peak
 * per direction in GB/s (context.gpus[].pcie); 0 when the context does not
 * say. */
static double pcie_peak(const cJSON *doc, char *link, size_t len)
{
    const cJSON *p = obj(mb_results_benchmark_gpu(obj(doc, "context")), "pcie");
    snprintf(link, len, "%s", str(p, "max") ? str(p, "max") : "PCIe");
    double v = num(p, "max_gbps_per_direction");
    return v > 0 ? v : 0;
}

static bool is_d2d(const cJSON *c)
{
    return strcmp(param_s(c, "direction"), "d2d") == 0;
}

/* The peak the copy cases themselves report (their rate unit, GB/s), the
 * lowest of one direction's: the link when the context has no pcie. */
static double copy_case_peak(const cJSON *cases, bool d2d, bool bidir)
{
    double v = INFINITY;
    const cJSON *c;
    cJSON_ArrayForEach(c, cases)
    {
        if (is(c, "copy") && usable(c) && is_d2d(c) == d2d &&
            (strcmp(param_s(c, "direction"), "bidir") == 0) == bidir && num(obj(c, "peak"), "value") > 0)
            v = fmin(v, num(obj(c, "peak"), "value"));
    }
    return isfinite(v) ? v : 0;
}

/* Host<->device copies (PCIe) and device<->device copies (GPU memory) on
 * charts of their own: 55 GB/s and 3000 GB/s on one linear axis would
 * flatten the PCIe curves to the floor. */
static void copy_curves(FILE *o, const cJSON *doc, const cJSON *cases)
{
    curve cs[16];
    for (int d2d = 0; d2d <= 1; d2d++) {
        int n = 0;
        bool bidir = false;
        const cJSON *c;
        cJSON_ArrayForEach(c, cases)
        {
            if (!is(c, "copy") || !usable(c) || is_d2d(c) != d2d)
                continue;
            char name[96];
            /* d2d has no host memory: its "memory" parameter is the suite's default, not a property */
            snprintf(name, sizeof name, "%s%s%s", param_s(c, "direction"), d2d ? "" : " ",
                     d2d ? "" : param_s(c, "memory"));
            bidir |= strcmp(param_s(c, "direction"), "bidir") == 0;
            add_point(curve_for(cs, &n, 16, name), c, param(c, "size"));
        }
        if (n == 0)
            continue;
        ref_line refs[2];
        int nr = 0;
        if (!d2d) {
            char link[64];
            double peak = pcie_peak(doc, link, sizeof link);
            if (!(peak > 0)) {
                peak = copy_case_peak(cases, false, false);
                snprintf(link, sizeof link, "PCIe link");
            }
            if (peak > 0) {
                refs[nr].y = peak;
                snprintf(refs[nr++].label, sizeof refs[0].label, "%s peak, one direction: %.1f GB/s", link, peak);
                if (bidir) {
                    refs[nr].y = 2 * peak;
                    snprintf(refs[nr++].label, sizeof refs[0].label, "%s peak, both directions: %.1f GB/s", link,
                             2 * peak);
                }
            }
            fputs("<h2>Host&ndash;device copies: bandwidth against size</h2>\n<p class=\"note\">Copies over the "
                  "PCIe link by direction and host memory (pinned, pageable, write-combined), against the link's "
                  "peak (dashed): small copies are latency-bound, large ones approach the link. Sizes more than "
                  "16&times; apart are not joined by a line (nothing was measured between them).</p>\n",
                  o);
            curve_chart(o, cs, n,
                        &(curve_view){ "copy-bw", "Host-device copy bandwidth vs size (PCIe)", "bytes per copy", "GB/s",
                                       "GB/s", false, refs, nr });
        } else {
            double peak = copy_case_peak(cases, true, false);
            if (peak > 0) {
                refs[nr].y = peak;
                snprintf(refs[nr++].label, sizeof refs[0].label, "GPU memory peak (datasheet): %.0f GB/s", peak);
            }
            fputs("<h2>Device-to-device copies: bandwidth against size</h2>\n<p class=\"note\">Copies within GPU "
                  "memory, counted as read + write (2 &times; size) to compare with the memory's peak (dashed). "
                  "Copies small enough for the L2 cache can exceed it.</p>\n",
                  o);
            curve_chart(o, cs, n,
                        &(curve_view){ "copy-d2d", "Device-to-device copy bandwidth vs size (GPU memory)",
                                       "bytes per copy", "GB/s", "GB/s", false, refs, nr });
        }
    }
}

static const char *inplace_name(const cJSON *c)
{
    const char *v = param_s(c, "inplace");
    if (*v == '\0')
        return "";
    return strcmp(v, "1") == 0 || strcmp(v, "true") == 0 ? " in-place" : " out-of-place";
}

static void bandwidth_curves(FILE *o, const cJSON *doc, const cJSON *cases)
{
    copy_curves(o, doc, cases);
    curve cs[16];
    int n = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cases)
    {
        if (!usable(c))
            continue;
        const char *comp = str(c, "component");
        if (!comp || !(strstr(comp, "reduce") || strstr(comp, "gather") || strstr(comp, "broadcast") ||
                       strstr(comp, "alltoall")))
            continue;
        char name[96];
        /* in-place and out-of-place are two curves: NCCL's in-place path can differ */
        snprintf(name, sizeof name, "%s %s %s%s", comp, str(c, "backend") ? str(c, "backend") : "",
                 param_s(c, "dtype"), inplace_name(c));
        add_point(curve_for(cs, &n, 16, name), c, param(c, "size"));
    }
    if (n) {
        fputs("<h2>Collectives: bus bandwidth against size</h2>\n<p class=\"note\">busbw, as nccl-tests report it "
              "(algbw x the collective's factor; docs/collectives.md), in-place and out-of-place apart.</p>\n",
              o);
        curve_chart(o, cs, n,
                    &(curve_view){ "coll-bw", "Collective busbw vs size", "bytes per rank", "busbw GB/s", "GB/s", true,
                                   NULL, 0 });
    }
}

/* " sqpoll", " iopoll", " submit each": the io_uring options a case turns
 * on. The suites run the queued cases with sqpoll off and on and both ways of
 * submitting; one curve holding two of them would draw two points at one
 * block size. */
static void disk_options(const cJSON *c, char *buf, size_t len)
{
    snprintf(buf, len, "%s%s%s", strcmp(param_s(c, "sqpoll"), "on") == 0 ? " sqpoll" : "",
             strcmp(param_s(c, "iopoll"), "on") == 0 ? " iopoll" : "",
             strcmp(param_s(c, "submit"), "each") == 0 ? " submit each" : "");
}

static void disk_curves(FILE *o, const cJSON *cases)
{
    curve cs[MAX_CURVES];
    int n = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cases)
    {
        if (!is(c, "disk") || !usable(c))
            continue;
        char name[96], opts[32];
        const char *qd = param_s(c, "qd");
        bool advice = !*param_s(c, "mode") && *param_s(c, "advice");
        const char *mode = advice ? param_s(c, "advice") : param_s(c, "mode");
        disk_options(c, opts, sizeof opts);
        /* mmap's advice named as such: "mmap random random" read as a typo */
        snprintf(name, sizeof name, "%s %s %s%s%s%s%s", str(c, "backend") ? str(c, "backend") : "",
                 param_s(c, "pattern"), advice ? "advice=" : "", mode, *qd ? " qd=" : "", qd, opts);
        add_point(curve_for(cs, &n, MAX_CURVES, name), c, param(c, "block_size"));
    }
    if (n == 0)
        return;
    fputs("<h2>Disk: sequential against random</h2>\n<p class=\"note\">Read rate by block size, per pattern, mode and "
          "queue depth. Small random reads at queue depth 1 are the trap a data loader falls into.</p>\n",
          o);
    curve_chart(o, cs, n,
                &(curve_view){ "disk", "Disk read rate vs block size", "block size (bytes)", "MB/s", "MB/s", true, NULL,
                               0 });
}

/* ---- burst vs sustained ---------------------------------------------------------------- */

/* The rate of a burst/sustained object, in the case's rate unit: a number,
 * or {rate: number | {median}} or {median}. */
static double phase_rate(const cJSON *p)
{
    if (cJSON_IsNumber(p))
        return p->valuedouble;
    const cJSON *r = obj(p, "rate");
    if (cJSON_IsNumber(r))
        return r->valuedouble;
    if (cJSON_IsObject(r))
        return num(r, "median");
    return num(p, "median");
}

static void burst_sustained(FILE *o, const cJSON *cases)
{
    bars_buf b = { 0 };
    const cJSON *c;
    const char *unit = NULL;
    cJSON_ArrayForEach(c, cases)
    {
        double bu = phase_rate(obj(c, "burst")), su = phase_rate(obj(c, "sustained"));
        if (!(bu > 0) || !(su > 0))
            continue;
        const char *u = str(c, "rate_unit");
        if (unit == NULL)
            unit = u;
        if (!u || strcmp(u, unit) != 0)
            continue;
        char label[256], t[300];
        mb_case_label(c, label, sizeof label);
        int i = bb_add(&b, 2, label);
        if (i < 0)
            break;
        b.hi[2 * i] = bu;
        b.hi[2 * i + 1] = su;
        char fb[64], fs[64];
        mb_fmt_case_rate(c, bu, fb, sizeof fb);
        mb_fmt_case_rate(c, su, fs, sizeof fs);
        snprintf(t, sizeof t, "burst %s", fb);
        b.titles[2 * i] = strdup(t);
        snprintf(t, sizeof t, "sustained %s (%.0f%% of burst)", fs, 100 * su / bu);
        b.titles[2 * i + 1] = strdup(t);
    }
    if (b.n_cat) {
        static const char *const g[] = { "burst", "sustained" };
        static const int col[] = { 0, 4 };
        fputs("<h2>Burst against sustained</h2>\n<p class=\"note\">The rate of a short burst and of a long run "
              "(clocks and power settle). Sustained below burst with the clocks held down (a GPU at its power cap) is "
              "what a long training run loses; sustained above burst is noise (a long run cannot beat a short one): "
              "beyond the case's own noise the case is marked noisy.</p>\n",
              o);
        bb_chart(o, &b, 2, "burst", "Burst vs sustained", unit, g, col, false);
    }
    bb_free(&b, 2);
}

/* ---- tables ------------------------------------------------------------------------------ */

static void not_run(FILE *o, const cJSON *cases)
{
    fputs("<h2>Skipped and failed cases</h2>\n", o);
    int n = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cases)
    {
        const char *st = str(c, "status"), *ver = str(obj(c, "verification"), "status");
        bool bad_ver = st && !strcmp(st, "ok") && ver && strcmp(ver, "passed") != 0;
        if (st && !strcmp(st, "ok") && !bad_ver)
            continue;
        if (n++ == 0)
            fputs("<table class=\"not-run\"><tr><th>case</th><th>status</th><th>reason</th></tr>\n", o);
        char label[256];
        mb_case_label(c, label, sizeof label);
        fputs("<tr><td>", o);
        mb_html_escape(o, label);
        fputs("</td><td class=\"bad\">", o);
        mb_html_escape(o, mb_case_state(c));
        fputs("</td><td>", o);
        const char *why = bad_ver ? str(obj(c, "verification"), "detail") : str(c, "reason");
        mb_html_escape(o, why ? why : "");
        fputs("</td></tr>\n", o);
    }
    fputs(n ? "</table>\n" : "<p>None: every case ran and passed its verification.</p>\n", o);
}

/* Opens the cell of a case's headline number, with the case and the
 * value as data-case/data-value for the browser test. */
static void headline_cell(FILE *o, const cJSON *c, double value, const char *source)
{
    fputs("</td><td class=\"n\"", o);
    /* data-ceiling: the results file's number, for checks of the page */
    if (value > 0)
        fprintf(o, " data-ceiling=\"%.17g\" title=\"from: %s\"", value, source ? source : "");
    if (str(c, "id") && value > 0) {
        fputs(" data-case=\"", o);
        mb_html_escape(o, str(c, "id"));
        fprintf(o, "\" data-value=\"%.9g\"", value);
    }
    fputs(">", o);
}

static void all_cases(FILE *o, const cJSON *cases)
{
    fputs("<h2>All cases</h2>\n<table class=\"cases\"><tr><th>case</th><th>status</th><th>ceiling</th>"
          "<th>cv</th><th>peak</th><th>efficiency</th></tr>\n",
          o);
    const cJSON *c;
    cJSON_ArrayForEach(c, cases)
    {
        char label[256], b[64];
        mb_case_label(c, label, sizeof label);
        fputs("<tr><td title=\"", o);
        mb_html_escape(o, str(c, "id") ? str(c, "id") : "");
        fputs("\">", o);
        mb_html_escape(o, label);
        fputs("</td><td>", o);
        mb_html_escape(o, mb_case_state(c));
        double r = ceiling_of(c), cv = num(obj(c, "rate"), "cv"), pk = num(obj(c, "peak"), "value");
        const char *unit = str(c, "rate_unit") ? str(c, "rate_unit") : "";
        mb_ceiling ce;
        mb_case_ceiling(c, &ce);
        headline_cell(o, c, r, ce.source);
        if (r > 0) {
            mb_fmt_number(b, sizeof b, r);
            mb_html_escape(o, b);
            fputs(" ", o);
            mb_html_escape(o, unit);
        }
        fputs("</td><td class=\"n\">", o);
        if (isfinite(cv))
            fprintf(o, "%.1f%%", 100 * cv);
        fputs("</td><td class=\"n\">", o);
        if (pk > 0) {
            mb_fmt_number(b, sizeof b, pk);
            mb_html_escape(o, b);
            fputs(" ", o);
            mb_html_escape(o, unit);
        }
        fputs("</td><td class=\"n\">", o);
        if (isfinite(ce.efficiency))
            fprintf(o, "%.0f%%", 100 * ce.efficiency);
        fputs("</td></tr>\n", o);
    }
    fputs("</table>\n", o);
}

int mb_html_results(FILE *o, const cJSON *doc, mb_err *err)
{
    const cJSON *cases = obj(doc, "cases");
    if (!cJSON_IsArray(cases))
        return mb_errf(err, MB_EUSAGE, "results document without a cases array");
    char title[256];
    snprintf(title, sizeof title, "mlbench results: %s",
             str(obj(obj(doc, "context"), "host"), "name") ? str(obj(obj(doc, "context"), "host"), "name") : "?");
    mb_html_begin(o, title);
    machine_card(o, doc);
    ceiling_vs_peak(o, cases);
    int rc = rooflines(o, cases, err);
    if (rc != MB_OK)
        return rc;
    bandwidth_curves(o, doc, cases);
    disk_curves(o, cases);
    burst_sustained(o, cases);
    not_run(o, cases);
    all_cases(o, cases);
    mb_html_end(o);
    return MB_OK;
}

static int results_page(FILE *o, const void *doc, mb_err *err)
{
    return mb_html_results(o, doc, err);
}

int mb_html_results_file(const char *path, const cJSON *doc, mb_err *err)
{
    return mb_html_write_file(path, results_page, doc, err);
}
