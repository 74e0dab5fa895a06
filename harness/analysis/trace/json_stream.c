/* json_stream.c: a small streaming (SAX) JSON parser for the trace reader.
 *
 * Why hand-written: with YAJL, its lexer was ~60% of the trace reader's
 * cycles (perf, 143 MB/s on one core) and Debian has no faster streaming C
 * JSON parser (rapidjson and simdjson are C++; mlbench is C17). This one
 * consumes whole tokens from the caller's buffer, hands strings that need no
 * unescaping straight from that buffer (no copy), unescapes the others in
 * place, and keeps only a one-byte-per-level container stack. It is fuzzed
 * by fuzz/fuzz_trace.c (whole and in small chunks) and checked against known
 * answers at every chunk size in tests/test_json_stream.c.
 *
 * Choices (RFC 8259 unless said): literals, numbers and escapes are
 * validated; control characters (< 0x20) inside strings are rejected, as
 * YAJL did; UTF-8 is not validated (YAJL ran with yajl_dont_validate_strings);
 * a lone UTF-16 surrogate in \u escapes becomes '?', as YAJL wrote it. Error
 * reasons keep YAJL's words ("lexical error: ...", "parse error: ...") since
 * users and tests read them. */
#include "json_stream.h"

#include <stdint.h>
#include <string.h>

enum {
    ST_START,     /* the top-level value */
    ST_DONE,      /* after the top-level value: only blanks */
    ST_ARR_FIRST, /* after '[': a value or ']' */
    ST_ARR_VALUE, /* after ',' in an array: a value */
    ST_ARR_NEXT,  /* after an array element: ',' or ']' */
    ST_MAP_FIRST, /* after '{': a key or '}' */
    ST_MAP_KEY,   /* after ',' in an object: a key */
    ST_MAP_COLON, /* after a key: ':' */
    ST_MAP_VALUE, /* after ':': a value */
    ST_MAP_NEXT,  /* after a member: ',' or '}' */
};

/* A scan's result: an offset past the token, or one of these. */
enum { CUT = 0, BAD = -1 };

void mb_js_init(js_parser *p, const js_callbacks *cb, void *ctx)
{
    memset(p, 0, offsetof(js_parser, stack));
    p->cb = cb;
    p->ctx = ctx;
    p->state = ST_START;
}

bool mb_js_done(const js_parser *p)
{
    return p->state == ST_DONE;
}

static bool wants_value(int st)
{
    return st == ST_START || st == ST_ARR_FIRST || st == ST_ARR_VALUE || st == ST_MAP_VALUE;
}

static int after_value(const js_parser *p)
{
    if (p->depth == 0)
        return ST_DONE;
    return p->stack[p->depth - 1] ? ST_MAP_NEXT : ST_ARR_NEXT;
}

static const char *unexpected(int st)
{
    switch (st) {
    case ST_DONE:
        return "parse error: trailing garbage";
    case ST_MAP_FIRST:
    case ST_MAP_KEY:
        return "parse error: invalid object key (must be a string)";
    case ST_MAP_COLON:
        return "parse error: object key and value must be separated by a colon (':')";
    case ST_MAP_NEXT:
        return "parse error: after key and value, inside map, I expect ',' or '}'";
    case ST_ARR_NEXT:
        return "parse error: after array element, I expect ',' or ']'";
    default:
        return "parse error: unallowed token at this point in JSON text";
    }
}

static ptrdiff_t bad(js_parser *p, size_t at, const char *why)
{
    p->err = why;
    p->err_off = at;
    return BAD;
}

static bool is_digit(unsigned char c)
{
    return (unsigned)(c - '0') < 10;
}

