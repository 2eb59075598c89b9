// Puzzle 6, Blocks, in CUDA C++: several blocks; each thread finds its global index.
extern "C" __global__ void blocks_kernel(float* out, const float* a, int size) {
    // BEGIN SOLUTION
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < size) {
        out[i] = a[i] + 10.0f;
    }
    // END SOLUTION
}
