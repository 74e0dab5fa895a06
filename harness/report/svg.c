/* svg.c: the chart writer of svg.h. Numbers are written with %.2f (pixels)
 * so that output is byte-stable across runs and libcs. */
#include "svg.h"

#include <math.h>
#include <string.h>

#include "text.h"
#include "format.h" /* mb_fmt_number */

/* ---- scales -------------------------------------------------------------------- */

double mb_scale_map(const mb_scale *s, double v)
{
    double a = s->d0, b = s->d1;
    if (s->log) {
        if (!(v > 0) || !(a > 0) || !(b > 0))
            return NAN;
        v = log10(v);
        a = log10(a);
        b = log10(b);
    }
    if (b == a)
        return (s->r0 + s->r1) / 2;
    return s->r0 + (v - a) / (b - a) * (s->r1 - s->r0);
}

/* The 1-2-5 step giving 4 to 10 intervals over span. */
static double nice_step(double span)
{
    if (!(span > 0))
        return 1;
    double p = pow(10, floor(log10(span)));
    static const double mult[] = { 0.1, 0.2, 0.5, 1, 2, 5, 10 };
    for (size_t i = 0; i < sizeof mult / sizeof *mult; i++)
        if (span / (p * mult[i]) <= 10)
            return p * mult[i];
    return p * 10;
}

void mb_scale_nice(mb_scale *s)
{
    if (s->log) {
        if (!(s->d0 > 0))
            s->d0 = s->d1 > 0 ? s->d1 / 10 : 1;
        if (!(s->d1 > s->d0))
            s->d1 = s->d0 * 10;
        s->d0 = pow(10, floor(log10(s->d0) + 1e-9));
        s->d1 = pow(10, ceil(log10(s->d1) - 1e-9));
        /* Whole decades past the doubles' range (a value above 1e308 rounds
         * up to 1e309 = inf, one below 1e-308 down to a subnormal or 0) are
         * clamped to the last finite ones: fuzz_results found the inf. */
        if (!isfinite(s->d1))
            s->d1 = 1e308;
        if (!(s->d0 >= 1e-307))
            s->d0 = 1e-307;
        if (s->d1 <= s->d0)
            s->d1 = s->d0 * 10;
        return;
    }
    if (s->d0 > 0)
        s->d0 = 0;
    if (s->d1 < 0)
        s->d1 = 0;
    if (s->d1 == s->d0)
        s->d1 = s->d0 + 1;
    if (!isfinite(s->d1 - s->d0)) /* no rounding beyond the doubles' range */
        return;
    double step = nice_step(s->d1 - s->d0);
    s->d0 = floor(s->d0 / step + 1e-9) * step;
    s->d1 = ceil(s->d1 / step - 1e-9) * step;
}

int mb_scale_ticks(const mb_scale *s, double *ticks, int max)
{
    int n = 0;
    if (!isfinite(s->d0) || !isfinite(s->d1))
        return 0;
    if (s->log) {
        if (!(s->d0 > 0) || !(s->d1 > s->d0))
            return 0;
        for (int e = (int)ceil(log10(s->d0) - 1e-9); e <= (int)floor(log10(s->d1) + 1e-9) && n < max; e++)
            ticks[n++] = pow(10, e);
        return n;
    }
    double step = nice_step(s->d1 - s->d0);
    if (!isfinite(step))
        return 0;
    for (double k = ceil(s->d0 / step - 1e-9); k * step <= s->d1 + step * 1e-9 && n < max; k++)
        ticks[n++] = fabs(k) < 1e-12 ? 0 : k * step;
    return n;
}

/* ---- text ------------------------------------------------------------------------- */

void mb_svg_fmt_si(char *buf, size_t len, double v)
{
    /* SI prefixes both ways, never an exponent: a tick of 1e-05 s reads "10µ";
     * the prefix is picked after rounding to 3 digits (999.7 is "1k", not "1e+03") */
    static const char *const big[] = { "", "k", "M", "G", "T", "P", "E" };
    static const char *const small[] = { "", "m", "µ", "n", "p" };
    if (v == 0 || !isfinite(v)) {
        snprintf(buf, len, "%s", v == 0 ? "0" : "-");
        return;
    }
    int i = 0, j = 0;
    while (fabs(v) >= 999.5 && i < 6) {
        v /= 1000;
        i++;
    }
    /* values from 0.01 on keep their decimals (0.25, 0.05): a prefix only below that */
    if (fabs(v) < 0.00995)
        while (fabs(v) < 0.9995 && j < 4) {
            v *= 1000;
            j++;
        }
    snprintf(buf, len, "%.3g%s", v, i ? big[i] : small[j]);
}

