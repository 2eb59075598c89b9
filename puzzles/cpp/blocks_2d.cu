// Puzzle 7, Blocks 2D, in CUDA C++: a 2-D grid of 2-D blocks over a size x size matrix (flat, row
// after row).
extern "C" __global__ void blocks_2d_kernel(float* out, const float* a, int size) {
    // BEGIN SOLUTION
    int i = blockIdx.y * blockDim.y + threadIdx.y;  // row
    int j = blockIdx.x * blockDim.x + threadIdx.x;  // column
    if (i < size && j < size) {
        out[i * size + j] = a[i * size + j] + 10.0f;
    }
    // END SOLUTION
}
