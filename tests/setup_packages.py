#!/usr/bin/env python3
"""setup_packages: scripts/setup.sh installs everything the build looks up,
and a missing optional library never stops the configure step (stdlib only).

  setup_packages.py SRC BUILD     (BUILD: a configured build tree, for its cache)

1. Every find_package / pkg_check_modules / find_library / find_path in
   every CMakeLists.txt and cmake/*.cmake must have a row in
   LOOKUPS below, naming the Debian package of scripts/setup.sh's PACKAGES that
   provides it (or saying why none does: the CUDA toolkit is not a Debian
   package). A new lookup without a row fails the test: that is how a fresh
   Debian 12 ended up without the OpenCL files oneDNN's CMake package needs.
2. Where dpkg knows the file the build found (from BUILD's CMakeCache.txt or
   pkg-config), the package that owns it must be that package or one it
   depends on directly (libopenblas-dev -> libopenblas-pthread-dev).
3. CMake configures (exit 0) with every optional lookup forced to not-found,
   once with the CUDA toolkit (cuDNN, NCCL and the host libraries missing) and
   once without it, and its summary line shows them off.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

# lookup -> (package in PACKAGES or None, evidence, required)
#   evidence: ("cache", VAR, suffix) a file from CMakeCache.txt, ("pc", module)
#   a pkg-config file, ("none", why) nothing dpkg can check.
LOOKUPS = {
    "find_package:PkgConfig": ("pkg-config", ("cache", "PKG_CONFIG_EXECUTABLE", ""), True),
    "find_package:Threads": ("build-essential", ("none", "libc6-dev, through build-essential"), True),
    "find_package:benchmark": ("libbenchmark-dev", ("cache", "benchmark_DIR", "/benchmarkConfig.cmake"), True),
    "pkg:libcjson": ("libcjson-dev", ("pc", "libcjson"), True),
    "pkg:inih": ("libinih-dev", ("pc", "inih"), True),
    "pkg:liburing": ("liburing-dev", ("pc", "liburing"), False),
    "pkg:openblas": ("libopenblas-dev", ("pc", "openblas"), False),
    # optional for the library, required by tests/CMakeLists.txt (unit tests)
    "pkg:cmocka": ("libcmocka-dev", ("pc", "cmocka"), True),
    "find_package:ZLIB": ("zlib1g-dev", ("cache", "ZLIB_INCLUDE_DIR", "/zlib.h"), False),
    "find_path:MB_DNNL_INCLUDE": ("libdnnl-dev", ("cache", "MB_DNNL_INCLUDE", "/oneapi/dnnl/dnnl.h"), False),
    "find_library:MB_DNNL_LIB": ("libdnnl-dev", ("cache", "MB_DNNL_LIB", ""), False),
    "find_package:MPI": ("libopenmpi-dev", ("cache", "MPI_C_HEADER_DIR", "/mpi.h"), False),
    "pkg:hwloc": ("libhwloc-dev", ("pc", "hwloc"), False),
    "find_package:CUDAToolkit": (None, ("none", "NVIDIA's CUDA toolkit, not a Debian package"), False),
    "find_library:MB_CUDNN_LIB": (None, ("none", "cuDNN comes with NVIDIA's CUDA packages"), False),
    "find_path:MB_CUDNN_INCLUDE": (None, ("none", "cuDNN comes with NVIDIA's CUDA packages"), False),
    "find_library:MB_NCCL_LIB": (None, ("none", "NCCL comes with NVIDIA's CUDA packages"), False),
}

LOOKUP_RE = re.compile(r"^\s*(find_package|pkg_check_modules|find_library|find_path)\s*\(([^)]*)\)", re.M)
PKG_KEYWORDS = {"REQUIRED", "QUIET", "IMPORTED_TARGET", "GLOBAL", "NO_CMAKE_PATH", "NO_CMAKE_ENVIRONMENT_PATH"}

problems = []


def bad(msg):
    problems.append(msg)
    print("FAIL:", msg)


def lookups(src):
    """(key, required) for every lookup call of the build's CMake files."""
    files = []
    for top, dirs, names in os.walk(src):  # every folder's list (kernels/* have their own)
        keep = ("kernels", "harness", "tests", "fuzz", "bench") if top == src else None
        dirs[:] = sorted(d for d in dirs if (d in keep if keep else not d.startswith(".")))
        if "CMakeLists.txt" in names:
            files.append(os.path.join(top, "CMakeLists.txt"))
    cmake_dir = os.path.join(src, "cmake")
    if os.path.isdir(cmake_dir):
        files += [os.path.join(cmake_dir, f) for f in sorted(os.listdir(cmake_dir)) if f.endswith(".cmake")]
    found = []
    for path in files:
        text = re.sub(r"#[^\n]*", "", open(path).read())  # comments mention lookups too
        for cmd, args in LOOKUP_RE.findall(text):
            words = args.split()
            required = "REQUIRED" in words
            if cmd == "pkg_check_modules":
                mods = [w for w in words[1:] if w not in PKG_KEYWORDS]
                found += [("pkg:" + m, required) for m in mods]
            else:
                found.append(("%s:%s" % (cmd, words[0]), required))
    return found