mb_time_unit mb_time_unit_for(double seconds)
{
    static const mb_time_unit units[] = { { "s", 1 }, { "ms", 1e3 }, { "µs", 1e6 }, { "ns", 1e9 } };
    double v = fabs(seconds);
    if (!(v > 0) || !isfinite(v))
        return units[0];
    /* 1e-9 of slack: 0.001 s computed as 0.000999999... is still 1 ms */
    for (int i = 0; i < 3; i++)
        if (v * units[i].per_second >= 1 - 1e-9)
            return units[i];
    return units[3];
}

void mb_svg_fmt_tick(char *buf, size_t len, double v, double step)
{
    /* all ticks of an axis get the decimals of its step: 0, 0.2, 0.4, never 0.2 next to 0.40000000001 */
    int dec = step > 0 && step < 1 ? (int)ceil(-log10(step) - 1e-9) : 0;
    if (dec > 9)
        dec = 9;
    if (!isfinite(v)) {
        snprintf(buf, len, "-");
        return;
    }
    if (v == 0 || (step > 0 && fabs(v) < step * 1e-6)) { /* 0, not "-0.0" from a rounding */
        snprintf(buf, len, "0");
        return;
    }
    snprintf(buf, len, "%.*f", dec, v);
}

void mb_svg_fmt_bytes(char *buf, size_t len, double v)
{
    static const char *const u[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
    int i = 0;
    while (fabs(v) >= 1023.5 && i < 5) {
        v /= 1024;
        i++;
    }
    snprintf(buf, len, "%.3g %s", v, u[i]);
}

void mb_svg_escape(FILE *o, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", o); break;
        case '<': fputs("&lt;", o); break;
        case '>': fputs("&gt;", o); break;
        case '"': fputs("&quot;", o); break;
        case '\'': fputs("&#39;", o); break;
        default: fputc(*s, o);
        }
    }
}

/* ---- roofline ------------------------------------------------------------------------ */

double mb_roofline_at(double ai, double peak, double bw)
{
    return fmin(peak, ai * bw);
}

double mb_roofline_ridge(double peak, double bw)
{
    return bw > 0 ? peak / bw : INFINITY;
}

/* ---- chart ------------------------------------------------------------------------------ */

const char *mb_svg_color(int i)
{
    /* Okabe-Ito without the yellow that vanishes on white, then four of Tol's muted colours and a brown (the
     * optimizer's, apart from the grey of "other") */
    static const char *const pal[MB_SVG_COLORS] = { "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00",
                                                    "#56B4E9", "#000000", "#999999", "#882255", "#44AA99",
                                                    "#117733", "#332288", "#8C564B" };
    return pal[((i % MB_SVG_COLORS) + MB_SVG_COLORS) % MB_SVG_COLORS];
}

enum { TOP = 44, RIGHT = 24 };
static const double CHAR_W = 7.0; /* px per character at 11 px sans-serif: over the average, digits and = are wide */

void mb_chart_begin(mb_chart *c, FILE *o, const char *id, const char *title, double w, double h, double margin_left,
                    double margin_bottom)
{
    memset(c, 0, sizeof *c);
    c->o = o;
    c->w = w;
    c->h = h;
    c->left = margin_left;
    c->right = w - RIGHT;
    c->top = TOP;
    c->bottom = h - margin_bottom;
    c->x = (mb_scale){ 0, 1, c->left, c->right, false };
    c->y = (mb_scale){ 0, 1, c->bottom, c->top, false };
    fprintf(o, "<svg class=\"chart\" data-chart=\"");
    mb_svg_escape(o, id);
    fprintf(o,
            "\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\" "
            "role=\"img\" font-family=\"sans-serif\" font-size=\"11\">\n",
            w, h, w, h);
    fprintf(o, "<title>");
    mb_svg_escape(o, title);
    fprintf(o, "</title>\n<text class=\"chart-title\" x=\"%.2f\" y=\"16\" font-size=\"13\" font-weight=\"bold\">", 8.0);
    mb_svg_escape(o, title);
    fprintf(o, "</text>\n");
}

/* The x axis; per > 0: its ticks are plain numbers of t x per (a time
 * axis in its unit), else SI-prefixed values. */
