/* descriptions.c: the description of every disk backend (component.h,
 * "description and code"): names, units, flags and parameters, in the core
 * library beside the code. One file per kernel folder, so a folder's
 * parameters read together and a backend built without its library
 * (MB_NOT_BUILT_IN) still lists them. */

#include "component.h"
#include "disk_file.h"

extern const mb_backend_desc mb_disk_backends[];

static const mb_param_spec disk_pread_params[] = {
    DISK_PARAM_FILE_SIZE, DISK_PARAM_BLOCK_SIZE, DISK_PARAM_PATTERN, DISK_PARAM_MODE,
    DISK_PARAM_IOS,       DISK_PARAM_SEED,       MB_PARAM_END,
};

static const mb_param_spec disk_io_uring_params[] = {
    DISK_PARAM_FILE_SIZE,
    DISK_PARAM_BLOCK_SIZE,
    DISK_PARAM_PATTERN,
    DISK_PARAM_MODE,
    { "qd", MB_P_INT, "32", NULL, 1, 1024, "reads kept in flight (io_uring queue depth)" },
    { "registered", MB_P_ENUM, "auto", "auto|off",
      0, -1, "auto: registered buffers and file (READ_FIXED), plain reads with a note where refused; "
             "off: plain reads (fio's default)" },
    { "sqpoll", MB_P_ENUM, "off", "off|on", 0, -1,
      "on: IORING_SETUP_SQPOLL, a kernel thread submits (costs a CPU)" },
    { "iopoll", MB_P_ENUM, "off", "off|on", 0, -1,
      "on: IORING_SETUP_IOPOLL, completions polled (direct mode, devices with poll queues)" },
    { "submit", MB_P_ENUM, "batch", "batch|each", 0, -1,
      "batch: the reads that replace completed ones go in with one io_uring_enter; each: every read is "
      "submitted as soon as it is prepared (fio's default, iodepth_batch_submit=1)" },
    DISK_PARAM_IOS,
    DISK_PARAM_SEED,
    MB_PARAM_END,
};

static const mb_param_spec disk_mmap_params[] = {
    DISK_PARAM_FILE_SIZE,
    DISK_PARAM_BLOCK_SIZE,
    DISK_PARAM_PATTERN,
    { "advice", MB_P_ENUM, "random", "random|normal|sequential", 0, -1,
      "madvise on the mapping: random (no readahead: the cold-fault ceiling), normal (the "
      "default a dataset gets), sequential (aggressive readahead)" },
    DISK_PARAM_IOS,
    DISK_PARAM_SEED,
    MB_PARAM_END,
};

const mb_backend_desc mb_disk_backends[] = {
    { MB_DESCRIBE("disk", "pread", "byte", "MB/s", 1e6, disk_pread_params,
                  "file reads with pread, queue depth 1 (direct: O_DIRECT device; cached: page cache)") },
    { MB_DESCRIBE("disk", "io_uring", "byte", "MB/s", 1e6, disk_io_uring_params,
                  "file reads through io_uring at queue depth qd (direct: O_DIRECT device; cached: page cache)") },
    { MB_DESCRIBE("disk", "mmap", "byte", "MB/s", 1e6, disk_mmap_params,
                  "memcpy out of a memory-mapped file, page cache made cold before every iteration") },
    MB_BACKEND_DESC_END,
};
