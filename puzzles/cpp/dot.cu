// Puzzle 10, Dot, in CUDA C++: the products in shared memory, then one thread adds them up.
#define TPB 8

extern "C" __global__ void dot_kernel(float* out, const float* a, const float* b, int size) {
    __shared__ float cache[TPB];
    int i = threadIdx.x;
    // BEGIN SOLUTION
    if (i < size) {
        cache[i] = a[i] * b[i];
    }
    __syncthreads();
    if (i == 0) {
        float total = 0.0f;
        for (int k = 0; k < size; k++) {
            total += cache[k];
        }
        out[0] = total;
    }
    // END SOLUTION
}
