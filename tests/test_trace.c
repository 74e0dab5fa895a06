/* The PyTorch trace reader (harness/analysis/trace/trace*.c).
 *
 *   test_trace            synthetic traces with hand-computed answers,
 *                         malformed inputs, class rules, FLOP formulas
 *   test_trace fixtures   every real trace in $MLBENCH_SHARED/fixtures/kineto
 *                         against tests/trace_check.py (an independent
 *                         computation in Python); exit 77 without fixtures
 *                         unless $CI is set
 *   test_trace large      a generated trace of hundreds of MB
 *                         (scripts/gen_large_trace.py) read in a child
 *                         process: figures against the generator's summary,
 *                         RSS the reader adds under 150 MB, MB/s printed
 *   test_trace dump FILE  prints what the reader derived (debug/bench) */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "project.h"
#include "run_read.h"
#include "trace.h"

#ifndef MB_TEST_SRC
#define MB_TEST_SRC "."
#endif

static char tmpdir[256];

/* ---- helpers ---------------------------------------------------------------- */

static const char *tmp_path(const char *name)
{
    static char buf[8][512];
    static int next;
    char *p = buf[next++ % 8];
    snprintf(p, 512, "%s/%s", tmpdir, name);
    return p;
}

static void write_text(const char *path, const char *text, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static void write_gz(const char *path, const char *text, size_t n)
{
    gzFile g = gzopen(path, "wb6");
    assert_non_null(g);
    assert_int_equal(gzwrite(g, text, (unsigned)n), (int)n);
    assert_int_equal(gzclose(g), Z_OK);
}

static char *read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)len + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    buf[len] = '\0';
    *n = (size_t)len;
    return buf;
}

static const mb_stage *stage(const mb_run *r, const char *name)
{
    for (int i = 0; i < r->n_stages; i++)
        if (strcmp(r->stages[i].name, name) == 0)
            return &r->stages[i];
    return NULL;
}

static cJSON *path_get(cJSON *o, const char *path)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *tok = strtok(buf, "."); tok && o; tok = strtok(NULL, ".")) {
        char *end;
        long idx = strtol(tok, &end, 10);
        o = *end == '\0' && cJSON_IsArray(o) ? cJSON_GetArrayItem(o, (int)idx)
                                              : cJSON_GetObjectItemCaseSensitive(o, tok);
    }
    return o;
}

static double num(cJSON *o, const char *path)
{
    cJSON *v = path_get(o, path);
    if (!cJSON_IsNumber(v))
        fail_msg("evidence %s is not a number", path);
    return v->valuedouble;
}

static bool partial_has(const mb_run *r, const char *needle)
{
    cJSON *p;
    cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(r->evidence, "partial"))
        if (cJSON_IsString(p) && strstr(p->valuestring, needle))
            return true;
    return false;
}

/* Seconds equal to the nanosecond (figures are integer ns inside). */
#define NS_EQ(sec, ns) assert_true(llabs(llround((sec) * 1e9) - (long long)(ns)) <= 1)

/* ---- a hand-computed trace ------------------------------------------------------ */

/* Out of time order on purpose; fractional and string timestamps; overlap
 * across streams; a sync call and a DataLoader annotation over idle gaps.
 *
 * GPU intervals (us): conv [900,950], gemm [1000.5,1010.5], nccl on stream
 * 20 [1005.5,1025.5], h2d [1100.25,1104.25], d2h [1200,1202], memset
 * [1300,1301]. Union = 50+25+4+2+1 = 82; window [900,1301] = 401; idle 319.
 * Host waits: sync [1030,1130] (4 of it busy) and DataLoader [1210,1260]:
 * host-wait idle = 96 + 50 = 146.
 * ProfilerStep#7 [800,1100]: busy 75, host-wait idle 70.
 * ProfilerStep#8 [1100,1350]: busy 7, host-wait idle 26 + 50 = 76. */
static const char *const synthetic_events =
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ampere_sgemm_128x64_nn\",\"pid\":0,\"tid\":7,"
    "\"ts\":1000.5,\"dur\":10,\"args\":{\"device\":0,\"stream\":7,\"correlation\":1,"
    "\"grid\":[1,2,3],\"block\":[128,1,1]}},\n"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, "
    "unsigned long, ncclWork*)\",\"pid\":0,\"tid\":20,\"ts\":1005.5,\"dur\":20,\"args\":{\"device\":0,"
    "\"stream\":20,\"correlation\":2,\"Collective name\":\"allreduce\",\"In msg nelems\":1000,"
    "\"Out msg nelems\":1000,\"Group size\":4,\"dtype\":\"Float\"}},\n"
    "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":0,\"tid\":0,\"args\":{\"name\":\"GPU 0\"}},\n"
    "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoD (Pinned -> Device)\",\"pid\":0,"
    "\"tid\":7,\"ts\":\"1100.25\",\"dur\":4,\"args\":{\"device\":0,\"stream\":7,\"correlation\":3,"
    "\"bytes\":4000000}},\n"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"sm80_xmma_fprop_implicit_gemm_tf32f32\",\"pid\":0,"
    "\"tid\":7,\"ts\":900,\"dur\":50,\"args\":{\"device\":0,\"stream\":7,\"correlation\":4}},\n"
    "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy DtoH (Device -> Pageable)\",\"pid\":0,"
    "\"tid\":7,\"ts\":1200,\"dur\":2,\"args\":{\"device\":0,\"stream\":7,\"bytes\":8}},\n"
    "{\"ph\":\"X\",\"cat\":\"gpu_memset\",\"name\":\"Memset (Device)\",\"pid\":0,\"tid\":7,"
    "\"ts\":1300,\"dur\":1,\"args\":{\"device\":0,\"stream\":7,\"bytes\":64}},\n"
    "{\"ph\":\"s\",\"id\":1,\"pid\":1,\"tid\":1,\"ts\":990,\"cat\":\"ac2g\",\"name\":\"ac2g\"},\n"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaStreamSynchronize\",\"pid\":1,\"tid\":1,"
    "\"ts\":1030,\"dur\":100,\"args\":{\"correlation\":9}},\n"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"
    "\"ts\":990,\"dur\":5,\"args\":{\"correlation\":1}},\n"
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#8\",\"pid\":1,\"tid\":1,"
    "\"ts\":1100,\"dur\":250,\"args\":{}},\n"
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#7\",\"pid\":1,\"tid\":1,"
    "\"ts\":800,\"dur\":300,\"args\":{}},\n"
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":"
    "\"enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__\",\"pid\":1,\"tid\":1,"
    "\"ts\":1210,\"dur\":50},\n"
    "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"Record Window End\",\"pid\":\"\",\"tid\":\"\",\"ts\":1400},\n"
    "{\"ph\":\"X\",\"cat\":\"Trace\",\"name\":\"PyTorch Profiler (0)\",\"pid\":\"Spans\","
    "\"tid\":\"PyTorch Profiler\",\"ts\":700,\"dur\":700,\"args\":{\"Op count\":0}}\n";

static char *synthetic_trace(bool bare_array)
{
    const char *head = bare_array ? "[\n" : "{\"schemaVersion\":1,\"deviceProperties\":[{\"id\":0,"
                                            "\"name\":\"Test GPU\",\"numSms\":1}],"
                                            "\"distributedInfo\":{\"rank\":0,\"world_size\":4},"
                                            "\"traceEvents\":[\n";
    const char *tail = bare_array ? "]\n" : "],\"baseTimeNanoseconds\":1700000000000000000}\n";
    size_t n = strlen(head) + strlen(synthetic_events) + strlen(tail) + 1;
    char *t = malloc(n);
    snprintf(t, n, "%s%s%s", head, synthetic_events, tail);
    return t;
}

static void check_synthetic_busy(const mb_run *r)
{
    cJSON *ev = r->evidence;
    assert_non_null(ev);
    NS_EQ(num(ev, "devices.0.busy_s"), 82000);
    NS_EQ(num(ev, "devices.0.window_s"), 401000);
    NS_EQ(num(ev, "devices.0.idle_s"), 319000);
    NS_EQ(num(ev, "devices.0.host_wait_idle_s"), 146000);
    NS_EQ(num(ev, "devices.0.other_idle_s"), 173000);
    assert_int_equal((int)num(ev, "devices.0.streams"), 2);
    NS_EQ(num(ev, "devices.0.classes.gemm.seconds"), 10000);
    NS_EQ(num(ev, "devices.0.classes.conv.seconds"), 50000);
    NS_EQ(num(ev, "devices.0.classes.nccl.seconds"), 20000);
    NS_EQ(num(ev, "devices.0.classes.memcpy.seconds"), 6000);
    assert_int_equal((int)num(ev, "devices.0.classes.memcpy.count"), 2);
    /* steps come out in time order although #8 is first in the file */
    assert_int_equal(r->steps, 2);
    assert_int_equal((int)num(ev, "steps.0.step"), 7);
    NS_EQ(num(ev, "steps.0.devices.0.busy_s"), 75000);
    NS_EQ(num(ev, "steps.0.devices.0.idle_s"), 225000);
    NS_EQ(num(ev, "steps.0.devices.0.host_wait_idle_s"), 70000);
    NS_EQ(num(ev, "steps.0.devices.0.classes.conv.seconds"), 50000);
    NS_EQ(num(ev, "steps.1.devices.0.busy_s"), 7000);
    NS_EQ(num(ev, "steps.1.devices.0.host_wait_idle_s"), 76000);
    NS_EQ(r->step_seconds, 275000);
    /* what the trace recorded (ProfilerStep#7 at 800 to #8's end at 1350), not the profiler's own window
     * (its Trace span, 700 to 1400: a schedule's warm-up records nothing) */
    NS_EQ(r->total_seconds, 550000);
    assert_true(fabs(r->gpu_utilization - 82.0 / 550.0) < 1e-12);
}

static void check_synthetic_stages(const mb_run *r)
{
    const mb_stage *s = stage(r, "allreduce");
    assert_non_null(s);
    assert_string_equal(s->component, "allreduce");
    assert_string_equal(s->work_unit, "byte");
    assert_string_equal(s->dtype, "float");
    assert_true(s->work == 4000 && s->block_size == 4000 && s->ranks == 4 && s->count == 1);
    NS_EQ(s->seconds, 20000);
    s = stage(r, "copy h2d pinned");
    assert_non_null(s);
    assert_string_equal(s->direction, "h2d");
    assert_string_equal(s->memory, "pinned");
    assert_true(s->work == 4e6 && s->block_size == 4000000);
    NS_EQ(s->seconds, 4000);
    s = stage(r, "copy d2h pageable");
    assert_non_null(s);
    assert_string_equal(s->memory, "pageable");
    assert_true(s->work == 8);
    s = stage(r, "memset");
    assert_non_null(s);
    assert_string_equal(s->component, "membw");
    assert_true(s->work == 64);
    s = stage(r, "gemm"); /* no cpu_op with shapes: time only */
    assert_non_null(s);
    assert_string_equal(s->work_unit, "s");
    NS_EQ(s->seconds, 10000);
    s = stage(r, "conv");
    assert_non_null(s);
    NS_EQ(s->seconds, 50000);
    s = stage(r, "sync");
    assert_non_null(s);
    assert_true(s->count == 1 && s->work == 1);
    NS_EQ(s->seconds, 100000);
    s = stage(r, "launch");
    assert_non_null(s);
    assert_true(s->count == 1);
    s = stage(r, "dataloading");
    assert_non_null(s);
    assert_string_equal(s->component, "disk");
    assert_string_equal(s->device, "cpu");
    NS_EQ(s->seconds, 50000);
    s = stage(r, "host code (GPU idle)"); /* idle in no launch, sync or DataLoader call */
    assert_non_null(s);
    NS_EQ(s->seconds, 317000);
    assert_null(stage(r, "gpu idle"));
    assert_null(stage(r, "other compute"));
    /* exposed time: the all-reduce overlaps the GEMM for 5 of its 20 us; the
     * sync waits 4 us on the h2d copy; launch and DataLoader are all idle */
    s = stage(r, "allreduce");
    assert_true(s->has_exposed);
    NS_EQ(s->exposed_seconds, 15000);
    s = stage(r, "sync");
    NS_EQ(s->exposed_seconds, 96000);
    s = stage(r, "launch");
    NS_EQ(s->exposed_seconds, 5000);
    s = stage(r, "dataloading");
    NS_EQ(s->exposed_seconds, 50000);
}

/* The step table of the hand-computed trace, worked out by hand:
 * step 7 [800,1100]: idle [800,900] host 100; conv 50; idle [950,1000.5]:
 * launch [990,995] 5, host 45.5; gemm 10; nccl newly covers [1010.5,1025.5]
 * 15; idle [1025.5,1100]: sync [1030,..) 70, host 4.5.
 * step 8 [1100,1350]: idle [1100,1100.25] sync; h2d 4; idle [1104.25,1200]:
 * sync to 1130 25.75, host 70; d2h 2; idle [1202,1300]: DataLoader 50, host
 * 48; memset 1 (memory-bound); idle [1301,1350] host 49.
 * Over both steps (550 us): gemm 10, conv 50, memory-bound 1, copy 6,
 * collective 15, data 50, sync 96, launch 5, host 317; means per step are
 * half of these. */
static void check_synthetic_step_table(const mb_run *r)
{
    cJSON *step = cJSON_GetObjectItemCaseSensitive(r->evidence, "step");
    assert_non_null(step);
    assert_true(num(step, "steps") == 2);
    NS_EQ(num(step, "seconds"), 275000);
    static const struct {
        const char *id;
        long long ns;
    } want[] = {{"gemm", 10000},  {"conv", 50000}, {"memory_bound", 1000}, {"copy", 6000},
                {"collective", 15000}, {"data", 50000}, {"sync", 96000}, {"launch", 5000},
                {"host", 317000}};
    double share = 0;
    int seen = 0;
    cJSON *p;
    cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(step, "parts"))
    {
        const char *id = cJSON_GetObjectItemCaseSensitive(p, "id")->valuestring;
        share += num(p, "share");
        for (size_t i = 0; i < sizeof want / sizeof *want; i++)
            if (strcmp(id, want[i].id) == 0) {
                NS_EQ(num(p, "seconds") * 2, want[i].ns);
                assert_true(fabs(num(p, "share") - (double)want[i].ns / 550000) < 1e-9);
                seen++;
            }
    }
    assert_int_equal(seen, 9);
    assert_true(fabs(share - 1) < 1e-9);
    assert_true(fabs(num(step, "gpu_busy_share") - r->gpu_utilization) < 1e-12);
    assert_true(num(step, "kernels_per_step") == 1.5); /* conv, gemm, nccl in 2 steps */
}

static void test_synthetic(void **state)
{
    (void)state;
    char *t = synthetic_trace(false);
    const char *path = tmp_path("synthetic.json");
    write_text(path, t, strlen(t));
    mb_run r;
    mb_err err = {0};
    assert_int_equal(mb_trace_read(path, &r, &err), MB_OK);
    assert_string_equal(r.kind, "pytorch-trace");
    check_synthetic_busy(&r);
    check_synthetic_stages(&r);
    check_synthetic_step_table(&r);
    cJSON *ev = r.evidence;
    assert_string_equal(cJSON_GetStringValue(path_get(ev, "devices.0.name")), "Test GPU");
    assert_int_equal((int)num(ev, "world_size"), 4);
    assert_int_equal((int)num(ev, "collectives.0.ranks"), 4);
    /* 4000 B in 20 us on 4 ranks: algbw 0.2 GB/s, busbw 0.2 * 2*3/4 */
    assert_true(fabs(num(ev, "collectives.0.algbw_gbps") - 0.2) < 1e-12);
    assert_true(fabs(num(ev, "collectives.0.busbw_gbps") - 0.3) < 1e-12);
    assert_true(fabs(num(ev, "copies.0.gbps") - 1000.0) < 1e-9); /* 4 MB in 4 us */
    assert_int_equal((int)num(ev, "trace.events"), 15);
    assert_int_equal((int)num(ev, "host.sync.calls.cudaStreamSynchronize.count"), 1);
    assert_false(partial_has(&r, "distributedInfo"));
    assert_false(partial_has(&r, "deviceProperties"));
    mb_run_free(&r);
    free(t);

    /* The same events as a bare array, gzip-compressed: same figures, and
     * partial reports for what the array form cannot carry. */
    t = synthetic_trace(true);
    path = tmp_path("synthetic_array.json.gz");
    write_gz(path, t, strlen(t));
    free(t);
    assert_int_equal(mb_trace_read(path, &r, &err), MB_OK);
    check_synthetic_busy(&r);
    assert_true(partial_has(&r, "no deviceProperties"));
    assert_true(partial_has(&r, "no distributedInfo"));
    assert_true(r.n_warnings >= 2);
    mb_run_free(&r);
}

/* A ProfilerStep that ends after the profiler's own span (HTA's
 * triton_example: a 1.5 ms step written 13.3 s long) is cut at the span's
 * end and says so; a step inside it is left as it is (test_cpu_only: a
 * step's tail with no event, in a trace without the span, stays). */
static void test_step_past_trace(void **state)
{
    (void)state;
    static const char text[] =
        "{\"traceEvents\":[\n"
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#3\",\"pid\":1,\"tid\":1,"
        "\"ts\":100,\"dur\":100},\n"
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#4\",\"pid\":1,\"tid\":1,"
        "\"ts\":200,\"dur\":13000000},\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::add\",\"pid\":1,\"tid\":1,\"ts\":210,\"dur\":20},\n"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"
        "\"ts\":215,\"dur\":5,\"args\":{\"correlation\":1}},\n"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"elementwise_kernel\",\"pid\":0,\"tid\":7,\"ts\":230,"
        "\"dur\":50,\"args\":{\"device\":0,\"stream\":7,\"correlation\":1}},\n"
        "{\"ph\":\"X\",\"cat\":\"Trace\",\"name\":\"PyTorch Profiler (0)\",\"pid\":\"Spans\","
        "\"tid\":\"PyTorch Profiler\",\"ts\":90,\"dur\":310}\n"
        "]}\n";
    const char *path = tmp_path("step_past_trace.json");
    write_text(path, text, strlen(text));
    mb_run r;
    mb_err err = {0};
    assert_int_equal(mb_trace_read(path, &r, &err), MB_OK);
    assert_int_equal(r.steps, 2);
    NS_EQ(num(r.evidence, "steps.0.seconds"), 100000); /* inside: as marked */
    NS_EQ(num(r.evidence, "steps.1.seconds"), 200000); /* [200, 400]: the profiler's span ends at 400 */
    assert_true(partial_has(&r, "1 ProfilerStep ends after the profiler's own span (ProfilerStep#4 by 13 s)"));
    mb_run_free(&r);
}

/* Copies and collectives yield to compute. DeepEP's all-to-all (a mixture
 * of experts' dispatch/combine, its own stream) starts before the kernels it
 * overlaps, as in DeepSeek's published H800 trace; the step table gave it
 * every microsecond it covered first (combine 100 of 100). Worked by hand,
 * ProfilerStep [0, 200] us:
 *   combine [10, 110] stream 27; gemm [20, 60]; elementwise [70, 90];
 *   dispatch [150, 170]; copy HtoD [175, 190]; gemm [180, 195].
 *   host [0,10] 10; collective [10,20] 10; gemm 40; collective [60,70] 10;
 *   memory-bound 20; collective [90,110] 20; host [110,150] 40; collective
 *   [150,170] 20; host [170,175] 5; copy [175,180] 5; gemm [180,195] 15
 *   (the copy's [180,190] hidden); host [195,200] 5.
 *   gemm 55, memory-bound 20, collective 60, copy 5, host 60: 200. */
static void test_overlap_yields(void **state)
{
    (void)state;
#define K(name, stream, ts, dur)                                                                  \
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"" name "\",\"pid\":0,\"tid\":" #stream ",\"ts\":" #ts \
    ",\"dur\":" #dur ",\"args\":{\"device\":0,\"stream\":" #stream "}},\n"
    static const char text[] =
        "{\"traceEvents\":[\n"
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":1,\"tid\":1,"
        "\"ts\":0,\"dur\":200},\n"
        K("void deep_ep::internode::combine<false, 8>(int4*, float*)", 27, 10, 100)
        K("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", 7, 20, 40)
        K("void at::native::vectorized_elementwise_kernel<4>(int)", 7, 70, 20)
        K("void deep_ep::intranode::dispatch<8, 768>(int4*, float*)", 27, 150, 20)
        K("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", 7, 180, 15)
        "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoD (Pinned -> Device)\",\"pid\":0,"
        "\"tid\":9,\"ts\":175,\"dur\":15,\"args\":{\"device\":0,\"stream\":9,\"bytes\":1000000}}\n"
        "]}\n";
#undef K
    const char *path = tmp_path("overlap_yields.json");
    write_text(path, text, strlen(text));
    mb_run r;
    mb_err err = {0};
    assert_int_equal(mb_trace_read(path, &r, &err), MB_OK);
    static const struct {
        const char *id;
        long long ns;
    } want[] = {{"gemm", 55000}, {"memory_bound", 20000}, {"collective", 60000}, {"copy", 5000},
                {"host", 60000}};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        char key[64];
        snprintf(key, sizeof key, "steps.0.parts.%s", want[i].id);
        NS_EQ(num(r.evidence, key), want[i].ns);
    }
    /* DeepEP's kernels are one all-to-all stage, 120 us of kernels of which
     * 60 are exposed */
    const mb_stage *s = stage(&r, "alltoall");
    assert_non_null(s);
    NS_EQ(s->seconds, 120000);
    assert_true(s->has_exposed);
    NS_EQ(s->exposed_seconds, 60000);
    s = stage(&r, "other compute"); /* the elementwise kernel alone (no op launched it) */
    assert_non_null(s);
    NS_EQ(s->seconds, 20000);
    mb_run_free(&r);
}

/* A collective across two steps ([50, 150] us, ProfilerSteps [0, 100] and
 * [100, 200]) with a GEMM inside each: each step takes its own part of it
 * (the copies and collectives are one sorted list read with a cursor from
 * each window's start). Step 1: host 50, collective [50,60] + [80,100] 30,
 * gemm [60,80] 20. Step 2: collective [100,120] + [130,150] 40, gemm
 * [120,130] 10, host 50. */
static void test_overlap_across_steps(void **state)
{
    (void)state;
    static const char text[] =
        "{\"traceEvents\":[\n"
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":100},\n"
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#2\",\"pid\":1,\"tid\":1,\"ts\":100,"
        "\"dur\":100},\n"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclDevKernel_AllReduce_Sum_f32_RING_LL\",\"pid\":0,\"tid\":20,"
        "\"ts\":50,\"dur\":100,\"args\":{\"device\":0,\"stream\":20}},\n"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ampere_sgemm_128x64_nn\",\"pid\":0,\"tid\":7,\"ts\":60,\"dur\":20,"
        "\"args\":{\"device\":0,\"stream\":7}},\n"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ampere_sgemm_128x64_nn\",\"pid\":0,\"tid\":7,\"ts\":120,\"dur\":10,"
        "\"args\":{\"device\":0,\"stream\":7}}\n"
        "]}\n";
    const char *path = tmp_path("overlap_across_steps.json");
    write_text(path, text, strlen(text));
    mb_run r;
    mb_err err = {0};
    assert_int_equal(mb_trace_read(path, &r, &err), MB_OK);
    NS_EQ(num(r.evidence, "steps.0.parts.host"), 50000);
    NS_EQ(num(r.evidence, "steps.0.parts.collective"), 30000);
    NS_EQ(num(r.evidence, "steps.0.parts.gemm"), 20000);
    NS_EQ(num(r.evidence, "steps.1.parts.collective"), 40000);
    NS_EQ(num(r.evidence, "steps.1.parts.gemm"), 10000);
    NS_EQ(num(r.evidence, "steps.1.parts.host"), 50000);
    mb_run_free(&r);
}

/* Kernel wait: a gap whose next kernel's launch call had returned before it
 * began, and no longer than launching it takes (50 us), is the GPU's own,
 * not the host's (HTA's idle-time breakdown). One ProfilerStep [0, 200) us;
 * launches (corr): 1 [10, 12), 2 [14, 16), 5 [16, 18), 3 [60, 62), 4 [78,
 * 83); kernels 1 [20, 40), 2 [45, 55), 3 [70, 80), 4 [85, 95), 5 [160,
 * 170). Gaps: [0, 20) before kernel 1, launched at 12 > 0: launches 6, host
 * 14; [40, 45): kernel 2's launch returned at 16, queued 5; [55, 70):
 * kernel 3's launch came at 60, host 13, launch 2; [80, 85): kernel 4's
 * launch began before the gap but returned at 83, after it began: the host
 * was still launching it, launch 3, host 2; [95, 160): kernel 5 was queued
 * but 65 us is no launch's gap (the GPU waited on what the trace does not
 * show): host 65; [170, 200) host 30. Busy 60, queued 5, launch 11, host
 * 124: 200. */
