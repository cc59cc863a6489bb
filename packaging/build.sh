#!/usr/bin/env bash
# Build the desktop bundle with PyInstaller (onedir) and smoke-test it.
#   packaging/build.sh            build into dist/gpu-planner/, then run the smoke tests
#   packaging/build.sh --no-build smoke-test an existing dist/gpu-planner/
# Environment: PYTHON (interpreter for the build venv, default python3), BUILD_VENV
# (default build/packaging-venv; reused between builds), BUILD_SYSTEM_SITE=1 (make the
# venv with --system-site-packages to reuse an environment that has the dependencies).
# Exit status: 0 when the build and every smoke test passed.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PYTHON:-python3}
VENV=${BUILD_VENV:-build/packaging-venv}
DIST=$ROOT/dist
WORK=$ROOT/build/pyinstaller
BUNDLE=$DIST/gpu-planner
BIN=$BUNDLE/gpu-planner
build=1
[ "${1:-}" = "--no-build" ] && build=0

die() { echo "build.sh: $*" >&2; exit 1; }

if [ $build = 1 ]; then
    t0=$(date +%s)
    if [ ! -x "$VENV/bin/python" ]; then
        flags=""
        [ "${BUILD_SYSTEM_SITE:-0}" = 1 ] && flags="--system-site-packages"
        "$PY" -m venv $flags "$VENV" || die "cannot create the venv $VENV with $PY"
    fi
    echo "== installing the app's dependencies and PyInstaller into $VENV"
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check \
        "pyinstaller>=6.10,<7" "pyinstaller-hooks-contrib" . || die "pip install failed"
    t1=$(date +%s)
    echo "== PyInstaller ($("$VENV/bin/python" -m PyInstaller --version))"
    rm -rf "$BUNDLE"
    "$VENV/bin/python" -m PyInstaller --noconfirm --log-level WARN \
        --distpath "$DIST" --workpath "$WORK" packaging/gpu_planner.spec || die "PyInstaller failed"
    t2=$(date +%s)
    # Python builds such as pyenv's keep debug information in libpython (~20 MB of it).
    if command -v strip >/dev/null; then
        for lib in "$BUNDLE"/_internal/libpython3*.so*; do
            [ -f "$lib" ] && strip --strip-debug "$lib"
        done
    fi
    cp packaging/gpu-planner.desktop "$BUNDLE/"
    cp resources/icons/gpu-planner.png "$BUNDLE/gpu-planner.png"
    echo "== build time: $((t2 - t0)) s in all (dependencies $((t1 - t0)) s, PyInstaller $((t2 - t1)) s)"
fi

[ -x "$BIN" ] || die "no bundle at $BIN"

echo "== bundle: $BUNDLE"
size_mb=$(du -sm "$BUNDLE" | cut -f1)
files=$(find "$BUNDLE" -type f | wc -l)
echo "size: ${size_mb} MiB on disk, $files files"
echo "largest parts:"
du -sm "$BUNDLE"/_internal/* 2>/dev/null | sort -rn | head -8 | sed 's/^/  /'
if find "$BUNDLE" -iname '*torch*' -o -iname '*cupy*' | grep -q .; then
    echo "WARNING: torch or cupy files found in the bundle"
fi

# Smoke tests run from an empty folder with a private user directory, so the bundle
# cannot lean on the checkout or the user's real database.
SMOKE_DIR=$(mktemp -d)
export PLANNER_USER_DIR=$SMOKE_DIR/user
mkdir -p "$PLANNER_USER_DIR"
unset PLANNER_SPEC_DATA PLANNER_RESOURCES PLANNER_EXAMPLES
failed=0
results=()
step() {  # step NAME CHECK_PY_OR_EMPTY COMMAND...
    local name=$1 check=$2; shift 2
    local out=$SMOKE_DIR/$name.out t0 t1 rc
    t0=$(date +%s.%N)
    (cd "$SMOKE_DIR" && timeout 300 "$@") >"$out" 2>"$out.err"
    rc=$?
    t1=$(date +%s.%N)
    if [ $rc = 0 ] && [ -n "$check" ]; then
        "$PY" -c "$check" "$out" >>"$out.check" 2>&1 || rc=99
    fi
    local secs
    secs=$(awk "BEGIN {printf \"%.1f\", $t1 - $t0}")
    if [ $rc = 0 ]; then
        results+=("PASS  $name (${secs} s)")
    else
        results+=("FAIL  $name (exit $rc, ${secs} s)")
        failed=1
        echo "---- $name failed (exit $rc); last lines:"
        tail -n 5 "$out" | sed 's/^/  | /'
        tail -n 15 "$out.err" | sed 's/^/  | /'
        [ -f "$out.check" ] && sed 's/^/  | /' "$out.check"
    fi
}
JSON_CHECK='
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("peak_bytes", "breakdown", "fits"):
    assert k in d["memory"], k
assert d["time"]["step_s"] > 0 and d["params"]["total"] > 6e9
print("peak GiB %.1f, step %.3f s" % (d["memory"]["peak_bytes"] / 2**30, d["time"]["step_s"]))
'
step version 'import sys; t = open(sys.argv[1]).read(); assert t.startswith("gpu-planner "), t' \
    "$BIN" --version
step estimate "$JSON_CHECK" "$BIN" estimate --model llama-2-7b --gpu h100-sxm --json
step gui-smoke "" env QT_QPA_PLATFORM=offscreen "$BIN" gui --smoke-test
# The probe's worker subprocess is the bundle itself (see packaging/gpu_planner_entry.py).
step probe-cpu 'import json, sys; d = json.load(open(sys.argv[1])); assert d["gemm"], d; print("best CPU GEMM %.0f GFLOP/s" % (1e3 * max(g["tflops"] for g in d["gemm"])))' \
    "$BIN" probe --backend numpy --quick --json
# A Chinese PDF report from a shipped example: the .qm catalogue, the CJK font and the
# examples folder all come from the bundle.
EXAMPLE=$(ls "$BUNDLE"/_internal/examples/*.json 2>/dev/null | head -n 1)
PDF_CHECK='
import sys
data = open(sys.argv[1].replace(".out", ".pdf"), "rb").read()
assert data.startswith(b"%PDF") and len(data) > 10000, len(data)
print("%d kB" % (len(data) // 1024))
'
step report-zh "$PDF_CHECK" env QT_QPA_PLATFORM=offscreen "$BIN" report "$EXAMPLE" -o "$SMOKE_DIR/report-zh.pdf" --lang zh_CN
if [ -f "$SMOKE_DIR/report-zh.pdf" ] && command -v pdftotext >/dev/null; then
    if pdftotext -enc UTF-8 "$SMOKE_DIR/report-zh.pdf" - 2>/dev/null | grep "报告" >/dev/null; then
        echo "report-zh: Chinese text extracted from the PDF"
    else
        results+=("FAIL  report-zh (no Chinese text in the PDF)")
        failed=1
    fi
fi

echo "== smoke tests"
for r in "${results[@]}"; do echo "  $r"; done
echo "  version: $(head -n 1 "$SMOKE_DIR/version.out")"
echo "  estimate: $(cat "$SMOKE_DIR/estimate.out.check" 2>/dev/null | tail -n 1)"
echo "  probe: $(cat "$SMOKE_DIR/probe-cpu.out.check" 2>/dev/null | tail -n 1)"
echo "  report: $(cat "$SMOKE_DIR/report-zh.out.check" 2>/dev/null | tail -n 1) ($(basename "$EXAMPLE"), zh_CN)"
rm -rf "$SMOKE_DIR"
exit $failed
