// Puzzle 12, Block sum, in CUDA C++: a tree reduction in shared memory, one sum per block.
#define TPB 8

extern "C" __global__ void prefix_sum_kernel(float* out, const float* a, int size) {
    __shared__ float cache[TPB];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int local_i = threadIdx.x;
    // BEGIN SOLUTION
    cache[local_i] = i < size ? a[i] : 0.0f;
    __syncthreads();
    for (int stride = TPB / 2; stride > 0; stride /= 2) {
        if (local_i < stride) {
            cache[local_i] += cache[local_i + stride];
        }
        __syncthreads();
    }
    if (local_i == 0) {
        out[blockIdx.x] = cache[0];
    }
    // END SOLUTION
}
