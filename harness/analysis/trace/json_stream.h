/* json_stream.h: a small streaming (SAX) JSON parser for the trace reader.
 *
 * The caller owns the buffer. mb_js_parse consumes whole tokens only: when a
 * token is cut at the end of the buffer it stops before it and says how many
 * bytes it consumed; the caller keeps the unconsumed tail, appends more input
 * after it and calls mb_js_parse again from the tail. Memory is therefore the
 * caller's buffer, bounded by the largest token, never by the document.
 *
 * Strings are unescaped in place (the unescaped form is never longer), so
 * mb_js_parse may rewrite bytes of strings it has consumed. */
#ifndef MB_JSON_STREAM_H
#define MB_JSON_STREAM_H

#include <stdbool.h>
#include <stddef.h>

/* The parser's own nesting bound; the trace reader stops earlier (1000) with
 * its own message from on_start. */
#define JS_MAX_DEPTH 1024

/* Each callback returns 0 to stop the parse (mb_js_parse then returns
 * JS_CANCELED), nonzero to go on. Strings and keys are the unescaped bytes
 * (not NUL-terminated; may hold NUL from \u0000); numbers their raw text. */
typedef struct {
    int (*on_null)(void *ctx);
    int (*on_boolean)(void *ctx, int value);
    int (*on_number)(void *ctx, const char *text, size_t n);
    int (*on_string)(void *ctx, const unsigned char *s, size_t n);
    int (*on_start_map)(void *ctx);
    int (*on_map_key)(void *ctx, const unsigned char *key, size_t n);
    int (*on_end_map)(void *ctx);
    int (*on_start_array)(void *ctx);
    int (*on_end_array)(void *ctx);
} js_callbacks;

typedef enum { JS_OK = 0, JS_CANCELED, JS_ERROR } js_status;

typedef struct {
    const js_callbacks *cb;
    void *ctx;
    int state; /* what the grammar expects next (json_stream.c) */
    int depth;
    const char *err;     /* the reason, for JS_ERROR */
    size_t err_off;      /* offset in the last buffer of the offending byte */
    unsigned char stack[JS_MAX_DEPTH]; /* 1 = object, 0 = array */
} js_parser;

void mb_js_init(js_parser *p, const js_callbacks *cb, void *ctx);

/* Parses buf[0..len). *used is set to the bytes consumed (the rest is a cut
 * token to present again with more input). With at_eof the input ends here:
 * a cut token or an unfinished value is an error ("premature EOF"). On
 * JS_ERROR/JS_CANCELED, err_off is the offset in buf of the offending byte
 * (for JS_CANCELED, the first byte of the token whose callback said stop). */
js_status mb_js_parse(js_parser *p, unsigned char *buf, size_t len, bool at_eof, size_t *used);

/* True once one complete top-level value has been parsed. */
bool mb_js_done(const js_parser *p);

#endif
