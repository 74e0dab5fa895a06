/* gpu_context_none.c: the GPU hooks (harness/gpu_hooks.h) of a build without
 * CUDA: no GPUs in the context, and a monitor that does nothing. */
#include "gpu_hooks.h"

void mb_gpu_context_add(cJSON *context)
{
    if (cJSON_GetObjectItemCaseSensitive(context, "gpus") == NULL)
        cJSON_AddArrayToObject(context, "gpus");
    cJSON_AddStringToObject(context, "gpu_unavailable",
                            "mlbench was built without CUDA (no CUDA toolkit found at build time)");
}

void *mb_gpu_monitor_begin(void)
{
    return NULL;
}

void mb_gpu_monitor_end(void *snapshot, mb_report *r)
{
    (void)snapshot;
    (void)r;
}
