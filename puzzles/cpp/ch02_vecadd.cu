// PMPP 2, vector addition, one element per thread: the CUDA C++ spelling of vecadd_kernel.
extern "C" __global__ void vecadd_kernel(float* out, const float* a, const float* b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = a[i] + b[i];
    }
}
