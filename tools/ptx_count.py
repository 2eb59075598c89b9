"""Count a kernel's PTX instructions on the CPU (no GPU): total, 64-bit integer ones, mul.wide,
integer divisions, and the instructions of each innermost loop (the work per element it repeats).

    python -m tools.ptx_count              # the old and new kernels of ch08, ch11, ch12, ch14
    python -m tools.ptx_count ch14 --cc 90 # one study, another target

A loop is a label with a later branch back to it; its body is the lines in between (PTX from NVVM
keeps a loop's blocks together). PTX is not SASS: ptxas drops some of these and fuses others, so
compare kernels with each other, not with a profiler's instruction count.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

_LABEL = re.compile(r"^(\$L__\w+):")
_BRANCH = re.compile(r"\bbra(?:\.uni)?\s+(\$L__\w+);")


@dataclass
class Tally:
    n: int  # instructions
    int64: int  # integer instructions on 64-bit operands (.s64 / .u64 / .b64), moves and memory excluded
    mul_wide: int
    div_rem: int  # integer divisions and remainders
    memory: int  # global loads and stores


@dataclass
class Counts:
    kernel: Tally
    loops: list[Tally]  # each innermost loop, in program order

    def line(self) -> str:
        k = self.kernel
        loops = "; ".join(f"{t.n} ({t.int64} 64-bit, {t.memory} ld/st)" for t in self.loops) or "none"
        return (
            f"{k.n:4d} instr, {k.int64:3d} 64-bit int, {k.mul_wide:2d} mul.wide, {k.div_rem} div/rem; "
            f"innermost loops: {loops}"
        )


def _instructions(ptx: str) -> list[str]:
    """The kernel body's lines: labels kept (they end with ':'), comments, directives and braces not."""
    lines, inside = [], False
    for raw in ptx.splitlines():
        s = raw.split("//")[0].strip()
        if s.startswith((".visible .entry", ".entry")):
            inside = True
            continue
        if not inside or not s or s.startswith((".", "{", "}", ")")):
            continue
        lines.append(s)
    return lines


def _is_instruction(s: str) -> bool:
    return not s.endswith(":")


def _opcode(s: str) -> str:
    parts = s.split()
    if parts[0].startswith("@"):  # a predicated instruction: "@%p3 bra ..."
        parts = parts[1:]
    return parts[0].rstrip(";")


def _tally(lines: list[str]) -> Tally:
    ops = Counter(_opcode(s) for s in lines if _is_instruction(s))

    def total(pred):
        return sum(v for op, v in ops.items() if pred(op))

    return Tally(
        n=sum(ops.values()),
        int64=total(
            lambda op: (
                re.search(r"\.(s64|u64|b64)$", op) is not None
                and not op.startswith(("ld.", "st.", "mov.", "cvta", "cvt."))
            )
        ),
        mul_wide=total(lambda op: op.startswith("mul.wide")),
        div_rem=total(lambda op: op.startswith(("div.", "rem.")) and ".f" not in op),
        memory=total(lambda op: op.startswith(("ld.global", "st.global"))),
    )


def count(ptx: str) -> Counts:
    lines = _instructions(ptx)
    return Counts(_tally(lines), [_tally(lines[a : b + 1]) for a, b in _innermost_loops(lines)])


def _innermost_loops(lines: list[str]) -> list[tuple[int, int]]:
    """(first, last) line of each loop (a label, then a branch back to it) that holds no other loop."""
    where = {}
    loops = []
    for i, s in enumerate(lines):
        m = _LABEL.match(s)
        if m:
            where[m.group(1)] = i
        b = _BRANCH.search(s)
        if b and b.group(1) in where and where[b.group(1)] < i:
            loops.append((where[b.group(1)], i))
    return sorted(
        (a, b) for a, b in loops if not any(a <= c and d <= b and (c, d) != (a, b) for c, d in loops)
    )


# ---------------------------------------------------------------------------- SASS, where the tools are


def _tool(name: str) -> str | None:
    """ptxas from PATH or the nvidia-cuda-nvcc wheel; nvdisasm from PATH or $NVDISASM (pip's
    nvidia-cuda-nvdisasm wheel has one: PATH=$PATH:<site-packages>/nvidia/cu13/bin)."""
    import os
    import shutil

    found = os.environ.get(name.upper()) or shutil.which(name)
    if found or name != "ptxas":
        return found
    try:
        import nvidia.cuda_nvcc as nvcc

        path = Path(next(iter(nvcc.__path__))) / "bin" / "ptxas"
        return str(path) if path.exists() else None
    except ImportError:
        return None


def sass_counts(ptx: str, cc=(9, 0)) -> tuple[int, list[int], int] | None:
    """(SASS instructions, each innermost loop's, registers a thread) from ptxas + nvdisasm; None
    without them."""
    import subprocess
    import tempfile

    ptxas, nvdisasm = _tool("ptxas"), _tool("nvdisasm")
    if not (ptxas and nvdisasm):
        return None
    with tempfile.TemporaryDirectory() as d:
        src, cubin = Path(d) / "k.ptx", Path(d) / "k.cubin"
        src.write_text(ptx)
        built = subprocess.run(
            [ptxas, "-v", f"-arch=sm_{cc[0]}{cc[1]}", "-O3", str(src), "-o", str(cubin)],
            check=True,
            capture_output=True,
            text=True,
        )
        text = subprocess.run([nvdisasm, "-c", str(cubin)], check=True, capture_output=True, text=True).stdout
    lines = []
    for raw in text.splitlines():
        s = raw.strip()
        if re.match(r"^\.L_x_\d+:", s):
            lines.append(s.split(":")[0] + ":")
        elif s.startswith("/*") and ";" in s:
            instr = s.split("*/", 1)[1].strip().rstrip(";").strip()
            if instr and not instr.startswith("NOP"):
                lines.append(instr.replace("`(", "").replace(")", "").replace("`", ""))
    body = [s for s in lines if not s.endswith(":")]
    where, loops = {}, []
    for i, s in enumerate(lines):
        if s.endswith(":"):
            where[s[:-1]] = i
        m = re.search(r"\bBRA\b.*?(\.L_x_\d+)", s)
        if m and m.group(1) in where and where[m.group(1)] < i:
            loops.append((where[m.group(1)], i))
    inner = [(a, b) for a, b in loops if not any(a <= c and e <= b and (c, e) != (a, b) for c, e in loops)]
    sizes = [sum(1 for s in lines[a : b + 1] if not s.endswith(":")) for a, b in sorted(inner)]
    registers = re.search(r"Used (\d+) registers", built.stdout + built.stderr)
    # the one-instruction loop after EXIT (a branch to itself) is no work
    return len(body), [n for n in sizes if n > 1], int(registers.group(1)) if registers else -1


