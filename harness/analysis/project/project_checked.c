/* project_checked.c: the `checked` figure of a target GPU and, for one never
 * checked, the nearest checked class (project_checked.h). */
#include "project_checked.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_arch.h"
#include "hardware.h"
#include "project_rank.h"

/* One line of a section: "mean count" ([datasheet], [measured]) or "mean
 * count from[,from]" ([pairs.*]). 0: absent; 1: read; -1: malformed. */
static int read_line(const mb_ini *errors, const char *section, const char *stem, bool pairs, double *pct, long *n,
                     char *from, size_t from_len, mb_err *err)
{
    const char *v = mb_ini_get(errors, section, stem);
    if (v == NULL)
        return 0;
    char f[64] = "";
    int got = sscanf(v, "%lf %ld %63s", pct, n, f);
    if (got < 2 || (pairs && got != 3) || !(*pct >= 0) || *n < 1) {
        mb_errf(err, MB_EUSAGE, "%s: [%s] %s = %s: expected the mean absolute %% error and a count%s", errors->path,
                section, stem, v, pairs ? ", then the GPUs projected from (datasheet stems, comma-separated)" : "");
        return -1;
    }
    snprintf(from, from_len, "%s", f);
    return 1;
}

/* The next stem of a comma-separated list at *p into stem; false at its end. */
static bool next_stem(const char **p, char *stem, size_t len)
{
    if (**p == '\0')
        return false;
    size_t k = strcspn(*p, ",");
    snprintf(stem, len, "%.*s", (int)k, *p);
    *p += k + ((*p)[k] == ',');
    return true;
}

/* Whether `stem` is one of the comma-separated `list`. */
static bool in_list(const char *list, const char *stem)
{
    char s[64];
    for (const char *p = list; next_stem(&p, s, sizeof s);)
        if (*stem && strcmp(s, stem) == 0)
            return true;
    return false;
}

/* Whether the trace's GPU (here) is of the architecture of one of the
 * comma-separated `list`: the pairs' within-architecture figure then stands
 * for it. An unknown GPU is not. */
static bool same_arch_as_one(const char *list, const char *here)
{
    char arch[32], other[32];
    double cc;
    if (here == NULL || !*here || !mb_checked_arch(here, arch, sizeof arch, &cc))
        return false;
    char stem[64];
    for (const char *p = list; next_stem(&p, stem, sizeof stem);)
        if (mb_checked_arch(stem, other, sizeof other, &cc) && strcmp(arch, other) == 0)
            return true;
    return false;
}

/* Rules 1-3 for one target; n = 0 when it was never checked in this mode. */
static int own_figure(const mb_ini *errors, const char *mode, const char *stem, const char *here, mb_checked *c,
                      mb_err *err)
{
    char pairs[32], from[64];
    double pct;
    long n;
    snprintf(pairs, sizeof pairs, "pairs.%s", mode);
    int pr = read_line(errors, pairs, stem, true, &pct, &n, from, sizeof from, err);
    if (pr < 0)
        return MB_EUSAGE;
    if (pr == 1 && here && *here && in_list(from, here)) { /* rule 1 */
        *c = (mb_checked){ .pct = pct, .n = n, .basis = "pairs", .from_here = true };
        snprintf(c->from, sizeof c->from, "%s", from);
        return MB_OK;
    }
    double ppct;
    long pn;
    char unused[4];
    int pub = read_line(errors, mode, stem, false, &ppct, &pn, unused, sizeof unused, err);
    if (pub < 0)
        return MB_EUSAGE;
    if (pub == 1) /* rule 2 */
        *c = (mb_checked){ .pct = ppct, .n = pn, .basis = "public" };
    else if (pr == 1 && same_arch_as_one(from, here)) { /* rule 3 */
        *c = (mb_checked){ .pct = pct, .n = n, .basis = "pairs" };
        snprintf(c->from, sizeof c->from, "%s", from);
    } else if (pr == 1) { /* rule 4, the pairs said beside it: they measured no projection across architectures */
        *c = (mb_checked){ .pairs_pct = pct, .pairs_n = n };
        snprintf(c->from, sizeof c->from, "%s", from);
        double cc;
        if (here == NULL || !*here || !mb_checked_arch(here, c->here_arch, sizeof c->here_arch, &cc))
            c->here_arch[0] = '\0';
    }
    return MB_OK;
}

