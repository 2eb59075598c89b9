// Puzzle 8, Shared, in CUDA C++: each block stages its elements in shared memory first.
#define TPB 8

extern "C" __global__ void shared_kernel(float* out, const float* a, int size) {
    __shared__ float cache[TPB];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int local_i = threadIdx.x;
    // BEGIN SOLUTION
    if (i < size) {
        cache[local_i] = a[i];
    }
    __syncthreads();
    if (i < size) {
        out[i] = cache[local_i] + 10.0f;
    }
    // END SOLUTION
}
