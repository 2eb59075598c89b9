"""The 14 GPU Puzzles (notebook 01_gpu_puzzles), one module per puzzle, in the notebook's order."""