static int hex_value(unsigned char c)
{
    if (is_digit(c))
        return c - '0';
    c |= 0x20;
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Bytes a string holds as they are: not '"', '\\' or a control character. */
static bool plain(unsigned char c)
{
    return c >= 0x20 && c != '"' && c != '\\';
}

/* The index (0..7) of the first byte of s[0..8) that is not plain, or 8:
 * all 8 tested at once (SWAR). A byte that is '"', '\\' or below 0x20 sets
 * its high bit in `hit`; borrows can set bits only above the first such
 * byte, so the lowest set bit is exact (little-endian load). */
static unsigned stop8(const unsigned char *s)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    uint64_t v;
    memcpy(&v, s, sizeof v);
    uint64_t q = v ^ (ones * '"'), b = v ^ (ones * '\\');
    uint64_t hit = (((q - ones) & ~q) | ((b - ones) & ~b) | ((v - ones * 0x20) & ~v)) & highs;
    return hit ? (unsigned)__builtin_ctzll(hit) >> 3 : 8;
#else
    unsigned k = 0;
    while (k < 8 && plain(s[k]))
        k++;
    return k;
#endif
}

/* Validates one escape at buf[i] == '\\': its length, CUT, or BAD. */
static ptrdiff_t scan_escape(js_parser *p, const unsigned char *buf, size_t i, size_t len)
{
    if (i + 1 >= len)
        return CUT;
    unsigned char c = buf[i + 1];
    if (c == 'u') {
        for (size_t k = 2; k < 6; k++) {
            if (i + k >= len)
                return CUT;
            if (hex_value(buf[i + k]) < 0)
                return bad(p, i + k, "lexical error: invalid (non-hex) character occurs after '\\u' inside string");
        }
        return 6;
    }
    if (c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' || c == 'r' || c == 't')
        return 2;
    return bad(p, i + 1, "lexical error: inside a string, '\\' occurs before a character which it may not");
}

/* The string starting at buf[i] == '"': the offset past its closing quote,
 * CUT or BAD; *escaped says whether it holds a backslash. */
static ptrdiff_t scan_string(js_parser *p, const unsigned char *buf, size_t i, size_t len, bool *escaped)
{
    i++;
    for (;;) {
        /* Kernel names run to hundreds of bytes: test 8 at a time. */
        while (i + 8 <= len) {
            unsigned k = stop8(buf + i);
            i += k;
            if (k < 8)
                break;
        }
        while (i < len && plain(buf[i]))
            i++;
        if (i >= len)
            return CUT;
        unsigned char c = buf[i];
        if (c == '"')
            return (ptrdiff_t)(i + 1);
        if (c != '\\')
            return bad(p, i, "lexical error: invalid character inside string");
        *escaped = true;
        ptrdiff_t n = scan_escape(p, buf, i, len);
        if (n <= 0)
            return n;
        i += (size_t)n;
    }
}

static unsigned hex4(const unsigned char *s)
{
    unsigned v = 0;
    for (int k = 0; k < 4; k++)
        v = v << 4 | (unsigned)hex_value(s[k]);
    return v;
}

static size_t put_utf8(unsigned char *w, unsigned cp)
{
    if (cp < 0x80) {
        w[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        w[0] = (unsigned char)(0xC0 | cp >> 6);
        w[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        w[0] = (unsigned char)(0xE0 | cp >> 12);
        w[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
        w[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    w[0] = (unsigned char)(0xF0 | cp >> 18);
    w[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3F));
    w[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
    w[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

/* The code point of the \u escape at s[*r] (past "\u"), joining a surrogate
 * pair; a lone surrogate is '?'. Advances *r past what it read. */
static unsigned read_u(const unsigned char *s, size_t n, size_t *r)
{
    unsigned cp = hex4(s + *r);
    *r += 4;
    if (cp >= 0xDC00 && cp <= 0xDFFF)
        return '?';
    if (cp < 0xD800 || cp > 0xDBFF)
        return cp;
    if (*r + 6 > n || s[*r] != '\\' || s[*r + 1] != 'u')
        return '?';
    unsigned lo = hex4(s + *r + 2);
    if (lo < 0xDC00 || lo > 0xDFFF)
        return '?';
    *r += 6;
    return 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
}

/* Unescapes the validated string body s[0..n) in place: every escape is at
 * least as long as what it stands for, so the write never passes the read. */
static size_t unescape(unsigned char *s, size_t n)
{
    const unsigned char *first = memchr(s, '\\', n);
    size_t r = first ? (size_t)(first - s) : n, w = r;
    while (r < n) {
        unsigned char c = s[r];
        if (c != '\\') {
            s[w++] = c;
            r++;
            continue;
        }
        c = s[r + 1];
        r += 2;
        switch (c) {
        case 'b':
            s[w++] = '\b';
            break;
        case 'f':
            s[w++] = '\f';
            break;
        case 'n':
            s[w++] = '\n';
            break;
        case 'r':
            s[w++] = '\r';
            break;
        case 't':
            s[w++] = '\t';
            break;
        case 'u':
            w += put_utf8(s + w, read_u(s, n, &r));
            break;
        default: /* '"', '\\', '/' */
            s[w++] = c;
            break;
        }
    }
    return w;
}

static size_t skip_digits(const unsigned char *buf, size_t j, size_t len)
{
    while (j < len && is_digit(buf[j]))
        j++;
    return j;
}

/* The number at buf[i]: the offset past it, CUT (it may go on in the next
 * input) or BAD. Grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static ptrdiff_t scan_number(js_parser *p, const unsigned char *buf, size_t i, size_t len, bool at_eof)
{
    size_t j = i + (buf[i] == '-');
    if (j >= len)
        return at_eof ? bad(p, j, "parse error: premature EOF") : CUT;
    if (buf[j] == '0')
        j++;
    else if (is_digit(buf[j]))
        j = skip_digits(buf, j, len);
    else
        return bad(p, j, "lexical error: malformed number, a digit is required after the minus sign");
    if (j < len && buf[j] == '.') {
        j++;
        if (j >= len)
            return at_eof ? bad(p, j, "parse error: premature EOF") : CUT;
        if (!is_digit(buf[j]))
            return bad(p, j, "lexical error: malformed number, a digit is required after the decimal point");
        j = skip_digits(buf, j, len);
    }
    if (j < len && (buf[j] | 0x20) == 'e') {
        j++;
        if (j < len && (buf[j] == '+' || buf[j] == '-'))
            j++;
        if (j >= len)
            return at_eof ? bad(p, j, "parse error: premature EOF") : CUT;
        if (!is_digit(buf[j]))
            return bad(p, j, "lexical error: malformed number, a digit is required after the exponent");
        j = skip_digits(buf, j, len);
    }
    if (j >= len && !at_eof)
        return CUT;
    return (ptrdiff_t)j;
}

/* true, false or null at buf[i]: the offset past it, CUT or BAD. */
static ptrdiff_t scan_literal(js_parser *p, const unsigned char *buf, size_t i, size_t len, const char *word)
{
    for (size_t k = 0; word[k]; k++) {
        if (i + k >= len)
            return CUT;
        if (buf[i + k] != (unsigned char)word[k])
            return bad(p, i + k, "lexical error: invalid string in json text");
    }
    return (ptrdiff_t)(i + strlen(word));
}

static bool is_blank(unsigned char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* A string token at buf[i]: a key or a value by the state. */
static ptrdiff_t do_string(js_parser *p, unsigned char *buf, size_t i, size_t len, int *st)
{
    bool key = *st == ST_MAP_FIRST || *st == ST_MAP_KEY;
    if (!key && !wants_value(*st))
        return bad(p, i, unexpected(*st));
    bool escaped = false;
    ptrdiff_t e = scan_string(p, buf, i, len, &escaped);
    if (e <= 0)
        return e;
    unsigned char *s = buf + i + 1;
    size_t n = (size_t)e - i - 2;
    if (escaped)
        n = unescape(s, n);
    int ok;
    if (key) {
        *st = ST_MAP_COLON;
        ok = p->cb->on_map_key(p->ctx, s, n);
    } else {
        *st = after_value(p);
        ok = p->cb->on_string(p->ctx, s, n);
    }
    return ok ? e : bad(p, i, NULL);
}

/* A number or literal at buf[i]. */
static ptrdiff_t do_scalar(js_parser *p, unsigned char *buf, size_t i, size_t len, bool at_eof, int *st)
{
    if (!wants_value(*st))
        return bad(p, i, unexpected(*st));
    unsigned char c = buf[i];
    ptrdiff_t e;
    int ok;
    if (c == 't' || c == 'f') {
        e = scan_literal(p, buf, i, len, c == 't' ? "true" : "false");
        if (e <= 0)
            return e;
        ok = p->cb->on_boolean(p->ctx, c == 't');
    } else if (c == 'n') {
        e = scan_literal(p, buf, i, len, "null");
        if (e <= 0)
            return e;
        ok = p->cb->on_null(p->ctx);
    } else {
        e = scan_number(p, buf, i, len, at_eof);
        if (e <= 0)
            return e;
        ok = p->cb->on_number(p->ctx, (const char *)buf + i, (size_t)e - i);
    }
    *st = after_value(p);
    return ok ? e : bad(p, i, NULL);
}

/* '{' '[' '}' ']' at buf[i]. */
static ptrdiff_t do_bracket(js_parser *p, size_t i, unsigned char c, int *st)
{
    int ok;
    if (c == '{' || c == '[') {
        if (!wants_value(*st))
            return bad(p, i, unexpected(*st));
        if (p->depth >= JS_MAX_DEPTH)
            return bad(p, i, "parse error: JSON nested too deep");
        p->stack[p->depth++] = c == '{';
        *st = c == '{' ? ST_MAP_FIRST : ST_ARR_FIRST;
        ok = c == '{' ? p->cb->on_start_map(p->ctx) : p->cb->on_start_array(p->ctx);
    } else if (c == '}') {
        if (*st != ST_MAP_FIRST && *st != ST_MAP_NEXT)
            return bad(p, i, unexpected(*st));
        p->depth--;
        *st = after_value(p);
        ok = p->cb->on_end_map(p->ctx);
    } else {
        if (*st != ST_ARR_FIRST && *st != ST_ARR_NEXT)
            return bad(p, i, unexpected(*st));
        p->depth--;
        *st = after_value(p);
        ok = p->cb->on_end_array(p->ctx);
    }
    return ok ? (ptrdiff_t)(i + 1) : bad(p, i, NULL);
}

/* ',' or ':' at buf[i]. */
static ptrdiff_t do_separator(js_parser *p, size_t i, unsigned char c, int *st)
{
    if (c == ',' && *st == ST_ARR_NEXT)
        *st = ST_ARR_VALUE;
    else if (c == ',' && *st == ST_MAP_NEXT)
        *st = ST_MAP_KEY;
    else if (c == ':' && *st == ST_MAP_COLON)
        *st = ST_MAP_VALUE;
    else
        return bad(p, i, unexpected(*st));
    return (ptrdiff_t)(i + 1);
}

static ptrdiff_t do_token(js_parser *p, unsigned char *buf, size_t i, size_t len, bool at_eof, int *st)
{
    unsigned char c = buf[i];
    if (*st == ST_DONE)
        return bad(p, i, unexpected(ST_DONE));
    switch (c) {
    case '"':
        return do_string(p, buf, i, len, st);
    case '{':
    case '[':
    case '}':
    case ']':
        return do_bracket(p, i, c, st);
    case ',':
    case ':':
        return do_separator(p, i, c, st);
    case 't':
    case 'f':
    case 'n':
    case '-':
        return do_scalar(p, buf, i, len, at_eof, st);
    default:
        if (is_digit(c))
            return do_scalar(p, buf, i, len, at_eof, st);
        return bad(p, i, "lexical error: invalid char in json text");
    }
}

js_status mb_js_parse(js_parser *p, unsigned char *buf, size_t len, bool at_eof, size_t *used)
{
    size_t i = 0;
    int st = p->state;
    js_status rc = JS_OK;
    for (;;) {
        while (i < len && is_blank(buf[i]))
            i++;
        if (i >= len)
            break;
        ptrdiff_t e = do_token(p, buf, i, len, at_eof, &st);
        if (e == BAD) {
            rc = p->err ? JS_ERROR : JS_CANCELED;
            break;
        }
        if (e == CUT)
            break;
        i = (size_t)e;
    }
    p->state = st;
    *used = i;
    if (rc == JS_OK && at_eof && (i < len || st != ST_DONE)) {
        p->err = "parse error: premature EOF";
        p->err_off = len;
        rc = JS_ERROR;
    }
    return rc;
}