static void test_kernel_wait(void **state)
{
    (void)state;
#define KW_LAUNCH(ts, dur, corr)                                                                              \
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":" #ts \
    ",\"dur\":" #dur ",\"args\":{\"correlation\":" #corr "}},\n"
#define KW_KERNEL(ts, dur, corr)                                                                                  \
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ampere_sgemm_128x64_nn\",\"pid\":0,\"tid\":7,\"ts\":" #ts \
    ",\"dur\":" #dur ",\"args\":{\"device\":0,\"stream\":7,\"correlation\":" #corr "}},\n"
    static const char text[] =
        "{\"traceEvents\":[\n"
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":1,\"tid\":1,\"ts\":0,"
        "\"dur\":200},\n" KW_LAUNCH(10, 2, 1) KW_LAUNCH(14, 2, 2) KW_LAUNCH(16, 2, 5) KW_LAUNCH(60, 2, 3)
        KW_LAUNCH(78, 5, 4) KW_KERNEL(20, 20, 1) KW_KERNEL(45, 10, 2) KW_KERNEL(70, 10, 3) KW_KERNEL(85, 10, 4)
        KW_KERNEL(160, 10, 5)
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::empty\",\"pid\":1,\"tid\":1,\"ts\":199,"
        "\"dur\":1}\n"
        "]}\n";
#undef KW_LAUNCH
#undef KW_KERNEL
    const char *path = tmp_path("kernel_wait.json");
    write_text(path, text, strlen(text));
    mb_run r;
    mb_err err = {0};
    assert_int_equal(mb_trace_read(path, &r, &err), MB_OK);
    NS_EQ(num(r.evidence, "steps.0.parts.gemm"), 60000);
    NS_EQ(num(r.evidence, "steps.0.parts.queued"), 5000);
    NS_EQ(num(r.evidence, "steps.0.parts.launch"), 11000);
    NS_EQ(num(r.evidence, "steps.0.parts.host"), 124000);
    const mb_stage *s = stage(&r, "kernel wait (GPU idle)");
    assert_non_null(s);
    assert_string_equal(s->device, "gpu");
    assert_string_equal(s->role, "overhead");
    assert_true(s->count == 1 && s->has_exposed);
    NS_EQ(s->seconds, 5000);
    NS_EQ(s->exposed_seconds, 5000);
    cJSON *why = path_get(r.evidence, "unattributed");
    why = cJSON_GetObjectItemCaseSensitive(why, "kernel wait (GPU idle)");
    assert_true(cJSON_IsString(why) && strstr(why->valuestring, "(1 gap, 5 µs each on average;"));
    s = stage(&r, "host code (GPU idle)");
    assert_non_null(s);
    NS_EQ(s->seconds, 124000);
    mb_run_free(&r);
}

static bool warned(const mb_run *r, const char *needle)
{
    for (int i = 0; i < r->n_warnings; i++)
        if (strstr(r->warnings[i], needle))
            return true;
    return false;
}

/* GPU work outside every step's window is in no stage, as in the step table
 * (TraceLens's H100 Qwen1.5 trace: 436 kernels launched before the active
 * step ran 14 ms into its trace; they read as "other compute: no launch
 * call joins them" and took exposed time from the step's own kernels). The
 * host runs ahead: ProfilerStep [100, 300) launches two elementwise kernels
 * (corr 11, 12) that run [600, 800) and [800, 1000) behind a GEMM [0, 300)
 * and an elementwise kernel [300, 600) launched before the trace (no launch
 * call), and a pinned copy [0, 50) of 1 MB: the step is [600, 1000) on
 * the GPU. In it: the two kernels and a pageable copy [700, 710) of 1000
 * bytes (hidden under a kernel). */
static void test_outside_steps(void **state)
{
    (void)state;
#define K(name, ts, dur, corr)                                                                    \
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"" name "\",\"pid\":0,\"tid\":7,\"ts\":" #ts \
    ",\"dur\":" #dur ",\"args\":{\"device\":0,\"stream\":7,\"correlation\":" #corr "}},\n"
#define L(ts, corr)                                                                              \
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":" #ts \
    ",\"dur\":5,\"args\":{\"correlation\":" #corr "}},\n"
    static const char text[] =
        "{\"traceEvents\":[\n"
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":1,\"tid\":1,"
        "\"ts\":100,\"dur\":200},\n"
        L(150, 11) L(200, 12)
        K("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", 0, 300, 1)
        K("void at::native::vectorized_elementwise_kernel<4>(int)", 300, 300, 2)
        K("void at::native::vectorized_elementwise_kernel<4>(int)", 600, 200, 11)
        K("void at::native::vectorized_elementwise_kernel<4>(int)", 800, 200, 12)
        "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoD (Pinned -> Device)\",\"pid\":0,"
        "\"tid\":9,\"ts\":0,\"dur\":50,\"args\":{\"device\":0,\"stream\":9,\"bytes\":1000000}},\n"
        "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoD (Pageable -> Device)\",\"pid\":0,"
        "\"tid\":9,\"ts\":700,\"dur\":10,\"args\":{\"device\":0,\"stream\":9,\"bytes\":1000}}\n"
        "]}\n";
#undef K
#undef L
    const char *path = tmp_path("outside_steps.json");
    write_text(path, text, strlen(text));
    mb_run r;
    mb_err err = {0};
    assert_int_equal(mb_trace_read(path, &r, &err), MB_OK);
    assert_string_equal(cJSON_GetStringValue(path_get(r.evidence, "step.timeline")), "gpu");
    NS_EQ(r.step_seconds, 400000);
    assert_null(stage(&r, "gemm"));
    assert_null(stage(&r, "copy h2d pinned"));
    const mb_stage *s = stage(&r, "other compute");
    assert_non_null(s);
    NS_EQ(s->seconds, 400000);
    assert_int_equal(s->count, 2);
    NS_EQ(s->exposed_seconds, 400000);
    s = stage(&r, "copy h2d pageable"); /* under a kernel: it yields to compute */
    assert_non_null(s);
    assert_int_equal(s->count, 1);
    assert_true(s->work == 1000);
    NS_EQ(s->exposed_seconds, 0);
    assert_true(warned(&r, "3 GPU events (650 µs of GPU time) ran outside every step's window"));
    mb_run_free(&r);
}

/* The seconds of a part of the step table ("step.parts"), -1 when absent. */
static double part_seconds(cJSON *ev, const char *id)
{
    cJSON *p;
    cJSON_ArrayForEach(p, path_get(ev, "step.parts"))
    {
        const char *pid = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, "id"));
        if (pid && strcmp(pid, id) == 0)
            return num(p, "seconds");
    }
    return -1;
}

/* Allocation and set-up calls are no launch's cost (particle_transformer's
 * A100 trace: one 1337-ms cudaLaunchKernel of 549 read "Host-overhead
 * (launch) bound, 94.9%", 2.45 ms a launch; the alexnet fixture's first call,
 * cudaDeviceGetStreamPriorityRange, 29.9 s). Known answers in us: a 15000
 * first call (no [runtime] name: set-up by its length), a 1000 cudaFree (by
 * name), a 20000 launch (set-up: 10 ms or more), launches of 5 and 7, a
 * 12000 cudaMemcpyAsync (a copy call, however long: not set-up); kernels of
 * 5 at 36001, 36016, 36028. The GPU idles [0, 36001): 36000 in set-up, 1 in
 * host code. The launch stage holds the two short launches. */
static void test_setup_calls(void **state)
{
    (void)state;
#define RT(name, ts, dur, corr)                                                                    \
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"" name "\",\"pid\":1,\"tid\":1,\"ts\":" #ts \
    ",\"dur\":" #dur ",\"args\":{\"correlation\":" #corr "}},\n"
#define K(ts, corr)                                                                                    \
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"elementwise_kernel\",\"pid\":0,\"tid\":7,\"ts\":" #ts \
    ",\"dur\":5,\"args\":{\"device\":0,\"stream\":7,\"correlation\":" #corr "}},\n"
    static const char text[] =
        "{\"traceEvents\":[\n"
        RT("cudaDeviceGetStreamPriorityRange", 0, 15000, 90) RT("cudaFree", 15000, 1000, 91)
        RT("cudaLaunchKernel", 16000, 20000, 1) RT("cudaLaunchKernel", 36010, 5, 2)
        RT("cudaLaunchKernel", 36020, 7, 3) RT("cudaMemcpyAsync", 36040, 12000, 92)
        K(36001, 1) K(36016, 2) K(36028, 3)
        "{\"ph\":\"i\",\"name\":\"end\",\"pid\":1,\"tid\":1,\"ts\":48040}\n"
        "]}\n";
    /* two steps of 1000, each with a cudaFree of 100 and a kernel of 5
     * launched at 500; a cudaMalloc before them, in no step */
    static const char steps[] =
        "{\"traceEvents\":[\n"
        RT("cudaMalloc", 0, 300, 80)
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":1,\"tid\":1,\"ts\":1000,"
        "\"dur\":1000},\n"
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#2\",\"pid\":1,\"tid\":1,\"ts\":2000,"
        "\"dur\":1000},\n"
        RT("cudaFree", 1100, 100, 81) RT("cudaLaunchKernel", 1500, 5, 1) K(1510, 1)
        RT("cudaFree", 2100, 100, 82) RT("cudaLaunchKernel", 2500, 5, 2) K(2510, 2)
        "{\"ph\":\"i\",\"name\":\"end\",\"pid\":1,\"tid\":1,\"ts\":3000}\n"
        "]}\n";
    /* A kernel's first launch of 100 us or more loads its module (an RTX
     * 3090's cold ResNet-50: 9 first launches of 0.12-8.8 ms read as a
     * launch-bound run): conv_a's first (2 ms) and gemm_b's (150 us) are
     * set-up; relu_c's first (80 us), conv_a's second (5 us) and third
     * (300 us: not its first) are launches. conv_a's later kernel comes first
     * in the file: the first is the earliest. */
#define KN(name, ts, corr)                                                                        \
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"" name "\",\"pid\":0,\"tid\":7,\"ts\":" #ts \
    ",\"dur\":5,\"args\":{\"device\":0,\"stream\":7,\"correlation\":" #corr "}},\n"
    static const char first[] =
        "{\"traceEvents\":[\n"
        RT("cudaLaunchKernel", 0, 2000, 1) RT("cudaLaunchKernel", 2010, 5, 2) RT("cudaLaunchKernel", 2020, 150, 3)
        RT("cudaLaunchKernel", 2180, 80, 4) RT("cudaLaunchKernel", 2270, 300, 5)
        KN("conv_a", 2016, 2) KN("conv_a", 2001, 1) KN("gemm_b", 2171, 3) KN("relu_c", 2261, 4)
        KN("conv_a", 2571, 5)
        "{\"ph\":\"i\",\"name\":\"end\",\"pid\":1,\"tid\":1,\"ts\":2600}\n"
        "]}\n";
    /* torch.compile compiling: "(dynamo_timed)" regions, nested, with a
     * kernel's first launch inside: set-up is their union, 1000 of the
     * 1100-us run; the table names the outermost region */
#define ANN(name, ts, dur)                                                                         \
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"" name "\",\"pid\":1,\"tid\":1,\"ts\":" #ts \
    ",\"dur\":" #dur "},\n"
    static const char compile[] =
        "{\"traceEvents\":[\n"
        ANN("_compile.compile_inner (dynamo_timed)", 0, 1000) ANN("compile_fx_inner (dynamo_timed)", 100, 500)
        RT("cudaLaunchKernel", 700, 200, 1) KN("conv_a", 1000, 1)
        RT("cudaLaunchKernel", 1010, 5, 2) KN("conv_a", 1020, 2)
        "{\"ph\":\"i\",\"name\":\"end\",\"pid\":1,\"tid\":1,\"ts\":1100}\n"
        "]}\n";
#undef RT
#undef K
#undef KN
#undef ANN
    const char *path = tmp_path("setup_calls.json");
    write_text(path, text, strlen(text));
    mb_run r;
    mb_err err = {0};
    assert_int_equal(mb_trace_read(path, &r, &err), MB_OK);
    NS_EQ(part_seconds(r.evidence, "setup"), 36000000);
    NS_EQ(part_seconds(r.evidence, "host"), 12014000); /* 1 before the first kernel, 5 + 1 between, 12007 after */
    NS_EQ(part_seconds(r.evidence, "launch"), 11000);
    const mb_stage *s = stage(&r, MB_SETUP_STAGE);
    assert_non_null(s);
    assert_int_equal(s->count, 3);
    NS_EQ(s->seconds, 36000000);
    NS_EQ(mb_stage_exposed(s), 36000000);
    assert_string_equal(s->role, "overhead");
    NS_EQ(num(r.evidence, "host.setup.calls.cudaLaunchKernel.seconds"), 20000000);
    NS_EQ(num(r.evidence, "host.setup.calls.cudaDeviceGetStreamPriorityRange.seconds"), 15000000);
    NS_EQ(num(r.evidence, "host.setup.calls.cudaFree.seconds"), 1000000);
    s = stage(&r, "launch");
    assert_non_null(s);
    assert_int_equal(s->count, 2);
    assert_true(s->work == 2);
    NS_EQ(s->seconds, 12000);
    assert_true(num(r.evidence, "host.setup.count") == 3);
    assert_null(path_get(r.evidence, "host.setup.steps_with")); /* no steps */
    assert_null(path_get(r.evidence, "host.setup.calls.cudaMemcpyAsync"));
    assert_false(warned(&r, "launch calls took 10 ms or more"));
    mb_run_free(&r);

    path = tmp_path("setup_steps.json");
    write_text(path, steps, strlen(steps));
    assert_int_equal(mb_trace_read(path, &r, &err), MB_OK);
    assert_true(num(r.evidence, "host.setup.steps_with") == 2);
    s = stage(&r, MB_SETUP_STAGE);
    assert_non_null(s);
    assert_int_equal(s->count, 2); /* the cudaMalloc before the steps is in none */
    NS_EQ(part_seconds(r.evidence, "setup"), 100000); /* a mean step: 100 of its 1000 */
    mb_run_free(&r);

    path = tmp_path("setup_first.json");
    write_text(path, first, strlen(first));
    assert_int_equal(mb_trace_read(path, &r, &err), MB_OK);
    s = stage(&r, MB_SETUP_STAGE);
    assert_non_null(s);
    assert_int_equal(s->count, 2);
    NS_EQ(s->seconds, 2150000);
    NS_EQ(num(r.evidence, "host.setup.calls.a kernel's first launch.seconds"), 2150000);
    assert_true(num(r.evidence, "host.launch.long.count") == 2);
    s = stage(&r, "launch");
    assert_non_null(s);
    assert_int_equal(s->count, 3);
    NS_EQ(s->seconds, 385000);
    mb_run_free(&r);

    path = tmp_path("setup_compile.json");
    write_text(path, compile, strlen(compile));
    assert_int_equal(mb_trace_read(path, &r, &err), MB_OK);
    s = stage(&r, MB_SETUP_STAGE);
    assert_non_null(s);
    NS_EQ(s->seconds, 1000000);
    NS_EQ(part_seconds(r.evidence, "setup"), 1000000);
    const cJSON *calls = path_get(r.evidence, "host.setup.calls"); /* names with dots: by hand */
    const cJSON *outer = cJSON_GetObjectItemCaseSensitive(calls, "_compile.compile_inner (dynamo_timed)");
    assert_non_null(outer);
    NS_EQ(cJSON_GetObjectItemCaseSensitive(outer, "seconds")->valuedouble, 1000000);
    assert_null(cJSON_GetObjectItemCaseSensitive(calls, "compile_fx_inner (dynamo_timed)"));
    mb_run_free(&r);
}

/* The seconds of one named call in a host table ("host.setup.calls"); the
 * call must be there. */
static double call_seconds(const cJSON *calls, const char *name)
{
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(calls, name);
    assert_non_null(c);
    return cJSON_GetObjectItemCaseSensitive(c, "seconds")->valuedouble;
}

/* op events of one host thread, kernels of one stream: the first-call tests' */
#define OPX(name, ts, dur)                                                                     \
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"" name "\",\"pid\":1,\"tid\":1,\"ts\":" #ts \
    ",\"dur\":" #dur "},\n"
#define K(ts, corr)                                                                                    \
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"conv_k\",\"pid\":0,\"tid\":7,\"ts\":" #ts \
    ",\"dur\":50,\"args\":{\"device\":0,\"stream\":7,\"correlation\":" #corr "}},\n"

/* An op's first call of 1 ms or more and 20x its later calls' mean loads a
 * library or builds its kernels (a cold H200 ResNet-18: the first
 * aten::cudnn_convolution 141 ms, the others 3 ms, read as host code): its
 * interval is set-up, the outermost of nested ones named. conv2d's first
 * call (5000 us, its cudnn_convolution inside) against 100 us later; relu_'s
 * 1200 against 20. Not set-up: add_'s first 900 (under 1 ms), mul_'s 2000
 * against 200 (10x), addmm's one call. CUPTI's overhead records (the
 * profiler's buffers, module loading) are set-up too: 800 us. */
static void test_first_calls(void **state)
{
    (void)state;
#define RT(ts, corr)                                                                                  \
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":" #ts \
    ",\"dur\":5,\"args\":{\"correlation\":" #corr "}},\n"
    static const char text[] =
        "{\"traceEvents\":[\n"
        OPX("aten::conv2d", 0, 5000) OPX("aten::cudnn_convolution", 10, 4980) RT(4900, 1) K(5000, 1)
        OPX("aten::conv2d", 6000, 100) OPX("aten::cudnn_convolution", 6005, 90) RT(6050, 2) K(6100, 2)
        OPX("aten::conv2d", 7000, 100) OPX("aten::cudnn_convolution", 7005, 90) RT(7050, 3) K(7100, 3)
        OPX("aten::relu_", 8000, 1200) OPX("aten::relu_", 9500, 20) OPX("aten::relu_", 9600, 20)
        OPX("aten::add_", 9700, 900) OPX("aten::add_", 10700, 10) OPX("aten::add_", 10800, 10)
        OPX("aten::mul_", 10900, 2000) OPX("aten::mul_", 12000, 200) OPX("aten::mul_", 12300, 200)
        OPX("aten::addmm", 13000, 3000)
        "{\"ph\":\"X\",\"cat\":\"overhead\",\"name\":\"Activity Buffer Request\",\"pid\":-1,\"tid\":0,"
        "\"ts\":16500,\"dur\":800},\n"
        "{\"ph\":\"i\",\"name\":\"end\",\"pid\":1,\"tid\":1,\"ts\":17500}\n"
        "]}\n";
#undef RT
    const char *path = tmp_path("first_calls.json");
    write_text(path, text, strlen(text));
    mb_run r;
    mb_err err = {0};
    assert_int_equal(mb_trace_read(path, &r, &err), MB_OK);
    const mb_stage *s = stage(&r, MB_SETUP_STAGE);
    assert_non_null(s);
    assert_int_equal(s->count, 3);
    NS_EQ(s->seconds, 7000000);
    NS_EQ(part_seconds(r.evidence, "setup"), 7000000);
    const cJSON *calls = path_get(r.evidence, "host.setup.calls"); /* names with dots: by hand */
    NS_EQ(call_seconds(calls, "aten::conv2d (first call)"), 5000000);
    NS_EQ(call_seconds(calls, "aten::relu_ (first call)"), 1200000);
    NS_EQ(call_seconds(calls, "Activity Buffer Request"), 800000);
    assert_null(cJSON_GetObjectItemCaseSensitive(calls, "aten::cudnn_convolution (first call)"));
    assert_null(cJSON_GetObjectItemCaseSensitive(calls, "aten::add_ (first call)"));
    assert_null(cJSON_GetObjectItemCaseSensitive(calls, "aten::mul_ (first call)"));
    assert_null(cJSON_GetObjectItemCaseSensitive(calls, "aten::addmm (first call)"));
    /* what the set-up mostly was, in the stage's reason */
    const char *why = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(path_get(r.evidence, "unattributed"),
                                                                            MB_SETUP_STAGE));
    assert_non_null(why);
    assert_non_null(strstr(why, "here mostly aten::conv2d (first call): 5 ms of the 7 ms of such calls in the trace"));
    mb_run_free(&r);
}

/* A first call holding set-up calls already named is named for its own time
 * only: aten::to's first call (20.5 ms) holds the context's creation in
 * cudaDeviceGetStreamPriorityRange (20 ms), and a first aten::conv2d (15 ms)
 * a cudaFree (12 ms). Named: the runtime call 20 ms, cudaFree 12 ms,
 * conv2d's own 3 ms; not aten::to (0.5 ms of its own): 35 ms of set-up, no
 * call counted twice (the alexnet fixture listed 70.6 s in a 43.4 s run). */
static void test_first_calls_nested(void **state)
{
    (void)state;
#define RTX(name, ts, dur)                                                                          \
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"" name "\",\"pid\":1,\"tid\":1,\"ts\":" #ts \
    ",\"dur\":" #dur ",\"args\":{\"correlation\":0}},\n"
#define L(ts, corr)                                                                                   \
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":" #ts \
    ",\"dur\":5,\"args\":{\"correlation\":" #corr "}},\n"
    static const char text[] =
        "{\"traceEvents\":[\n"
        OPX("aten::to", 0, 20500) RTX("cudaDeviceGetStreamPriorityRange", 100, 20000)
        OPX("aten::to", 21000, 100) OPX("aten::to", 21200, 100)
        OPX("aten::conv2d", 22000, 15000) RTX("cudaFree", 23000, 12000) L(36900, 1) K(37000, 1)
        OPX("aten::conv2d", 38000, 100) L(38050, 2) K(38100, 2)
        OPX("aten::conv2d", 39000, 100) L(39050, 3) K(39100, 3)
        "{\"ph\":\"i\",\"name\":\"end\",\"pid\":1,\"tid\":1,\"ts\":40000}\n"
        "]}\n";
#undef RTX
#undef L
    const char *path = tmp_path("first_calls_nested.json");
    write_text(path, text, strlen(text));
    mb_run r;
    mb_err err = {0};
    assert_int_equal(mb_trace_read(path, &r, &err), MB_OK);
    const mb_stage *s = stage(&r, MB_SETUP_STAGE);
    assert_non_null(s);
    NS_EQ(s->seconds, 35500000); /* the two first calls' spans: aten::to's 20.5 ms, conv2d's 15 ms */
    const cJSON *calls = path_get(r.evidence, "host.setup.calls");
    NS_EQ(call_seconds(calls, "cudaDeviceGetStreamPriorityRange"), 20000000);
    NS_EQ(call_seconds(calls, "cudaFree"), 12000000);
    NS_EQ(call_seconds(calls, "aten::conv2d (first call)"), 3000000);
    assert_null(cJSON_GetObjectItemCaseSensitive(calls, "aten::to (first call)"));
    mb_run_free(&r);
}

/* A first call that waits on the GPU inside is no set-up: fbgemm's
 * permute_sparse_features took 9.8 ms at its first call in HTA's TorchRec
 * trace, 9.49 ms of it a blocking copy to the host. Here an op's first call
 * (10 ms, its later ones 0.1 ms) holds a 9.5-ms cudaMemcpy: no set-up; a
 * second op's first call (10 ms) holds nothing: set-up, 10 ms. */
static void test_first_call_waiting(void **state)
{
    (void)state;
#define CP(ts, dur)                                                                                        \
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaMemcpy\",\"pid\":1,\"tid\":1,\"ts\":" #ts \
    ",\"dur\":" #dur ",\"args\":{\"correlation\":9}},\n"
    static const char text[] =
        "{\"traceEvents\":[\n"
        OPX("fbgemm::permute_sparse_features", 0, 10000) CP(300, 9500) K(9700, 9)
        OPX("fbgemm::permute_sparse_features", 11000, 100) OPX("fbgemm::permute_sparse_features", 12000, 100)
        OPX("aten::relu_", 13000, 10000) OPX("aten::relu_", 24000, 100) OPX("aten::relu_", 25000, 100)
        "{\"ph\":\"i\",\"name\":\"end\",\"pid\":1,\"tid\":1,\"ts\":26000}\n"
        "]}\n";
#undef CP
    const char *path = tmp_path("first_call_waiting.json");
    write_text(path, text, strlen(text));
    mb_run r;
    mb_err err = {0};
    assert_int_equal(mb_trace_read(path, &r, &err), MB_OK);
    const cJSON *calls = path_get(r.evidence, "host.setup.calls");
    NS_EQ(call_seconds(calls, "aten::relu_ (first call)"), 10000000);
    assert_null(cJSON_GetObjectItemCaseSensitive(calls, "fbgemm::permute_sparse_features (first call)"));
    mb_run_free(&r);
}

#undef OPX
#undef K

/* A set-up that is mostly the profiler's own buffer request is said to be
 * a cost of profiling, not context creation "which a run's first
 * iterations pay" (an RTX 5060 Laptop's one forward: 2.72 ms, all of it
 * one Activity Buffer Request). */
static void test_profiler_buffers_setup(void **state)
{
    (void)state;
    static const char text[] =
        "{\"traceEvents\":[\n"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":0,"
        "\"dur\":5,\"args\":{\"correlation\":1}},\n"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":10,\"dur\":50,"
        "\"args\":{\"device\":0,\"stream\":7,\"correlation\":1}},\n"
        "{\"ph\":\"X\",\"cat\":\"overhead\",\"name\":\"Activity Buffer Request\",\"pid\":-1,\"tid\":0,"
        "\"ts\":100,\"dur\":2000},\n"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":2200,"
        "\"dur\":5,\"args\":{\"correlation\":2}},\n"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":2210,\"dur\":50,"
        "\"args\":{\"device\":0,\"stream\":7,\"correlation\":2}}\n"
        "]}\n";
    const char *path = tmp_path("profiler_buffers.json");
    write_text(path, text, strlen(text));
    mb_run r;
    mb_err err = {0};
    assert_int_equal(mb_trace_read(path, &r, &err), MB_OK);
    const char *why = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(path_get(r.evidence, "unattributed"),
                                                                            MB_SETUP_STAGE));
    assert_non_null(why);
    assert_non_null(strstr(why, "mostly the profiler's own buffers (Activity Buffer Request: 2 ms of the 2 ms of such "
                                "calls in the trace): a cost of profiling"));
    assert_null(strstr(why, "first iterations pay"));
    mb_run_free(&r);
}

/* The GPU idle while the host is in a collective's op goes to "in a
 * collective (host)", except where a set-up call inside it runs: a 2 ms
 * cudaMalloc inside c10d::allreduce_ is the allocator's (a 2.6 ms
 * allocation inside the 7th of a 2x A100 MoE's all-to-alls read as
 * communication once functional collectives were). An extension's op that
 * names a collective (_c10d_functional::all_reduce) is one too. */
