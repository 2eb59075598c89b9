// Puzzle 11, 1D convolution, in CUDA C++: out[i] = sum over j of a[i + j] * b[j] (terms inside a).
// a_tile[k] holds a[block start + k]: the block's TPB elements and up to MAX_CONV - 1 after them.
#define TPB 8
#define MAX_CONV 4

extern "C" __global__ void conv_kernel(float* out, const float* a, const float* b, int a_size, int b_size) {
    __shared__ float a_tile[TPB + MAX_CONV];
    __shared__ float b_tile[MAX_CONV];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int local_i = threadIdx.x;
    // BEGIN SOLUTION
    if (i < a_size) {
        a_tile[local_i] = a[i];
    }
    if (local_i < b_size - 1 && i + TPB < a_size) {
        a_tile[local_i + TPB] = a[i + TPB];
    }
    if (local_i < b_size) {
        b_tile[local_i] = b[local_i];
    }
    __syncthreads();
    if (i < a_size) {
        float total = 0.0f;
        for (int j = 0; j < b_size; j++) {
            if (i + j < a_size) total += a_tile[local_i + j] * b_tile[j];
        }
        out[i] = total;
    }
    // END SOLUTION
}
