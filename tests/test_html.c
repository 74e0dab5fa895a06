/* test_html.c: the run/report page (harness/html_report.c) on hand-made
 * results: arithmetic intensities by hand, and the charts that the real
 * results in tests/data do not exercise (collectives, burst vs sustained),
 * with their counts; the browser test checks the real pages. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "html_report.h"

#define CLOSE(a, b) assert_true(fabs((double)(a) - (double)(b)) <= 1e-9 * fmax(1.0, fabs((double)(b))))

static void test_intensity(void **s)
{
    (void)s;
    /* GEMM 8192^3 bf16: 2 x 8192^3 flop over 2 bytes x 3 x 8192^2 = 8192 / 3 */
    cJSON *g = cJSON_Parse("{\"component\":\"gemm\",\"params\":{\"shape\":\"8192x8192x8192\",\"m\":\"0\","
                           "\"dtype\":\"bf16\"}}");
    CLOSE(mb_case_intensity(g), 8192.0 / 3);
    cJSON_Delete(g);
    /* m n k given: 2 x 64 x 32 x 16 / (4 x (64x16 + 16x32 + 64x32)) = 65536 / 14336 */
    g = cJSON_Parse("{\"component\":\"gemm\",\"params\":{\"m\":\"64\",\"n\":\"32\",\"k\":\"16\",\"dtype\":\"fp32\"}}");
    CLOSE(mb_case_intensity(g), 65536.0 / 14336);
    cJSON_Delete(g);
    /* ResNet stem conv, fp32: out 112 x 112; flops 2x64x112x112x3x49 = 236027904;
     * bytes 4 x (3x224x224 + 64x3x49 + 64x112x112) = 3851008 */
    cJSON *c = cJSON_Parse("{\"component\":\"conv\",\"params\":{\"n\":\"1\",\"c\":\"3\",\"h\":\"224\",\"w\":\"224\","
                           "\"k\":\"64\",\"r\":\"7\",\"s\":\"7\",\"pad\":\"3\",\"stride\":\"2\",\"dtype\":\"fp32\"}}");
    CLOSE(mb_case_intensity(c), 236027904.0 / 3851008);
    cJSON_Delete(c);
    /* cuDNN spelling (pad_h, stride_h), bf16: 3x3 same conv n=256 c=k=64 56x56 */
    c = cJSON_Parse("{\"component\":\"conv\",\"params\":{\"n\":\"256\",\"c\":\"64\",\"h\":\"56\",\"w\":\"56\","
                    "\"k\":\"64\",\"r\":\"3\",\"s\":\"3\",\"pad_h\":\"1\",\"stride_h\":\"1\",\"dtype\":\"bf16\"}}");
    double flops = 2.0 * 256 * 64 * 56 * 56 * 64 * 9, bytes = 2.0 * (256.0 * 64 * 56 * 56 * 2 + 64 * 64 * 9);
    CLOSE(mb_case_intensity(c), flops / bytes);
    cJSON_Delete(c);
    c = cJSON_Parse("{\"component\":\"gemm\",\"params\":{\"dtype\":\"fp32\"}}");
    assert_true(isnan(mb_case_intensity(c)));
    cJSON_Delete(c);
}

static char *page(const char *json)
{
    cJSON *doc = cJSON_Parse(json);
    assert_non_null(doc);
    char *text = NULL;
    size_t len = 0;
    FILE *o = open_memstream(&text, &len);
    mb_err err = { 0 };
    assert_int_equal(mb_html_results(o, doc, &err), MB_OK);
    fclose(o);
    cJSON_Delete(doc);
    return text;
}

static int count(const char *from, const char *to, const char *what)
{
    int n = 0;
    for (const char *p = strstr(from, what); p && (to == NULL || p < to); p = strstr(p + 1, what))
        n++;
    return n;
}

#define OK_CASE(comp, backend, params, rate, extra)                                                                    \
    "{\"id\":\"" comp "/" backend "/x\",\"component\":\"" comp "\",\"backend\":\"" backend "\",\"params\":" params     \
    ",\"status\":\"ok\",\"rate_unit\":\"GB/s\",\"rate_scale\":1e9,\"rate\":{\"median\":" rate ",\"cv\":0.1},"          \
    "\"verification\":{\"status\":\"passed\"}" extra "}"

static void test_collectives_and_burst(void **s)
{
    (void)s;
    char *t = page("{\"context\":{\"host\":{\"name\":\"h<1>\"}},\"cases\":[" OK_CASE(
        "allreduce", "nccl", "{\"size\":\"4096\",\"dtype\":\"bf16\"}", "1",
        "") "," OK_CASE("allreduce", "nccl", "{\"size\":\"1048576\",\"dtype\":\"bf16\"}", "50",
                        "") "," OK_CASE("allreduce", "mpi", "{\"size\":\"1048576\",\"dtype\":\"float\"}", "5",
                                        "") "," OK_CASE("membw", "cuda", "{\"op\":\"triad\"}", "3000",
                                                        ",\"burst\":{\"rate\":{\"median\":3100}},\"sustained\":{"
                                                        "\"rate\":{\"median\":2900}}") ","
                                                                                       "{\"id\":\"copy/cuda/"
                                                                                       "y\",\"component\":\"copy\","
                                                                                       "\"backend\":\"cuda\","
                                                                                       "\"params\":{},"
                                                                                       "\"status\":\"skipped\","
                                                                                       "\"reason\":\"no <GPU>\"}]}");
    /* the host name is escaped */
    assert_non_null(strstr(t, "<title>mlbench results: h&lt;1&gt;</title>"));
    /* busbw: two series (nccl bf16 with 2 points, mpi float with 1) */
    const char *coll = strstr(t, "data-chart=\"coll-bw\"");
    assert_non_null(coll);
    const char *end = strstr(coll, "</svg>");
    assert_int_equal(count(coll, end, "<g class=\"series\""), 2);
    assert_int_equal(count(coll, end, "<circle class=\"pt\""), 3);
    assert_int_equal(count(coll, end, "<line class=\"err\""), 3); /* cv 10%: an error bar each */
    /* burst vs sustained: one case, two bars */
    const char *burst = strstr(t, "data-chart=\"burst\"");
    assert_non_null(burst);
    end = strstr(burst, "</svg>");
    assert_int_equal(count(burst, end, "<rect class=\"bar\""), 2);
    assert_non_null(strstr(burst, "sustained 2900 GB/s (94% of burst)"));
    /* the skipped case with its reason, escaped */
    assert_non_null(strstr(t, "<td>no &lt;GPU&gt;</td>"));
    assert_null(strstr(t, "<script"));
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_intensity),
        cmocka_unit_test(test_collectives_and_burst),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