def ptx_of(kernel, sig, cc=(9, 0)) -> str:
    from numba import cuda

    from helpers.ptx import _device_functions_without_gpu

    with _device_functions_without_gpu(cc):  # a kernel calling device functions, with no driver
        return cuda.compile_ptx(getattr(kernel, "py_func", kernel), sig, cc=cc)[0]


# ---------------------------------------------------------------------------- the studies


def _arr(dtype, ndim=1):
    from numba import types

    return types.Array(dtype, ndim, "C")


def ch14():
    from numba import types as t

    from helpers.timing import specialize
    from puzzles.pmpp.ch14_sparse import csr, csr_fast

    sig = (_arr(t.float32), _arr(t.int32), _arr(t.int32), _arr(t.float32), _arr(t.float32), t.int64)
    yield "csr (thread per row)", csr.spmv_csr, sig
    yield "csr_vector (warp per row)", csr.spmv_csr_vector, sig
    yield "csr_lanes LANES=8", specialize(csr.spmv_csr_lanes, LANES=8), sig
    yield "csr_scalar32", csr_fast.spmv_csr_scalar32, sig
    yield "csr_subwarp LANES=8", specialize(csr_fast.spmv_csr_subwarp, LANES=8), sig
    yield "csr_stream 256 rows", csr_fast.spmv_csr_stream, sig


def ch08():
    from numba import types as t

    from helpers.timing import specialize
    from puzzles.pmpp.ch08_stencil import columns, columns32

    flat = (_arr(t.float32), _arr(t.float32), t.int64, t.int64, t.int64)
    grid3 = (_arr(t.float32, 3), _arr(t.float32, 3), t.int64, t.int64, t.int64)
    yield "march (3-D indices) z32 b4", specialize(columns.stencil_march, Z_STEPS=32, BATCH=4), grid3
    yield "march_flat (uint64) z32 b4", specialize(columns.stencil_march_flat, Z_STEPS=32, BATCH=4), flat
    for cols in (1, 2):
        k = specialize(columns32.stencil_march_u32, Z_STEPS=32, BATCH=4, COLS=cols)
        yield f"march_u32 z32 b4 cols {cols}", k, flat


def ch11():
    from numba import types as t

    from helpers.timing import specialize
    from puzzles.pmpp.ch11_scan import bench, lookback32, single_pass

    f32, i32 = _arr(t.float32), _arr(t.int32)
    sig = (f32, i32, _arr(t.float32, 2), i32, f32, t.int64)
    for tpb, items in ((256, 48), (512, 16)):
        consts = {"ITEMS": items, "LB_TPB": tpb, "LB_TILE": tpb * items}
        yield f"lookback {tpb}x{items}", specialize(single_pass.lookback_scan, **consts), sig
        yield f"lookback_u32 {tpb}x{items}", specialize(lookback32.lookback_u32, **consts), sig
        yield f"lookback_overlap {tpb}x{items}", specialize(lookback32.lookback_overlap, **consts), sig
    raked = specialize(bench.lookback_raked, ITEMS=16, LB_TPB=512, LB_TILE=8192, RAKED_BUF=8192 * 33 // 32)
    yield "lookback_raked 512x16", raked, sig


def ch12():
    from numba import types as t

    from puzzles.pmpp.ch12_merge import bench

    f32 = _arr(t.float32)
    sig = (f32, f32, f32, t.int64, t.int64, _arr(t.int32))
    for tpb, items in ((128, 23), (256, 11)):
        yield f"merge_partitioned {tpb}x{items}", bench._partitioned_kernels(tpb, items)[1], sig
        yield f"merge_partitioned_u32 {tpb}x{items}", bench._partitioned_kernels(tpb, items, u32=True)[1], sig


STUDIES = {"ch08": ch08, "ch11": ch11, "ch12": ch12, "ch14": ch14}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("studies", nargs="*", help=f"any of {', '.join(STUDIES)} (default: all)")
    parser.add_argument("--cc", default="90", help="target compute capability, e.g. 75 or 90")
    args = parser.parse_args(argv)
    cc = (int(args.cc[:-1]), int(args.cc[-1]))
    for tag in args.studies or STUDIES:
        print(f"{tag} (PTX for sm_{args.cc}):")
        for label, kernel, sig in STUDIES[tag]():
            ptx = ptx_of(kernel, sig, cc)
            sass = sass_counts(ptx, cc)
            loops = ", ".join(map(str, sass[1])) if sass else ""
            tail = f" | SASS {sass[0]} instr, loops {loops or 'none'}, {sass[2]} regs" if sass else ""
            print(f"  {label:32s} {count(ptx).line()}{tail}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
