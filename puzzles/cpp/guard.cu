// Puzzle 3, Guard, in CUDA C++: more threads than elements; the extra threads must not touch memory.
extern "C" __global__ void guard_kernel(float* out, const float* a, int size) {
    int i = threadIdx.x;
    // BEGIN SOLUTION
    if (i < size) {
        out[i] = a[i] + 10.0f;
    }
    // END SOLUTION
}
