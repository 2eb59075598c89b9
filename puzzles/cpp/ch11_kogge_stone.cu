// PMPP 11, Kogge-Stone scan of each block's section: the CUDA C++ spelling of kogge_stone_scan.
#define TPB 16

extern "C" __global__ void kogge_stone_scan(float* out, const float* a, int n) {
    __shared__ float xy[TPB];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    xy[t] = i < n ? a[i] : 0.0f;
    for (int stride = 1; stride < blockDim.x; stride *= 2) {
        __syncthreads();  // read everything this step needs before anyone overwrites it
        float tmp = 0.0f;
        if (t >= stride) tmp = xy[t] + xy[t - stride];
        __syncthreads();
        if (t >= stride) xy[t] = tmp;
    }
    if (i < n) {
        out[i] = xy[t];
    }
}
