/* diagnose.c: recognising the seed method's patterns in a gap. */
#include "diagnose.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- figures from the stages ------------------------------------------------- */

static bool name_has_any(const char *name, const char *list)
{
    if (list == NULL)
        return false;
    char copy[512], *save = NULL;
    snprintf(copy, sizeof copy, "%s", list);
    for (char *w = strtok_r(copy, ", \t", &save); w; w = strtok_r(NULL, ", \t", &save))
        if (strcasestr(name, w))
            return true;
    return false;
}

static bool is_collective(const char *c)
{
    return strcmp(c, "allreduce") == 0 || strcmp(c, "allgather") == 0 || strcmp(c, "reducescatter") == 0 ||
           strcmp(c, "broadcast") == 0;
}

static void figures_from_stages(const mb_gap *g, const mb_ini *t, mb_diag_figures *f)
{
    const char *data_names = mb_ini_get(t, "data_loading_bound", "names");
    double eff_time = 0, eff_sum = 0;
    double compute = 0, launch = 0, sync = 0, data = 0, copy = 0, pageable = 0, comm = 0, cpu = 0;
    for (int i = 0; i < g->n; i++) {
        const mb_gap_stage *st = &g->stages[i];
        const mb_stage *s = st->stage;
        const char *c = s->component;
        bool on_cpu = s->device && strcmp(s->device, "cpu") == 0;
        /* a name only classifies stages without a specific component: an
         * "upload" copy stays a copy */
        bool is_data = strcmp(c, "disk") == 0 ||
                       ((strcmp(c, "other") == 0 || strcmp(c, "hostmem") == 0) && name_has_any(s->name, data_names));
        if (is_data) {
            data += s->seconds;
            if (s->pattern && strcmp(s->pattern, "random") == 0)
                f->random_disk = true;
        } else if ((strcmp(c, "gemm") == 0 || strcmp(c, "conv") == 0) && on_cpu) {
            cpu += s->seconds;
        } else if (strcmp(c, "gemm") == 0 || strcmp(c, "conv") == 0 || strcmp(c, "membw") == 0) {
            compute += s->seconds;
            if (s->dtype && (strcmp(s->dtype, "fp32") == 0 || strcmp(s->dtype, "tf32") == 0))
                f->fp32_compute = true;
            if (st->match >= 0) {
                eff_time += s->seconds;
                eff_sum += s->seconds * st->efficiency;
            }
        } else if (strcmp(c, "launch") == 0) {
            launch += s->seconds;
            f->launches += s->work;
        } else if (strcmp(c, "sync") == 0) {
            sync += s->seconds;
            f->syncs += s->work;
        } else if (strcmp(c, "copy") == 0 && s->direction && strcmp(s->direction, "d2d") != 0) {
            copy += s->seconds;
            if (s->memory && strcmp(s->memory, "pageable") == 0)
                pageable += s->seconds;
        } else if (is_collective(c)) {
            comm += s->seconds;
        } else if (on_cpu && (strcmp(c, "other") == 0 || strcmp(c, "hostmem") == 0)) {
            cpu += s->seconds;
        }
    }
    double w = f->wall;
    f->compute_share = compute / w;
    f->launch_share = launch / w;
    f->sync_share = sync / w;
    f->data_share = data / w;
    f->copy_share = copy / w;
    f->pageable_share = pageable / w;
    f->comm_share = comm / w;
    f->cpu_share = cpu / w;
    f->compute_efficiency = eff_time > 0 ? eff_sum / eff_time : -1;
}

/* ---- figures from a trace's evidence (docs/traces.md) -------------------------- */

static double ev_num(const cJSON *o, const char *path)
{
    char copy[128], *save = NULL;
    snprintf(copy, sizeof copy, "%s", path);
    const cJSON *it = o;
    for (char *k = strtok_r(copy, ".", &save); k && it; k = strtok_r(NULL, ".", &save))
        it = cJSON_IsObject(it) ? cJSON_GetObjectItemCaseSensitive(it, k) : NULL;
    return cJSON_IsNumber(it) && isfinite(it->valuedouble) ? it->valuedouble : -1;
}