static void test_setup_inside_collective(void **state)
{
    (void)state;
#define OPX(name, ts, dur)                                                                     \
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"" name "\",\"pid\":1,\"tid\":1,\"ts\":" #ts \
    ",\"dur\":" #dur "},\n"
#define RTC(name, ts, dur, corr)                                                                  \
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"" name "\",\"pid\":1,\"tid\":1,\"ts\":" #ts \
    ",\"dur\":" #dur ",\"args\":{\"correlation\":" #corr "}},\n"
#define K(name, ts, dur, corr)                                                                \
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"" name "\",\"pid\":0,\"tid\":7,\"ts\":" #ts \
    ",\"dur\":" #dur ",\"args\":{\"device\":0,\"stream\":7,\"correlation\":" #corr "}},\n"
    static const char text[] =
        "{\"traceEvents\":[\n"
        RTC("cudaLaunchKernel", 0, 5, 1) K("vectorized_elementwise_kernel", 10, 50, 1)
        OPX("c10d::allreduce_", 100, 3000) RTC("cudaMalloc", 200, 2000, 9)
        RTC("cudaLaunchKernel", 3000, 5, 2) K("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 3100, 100, 2)
        OPX("_c10d_functional::all_reduce", 4000, 500) RTC("cudaLaunchKernel", 4400, 5, 3)
        K("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 4500, 50, 3)
        "{\"ph\":\"i\",\"name\":\"end\",\"pid\":1,\"tid\":1,\"ts\":4550}\n"
        "]}\n";
#undef OPX
#undef RTC
#undef K
    const char *path = tmp_path("setup_in_collective.json");
    write_text(path, text, strlen(text));
    mb_run r;
    mb_err err = {0};
    assert_int_equal(mb_trace_read(path, &r, &err), MB_OK);
    NS_EQ(part_seconds(r.evidence, "setup"), 2000000);
    /* 100-200 and 2200-3100 in allreduce_, 4000-4500 in the functional one */
    NS_EQ(part_seconds(r.evidence, "host_collective"), 1500000);
    mb_run_free(&r);
}

/* TorchScript compiles a fusion group (NVRTC) on the call that first runs
 * it, recording nothing: 145 and 148 ms before an A100 particle
 * transformer's two fallback_function calls inside delta_r2, read as CPU
 * compute. A gap of 10 ms or more before a fusion call is set-up: 15000 us
 * from delta_r2's start to the first fallback_function, 13975 from the
 * launch's end to the second; the 400 us before fused_abc are not. */
static void test_torchscript_fuser(void **state)
{
    (void)state;
#define OPT(name, ts, dur)                                                                        \
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"" name "\",\"pid\":1,\"tid\":1,\"ts\":" #ts \
    ",\"dur\":" #dur "},\n"
    static const char text[] =
        "{\"traceEvents\":[\n"
        OPT("delta_r2", 0, 30000) OPT("fallback_function", 15000, 100)
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":15020,"
        "\"dur\":5,\"args\":{\"correlation\":1}},\n"
        OPT("fallback_function", 29000, 100) OPT("fused_abc", 29500, 50)
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"fused_abc\",\"pid\":0,\"tid\":7,\"ts\":15030,"
        "\"dur\":50,\"args\":{\"device\":0,\"stream\":7,\"correlation\":1}}\n"
        "]}\n";
#undef OPT
    const char *path = tmp_path("torchscript_fuser.json");
    write_text(path, text, strlen(text));
    mb_run r;
    mb_err err = {0};
    assert_int_equal(mb_trace_read(path, &r, &err), MB_OK);
    const mb_stage *s = stage(&r, MB_SETUP_STAGE);
    assert_non_null(s);
    assert_int_equal(s->count, 2);
    NS_EQ(s->seconds, 28975000);
    NS_EQ(num(r.evidence, "host.setup.calls.TorchScript fuser compiling.seconds"), 28975000);
    mb_run_free(&r);
}

/* ProfilerStep#N events that hold nothing and are far shorter than the time
 * between them are markers (the legacy profiler's export of a naive DDP
 * loop: 17-18 us each, 2.9 ms apart, read "17.5 us per step"): a step runs
 * from one to the next. Markers at 1000, 4000 and 7000 (20 us each), an
 * aten::mm of 2000 us after each: 2 steps of 3000 us, 2000 of each the
 * matmul's (4000 in the stage); the last marker's 2100 us are left out.
 * With an op inside the markers they are the steps (20 us, as recorded). */
static void test_marker_steps(void **state)
{
    (void)state;
#define EVA(name, ts, dur) "{\"ph\":\"X\",\"name\":\"" name "\",\"pid\":\"CPU functions\",\"tid\":1,\"ts\":" #ts ",\"dur\":" #dur "}"
    static const char markers[] =
        "[" EVA("ProfilerStep#2", 1000, 20) "," EVA("aten::mm", 1100, 2000) ","
        EVA("ProfilerStep#3", 4000, 20) "," EVA("aten::mm", 4100, 2000) ","
        EVA("ProfilerStep#4", 7000, 20) "," EVA("aten::mm", 7100, 2000) "]";
    static const char windows[] =
        "[" EVA("ProfilerStep#2", 1000, 20) "," EVA("aten::mm", 1005, 10) ","
        EVA("ProfilerStep#3", 4000, 20) "," EVA("aten::mm", 4005, 10) ","
        EVA("ProfilerStep#4", 7000, 20) "," EVA("aten::mm", 7005, 10) "]";
#undef EVA
    const char *path = tmp_path("marker_steps.json");
    write_text(path, markers, strlen(markers));
    mb_run r;
    mb_err err = {0};
    assert_int_equal(mb_trace_read(path, &r, &err), MB_OK);
    assert_int_equal((int)num(r.evidence, "step.steps"), 2);
    NS_EQ(num(r.evidence, "step.seconds"), 3000000);
    const mb_stage *s = stage(&r, "gemm (cpu)");
    assert_non_null(s);
    NS_EQ(s->seconds, 4000000); /* the two steps' */
    mb_run_free(&r);
    write_text(path, windows, strlen(windows));
    assert_int_equal(mb_trace_read(path, &r, &err), MB_OK);
    assert_int_equal((int)num(r.evidence, "step.steps"), 3);
    NS_EQ(num(r.evidence, "step.seconds"), 20000);
    mb_run_free(&r);
}

/* A trace of GPU activity and runtime calls without one CPU op (SE-ViT's
 * A4000 trace, 2022 schema: ProfilerActivity.CPU off) read its GEMM kernels
 * as "launched outside any matmul ... op (a library's or custom kernel)":
 * the reason is the missing ops, said once for the run and in the stage's
 * hint. With one op recorded, neither is said. */
static void test_no_cpu_ops(void **state)
{
    (void)state;
    static const char *const op[] = {"", "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::relu\",\"pid\":1,"
                                         "\"tid\":1,\"ts\":200,\"dur\":5,\"args\":{}},\n"};
    for (int i = 0; i < 2; i++) {
        char text[1024];
        snprintf(text, sizeof text,
                 "{\"traceEvents\":[\n%s"
                 "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":0,"
                 "\"dur\":5,\"args\":{\"correlation\":1}},\n"
                 "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ampere_sgemm_128x64_nn\",\"pid\":0,\"tid\":7,"
                 "\"ts\":10,\"dur\":100,\"args\":{\"device\":0,\"stream\":7,\"correlation\":1}}\n"
                 "]}\n",
                 op[i]);
        const char *path = tmp_path("no_cpu_ops.json");
        write_text(path, text, strlen(text));
        mb_run r;
        mb_err err = {0};
        assert_int_equal(mb_trace_read(path, &r, &err), MB_OK);
        const char *why = cJSON_GetStringValue(path_get(r.evidence, "unattributed.gemm"));
        assert_true(i == 1 || (why && strstr(why, "the trace records no CPU ops to launch them")));
        assert_true(i == 0 || (why && strstr(why, "launched outside any matmul")));
        assert_true(warned(&r, "the trace records no CPU ops (ProfilerActivity.CPU was off)") == (i == 0));
        mb_run_free(&r);
    }
}

/* One ProfilerStep#N from two processes: a merge of two ranks' traces (an
 * AMD 4-rank DDP merge read "12 steps" of 3). Said; two steps of one
 * process are not. */
static void test_merged_ranks(void **state)
{
    (void)state;
    static const int pid2[] = {20, 10};
    for (int i = 0; i < 2; i++) {
        char text[1024];
        snprintf(text, sizeof text,
                 "{\"traceEvents\":[\n"
                 "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":10,\"tid\":1,"
                 "\"ts\":0,\"dur\":100},\n"
                 "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#%d\",\"pid\":%d,\"tid\":1,"
                 "\"ts\":%d,\"dur\":100},\n"
                 "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"elementwise_kernel\",\"pid\":0,\"tid\":7,\"ts\":10,"
                 "\"dur\":50,\"args\":{\"device\":0,\"stream\":7}}\n"
                 "]}\n",
                 i == 0 ? 1 : 2, pid2[i], i == 0 ? 5 : 100);
        const char *path = tmp_path("merged_ranks.json");
        write_text(path, text, strlen(text));
        mb_run r;
        mb_err err = {0};
        assert_int_equal(mb_trace_read(path, &r, &err), MB_OK);
        assert_true(warned(&r, "the same ProfilerStep#N was recorded by 2 processes: the file merges several ranks' "
                               "traces; its 2 steps") == (i == 0));
        mb_run_free(&r);
    }
}

/* A trace without ProfilerStep#N has its steps cut at the optimizer's
 * (facebookresearch/param's linear_kineto, an RTX 2080 Ti from its first
 * iteration: 981 ms of a 2-s trace in one cudaFree read "CPU compute bound,
 * 76%" per run). Known answers in us: a 50 ms set-up (a cudaFree, a kernel at
 * 22000 launched by a 20-ms call), four Optimizer.step annotations ending at 51200, 61200, 71200 and
 * 81200 (one wrapping an inner one, counted once), each step's 5000-us kernel
 * launched 100 us after the step starts, an 8.8-ms tail: 3 steps of 10 ms,
 * the GPU busy half of each, the set-up and the tail left out and said. With
 * two annotations there is no step to cut. */
static void test_optimizer_steps(void **state)
{
    (void)state;
#define OPT(ts) "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"Optimizer.step#SGD.step\",\"pid\":1," \
                "\"tid\":1,\"ts\":" #ts ",\"dur\":200},\n"
#define STEP(ts, k, corr)                                                                                  \
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":" #ts \
    ",\"dur\":10,\"args\":{\"correlation\":" #corr "}},\n"                                                  \
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"elementwise_kernel\",\"pid\":0,\"tid\":7,\"ts\":" #k        \
    ",\"dur\":5000,\"args\":{\"device\":0,\"stream\":7,\"correlation\":" #corr "}},\n"
    static const char head[] =
        "{\"traceEvents\":[\n"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaFree\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":50000},\n"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":2000,"
        "\"dur\":20000,\"args\":{\"correlation\":9}},\n"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"elementwise_kernel\",\"pid\":0,\"tid\":7,\"ts\":22000,"
        "\"dur\":1000,\"args\":{\"device\":0,\"stream\":7,\"correlation\":9}},\n"
        OPT(51000) STEP(51300, 51310, 1) OPT(61000)
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"Optimizer.step#SGD.step\",\"pid\":1,\"tid\":1,"
        "\"ts\":61050,\"dur\":100},\n"
        STEP(61300, 61310, 2) OPT(71000) STEP(71300, 71310, 3);
    static const char tail[] =
        OPT(81000)
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::empty\",\"pid\":1,\"tid\":1,\"ts\":85000,\"dur\":5000}\n"
        "]}\n";
#undef OPT
#undef STEP
    char text[4096];
    snprintf(text, sizeof text, "%s%s", head, tail);
    const char *path = tmp_path("optimizer_steps.json");
    write_text(path, text, strlen(text));
    mb_run r;
    mb_err err = {0};
    assert_int_equal(mb_trace_read(path, &r, &err), MB_OK);
    assert_int_equal(r.steps, 3);
    NS_EQ(r.step_seconds, 10000000);
    assert_string_equal(cJSON_GetStringValue(path_get(r.evidence, "step.window")), "Optimizer.step");
    assert_true(fabs(num(r.evidence, "step.gpu_busy_share") - 0.5) < 1e-9);
    assert_true(warned(&r, "the steps are cut at the host's 4 Optimizer.step annotations, each from the end of one "
                           "optimizer step to the end of the next; the 51.2 ms before the first (set-up: the CUDA "
                           "context, each kernel's first launch, the first batch) and the 8.8 ms after the last are "
                           "left out"));
    /* the host's calls as its kernels: the set-up's 20-ms first launch is no step's (it read "98.2 us/launch") */
    const mb_stage *launch = stage(&r, "launch");
    assert_non_null(launch);
    assert_int_equal(launch->count, 3);
    NS_EQ(launch->seconds, 30000);
    assert_false(warned(&r, "took 10 ms or more"));
    assert_false(warned(&r, "DataLoader batches for"));
    mb_run_free(&r);

    /* a batch per two optimizer steps (a GAN's two optimizers): a step is one optimizer step, and said */
#define DL(ts)                                                                                       \
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"enumerate(DataLoader)#_SingleProcessDataLoader" \
    "Iter.__next__\",\"pid\":1,\"tid\":1,\"ts\":" #ts ",\"dur\":50},\n"
    snprintf(text, sizeof text, "%s%s%s%s", head, DL(60000), DL(80000), tail);
#undef DL
    write_text(path, text, strlen(text));
    assert_int_equal(mb_trace_read(path, &r, &err), MB_OK);
    assert_int_equal(r.steps, 3);
    assert_true(warned(&r, "to the end of the next (2 DataLoader batches for 4 optimizer steps: a step here is one "
                           "optimizer step, not one batch); the 51.2 ms before the first (set-up: the CUDA context"));
    mb_run_free(&r);

    /* two: one step would be all there is, and no step to tell it by */
    const char *two = strstr(head, "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"Optimizer.step#SGD.step\","
                                   "\"pid\":1,\"tid\":1,\"ts\":61000");
    assert_non_null(two);
    snprintf(text, sizeof text, "%.*s%s", (int)(two - head), head, tail);
    write_text(path, text, strlen(text));
    assert_int_equal(mb_trace_read(path, &r, &err), MB_OK);
    assert_int_equal(r.steps, 0);
    assert_true(warned(&r, "no ProfilerStep#N annotations: no per-step figures or step time"));
    mb_run_free(&r);
}

/* A loop without ProfilerSteps or torch.optim (weights updated by hand)
 * that wraps each iteration in record_function("train_step"): its steps run
 * from the start of one to the start of the next. Any mark once an
 * iteration gives the same period ("forward" alone); a mark recurring
 * within an iteration (a layer's) cuts no steps; of two regular marks, the
 * rarer is the iteration (two micro-batches a step); marks that hold less
 * than half the GPU's work mark no loop; the optimizer's annotations come
 * first. */
static void test_annotation_steps(void **state)
{
    (void)state;
#define ANN(name, ts, dur) "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"" name "\",\"pid\":1,\"tid\":1," \
                           "\"ts\":" #ts ",\"dur\":" #dur "},\n"
#define WORK(ts, k, corr)                                                                                 \
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":" #ts \
    ",\"dur\":10,\"args\":{\"correlation\":" #corr "}},\n"                                                 \
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"elementwise_kernel\",\"pid\":0,\"tid\":7,\"ts\":" #k      \
    ",\"dur\":2000,\"args\":{\"device\":0,\"stream\":7,\"correlation\":" #corr "}},\n"
#define ITER(ts, fwd, k, corr) ANN("train_step", ts, 8000) ANN("forward", fwd, 3000) WORK(fwd, k, corr)
#define LAYERS(a, b, c) ANN("layer", a, 800) ANN("layer", b, 800) ANN("layer", c, 800)
    static const char start[] =
        "{\"traceEvents\":[\n"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaFree\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":10000},\n";
    static const char loop[] = ITER(20000, 21000, 21005, 1) ITER(30000, 31000, 31005, 2)
        ITER(40000, 41000, 41005, 3) ITER(50000, 51000, 51005, 4);
    static const char forward[] = ANN("forward", 21000, 3000) ANN("forward", 31000, 3000)
        ANN("forward", 41000, 3000) ANN("forward", 51000, 3000);
    static const char layers[] = LAYERS(21000, 22000, 23000) LAYERS(31000, 32000, 33000)
        LAYERS(41000, 42000, 43000) LAYERS(51000, 52000, 53000);
    static const char micro[] = ANN("micro_step", 20000, 3000) ANN("micro_step", 25000, 3000)
        ANN("micro_step", 30000, 3000) ANN("micro_step", 35000, 3000) ANN("micro_step", 40000, 3000)
        ANN("micro_step", 45000, 3000) ANN("micro_step", 50000, 3000) ANN("micro_step", 55000, 3000);
    static const char optimizer[] = ANN("Optimizer.step#SGD.step", 26000, 100) ANN("Optimizer.step#SGD.step", 36000, 100)
        ANN("Optimizer.step#SGD.step", 46000, 100) ANN("Optimizer.step#SGD.step", 56000, 100);
    static const char end[] =
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::empty\",\"pid\":1,\"tid\":1,\"ts\":65000,\"dur\":1000}\n"
        "]}\n";
    /* 12 ms of GPU work before the marks, 6 ms between them: the marks recur within one iteration (a policy's
       denoising calls after its prefix), not a loop's */
    static const char prefix[] =
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":11000,"
        "\"dur\":10,\"args\":{\"correlation\":9}},\n"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm_kernel\",\"pid\":0,\"tid\":7,\"ts\":11005,"
        "\"dur\":12000,\"args\":{\"device\":0,\"stream\":7,\"correlation\":9}},\n";
#undef LAYERS
#undef ITER
#undef WORK
#undef ANN
    char text[16384];
    snprintf(text, sizeof text, "%s%s%s%s", start, loop, micro, end);
    const char *path = tmp_path("annotation_steps.json");
    write_text(path, text, strlen(text));
    mb_run r;
    mb_err err = {0};
    assert_int_equal(mb_trace_read(path, &r, &err), MB_OK);
    assert_int_equal(r.steps, 3);
    NS_EQ(r.step_seconds, 10000000);
    assert_string_equal(cJSON_GetStringValue(path_get(r.evidence, "step.window")), "train_step");
    assert_true(fabs(num(r.evidence, "step.gpu_busy_share") - 0.2) < 1e-9);
    assert_true(warned(&r, "the steps are cut at the 4 'train_step' annotations, each from the start of one to the "
                           "start of the next (an iteration with what runs between them); the 20 ms before the first "
                           "and the 16 ms from the last one's start on are left out"));
    const mb_stage *launch = stage(&r, "launch");
    assert_non_null(launch);
    assert_int_equal(launch->count, 3);
    mb_run_free(&r);

    snprintf(text, sizeof text, "%s%s%s", start, forward, end);
    write_text(path, text, strlen(text));
    assert_int_equal(mb_trace_read(path, &r, &err), MB_OK);
    assert_int_equal(r.steps, 3);
    NS_EQ(r.step_seconds, 10000000);
    assert_string_equal(cJSON_GetStringValue(path_get(r.evidence, "step.window")), "forward");
    mb_run_free(&r);

    snprintf(text, sizeof text, "%s%s%s", start, layers, end);
    write_text(path, text, strlen(text));
    assert_int_equal(mb_trace_read(path, &r, &err), MB_OK);
    assert_int_equal(r.steps, 0);
    assert_string_equal(cJSON_GetStringValue(path_get(r.evidence, "step.window")), "trace");
    assert_true(warned(&r, "no ProfilerStep#N annotations: no per-step figures or step time"));
    mb_run_free(&r);

    snprintf(text, sizeof text, "%s%s%s%s", start, prefix, loop, end);
    write_text(path, text, strlen(text));
    assert_int_equal(mb_trace_read(path, &r, &err), MB_OK);
    assert_int_equal(r.steps, 0);
    mb_run_free(&r);

    snprintf(text, sizeof text, "%s%s%s%s", start, loop, optimizer, end);
    write_text(path, text, strlen(text));
    assert_int_equal(mb_trace_read(path, &r, &err), MB_OK);
    assert_int_equal(r.steps, 3);
    assert_string_equal(cJSON_GetStringValue(path_get(r.evidence, "step.window")), "Optimizer.step");
    mb_run_free(&r);
}

/* A gemm stage whose FLOPs are unknown for four causes (outside any op,
 * no launch call, a CUDA graph's replay, an op without shapes): the hint
 * holds the causes that fit whole, then "and other causes"; the old one
 * was cut mid-word at its buffer's end ("(no cuda_runtime event wit"). */
static void test_reasons_whole(void **state)
{
    (void)state;
    char path[600];
    snprintf(path, sizeof path, "%s/tests/data/trace_many_causes.json", MB_TEST_SRC);
    mb_run r;
    mb_err err = {0};
    assert_int_equal(mb_trace_read(path, &r, &err), MB_OK);
    const char *why = cJSON_GetStringValue(path_get(r.evidence, "unattributed.gemm"));
    assert_non_null(why);
    assert_true(strncmp(why, "FLOPs unknown: launched outside any matmul", 42) == 0);
    assert_non_null(strstr(why, "correlation id) (27% of its time); replayed from a CUDA graph"));
    assert_non_null(strstr(why, "for their FLOPs (27% of its time); and other causes"));
    size_t n = strlen(why);
    assert_true(n > 18 && strcmp(why + n - 18, "; and other causes") == 0);
    mb_run_free(&r);
}

/* Kineto of torch 1.8-1.9 (kineto's tb_plugin samples: a ResNet-50 on a
 * V100) writes ProfilerStep#N and enumerate(DataLoader)# under "Operator",
 * as it writes the ops, and "Kernel"/"Runtime" for the GPU side. Two steps
 * of 100 us, each waiting 40 us for its batch in the training process
 * (_SingleProcessDataLoaderIter), then 40 us of a kernel. The old reader
 * saw one 200 us window and the waits as "other host code". A forward
 * cudnn_convolution of those traces records shapes but no Concrete Inputs:
 * its reason says so whole (it was cut to "(Concrete"). */
static void test_operator_annotations(void **state)
{
    (void)state;
#define OLD(name, ts, dur, args)                                                                    \
    "{\"ph\":\"X\",\"cat\":\"Operator\",\"name\":\"" name "\",\"pid\":1,\"tid\":1,\"ts\":" #ts    \
    ",\"dur\":" #dur ",\"args\":{" args "}},\n"
#define OLD_LAUNCH(ts, corr)                                                                        \
    "{\"ph\":\"X\",\"cat\":\"Runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":" #ts \
    ",\"dur\":2,\"args\":{\"correlation\":" #corr "}},\n"
#define OLD_KERNEL(name, ts, corr)                                                                  \
    "{\"ph\":\"X\",\"cat\":\"Kernel\",\"name\":\"" name "\",\"pid\":0,\"tid\":\"stream 7\",\"ts\":" #ts \
    ",\"dur\":40,\"args\":{\"device\":0,\"stream\":7,\"correlation\":" #corr "}}"
    static const char text[] =
        "{\"traceEvents\":[\n"
        OLD("ProfilerStep#1", 1000, 100, "") OLD("ProfilerStep#2", 1100, 100, "")
        OLD("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 1002, 40, "")
        OLD("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 1102, 40, "")
        OLD("aten::cudnn_convolution", 1050, 10,
            "\"Input Dims\":[[2,3,8,8],[4,3,3,3],[],[],[],[],[],[],[]],"
            "\"Input type\":[\"float\",\"float\",\"GenericList\",\"GenericList\",\"GenericList\",\"Int\","
            "\"Bool\",\"Bool\",\"Bool\"]")
        OLD_LAUNCH(1052, 1)
        OLD("aten::cudnn_convolution", 1150, 10,
            "\"Input Dims\":[[2,3,8,8],[4,3,3,3],[],[],[],[],[],[],[]],"
            "\"Input type\":[\"float\",\"float\",\"GenericList\",\"GenericList\",\"GenericList\",\"Int\","
            "\"Bool\",\"Bool\",\"Bool\"]")
        OLD_LAUNCH(1152, 2)
        OLD_KERNEL("volta_scudnn_128x64_relu_interior_nn_v1", 1055, 1) ",\n"
        OLD_KERNEL("volta_scudnn_128x64_relu_interior_nn_v1", 1155, 2) "\n]}\n";
#undef OLD
#undef OLD_LAUNCH
#undef OLD_KERNEL
    const char *path = tmp_path("operator_annotations.json");
    write_text(path, text, strlen(text));
    mb_run r;
    mb_err err = {0};
    assert_int_equal(mb_trace_read(path, &r, &err), MB_OK);
    cJSON *ev = r.evidence;
    assert_int_equal((int)num(ev, "step.steps"), 2);
    double data = -1, host = 0;
    cJSON *p;
    cJSON_ArrayForEach(p, path_get(ev, "step.parts"))
    {
        const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, "id"));
        if (id && strcmp(id, "data") == 0)
            data = num(p, "share");
        if (id && strcmp(id, "host") == 0)
            host = num(p, "share");
    }
    assert_true(fabs(data - 0.40) < 1e-9); /* 2 x 40 us of 200 */
    assert_true(host < 0.2);
    const mb_stage *s = stage(&r, "dataloading");
    assert_non_null(s);
    NS_EQ(s->seconds, 80000); /* both waits */
    const char *why = cJSON_GetStringValue(path_get(ev, "unattributed.conv"));
    assert_non_null(why);
    assert_non_null(strstr(why, "aten::cudnn_convolution: convolution stride/padding not recorded (Concrete Inputs)"));
    mb_run_free(&r);
}

/* ---- FLOP attribution ------------------------------------------------------------ */

#define OP(name, tid, ts, dur, args)                                                               \
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"" name "\",\"pid\":1,\"tid\":" #tid ",\"ts\":" #ts \
    ",\"dur\":" #dur ",\"args\":{" args "}},\n"
#define LAUNCH(tid, ts, corr)                                                                     \
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":" #tid \
    ",\"ts\":" #ts ",\"dur\":1,\"args\":{\"correlation\":" #corr "}},\n"
#define KERNEL(name, ts, dur, corr)                                                                \
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"" name "\",\"pid\":0,\"tid\":7,\"ts\":" #ts         \
    ",\"dur\":" #dur ",\"args\":{\"device\":0,\"stream\":7,\"correlation\":" #corr "}}"

static void test_flop_attribution(void **state)
{
    (void)state;
    /* matmul [0,100] -> bmm [10,90]: the leaf bmm gets the GEMM; the copy
     * launched directly under matmul is not matmul's work.
     * bmm 2x(64x32 @ 32x16): 2*2*64*16*32 = 131072 (bf16, 8 us)
     * addmm on thread 2, (8x32 @ 32x16): 2*8*16*32 = 8192 (bf16, 2 us)
     * convolution N2 C3 8x8, K4 3x3, stride 1 pad 1 -> 8x8:
     *   2*2*4*3*9*64 = 27648 (fp32; its conv kernel 4 us + a helper 1 us)
     * convolution_backward, grads for input and weight: 2*27648 (6 us)
     * mm without shapes: its kernel stays "gemm (unattributed)" (3 us). */
    const char *text =
        "{\"traceEvents\":[\n"
        KERNEL("ampere_bf16_s16816gemm_bf16_128x64", 1020, 8, 11) ",\n"
        OP("aten::matmul", 1, 0, 100, "\"Input Dims\":[[2,64,32],[32,16]],"
           "\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\"]")
        LAUNCH(1, 5, 10)
        OP("aten::bmm", 1, 10, 80, "\"Input Dims\":[[2,64,32],[2,32,16]],"
           "\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\"]")
        LAUNCH(1, 20, 11)
        OP("aten::addmm", 2, 200, 100, "\"Input Dims\":[[16],[8,32],[32,16],[],[]],"
           "\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\",\"Scalar\"]")
        LAUNCH(2, 210, 12)
        OP("aten::convolution", 1, 400, 100, "\"Input Dims\":[[2,3,8,8],[4,3,3,3],[4]],"
           "\"Input type\":[\"float\",\"float\",\"float\"],"
           "\"Concrete Inputs\":[\"\",\"\",\"\",\"[1, 1]\",\"[1, 1]\",\"[1, 1]\",\"False\",\"[0, 0]\",\"1\"]")
        LAUNCH(1, 410, 13)
        LAUNCH(1, 420, 14)
        OP("aten::convolution_backward", 1, 600, 100,
           "\"Input Dims\":[[2,4,8,8],[2,3,8,8],[4,3,3,3],[],[],[],[],[],[],[],[]],"
           "\"Input type\":[\"float\",\"float\",\"float\"],"
           "\"Concrete Inputs\":[\"\",\"\",\"\",\"[4]\",\"[1, 1]\",\"[1, 1]\",\"[1, 1]\",\"False\","
           "\"[0, 0]\",\"1\",\"[True, True, False]\"]")
        LAUNCH(1, 610, 15)
        OP("aten::mm", 1, 800, 100, "\"External id\":5")
        LAUNCH(1, 810, 16) KERNEL("void at::native::unrolled_elementwise_kernel<copy>", 1010, 1, 10)
        ",\n" KERNEL("ampere_bf16_s16816gemm_bf16_64x64", 1220, 2, 12) ",\n"
        KERNEL("sm80_xmma_fprop_implicit_gemm_f32", 1420, 4, 13) ",\n"
        KERNEL("void at::native::vectorized_elementwise_kernel<4>", 1430, 1, 14) ",\n"
        KERNEL("sm80_xmma_dgrad_implicit_gemm_f32", 1620, 6, 15) ",\n"
        KERNEL("volta_sgemm_128x64_nn", 1820, 3, 16) "\n]}\n";
    const char *path = tmp_path("flops.json");
    write_text(path, text, strlen(text));
    mb_run r;
    mb_err err = {0};
    assert_int_equal(mb_trace_read(path, &r, &err), MB_OK);
    const mb_stage *s = stage(&r, "gemm");
    assert_non_null(s);
    assert_string_equal(s->work_unit, "flop");
    assert_string_equal(s->dtype, "bf16");
    assert_true(s->work == 131072 + 8192);
    assert_int_equal(s->count, 2);
    NS_EQ(s->seconds, 10000);
    s = stage(&r, "conv");
    assert_non_null(s);
    assert_string_equal(s->dtype, "fp32");
    assert_true(s->work == 27648 * 3);
    assert_int_equal(s->count, 3);
    NS_EQ(s->seconds, 11000);
    s = stage(&r, "gemm (unattributed)");
    assert_non_null(s);
    assert_string_equal(s->work_unit, "s");
    assert_int_equal(s->count, 1);
    NS_EQ(s->seconds, 3000);
    s = stage(&r, "other compute"); /* the copy under matmul only */
    assert_non_null(s);
    assert_int_equal(s->count, 1);
    NS_EQ(s->seconds, 1000);
    assert_null(stage(&r, "conv (unattributed)"));
    cJSON *ev = r.evidence;
    assert_true(fabs(num(ev, "rates.gemm.0.tflops") - 139264.0 / 10e-6 / 1e12) < 1e-12);
    assert_int_equal((int)num(ev, "rates.ops_without_shapes.gemm"), 1);
    mb_run_free(&r);
}

/* A matmul on a sparse operand (torch.spmm; pytorch/examples' gcn) records the
 * operand's dense shape: [2708, 2708] @ [2708, 16] read 235 MFLOP for a graph of
 * 8128 stored entries. Torch 1.13 runs it as aten::mm > aten::_sparse_addmm >
 * aten::addmm > aten::sparse_dim; its kernel keeps its time with the reason,
 * and the dense mm beside it keeps its FLOPs (2*64*16*32 = 65536, 4 us). */
static void test_sparse_matmul(void **state)
{
    (void)state;
    const char *adj = "\"Input Dims\":[[2708,2708],[2708,16]],\"Input type\":[\"float\",\"float\"]";
    const char *inner = "\"Input Dims\":[[2708,16],[2708,2708],[2708,16],[],[]],"
                        "\"Input type\":[\"float\",\"float\",\"float\",\"Scalar\",\"Scalar\"]";
    char text[4096];
    snprintf(text, sizeof text,
             "{\"traceEvents\":[\n"
             OP("aten::mm", 1, 0, 50, "\"Input Dims\":[[64,32],[32,16]],\"Input type\":[\"float\",\"float\"]")
             LAUNCH(1, 10, 21)
             OP("aten::mm", 1, 100, 100, "%s")
             OP("aten::_sparse_addmm", 1, 105, 90, "%s")
             OP("aten::addmm", 1, 110, 80, "%s")
             OP("aten::sparse_dim", 1, 115, 1, "\"Input Dims\":[[2708,2708]],\"Input type\":[\"float\"]")
             LAUNCH(1, 120, 22)
             KERNEL("volta_sgemm_64x32_sliced1x4_nn", 1010, 4, 21) ",\n"
             KERNEL("void cusparse::csrmm_v2_kernel<float>", 1110, 9, 22) "\n]}\n",
             adj, inner, inner);
    const char *path = tmp_path("sparse.json");
    write_text(path, text, strlen(text));
    mb_run r;
    mb_err err = {0};
    assert_int_equal(mb_trace_read(path, &r, &err), MB_OK);
    const mb_stage *s = stage(&r, "gemm");
    assert_non_null(s);
    assert_true(s->work == 2.0 * 64 * 16 * 32);
    assert_int_equal(s->count, 1);
    NS_EQ(s->seconds, 4000);
    bool said = false;
    for (cJSON *u = path_get(r.evidence, "unattributed")->child; u; u = u->next)
        said = said || strstr(cJSON_GetStringValue(u), "launched by sparse matmuls (torch.spmm, torch.mm on a sparse "
                                                        "tensor)") != NULL;
    assert_true(said);
    assert_int_equal((int)num(r.evidence, "rates.ops_without_shapes.gemm"), 0);
    mb_run_free(&r);
}

static void test_op_flops(void **state)
{
    (void)state;
    tr_shapes sh = {0};
    double f;
    const char *why;
    /* linear: input [4,10,32], weight [16,32] -> 2*40*16*32 */
    sh.n_tensors = 2;
    sh.rank[0] = 3;
    memcpy(sh.dims[0], (int64_t[]){4, 10, 32}, 3 * sizeof(int64_t));
    sh.rank[1] = 2;
    memcpy(sh.dims[1], (int64_t[]){16, 32}, 2 * sizeof(int64_t));
    assert_true(mb_tr_op_flops("aten::linear", &sh, &f, &why));
    assert_true(f == 40960);
    /* matmul broadcast: [3,1,5,6] @ [4,6,7] -> batch 3x4, 2*12*5*7*6 */
    sh.rank[0] = 4;
    memcpy(sh.dims[0], (int64_t[]){3, 1, 5, 6}, 4 * sizeof(int64_t));
    sh.rank[1] = 3;
    memcpy(sh.dims[1], (int64_t[]){4, 6, 7}, 3 * sizeof(int64_t));
    assert_true(mb_tr_op_flops("aten::matmul", &sh, &f, &why));
    assert_true(f == 5040);
    /* mismatched inner dims are refused */
    sh.dims[1][1] = 5;
    assert_false(mb_tr_op_flops("aten::matmul", &sh, &f, &why));
    /* ResNet-50 conv1 through cudnn_convolution(self, weight, padding,
     * stride, dilation, groups): 236027904 (tests/test_formulas.c). */
    memset(&sh, 0, sizeof sh);
    sh.n_tensors = 2;
    sh.rank[0] = sh.rank[1] = 4;
    memcpy(sh.dims[0], (int64_t[]){1, 3, 224, 224}, 4 * sizeof(int64_t));
    memcpy(sh.dims[1], (int64_t[]){64, 3, 7, 7}, 4 * sizeof(int64_t));
    assert_false(mb_tr_op_flops("aten::cudnn_convolution", &sh, &f, &why));
    assert_non_null(strstr(why, "stride/padding"));
    sh.n_concrete = 6;
    strcpy(sh.concrete[2], "[3, 3]");
    strcpy(sh.concrete[3], "[2, 2]");
    strcpy(sh.concrete[4], "[1, 1]");
    strcpy(sh.concrete[5], "1");
    assert_true(mb_tr_op_flops("aten::cudnn_convolution", &sh, &f, &why));
    assert_true(f == 236027904.0);
    /* no shapes at all */
    memset(&sh, 0, sizeof sh);
    assert_false(mb_tr_op_flops("aten::mm", &sh, &f, &why));
    assert_non_null(strstr(why, "Input Dims"));
    /* torch.compile's Triton template matmuls: operands, epilogue inputs
     * and the output in the template's order; addmm's bias [16] first:
     * A [8,32] @ B [32,16] -> 2*8*16*32 */
    memset(&sh, 0, sizeof sh);
    sh.n_tensors = 5;
    sh.rank[0] = 1;
    sh.dims[0][0] = 16;
    sh.rank[1] = sh.rank[2] = sh.rank[3] = 2;
    memcpy(sh.dims[1], (int64_t[]){8, 32}, 2 * sizeof(int64_t));
    memcpy(sh.dims[2], (int64_t[]){32, 16}, 2 * sizeof(int64_t));
    memcpy(sh.dims[3], (int64_t[]){8, 16}, 2 * sizeof(int64_t)); /* the output */
    sh.rank[4] = 0;                                              /* a count (Scalar) */
    assert_int_equal(mb_tr_op_kind("triton_tem_fused_addmm_relu_3"), TR_OP_GEMM);
    assert_true(mb_tr_op_flops("triton_tem_fused_addmm_relu_3", &sh, &f, &why));
    assert_true(f == 8192);
    /* no argument of the product's shape: not a matmul it can read */
    sh.dims[3][1] = 17;
    assert_false(mb_tr_op_flops("triton_tem_fused_addmm_relu_3", &sh, &f, &why));
    /* bmm: [4,8,32] @ [4,32,16] -> [4,8,16]: 4 * 2*8*16*32 */
    memset(&sh, 0, sizeof sh);
    sh.n_tensors = 3;
    sh.rank[0] = sh.rank[1] = sh.rank[2] = 3;
    memcpy(sh.dims[0], (int64_t[]){4, 8, 32}, 3 * sizeof(int64_t));
    memcpy(sh.dims[1], (int64_t[]){4, 32, 16}, 3 * sizeof(int64_t));
    memcpy(sh.dims[2], (int64_t[]){4, 8, 16}, 3 * sizeof(int64_t));
    assert_true(mb_tr_op_flops("triton_tem_fused_bmm_1", &sh, &f, &why));
    assert_true(f == 32768);
    assert_int_equal(mb_tr_op_kind("triton_tem_fused_convolution_1"), TR_OP_NONE);
    assert_int_equal(mb_tr_op_kind("triton_tem_fused_mm_plus_mm_2"), TR_OP_NONE); /* two products: not one's FLOPs */
    assert_int_equal(mb_tr_op_kind("triton_poi_fused_mm_0"), TR_OP_NONE);
    assert_int_equal(mb_tr_op_kind("aten::relu"), TR_OP_NONE);
    assert_string_equal(mb_tr_dtype_of_torch("c10::Half"), "fp16");
}

static void test_memory_attribution(void **state)
{
    (void)state;
    /* Bytes by hand (trace_bytes.c: tensor inputs read once + one output the
     * size of the largest input for "out" ops):
     *   add [1024,256] + [1024,256] fp32: 2 x 1048576 + 1048576 = 3145728 (10 us)
     *   relu_ [1024,256] bf16, in place: 524288 (2 us)
     *   batch_norm -> cudnn_batch_norm [8,64,32,32] fp32 + 4 x [64] fp32:
     *     2097152 + 1024 + output 2097152 = 4195328, the leaf's only (5 us)
     *   _foreach_mul_ ([[10],[6]], 0-d fp32), its list updated in place:
 *     16 x 4 + 4 read + 16 x 4 written = 132 (1 us)
     *   addmm launching a bias copy_ ([8,16] <- [16] fp32, in place):
     *     512 + 64 = 576 (1 us); the GEMM kernel stays addmm's (2 us)
     *   _foreach_add_ (lists only: no element type) - its kernel in the
     *     time-only "memory-bound ops (bytes unknown)" stage (1 us)
     * Shaped: 7866052 bytes in 19 us of the 20 us of memory-bound kernels. */
    const char *text =
        "{\"traceEvents\":[\n"
        OP("aten::add", 1, 0, 50, "\"Input Dims\":[[1024,256],[1024,256],[]],"
           "\"Input type\":[\"float\",\"float\",\"Scalar\"]")
        LAUNCH(1, 5, 21)
        OP("aten::relu_", 1, 100, 50, "\"Input Dims\":[[1024,256]],\"Input type\":[\"c10::BFloat16\"]")
        LAUNCH(1, 105, 22)
        OP("aten::batch_norm", 1, 200, 80, "\"Input Dims\":[[8,64,32,32],[64],[64],[64],[64],[],[],[],[]],"
           "\"Input type\":[\"float\",\"float\",\"float\",\"float\",\"float\",\"Scalar\",\"Scalar\",\"Scalar\",\"Scalar\"]")
        OP("aten::cudnn_batch_norm", 1, 210, 60, "\"Input Dims\":[[8,64,32,32],[64],[64],[64],[64],[],[],[]],"
           "\"Input type\":[\"float\",\"float\",\"float\",\"float\",\"float\",\"Scalar\",\"Scalar\",\"Scalar\"]")
        LAUNCH(1, 220, 23)
        OP("aten::_foreach_mul_", 1, 300, 50, "\"Input Dims\":[[[10],[6]],[]],"
           "\"Input type\":[\"TensorList\",\"float\"]")
        LAUNCH(1, 305, 24)
        OP("aten::addmm", 1, 400, 80, "\"Input Dims\":[[16],[8,32],[32,16],[],[]],"
           "\"Input type\":[\"float\",\"float\",\"float\",\"Scalar\",\"Scalar\"]")
        OP("aten::copy_", 1, 405, 20, "\"Input Dims\":[[8,16],[16],[]],"
           "\"Input type\":[\"float\",\"float\",\"Scalar\"]")
        LAUNCH(1, 410, 25)
        LAUNCH(1, 450, 26)
        OP("aten::_foreach_add_", 1, 500, 50, "\"Input Dims\":[[[4,4],[4]],[[4,4],[4]],[]],"
           "\"Input type\":[\"TensorList\",\"TensorList\",\"Scalar\"]")
        LAUNCH(1, 505, 27)
        KERNEL("void at::native::vectorized_elementwise_kernel<4, add>", 1000, 10, 21) ",\n"
        KERNEL("void at::native::vectorized_elementwise_kernel<4, relu>", 1100, 2, 22) ",\n"
        KERNEL("void cudnn::bn_fw_tr_1C11_kernel_NCHW<float>", 1200, 5, 23) ",\n"
        KERNEL("void at::native::multi_tensor_apply_kernel<mul>", 1300, 1, 24) ",\n"
        KERNEL("void at::native::unrolled_elementwise_kernel<copy>", 1400, 1, 25) ",\n"
        KERNEL("volta_sgemm_32x32_nn", 1450, 2, 26) ",\n"
        KERNEL("void at::native::multi_tensor_apply_kernel<add>", 1500, 1, 27) "\n]}\n";
    const char *path = tmp_path("membytes.json");
    write_text(path, text, strlen(text));
    mb_run r;
    mb_err err = {0};
    assert_int_equal(mb_trace_read(path, &r, &err), MB_OK);
    const mb_stage *s = stage(&r, MB_MEMBOUND_STAGE);
    assert_non_null(s);
    assert_string_equal(s->component, "membw");
    assert_string_equal(s->work_unit, "byte");
    assert_true(s->work == 7866052);
    assert_int_equal(s->count, 5);
    NS_EQ(s->seconds, 19000);
    s = stage(&r, "gemm"); /* addmm keeps its GEMM kernel, not the copy */
    assert_non_null(s);
    assert_true(s->work == 8192);
    NS_EQ(s->seconds, 2000);
    s = stage(&r, MB_MEMBOUND_STAGE " (bytes unknown)"); /* the unshaped _foreach_add_ */
    assert_non_null(s);
    assert_string_equal(s->component, "membw");
    assert_string_equal(s->work_unit, "s");
    assert_int_equal(s->count, 1);
    NS_EQ(s->seconds, 1000);
    assert_null(stage(&r, "other compute"));
    cJSON *ev = r.evidence;
    assert_string_equal(cJSON_GetStringValue(path_get(ev, "unattributed")->child),
                        "bytes unknown: aten::_foreach_add_: element type of a TensorList not recorded");
    assert_true(fabs(num(ev, "rates.memory_bound.shaped_share") - 0.95) < 1e-9);
    assert_true(fabs(num(ev, "rates.memory_bound.bytes_per_s") - 7866052 / 19e-6) < 1e-3);
    assert_int_equal((int)num(ev, "rates.ops_without_shapes.memory_bound"), 1);
    mb_run_free(&r);
}

/* aten::cat and the foreach ops record their TensorLists' shapes but no
 * element type (torch 1.13, and 2.x for short lists); their kernels' names
 * carry the element size. Bytes by hand:
 *   cat [[2,3,4],[2,5,4]] (64 elements), kernel CatArrayBatchedCopy<
 *     OpaqueType<2u>, ...> (torch 2.x): read and write, 2 x 64 x 2 = 256 (4 us)
 *   stack -> cat of the same lists, kernel CatArrayBatchedCopy<float, ...>
 *     (torch 1.x names the type): 2 x 64 x 4 = 512, the inner cat's (6 us)
 *   cat whose kernel names no element size: bytes unknown (3 us)
 *   _foreach_mul_ [[10],[6]] updated in place, kernel BinaryOpScalarFunctor<
 *     c10::BFloat16, ...>: 16 x 2 read + 16 x 2 written = 64 (2 us)
 *   _foreach_add_ of two lists, one kernel of float and one of bf16 (a list
 *     of two dtypes): bytes unknown (1 + 1 us)
 * Shaped: 832 bytes in 12 us; unknown 5 us. */
static void test_list_element_size_from_kernels(void **state)
{
    (void)state;
#define CAT_ARGS "\"Input Dims\":[[[2,3,4],[2,5,4]],[]],\"Input type\":[\"TensorList\",\"Scalar\"]"
    const char *text =
        "{\"traceEvents\":[\n"
        OP("aten::cat", 1, 0, 50, CAT_ARGS)
        LAUNCH(1, 5, 31)
        OP("aten::stack", 1, 100, 80, CAT_ARGS)
        OP("aten::cat", 1, 110, 60, CAT_ARGS)
        LAUNCH(1, 120, 32)
        OP("aten::cat", 1, 200, 50, CAT_ARGS)
        LAUNCH(1, 205, 33)
        OP("aten::_foreach_mul_", 1, 300, 50, "\"Input Dims\":[[[10],[6]],[]],\"Input type\":[\"TensorList\",\"Scalar\"]")
        LAUNCH(1, 305, 34)
        OP("aten::_foreach_add_", 1, 400, 50, "\"Input Dims\":[[[4,4],[4]],[[4,4],[4]],[]],"
           "\"Input type\":[\"TensorList\",\"TensorList\",\"Scalar\"]")
        LAUNCH(1, 405, 35)
        LAUNCH(1, 410, 36)
        KERNEL("void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous "
               "namespace)::OpaqueType<2u>, unsigned int, 3, 128, 1>(...)", 1000, 4, 31) ",\n"
        KERNEL("void at::native::(anonymous namespace)::CatArrayBatchedCopy<float, unsigned int, 3, 128, 1>(...)",
               1100, 6, 32) ",\n"
        KERNEL("void at::native::vectorized_elementwise_kernel<4, copy>", 1200, 3, 33) ",\n"
        KERNEL("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::"
               "TensorListMetadata<1>, at::native::(anonymous namespace)::BinaryOpScalarFunctor<c10::BFloat16, 1, 1, 0>, "
               "std::multiplies<float>, float>(...)", 1300, 2, 34) ",\n"
        KERNEL("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::"
               "TensorListMetadata<2>, at::native::(anonymous namespace)::BinaryOpListAlphaFunctor<float, 2, 2, 0>, "
               "std::plus<float> >(...)", 1400, 1, 35) ",\n"
        KERNEL("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::"
               "TensorListMetadata<2>, at::native::(anonymous namespace)::BinaryOpListAlphaFunctor<c10::BFloat16, 2, 2, "
               "0>, std::plus<float> >(...)", 1410, 1, 36) "\n]}\n";
#undef CAT_ARGS
    const char *path = tmp_path("catbytes.json");
    write_text(path, text, strlen(text));
    mb_run r;
    mb_err err = {0};
    assert_int_equal(mb_trace_read(path, &r, &err), MB_OK);
    const mb_stage *s = stage(&r, MB_MEMBOUND_STAGE);
    assert_non_null(s);
    assert_true(s->work == 832);
    assert_int_equal(s->count, 3);
    NS_EQ(s->seconds, 12000);
    s = stage(&r, MB_MEMBOUND_STAGE " (bytes unknown)");
    assert_non_null(s);
    assert_int_equal(s->count, 3);
    NS_EQ(s->seconds, 5000);
    assert_string_equal(cJSON_GetStringValue(path_get(r.evidence, "unattributed")->child),
                        "bytes unknown: aten::cat: element type of a TensorList not recorded (60% of its time); "
                        "aten::_foreach_add_: element type of a TensorList not recorded (40% of its time)");
    /* three of the six ops got their bytes from their kernels; the outer stack, the last cat and the
     * foreach op of two dtypes did not */
    assert_int_equal((int)num(r.evidence, "rates.ops_without_shapes.memory_bound"), 3);
    mb_run_free(&r);
}

static void test_kernel_elem_bytes(void **state)
{
    (void)state;
    const struct {
        const char *name;
        int bytes;
    } cases[] = {
        {"void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous namespace)::"
         "OpaqueType<2u>, unsigned int, 4, 64, 64>(...)", 2},
        {"void at::native::(anonymous namespace)::CatArrayBatchedCopy_aligned16_contig<at::native::(anonymous "
         "namespace)::OpaqueType<16u>, unsigned int, 2, 128, 1>", 0}, /* past the 4 bits kept: none */
        {"CatArrayBatchedCopy<at::native::(anonymous namespace)::OpaqueType<8u>, unsigned int, 1, 128, 1>", 8},
        {"void at::native::(anonymous namespace)::CatArrayBatchedCopy<c10::BFloat16, unsigned int, 4, 64, 64>", 2},
        {"void at::native::(anonymous namespace)::CatArrayBatchedCopy<double, unsigned int, 1, 128, 1>", 8},
        {"void at::native::(anonymous namespace)::CatArrayBatchedCopy<SomeStruct, unsigned int>", 0},
        {"void at::native::vectorized_elementwise_kernel<4, float>", 0},
        {"CatArrayBatchedCopy<float>", 0}, /* no comma: not the signature this reads */
        /* foreach kernels: the functor's scalar_t, not the metadata's or the math type */
        {"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::"
         "TensorListMetadata<1>, at::native::(anonymous namespace)::BinaryOpScalarFunctor<float, 1, 1, 0>, "
         "std::multiplies<float>, float>(...)", 4},
        {"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::"
         "TensorListScalarListMetadata<float, 1>, at::native::(anonymous namespace)::BinaryOpScalarListFunctor<"
         "c10::Half, 1, 1, 0>, std::divides<float> >(...)", 2},
        {"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::"
         "TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<c10::BFloat16, 4, "
         "(at::native::ADAM_MODE)1, false>, ...>(...)", 2},
        {"void multi_tensor_apply_kernel<TensorListMetadata<1>, something>(...)", 0},
        {"void at::native::elementwise_kernel<128, 2, BinaryFunctor<float, float, float, add>>", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        assert_int_equal(mb_tr_kernel_elem_bytes(cases[i].name, strlen(cases[i].name)), cases[i].bytes);
}

/* The shapes of one tensor input, for the hand-made shape records below. */
static void put_tensor(tr_shapes *sh, int t, const char *type, int rank, const int64_t *dims)
{
    sh->rank[t] = rank;
    if (rank > 0) /* a 0-d tensor has no dims to copy (and memcpy takes no NULL) */
        memcpy(sh->dims[t], dims, sizeof *dims * (size_t)rank);
    snprintf(sh->types[t], sizeof sh->types[t], "%s", type);
    if (t >= sh->n_tensors)
        sh->n_tensors = sh->n_types = t + 1;
}

/* ResNet's batch norm and max pool as torch 2.x records them (a
 * channels_last bf16 trace: batch_norm -> _batch_norm_impl_index ->
 * native_batch_norm, which zero-fills a counter with zeros -> zero_ -> fill_
 * before launching its statistics and transform kernels; max_pool2d ->
 * max_pool2d_with_indices; the backward ops on autograd's thread, inside
 * their autograd nodes). Bytes by hand (docs/traces.md):
 *   native_batch_norm (out): x [8,64,32,32] bf16 1048576 + 4 x [64] float
 *     1024, output 1048576: 2098176 (kernels 4 + 5 us)
 *   fill_ [2] int (inplace): 8 (1 us); in the backward [8] int: 32 (1 us)
 *   max_pool2d_with_indices (reduce): x 1048576 (3 us)
 *   max_pool2d_with_indices_backward (gradient): grad_out [8,64,16,16] bf16
 *     262144 + indices [8,64,16,16] long 1048576 read, a gradient the size of
 *     self (1048576) written: 2359296 (6 us)
 *   native_batch_norm_backward (out): grad_out and x 2 x 1048576 + 5 x [64]
 *     float 1280, grad_input 1048576: 3147008 (7 + 8 us)
 * In all 8653096 bytes in 35 us, 8 kernels, 6 ops; no other compute. */
static void test_norm_pool_attribution(void **state)
{
    (void)state;
#define BN_IN "\"Input Dims\":[[8,64,32,32],[64],[64],[64],[64],[],[],[]]," \
              "\"Input type\":[\"c10::BFloat16\",\"float\",\"float\",\"float\",\"float\",\"Scalar\",\"Scalar\"," \
              "\"Scalar\"]"
#define FILL(tid, ts, n, corr)                                                                                   \
    OP("aten::zeros", tid, ts ## 2, 8, "\"Input Dims\":[[],[],[],[],[]]")                                       \
    OP("aten::zero_", tid, ts ## 3, 6, "\"Input Dims\":[[" #n "]],\"Input type\":[\"int\"]")                    \
    OP("aten::fill_", tid, ts ## 4, 4, "\"Input Dims\":[[" #n "],[]],\"Input type\":[\"int\",\"Scalar\"]")       \
    LAUNCH(tid, ts ## 5, corr)
    const char *text =
        "{\"record_shapes\":1,\"traceEvents\":[\n"
        OP("aten::batch_norm", 1, 0, 100, "\"Sequence number\":7,\"Fwd thread id\":0," BN_IN)
        OP("aten::_batch_norm_impl_index", 1, 5, 90, "\"Sequence number\":7,\"Fwd thread id\":0," BN_IN)
        OP("aten::native_batch_norm", 1, 10, 80, "\"Sequence number\":7,\"Fwd thread id\":0," BN_IN)
        FILL(1, 1, 2, 31) /* zeros at 12 us, fill_'s launch at 15 */
        LAUNCH(1, 30, 32)
        LAUNCH(1, 50, 33)
        OP("aten::max_pool2d", 1, 200, 100, "\"Sequence number\":8,\"Fwd thread id\":0,"
           "\"Input Dims\":[[8,64,32,32],[],[],[],[],[]],"
           "\"Input type\":[\"c10::BFloat16\",\"ScalarList\",\"ScalarList\",\"ScalarList\",\"ScalarList\",\"Scalar\"]")
        OP("aten::max_pool2d_with_indices", 1, 210, 80, "\"Sequence number\":8,\"Fwd thread id\":0,"
           "\"Input Dims\":[[8,64,32,32],[],[],[],[],[]],"
           "\"Input type\":[\"c10::BFloat16\",\"ScalarList\",\"ScalarList\",\"ScalarList\",\"ScalarList\",\"Scalar\"]")
        LAUNCH(1, 220, 34)
        OP("autograd::engine::evaluate_function: MaxPool2DWithIndicesBackward0", 2, 400, 100,
           "\"Sequence number\":8,\"Fwd thread id\":1")
        OP("MaxPool2DWithIndicesBackward0", 2, 405, 90, "\"Sequence number\":8,\"Fwd thread id\":1,"
           "\"Input Dims\":[[8,64,16,16]],\"Input type\":[\"c10::BFloat16\"]")
        OP("aten::max_pool2d_with_indices_backward", 2, 410, 80,
           "\"Input Dims\":[[8,64,16,16],[8,64,32,32],[],[],[],[],[],[8,64,16,16]],"
           "\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"ScalarList\",\"ScalarList\",\"ScalarList\","
           "\"ScalarList\",\"Scalar\",\"long int\"]")
        LAUNCH(2, 420, 35)
        OP("autograd::engine::evaluate_function: NativeBatchNormBackward0", 2, 590, 120,
           "\"Sequence number\":7,\"Fwd thread id\":1")
        OP("NativeBatchNormBackward0", 2, 595, 110, "\"Sequence number\":7,\"Fwd thread id\":1,"
           "\"Input Dims\":[[8,64,32,32]],\"Input type\":[\"c10::BFloat16\"]")
        OP("aten::native_batch_norm_backward", 2, 600, 100,
           "\"Input Dims\":[[8,64,32,32],[8,64,32,32],[64],[64],[64],[64],[64],[],[],[]],"
           "\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"float\",\"float\",\"float\",\"float\",\"float\","
           "\"Scalar\",\"Scalar\",\"ScalarList\"]")
        FILL(2, 60, 8, 36)
        LAUNCH(2, 620, 37)
        LAUNCH(2, 640, 38)
        KERNEL("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<int>>", 1000, 1, 31) ",\n"
        KERNEL("void at::native::batch_norm_collect_statistics_channels_last_kernel<at::native::Var>", 1010, 4, 32)
        ",\n"
        KERNEL("void at::native::batch_norm_transform_input_channels_last_kernel<c10::BFloat16>", 1020, 5, 33) ",\n"
        KERNEL("void at::native::(anonymous namespace)::max_pool_forward_nhwc<c10::BFloat16>", 1030, 3, 34) ",\n"
        KERNEL("void at::native::(anonymous namespace)::max_pool_backward_nhwc<c10::BFloat16>", 1040, 6, 35) ",\n"
        KERNEL("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<int>>", 1050, 1, 36) ",\n"
        KERNEL("void at::native::batch_norm_backward_reduce_channels_last_kernel<4>", 1060, 7, 37) ",\n"
        KERNEL("void at::native::batch_norm_backward_elemt_channels_last_kernel<4>", 1070, 8, 38) "\n]}\n";
#undef BN_IN
#undef FILL
    const char *path = tmp_path("normpool.json");
    write_text(path, text, strlen(text));
    mb_run r;
    mb_err err = {0};
    assert_int_equal(mb_trace_read(path, &r, &err), MB_OK);
    const mb_stage *s = stage(&r, MB_MEMBOUND_STAGE);
    assert_non_null(s);
    assert_string_equal(s->component, "membw");
    assert_true(s->work == 8653096);
    assert_int_equal(s->count, 8);
    NS_EQ(s->seconds, 35000);
    assert_null(stage(&r, "other compute"));
    assert_null(stage(&r, MB_MEMBOUND_STAGE " (bytes unknown)"));
    assert_int_equal((int)num(r.evidence, "rates.memory_bound.ops"), 6);
    assert_true(num(r.evidence, "rates.memory_bound.shaped_share") == 1);
    mb_run_free(&r);
}

/* Backward FLOPs from the forward op (Kineto's autograd "Sequence number"):
 *   forward linear [64,128] x [256,128]^T -> addmm (seq 11): 2*64*256*128 =
 *     4194304 (10 us); AddmmBackward0 (seq 11, on autograd's thread) runs two
 *     aten::mm without shapes: one forward-sized product each, 2 x 4194304
 *     (12 + 14 us); its bias gradient aten::sum is memory-bound (2 us)
 *   forward mm [32,64] x [64,16] (seq 21): 65536 (3 us); MmBackward0 (seq
 *     21) launches its two kernels itself: 2 products (dgrad, wgrad),
 *     131072 (5 + 6 us)
 *   gemm fp32: 12779520 FLOPs in 50 us, 6 kernels, 5 ops (3 linked)
 *   forward flash attention [2,4,256,64] bf16, causal (seq 31): 4 b h l s d
 *     / 2 = 67108864 (20 us); its backward op without shapes: 10/4 of it,
 *     167772160 (40 us); attention bf16: 234881024 FLOPs in 60 us
 *   an aten::mm without shapes under MmBackward0 of seq 99, which no
 *     forward op has: "gemm (unattributed)" (4 us), saying why. */
static void test_backward_flops(void **state)
{
    (void)state;
#define FWD(seq) "\"Sequence number\":" #seq ",\"Fwd thread id\":0,"
#define BWD(seq) "\"Sequence number\":" #seq ",\"Fwd thread id\":1"
#define QKV "[2,4,256,64],[2,4,256,64],[2,4,256,64]"
#define BF16x3 "\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\""
    const char *text =
        "{\"record_shapes\":1,\"traceEvents\":[\n"
        OP("aten::linear", 1, 0, 100, FWD(10) "\"Input Dims\":[[64,128],[256,128],[256]],"
           "\"Input type\":[\"float\",\"float\",\"float\"]")
        OP("aten::t", 1, 2, 3, FWD(10) "\"Input Dims\":[[256,128]],\"Input type\":[\"float\"]")
        OP("aten::addmm", 1, 10, 80, FWD(11) "\"Input Dims\":[[256],[64,128],[128,256],[],[]],"
           "\"Input type\":[\"float\",\"float\",\"float\",\"Scalar\",\"Scalar\"]")
        LAUNCH(1, 20, 41)
        OP("aten::mm", 1, 300, 100, FWD(21) "\"Input Dims\":[[32,64],[64,16]],\"Input type\":[\"float\",\"float\"]")
        LAUNCH(1, 310, 42)
        OP("aten::scaled_dot_product_attention", 1, 500, 100, FWD(31) "\"Input Dims\":[" QKV ",[],[],[],[],[]],"
           "\"Input type\":[" BF16x3 ",\"\",\"Scalar\",\"Scalar\",\"\",\"Scalar\"],"
           "\"Concrete Inputs\":[\"\",\"\",\"\",\"\",\"0.\",\"True\",\"\",\"False\"]")
        OP("aten::_scaled_dot_product_flash_attention", 1, 510, 80, FWD(31) "\"Input Dims\":[" QKV ",[],[],[],[]],"
           "\"Input type\":[" BF16x3 ",\"Scalar\",\"Scalar\",\"Scalar\",\"\"],"
           "\"Concrete Inputs\":[\"\",\"\",\"\",\"0.\",\"True\",\"False\",\"\"]")
        LAUNCH(1, 520, 43)
        OP("autograd::engine::evaluate_function: AddmmBackward0", 2, 1000, 200, BWD(11))
        OP("AddmmBackward0", 2, 1005, 190, BWD(11) ",\"Input Dims\":[[64,256]],\"Input type\":[\"float\"]")
        OP("aten::mm", 2, 1010, 40, "\"External id\":5")
        LAUNCH(2, 1020, 44)
        OP("aten::mm", 2, 1060, 40, "\"External id\":6")
        LAUNCH(2, 1070, 45)
        OP("aten::sum", 2, 1110, 40, "\"Input Dims\":[[64,256],[],[],[]],"
           "\"Input type\":[\"float\",\"ScalarList\",\"Scalar\",\"\"]")
        LAUNCH(2, 1120, 46)
        OP("autograd::engine::evaluate_function: MmBackward0", 2, 2000, 200, BWD(21))
        OP("MmBackward0", 2, 2005, 190, BWD(21))
        LAUNCH(2, 2010, 47)
        LAUNCH(2, 2050, 48)
        OP("autograd::engine::evaluate_function: ScaledDotProductFlashAttentionBackward0", 2, 3000, 200, BWD(31))
        OP("ScaledDotProductFlashAttentionBackward0", 2, 3005, 190, BWD(31))
        OP("aten::_scaled_dot_product_flash_attention_backward", 2, 3010, 180, "\"External id\":7")
        LAUNCH(2, 3020, 49)
        OP("autograd::engine::evaluate_function: MmBackward0", 2, 4000, 200, BWD(99))
        OP("MmBackward0", 2, 4005, 190, BWD(99))
        OP("aten::mm", 2, 4010, 40, "\"External id\":8")
        LAUNCH(2, 4020, 50)
        KERNEL("volta_sgemm_128x64_nn", 5000, 10, 41) ",\n"
        KERNEL("volta_sgemm_32x32_nn", 5020, 3, 42) ",\n"
        KERNEL("flash_fwd_kernel<Flash_fwd_kernel_traits<64>>", 5030, 20, 43) ",\n"
        KERNEL("volta_sgemm_128x64_nt", 5060, 12, 44) ",\n"
        KERNEL("volta_sgemm_128x64_tn", 5080, 14, 45) ",\n"
        KERNEL("void at::native::reduce_kernel<128, 4, at::native::ReduceOp<float>>", 5100, 2, 46) ",\n"
        KERNEL("volta_sgemm_32x32_nt", 5110, 5, 47) ",\n"
        KERNEL("volta_sgemm_32x32_tn", 5120, 6, 48) ",\n"
        KERNEL("flash_bwd_dq_dk_dv_loop_kernel<Flash_bwd_kernel_traits<64>>", 5130, 40, 49) ",\n"
        KERNEL("volta_sgemm_64x64_nn", 5180, 4, 50) "\n]}\n";
#undef QKV
#undef BF16x3
    const char *path = tmp_path("bwdflops.json");
    write_text(path, text, strlen(text));
    mb_run r;
    mb_err err = {0};
    assert_int_equal(mb_trace_read(path, &r, &err), MB_OK);
    const mb_stage *s = stage(&r, "gemm");
    assert_non_null(s);
    assert_string_equal(s->work_unit, "flop");
    assert_string_equal(s->dtype, "fp32");
    assert_true(s->work == 12779520);
    assert_int_equal(s->count, 6);
    NS_EQ(s->seconds, 50000);
    cJSON *ev = r.evidence;
    assert_int_equal((int)num(ev, "rates.gemm.0.ops"), 5);
    assert_int_equal((int)num(ev, "rates.gemm.0.linked"), 3);
    s = stage(&r, "attention");
    assert_non_null(s);
    assert_string_equal(s->component, "attention");
    assert_string_equal(s->dtype, "bf16");
    assert_true(s->work == 67108864.0 + 167772160.0);
    assert_int_equal(s->count, 2);
    NS_EQ(s->seconds, 60000);
    assert_int_equal((int)num(ev, "rates.attention.0.linked"), 1);
    s = stage(&r, "gemm (unattributed)");
    assert_non_null(s);
    assert_string_equal(s->work_unit, "s");
    assert_int_equal(s->count, 1);
    NS_EQ(s->seconds, 4000);
    cJSON *why = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ev, "unattributed"),
                                                  "gemm (unattributed)");
    assert_string_equal(cJSON_GetStringValue(why),
                        "FLOPs unknown: launched by aten::mm: no Input Dims recorded for it, and no forward op with "
                        "shapes has its autograd node's Sequence number");
    s = stage(&r, MB_MEMBOUND_STAGE); /* the bias gradient */
    assert_non_null(s);
    assert_true(s->work == 64 * 256 * 4);
    NS_EQ(s->seconds, 2000);
    mb_run_free(&r);
}

/* An fp32 matmul or convolution whose kernels run TF32 math (their names say
 * so: PyTorch records the op as float, torch has no tf32 dtype) is tf32 work,
 * held to the tf32 ceiling: an H100's fp32 MLP with allow_tf32 read its
 * GEMMs "at 670% of the ceiling" of the fp32 case (52 TFLOP/s against 367).
 * Forward mm with a Hopper tf32 kernel, its backward (linked by sequence
 * number) with Ampere CUTLASS s1688gemm kernels: tf32; an mm with an ffma
 * kernel stays fp32; a bf16 mm stays bf16 (one stage per dtype). */
static void test_tf32_from_kernels(void **state)
{
    (void)state;
#define MM(seq, a, b, type) OP("aten::mm", 1, seq##00, 50, "\"Sequence number\":" #seq ",\"Fwd thread id\":0,"  \
                                "\"Input Dims\":[[" a "],[" b "]],\"Input type\":[\"" type "\",\"" type "\"]")
    const char *text =
        "{\"record_shapes\":1,\"traceEvents\":[\n"
        MM(1, "64,128", "128,256", "float")
        LAUNCH(1, 110, 61)
        MM(2, "32,64", "64,16", "float")
        LAUNCH(1, 210, 62)
        MM(3, "32,64", "64,16", "c10::BFloat16")
        LAUNCH(1, 310, 63)
        OP("autograd::engine::evaluate_function: MmBackward0", 2, 1000, 200, "\"Sequence number\":1,\"Fwd thread id\":1")
        OP("MmBackward0", 2, 1005, 190, "\"Sequence number\":1,\"Fwd thread id\":1")
        OP("aten::mm", 2, 1010, 40, "\"External id\":5")
        LAUNCH(2, 1020, 64)
        OP("aten::mm", 2, 1060, 40, "\"External id\":6")
        LAUNCH(2, 1070, 65)
        KERNEL("sm90_xmma_gemm_f32f32_tf32f32_f32_nt_n_tilesize128x256x32_warpgroupsize2x1x1_execute_segment_k_off_"
               "kernel__5x_cublas", 5000, 10, 61) ",\n"
        KERNEL("sm80_xmma_gemm_f32f32_f32f32_f32_nt_n_tilesize32x32x8_stage3_warpsize1x2x1_ffma_aligna4_alignc4_"
               "execute_kernel__5x_cublas", 5020, 4, 62) ",\n"
        KERNEL("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x64x64_cublas", 5030, 2, 63) ",\n"
        KERNEL("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_16x4_nn_align4>(...)", 5040, 12, 64) ",\n"
        KERNEL("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_16x4_nt_align4>(...)", 5060, 14, 65)
        "\n]}\n";
#undef MM
    const char *path = tmp_path("tf32.json");
    write_text(path, text, strlen(text));
    mb_run r;
    mb_err err = {0};
    assert_int_equal(mb_trace_read(path, &r, &err), MB_OK);
    const mb_stage *s = stage(&r, "gemm tf32");
    assert_non_null(s);
    assert_string_equal(s->dtype, "tf32");
    assert_true(s->work == 3.0 * 2 * 64 * 128 * 256); /* the forward and its two backward products */
    assert_int_equal(s->count, 3);
    NS_EQ(s->seconds, 36000);
    assert_non_null(strstr(s->source, "fp32 ops whose kernels ran TF32 math"));
    s = stage(&r, "gemm fp32");
    assert_non_null(s);
    assert_true(s->work == 2.0 * 32 * 64 * 16);
    NS_EQ(s->seconds, 4000);
    assert_null(strstr(s->source, "TF32"));
    s = stage(&r, "gemm bf16");
    assert_non_null(s);
    NS_EQ(s->seconds, 2000);
    mb_run_free(&r);
}

static void test_kernel_tf32(void **state)
{
    (void)state;
    const struct {
        const char *name;
        bool tf32, fp32; /* TF32 on the tensor cores; fp32 on the CUDA cores (mb_tr_kernel_fp32) */
    } cases[] = {
        {"sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32_warpgroupsize1x1x1_execute_segment_k_off_kernel"
         "__5x_cublas", true, false},
        {"sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_stage4_warpsize"
         "2x2x1_g1_tensor16x8x8_alignc4_execute_kernel_cudnn", true, false},
        {"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_16x4_nt_align1>(...)", true, false},
        {"sm80_xmma_gemm_f32f32_f32f32_f32_nt_n_tilesize64x32x8_stage3_warpsize2x2x1_ffma_aligna8_alignc8_execute_"
         "kernel__5x_cublas", false, true},
        {"void cutlass::Kernel<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8>(...)", false,
         false},
        {"volta_sgemm_128x64_nn", false, true},
        {"ampere_sgemm_64x32_sliced1x4_tn", false, true},
        {"void cutlass::Kernel2<cutlass_80_simt_sgemm_256x128_8x4_tn_align1>(...)", false, true},
        {"void implicit_convolve_sgemm<float, float, 1024, 6, 7, 3, 3, 5, 1, false, false, true>(int, int, int)", false,
         true},
        {"ampere_scudnn_128x64_relu_small_nn_v1", false, true},
        {"ampere_fp16_s16816gemm_fp16_128x128_ldg8_relu_f2f_stages_32x5_tn", false, false},
        {"turing_fp16_s1688gemm_fp16_128x256_ldg8_relu_f2f_stages_32x1_tn", false, false},
        {"ampere_h16816gemm_256x128_ldg8_stages_32x3_tn", false, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_true(mb_tr_kernel_tf32(cases[i].name, strlen(cases[i].name)) == cases[i].tf32);
        if (mb_tr_kernel_fp32(cases[i].name, strlen(cases[i].name)) != cases[i].fp32)
            fail_msg("%s: fp32 %d, expected %d", cases[i].name, !cases[i].fp32, cases[i].fp32);
    }
    /* cuBLAS's fp16-input tensor-op GEMMs: fp16 math, whatever their s1688/s16816 says */
    const char *fp16 = "ampere_fp16_s1688gemm_fp16_128x128_ldg8_f2f_stages_32x1_tn";
    assert_int_equal(mb_tr_kernel_math(fp16, strlen(fp16)), MB_PM_FP16);
}

/* A kernel an attention op with FLOPs launches is attention work whatever its
 * name: the step table counts it in the attention part, where the stage's
 * exposed time comes from (TraceLens's MI300X torch.compile trace: AMD's
 * Triton `attn_fwd`, 3.68 ms, read as a memory-bound kernel in the table
 * while the attention stage held it: 28% of the run "no stage"). A causal
 * SDPA of [2,4,256,64] bf16 (67108864 FLOPs) launches fused_kernel_0 (no
 * rule matches it) for 20 us in a 100 us step; a GEMM-named kernel outside
 * any op keeps its class. */
/* A forward convolution recorded without Concrete Inputs (torch < 2.1: no
 * stride or padding, so no output size) takes its FLOPs from the backward op
 * under the autograd node with its Sequence number. Conv N2 C3 8x8, K4 3x3,
 * stride 1 pad 1 -> 8x8: 2*2*4*3*9*64 = 27648 per product.
 * Layer 1 (torch 2.0): aten::conv2d > aten::convolution > aten::_convolution
 * > aten::cudnn_convolution, seq 7 on the outer ops; its backward
 * aten::convolution_backward (grad_output [2,4,8,8], no output_mask: 2
 * products) -> forward 27648, backward 55296.
 * Layer 2 (torch 1.9): aten::cudnn_convolution seq 9; its backward
 * aten::cudnn_convolution_backward(self, grad_output, weight) whose children
 * launch the kernels -> forward 27648, backward 55296.
 * Layer 3: a forward whose node has no backward op with shapes: no FLOPs
 * (its kernel in "conv (unattributed)"). The old reader had the forward
 * kernels there too, and layer 2's backward. */
static void test_forward_from_backward(void **state)
{
    (void)state;
#define CONV_IN "\"Input Dims\":[[2,3,8,8],[4,3,3,3],[],[],[],[],[],[],[]],\"Input type\":[\"float\",\"float\"]"
    const char *text =
        "{\"record_shapes\":1,\"traceEvents\":[\n"
        OP("aten::conv2d", 1, 0, 100, FWD(7) CONV_IN)
        OP("aten::convolution", 1, 2, 96, FWD(7) CONV_IN)
        OP("aten::_convolution", 1, 4, 92, FWD(7) CONV_IN)
        OP("aten::cudnn_convolution", 1, 6, 88, CONV_IN)
        LAUNCH(1, 10, 61)
        OP("aten::cudnn_convolution", 1, 200, 100, FWD(9) CONV_IN)
        LAUNCH(1, 210, 62)
        OP("aten::cudnn_convolution", 1, 400, 100, FWD(11) CONV_IN)
        LAUNCH(1, 410, 63)
        OP("autograd::engine::evaluate_function: ConvolutionBackward0", 2, 1000, 200, BWD(7))
        OP("ConvolutionBackward0", 2, 1005, 190, BWD(7))
        OP("aten::convolution_backward", 2, 1010, 180,
           "\"Input Dims\":[[2,4,8,8],[2,3,8,8],[4,3,3,3],[],[],[],[],[],[],[],[]],"
           "\"Input type\":[\"float\",\"float\",\"float\"]")
        LAUNCH(2, 1020, 64)
        LAUNCH(2, 1030, 65)
        OP("CudnnConvolutionBackward", 2, 2000, 200, BWD(9))
        OP("aten::cudnn_convolution_backward", 2, 2005, 190,
           "\"Input Dims\":[[2,3,8,8],[2,4,8,8],[4,3,3,3],[],[],[],[],[],[],[],[]],"
           "\"Input type\":[\"float\",\"float\",\"float\",\"GenericList\"]")
        OP("aten::cudnn_convolution_backward_input", 2, 2010, 80,
           "\"Input Dims\":[[],[2,4,8,8],[4,3,3,3]],\"Input type\":[\"GenericList\",\"float\",\"float\"]")
        LAUNCH(2, 2020, 66)
        OP("aten::cudnn_convolution_backward_weight", 2, 2100, 80,
           "\"Input Dims\":[[],[2,4,8,8],[2,3,8,8]],\"Input type\":[\"GenericList\",\"float\",\"float\"]")
        LAUNCH(2, 2110, 67)
        KERNEL("volta_scudnn_128x64_relu_interior_nn_v1", 5000, 10, 61) ",\n"
        KERNEL("volta_scudnn_128x64_relu_interior_nn_v1", 5020, 10, 62) ",\n"
        KERNEL("volta_scudnn_128x64_relu_interior_nn_v1", 5040, 10, 63) ",\n"
        KERNEL("sm70_xmma_dgrad_implicit_gemm_f32", 5060, 12, 64) ",\n"
        KERNEL("sm70_xmma_wgrad_implicit_gemm_f32", 5080, 14, 65) ",\n"
        KERNEL("sm70_xmma_dgrad_implicit_gemm_f32", 5100, 12, 66) ",\n"
        KERNEL("sm70_xmma_wgrad_implicit_gemm_f32", 5120, 14, 67) "\n]}\n";
#undef FWD /* test_backward_flops' */
#undef BWD
#undef CONV_IN
    const char *path = tmp_path("fwd_from_bwd.json");
    write_text(path, text, strlen(text));
    mb_run r;
    mb_err err = {0};
    assert_int_equal(mb_trace_read(path, &r, &err), MB_OK);
    const mb_stage *s = stage(&r, "conv");
    assert_non_null(s);
    assert_string_equal(s->work_unit, "flop");
    assert_true(s->work == 2 * 27648 + 2 * 55296);
    assert_int_equal(s->count, 6);
    NS_EQ(s->seconds, 72000);
    cJSON *ev = r.evidence;
    assert_int_equal((int)num(ev, "rates.conv.0.ops"), 4);
    assert_int_equal((int)num(ev, "rates.conv.0.from_backward"), 2);
    assert_null(s->direction); /* a training step's convolutions run every direction */
    s = stage(&r, "conv (unattributed)"); /* layer 3 */
    assert_non_null(s);
    assert_int_equal(s->count, 1);
    NS_EQ(s->seconds, 10000);
    mb_run_free(&r);
}

/* A run without a backward pass (inference) convolves forward only: its conv
 * stage says direction fwd, so that cuDNN's forward cases hold it, not the
 * fastest direction measured (an A100 particle transformer's inference was
 * held to the H100 reference's bwd_filter case, 90.5 TFLOP/s against the
 * forward's 50.2). ResNet-50's conv1 (236027904 FLOPs) in 50 us. */
static void test_forward_only_conv(void **state)
{
    (void)state;
    static const char text[] =
        "{\"record_shapes\":1,\"traceEvents\":[\n"
        OP("aten::cudnn_convolution", 1, 0, 20, "\"Input Dims\":[[1,3,224,224],[64,3,7,7],[],[],[],[]],"
           "\"Input type\":[\"float\",\"float\"],"
           "\"Concrete Inputs\":[\"\",\"\",\"[3, 3]\",\"[2, 2]\",\"[1, 1]\",\"1\"]")
        LAUNCH(1, 5, 71)
        KERNEL("sm80_xmma_fprop_implicit_gemm_f32f32_f32f32_f32_nhwckrsc_nchw", 30, 50, 71) "\n]}\n";
    const char *path = tmp_path("forward_only_conv.json");
    write_text(path, text, strlen(text));
    mb_run r;
    mb_err err = {0};
    assert_int_equal(mb_trace_read(path, &r, &err), MB_OK);
    const mb_stage *s = stage(&r, "conv");
    assert_non_null(s);
    assert_true(s->work == 236027904.0);
    assert_non_null(s->direction);
    assert_string_equal(s->direction, "fwd");
    mb_run_free(&r);
}

static void test_kernel_takes_op_family(void **state)
{
    (void)state;
#define QKV "[2,4,256,64],[2,4,256,64],[2,4,256,64]"
#define BF16x3 "\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\""
    const char *text =
        "{\"record_shapes\":1,\"traceEvents\":[\n"
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":1,\"tid\":1,\"ts\":0,"
        "\"dur\":100},\n"
        OP("aten::scaled_dot_product_attention", 1, 5, 20, "\"Input Dims\":[" QKV ",[],[],[],[],[]],"
           "\"Input type\":[" BF16x3 ",\"\",\"Scalar\",\"Scalar\",\"\",\"Scalar\"],"
           "\"Concrete Inputs\":[\"\",\"\",\"\",\"\",\"0.\",\"True\",\"\",\"False\"]")
        LAUNCH(1, 10, 43)
        LAUNCH(1, 30, 44)
        KERNEL("fused_kernel_0", 20, 20, 43) ",\n"
        KERNEL("volta_sgemm_32x32_nn", 50, 10, 44) "\n]}\n";
#undef QKV
#undef BF16x3
    const char *path = tmp_path("op_family.json");
    write_text(path, text, strlen(text));
    mb_run r;
    mb_err err = {0};
    assert_int_equal(mb_trace_read(path, &r, &err), MB_OK);
    const mb_stage *s = stage(&r, "attention");
    assert_non_null(s);
    assert_true(s->work == 67108864);
    NS_EQ(s->seconds, 20000);
    NS_EQ(s->exposed_seconds, 20000);
    NS_EQ(num(r.evidence, "steps.0.parts.attention"), 20000);
    assert_null(path_get(r.evidence, "steps.0.parts.memory_bound"));
    NS_EQ(num(r.evidence, "steps.0.parts.gemm"), 10000);
    s = stage(&r, "gemm"); /* launched by no op: time only, in the GEMM part */
    assert_non_null(s);
    NS_EQ(s->exposed_seconds, 10000);
    assert_null(stage(&r, "other compute"));
    double staged = 0;
    for (int i = 0; i < r.n_stages; i++)
        staged += mb_stage_exposed(&r.stages[i]);
    NS_EQ(staged, 100000); /* the step, every part of it in a stage */
    mb_run_free(&r);
}

/* A matrix-math kernel under an op of another family without a count is
 * that family's: cuDNN runs sgemm kernels for convolutions (a T4's ResNet-50
 * recorded without shapes: 7.5 ms of volta_sgemm under
 * aten::cudnn_convolution read as a "gemm" stage, the matmuls' own 56 us).
 * Step [0, 100) us: a convolution without shapes launches an sgemm [20, 40),
 * an addmm without shapes one [50, 60). */
static void test_kernel_takes_uncounted_family(void **state)
{
    (void)state;
    const char *text =
        "{\"traceEvents\":[\n"
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":1,\"tid\":1,\"ts\":0,"
        "\"dur\":100},\n"
        OP("aten::cudnn_convolution", 1, 5, 30, "") LAUNCH(1, 10, 1)
        OP("aten::addmm", 1, 45, 10, "") LAUNCH(1, 46, 2)
        KERNEL("volta_sgemm_128x64_nn", 20, 20, 1) ",\n"
        KERNEL("volta_sgemm_128x64_nn", 50, 10, 2) "\n]}\n";
    const char *path = tmp_path("uncounted_family.json");
    write_text(path, text, strlen(text));
    mb_run r;
    mb_err err = {0};
    assert_int_equal(mb_trace_read(path, &r, &err), MB_OK);
    const mb_stage *s = stage(&r, "conv");
    assert_non_null(s);
    assert_string_equal(s->work_unit, "s");
    assert_int_equal(s->count, 1);
    NS_EQ(s->seconds, 20000);
    NS_EQ(num(r.evidence, "steps.0.parts.conv"), 20000);
    assert_true(warned(&r, "conv: 20 µs a step of conv kernels")); /* per step, as the stage is shown */
    s = stage(&r, "gemm");
    assert_non_null(s);
    assert_int_equal(s->count, 1);
    NS_EQ(s->seconds, 10000);
    NS_EQ(num(r.evidence, "steps.0.parts.gemm"), 10000);
    mb_run_free(&r);
}

/* A trace without steps that ends in a sync after its last launch: the
 * profiler's closing synchronize, no sync of the run, and the run ends where
 * the GPU's work does (a cold 3-D conv model's trace: 1.27 s of a final
 * cudaDeviceSynchronize after the last kernel read "Synchronization bound").
 * A launch [0, 5), its kernel [10, 50), the sync [20, 1000): a 50-us run, no
 * sync stage. With an op after the sync it is the loop's own and stays. */
static void test_closing_sync_without_steps(void **state)
{
    (void)state;
    const char *text =
        "{\"traceEvents\":[\n%s"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":0,"
        "\"dur\":5,\"args\":{\"correlation\":1}},\n"
        KERNEL("elementwise_kernel", 10, 40, 1) ",\n"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaDeviceSynchronize\",\"pid\":1,\"tid\":1,"
        "\"ts\":20,\"dur\":980}\n]}\n";
    char json[2048];
    snprintf(json, sizeof json, text, "");
    const char *path = tmp_path("closing_nosteps.json");
    write_text(path, json, strlen(json));
    mb_run r;
    mb_err err = {0};
    assert_int_equal(mb_trace_read(path, &r, &err), MB_OK);
    NS_EQ(r.total_seconds, 50000);
    assert_null(stage(&r, "sync"));
    assert_null(path_get(r.evidence, "steps.0.parts.sync"));
    mb_run_free(&r);
    snprintf(json, sizeof json, text, OP("aten::add", 1, 1100, 10, ""));
    write_text(path, json, strlen(json));
    assert_int_equal(mb_trace_read(path, &r, &err), MB_OK);
    assert_non_null(stage(&r, "sync"));
    NS_EQ(r.total_seconds, 1110000);
    mb_run_free(&r);
}

/* The GPU idle before the trace's first kernel once its launch returned is
 * the GPU starting up, set-up, not the host's sync (a Quadro RTX 6000's
 * first inference: its first kernels started 42.8 ms after their launch,
 * inside a cudaStreamSynchronize: "Synchronization bound, 69.4%"). Only
 * in a trace without steps and from 10 ms: a trace started mid-loop has its
 * first kernel queued behind work it did not record. A launch [0, 5) us, a
 * sync [10, 20000), the first kernel [19990, 20000); a launch [20100, 20105),
 * its kernel [20110, 20120). */
static void test_gpu_startup(void **state)
{
    (void)state;
    const char *text =
        "{\"traceEvents\":[\n"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":0,"
        "\"dur\":5,\"args\":{\"correlation\":1}},\n"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaStreamSynchronize\",\"pid\":1,\"tid\":1,"
        "\"ts\":10,\"dur\":19990},\n"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":20100,"
        "\"dur\":5,\"args\":{\"correlation\":2}},\n"
        KERNEL("elementwise_kernel", 19990, 10, 1) ",\n" KERNEL("elementwise_kernel", 20110, 10, 2) "\n]}\n";
    const char *path = tmp_path("gpu_startup.json");
    write_text(path, text, strlen(text));
    mb_run r;
    mb_err err = {0};
    assert_int_equal(mb_trace_read(path, &r, &err), MB_OK);
    NS_EQ(part_seconds(r.evidence, "setup"), 19985000);
    assert_null(path_get(r.evidence, "steps.0.parts.sync"));
    NS_EQ(num(r.evidence, "host.setup.gpu_startup_s"), 19985000);
    const mb_stage *s = stage(&r, MB_SETUP_STAGE);
    assert_non_null(s);
    NS_EQ(mb_stage_exposed(s), 19985000);
    mb_run_free(&r);
}

/* The host inside a collective call with the GPU idle is communication in
 * the stages as in the step table (a 2-A100 MoE trace: 968 us of it read as
 * host code in the stage list, as a collective in the step table), and a
 * collective mlbench does not measure is communication, not unattributed.
 * Step [0, 100) us: c10d::allreduce_ [10, 50) launches at 45 an all-reduce
 * [50, 80); a send/recv launched at 85 runs [88, 95). GPU idle: host code
 * [0, 10) [80, 85) [86, 88) [95, 100) 22, in the collective call [10, 50)
 * 40, launch [85, 86) 1. */
static void test_host_collective_stage(void **state)
{
    (void)state;
    const char *text =
        "{\"traceEvents\":[\n"
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":1,\"tid\":1,\"ts\":0,"
        "\"dur\":100},\n"
        OP("c10d::allreduce_", 1, 10, 40, "") LAUNCH(1, 45, 1) LAUNCH(1, 85, 2)
        KERNEL("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*)", 50, 30, 1) ",\n"
        KERNEL("ncclDevKernel_SendRecv(ncclDevComm*)", 88, 7, 2) "\n]}\n";
    const char *path = tmp_path("host_collective.json");
    write_text(path, text, strlen(text));
    mb_run r;
    mb_err err = {0};
    assert_int_equal(mb_trace_read(path, &r, &err), MB_OK);
    NS_EQ(num(r.evidence, "steps.0.parts.host_collective"), 40000);
    NS_EQ(num(r.evidence, "steps.0.parts.host"), 22000);
    const mb_stage *s = stage(&r, MB_HOST_COLL_STAGE);
    assert_non_null(s);
    assert_string_equal(s->role, "communication");
    assert_int_equal(s->count, 1);
    NS_EQ(mb_stage_exposed(s), 40000);
    s = stage(&r, MB_HOST_CODE_STAGE);
    assert_non_null(s);
    NS_EQ(mb_stage_exposed(s), 22000);
    s = stage(&r, "sendrecv");
    assert_non_null(s);
    assert_string_equal(s->role, "communication");
    assert_null(stage(&r, "allreduce")->role); /* measured: its component says it */
    double staged = 0;
    for (int i = 0; i < r.n_stages; i++)
        staged += mb_stage_exposed(&r.stages[i]);
    NS_EQ(staged, 100000);
    mb_run_free(&r);
}

/* A blocking copy waits as a sync does, and the step table's sync part holds
 * both: the sync stage counts it (SGLang's ROCm decode trace: a 463 ms
 * hipMemcpyWithStream read "Synchronization bound, 97.7%; its largest
 * stage: host code"). Step [0, 100) us: a launch [5, 6), a kernel [10, 30),
 * cudaMemcpy [35, 95) whose copy runs [90, 92). GPU idle in it: [35, 90)
 * and [92, 95), 58 us; host code [0, 5) [6, 10) [30, 35) [95, 100), 19. */
static void test_blocking_copy_is_sync(void **state)
{
    (void)state;
    static const char text[] =
        "{\"traceEvents\":[\n"
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":1,\"tid\":1,\"ts\":0,"
        "\"dur\":100},\n"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":5,"
        "\"dur\":1,\"args\":{\"correlation\":1}},\n"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"elementwise_kernel\",\"pid\":0,\"tid\":7,\"ts\":10,"
        "\"dur\":20,\"args\":{\"device\":0,\"stream\":7,\"correlation\":1}},\n"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaMemcpy\",\"pid\":1,\"tid\":1,\"ts\":35,"
        "\"dur\":60,\"args\":{\"correlation\":2}},\n"
        "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy DtoH (Device -> Pageable)\",\"pid\":0,"
        "\"tid\":7,\"ts\":90,\"dur\":2,\"args\":{\"device\":0,\"stream\":7,\"correlation\":2,\"bytes\":4}}\n"
        "]}\n";
    const char *path = tmp_path("blocking_sync.json");
    write_text(path, text, strlen(text));
    mb_run r;
    mb_err err = {0};
    assert_int_equal(mb_trace_read(path, &r, &err), MB_OK);
    NS_EQ(num(r.evidence, "steps.0.parts.sync"), 58000);
    const mb_stage *s = stage(&r, "sync");
    assert_non_null(s);
    assert_int_equal(s->count, 1);
    NS_EQ(s->seconds, 60000);
    NS_EQ(mb_stage_exposed(s), 58000);
    assert_non_null(strstr(s->source, "0 sync calls and 1 blocking copy"));
    s = stage(&r, MB_HOST_CODE_STAGE);
    assert_non_null(s);
    NS_EQ(mb_stage_exposed(s), 19000);
    mb_run_free(&r);
}

static void test_op_bytes(void **state)
{
    (void)state;
    tr_shapes sh = {0};
    double b;
    const char *why;
    /* mul(a [2,3,4] fp16, b [4] fp16) out of place: 48 + 8 + output 48 */
    sh.n_tensors = sh.n_types = 2;
    sh.rank[0] = 3;
    memcpy(sh.dims[0], (int64_t[]){2, 3, 4}, 3 * sizeof(int64_t));
    sh.rank[1] = 1;
    sh.dims[1][0] = 4;
    strcpy(sh.types[0], "c10::Half");
    strcpy(sh.types[1], "c10::Half");
    assert_true(mb_tr_op_bytes(TR_MOP_OUT, &sh, &b, &why));
    assert_true(b == 104);
    /* the same in place (mul_): the output is the first input */
    assert_true(mb_tr_op_bytes(TR_MOP_INPLACE, &sh, &b, &why));
    assert_true(b == 56);
    assert_true(mb_tr_op_bytes(TR_MOP_REDUCE, &sh, &b, &why));
    assert_true(b == 56);
    /* fill_(self [5] long, Scalar): the Scalar is no tensor; 0-d float = 4 */
    sh.n_tensors = sh.n_types = 3;
    sh.rank[0] = 1;
    sh.dims[0][0] = 5;
    strcpy(sh.types[0], "long int");
    sh.rank[1] = 0;
    strcpy(sh.types[1], "Scalar");
    sh.rank[2] = 0;
    strcpy(sh.types[2], "float");
    assert_true(mb_tr_op_bytes(TR_MOP_INPLACE, &sh, &b, &why));
    assert_true(b == 44);
    /* a TensorList of 10 + 6 elements beside a bf16 tensor [3]: 32 + 6 */
    sh.n_tensors = sh.n_types = 2;
    sh.rank[0] = TR_RANK_LIST;
    sh.list_numel[0] = 16;
    strcpy(sh.types[0], "TensorList");
    sh.rank[1] = 1;
    sh.dims[1][0] = 3;
    strcpy(sh.types[1], "c10::BFloat16");
    assert_true(mb_tr_op_bytes(TR_MOP_INPLACE, &sh, &b, &why));
    assert_true(b == 38);
    /* update (an optimizer's foreach op): the first, the list, written back: 38 + 32 */
    assert_true(mb_tr_op_bytes(TR_MOP_UPDATE, &sh, &b, &why));
    assert_true(b == 70);
    /* lists only: no element size; with 1-byte elements, what a kernel's size multiplies: (16 + 16) + 16 */
    strcpy(sh.types[1], "TensorList");
    sh.rank[1] = TR_RANK_LIST;
    sh.list_numel[1] = 16;
    assert_false(mb_tr_op_bytes(TR_MOP_INPLACE, &sh, &b, &why));
    assert_non_null(strstr(why, "TensorList"));
    assert_true(mb_tr_op_list_unit_bytes(TR_MOP_UPDATE, &sh, &b));
    assert_true(b == 48);
    assert_false(mb_tr_op_list_unit_bytes(TR_MOP_GATHER, &sh, &b)); /* not the list type that is missing */
    /* too many dims to keep: refused, not guessed */
    sh.rank[0] = -1;
    strcpy(sh.types[0], "float");
    assert_false(mb_tr_op_bytes(TR_MOP_OUT, &sh, &b, &why));
    memset(&sh, 0, sizeof sh);
    assert_false(mb_tr_op_bytes(TR_MOP_OUT, &sh, &b, &why));
    assert_non_null(strstr(why, "Input Dims"));
    assert_false(mb_tr_op_bytes(TR_MOP_NONE, &sh, &b, &why));
    /* embedding(weight [32000, 1024] fp32, indices [8, 1024] long): per
     * index one row of 1024 read and written, not the whole table:
     * 8192 x 8 + 2 x 8192 x 1024 x 4 = 67174400 */
    put_tensor(&sh, 0, "float", 2, (int64_t[]){32000, 1024});
    put_tensor(&sh, 1, "long int", 2, (int64_t[]){8, 1024});
    assert_true(mb_tr_op_bytes(TR_MOP_GATHER, &sh, &b, &why));
    assert_true(b == 67174400);
    /* _embedding_bag(weight [1000, 64] fp32, indices [4096 x 20] long,
     * offsets [4096] long, scale_grad_by_freq, mode, sparse,
     * per_sample_weights None, include_last_offset, padding_idx): per index
     * one row of 64 read, the 4096 bags written not counted (a lower bound;
     * gather's row written per index would double it): 81920 x 8 + 81920 x
     * 64 x 4 = 21626880 */
    memset(&sh, 0, sizeof sh);
    put_tensor(&sh, 0, "float", 2, (int64_t[]){1000, 64});
    put_tensor(&sh, 1, "long int", 1, (int64_t[]){81920});
    put_tensor(&sh, 2, "long int", 1, (int64_t[]){4096});
    put_tensor(&sh, 3, "Scalar", 0, NULL);
    put_tensor(&sh, 4, "Scalar", 0, NULL);
    put_tensor(&sh, 5, "Scalar", 0, NULL);
    put_tensor(&sh, 6, "", 0, NULL);
    put_tensor(&sh, 7, "Scalar", 0, NULL);
    put_tensor(&sh, 8, "Scalar", 0, NULL);
    assert_true(mb_tr_op_bytes(TR_MOP_BAG, &sh, &b, &why));
    assert_true(b == 81920.0 * 8 + 81920.0 * 64 * 4);
    assert_true(b == 21626880);
    assert_true(mb_tr_op_bytes(TR_MOP_GATHER, &sh, &b, &why)); /* the same function: the row written too */
    assert_true(b == 81920.0 * 8 + 2 * 81920.0 * 64 * 4);
    /* int32 indices and offsets (torch takes both): 81920 x 4 + 81920 x 256 */
    strcpy(sh.types[1], "int");
    strcpy(sh.types[2], "int");
    assert_true(mb_tr_op_bytes(TR_MOP_BAG, &sh, &b, &why));
    assert_true(b == 81920.0 * 4 + 81920.0 * 64 * 4);
    /* no index input: no bytes, not the whole table's */
    strcpy(sh.types[1], "float");
    strcpy(sh.types[2], "float");
    assert_false(mb_tr_op_bytes(TR_MOP_BAG, &sh, &b, &why));
    assert_non_null(strstr(why, "index"));
    /* a model past the last (TR_MOP_BAG) is no memory-bound op's */
    assert_false(mb_tr_op_bytes(TR_MOP_BAG + 1, &sh, &b, &why));
    assert_string_equal(why, "not a memory-bound op");
    /* _embedding_bag_dense_backward(grad [4096, 64] fp32, indices [81920],
     * offset2bag [81920], bag_size [4096], maximum_indices [4096] long,
     * num_weights, scale_grad_by_freq, mode, per_sample_weights None,
     * padding_idx): no table-sized input, every tensor read once (reduce;
     * the table-sized gradient is the zeros -> fill_ it calls):
     * 4096 x 64 x 4 + 2 x 81920 x 8 + 2 x 4096 x 8 = 2424832 */
    memset(&sh, 0, sizeof sh);
    put_tensor(&sh, 0, "float", 2, (int64_t[]){4096, 64});
    put_tensor(&sh, 1, "long int", 1, (int64_t[]){81920});
    put_tensor(&sh, 2, "long int", 1, (int64_t[]){81920});
    put_tensor(&sh, 3, "long int", 1, (int64_t[]){4096});
    put_tensor(&sh, 4, "long int", 1, (int64_t[]){4096});
    put_tensor(&sh, 5, "Scalar", 0, NULL);
    put_tensor(&sh, 6, "Scalar", 0, NULL);
    put_tensor(&sh, 7, "Scalar", 0, NULL);
    put_tensor(&sh, 8, "", 0, NULL);
    put_tensor(&sh, 9, "Scalar", 0, NULL);
    assert_true(mb_tr_op_bytes(TR_MOP_REDUCE, &sh, &b, &why));
    assert_true(b == 2424832);
    /* nll_loss_forward(logits [8192, 32000] fp32, target [8192] long): one
     * logit per target, 8192 x (8 + 4) = 98304 */
    memset(&sh, 0, sizeof sh);
    put_tensor(&sh, 0, "float", 2, (int64_t[]){8192, 32000});
    put_tensor(&sh, 1, "long int", 1, (int64_t[]){8192});
    assert_true(mb_tr_op_bytes(TR_MOP_PICK, &sh, &b, &why));
    assert_true(b == 98304);
    /* avg_pool2d_backward(grad_out [2,3,4,4] fp16, self [2,3,8,8] fp16):
     * 192 read, a gradient of 768 written: 960 (the out model: 1728) */
    memset(&sh, 0, sizeof sh);
    put_tensor(&sh, 0, "c10::Half", 4, (int64_t[]){2, 3, 4, 4});
    put_tensor(&sh, 1, "c10::Half", 4, (int64_t[]){2, 3, 8, 8});
    assert_true(mb_tr_op_bytes(TR_MOP_GRADIENT, &sh, &b, &why));
    assert_true(b == 960);
    /* torch 2.x's [] for a TensorList: no bytes, not the 4 of the 0-d float */
    memset(&sh, 0, sizeof sh);
    put_tensor(&sh, 0, "TensorList", 0, NULL);
    put_tensor(&sh, 1, "float", 0, NULL);
    assert_false(mb_tr_op_bytes(TR_MOP_INPLACE, &sh, &b, &why));
    assert_non_null(strstr(why, "TensorList"));
    /* torch.compile's kernel arguments (torch's test_profiler: add_cos_sin on
     * [4,4] fp32): two inputs and the output once each, the count ignored */
    memset(&sh, 0, sizeof sh);
    for (int t = 0; t < 3; t++)
        put_tensor(&sh, t, "float", 2, (int64_t[]){4, 4});
    put_tensor(&sh, 3, "Scalar", 0, NULL);
    assert_true(mb_tr_op_bytes(TR_MOP_ARGS, &sh, &b, &why));
    assert_true(b == 192);
    /* more arguments than kept: unknown, not the first ones' bytes */
    sh.more = true;
    assert_false(mb_tr_op_bytes(TR_MOP_ARGS, &sh, &b, &why));
    assert_non_null(strstr(why, "more tensor arguments"));
    assert_int_equal(mb_tr_dtype_bytes("c10::BFloat16"), 2);
    assert_int_equal(mb_tr_dtype_bytes("double"), 8);
    assert_int_equal(mb_tr_dtype_bytes("Scalar"), 0);
}

/* ---- class rules -------------------------------------------------------------------- */

_Static_assert(TR_MOP_GATHER == 5 && TR_MOP_UPDATE == 8 && TR_MOP_BAG == 9, "test_rules spells the models' values");

static void test_rules(void **state)
{
    (void)state;
    tr_rules r;
    mb_err err = {0};
    assert_int_equal(mb_tr_rules_load(&r, NULL, &err), MB_OK);
    static const struct {
        int set;
        const char *name;
        const char *expect; /* class name, or value as text */
    } cases[] = {
        {TR_SET_KERNEL, "ncclDevKernel_AllGather_RING_LL(ncclDevComm*)", "nccl"},
        {TR_SET_KERNEL, "void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 32>", "other"},
        {TR_SET_KERNEL, "sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_nhwckrsc", "conv"},
        {TR_SET_KERNEL, "void cutlass_cudnn_infer::Kernel<cutlass_tensorop_s1688dgrad_optimized>", "conv"},
        {TR_SET_KERNEL, "cudnn_infer_volta_scudnn_128x64_relu_medium_nn_v1", "conv"},
        /* cuDNN's RNN kernels, mangled: matrix math and a bias add, no convolution */
        {TR_SET_KERNEL, "_Z23RNN_blockPersist_fp_GRUIfffLi128EEvPKT_PT0_S2_PS0_PKS3_S2_S5_iiiiii", "gemm"},
        {TR_SET_KERNEL, "_Z18persistRNN_addBiasIffEv14cudnnRNNMode_tiiPT_S2_", "other"},
        {TR_SET_KERNEL, "ampere_sgemm_128x64_nn", "gemm"},
        {TR_SET_KERNEL, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", "gemm"},
        {TR_SET_KERNEL, "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_nn_align4>", "gemm"},
        {TR_SET_KERNEL, "Cijk_Alik_Bljk_SB_Bias_AS_SAV_UserArgs_MT64x16x32", "gemm"},
        {TR_SET_KERNEL, "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor>", "other"},
        /* fbgemm_gpu names the library, not a product (HTA's trace_diff); its own matmuls still read */
        {TR_SET_KERNEL, "void fbgemm_gpu::permute_indices_weights_kernel<false, int, decltype(nullptr)>", "other"},
        {TR_SET_KERNEL, "void fbgemm_gpu::bf16_fast_gemv_kernel<4, 4, 128>", "gemm"},
        {TR_SET_KERNEL, "void gemmSN_TN_kernel<float, 128, 16, 2, 4, 4, 4, true>", "gemm"},
        {TR_SET_KERNEL, "gemmk1_kernel", "gemm"},
        /* DeepEP's all-to-all, public and as in DeepSeek's H800 trace; its layout kernel computes */
        {TR_SET_KERNEL, "void deep_ep::intranode::notify_dispatch<8>(int const*, int*, int)", "nccl"},
        {TR_SET_KERNEL, "void deep_ep::internode_ll::combine<7168, 9>(void*, int*)", "nccl"},
        {TR_SET_KERNEL, "void dpsk::ep::internode::cached_notify<false>(int, int, int)", "nccl"},
        {TR_SET_KERNEL, "void deep_ep::layout::get_dispatch_layout<256, 32, 8>(long const*, int*)", "other"},
        /* all-reduces outside NCCL: PyTorch's symmetric memory (TraceLens's B200 vLLM trace), vLLM's own */
        {TR_SET_KERNEL, "void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16, 8>(c10::BFloat16*)",
         "nccl"},
        {TR_SET_KERNEL, "void c10d::symmetric_memory::two_shot_all_reduce_kernel<float, 16>(float**)", "nccl"},
        {TR_SET_KERNEL, "void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData*)", "nccl"},
        /* cuDNN's layout conversions move memory (a compiled ResNet-18 on an RTX 4090): the "layout" rule, which
         * the reader counts as "other"; its kernels stay conv */
        {TR_SET_KERNEL, "void cudnn::engines_precompiled::nchwToNhwcKernel<float, float, float, false, true, "
                        "(cudnnKernelDataType_t)2>(cudnn::engines_precompiled::nchw2nhwc_params_t<float>)", "layout"},
        {TR_SET_KERNEL, "void cudnn::engines_precompiled::convertTensor_kernel<float, float, float, "
                        "(cudnnKernelDataType_t)2>(float, float const*, float, float*, unsigned long)", "other"},
        {TR_SET_KERNEL, "void cudnn::ops::nhwcToNchwKernel<float, float, float, true, false>(float const*)", "layout"},
        {TR_SET_KERNEL, "cudnn_infer_ampere_scudnn_128x64_relu_medium_nn_v1", "conv"},
        /* TensorRT-LLM's generated batched GEMMs (vLLM's MXFP4 experts on a B200) */
        {TR_SET_KERNEL, "bmm_MxE4m3_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3_et128x16_m128x16x32_cga1x1x1_16dp256b", "gemm"},
        {TR_SET_KERNEL, "void at::native::vectorized_elementwise_kernel<4, bmm_out_functor>(int)", "other"},
        /* Triton's fused attention: the tutorial's and AMD's (TraceLens's MI300X torch.compile trace) */
        {TR_SET_KERNEL, "attn_fwd", "attention"},
        {TR_SET_KERNEL, "_attn_bwd_dkdv", "attention"},
        {TR_SET_KERNEL, "_attn_fwd_inner", "attention"},
        {TR_SET_KERNEL, "void kernel_gattn_fwd<float>(float*)", "other"},
        /* torch.compile's kernels: the aten ops they fused in the name are not what they are */
        {TR_SET_KERNEL, "triton_poi_fused_convolution_relu_0", "other"},
        {TR_SET_KERNEL, "triton_per_fused__scaled_dot_product_efficient_attention_3", "other"},
        {TR_SET_KERNEL, "triton_red_fused__to_copy_mm_sum_2", "other"},
        {TR_SET_KERNEL, "triton_tem_fused_mm_0", "gemm"},
        {TR_SET_KERNEL, "triton_tem_fused_addmm_relu_3", "gemm"},
        {TR_SET_KERNEL, "triton_tem_fused_convolution_1", "other"},
        {TR_SET_RUNTIME, "cudaLaunchKernel", "1"},
        {TR_SET_RUNTIME, "cudaLaunchKernelExC", "1"},
        {TR_SET_RUNTIME, "hipExtModuleLaunchKernel", "1"},
        {TR_SET_RUNTIME, "cudaStreamSynchronize", "2"},
        {TR_SET_RUNTIME, "hipDeviceSynchronize", "2"},
        {TR_SET_RUNTIME, "cudaEventSynchronize", "2"},
        {TR_SET_RUNTIME, "hipMemcpyWithStream", "3"},
        {TR_SET_RUNTIME, "cudaMemcpyAsync", "0"},
        {TR_SET_RUNTIME, "cudaStreamWaitEvent", "0"},
        {TR_SET_ANNOTATION, "ProfilerStep#12", "1"},
        {TR_SET_ANNOTATION, "ProfilerStep#12 extra", "0"},
        {TR_SET_ANNOTATION, "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", "2"},
        {TR_SET_ANNOTATION, "## forward ##", "0"},
        /* [memory_op]: 1 out, 2 inplace, 3 reduce, 0 not a memory-bound op */
        {TR_SET_MEMOP, "aten::add", "1"},
        {TR_SET_MEMOP, "aten::add_", "2"},
        {TR_SET_MEMOP, "aten::threshold_backward", "1"},
        {TR_SET_MEMOP, "aten::native_batch_norm_backward", "1"},
        {TR_SET_MEMOP, "aten::_softmax_backward_data", "1"},
        {TR_SET_MEMOP, "aten::sum", "3"},
        {TR_SET_MEMOP, "aten::_foreach_norm", "3"},
        {TR_SET_MEMOP, "aten::_foreach_addcdiv_", "8"}, /* update: its first list written back */
        {TR_SET_MEMOP, "aten::_foreach_sqrt", "1"},
        {TR_SET_MEMOP, "aten::addcmul_", "2"},
        {TR_SET_MEMOP, "aten::sin", "1"}, /* RoPE */
        {TR_SET_MEMOP, "aten::erf_", "2"},
        {TR_SET_MEMOP, "aten::upsample_nearest2d", "1"},
        {TR_SET_MEMOP, "aten::upsample_bilinear2d_backward", "3"},
        {TR_SET_MEMOP, "aten::argmax", "3"},
        {TR_SET_MEMOP, "aten::eq", "0"}, /* a bool output: the "out" model would overcount it */
        {TR_SET_MEMOP, "aten::addmm", "0"},
        {TR_SET_MEMOP, "aten::empty_strided", "0"},
        {TR_SET_MEMOP, "aten::add__", "0"},
        {TR_SET_MEMOP, "triton_poi_fused_add_cos_sin_0", "7"}, /* arguments */
        {TR_SET_MEMOP, "triton_for_fused_0", "7"},
        {TR_SET_MEMOP, "triton_tem_fused_mm_0", "0"},
        /* EmbeddingBag: 9 bag (TR_MOP_BAG; a row read per index, the bags not counted), its backward 3 reduce */
        {TR_SET_MEMOP, "aten::embedding_bag", "9"},
        {TR_SET_MEMOP, "aten::_embedding_bag", "9"},
        {TR_SET_MEMOP, "aten::_embedding_bag_forward_only", "9"},
        {TR_SET_MEMOP, "aten::_embedding_bag_backward", "3"},
        {TR_SET_MEMOP, "aten::_embedding_bag_dense_backward", "3"},
        {TR_SET_MEMOP, "aten::_embedding_bag_sparse_backward", "3"},
        {TR_SET_MEMOP, "aten::_embedding_bag_per_sample_weights_backward", "9"},
        {TR_SET_MEMOP, "aten::embedding", "5"}, /* gather */
        {TR_SET_MEMOP, "aten::embedding_dense_backward", "3"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        for (int twice = 0; twice < 2; twice++) { /* second time from the cache */
            int v = mb_tr_classify(&r, cases[i].set, cases[i].name, strlen(cases[i].name));
            char got[32];
            if (cases[i].set == TR_SET_KERNEL)
                snprintf(got, sizeof got, "%s", r.class_names[v]);
            else
                snprintf(got, sizeof got, "%d", v);
            if (strcmp(got, cases[i].expect) != 0)
                fail_msg("%s: got %s, expected %s", cases[i].name, got, cases[i].expect);
        }
    }
    /* JSON names may hold \u0000: the cache keys on all len bytes, so names
     * that differ only after the NUL are two entries, and each is classified
     * by the text before the NUL, the same way from the cache (the cache
     * once compared them as C strings and read past its copy: fuzz_trace). */
    const char nul_a[] = "aten::add_\0a", nul_b[] = "aten::add_\0b";
    size_t used = r.cache_used;
    for (int twice = 0; twice < 2; twice++) {
        assert_int_equal(mb_tr_classify(&r, TR_SET_MEMOP, nul_a, sizeof nul_a - 1), TR_MOP_INPLACE);
        assert_int_equal(mb_tr_classify(&r, TR_SET_MEMOP, nul_b, sizeof nul_b - 1), TR_MOP_INPLACE);
    }
    assert_int_equal(r.cache_used, used + 2);
    mb_tr_rules_free(&r);

    const char *bad = tmp_path("bad.ini");
    const char *text = "[kernel]\ngemm = gemm\nconv = (unclosed\n";
    write_text(bad, text, strlen(text));
    assert_int_equal(mb_tr_rules_load(&r, bad, &err), MB_EUSAGE);
    assert_non_null(strstr(err.msg, "bad regular expression"));
    assert_non_null(strstr(err.msg, "line 3"));
    mb_err_clear(&err);
    text = "[kernels]\ngemm = gemm\n";
    write_text(bad, text, strlen(text));
    assert_int_equal(mb_tr_rules_load(&r, bad, &err), MB_EUSAGE);
    assert_non_null(strstr(err.msg, "unknown section"));
    mb_err_clear(&err);
    text = "[runtime]\nlaunch = x\n[annotation]\nstep = y\n[memory_op]\nwrites = ^aten::add$\n";
    write_text(bad, text, strlen(text));
    assert_int_equal(mb_tr_rules_load(&r, bad, &err), MB_EUSAGE);
    assert_non_null(strstr(err.msg, "out, inplace, reduce, gradient, gather, bag, pick, arguments or update"));
    mb_err_clear(&err);
    assert_int_equal(mb_tr_rules_load(&r, tmp_path("missing.ini"), &err), MB_EUSAGE);
    assert_non_null(strstr(err.msg, "cannot open"));
    /* Stacked or nested repetitions make glibc's regcomp exponential
     * (fuzz_gapconfig): refused before compiling, with the line. */
    static const char *const costly[] = {
        "[kernel]\ngemm = ger++++++++++++++++++++++++++++++++++++++++++++++++\n",
        "[kernel]\ngemm = ((((((((((a+)+)+)+)+)+)+)+)+)+)\n",
        "[kernel]\ngemm = (a{1,1000})\n",
    };
    for (size_t i = 0; i < sizeof costly / sizeof *costly; i++) {
        mb_err_clear(&err);
        write_text(bad, costly[i], strlen(costly[i]));
        assert_int_equal(mb_tr_rules_load(&r, bad, &err), MB_EUSAGE);
        if (!strstr(err.msg, "too costly to compile") || !strstr(err.msg, "line 2"))
            fail_msg("%s: %s", costly[i], err.msg);
    }
    /* what the shipped rules use still compiles: one +, classes with + inside */
    mb_err_clear(&err);
    text = "[kernel]\ngemm = gemm|[+*]x+\n[runtime]\nlaunch = cudaLaunchKernel\nsync = Synchronize\n"
           "[annotation]\nstep = ^ProfilerStep#[0-9]+$\n";
    write_text(bad, text, strlen(text));
    assert_int_equal(mb_tr_rules_load(&r, bad, &err), MB_OK);
    mb_tr_rules_free(&r);
}

/* ---- malformed inputs ----------------------------------------------------------------- */

static void expect_usage(const char *path, const char *needle1, const char *needle2)
{
    mb_run r;
    mb_err err = {0};
    int rc = mb_trace_read(path, &r, &err);
    if (rc != MB_EUSAGE)
        fail_msg("%s: rc %d (%s), expected MB_EUSAGE", path, rc, err.msg);
    if (strstr(err.msg, needle1) == NULL || (needle2 && strstr(err.msg, needle2) == NULL))
        fail_msg("%s: message \"%s\" lacks \"%s\"/\"%s\"", path, err.msg, needle1,
                 needle2 ? needle2 : "");
    /* nothing half-built comes back */
    assert_int_equal(r.n_stages, 0);
    assert_null(r.evidence);
    assert_null(r.path);
    assert_int_equal(r.n_warnings, 0);
}

/* Bounds on hostile input (docs/reliability.md): nesting past 1000 levels,
 * one string longer than 16 MiB, and a gzip bomb are errors that say so,
 * not a stack of 10^6 levels or a 1 GiB string buffer. */
static void test_hostile_bounds(void **state)
{
    (void)state;
    /* 1001 nested arrays inside an event's args */
    size_t depth = 1001;
    size_t cap = 2 * depth + 256;
    char *t = malloc(cap);
    assert_non_null(t);
    size_t n = (size_t)sprintf(t, "{\"traceEvents\": [{\"ph\": \"X\", \"args\": {\"x\": ");
    memset(t + n, '[', depth);
    n += depth;
    memset(t + n, ']', depth);
    n += depth;
    n += (size_t)sprintf(t + n, "}}]}");
    const char *p = tmp_path("nested.json");
    write_text(p, t, n);
    expect_usage(p, "nested deeper than 1000 levels", "byte ");
    free(t);

    /* one 17 MiB string (a kernel name) */
    size_t len = 17u << 20;
    t = malloc(len + 256);
    assert_non_null(t);
    n = (size_t)sprintf(t, "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"");
    memset(t + n, 'a', len);
    n += len;
    n += (size_t)sprintf(t + n, "\", \"ts\": 1, \"dur\": 1}]}");
    p = tmp_path("long_string.json");
    write_text(p, t, n);
    expect_usage(p, "longer than 16 MiB", NULL);
    free(t);

    /* A copy claiming more than 2^53 bytes (found by fuzz_trace: its block
     * size overflowed a long long) counts as unsized; the copy stage's work
     * falls back to seconds, and a collective with such a size is unsized. */
    static const char huge[] =
        "{\"traceEvents\": ["
        "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoD (Pinned -> Device)\","
        "\"ts\":1,\"dur\":2,\"args\":{\"device\":0,\"stream\":7,\"bytes\":4096}},"
        "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoD (Pinned -> Device)\","
        "\"ts\":5,\"dur\":2,\"args\":{\"device\":0,\"stream\":7,"
        "\"bytes\":48579223372036858076}}]}";
    p = tmp_path("huge_bytes.json");
    write_text(p, huge, sizeof huge - 1);
    mb_run r;
    mb_err err = {0};
    assert_int_equal(mb_trace_read(p, &r, &err), MB_OK);
    const mb_stage *s = stage(&r, "copy h2d pinned");
    assert_non_null(s);
    assert_int_equal(s->count, 2);
    assert_int_equal(s->block_size, 0);
    assert_string_equal(s->work_unit, "s");
    mb_run_free(&r);
}

static void test_malformed(void **state)
{
    (void)state;
    char *t = synthetic_trace(false);
    size_t n = strlen(t);
    const char *p = tmp_path("truncated.json");
    write_text(p, t, n * 3 / 5);
    expect_usage(p, "ends early", "line ");
    p = tmp_path("garbage.json");
    write_text(p, "hello world\n\x01\x02", 14);
    expect_usage(p, "byte 0 (line 1)", "expected");
    p = tmp_path("broken.json");
    write_text(p, "{\"traceEvents\": [\n{\"ph\": \"X\",\n \"ts\": 1,, }]}", 44);
    expect_usage(p, "byte 39 (line 3)", "invalid object key"); /* the second comma */
    p = tmp_path("notrace.json");
    write_text(p, "{\"a\": [1, 2, {\"b\": 3}]}", 23);
    expect_usage(p, "no traceEvents", NULL);
    p = tmp_path("et.json"); /* an execution trace (HTA's benchmark_simple_add_et.json): said so */
    write_text(p, "{\"schema\": \"1.0.1\", \"nodes\": [{\"id\": 1}]}", 41);
    expect_usage(p, "a PyTorch execution trace", "record the loop with torch.profiler");
    p = tmp_path("scalar.json");
    write_text(p, "42", 2);
    expect_usage(p, "single value", NULL);
    p = tmp_path("events_map.json");
    write_text(p, "{\"traceEvents\": {}}", 19);
    expect_usage(p, "traceEvents is not an array", NULL);
    p = tmp_path("event_num.json");
    write_text(p, "{\"traceEvents\": [{\"ph\":\"i\"}, 1]}", 32);
    expect_usage(p, "traceEvents[1] is not an object", "byte 29 (line 1)");
    p = tmp_path("empty.json");
    write_text(p, "", 0);
    expect_usage(p, "empty file", NULL);
    expect_usage(tmp_path("does_not_exist.json"), "cannot open", NULL);
    /* Timings that are not the run's: the CUPTI range profiler's kernels
     * (HTA's cupti_profiler trace read as "launch 43.6%" beside ops that add
     * up to 100% on their own), launches whose GPU side was not recorded,
     * another accelerator's (HTA's MTIA traces: the ops ran there, not on
     * the CPU). */
#define CONV_OP "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::conv2d\",\"ts\":0,\"dur\":90},"
#define LAUNCH1 "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"ts\":1,\"dur\":8," \
                "\"args\":{\"correlation\":1}}"
    static const struct {
        const char *file, *text, *needle1, *needle2;
    } not_the_run[] = {
        {"ranges.json",
         "{\"traceEvents\": [" CONV_OP LAUNCH1 ",{\"ph\":\"X\",\"cat\":\"cuda_profiler_range\","
         "\"name\":\"sm80_xmma_fprop\",\"ts\":2,\"dur\":3}]}",
         "CUPTI range profiler (1 cuda_profiler_range event,", "profile without profiler_metrics"},
        {"no_gpu.json", "{\"traceEvents\": [" CONV_OP LAUNCH1 "]}", "1 kernel launch call but no GPU activity",
         "ProfilerActivity.CUDA"},
        {"mtia.json",
         "{\"traceEvents\": [" CONV_OP "{\"ph\":\"X\",\"cat\":\"mtia_runtime\",\"name\":\"runFunction\","
         "\"ts\":1,\"dur\":8}]}",
         "1 runtime call of an accelerator mlbench does not read (mtia_runtime)", "CPU-only"},
    };
#undef CONV_OP
#undef LAUNCH1
    for (size_t i = 0; i < sizeof not_the_run / sizeof *not_the_run; i++) {
        p = tmp_path(not_the_run[i].file);
        write_text(p, not_the_run[i].text, strlen(not_the_run[i].text));
        expect_usage(p, not_the_run[i].needle1, not_the_run[i].needle2);
    }

    /* gzip: a body big enough to span several deflate blocks, corrupted in
     * the middle, and cut short. */
    size_t big = 0, cap = 64 * n;
    char *body = malloc(cap + 64);
    big += (size_t)sprintf(body, "{\"traceEvents\":[\n");
    for (int i = 0; i < 40; i++) {
        memcpy(body + big, synthetic_events, strlen(synthetic_events));
        big += strlen(synthetic_events);
        body[big - 1] = ',';
        body[big++] = '\n';
    }
    big += (size_t)sprintf(body + big, "{\"ph\":\"i\"}]}\n");
    p = tmp_path("ok.json.gz");
    write_gz(p, body, big);
    mb_run r;
    mb_err err = {0};
    assert_int_equal(mb_trace_read(p, &r, &err), MB_OK);
    mb_run_free(&r);
    size_t gzn;
    char *gz = read_all(p, &gzn);
    for (size_t i = gzn / 3; i < gzn / 3 + 32; i++)
        gz[i] = (char)(gz[i] ^ 0x5a);
    p = tmp_path("corrupt.json.gz");
    write_text(p, gz, gzn);
    expect_usage(p, "byte ", NULL);
    free(gz);
    gz = read_all(tmp_path("ok.json.gz"), &gzn);
    p = tmp_path("cut.json.gz");
    write_text(p, gz, gzn / 2);
    expect_usage(p, "ends early", "compressed byte");
    free(gz);
    free(body);
    free(t);
}

/* ---- fixtures vs tests/trace_check.py -------------------------------------------------- */

static const char *fixture_dir(void)
{
    static char dir[1024];
    const char *shared = getenv("MLBENCH_SHARED");
    snprintf(dir, sizeof dir, "%s/fixtures/kineto", shared ? shared : "/work/shared");
    return dir;
}

static cJSON *independent(const char *trace)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "python3 '%s/tests/trace_check.py' '%s' '%s/configs/gap/kernel_classes.ini'",
             MB_TEST_SRC, trace, MB_TEST_SRC);
    FILE *f = popen(cmd, "r");
    assert_non_null(f);
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    size_t k;
    while ((k = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += k;
        if (cap - n < 4096)
            buf = realloc(buf, cap *= 2);
    }
    buf[n] = '\0';
    assert_int_equal(pclose(f), 0);
    cJSON *j = cJSON_Parse(buf);
    free(buf);
    assert_non_null(j);
    return j;
}

static void compare_with_python(const char *trace, const mb_run *r)
{
    cJSON *py = independent(trace);
    cJSON *ev = r->evidence;
    cJSON *pdevs = cJSON_GetObjectItemCaseSensitive(py, "devices");
    cJSON *cdevs = cJSON_GetObjectItemCaseSensitive(ev, "devices");
    assert_int_equal(cJSON_GetArraySize(pdevs), cJSON_GetArraySize(cdevs));
    for (int d = 0; d < cJSON_GetArraySize(pdevs); d++) {
        cJSON *pd = cJSON_GetArrayItem(pdevs, d), *cd = cJSON_GetArrayItem(cdevs, d);
        assert_true(num(pd, "id") == num(cd, "id"));
        NS_EQ(num(cd, "busy_s"), (long long)num(pd, "busy_ns"));
        NS_EQ(num(cd, "window_s"), (long long)num(pd, "window_ns"));
        NS_EQ(num(cd, "host_wait_idle_s"), (long long)num(pd, "host_wait_idle_ns"));
        assert_true(num(pd, "kernels") == num(cd, "kernels"));
        assert_true(num(pd, "memcpys") == num(cd, "memcpys"));
        assert_true(num(pd, "memsets") == num(cd, "memsets"));
        cJSON *c;
        cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(pd, "classes"))
        {
            char key[128];
            snprintf(key, sizeof key, "classes.%s.count", c->string);
            if (num(cd, key) != c->valuedouble)
                fail_msg("%s: class %s: reader %g, check %g", trace, c->string, num(cd, key),
                         c->valuedouble);
        }
        cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(pd, "copies"))
        {
            double bytes = 0;
            cJSON *k;
            cJSON_ArrayForEach(k, cJSON_GetObjectItemCaseSensitive(cd, "copies"))
            {
                char key[64];
                snprintf(key, sizeof key, "%s %s",
                         cJSON_GetStringValue(cJSON_GetObjectItem(k, "direction")),
                         cJSON_GetStringValue(cJSON_GetObjectItem(k, "memory")));
                cJSON *b = cJSON_GetObjectItem(k, "bytes");
                if (strcmp(key, c->string) == 0 && cJSON_IsNumber(b))
                    bytes = b->valuedouble;
            }
            if (bytes != c->valuedouble)
                fail_msg("%s: copy %s: reader %.0f bytes, check %.0f", trace, c->string, bytes,
                         c->valuedouble);
        }
    }
    cJSON *psteps = cJSON_GetObjectItemCaseSensitive(py, "steps");
    assert_int_equal(cJSON_GetArraySize(psteps), r->steps);
    for (int s = 0; s < r->steps && s < 1000; s++) {
        char key[64];
        snprintf(key, sizeof key, "steps.%d.seconds", s);
        NS_EQ(num(ev, key), (long long)num(cJSON_GetArrayItem(psteps, s), "ns"));
        for (int d = 0; d < cJSON_GetArraySize(cdevs); d++) {
            char pk[64];
            snprintf(key, sizeof key, "steps.%d.devices.%d.busy_s", s, d);
            snprintf(pk, sizeof pk, "devices.%.0f.busy_ns", num(cJSON_GetArrayItem(cdevs, d), "id"));
            NS_EQ(num(ev, key), (long long)num(cJSON_GetArrayItem(psteps, s), pk));
            snprintf(key, sizeof key, "steps.%d.devices.%d.host_wait_idle_s", s, d);
            snprintf(pk, sizeof pk, "devices.%.0f.host_wait_idle_ns",
                     num(cJSON_GetArrayItem(cdevs, d), "id"));
            NS_EQ(num(ev, key), (long long)num(cJSON_GetArrayItem(psteps, s), pk));
        }
    }
    if (r->steps > 0 && cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ev, "step"), "timeline")) {
        /* one step time: the step table's, the mean of its windows, on the timeline both chose */
        NS_EQ(r->step_seconds, llround(num(py, "step_mean_ns")));
        assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
                                cJSON_GetObjectItemCaseSensitive(ev, "step"), "timeline")),
                            cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(py, "timeline")));
    } else if (r->steps > 0)
        NS_EQ(r->step_seconds, llround(num(py, "step_median_ns")));
    assert_true(num(py, "launches") == num(ev, "host.launch.count"));
    assert_true(num(py, "syncs") == num(ev, "host.sync.count"));
    cJSON_Delete(py);
}