static void x_axis(mb_chart *c, const char *label, double per)
{
    FILE *o = c->o;
    double t[32];
    int n = mb_scale_ticks(&c->x, t, 32);
    double step = n > 1 ? (t[1] - t[0]) * per : 0;
    fprintf(o, "<g class=\"axis x\">\n<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#333\"/>\n",
            c->left, c->bottom, c->right, c->bottom);
    for (int i = 0; i < n; i++) {
        double px = mb_scale_map(&c->x, t[i]);
        char b[32];
        if (per > 0) /* a log axis' ticks each have their own decade */
            mb_svg_fmt_tick(b, sizeof b, t[i] * per, c->x.log ? t[i] * per : step);
        else
            mb_svg_fmt_si(b, sizeof b, t[i]);
        fprintf(o, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#ddd\"/>", px, c->top, px,
                c->bottom);
        /* 18 px down: clear of the y axis' lowest tick label at the corner */
        fprintf(o, "<text class=\"tick\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">%s</text>\n", px, c->bottom + 18,
                b);
    }
    if (label) {
        fprintf(o, "<text class=\"axis-label\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">", (c->left + c->right) / 2,
                c->bottom + 34);
        mb_svg_escape(o, label);
        fprintf(o, "</text>\n");
    }
    fprintf(o, "</g>\n");
}

void mb_chart_x_axis(mb_chart *c, const char *label)
{
    x_axis(c, label, 0);
}

void mb_chart_x_plain_axis(mb_chart *c, const char *label)
{
    x_axis(c, label, 1);
}

void mb_chart_x_time_axis(mb_chart *c, const char *what)
{
    mb_time_unit u = mb_time_unit_for(fmax(fabs(c->x.d0), fabs(c->x.d1)));
    char label[256];
    snprintf(label, sizeof label, "%s (%s)", what, u.name);
    x_axis(c, label, u.per_second);
}

void mb_chart_y_axis(mb_chart *c, const char *label)
{
    FILE *o = c->o;
    double t[32];
    int n = mb_scale_ticks(&c->y, t, 32);
    fprintf(o, "<g class=\"axis y\">\n<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#333\"/>\n",
            c->left, c->top, c->left, c->bottom);
    for (int i = 0; i < n; i++) {
        double py = mb_scale_map(&c->y, t[i]);
        char b[32];
        mb_svg_fmt_si(b, sizeof b, t[i]);
        fprintf(o, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#ddd\"/>", c->left, py, c->right,
                py);
        fprintf(o, "<text class=\"tick\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\">%s</text>\n", c->left - 4, py + 4,
                b);
    }
    if (label) {
        double cy = (c->top + c->bottom) / 2;
        fprintf(o,
                "<text class=\"axis-label\" x=\"14\" y=\"%.2f\" text-anchor=\"middle\" "
                "transform=\"rotate(-90 14 %.2f)\">",
                cy, cy);
        mb_svg_escape(o, label);
        fprintf(o, "</text>\n");
    }
    fprintf(o, "</g>\n");
}

static bool inside(const mb_chart *c, double px, double py)
{
    return isfinite(px) && isfinite(py) && px >= c->left - 0.01 && px <= c->right + 0.01 && py >= c->top - 0.01 &&
           py <= c->bottom + 0.01;
}