def setup_packages(src):
    text = open(os.path.join(src, "scripts", "setup.sh")).read()
    m = re.search(r"PACKAGES=\((.*?)\n\)", text, re.S)
    if not m:
        bad("scripts/setup.sh has no PACKAGES=( ... ) list")
        return set()
    return {w for line in m.group(1).splitlines() for w in line.split("#")[0].split()}


def read_cache(build):
    cache = {}
    path = os.path.join(build, "CMakeCache.txt")
    if os.path.exists(path):
        for line in open(path):
            m = re.match(r"^([A-Za-z0-9_]+):[A-Z]+=(.*)$", line.rstrip("\n"))
            if m:
                cache[m.group(1)] = m.group(2)
    return cache


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def evidence_file(evidence, cache):
    if evidence[0] == "cache":
        v = cache.get(evidence[1], "")
        return v + evidence[2] if v and not v.endswith("NOTFOUND") else None
    if evidence[0] == "pc":
        r = run(["pkg-config", "--variable=pcfiledir", evidence[1]])
        return os.path.join(r.stdout.strip(), evidence[1] + ".pc") if r.returncode == 0 else None
    return None


def owner(path):
    """The Debian package that owns path (through symlinks), or None."""
    for p in (path, os.path.realpath(path)):
        r = run(["dpkg", "-S", p])
        if r.returncode == 0:
            return r.stdout.split(":")[0].strip()
    return None


def depends(pkg):
    r = run(["dpkg-query", "-W", "-f=${Depends},${Pre-Depends}", pkg])
    names = set()
    for alt in re.split(r"[,|]", r.stdout):
        name = alt.strip().split(" ")[0].split(":")[0]
        if name:
            names.add(name)
    return names


def check_coverage(src, build):
    packages = setup_packages(src)
    cache = read_cache(build)
    have_dpkg = shutil.which("dpkg") is not None
    seen = lookups(src)
    if len(seen) < 10:
        bad("only %d lookups parsed from the CMake files: the parser is broken" % len(seen))
    for key, required in seen:
        row = LOOKUPS.get(key)
        if row is None:
            bad("%s has no row in tests/setup_packages.py: which package of scripts/setup.sh provides it?" % key)
            continue
        pkg, evidence, _ = row
        if pkg is None:
            print("ok   %-28s not from Debian (%s)" % (key, evidence[1]))
            continue
        if pkg not in packages:
            bad("%s needs %s, which scripts/setup.sh does not install" % (key, pkg))
            continue
        path = evidence_file(evidence, cache) if have_dpkg else None
        if path is None:
            print("ok   %-28s %s (file not checked: %s)" % (key, pkg, "no dpkg" if not have_dpkg else
                                                            evidence[1] if evidence[0] == "none" else "not found"))
            continue
        who = owner(path)
        if who is None:
            bad("%s: %s belongs to no Debian package (installed by hand?)" % (key, path))
        elif who != pkg and who not in depends(pkg):
            bad("%s: %s belongs to %s, neither %s nor a dependency of it" % (key, path, who, pkg))
        else:
            print("ok   %-28s %s (%s from %s)" % (key, pkg, path, who))
    return seen