bool mb_checked_arch(const char *stem, char *arch, size_t len, double *cc)
{
    mb_datasheet *d = NULL;
    mb_err why = { 0 };
    bool ok = mb_datasheet_find(stem, &d, &why) == MB_OK && mb_datasheet_get(d, "gpu.compute_capability", cc, NULL);
    mb_datasheet_free(d);
    if (!ok)
        return false;
    int major = (int)floor(*cc + 1e-9), minor = (int)lround((*cc - major) * 10);
    mb_gpu_arch_row row;
    double rate;
    /* the exact section, else the major version's first (sm_103, B300: sm_100's Blackwell) */
    const int minors[2] = { minor, 0 };
    for (int t = 0; t < (minor ? 2 : 1); t++) {
        mb_err e = { 0 };
        mb_gpu_arch_rate(NULL, major, minors[t], NULL, "fp32", &rate, &row, &e); /* the name, whatever its rates */
        if (row.name[0]) {
            snprintf(arch, len, "%.*s", (int)strcspn(row.name, " "), row.name);
            return true;
        }
    }
    snprintf(arch, len, "sm_%dx", major); /* not in the table (Pascal): its compute capability's major version */
    return true;
}

/* A datasheet's name for the class list, without the maker's name. */
static void short_name(const char *stem, char *out, size_t len)
{
    mb_datasheet *d = NULL;
    mb_err why = { 0 };
    const char *name = stem;
    if (mb_datasheet_find(stem, &d, &why) == MB_OK)
        name = mb_datasheet_name(d);
    if (strncmp(name, "NVIDIA ", 7) == 0)
        name += 7;
    snprintf(out, len, "%s", name);
    mb_datasheet_free(d);
}

typedef struct checked_gpu {
    char stem[64], arch[32];
    double cc, pct;
} checked_gpu;

/* Rule 4: the checked GPUs of the target's architecture; none: c->arch names it (unchecked_arch_notes). */
static int nearest_class(const mb_ini *errors, const char *mode, const char *target, const char *here, mb_checked *c,
                         mb_err *err)
{
    char arch[32], pairs[32];
    double cc;
    if (!mb_checked_arch(target, arch, sizeof arch, &cc))
        return MB_OK; /* no architecture to be near to */
    snprintf(pairs, sizeof pairs, "pairs.%s", mode);
    checked_gpu *g = calloc((size_t)errors->n + 1, sizeof *g);
    if (g == NULL)
        return mb_errf(err, MB_ESYS, "out of memory");
    int n = 0, rc = MB_OK;
    for (int i = 0; i < errors->n && rc == MB_OK; i++) {
        const mb_ini_entry *e = &errors->e[i];
        if (strcmp(e->section, mode) != 0 && strcmp(e->section, pairs) != 0)
            continue;
        bool seen = false;
        for (int k = 0; k < n; k++)
            seen |= strcmp(g[k].stem, e->key) == 0;
        mb_checked own = { 0 };
        if (seen || (rc = own_figure(errors, mode, e->key, here, &own, err)) != MB_OK || own.n == 0)
            continue;
        checked_gpu *x = &g[n];
        snprintf(x->stem, sizeof x->stem, "%s", e->key);
        x->pct = own.pct;
        if (mb_checked_arch(x->stem, x->arch, sizeof x->arch, &x->cc))
            n++;
    }
    /* the class: its architecture's only. Another architecture's figure says nothing of this one (from an H200's
     * trace the Hopper pair's 3% stood for the B200 and an RTX PRO 6000 Blackwell): with none checked, `arch` says
     * so and the notes give the figure the ranking allows those rows (the mode's expected error) */
    snprintf(c->arch, sizeof c->arch, "%s", arch);
    char cls[32] = "";
    for (int k = 0; k < n; k++)
        if (strcmp(g[k].arch, arch) == 0)
            snprintf(cls, sizeof cls, "%s", g[k].arch);
    size_t used = 0;
    for (int k = 0; k < n && rc == MB_OK && cls[0]; k++) {
        if (strcmp(g[k].arch, cls) != 0) /* every checked GPU of that architecture */
            continue;
        char name[96];
        short_name(g[k].stem, name, sizeof name);
        int w = snprintf(c->nearest + used, sizeof c->nearest - used, "%s%s", used ? ", " : "", name);
        used = w > 0 && (size_t)w < sizeof c->nearest - used ? used + (size_t)w : sizeof c->nearest - 1;
        c->nearest_pct = fmax(c->nearest_pct, g[k].pct);
    }
    if (used && used < sizeof c->nearest - 1)
        snprintf(c->nearest + used, sizeof c->nearest - used, " (%s)", cls);
    free(g);
    return rc;
}

