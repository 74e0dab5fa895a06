#!/usr/bin/env python3
"""kernel_layers.py: the rules of kernels/ that the build and the style guide state.

  kernel_layers.py includes   the layers (README, "Development"): harness/api
                              includes itself only, harness/platform includes
                              harness/api, a kernel includes harness/api,
                              harness/platform and kernels/ headers, never a harness
                              internal (harness/, harness/analysis and its rooms,
                              harness/report).
                              No source names a header it may not, and the kernels'
                              include path (CMake's MB_KERNEL_INCLUDE_DIRS, in
                              $KERNEL_INCLUDE_DIRS, ':'-separated) finds every api
                              header and no harness internal;
                              harness/report (the presentation of both flows)
                              includes no header of harness/ or harness/analysis
                              and its rooms (exceptions: REPORT_MAY_INCLUDE, none now);
                              every folder under harness/analysis is a listed room;
                              machine facts come from harness/platform only: no
                              source elsewhere names a /sys/ or /proc/ path (the
                              process's own /proc/self/ excepted);
  kernel_layers.py printing   kernels produce numbers and never print: no source
                              under kernels/ writes to stdout or stderr (printf,
                              puts, perror, fprintf(stderr), write(2, ...), std::cerr);
                              they say things through the harness (mb_report_note,
                              mb_err, mb_notice).

Comments and string literals are ignored. Needs $SRC (the source tree) and, for
`includes`, $CC and $KERNEL_INCLUDE_DIRS. Exit 0 when the rule holds, 1 with
every offence listed when it does not, 2 on bad usage.
"""
import os
import re
import subprocess
import sys
import tempfile

SOURCE_EXT = (".c", ".h", ".cu", ".cuh", ".cc", ".cpp")
# The analysis flow's rooms (shared/DESIGN.md, "Rooms"): the trace reader, the gap, compare, the projection.
ANALYSIS_ROOMS = ("harness/analysis/trace", "harness/analysis/gap", "harness/analysis/compare",
                  "harness/analysis/project")
# The folders of both flows' code: what report/ may not include and a kernel may not see.
FLOW_DIRS = ("harness", "harness/analysis") + ANALYSIS_ROOMS
INTERNAL_DIRS = FLOW_DIRS + ("harness/report",)
API_DIR = "harness/api"
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)
# Calls that always write to stdout or stderr.
ALWAYS_PRINTS = re.compile(r"\b(printf|vprintf|puts|putchar|perror|putchar_unlocked)\s*\(")
# The standard streams by name, or by descriptor in write/dprintf.
STREAMS = re.compile(r"\b(stdout|stderr|STDOUT_FILENO|STDERR_FILENO)\b|\bstd::(cout|cerr|clog)\b")
FD_WRITES = re.compile(r"\b(write|dprintf|vdprintf)\s*\(\s*[12]\s*,")


def strip_comments_and_strings(text):
    """The code of a C/C++/CUDA source with comments removed and every string
    or character literal emptied, line breaks kept (so line numbers hold)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def sources_under(src, folder):
    for root, _, files in os.walk(os.path.join(src, folder)):
        for name in sorted(files):
            if name.endswith(SOURCE_EXT):
                yield os.path.join(root, name)


def kernel_sources(src):
    return sources_under(src, "kernels")


def headers_under(src, folder):
    return {os.path.basename(p) for p in sources_under(src, folder) if p.endswith((".h", ".cuh"))}


def internal_headers(src):
    names = set()
    for d in INTERNAL_DIRS:
        path = os.path.join(src, d)
        names.update(f for f in os.listdir(path) if f.endswith(".h") and os.path.isfile(os.path.join(path, f)))
    return names


def named_includes(src, folder, forbidden, what):
    """Offences: a source under folder that includes a header named in
    forbidden, or reaches into harness/ or kernels/ by a path."""
    found = []
    for path in sources_under(src, folder):
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        for m in INCLUDE_RE.finditer(text):
            name = m.group(2)
            if os.path.basename(name) in forbidden or re.search(r"(^|/)(harness|kernels)/", name) or ".." in name:
                line = text.count("\n", 0, m.start()) + 1
                found.append(f"{os.path.relpath(path, src)}:{line}: includes {m.group(0).strip()} ({what})")
    return found


# report/ is the presentation layer of both flows (shared/DESIGN.md, "Rooms"): it formats what it is given and
# reads no flow's internals, with no exception (the atomic file writer, the last one, lives in report/ now).
REPORT_MAY_INCLUDE = set()


def report_offences(src):
    """report/ includes report/, harness/api and system headers only: no
    analysis header (gap, trace, compare, ...) and no measure-flow one."""
    flows = set()
    for d in FLOW_DIRS:
        path = os.path.join(src, d)
        flows.update(f for f in os.listdir(path) if f.endswith(".h") and os.path.isfile(os.path.join(path, f)))
    return named_includes(src, "harness/report", flows - REPORT_MAY_INCLUDE,
                          "report/ formats what it is given and reads no flow's internals")


def room_offences(src):
    """A folder under harness/analysis that ANALYSIS_ROOMS does not list: its
    headers would escape every rule here (report/'s, the kernels')."""
    base = os.path.join(src, "harness/analysis")
    return [f"harness/analysis/{d}: a folder kernel_layers.py does not know (add it to ANALYSIS_ROOMS)"
            for d in sorted(os.listdir(base))
            if os.path.isdir(os.path.join(base, d)) and f"harness/analysis/{d}" not in ANALYSIS_ROOMS]


# A path literal that reads a machine fact: "/sys/...", "/proc/..." but not the
# process's own "/proc/self/..." (where the executable lives is no machine fact).
MACHINE_FACT_PATH = re.compile(r'"/(sys|proc)/(?!self/)')


def platform_fact_offences(src):
    """Machine facts have one home, harness/platform (Google Benchmark's
    sysinfo): a /sys/ or /proc/ path read anywhere else is a second home."""
    found = []
    for folder in ("harness", "kernels"):
        for path in sources_under(src, folder):
            rel = os.path.relpath(path, src)
            if rel.startswith("harness/platform/"):
                continue
            with open(path, encoding="utf-8", errors="replace") as f:
                for number, line in enumerate(f, 1):
                    if MACHINE_FACT_PATH.search(line) and not line.lstrip().startswith(("/*", "*", "//")):
                        found.append(f"{rel}:{number}: {line.strip()}  "
                                     f"(machine facts come from harness/platform: host.h, blockdev.h, ...)")
    return found


def layer_offences(src, internal):
    """api includes api only; platform includes api; kernels include api,
    platform and kernels; the harness includes no kernel header (README,
    "Development"); report/ includes no flow's header."""
    platform, kernels = headers_under(src, "harness/platform"), headers_under(src, "kernels")
    return (room_offences(src) + report_offences(src) + platform_fact_offences(src) + named_includes(src, "kernels", internal,
                           "a harness internal; what kernels need is in harness/api/services.h") +
            named_includes(src, "harness/platform", internal | kernels,
                           "the platform layer includes harness/api only") +
            named_includes(src, "harness/api", internal | kernels | platform,
                           "harness/api includes itself only") +
            [f for d in INTERNAL_DIRS for f in named_includes_here(src, d, kernels,
             "the harness reaches kernels through their ops tables, never their headers")])


