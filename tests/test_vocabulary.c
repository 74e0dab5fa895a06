/* Known answers for harness/api/vocabulary.h: every name round-trips, the
 * trace spellings map to their kind, unknown names are rejected, and the two
 * tables agree with each other and with the measuring side's components. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "component.h"
#include "vocabulary.h"

static const mb_collective measured[] = { MB_COLL_ALLREDUCE, MB_COLL_ALLGATHER, MB_COLL_REDUCESCATTER,
                                          MB_COLL_BROADCAST };

static void test_measured_round_trip(void **st)
{
    (void)st;
    static const char *const component[] = { "allreduce", "allgather", "reducescatter", "broadcast" };
    static const char *const title[] = { "all-reduce", "all-gather", "reduce-scatter", "broadcast" };
    for (size_t i = 0; i < 4; i++) {
        assert_string_equal(mb_coll_component(measured[i]), component[i]);
        assert_string_equal(mb_coll_name(measured[i]), title[i]);
        mb_collective back = (mb_collective)-1;
        assert_true(mb_coll_from_name(component[i], &back));
        assert_int_equal(back, measured[i]);
        assert_true(mb_is_collective(component[i]));
        assert_string_equal(mb_coll_stage_component(component[i]), component[i]);
    }
}

static void test_every_kind_round_trips(void **st)
{
    (void)st;
    static const char *const kinds[] = { "allreduce", "reducescatter", "allgather", "broadcast", "alltoall",
                                         "sendrecv",  "reduce",        "barrier",   "gather",    "scatter" };
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
        const mb_coll_kind *k = mb_coll_kind_find(kinds[i]);
        assert_non_null(k);
        assert_string_equal(k->name, kinds[i]);
        /* a trace that spells the bare name reads as that kind, not one it contains */
        assert_ptr_equal(mb_coll_kind_in(kinds[i]), k);
        assert_int_equal(k->measured, i < 4);
    }
}

static void test_unknown_rejected(void **st)
{
    (void)st;
    static const char *const bad[] = { "", "all-reduce", "AllReduce", "all_reduce", "allreduces", "unknown", "gemm" };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        mb_collective c = MB_COLL_BROADCAST;
        assert_null(mb_coll_kind_find(bad[i]));
        assert_false(mb_coll_from_name(bad[i], &c));
        assert_int_equal(c, MB_COLL_BROADCAST); /* untouched */
        assert_false(mb_is_collective(bad[i]));
        assert_string_equal(mb_coll_stage_component(bad[i]), "other");
    }
    /* known kinds mlbench does not measure: no enum, held against 'other' */
    mb_collective c;
    assert_false(mb_coll_from_name("alltoall", &c));
    assert_false(mb_is_collective("sendrecv"));
    assert_string_equal(mb_coll_stage_component("barrier"), "other");
    assert_string_equal(mb_coll_name((mb_collective)99), "?");
    assert_string_equal(mb_coll_component((mb_collective)99), "?");
}

static void expect_kind(const char *text, const char *kind)
{
    const mb_coll_kind *k = mb_coll_kind_in(text);
    if (kind == NULL) {
        assert_null(k);
        return;
    }
    assert_non_null(k);
    assert_string_equal(k->name, kind);
}

/* NCCL kernel names, c10d/gloo op names and "Collective name" args as
 * PyTorch traces write them. */
static void test_trace_spellings(void **st)
{
    (void)st;
    expect_kind("ncclKernel_AllReduce_RING_LL_Sum_float", "allreduce");
    expect_kind("ncclDevKernel_AllGather_RING_LL", "allgather");
    expect_kind("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL", "reducescatter");
    expect_kind("ncclKernel_Broadcast_RING_LL_Sum_int8_t", "broadcast");
    expect_kind("ncclKernel_Reduce_RING_LL_Sum_half", "reduce");
    expect_kind("ncclDevKernel_SendRecv", "sendrecv");
    expect_kind("nccl:send", "sendrecv");
    expect_kind("nccl:recv", "sendrecv");
    expect_kind("gloo:all_reduce", "allreduce");
    expect_kind("c10d::allreduce_", "allreduce");
    expect_kind("c10d::_allgather_base_", "allgather");
    expect_kind("c10d::reduce_scatter_tensor_coalesced_", "reducescatter");
    expect_kind("c10d::alltoall_base_", "alltoall");
    expect_kind("all_to_all", "alltoall");
    expect_kind("void deep_ep::internode_ll::dispatch<false, 8>(void*)", "alltoall");
    expect_kind("void deep_ep::intranode::cached_notify_combine(void**)", "alltoall");
    expect_kind("void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16, 8>(c10::BFloat16*)",
                "allreduce");
    expect_kind("void vllm::cross_device_reduce_2stage<__nv_bfloat16, 8>(vllm::RankData*)", "allreduce");
    expect_kind("c10d::gather_", "gather");
    expect_kind("c10d::scatter_", "scatter");
    expect_kind("c10d::barrier", "barrier");
    expect_kind("aten::mm", NULL);
    expect_kind("", NULL);
}