void mb_chart_series(mb_chart *c, const char *name, int color, int n, const double *x, const double *y,
                     const double *err_lo, const double *err_hi, bool line, const char *unit)
{
    FILE *o = c->o;
    const char *col = mb_svg_color(color);
    fprintf(o, "<g class=\"series\" data-name=\"");
    mb_svg_escape(o, name);
    fprintf(o, "\">\n");
    if (line) {
        fprintf(o, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", col);
        for (int i = 0; i < n; i++) {
            double px = mb_scale_map(&c->x, x[i]), py = mb_scale_map(&c->y, y[i]);
            if (inside(c, px, py))
                fprintf(o, "%.2f,%.2f ", px, py);
        }
        fprintf(o, "\"/>\n");
    }
    for (int i = 0; i < n; i++) {
        double px = mb_scale_map(&c->x, x[i]), py = mb_scale_map(&c->y, y[i]);
        if (!inside(c, px, py))
            continue;
        if (err_lo && err_hi && err_lo[i] >= 0 && err_hi[i] >= 0) {
            double a = fmax(mb_scale_map(&c->y, err_lo[i]), c->top),
                   b = fmin(mb_scale_map(&c->y, err_hi[i]), c->bottom);
            if (isfinite(a) && isfinite(b))
                fprintf(o, "<line class=\"err\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\"/>", px,
                        fmin(a, c->bottom), px, fmax(b, c->top), col);
        }
        char xs[32], ys[32];
        mb_svg_fmt_si(xs, sizeof xs, x[i]);
        mb_svg_fmt_si(ys, sizeof ys, y[i]);
        fprintf(o, "<circle class=\"pt\" cx=\"%.2f\" cy=\"%.2f\" r=\"3.5\" fill=\"%s\"><title>", px, py, col);
        mb_svg_escape(o, name);
        fprintf(o, ": %s at %s %s</title></circle>\n", ys, xs, unit ? unit : "");
    }
    fprintf(o, "</g>\n");
}

void mb_chart_segment(mb_chart *c, double x0, double y0, double x1, double y1, int color, bool dashed,
                      const char *label)
{
    FILE *o = c->o;
    double a = mb_scale_map(&c->x, x0), b = mb_scale_map(&c->y, y0);
    double p = mb_scale_map(&c->x, x1), q = mb_scale_map(&c->y, y1);
    if (!isfinite(a) || !isfinite(b) || !isfinite(p) || !isfinite(q))
        return;
    fprintf(
        o,
        "<line class=\"roof\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\" stroke-width=\"1.5\"%s/>\n",
        a, b, p, q, mb_svg_color(color), dashed ? " stroke-dasharray=\"5 3\"" : "");
    if (label)
        mb_chart_label(c, p - 2, q - 4, true, color, "roof-label", label);
}

static double row_h(const mb_chart *c, int n_cat)
{
    return (c->bottom - c->top) / (n_cat > 0 ? n_cat : 1);
}

void mb_chart_category(mb_chart *c, int cat, int n_cat, const char *label)
{
    FILE *o = c->o;
    double h = row_h(c, n_cat);
    double y = c->top + h * cat + h / 2 + 4;
    /* labels longer than the margin are cut, the whole label stays in the hover title */
    int fit = (int)((c->left - 10) / CHAR_W);
    int len = (int)strlen(label);
    fprintf(o, "<text class=\"cat\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\"><title>", c->left - 6, y);
    mb_svg_escape(o, label);
    fprintf(o, "</title>");
    if (len <= fit) {
        mb_svg_escape(o, label);
    } else {
        /* cut in the middle: the start names the case (component/backend), the end holds the parameter
         * that tells neighbouring rows apart (mode=cached, mode=direct) */
        char cut[512];
        int keep = fit - 1 < (int)sizeof cut - 1 ? fit - 1 : (int)sizeof cut - 1;
        int tail = keep > 0 ? keep / 2 : 0, head = keep > 0 ? keep - tail : 0;
        int from = len - tail;
        /* never split a UTF-8 sequence */
        while (head > 0 && ((unsigned char)label[head] & 0xC0) == 0x80)
            head--;
        while (from < len && ((unsigned char)label[from] & 0xC0) == 0x80)
            from++;
        snprintf(cut, sizeof cut, "%.*s", head, label);
        mb_svg_escape(o, cut);
        fputs("\xE2\x80\xA6", o); /* … */
        mb_svg_escape(o, label + from);
    }
    fprintf(o, "</text>\n");
}

static void bar_box(const mb_chart *c, int cat, int n_cat, int group, int n_group, double *y, double *h)
{
    double rh = row_h(c, n_cat);
    double inner = rh * 0.8;
    double gh = inner / (n_group > 0 ? n_group : 1);
    *y = c->top + rh * cat + rh * 0.1 + gh * group;
    *h = gh;
}

void mb_chart_bar(mb_chart *c, int cat, int n_cat, int group, int n_group, double x0, double x1, int color,
                  const char *title)
{
    mb_chart_bar_case(c, cat, n_cat, group, n_group, x0, x1, color, title, NULL, NAN);
}

void mb_chart_bar_value(mb_chart *c, int cat, int n_cat, double x, const char *text)
{
    double px = mb_scale_map(&c->x, x), rh = row_h(c, n_cat);
    if (!isfinite(px))
        px = c->left;
    px = fmax(c->left, fmin(px, c->right));
    fprintf(c->o, "<text class=\"value\" x=\"%.2f\" y=\"%.2f\">", px + 6, c->top + rh * cat + rh / 2 + 4);
    mb_svg_escape(c->o, text);
    fprintf(c->o, "</text>\n");
}

void mb_chart_bar_error(mb_chart *c, int cat, int n_cat, int group, int n_group, double lo, double hi)
{
    double y, h;
    bar_box(c, cat, n_cat, group, n_group, &y, &h);
    double a = mb_scale_map(&c->x, lo), b = mb_scale_map(&c->x, hi);
    if (!isfinite(a) || !isfinite(b))
        return;
    a = fmax(c->left, fmin(a, c->right));
    b = fmax(c->left, fmin(b, c->right));
    double m = y + h / 2;
    fprintf(c->o, "<path class=\"err\" d=\"M%.2f %.2fH%.2fM%.2f %.2fV%.2fM%.2f %.2fV%.2f\" stroke=\"#000\"/>\n", a, m,
            b, a, m - h / 4, m + h / 4, b, m - h / 4, m + h / 4);
}

void mb_chart_legend(mb_chart *c, int n, const char *const *names, const int *colors)
{
    double x = 8, y = 24;
    fprintf(c->o, "<g class=\"legend\">\n");
    for (int i = 0; i < n; i++) {
        double w = 14 + CHAR_W * (double)strlen(names[i]) + 14;
        if (x > 8 && x + w > c->w - 8) { /* wrap: the plot area gives up a row */
            x = 8;
            y += 16;
        }
        fprintf(c->o, "<rect x=\"%.2f\" y=\"%.2f\" width=\"10\" height=\"10\" fill=\"%s\"/>", x, y,
                mb_svg_color(colors[i]));
        fprintf(c->o, "<text class=\"legend-item\" x=\"%.2f\" y=\"%.2f\">", x + 14, y + 9);
        mb_svg_escape(c->o, names[i]);
        fprintf(c->o, "</text>\n");
        x += w;
    }
    fprintf(c->o, "</g>\n");
    double top = y + 20;
    if (top > c->top) {
        if (c->y.r1 == c->top)
            c->y.r1 = top;
        c->top = top;
    }
}

void mb_chart_end(mb_chart *c)
{
    fprintf(c->o, "</svg>\n");
}

/* ---- placed labels, single points, sweeps --------------------------------------------- */

static int utf8_chars(const char *s)
{
    return mb_text_width(s);
}

void mb_svg_label_box(const char *text, double x, double y, bool end, double box[4])
{
    double w = CHAR_W * utf8_chars(text);
    box[0] = end ? x - w : x;
    box[1] = y - 10;
    box[2] = end ? x : x + w;
    box[3] = y + 2;
}

static bool boxes_overlap(const double a[4], const double b[4])
{
    return a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3];
}

