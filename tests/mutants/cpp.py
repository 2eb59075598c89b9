"""Known-wrong CUDA C++ twins (puzzles/cpp/<name>.cu): each an edit of the reference, a real
learner's mistake, and the verdict it must get. A CompileRejected one is checked on the CPU (NVRTC or
the kernel lookup refuses it; `detail` is a phrase the message must hold); the others run on a GPU
(`detail`: the diagnostic's class for KernelDiagnosed, else None).

`CPP_MUTANTS = {puzzle: [(name, [(old, new), ...], Expected, detail), ...]}` (not `MUTANTS`: these
are not Numba kernels and the summary's counts stay those of the Numba puzzles).
"""

from helpers.check import CompileRejected, KernelDiagnosed, WrongAnswer
from helpers.sim.errors import DataRace, OutOfBounds

OOB, RACE = OutOfBounds, DataRace
NO_EXTERN = ('extern "C" __global__', "__global__")

CPP_MUTANTS = {
    "map": [
        (
            "Numba's spelling cuda.threadIdx.x",
            [("int i = threadIdx.x;", "int i = cuda.threadIdx.x;")],
            CompileRejected,
            "`int i = cuda.threadIdx.x;`",
        ),
        ('no extern "C": the name is mangled', [NO_EXTERN], CompileRejected, 'extern "C"'),
        ("the index as data", [("out[i] = a[i] + 10.0f;", "out[i] = i + 10.0f;")], WrongAnswer, None),
    ],
    "zip": [
        ("b declared int*", [("const float* b", "const int* b")], CompileRejected, "must be `float*`"),
        # the edit names the statement: the twin's first line is a comment holding `a[i] + b[i]` too
        ("a used twice", [("out[i] = a[i] + b[i];", "out[i] = a[i] + a[i];")], WrongAnswer, None),
    ],
    "guard": [
        (
            "a missing semicolon",
            [("out[i] = a[i] + 10.0f;", "out[i] = a[i] + 10.0f")],
            CompileRejected,
            'expected a ";"',
        ),
        ("no guard", [("if (i < size) {", "{")], KernelDiagnosed, OOB),
    ],
    "map_2d": [
        ("rows and columns swapped in out", [("out[i * size + j]", "out[j * size + i]")], WrongAnswer, None),
        ("no guard", [("if (i < size && j < size) {", "{")], KernelDiagnosed, OOB),
    ],
    "broadcast": [
        ("a and b swapped", [("a[i] + b[j]", "a[j] + b[i]")], WrongAnswer, None),
        # C++ reads `a[i, 0]` as a[(i, 0)], the comma operator: a[0] for every row, no error
        ("Numba's a[i, 0]", [("a[i] + b[j]", "a[i, 0] + b[j]")], WrongAnswer, None),
    ],
    "blocks": [
        (
            "only the thread index",
            [("int i = blockIdx.x * blockDim.x + threadIdx.x;", "int i = threadIdx.x;")],
            WrongAnswer,
            None,
        ),
        (
            "blockDim undeclared as a Python name",
            [("blockDim.x", "cuda_blockDim.x")],
            CompileRejected,
            "cuda_blockDim",
        ),
    ],
    "blocks_2d": [
        ("rows and columns swapped in out", [("out[i * size + j]", "out[j * size + i]")], WrongAnswer, None),
        (
            "kernel named differently",
            [("blocks_2d_kernel", "blocks2d_kernel")],
            CompileRejected,
            "`blocks2d_kernel`",
        ),
    ],
    "shared": [
        (
            "a read with the block's index",
            [("cache[local_i] = a[i];", "cache[local_i] = a[local_i];")],
            WrongAnswer,
            None,
        ),
        (
            "Numba's cuda.syncthreads()",
            [("__syncthreads();", "cuda.syncthreads();")],
            CompileRejected,
            "cuda.syncthreads",
        ),
    ],
    "pool": [
        (
            "halo one element off",
            [("cache[local_i] = a[i - 2];", "cache[local_i] = a[i - 1];")],
            WrongAnswer,
            None,
        ),
        ("no barrier", [("__syncthreads();", "")], KernelDiagnosed, RACE),
    ],
    "dot": [
        ("a times a", [("a[i] * b[i]", "a[i] * a[i]")], WrongAnswer, None),
        ("no barrier", [("__syncthreads();", "")], KernelDiagnosed, RACE),
    ],
    "conv": [
        ("kernel flipped", [("* b_tile[j]", "* b_tile[b_size - 1 - j]")], WrongAnswer, None),
        ("halo read without its guard", [("i + TPB < a_size", "true")], KernelDiagnosed, OOB),
    ],
    "prefix_sum": [
        (
            "every block writes out[0]",
            [("out[blockIdx.x] = cache[0];", "out[0] = cache[0];")],
            WrongAnswer,
            None,
        ),
        ("no padding guard", [("i < size ? a[i] : 0.0f", "a[i]")], KernelDiagnosed, OOB),
    ],
    "axis_sum": [
        ("every block reads row 0", [("a[row * size + local_i]", "a[local_i]")], WrongAnswer, None),
        (
            "a missing brace",
            [("out[row] = cache[0];\n    }", "out[row] = cache[0];")],
            CompileRejected,
            'expected a "}"',
        ),
    ],
    "matmul": [
        ("b read transposed", [("b[k * size + j]", "b[j * size + k]")], WrongAnswer, None),
        (
            "no barrier before the next tile",
            [("        __syncthreads();\n    }\n", "    }\n")],
            KernelDiagnosed,
            RACE,
        ),
        (
            "Numba's syncthreads()",
            [("__syncthreads();\n        for", "syncthreads();\n        for")],
            CompileRejected,
            "syncthreads",
        ),
    ],
}


def mutate(source: str, edits: list) -> str:
    """`source` with each (old, new) edit made once; an edit whose `old` is not there, or that changes
    only a comment (its first occurrence sat in one), is an error: such a mutant is the reference."""
    from helpers.cpp.check import _words

    for old, new in edits:
        if old not in source:
            raise AssertionError(f"mutant edit not applicable: {old!r} is not in the source")
        edited = source.replace(old, new, 1)
        if _words(edited) == _words(source):
            raise AssertionError(
                f"mutant edit {old!r} -> {new!r} changes only a comment: name the statement it edits"
            )
        source = edited
    return source