/* Which buffer is the message, as nccl-tests sizes it. */
static void test_message_rules(void **st)
{
    (void)st;
    assert_int_equal(mb_coll_kind_find("allgather")->message, MB_MSG_OUTPUT);
    assert_int_equal(mb_coll_kind_find("reducescatter")->message, MB_MSG_INPUT);
    assert_int_equal(mb_coll_kind_find("allreduce")->message, MB_MSG_LARGER);
    assert_int_equal(mb_coll_kind_find("broadcast")->message, MB_MSG_LARGER);
    assert_true(mb_coll_kind_find("allreduce")->input_is_message);
    assert_true(mb_coll_kind_find("broadcast")->input_is_message);
    assert_true(mb_coll_kind_find("reduce")->input_is_message);
    assert_false(mb_coll_kind_find("allgather")->input_is_message);
    assert_false(mb_coll_kind_find("alltoall")->input_is_message);
}

static void expect_component(const char *name, const char *key, const char *unit, const char *device)
{
    const mb_stage_component *c = mb_stage_component_find(name);
    assert_non_null(c);
    assert_string_equal(c->name, name);
    if (key)
        assert_string_equal(c->work_key, key);
    else
        assert_null(c->work_key);
    assert_string_equal(c->work_unit, unit);
    if (device)
        assert_string_equal(c->device, device);
    else
        assert_null(c->device);
}

static void test_stage_components(void **st)
{
    (void)st;
    expect_component("gemm", "flops", "flop", "gpu");
    expect_component("conv", "flops", "flop", "gpu");
    expect_component("copy", "bytes", "byte", "gpu");
    expect_component("membw", "bytes", "byte", "gpu");
    expect_component("disk", "bytes", "byte", "cpu");
    expect_component("hostmem", "bytes", "byte", "cpu");
    expect_component("allreduce", "bytes", "byte", "gpu");
    expect_component("launch", "launches", "launch", "gpu");
    expect_component("sync", "syncs", "sync", "gpu");
    expect_component("other", NULL, "s", NULL);
    assert_null(mb_stage_component_find("GEMM"));
    assert_null(mb_stage_component_find("alltoall"));
    assert_null(mb_stage_component_find(""));
}

/* The names list is what a stage file's error message offers, and each of
 * its names finds its own entry. */
static void test_component_names(void **st)
{
    (void)st;
    char buf[256];
    assert_string_equal(mb_stage_component_names(buf, sizeof buf),
                        "gemm|conv|attention|copy|membw|disk|allreduce|allgather|reducescatter|broadcast|launch|sync|"
                        "hostmem|other");
    char copy[256], *save = NULL;
    snprintf(copy, sizeof copy, "%s", buf);
    int n = 0;
    for (char *w = strtok_r(copy, "|", &save); w; w = strtok_r(NULL, "|", &save), n++)
        assert_string_equal(mb_stage_component_find(w)->name, w);
    assert_int_equal(n, 14);
    char small[8];
    assert_string_equal(mb_stage_component_names(small, sizeof small), "gemm|co"); /* cut, terminated */
}

static void test_work_keys(void **st)
{
    (void)st;
    static const char *const keys[] = { "flops", "bytes", "launches", "syncs" };
    for (size_t i = 0; i < 4; i++) {
        assert_string_equal(mb_work_key(i), keys[i]);
        assert_true(mb_is_work_key(keys[i]));
    }
    assert_null(mb_work_key(4));
    assert_false(mb_is_work_key("seconds"));
    assert_false(mb_is_work_key("flop"));
    assert_false(mb_is_work_key("flops_per_step"));
    assert_false(mb_is_work_key(""));
}

/* The measured collectives are stage components counted in bytes, and the
 * measuring side registers a component of each name with the same unit. */
static void test_tables_agree(void **st)
{
    (void)st;
    for (size_t i = 0; i < 4; i++) {
        const char *name = mb_coll_component(measured[i]);
        const mb_stage_component *c = mb_stage_component_find(name);
        assert_non_null(c);
        assert_string_equal(c->work_unit, "byte");
        const mb_component_ops *ops = mb_registry_find(name, NULL);
        assert_non_null(ops);
        assert_string_equal(ops->work_unit, c->work_unit);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_measured_round_trip), cmocka_unit_test(test_every_kind_round_trips),
        cmocka_unit_test(test_unknown_rejected),    cmocka_unit_test(test_trace_spellings),
        cmocka_unit_test(test_message_rules),       cmocka_unit_test(test_stage_components),
        cmocka_unit_test(test_component_names),     cmocka_unit_test(test_work_keys),
        cmocka_unit_test(test_tables_agree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