static void figures_from_evidence(const cJSON *ev, mb_diag_figures *f)
{
    double busy = 0, window = 0, idle = 0, compute = 0, comm = 0, host_wait = 0;
    const cJSON *devices = cJSON_GetObjectItemCaseSensitive(ev, "devices");
    const cJSON *d;
    cJSON_ArrayForEach(d, devices)
    {
        double b = ev_num(d, "busy_s"), wnd = ev_num(d, "window_s"), i = ev_num(d, "idle_s");
        if (b < 0 || wnd <= 0)
            continue;
        busy += b;
        window += wnd;
        idle += i > 0 ? i : 0;
        double hw = ev_num(d, "host_wait_idle_s");
        host_wait += hw > 0 ? hw : 0;
        double gm = ev_num(d, "classes.gemm.seconds"), cv = ev_num(d, "classes.conv.seconds");
        double nc = ev_num(d, "classes.nccl.seconds");
        compute += (gm > 0 ? gm : 0) + (cv > 0 ? cv : 0);
        comm += nc > 0 ? nc : 0;
    }
    double w = f->wall;
    if (window > 0) {
        f->gpu_util = busy / window;
        f->gpu_idle_share = idle / window;
        f->compute_share = compute / w;
        f->comm_share = comm / w;
    }
    double ls = ev_num(ev, "host.launch.seconds"), lc = ev_num(ev, "host.launch.count");
    if (ls >= 0) {
        f->launch_share = ls / w;
        f->launches = lc > 0 ? lc : f->launches;
        f->launch_idle_ratio = idle > 0 ? ls / idle : -1;
    }
    double ss = ev_num(ev, "host.sync.seconds"), sc = ev_num(ev, "host.sync.count");
    double bs = ev_num(ev, "host.blocking_copy.seconds");
    if (ss >= 0 || bs >= 0) {
        /* Host time in syncs is only lost when the GPU sits idle meanwhile
         * (a sync that waits for busy kernels costs nothing): the GPU idle
         * time while the host waits, capped by the host's sync time (the
         * reader's host-wait also covers DataLoader waits). */
        double in_sync = (ss > 0 ? ss : 0) + (bs > 0 ? bs : 0);
        f->sync_host_share = in_sync / w;
        f->sync_share = (window > 0 ? fmin(in_sync, host_wait) : in_sync) / w;
        f->syncs = sc > 0 ? sc : f->syncs;
    }
    double dl = ev_num(ev, "host.dataloader.seconds");
    if (dl >= 0)
        f->data_share = dl / w;
    const cJSON *copies = cJSON_GetObjectItemCaseSensitive(ev, "copies");
    if (cJSON_IsArray(copies)) {
        double copy = 0, pageable = 0;
        const cJSON *c;
        cJSON_ArrayForEach(c, copies)
        {
            const cJSON *dir = cJSON_GetObjectItemCaseSensitive(c, "direction");
            const cJSON *mem = cJSON_GetObjectItemCaseSensitive(c, "memory");
            double s = ev_num(c, "seconds");
            if (!cJSON_IsString(dir) || s <= 0 ||
                (strcmp(dir->valuestring, "h2d") != 0 && strcmp(dir->valuestring, "d2h") != 0))
                continue;
            copy += s;
            if (cJSON_IsString(mem) && strcmp(mem->valuestring, "pageable") == 0)
                pageable += s;
        }
        f->copy_share = copy / w;
        f->pageable_share = pageable / w;
    }
}

