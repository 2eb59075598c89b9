// Puzzle 14, Matrix multiply, in CUDA C++: TPB x TPB tiles of a and b through shared memory.
#define TPB 8

extern "C" __global__ void matmul_kernel(float* out, const float* a, const float* b, int size) {
    __shared__ float a_tile[TPB][TPB];
    __shared__ float b_tile[TPB][TPB];
    int ty = threadIdx.y;
    int tx = threadIdx.x;
    int i = blockIdx.y * TPB + ty;  // row of out
    int j = blockIdx.x * TPB + tx;  // column of out
    // BEGIN SOLUTION
    float total = 0.0f;
    for (int t = 0; t < (size + TPB - 1) / TPB; t++) {
        int k = t * TPB + tx;
        a_tile[ty][tx] = (i < size && k < size) ? a[i * size + k] : 0.0f;
        k = t * TPB + ty;
        b_tile[ty][tx] = (k < size && j < size) ? b[k * size + j] : 0.0f;
        __syncthreads();
        for (int kk = 0; kk < TPB; kk++) {
            total += a_tile[ty][kk] * b_tile[kk][tx];
        }
        __syncthreads();
    }
    if (i < size && j < size) {
        out[i * size + j] = total;
    }
    // END SOLUTION
}