int mb_checked_find(const mb_ini *errors, const char *mode, const char *target_stem, const char *here_stem,
                    mb_checked *out, mb_err *err)
{
    memset(out, 0, sizeof *out);
    if (errors == NULL || target_stem == NULL)
        return MB_OK;
    int rc = own_figure(errors, mode, target_stem, here_stem, out, err);
    if (rc == MB_OK && out->n == 0)
        rc = nearest_class(errors, mode, target_stem, here_stem, out, err);
    return rc;
}

static int push(char ***notes, int *n, const char *text, mb_err *err)
{
    char **v = realloc(*notes, sizeof *v * (size_t)(*n + 1));
    if (v == NULL)
        return mb_errf(err, MB_ESYS, "out of memory");
    *notes = v;
    if ((v[*n] = strdup(text)) == NULL)
        return mb_errf(err, MB_ESYS, "out of memory");
    (*n)++;
    return MB_OK;
}

/* "H100 SXM5 80GB" for "h100-sxm", "A, B" for "a,b" */
static void names_of(const char *stems, char *out, size_t len)
{
    size_t used = 0;
    out[0] = '\0';
    char stem[64], name[96];
    for (const char *p = stems; used + 1 < len && next_stem(&p, stem, sizeof stem);) {
        short_name(stem, name, sizeof name);
        int w = snprintf(out + used, len - used, "%s%s", used ? ", " : "", name);
        used = w > 0 && (size_t)w < len - used ? used + (size_t)w : len - 1;
    }
}

/* x, never checked, stands for w's class with the same figure (a row's mode decides the figure) */
static bool same_class(const mb_rank_row *x, const mb_rank_row *w)
{
    return x->ok && x->checked.n == 0 && x->checked.pairs_n == 0 && strcmp(x->checked.nearest, w->checked.nearest) == 0 &&
           x->checked.nearest_pct == w->checked.nearest_pct;
}

/* x, never checked, of w's architecture of which no GPU was checked, allowed the same error (its mode's) */
static bool same_unchecked_arch(const mb_rank_row *x, const mb_rank_row *w)
{
    return x->ok && x->checked.n == 0 && x->checked.pairs_n == 0 && !x->checked.nearest[0] &&
           strcmp(x->checked.arch, w->checked.arch) == 0 && x->error_pct == w->error_pct;
}

/* One note per architecture none of whose GPUs was checked: its machines, and the figure the ranking allows them. */
static int unchecked_arch_notes(const mb_rank_row *rows, int n, char ***notes, int *n_notes, mb_err *err)
{
    char buf[1024];
    int rc = MB_OK;
    for (int i = 0; i < n && rc == MB_OK; i++) {
        const mb_rank_row *w = &rows[i];
        if (!same_unchecked_arch(w, w) || !w->checked.arch[0])
            continue;
        bool first = true;
        for (int k = 0; k < i; k++)
            first &= !same_unchecked_arch(&rows[k], w);
        if (!first)
            continue;
        size_t used = (size_t)snprintf(buf, sizeof buf, "never checked: ");
        int many = 0;
        for (int k = i; k < n && used + 1 < sizeof buf; k++)
            if (same_unchecked_arch(&rows[k], w)) {
                int c = snprintf(buf + used, sizeof buf - used, "%s%s", k == i ? "" : ", ", rows[k].label);
                used = c > 0 && (size_t)c < sizeof buf - used ? used + (size_t)c : sizeof buf - 1;
                many++;
            }
        const char *them = many > 1 ? "them" : "it";
        if (used + 1 < sizeof buf)
            snprintf(buf + used, sizeof buf - used, "; no %s GPU was checked, so no checked class stands for %s: "
                     "the ranking allows %s the model's expected error, %.0f%% (%s figures)", w->checked.arch, them,
                     them, w->error_pct, w->source);
        rc = push(notes, n_notes, buf, err);
    }
    return rc;
}

