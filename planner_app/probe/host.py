"""The host probe (issue 19): sequential write and read bandwidth of a folder (direct I/O where
the OS allows, fio-style large blocks), the CPU's JPEG decode-and-augment rate per core (PIL, the
ImageNet training transform) and host memory bandwidth (numpy copy). Runs in the probe worker's
process (``python -m planner_app.probe.host_worker``, started by probe/runner.py's ProbeRunner):
isolated, with a timeout, killed on cancel. Its JSON result calibrates the planner's host
rates (core/training/host.py HostRates, ``--host-probe FILE``).
"""
from __future__ import annotations

import errno
import io
import mmap
import os
import platform
import shutil
import tempfile
import time

import numpy as np

from planner_app.core.training.checkpoint import DEFAULT_WRITE_GB_S_PER_NODE
from planner_app.core.training.host import DECODE_IMAGES_PER_S_PER_CORE, DEFAULT_NVME_READ_GB_S

BLOCK_BYTES = 8 * 2**20  # 8 MiB per request: large sequential I/O, as fio --bs=8M --rw=write
DEFAULT_SIZE_BYTES = 1 * 2**30  # a 1 GiB test file
FREE_MARGIN_BYTES = 64 * 2**20  # leave this much free beside the test file
# ImageNet-sized JPEGs: the median ILSVRC2012 training image is 500x375 (most are 500 wide),
# 115 kB on average (core/training/host.py IMAGENET_MEAN_JPEG_BYTES)
JPEG_SIZE = (500, 375)
JPEG_QUALITY = 90
CROP_SIDE = 224  # RandomResizedCrop(224)
MEAN = (0.485, 0.456, 0.406)  # torchvision's ImageNet normalisation
STD = (0.229, 0.224, 0.225)


class HostProbeError(RuntimeError):
    """A folder or environment problem; ``str()`` is one plain line."""


def check_folder(folder: str, size_bytes: int) -> str:
    """The folder's absolute path when the probe can write ``size_bytes`` there; else one line
    saying why not (missing, not a folder, read-only, full)."""
    path = os.path.abspath(os.path.expanduser(folder))
    if not os.path.exists(path):
        raise HostProbeError(f"folder {path!r} does not exist; choose an existing folder on the disk to measure")
    if not os.path.isdir(path):
        raise HostProbeError(f"{path!r} is not a folder; choose a folder on the disk to measure")
    try:
        fd, probe = tempfile.mkstemp(dir=path, prefix=".gpu-planner-probe-")
        os.close(fd)
        os.remove(probe)
    except OSError as e:
        if e.errno == errno.ENOSPC:
            raise HostProbeError(f"folder {path!r} is full (no space left on the device)") from None
        raise HostProbeError(f"folder {path!r} is read-only or not writable ({e.strerror}); choose a folder you "
                             "can write to") from None
    free = shutil.disk_usage(path).free
    if free < size_bytes + FREE_MARGIN_BYTES:
        raise HostProbeError(f"folder {path!r} is full: {free / 1e6:,.0f} MB free, the probe writes a "
                             f"{size_bytes / 1e6:,.0f} MB file (and leaves {FREE_MARGIN_BYTES / 2**20:.0f} MiB "
                             "free); free some space or choose a smaller size")
    return path