static mb_run read_fixture(const char *name)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", fixture_dir(), name);
    mb_run r;
    mb_err err = {0};
    int rc = mb_trace_read(path, &r, &err);
    if (rc != MB_OK)
        fail_msg("%s: %s", name, err.msg);
    compare_with_python(path, &r);
    return r;
}

static void test_fixture_a100_alexnet(void **state)
{
    (void)state;
    mb_run r = read_fixture("critical_path__alexnet__benchmark_result_2869224_1695835535_trace.json.gz");
    assert_string_equal(cJSON_GetStringValue(path_get(r.evidence, "devices.0.name")),
                        "NVIDIA A100-PG509-200");
    const mb_stage *s = stage(&r, "copy h2d pageable");
    assert_non_null(s);
    assert_true(s->work == 244403360 && s->count == 16);
    assert_non_null(stage(&r, "conv"));
    assert_non_null(stage(&r, "gemm"));
    assert_true(partial_has(&r, "no ProfilerStep"));
    assert_true(partial_has(&r, "matmul/conv shapes not recorded"));
    assert_true(partial_has(&r, "memory-bound op shapes not recorded")); /* aten::add_, relu_, ... */
    assert_null(stage(&r, MB_MEMBOUND_STAGE));
    assert_int_equal(r.steps, 0);
    assert_int_equal((int)num(r.evidence, "host.cuda_sync_events.Stream Sync"), 16);
    mb_run_free(&r);
}