static bool label_clear(const mb_chart *c, const double box[4])
{
    for (int i = 0; i < c->n_labels; i++)
        if (boxes_overlap(box, c->label_box[i]))
            return false;
    return true;
}

/* The baseline nearest y (down first) where the label's box is clear of
 * the labels placed before and inside the plot area; y itself when none. */
static double clear_baseline(const mb_chart *c, const char *text, double x, double y, bool end)
{
    enum { LINE = 12, TRIES = 24 };
    double box[4];
    for (int k = 0; k <= TRIES; k++) {
        double at = y + LINE * ((k + 1) / 2) * (k % 2 ? 1 : -1);
        if (at - 10 < c->top || at > c->bottom)
            continue;
        mb_svg_label_box(text, x, at, end, box);
        if (label_clear(c, box))
            return at;
    }
    return y;
}

double mb_chart_label(mb_chart *c, double x, double y, bool end, int color, const char *cls, const char *text)
{
    double at = clear_baseline(c, text, x, y, end);
    if (c->n_labels < MB_CHART_LABELS)
        mb_svg_label_box(text, x, at, end, c->label_box[c->n_labels++]);
    fprintf(c->o, "<text class=\"%s\" x=\"%.2f\" y=\"%.2f\"%s fill=\"%s\">", cls, x, at,
            end ? " text-anchor=\"end\"" : "", mb_svg_color(color));
    mb_svg_escape(c->o, text);
    fprintf(c->o, "</text>\n");
    return at;
}

void mb_chart_series_begin(mb_chart *c, const char *name)
{
    fprintf(c->o, "<g class=\"series\" data-name=\"");
    mb_svg_escape(c->o, name);
    fprintf(c->o, "\">\n");
}

static void data_attrs(FILE *o, const char *case_id, double value)
{
    if (case_id) {
        fprintf(o, " data-case=\"");
        mb_svg_escape(o, case_id);
        fprintf(o, "\"");
    }
    if (isfinite(value))
        fprintf(o, " data-value=\"%.9g\"", value);
}