def named_includes_here(src, folder, forbidden, what):
    """named_includes for the sources directly in folder (not its subfolders)."""
    here = os.path.join(src, folder)
    return [f for f in named_includes(src, folder, forbidden, what)
            if os.path.dirname(os.path.join(src, f.split(":")[0])) == here]


def preprocess(cc, dirs, header, workdir):
    """True when `#include "header"` preprocesses with the kernel include path."""
    cmd = [cc, "-E", "-x", "c", "-"] + [f"-I{d}" for d in dirs]
    r = subprocess.run(cmd, input=f'#include "{header}"\n', capture_output=True, text=True, cwd=workdir)
    return r.returncode == 0, r.stderr


def include_path_offences(src, internal):
    cc, dirs = os.environ.get("CC"), os.environ.get("KERNEL_INCLUDE_DIRS")
    if not cc or dirs is None:
        print("kernel_layers: includes needs $CC and $KERNEL_INCLUDE_DIRS", file=sys.stderr)
        sys.exit(2)
    dirs = [d for d in dirs.split(":") if d]
    found = []
    with tempfile.TemporaryDirectory() as work:  # quote includes search the cwd first: an empty one
        for header in sorted(os.listdir(os.path.join(src, API_DIR))):
            ok, err = preprocess(cc, dirs, header, work)
            if not ok:  # the control: the probe itself works
                found.append(f"the kernel include path does not find the api header {header}: {err.strip()}")
        for header in sorted(internal):
            ok, _ = preprocess(cc, dirs, header, work)
            if ok:
                found.append(f"the kernel include path ({' '.join(dirs)}) finds the harness internal {header}")
    return found


def printing_offences(src):
    found = []
    for path in kernel_sources(src):
        with open(path, encoding="utf-8", errors="replace") as f:
            code = strip_comments_and_strings(f.read())
        for number, line in enumerate(code.split("\n"), 1):
            for rx in (ALWAYS_PRINTS, STREAMS, FD_WRITES):
                m = rx.search(line)
                if m:
                    found.append(f"{os.path.relpath(path, src)}:{number}: {line.strip()}  "
                                 f"(kernels never print: mb_report_note, mb_err or mb_notice)")
                    break
    return found


def symbol_offences(libs):
    """Exported symbols of our libraries without the mb_ prefix (C++ runtime
    and template instances, mangled, start with _ and are not ours)."""
    found = []
    for lib in libs:
        out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            name = line.split()[-1]
            if not name.startswith(("mb_", "MB_", "_")):
                found.append(f"{os.path.basename(lib)}: {name}  (exported symbols carry the mb_ prefix)")
    return found


def main(argv):
    src = os.environ.get("SRC")
    if len(argv) != 2 or argv[1] not in ("includes", "printing", "symbols") or not src:
        print("usage: SRC=<source tree> [LIBS=a.so:b.so] kernel_layers.py includes|printing|symbols",
              file=sys.stderr)
        return 2
    if argv[1] == "symbols":
        libs = [l for l in os.environ.get("LIBS", "").split(":") if l]
        if not libs:
            print("kernel_layers symbols: LIBS names no library", file=sys.stderr)
            return 2
        found = symbol_offences(libs)
    elif argv[1] == "includes":
        internal = internal_headers(src)
        if not internal:  # the scan must see the tree it checks
            print(f"kernel_layers: no harness headers under {src}", file=sys.stderr)
            return 2
        found = layer_offences(src, internal) + include_path_offences(src, internal)
    else:
        found = printing_offences(src)
    for f in found:
        print(f)
    print(f"kernel_layers {argv[1]}: {'FAIL, ' + str(len(found)) + ' offences' if found else 'ok'}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
