/* case_identity.h: whether two cases of results files are the same
 * measurement — the one rule every place that pairs cases across files
 * (compare, --baseline, reference joins) uses.
 *
 * A case id ("component/backend/k1=v1,k2=v2,...") spells out every parameter
 * of its backend, defaults included, so when a backend gains a parameter
 * every id written before changes although the measurement did not. Two cases
 * are the same when component and backend are equal, every parameter both
 * have is equal, and a parameter only one has holds this build's default for
 * that backend there (configs and `mlbench list` show the defaults). A
 * backend this build does not know (not in the registry, or its table is not
 * loadable) falls back to the exact id (its pairs in any order). Values
 * compare as the ids hold them: the harness writes them normalised. The ids
 * written stay as they are. */
#ifndef MB_CASE_IDENTITY_H
#define MB_CASE_IDENTITY_H

#include <stdbool.h>

#include <cjson/cJSON.h>

/* a and b: case ids. An id not of the form component/backend/k=v,... pairs
 * only with itself. */
bool mb_case_ids_same(const char *a, const char *b);
/* The same for two case objects of results files, by their "id". */
bool mb_case_same(const cJSON *a, const cJSON *b);

/* The case of `cases` (a JSON array of case objects) that is the same as c:
 * the one with c's exact id first, else the first mb_case_same; NULL none. */
const cJSON *mb_case_find_same(const cJSON *cases, const cJSON *c);

#endif