static void test_fixture_nccl(void **state)
{
    (void)state;
    mb_run r = read_fixture("nccl_parser_config__nccl_data.json.gz");
    const mb_stage *s = stage(&r, "allreduce");
    assert_non_null(s);
    assert_string_equal(s->component, "allreduce");
    assert_string_equal(s->work_unit, "byte");
    assert_string_equal(s->dtype, "float");
    assert_int_equal(s->ranks, 2);
    assert_int_equal(s->count, 15);
    assert_true(s->work > 0 && fmod(s->work, 4) == 0);
    /* broadcasts of two dtypes: two stages that read apart */
    assert_null(stage(&r, "broadcast"));
    assert_non_null(stage(&r, "broadcast float"));
    assert_non_null(stage(&r, "broadcast Long"));
    assert_int_equal((int)num(r.evidence, "devices.0.classes.nccl.count"), 21);
    assert_int_equal((int)num(r.evidence, "world_size"), 2);
    assert_non_null(stage(&r, "copy d2d"));
    assert_int_equal(r.steps, 3);
    assert_true(r.gpu_utilization > 0.2 && r.gpu_utilization < 0.3);
    mb_run_free(&r);
}

static void test_fixture_v100_ns(void **state)
{
    (void)state;
    mb_run r = read_fixture("ns_resolution_trace__rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz");
    assert_string_equal(cJSON_GetStringValue(path_get(r.evidence, "devices.0.name")),
                        "Tesla V100-SXM2-32GB");
    assert_int_equal(r.steps, 5);
    assert_true(r.gpu_utilization > 0.95);
    mb_run_free(&r);
}

