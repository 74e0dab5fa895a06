#include "options.h"

static mb_run_options current;

const mb_run_options *mb_options(void)
{
    return &current;
}

void mb_options_set(const mb_run_options *opts)
{
    current = *opts;
}