void mb_chart_point(mb_chart *c, double x, double y, int color, const char *title, const char *case_id,
                    double value)
{
    double px = mb_scale_map(&c->x, x), py = mb_scale_map(&c->y, y);
    if (!inside(c, px, py))
        return;
    fprintf(c->o, "<circle class=\"pt\" cx=\"%.2f\" cy=\"%.2f\" r=\"3.5\" fill=\"%s\"", px, py, mb_svg_color(color));
    data_attrs(c->o, case_id, value);
    fprintf(c->o, "><title>");
    mb_svg_escape(c->o, title);
    fprintf(c->o, "</title></circle>\n");
}

void mb_chart_series_end(mb_chart *c)
{
    fprintf(c->o, "</g>\n");
}

static void sweep_lines(mb_chart *c, const char *col, int n, const double *x, const double *y, double max_ratio)
{
    bool open = false;
    for (int i = 0; i < n; i++) {
        double px = mb_scale_map(&c->x, x[i]), py = mb_scale_map(&c->y, y[i]);
        bool joins_next = i + 1 < n && x[i] > 0 && x[i + 1] / x[i] <= max_ratio;
        if (!inside(c, px, py)) {
            if (open)
                fprintf(c->o, "\"/>\n");
            open = false;
            continue;
        }
        if (!open && joins_next) {
            fprintf(c->o, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", col);
            open = true;
        }
        if (open)
            fprintf(c->o, "%.2f,%.2f ", px, py);
        if (open && !joins_next) {
            fprintf(c->o, "\"/>\n");
            open = false;
        }
    }
    if (open)
        fprintf(c->o, "\"/>\n");
}

void mb_chart_sweep(mb_chart *c, const char *name, int color, int n, const double *x, const double *y,
                    const double *err_lo, const double *err_hi, double max_ratio, const char *y_unit,
                    const char *x_unit)
{
    const char *col = mb_svg_color(color);
    mb_chart_series_begin(c, name);
    sweep_lines(c, col, n, x, y, max_ratio);
    for (int i = 0; i < n; i++) {
        double px = mb_scale_map(&c->x, x[i]);
        if (err_lo && err_hi && err_lo[i] >= 0 && err_hi[i] >= 0 && inside(c, px, mb_scale_map(&c->y, y[i]))) {
            double a = fmax(mb_scale_map(&c->y, err_lo[i]), c->top),
                   b = fmin(mb_scale_map(&c->y, err_hi[i]), c->bottom);
            if (isfinite(a) && isfinite(b))
                fprintf(c->o, "<line class=\"err\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\"/>", px,
                        fmin(a, c->bottom), px, fmax(b, c->top), col);
        }
        /* the value as the table prints it (results_writers.h), a size in bytes as KiB/MiB */
        char xs[32], ys[32], t[512];
        bool bytes = x_unit && strcmp(x_unit, "B") == 0;
        if (bytes)
            mb_svg_fmt_bytes(xs, sizeof xs, x[i]);
        else
            mb_svg_fmt_si(xs, sizeof xs, x[i]);
        mb_fmt_number(ys, sizeof ys, y[i]);
        snprintf(t, sizeof t, "%s: %s %s at %s%s", name, ys, y_unit ? y_unit : "", xs,
                 bytes || !x_unit ? "" : x_unit);
        mb_chart_point(c, x[i], y[i], color, t, NULL, NAN);
    }
    mb_chart_series_end(c);
}

void mb_chart_bar_case(mb_chart *c, int cat, int n_cat, int group, int n_group, double x0, double x1, int color,
                       const char *title, const char *case_id, double value)
{
    double y, h;
    bar_box(c, cat, n_cat, group, n_group, &y, &h);
    double a = mb_scale_map(&c->x, x0), b = mb_scale_map(&c->x, x1);
    if (!isfinite(a))
        a = c->left;
    if (!isfinite(b))
        return;
    a = fmax(c->left, fmin(a, c->right));
    b = fmax(c->left, fmin(b, c->right));
    fprintf(c->o, "<rect class=\"bar\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"", fmin(a, b), y,
            fabs(b - a), h, mb_svg_color(color));
    data_attrs(c->o, case_id, value);
    fprintf(c->o, "><title>");
    mb_svg_escape(c->o, title);
    fprintf(c->o, "</title></rect>\n");
}