static void test_fixture_sampled(void **state)
{
    (void)state;
    mb_run r = read_fixture("trace_filter__sampled_rank-0.json.gz");
    assert_true(partial_has(&r, "no deviceProperties"));
    assert_true(partial_has(&r, "no size args")); /* SendRecv kernels without args */
    const mb_stage *s = stage(&r, "copy h2d pinned");
    assert_non_null(s);
    assert_true(s->work == 4849696);
    /* record_shapes=1; its A100 ran most fp32 matmuls as TF32 (CUTLASS's
     * cutlass_80_tensorop_s1688gemm_* kernels), the rest on gemv/ffma ones */
    s = stage(&r, "gemm tf32");
    assert_non_null(s);
    assert_string_equal(s->work_unit, "flop");
    assert_true(s->work > 0 && s->seconds > 0);
    assert_non_null(strstr(s->source, "TF32 math"));
    s = stage(&r, "gemm fp32");
    assert_non_null(s);
    assert_true(s->work > 0 && s->seconds > 0);
    assert_non_null(stage(&r, "sendrecv"));
    assert_int_equal((int)num(r.evidence, "world_size"), 128);
    mb_run_free(&r);
}

static void test_fixture_amd(void **state)
{
    (void)state;
    mb_run r = read_fixture("amd_trace__mi250_minitoy_train_ROCm6_2_kineto.json.gz");
    assert_int_equal((int)num(r.evidence, "devices.0.id"), 2);
    assert_string_equal(cJSON_GetStringValue(path_get(r.evidence, "devices.0.name")),
                        "AMD Radeon Graphics");
    assert_true(partial_has(&r, "no byte count"));
    assert_true(partial_has(&r, "no distributedInfo"));
    /* addmm 5x128 @ 128x128 and mm 128x5 @ 5x128: 2 * 2*5*128*128 */
    const mb_stage *s = stage(&r, "gemm");
    assert_non_null(s);
    assert_true(s->work == 327680);
    s = stage(&r, "copy h2d");
    assert_non_null(s);
    assert_string_equal(s->work_unit, "s");
    assert_null(s->memory);
    assert_int_equal((int)num(r.evidence, "host.sync.calls.hipDeviceSynchronize.count"), 1);
    assert_int_equal((int)num(r.evidence, "host.blocking_copy.count"), 2);
    mb_run_free(&r);
}