void mb_diag_figures_compute(const mb_gap *g, const mb_ini *t, mb_diag_figures *f)
{
    memset(f, 0, sizeof *f);
    f->source = "stages";
    f->wall = g->total > 0 ? g->total : 1;
    f->gpu_util = g->run->gpu_utilization;
    f->cpu_util = g->run->cpu_utilization;
    f->gpu_idle_share = f->gpu_util >= 0 ? 1 - f->gpu_util : -1;
    f->launch_idle_ratio = -1;
    f->sync_host_share = -1;
    figures_from_stages(g, t, f);
    if (cJSON_IsObject(g->run->evidence)) {
        f->source = "stages + trace evidence";
        figures_from_evidence(g->run->evidence, f);
    }
}

/* ---- findings ---------------------------------------------------------------------- */

static void us_each(char *buf, size_t len, double seconds, double count);

typedef struct builder {
    mb_diagnosis *d;
    mb_finding *cur;
    bool oom;
} builder;

static void push_str(builder *b, char ***list, int *n, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void push_str(builder *b, char ***list, int *n, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    char **g = realloc(*list, sizeof *g * (size_t)(*n + 1));
    char *s = strdup(buf);
    if (g == NULL || s == NULL) {
        if (g)
            *list = g;
        free(s);
        b->oom = true;
        return;
    }
    *list = g;
    (*list)[(*n)++] = s;
}

#define EVIDENCE(b, ...) push_str((b), &(b)->cur->evidence, &(b)->cur->n_evidence, __VA_ARGS__)

static bool begin_finding(builder *b, const char *id, double weight, const mb_ini *remedies)
{
    mb_finding *g = realloc(b->d->findings, sizeof *g * (size_t)(b->d->n + 1));
    if (g == NULL) {
        b->oom = true;
        return false;
    }
    b->d->findings = g;
    b->cur = &g[b->d->n++];
    memset(b->cur, 0, sizeof *b->cur);
    snprintf(b->cur->id, sizeof b->cur->id, "%s", id);
    const char *title = mb_ini_get(remedies, id, "title");
    snprintf(b->cur->title, sizeof b->cur->title, "%s", title ? title : id);
    b->cur->weight = weight;
    return true;
}

static bool condition_holds(const char *cond, const mb_diag_figures *f, double low)
{
    if (strcmp(cond, "random_disk") == 0)
        return f->random_disk;
    if (strcmp(cond, "pageable_copy") == 0)
        return f->pageable_share > 0;
    if (strcmp(cond, "fp32_compute") == 0)
        return f->fp32_compute;
    if (strcmp(cond, "low_efficiency") == 0)
        return f->compute_efficiency >= 0 && f->compute_efficiency < low;
    return false;
}

static void add_remedies(builder *b, const mb_ini *remedies, const mb_diag_figures *f, double low)
{
    const char *signs = mb_ini_get(remedies, b->cur->id, "signs");
    if (signs)
        EVIDENCE(b, "the pattern: %s", signs);
    for (int i = 0; i < remedies->n; i++) {
        const mb_ini_entry *e = &remedies->e[i];
        if (strcmp(e->section, b->cur->id) != 0)
            continue;
        if (strcmp(e->key, "remedy") == 0 ||
            (strncmp(e->key, "remedy.", 7) == 0 && condition_holds(e->key + 7, f, low)))
            push_str(b, &b->cur->remedies, &b->cur->n_remedies, "%s", e->value);
    }
}

static const char *pct(char *buf, size_t len, double share)
{
    if (share < 0)
        snprintf(buf, len, "unknown");
    else
        snprintf(buf, len, "%.1f%%", 100 * share);
    return buf;
}

typedef struct th {
    double gcb_util, gcb_share;
    double lb_share, lb_util, lb_idle, lb_cover;
    double sb_share, sb_util;
    double cc_share, cc_cpu, cc_gpu, cc_launch;
    double dl_share, cp_share, cm_share, eff_low;
} th;

static int load_thresholds(const mb_ini *t, th *x, mb_err *err)
{
    if (mb_ini_number(t, "gpu_compute_bound", "gpu_utilization_min", &x->gcb_util, err) ||
        mb_ini_number(t, "gpu_compute_bound", "compute_share_min", &x->gcb_share, err) ||
        mb_ini_number(t, "launch_bound", "share_min", &x->lb_share, err) ||
        mb_ini_number(t, "launch_bound", "gpu_utilization_max", &x->lb_util, err) ||
        mb_ini_number(t, "launch_bound", "gpu_idle_share_min", &x->lb_idle, err) ||
        mb_ini_number(t, "launch_bound", "idle_covered_min", &x->lb_cover, err) ||
        mb_ini_number(t, "sync_bound", "share_min", &x->sb_share, err) ||
        mb_ini_number(t, "sync_bound", "gpu_utilization_max", &x->sb_util, err) ||
        mb_ini_number(t, "cpu_compute_bound", "share_min", &x->cc_share, err) ||
        mb_ini_number(t, "cpu_compute_bound", "cpu_utilization_min", &x->cc_cpu, err) ||
        mb_ini_number(t, "cpu_compute_bound", "gpu_utilization_max", &x->cc_gpu, err) ||
        mb_ini_number(t, "cpu_compute_bound", "launch_share_max", &x->cc_launch, err) ||
        mb_ini_number(t, "data_loading_bound", "share_min", &x->dl_share, err) ||
        mb_ini_number(t, "copy_bound", "share_min", &x->cp_share, err) ||
        mb_ini_number(t, "communication_bound", "share_min", &x->cm_share, err) ||
        mb_ini_number(t, "efficiency", "low", &x->eff_low, err))
        return err->code;
    return MB_OK;
}

/* Each pattern: test, then evidence lines with the figures and thresholds. */

static void try_data(builder *b, const mb_gap *g, const mb_diag_figures *f, const th *x, const mb_ini *r)
{
    char p1[32], p2[32];
    if (f->data_share < x->dl_share || !begin_finding(b, "data_loading_bound", f->data_share, r))
        return;
    EVIDENCE(b, "data loading takes %s of the run (threshold %s)", pct(p1, sizeof p1, f->data_share),
             pct(p2, sizeof p2, x->dl_share));
    if (f->gpu_util >= 0)
        EVIDENCE(b, "GPU busy %s of the time", pct(p1, sizeof p1, f->gpu_util));
    for (int i = 0; i < g->n; i++) {
        const mb_gap_stage *st = &g->stages[i];
        if (strcmp(st->stage->component, "disk") == 0 && st->match >= 0)
            EVIDENCE(b, "stage '%s' reads %s at %.1f%% of the measured disk ceiling (%.4g of %.4g GB/s)",
                     st->stage->name, st->stage->pattern ? st->stage->pattern : "", 100 * st->efficiency,
                     st->measured_rate / 1e9, st->ceiling_rate / 1e9);
    }
    add_remedies(b, r, f, x->eff_low);
}

static void try_launch(builder *b, const mb_diag_figures *f, const th *x, const mb_ini *r)
{
    char p1[32], p2[32];
    bool by_share = f->launch_share >= x->lb_share && (f->gpu_util < 0 || f->gpu_util <= x->lb_util);
    bool by_idle = f->launch_idle_ratio >= x->lb_cover && f->gpu_idle_share >= x->lb_idle;
    if (!by_share && !by_idle)
        return;
    double weight = by_share ? f->launch_share : f->gpu_idle_share;
    if (!begin_finding(b, "launch_bound", weight, r))
        return;
    EVIDENCE(b, "host time in kernel launch calls: %s of the run (threshold %s)%s",
             pct(p1, sizeof p1, f->launch_share), pct(p2, sizeof p2, x->lb_share), by_share ? "" : " (below)");
    if (f->launches > 0) {
        char e[32];
        us_each(e, sizeof e, f->launch_share * f->wall, f->launches);
        EVIDENCE(b, "%.0f launches, %s each on average", f->launches, e);
    }
    if (f->gpu_util >= 0)
        EVIDENCE(b, "GPU busy %s (launch bound below %s)", pct(p1, sizeof p1, f->gpu_util),
                 pct(p2, sizeof p2, x->lb_util));
    if (f->launch_idle_ratio >= 0)
        EVIDENCE(b, "GPU idle %s of its window; host launch time = %.0f%% of that idle time (threshold %.0f%%)",
                 pct(p1, sizeof p1, f->gpu_idle_share), 100 * f->launch_idle_ratio, 100 * x->lb_cover);
    add_remedies(b, r, f, x->eff_low);
}

static void us_each(char *buf, size_t len, double seconds, double count)
{
    double each = seconds / count;
    if (each >= 1e-3)
        snprintf(buf, len, "%.3g ms", each * 1e3);
    else
        snprintf(buf, len, "%.3g us", each * 1e6);
}

static void try_sync(builder *b, const mb_diag_figures *f, const th *x, const mb_ini *r)
{
    char p1[32], p2[32], e[32];
    if (f->sync_share < x->sb_share || (f->gpu_util >= 0 && f->gpu_util > x->sb_util) ||
        !begin_finding(b, "sync_bound", f->sync_share, r))
        return;
    if (f->sync_host_share >= 0)
        EVIDENCE(b, "the GPU idles while the host waits in syncs: %s of the run (threshold %s); host in sync "
                    "calls %s",
                 pct(p1, sizeof p1, f->sync_share), pct(p2, sizeof p2, x->sb_share),
                 pct(e, sizeof e, f->sync_host_share));
    else
        EVIDENCE(b, "host time waiting in synchronizations: %s of the run (threshold %s)",
                 pct(p1, sizeof p1, f->sync_share), pct(p2, sizeof p2, x->sb_share));
    if (f->syncs > 0) {
        us_each(e, sizeof e, f->sync_share * f->wall, f->syncs);
        EVIDENCE(b, "%.0f syncs, %s each on average", f->syncs, e);
    }
    if (f->gpu_util >= 0)
        EVIDENCE(b, "GPU busy %s (sync bound at or below %s)", pct(p1, sizeof p1, f->gpu_util),
                 pct(p2, sizeof p2, x->sb_util));
    add_remedies(b, r, f, x->eff_low);
}

static void try_gpu_compute(builder *b, const mb_diag_figures *f, const th *x, const mb_ini *r)
{
    char p1[32], p2[32];
    bool by_util = f->gpu_util >= x->gcb_util;
    bool by_share = f->gpu_util < 0 && f->compute_share >= x->gcb_share;
    if (!by_util && !by_share)
        return;
    if (!begin_finding(b, "gpu_compute_bound", by_util ? f->gpu_util : f->compute_share, r))
        return;
    if (by_util)
        EVIDENCE(b, "GPU busy %s of the time (threshold %s)", pct(p1, sizeof p1, f->gpu_util),
                 pct(p2, sizeof p2, x->gcb_util));
    if (by_share)
        EVIDENCE(b, "GEMM/conv/memory-bound GPU work: %s of the run (threshold %s; GPU utilization unknown)",
                 pct(p1, sizeof p1, f->compute_share), pct(p2, sizeof p2, x->gcb_share));
    else
        EVIDENCE(b, "GEMM/conv/memory-bound GPU work: %s of the run", pct(p1, sizeof p1, f->compute_share));
    if (f->compute_efficiency >= 0)
        EVIDENCE(b, "that work runs at %.0f%% of the measured ceilings (time-weighted)", 100 * f->compute_efficiency);
    add_remedies(b, r, f, x->eff_low);
}

static void try_cpu_compute(builder *b, const mb_diag_figures *f, const th *x, const mb_ini *r)
{
    char p1[32], p2[32];
    bool by_share = f->cpu_share >= x->cc_share;
    bool by_util = f->cpu_util >= x->cc_cpu && f->gpu_util >= 0 && f->gpu_util <= x->cc_gpu &&
                   f->launch_share <= x->cc_launch;
    if (!by_share && !by_util)
        return;
    if (!begin_finding(b, "cpu_compute_bound", by_share ? f->cpu_share : 1 - f->gpu_util, r))
        return;
    if (by_share)
        EVIDENCE(b, "compute on the CPU takes %s of the run (threshold %s)", pct(p1, sizeof p1, f->cpu_share),
                 pct(p2, sizeof p2, x->cc_share));
    if (f->cpu_util >= 0)
        EVIDENCE(b, "CPU busy %s (threshold %s)", pct(p1, sizeof p1, f->cpu_util), pct(p2, sizeof p2, x->cc_cpu));
    if (f->gpu_util >= 0)
        EVIDENCE(b, "GPU busy %s (CPU bound below %s)", pct(p1, sizeof p1, f->gpu_util),
                 pct(p2, sizeof p2, x->cc_gpu));
    EVIDENCE(b, "kernel launches: %s of the run", pct(p1, sizeof p1, f->launch_share));
    add_remedies(b, r, f, x->eff_low);
}

static void try_share(builder *b, const char *id, const char *what, double share, double min, const mb_diag_figures *f,
                      const th *x, const mb_ini *r)
{
    char p1[32], p2[32];
    if (share < min || !begin_finding(b, id, share, r))
        return;
    EVIDENCE(b, "%s take %s of the run (threshold %s)", what, pct(p1, sizeof p1, share), pct(p2, sizeof p2, min));
    if (strcmp(id, "copy_bound") == 0 && f->pageable_share > 0)
        EVIDENCE(b, "copies from pageable memory: %s of the run", pct(p1, sizeof p1, f->pageable_share));
    add_remedies(b, r, f, x->eff_low);
}

static int cmp_weight(const void *a, const void *b)
{
    double x = ((const mb_finding *)a)->weight, y = ((const mb_finding *)b)->weight;
    return (x < y) - (x > y);
}

int mb_diagnose(const mb_gap *g, const mb_ini *thresholds, const mb_ini *remedies, mb_diagnosis *out, mb_err *err)
{
    memset(out, 0, sizeof *out);
    th x;
    if (load_thresholds(thresholds, &x, err))
        return err->code;
    mb_diag_figures_compute(g, thresholds, &out->fig);
    const mb_diag_figures *f = &out->fig;
    builder b = { .d = out };
    try_data(&b, g, f, &x, remedies);
    try_launch(&b, f, &x, remedies);
    try_sync(&b, f, &x, remedies);
    try_gpu_compute(&b, f, &x, remedies);
    try_cpu_compute(&b, f, &x, remedies);
    try_share(&b, "copy_bound", "host<->device copies", f->copy_share, x.cp_share, f, &x, remedies);
    try_share(&b, "communication_bound", "collectives", f->comm_share, x.cm_share, f, &x, remedies);
    if (b.oom) {
        mb_diagnosis_free(out);
        return mb_errf(err, MB_ESYS, "out of memory");
    }
    if (out->n > 1)
        qsort(out->findings, (size_t)out->n, sizeof *out->findings, cmp_weight);
    return MB_OK;
}

void mb_diagnosis_free(mb_diagnosis *d)
{
    if (d == NULL)
        return;
    for (int i = 0; i < d->n; i++) {
        mb_finding *f = &d->findings[i];
        for (int j = 0; j < f->n_evidence; j++)
            free(f->evidence[j]);
        for (int j = 0; j < f->n_remedies; j++)
            free(f->remedies[j]);
        free(f->evidence);
        free(f->remedies);
    }
    free(d->findings);
    memset(d, 0, sizeof *d);
}
