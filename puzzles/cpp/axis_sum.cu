// Puzzle 13, Axis sum, in CUDA C++: block row r sums row r of a (rows x size, flat) into out[r].
#define TPB 8

extern "C" __global__ void axis_sum_kernel(float* out, const float* a, int size) {
    __shared__ float cache[TPB];
    int row = blockIdx.y;
    int local_i = threadIdx.x;
    // BEGIN SOLUTION
    cache[local_i] = local_i < size ? a[row * size + local_i] : 0.0f;
    __syncthreads();
    for (int stride = TPB / 2; stride > 0; stride /= 2) {
        if (local_i < stride) {
            cache[local_i] += cache[local_i + stride];
        }
        __syncthreads();
    }
    if (local_i == 0) {
        out[row] = cache[0];
    }
    // END SOLUTION
}