static void test_fixture_cpu_only(void **state)
{
    (void)state;
    mb_run r = read_fixture("cpu_only__rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz");
    assert_true(partial_has(&r, "no GPU events"));
    assert_true(partial_has(&r, "deviceProperties is empty"));
    assert_int_equal(r.steps, 1);
    assert_true(r.gpu_utilization < 0);
    /* CPU-only (trace_cpu.c): the one 210.109 ms ProfilerStep is mostly the
     * host inside gloo:all_reduce (two threads, counted once); the rest is
     * Python. The stages add up to the step. Each gloo:all_reduce records
     * its tensor (Input Dims x Input type): the two in the step move
     * (321271 + 2082411) floats, among distributedInfo's 300 ranks. */
    const mb_stage *coll = stage(&r, "allreduce (host)"), *py = stage(&r, "python (host code)");
    assert_non_null(coll);
    assert_non_null(py);
    assert_string_equal(coll->device, "cpu");
    assert_string_equal(coll->component, "allreduce");
    assert_string_equal(coll->work_unit, "byte");
    assert_true(coll->work == (321271.0 + 2082411.0) * 4);
    assert_int_equal(coll->count, 2);
    assert_int_equal(coll->ranks, 300);
    assert_string_equal(coll->dtype, "float");
    assert_true(coll->seconds > 0.15 && coll->seconds < 0.2101);
    assert_true(fabs(coll->seconds + py->seconds - 0.210109162) < 1e-6);
    const cJSON *step = cJSON_GetObjectItemCaseSensitive(r.evidence, "step");
    assert_true(cJSON_IsObject(step));
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(step, "where")->valuestring, "cpu");
    assert_int_equal((int)num(r.evidence, "world_size"), 300);
    mb_run_free(&r);
    /* `mlbench trace` JSON: an unknown utilization is null, not -1 */
    char path[4096];
    snprintf(path, sizeof path, "%s/cpu_only__rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz", fixture_dir());
    FILE *out = tmpfile();
    assert_non_null(out);
    mb_err err = {0};
    assert_int_equal(mb_trace_dump(path, out, &err), MB_OK);
    long n = ftell(out);
    char *text = malloc((size_t)n + 1);
    rewind(out);
    assert_true(fread(text, 1, (size_t)n, out) == (size_t)n);
    text[n] = '\0';
    fclose(out);
    cJSON *doc = cJSON_Parse(text);
    free(text);
    assert_non_null(doc);
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(doc, "gpu_utilization")));
    cJSON_Delete(doc);
}