def _aligned_buffer(nbytes: int) -> mmap.mmap:
    """Page-aligned memory (O_DIRECT needs aligned buffers): an anonymous mmap is."""
    buf = mmap.mmap(-1, nbytes)
    buf.write(os.urandom(min(nbytes, 2**20)) * (nbytes // min(nbytes, 2**20)))  # incompressible data
    return buf


def _open(path: str, flags: int, direct: bool) -> int:
    return os.open(path, flags | (getattr(os, "O_DIRECT", 0) if direct else 0), 0o600)


def storage_bandwidth(folder: str, size_bytes: int = DEFAULT_SIZE_BYTES, progress=None, cancelled=None) -> dict:
    """Sequential write (ending with fsync) then read of one file in 8 MiB blocks; GB/s as
    bytes over time. Direct I/O (O_DIRECT, page cache bypassed) where the file system accepts
    it; else buffered writes with fsync and reads after dropping the file's pages
    (posix_fadvise DONTNEED), which is said in ``direct_io``."""
    path = check_folder(folder, size_bytes)
    blocks = max(size_bytes // BLOCK_BYTES, 1)
    buf = _aligned_buffer(BLOCK_BYTES)
    fd_, name = tempfile.mkstemp(dir=path, prefix=".gpu-planner-probe-")
    os.close(fd_)
    direct = hasattr(os, "O_DIRECT")
    try:
        try:
            fd = _open(name, os.O_WRONLY | os.O_TRUNC, direct)
            os.write(fd, buf)  # O_DIRECT refusals show on the first write (EINVAL), not at open
            os.lseek(fd, 0, os.SEEK_SET)
        except OSError as e:
            if e.errno != errno.EINVAL:
                raise
            direct = False
            fd = _open(name, os.O_WRONLY | os.O_TRUNC, False)
        t0 = time.perf_counter()
        try:
            for i in range(blocks):
                if cancelled is not None and cancelled():
                    raise HostProbeError("the host probe was cancelled")
                os.write(fd, buf)
                if progress is not None and i % 16 == 0:
                    progress(0.5 * i / blocks, "writing")
            os.fsync(fd)
        except OSError as e:
            if e.errno in (errno.ENOSPC, errno.EDQUOT):
                raise HostProbeError(f"folder {path!r} is full: the disk ran out of space while writing "
                                     f"({e.strerror})") from None
            raise
        finally:
            os.close(fd)
        write_s = time.perf_counter() - t0
        if not direct and hasattr(os, "posix_fadvise"):
            fd = os.open(name, os.O_RDONLY)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)  # read from the disk, not the page cache
            os.close(fd)
        fd = _open(name, os.O_RDONLY, direct)
        t0 = time.perf_counter()
        try:
            for i in range(blocks):
                if cancelled is not None and cancelled():
                    raise HostProbeError("the host probe was cancelled")
                os.readv(fd, [buf])
                if progress is not None and i % 16 == 0:
                    progress(0.5 + 0.5 * i / blocks, "reading")
        finally:
            os.close(fd)
        read_s = time.perf_counter() - t0
    finally:
        buf.close()
        try:
            os.remove(name)
        except OSError:
            pass
    nbytes = blocks * BLOCK_BYTES
    return {"folder": path, "size_bytes": nbytes, "block_bytes": BLOCK_BYTES, "direct_io": direct,
            "write_gb_s": nbytes / write_s / 1e9, "read_gb_s": nbytes / read_s / 1e9,
            "write_s": write_s, "read_s": read_s}


def make_jpegs(n: int, seed: int = 0) -> list[bytes]:
    """``n`` photo-like 500x375 JPEGs (smooth colour fields with texture, ~100-130 kB at quality
    90, like ImageNet's), generated: no dataset needed."""
    from PIL import Image  # lazy: Pillow is optional (the decode test)

    rng = np.random.default_rng(seed)
    w, h = JPEG_SIZE
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    out = []
    for i in range(n):
        base = np.stack([128 + 90 * np.sin(x / (23 + 7 * c + i % 5) + y / (31 + 5 * c) + c) for c in range(3)], -1)
        noise = rng.normal(0, 22, (h, w, 3)).astype(np.float32)
        img = Image.fromarray(np.clip(base + noise, 0, 255).astype(np.uint8), "RGB")
        b = io.BytesIO()
        img.save(b, "JPEG", quality=JPEG_QUALITY)
        out.append(b.getvalue())
    return out


def train_transform(data: bytes, rng) -> object:
    """The ImageNet training transform as torchvision's references apply it to a PIL image:
    decode, RandomResizedCrop(224, scale=(0.08, 1)) with bilinear resampling, horizontal flip,
    to float tensor and normalise (numpy here: the same work without torch)."""
    from PIL import Image  # lazy: Pillow is optional (the decode test)

    img = Image.open(io.BytesIO(data)).convert("RGB")
    w, h = img.size
    area = w * h * rng.uniform(0.08, 1.0)
    ratio = np.exp(rng.uniform(np.log(3 / 4), np.log(4 / 3)))
    cw, ch = min(int(round((area * ratio) ** 0.5)), w), min(int(round((area / ratio) ** 0.5)), h)
    left, top = int(rng.integers(0, w - cw + 1)), int(rng.integers(0, h - ch + 1))
    img = img.resize((CROP_SIDE, CROP_SIDE), Image.BILINEAR, box=(left, top, left + cw, top + ch))
    if rng.random() < 0.5:
        img = img.transpose(Image.FLIP_LEFT_RIGHT)
    a = np.asarray(img, dtype=np.float32) / 255.0
    return ((a - np.array(MEAN, np.float32)) / np.array(STD, np.float32)).transpose(2, 0, 1)


def decode_rate(images: int = 200, progress=None, cancelled=None) -> dict:
    """Images per second one core decodes and transforms (this process is single-threaded:
    PIL's decoder and numpy's element-wise ops use one core)."""
    jpegs = make_jpegs(min(images, 32))
    rng = np.random.default_rng(1)
    for d in jpegs[:4]:  # warm-up (imports, caches)
        train_transform(d, rng)
    t0 = time.perf_counter()
    for i in range(images):
        if cancelled is not None and cancelled():
            raise HostProbeError("the host probe was cancelled")
        train_transform(jpegs[i % len(jpegs)], rng)
        if progress is not None and i % 20 == 0:
            progress(i / images, "decoding JPEGs")
    dt = time.perf_counter() - t0
    return {"images": images, "images_per_s_per_core": images / dt, "ms_per_image": dt / images * 1e3,
            "jpeg_bytes_mean": sum(len(d) for d in jpegs) / len(jpegs), "image_size": list(JPEG_SIZE),
            "transform": "PIL decode, RandomResizedCrop(224) bilinear, horizontal flip, normalise (numpy)"}


def memory_bandwidth(nbytes: int = 256 * 2**20, repeats: int = 5) -> dict:
    """numpy copy of ``nbytes`` between two arrays, best of ``repeats``: GB/s as bytes copied
    over time (read + write traffic is twice that)."""
    a = np.ones(nbytes // 8)
    b = np.empty_like(a)
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        np.copyto(b, a)
        best = min(best, time.perf_counter() - t0)
    return {"copy_gb_s": nbytes / best / 1e9, "bytes": nbytes, "convention": "bytes copied / time"}


def host_facts() -> dict:
    """CPUs and RAM of this machine (os.sched_getaffinity: the cores this process may use)."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    ram = None
    try:
        ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        pass
    return {"cpus": cpus, "ram_bytes": ram, "machine": platform.machine(), "system": platform.system(),
            "processor": platform.processor() or platform.machine()}


def run_host_probe(args: dict, progress=None, cancelled=None) -> dict:
    """All three measurements: ``args`` has ``folder``, ``size_bytes`` and ``images``."""
    def part(lo, hi):
        return (lambda f, text: progress(lo + (hi - lo) * f, text)) if progress is not None else None

    size = int(args.get("size_bytes") or DEFAULT_SIZE_BYTES)
    storage = storage_bandwidth(args.get("folder") or tempfile.gettempdir(), size, part(0.0, 0.6), cancelled)
    try:
        decode = decode_rate(int(args.get("images") or 200), part(0.6, 0.95), cancelled)
    except ImportError as e:  # Pillow is optional: storage and memory still count
        decode = {"images_per_s_per_core": None, "error": f"the decode test needs Pillow ({e})"}
    memory = memory_bandwidth()
    return {"host": host_facts(), "storage": storage, "decode": decode, "memory": memory,
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def host_verdicts(result: dict) -> list[dict]:
    """Each measurement against the planner's default for it (core/training/host.py, core/training/checkpoint.py):
    ``ratio`` > 1 means this host is faster than the plans assume without a probe."""
    rows = [("storage write", result["storage"]["write_gb_s"], DEFAULT_WRITE_GB_S_PER_NODE, "GB/s"),
            ("storage read", result["storage"]["read_gb_s"], DEFAULT_NVME_READ_GB_S, "GB/s"),
            ("JPEG decode + augment per core", result["decode"]["images_per_s_per_core"],
             DECODE_IMAGES_PER_S_PER_CORE, "images/s")]
    out = []
    for what, got, default, unit in rows:
        if got is None:
            continue
        ratio = got / default
        word = "faster than" if ratio > 1.1 else "slower than" if ratio < 0.9 else "about"
        out.append({"what": what, "measured": got, "default": default, "unit": unit, "ratio": ratio,
                    "text": f"{what}: {got:,.2f} {unit}, {word} the planning default ({default:g} {unit}, "
                            f"{ratio:.0%})"})
    return out
