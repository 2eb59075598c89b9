"""GPU Puzzles II (notebook 12_gpu_puzzles_2): warps, atomics, shared-memory banks, occupancy and the
grid, one module per puzzle, in the notebook's order."""
