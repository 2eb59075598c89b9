// Puzzle 9, Pool, in CUDA C++: out[i] = a[i - 2] + a[i - 1] + a[i] (the terms that exist), through
// shared memory. cache[k + 2] holds this block's element k; cache[0] and cache[1] the two before it.
#define TPB 8
#define CACHE (TPB + 2)  // C++ takes an expression as an array length; Numba needs a plain constant

extern "C" __global__ void pool_kernel(float* out, const float* a, int size) {
    __shared__ float cache[CACHE];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int local_i = threadIdx.x;
    // BEGIN SOLUTION
    if (i < size) {
        cache[local_i + 2] = a[i];
    }
    if (local_i < 2 && i >= 2) {
        cache[local_i] = a[i - 2];
    }
    __syncthreads();
    if (i < size) {
        float total = cache[local_i + 2];
        if (i >= 1) total += cache[local_i + 1];
        if (i >= 2) total += cache[local_i];
        out[i] = total;
    }
    // END SOLUTION
}