/* A row checked by the pairs from another architecture than the trace's GPU: '-' and why. */
static int other_arch_note(const mb_rank_row *w, char ***notes, int *n_notes, mb_err *err)
{
    char buf[1024], from[200], cls[300] = "", src[64] = "a GPU of unknown architecture";
    names_of(w->checked.from, from, sizeof from);
    if (w->checked.here_arch[0])
        snprintf(src, sizeof src, "%s", w->checked.here_arch);
    if (w->checked.nearest[0])
        snprintf(cls, sizeof cls, "; nearest checked class: %s, up to %.0f%%", w->checked.nearest,
                 w->checked.nearest_pct);
    snprintf(buf, sizeof buf, "checked, %s: '-' from %s: this project's pairs checked it from %s only (%.1f%% over "
             "%ld projections, one architecture)%s",
             w->label, src, from, w->checked.pairs_pct, w->checked.pairs_n, cls);
    return push(notes, n_notes, buf, err);
}

int mb_checked_notes(const struct mb_rank_row *rows, int n, char ***notes, int *n_notes, mb_err *err)
{
    *notes = NULL;
    *n_notes = 0;
    char buf[1024], from[200];
    int rc = MB_OK;
    for (int i = 0; i < n && rc == MB_OK; i++) {
        const mb_rank_row *w = &rows[i];
        if (w->ok && w->checked.pairs_n > 0)
            rc = other_arch_note(w, notes, n_notes, err);
        if (!w->ok || w->checked.n == 0 || strcmp(w->checked.basis, "pairs") != 0)
            continue;
        names_of(w->checked.from, from, sizeof from);
        if (w->checked.from_here)
            snprintf(buf, sizeof buf, "checked, %s: %.1f%% over %ld projections from %s, the GPU this trace ran on "
                     "(this project's pairs, bench/data/pair-*, scripts/gpu_pair.py compare)",
                     w->label, w->checked.pct, w->checked.n, from);
        else
            snprintf(buf, sizeof buf, "checked, %s: %.1f%% over %ld projections from %s only (this project's pairs, "
                     "one architecture); no projection onto it from another GPU was ever checked",
                     w->label, w->checked.pct, w->checked.n, from);
        rc = push(notes, n_notes, buf, err);
    }
    /* one note per nearest class, naming the machines it stands for */
    for (int i = 0; i < n && rc == MB_OK; i++) {
        const mb_rank_row *w = &rows[i];
        if (!w->ok || w->checked.n > 0 || w->checked.pairs_n > 0 || !w->checked.nearest[0])
            continue;
        bool first = true;
        for (int k = 0; k < i; k++)
            if (same_class(&rows[k], w))
                first = false;
        if (!first)
            continue;
        size_t used = (size_t)snprintf(buf, sizeof buf, "never checked: ");
        for (int k = i; k < n && used + 1 < sizeof buf; k++)
            if (same_class(&rows[k], w)) {
                int c = snprintf(buf + used, sizeof buf - used, "%s%s", k == i ? "" : ", ", rows[k].label);
                used = c > 0 && (size_t)c < sizeof buf - used ? used + (size_t)c : sizeof buf - 1;
            }
        if (used + 1 < sizeof buf)
            snprintf(buf + used, sizeof buf - used, "; nearest checked class: %s, up to %.0f%%", w->checked.nearest,
                     w->checked.nearest_pct);
        rc = push(notes, n_notes, buf, err);
    }
    if (rc == MB_OK)
        rc = unchecked_arch_notes(rows, n, notes, n_notes, err);
    return rc;
}
