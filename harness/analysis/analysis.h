/* analysis.h: the `mlbench gap` and `mlbench compare` commands
 * (harness/analysis/analysis_cli.c). main.c passes the arguments after "mlbench":
 * argv[0] is the command name ("gap", "compare"). Each returns the process
 * exit status: 0 done, 1 failed (I/O, memory), 2 usage or bad input. */
#ifndef MB_ANALYSIS_H
#define MB_ANALYSIS_H

/* mlbench gap --run RUN [--ceilings RESULTS.json] [--target THERE.json|DATASHEET]
 *             [--format table|json|md] [--out FILE] */
int mb_cmd_gap(int argc, char **argv);

/* mlbench compare A.json B.json [C.json ...] [--label NAME=FILE ...] [--price NAME=USD_PER_HOUR ...]
 *                 [--format table|json|md] [--out FILE] */
int mb_cmd_compare(int argc, char **argv);

#endif
