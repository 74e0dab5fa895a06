/* gapconfig.h: the data the gap analysis reads from configs/gap/
 * (thresholds.ini, matching.ini, remedies.ini, compare.ini), as a list of
 * section/key/value entries in file order. Keys may repeat (remedies.ini
 * lists several `remedy =` lines per pattern). */
#ifndef MB_GAPCONFIG_H
#define MB_GAPCONFIG_H

#include <stdbool.h>

#include "mb.h"

typedef struct mb_ini_entry {
    char *section;
    char *key;
    char *value;
} mb_ini_entry;

typedef struct mb_ini {
    char *path;
    mb_ini_entry *e;
    int n;
} mb_ini;

/* Loads an INI file (inih). MB_EUSAGE with file:line on a syntax error. */
int mb_ini_load(const char *path, mb_ini *out, mb_err *err);
/* Loads configs/gap/<name> from the config directory (paths.h). */
int mb_ini_load_gap(const char *name, mb_ini *out, mb_err *err);
void mb_ini_free(mb_ini *ini);

/* First value of section.key, or NULL. */
const char *mb_ini_get(const mb_ini *ini, const char *section, const char *key);
/* A number that must be there: MB_EUSAGE naming the file, section and key
 * when it is missing or not a finite number. */
int mb_ini_number(const mb_ini *ini, const char *section, const char *key, double *out, mb_err *err);
/* True when `item` is in the comma-separated list section.key. */
bool mb_ini_list_has(const mb_ini *ini, const char *section, const char *key, const char *item);

#endif