static void test_fixture_no_dist_info(void **state)
{
    (void)state;
    mb_run r = read_fixture("distributed_info_unavailable__distributed_info_not_found.json.gz");
    assert_true(partial_has(&r, "no distributedInfo"));
    assert_true(partial_has(&r, "no GPU events"));
    const mb_stage *s = stage(&r, "dataloading");
    assert_non_null(s);
    assert_int_equal(s->count, 1);
    NS_EQ(s->seconds, 71000);
    assert_true(num(r.evidence, "rates.ops_without_shapes.gemm") == 0);
    mb_run_free(&r);
}

/* ---- the large generated trace ---------------------------------------------------------- */

static int check_large(const char *trace, const char *summary_path)
{
    size_t n;
    FILE *f = fopen(summary_path, "r");
    if (f == NULL)
        return 1;
    fseek(f, 0, SEEK_END);
    n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = calloc(1, n + 1);
    if (fread(text, 1, n, f) != n)
        return 1;
    fclose(f);
    cJSON *sum = cJSON_Parse(text);
    free(text);
    mb_run r;
    mb_err err = {0};
    if (mb_trace_read(trace, &r, &err) != MB_OK) {
        fprintf(stderr, "large trace: %s\n", err.msg);
        return 1;
    }
    cJSON *ev = r.evidence;
    int bad = 0;
#define SAME(what, got, want)                                                                     \
    do {                                                                                            \
        double g_ = (got), w_ = (want);                                                             \
        if (fabs(g_ - w_) > 1e-9 * fabs(w_) + 1e-12) {                                              \
            fprintf(stderr, "large trace: %s: reader %.17g, generator %.17g\n", what, g_, w_);      \
            bad++;                                                                                  \
        }                                                                                           \
    } while (0)
    SAME("busy ns", llround(num(ev, "devices.0.busy_s") * 1e9), num(sum, "busy_ns"));
    SAME("gemm kernels", num(ev, "devices.0.classes.gemm.count"), num(sum, "kernels.gemm"));
    SAME("conv kernels", num(ev, "devices.0.classes.conv.count"), num(sum, "kernels.conv"));
    SAME("nccl kernels", num(ev, "devices.0.classes.nccl.count"), num(sum, "kernels.nccl"));
    SAME("other kernels", num(ev, "devices.0.classes.other.count"), num(sum, "kernels.other"));
    SAME("memcpys", num(ev, "devices.0.memcpys"), num(sum, "memcpys"));
    SAME("memsets", num(ev, "devices.0.memsets"), num(sum, "memsets"));
    SAME("steps", r.steps, num(sum, "steps"));
    /* the step: the step table's mean of the ProfilerSteps (every step synchronises: the host's timeline) */
    const char *timeline =
        cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ev, "step"), "timeline"));
    if (fabs(r.step_seconds * 1e9 - num(sum, "step_mean_ns")) > 1 || timeline == NULL ||
        strcmp(timeline, "host") != 0) {
        fprintf(stderr, "large trace: step mean: reader %.1f ns, generator %.1f ns\n", r.step_seconds * 1e9,
                num(sum, "step_mean_ns"));
        bad++;
    }
    SAME("launches", num(ev, "host.launch.count"), num(sum, "launches"));
    SAME("syncs", num(ev, "host.sync.count"), num(sum, "syncs"));
    SAME("dataloader", num(ev, "host.dataloader.count"), num(sum, "dataloader"));
    SAME("json bytes", num(ev, "trace.json_bytes"), num(sum, "json_bytes"));
    const mb_stage *s = stage(&r, "gemm");
    SAME("gemm flops", s ? s->work : -1, num(sum, "gemm_flops"));
    s = stage(&r, "conv");
    SAME("conv flops", s ? s->work : -1, num(sum, "conv_flops"));
    s = stage(&r, MB_MEMBOUND_STAGE);
    SAME("memory-bound op bytes", s ? s->work : -1, num(sum, "memory_bytes"));
    s = stage(&r, "allreduce");
    SAME("allreduce bytes", s ? s->work : -1, num(sum, "allreduce_bytes"));
    s = stage(&r, "copy h2d pinned");
    SAME("h2d pinned bytes", s ? s->work : -1, num(sum, "memcpy_bytes.h2d pinned"));
    mb_run_free(&r);
    cJSON_Delete(sum);
    return bad ? 1 : 0;
}

/* A field of /proc/self/status in MB (VmRSS: now, VmHWM: peak). */
static double status_mb(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    double kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, key, strlen(key)) == 0)
            kb = strtod(line + strlen(key), NULL);
    if (f)
        fclose(f);
    return kb / 1024.0;
}

/* In the child: the figures, and the memory the reader added to a process
 * that may already be large (the CUDA libraries mlbench links, cuBLASLt
 * above all, take ~200 MB of RSS at load time before main runs). */
static int large_child(const char *trace, const char *summary)
{
    double base = status_mb("VmRSS:");
    int rc = check_large(trace, summary);
    double peak = status_mb("VmHWM:");
    printf("large trace: peak RSS %.1f MB, of which the reader %.1f MB (process at start %.1f MB)\n",
           peak, peak - base, base);
    if (peak - base >= 150) {
        fprintf(stderr, "large trace: the reader grew RSS by %.1f MB (limit 150 MB)\n", peak - base);
        rc = 1;
    }
    fflush(stdout);
    return rc;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int run_large(void)
{
    const char *work = getenv("WORK");
    char dir[1024], trace[1100], summary[1100], cmd[4096];
    snprintf(dir, sizeof dir, "%s", work && *work ? work : "/tmp/mlbench-trace-large");
    mkdir(dir, 0755);
    snprintf(trace, sizeof trace, "%s/large_trace.json", dir);
    snprintf(summary, sizeof summary, "%s/large_trace.summary.json", dir);
    const char *mb = getenv("MB_TRACE_LARGE_MB");
    snprintf(cmd, sizeof cmd, "python3 '%s/scripts/gen_large_trace.py' --out '%s' --mb %s --summary '%s'",
             MB_TEST_SRC, trace, mb && *mb ? mb : "300", summary);
    if (system(cmd) != 0) {
        fprintf(stderr, "large trace: generator failed: %s\n", cmd);
        return 1;
    }
    struct stat st;
    stat(trace, &st);
    double t0 = now_s();
    pid_t pid = fork();
    if (pid == 0)
        _exit(large_child(trace, summary));
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) {
        fprintf(stderr, "large trace: fork/wait failed: %s\n", strerror(errno));
        return 1;
    }
    double secs = now_s() - t0;
    unlink(trace);
    unlink(summary);
    rmdir(dir);
    printf("large trace: %.1f MB read and checked in %.2f s (%.0f MB/s, one core)\n",
           (double)st.st_size / 1e6, secs, (double)st.st_size / 1e6 / secs);
    int failed = !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    printf("%d passed, %d failed\n", failed ? 0 : 1, failed ? 1 : 0);
    return failed;
}

/* ---- main ------------------------------------------------------------------------------ */

static int make_tmpdir(void **state)
{
    (void)state;
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/mb_test_trace_XXXXXX", base && *base ? base : "/tmp");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int remove_tmpdir(void **state)
{
    (void)state;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

/* A CPU-only run (trace_cpu.c), in Kineto's object form with shapes and in
 * the bare-array form torch.autograd.profiler writes without Kineto (no
 * "cat": events read by their names), known answers in microseconds: one
 * 1000 us step = data 100 + gemm 280 (the addmm inside a 300-us linear,
 * 2*5*128*128 FLOPs once) + other ops 70 (relu 50, the linear's own 20) +
 * optimizer 200 (its add_ inside counts there) + Python 350. */
static const char *const cpu_events[] = {
    "{\"ph\":\"X\",%s\"name\":\"ProfilerStep#1\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":1000}",
    "{\"ph\":\"X\",%s\"name\":\"enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__\",\"pid\":1,"
    "\"tid\":1,\"ts\":0,\"dur\":100}",
    "{\"ph\":\"X\",%s\"name\":\"aten::linear\",\"pid\":1,\"tid\":1,\"ts\":100,\"dur\":300,\"args\":{"
    "\"Input Dims\":[[5,128],[128,128],[128]],\"Input type\":[\"float\",\"float\",\"float\"]}}",
    "{\"ph\":\"X\",%s\"name\":\"aten::addmm\",\"pid\":1,\"tid\":1,\"ts\":110,\"dur\":280,\"args\":{"
    "\"Input Dims\":[[128],[5,128],[128,128]],\"Input type\":[\"float\",\"float\",\"float\"]}}",
    "{\"ph\":\"X\",%s\"name\":\"aten::relu\",\"pid\":1,\"tid\":1,\"ts\":450,\"dur\":50}",
    "{\"ph\":\"X\",%s\"name\":\"Optimizer.step#SGD.step\",\"pid\":1,\"tid\":1,\"ts\":600,\"dur\":200}",
    "{\"ph\":\"X\",%s\"name\":\"aten::add_\",\"pid\":1,\"tid\":1,\"ts\":610,\"dur\":100}",
};

static void check_cpu_run(const mb_run *r)
{
    assert_int_equal(r->steps, 1);
    NS_EQ(r->total_seconds, 1000000);
    const mb_stage *g = stage(r, "gemm (cpu)");
    assert_non_null(g);
    assert_string_equal(g->component, "gemm");
    assert_string_equal(g->device, "cpu");
    NS_EQ(g->seconds, 280000);
    assert_string_equal(g->work_unit, "flop");
    assert_true(g->work == 2.0 * 5 * 128 * 128);
    assert_string_equal(g->dtype, "fp32");
    NS_EQ(stage(r, "optimizer")->seconds, 200000);
    NS_EQ(stage(r, "other aten ops")->seconds, 70000);
    NS_EQ(stage(r, "python (host code)")->seconds, 350000);
    NS_EQ(stage(r, "dataloading")->seconds, 100000);
    double sum = 0;
    for (int i = 0; i < r->n_stages; i++)
        sum += r->stages[i].seconds;
    NS_EQ(sum, 1000000);
    cJSON *step = cJSON_GetObjectItemCaseSensitive(r->evidence, "step");
    assert_true(cJSON_IsObject(step));
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(step, "where")->valuestring, "cpu");
    NS_EQ(num(r->evidence, "step.seconds"), 1000000);
}

static void test_cpu_only(void **state)
{
    (void)state;
    for (int form = 0; form < 2; form++) {
        bool kineto = form == 0;
        char text[8192];
        size_t n = (size_t)snprintf(text, sizeof text, "%s", kineto ? "{\"traceEvents\":[" : "[");
        for (size_t i = 0; i < sizeof cpu_events / sizeof *cpu_events; i++) {
            const char *cat = !kineto ? ""
                              : strstr(cpu_events[i], "aten::") ? "\"cat\":\"cpu_op\","
                                                                 : "\"cat\":\"user_annotation\",";
            n += (size_t)snprintf(text + n, sizeof text - n, i ? ",\n" : "\n");
            n += (size_t)snprintf(text + n, sizeof text - n, cpu_events[i], cat);
        }
        snprintf(text + n, sizeof text - n, "%s", kineto ? "]}\n" : "]\n");
        const char *path = tmp_path(kineto ? "cpu_kineto.json" : "cpu_legacy.json");
        write_text(path, text, strlen(text));
        mb_run r;
        mb_err err = {0};
        assert_int_equal(mb_run_read(path, &r, &err), MB_OK); /* the array is told from a stage file */
        assert_string_equal(r.kind, "pytorch-trace");
        check_cpu_run(&r); /* shapes read the same in both forms (torch 1.13 writes none) */
        mb_run_free(&r);
    }
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "dump") == 0) {
        mb_err err = {0};
        int rc = mb_trace_dump(argv[2], stdout, &err);
        if (rc != MB_OK)
            fprintf(stderr, "mlbench trace: %s\n", err.msg);
        return mb_exit_status(rc);
    }
    if (argc >= 2 && strcmp(argv[1], "large") == 0)
        return run_large();
    if (argc >= 2 && strcmp(argv[1], "fixtures") == 0) {
        struct stat st;
        if (stat(fixture_dir(), &st) != 0) {
            const char *ci = getenv("CI");
            fprintf(stderr, "fixtures not found at %s (set MLBENCH_SHARED)\n", fixture_dir());
            return ci && *ci ? 1 : 77;
        }
        const struct CMUnitTest fixtures[] = {
            cmocka_unit_test(test_fixture_a100_alexnet), cmocka_unit_test(test_fixture_nccl),
            cmocka_unit_test(test_fixture_v100_ns),      cmocka_unit_test(test_fixture_sampled),
            cmocka_unit_test(test_fixture_amd),          cmocka_unit_test(test_fixture_cpu_only),
            cmocka_unit_test(test_fixture_no_dist_info),
        };
        return cmocka_run_group_tests_name("trace fixtures", fixtures, NULL, NULL);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_synthetic), cmocka_unit_test(test_flop_attribution),
        cmocka_unit_test(test_sparse_matmul),
        cmocka_unit_test(test_op_flops),  cmocka_unit_test(test_rules),
        cmocka_unit_test(test_memory_attribution), cmocka_unit_test(test_op_bytes),
        cmocka_unit_test(test_list_element_size_from_kernels), cmocka_unit_test(test_kernel_elem_bytes),
        cmocka_unit_test(test_norm_pool_attribution), cmocka_unit_test(test_backward_flops),
        cmocka_unit_test(test_tf32_from_kernels), cmocka_unit_test(test_kernel_tf32),
        cmocka_unit_test(test_forward_from_backward),
        cmocka_unit_test(test_forward_only_conv),
        cmocka_unit_test(test_first_calls),
        cmocka_unit_test(test_first_calls_nested),
        cmocka_unit_test(test_first_call_waiting),
        cmocka_unit_test(test_setup_inside_collective),
        cmocka_unit_test(test_profiler_buffers_setup),
        cmocka_unit_test(test_marker_steps),
        cmocka_unit_test(test_torchscript_fuser),
        cmocka_unit_test(test_malformed), cmocka_unit_test(test_hostile_bounds),
        cmocka_unit_test(test_cpu_only), cmocka_unit_test(test_step_past_trace),
        cmocka_unit_test(test_overlap_yields), cmocka_unit_test(test_outside_steps),
        cmocka_unit_test(test_kernel_takes_op_family),
        cmocka_unit_test(test_kernel_takes_uncounted_family), cmocka_unit_test(test_blocking_copy_is_sync),
        cmocka_unit_test(test_setup_calls), cmocka_unit_test(test_host_collective_stage),
        cmocka_unit_test(test_closing_sync_without_steps), cmocka_unit_test(test_gpu_startup),
        cmocka_unit_test(test_no_cpu_ops),
        cmocka_unit_test(test_merged_ranks),
        cmocka_unit_test(test_optimizer_steps),
        cmocka_unit_test(test_annotation_steps),
        cmocka_unit_test(test_operator_annotations),
        cmocka_unit_test(test_overlap_across_steps),
        cmocka_unit_test(test_kernel_wait),
        cmocka_unit_test(test_reasons_whole),
    };
    return cmocka_run_group_tests_name("trace", tests, make_tmpdir, remove_tmpdir);
}