def pkgconfig_without(modules, tmp):
    """A PKG_CONFIG_LIBDIR holding every .pc file of the system but `modules`."""
    libdir = os.path.join(tmp, "pkgconfig")
    os.makedirs(libdir)
    r = run(["pkg-config", "--variable", "pc_path", "pkg-config"])
    for d in r.stdout.strip().split(":"):
        if not os.path.isdir(d):
            continue
        for f in os.listdir(d):
            dst = os.path.join(libdir, f)
            if f.endswith(".pc") and f[:-3] not in modules and not os.path.exists(dst):
                os.symlink(os.path.realpath(os.path.join(d, f)), dst)
    return libdir


def configure(src, tmp, name, forced, extra):
    """Configures a fresh tree with the lookups in `forced` made to fail."""
    build = os.path.join(tmp, name)
    mods = {k[4:] for k in forced if k.startswith("pkg:")}
    calls = [k.split(":")[1] for k in forced if k.startswith(("find_library:", "find_path:"))]
    pkgs = [k.split(":")[1] for k in forced if k.startswith("find_package:")]
    hook = os.path.join(src, "tests", "force_notfound.cmake")
    cmd = ["cmake", "-S", src, "-B", build, "-DCMAKE_PROJECT_INCLUDE=" + hook,
           "-DMB_FORCE_NOTFOUND=" + ";".join(calls)] + ["-DCMAKE_DISABLE_FIND_PACKAGE_%s=ON" % p for p in pkgs]
    env = dict(os.environ, PKG_CONFIG_LIBDIR=pkgconfig_without(mods, os.path.join(tmp, name + "-pc")))
    env.pop("PKG_CONFIG_PATH", None)
    r = run(cmd + extra, env=env)
    summary = [line for line in r.stdout.splitlines() if "-- mlbench: CUDA=" in line]
    print("configure %s (forced not found: %s): exit %d %s" % (name, " ".join(sorted(forced)), r.returncode,
                                                                summary[0] if summary else ""))
    if r.returncode != 0:
        bad("configure %s stopped: %s" % (name, (r.stderr or r.stdout)[-2000:]))
        return None
    return summary[0] if summary else ""


def check_optional(src, seen):
    optional = sorted({k for k, req in seen if not req and not LOOKUPS.get(k, (0, 0, True))[2]})
    host = [k for k in optional if k != "find_package:CUDAToolkit"]
    # what the summary line must then say for each host library
    expect_off = {"pkg:liburing": "io_uring", "pkg:openblas": "OpenBLAS",
                  "find_package:ZLIB": "zlib", "find_library:MB_DNNL_LIB": "oneDNN", "find_package:MPI": "MPI"}
    with tempfile.TemporaryDirectory(prefix="mb-setup-packages-") as tmp:
        line = configure(src, tmp, "no-optional", host, [])
        if line is not None:
            said = dict(re.findall(r"(\w+)=(\S*)", line))
            for k, name in expect_off.items():
                if k in host and said.get(name, "?").upper() in ("1", "ON", "TRUE", "YES", "?"):
                    bad("with %s forced not found the summary should say %s is off: %s" % (k, name, line))
            if "CUDA=ON" in line:
                r = run(["cmake", "--build", os.path.join(tmp, "no-optional"), "--target", "help"])
                for mod in ("mlbench_cudnn", "mlbench_nccl"):
                    if mod in r.stdout:
                        bad("cuDNN/NCCL forced not found, yet the build still has %s" % mod)
        line = configure(src, tmp, "no-cuda", ["find_package:CUDAToolkit"], [])
        if line is not None and "CUDA=OFF" not in line:
            bad("CUDAToolkit forced not found, yet: %s" % line)


def main(argv):
    if len(argv) != 3:
        print(__doc__)
        return 2
    src, build = argv[1], argv[2]
    seen = check_coverage(src, build)
    check_optional(src, seen)
    print("%d problem(s)" % len(problems))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
