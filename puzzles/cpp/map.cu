// Puzzle 1, Map, in CUDA C++: out[i] = a[i] + 10, one block of exactly len(a) threads.
extern "C" __global__ void map_kernel(float* out, const float* a) {
    int i = threadIdx.x;
    // BEGIN SOLUTION
    out[i] = a[i] + 10.0f;
    // END SOLUTION
}
