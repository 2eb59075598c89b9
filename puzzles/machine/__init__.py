"""The machine (notebook 13_the_machine): its exercise, `m01_saxpy`, and `measure`, the device
query, transfer, stream-timeline, launch-overhead and CPU-versus-GPU measurements the notebook runs."""
