// Puzzle 2, Zip, in CUDA C++: out[i] = a[i] + b[i].
extern "C" __global__ void zip_kernel(float* out, const float* a, const float* b) {
    int i = threadIdx.x;
    // BEGIN SOLUTION
    out[i] = a[i] + b[i];
    // END SOLUTION
}
